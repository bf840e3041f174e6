package booking

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// Limits of one iCal feed sync (docs/booking.md, "iCal import").
const (
	MaxFeedEvents = 5000
	MaxFeedName   = 100
	MaxUIDLength  = 255
	// MaxFeedNights bounds the nights of one sync's events together (each event's nights
	// counted, overlapping or not): planning's work and memory are linear in them.
	MaxFeedNights = 50000
	// MaxFeedConflicts bounds the conflicts a sync answers; the rest are counted.
	MaxFeedConflicts = 1000
)

// FeedEvent is one event of an iCal feed: its uid and the nights Start to End-1 (End is
// exclusive, as iCal's DTEND of an all-day event). Never its summary.
type FeedEvent struct {
	UID        string
	Start, End pricing.Date
}

// FeedSync asks that the blocks of property PropertyID imported from feed FeedID be exactly
// the nights of Events that nothing else holds. Final (with no events): the feed was
// deleted; its blocks are removed and the feed id is tombstoned for good.
type FeedSync struct {
	PropertyID int64
	FeedID     int64
	Name       string
	Events     []FeedEvent
	Final      bool
}

// ErrFeedGone: the feed was deleted (a final sync tombstoned it); it is never synced again.
var ErrFeedGone = errors.New("the feed was deleted")

// FeedBlock is a block of the feed after the sync (EndDate: the last night, included).
type FeedBlock struct {
	UID                string
	BlockID            int64
	StartDate, EndDate string
}

// FeedConflict is a run of nights an event of the feed wants that vros bookings hold
// (EndDate: the last night, included).
type FeedConflict struct {
	UID                string
	StartDate, EndDate string
	BookingIDs         []int64
}

// FeedResult is the feed's state after a sync. Complete says the feed's blocks are as
// wanted; a sync that stopped early (its deadline near, or nights that kept changing hands)
// has everything it began finished, answers the blocks as they stand and the conflicts found
// so far, and the same request again goes on from there.
type FeedResult struct {
	Blocks        []FeedBlock
	NightsBlocked int
	Conflicts     []FeedConflict
	// ConflictsOmitted counts the conflicts past the first MaxFeedConflicts (by uid, then
	// date), left out of Conflicts.
	ConflictsOmitted int
	Complete         bool
}

// feedLeaseMargin is how long past a sync's deadline its feed lease lasts: once it is up,
// the sync's writes have surely stopped and another sync repairs what it left.
const feedLeaseMargin = 5 * time.Second

// feedRetryGap is the wait between two tries of a sync that finds its feed's lease taken.
const feedRetryGap = 50 * time.Millisecond

// maxSyncRounds bounds the plan-and-apply rounds of one sync (docs/booking.md, "iCal
// import": a round frees the nights a later round gives to another block of the feed).
const maxSyncRounds = 8

// SyncFeed reconciles the property's blocks imported from the feed with its events: every
// wanted night that no booking and no other block holds is held by a block of the feed,
// one block per maximal run of nights of one uid; a run whose dates changed moves its block
// in place (nights it keeps are never free in between); blocks whose run vanished are
// deleted. Nights a booking holds are conflicts, nights another block holds are left alone.
// Syncs of one feed take turns (a lease); a sync stopped at any step is finished by the next
// one (or the janitor's repair), and a repeated sync changes nothing.
//
// A final sync removes the feed's blocks (of every property, even a deleted one) and then
// tombstones the feed id; from then on a sync of it is ErrFeedGone and changes nothing (a
// poll that outlived its lease cannot bring the blocks back), and a final one again only
// finds nothing left to remove.
func (s *Service) SyncFeed(ctx context.Context, account string, r FeedSync) (FeedResult, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "icalsync", account)
	if n := feedNights(r.Events); n > MaxFeedNights {
		return FeedResult{}, &FieldError{Field: "events", Message: fmt.Sprintf("must hold at most %d nights in all (each event's nights counted), not %d", MaxFeedNights, n)}
	}
	if r.Final {
		r.Events = nil
	} else {
		if err := s.feedAlive(ctx, account, r.FeedID); err != nil {
			return FeedResult{}, err
		}
		if _, err := s.view.Property(ctx, account, r.PropertyID); err != nil {
			return FeedResult{}, err
		}
	}
	holder, err := leaseHolder()
	if err != nil {
		return FeedResult{}, err
	}
	done := false
	taken, err := s.takeFeedLease(ctx, account, r.FeedID, holder)
	if taken {
		// Given up however the sync ends, a failed repair too: left with its notes (not
		// done), it expires a second later and the next sync repairs again.
		defer func() {
			_ = s.blocks.EndFeedLease(context.WithoutCancel(ctx), account, r.FeedID, holder, done)
		}()
	}
	if err != nil {
		return FeedResult{}, err
	}
	faults.At(ctx, "leased")
	if !r.Final {
		// Read again under the lease: a final sync that held it before has tombstoned it.
		if err := s.feedAlive(ctx, account, r.FeedID); err != nil {
			done = true
			return FeedResult{}, err
		}
		var res FeedResult
		res, done, err = s.syncRounds(ctx, account, r, holder)
		return res, err
	}
	var res FeedResult
	res, done, err = s.finalSync(ctx, account, r, holder)
	return res, err
}

// feedAlive is ErrFeedGone for a tombstoned feed.
func (s *Service) feedAlive(ctx context.Context, account string, feed int64) error {
	gone, err := s.blocks.FeedGone(ctx, account, feed)
	if err == nil && gone {
		err = fmt.Errorf("feed %d: %w", feed, ErrFeedGone)
	}
	return err
}

// finalSync removes every block of the feed, of whichever property, then tombstones the
// feed id; it reports whether everything it began was finished.
func (s *Service) finalSync(ctx context.Context, account string, r FeedSync, holder string) (FeedResult, bool, error) {
	left, err := s.blocks.FeedBlocks(ctx, account, 0, r.FeedID)
	if err != nil {
		return FeedResult{}, true, err
	}
	pids := []int64{r.PropertyID}
	for _, b := range left {
		if !slices.Contains(pids, b.PropertyID) {
			pids = append(pids, b.PropertyID)
		}
	}
	res := FeedResult{Complete: true}
	for _, pid := range pids {
		one := r
		one.PropertyID = pid
		got, done, err := s.syncRounds(ctx, account, one, holder)
		if err != nil || !done {
			return FeedResult{}, done, err
		}
		if !got.Complete {
			now, err := s.feedState(ctx, account, FeedSync{FeedID: r.FeedID}) // every property's
			return now, true, err
		}
	}
	faults.At(ctx, "removed")
	if err := s.blocks.BuryFeed(ctx, account, r.FeedID); err != nil {
		return FeedResult{}, true, err
	}
	return res, true, nil
}

func leaseHolder() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// takeFeedLease waits its turn for the feed's lease, then repairs what earlier holders left.
// It reports whether it took the lease (the caller gives it up, even after an error).
func (s *Service) takeFeedLease(ctx context.Context, account string, feed int64, holder string) (bool, error) {
	dl, _ := ctx.Deadline()
	for {
		left, err := s.blocks.TakeFeedLease(ctx, account, feed, holder, dl.Add(feedLeaseMargin))
		if errors.Is(err, ErrBusy) {
			select {
			case <-ctx.Done():
				return false, ErrBusy
			case <-time.After(feedRetryGap):
				continue
			}
		}
		if err != nil {
			return false, err
		}
		for _, id := range left {
			if _, err := s.ledger.RepairStopped(ctx, account, blockOwner(id), s.Current); err != nil {
				return true, fmt.Errorf("repair block %d of feed %d: %w", id, feed, err)
			}
			if err := s.blocks.NoteFeedBlock(ctx, account, feed, holder, id); err != nil {
				return true, err
			}
		}
		return true, nil
	}
}

// syncRounds plans from what the ledger and the blocks say now and applies the plan, until
// a plan has nothing left to do. It reports whether everything it began was finished.
func (s *Service) syncRounds(ctx context.Context, account string, r FeedSync, holder string) (FeedResult, bool, error) {
	res, complete, done, err := s.syncRoundsUntil(ctx, account, r, holder)
	if err != nil || complete {
		res.Complete = complete
		return res, done, err
	}
	// Stopped early with everything begun finished: the blocks as they stand.
	now, err := s.feedState(ctx, account, r)
	if err != nil {
		return FeedResult{}, done, err
	}
	now.Conflicts = res.Conflicts
	return now, done, nil
}

// feedState is the feed's blocks as they stand, by start date.
func (s *Service) feedState(ctx context.Context, account string, r FeedSync) (FeedResult, error) {
	blocks, err := s.blocks.FeedBlocks(ctx, account, r.PropertyID, r.FeedID)
	if err != nil {
		return FeedResult{}, err
	}
	var res FeedResult
	for _, b := range blocks {
		res.Blocks = append(res.Blocks, FeedBlock{UID: b.UID, BlockID: b.BlockID, StartDate: b.StartDate, EndDate: b.EndDate})
		res.NightsBlocked += len(blockNights(b.StartDate, b.EndDate))
	}
	slices.SortFunc(res.Blocks, func(a, b FeedBlock) int {
		return strings.Compare(a.StartDate+a.UID, b.StartDate+b.UID)
	})
	return res, nil
}

// syncRoundsUntil runs the rounds; it reports whether the feed is complete (else the last
// plan's result, for its conflicts) and whether everything it began was finished.
func (s *Service) syncRoundsUntil(ctx context.Context, account string, r FeedSync, holder string) (FeedResult, bool, bool, error) {
	memo := "Imported from " + r.Name
	if r.Name == "" {
		memo = "Imported from iCal feed " + strconv.FormatInt(r.FeedID, 10)
	}
	// Past this point no new change begins: what is begun is finished within the deadline.
	dl, _ := ctx.Deadline()
	stopAt := dl.Add(-s.Deadline / 5)
	var last FeedResult
	for range maxSyncRounds {
		p, err := s.planFeed(ctx, account, r, stopAt)
		if errors.Is(err, errPlanLate) {
			return last, false, true, nil
		}
		if err != nil {
			return FeedResult{}, false, true, err
		}
		last = p.result
		if len(p.deletes)+len(p.moves)+len(p.creates) == 0 {
			return p.result, true, true, nil
		}
		progress := false
		late := func() bool { return time.Now().After(stopAt) }
		step := func(err error) error {
			if err == nil {
				progress = true
				return nil
			}
			if ledger.IsTaken(err) || errors.Is(err, ledger.ErrBusy) {
				return nil // another round plans again from what holds the nights now
			}
			return err
		}
		for _, b := range p.deletes {
			if late() {
				return last, false, true, nil
			}
			if err := step(s.feedDelete(ctx, account, r.FeedID, holder, b)); err != nil {
				return FeedResult{}, false, false, err
			}
		}
		var stuck []Block
		for _, m := range p.moves {
			if late() {
				return last, false, true, nil
			}
			err := s.feedMove(ctx, account, r.FeedID, holder, m.block, m.run)
			if ledger.IsTaken(err) {
				stuck = append(stuck, m.block)
			}
			if err := step(err); err != nil {
				return FeedResult{}, false, false, err
			}
		}
		for _, c := range p.creates {
			if late() {
				return last, false, true, nil
			}
			if err := step(s.feedCreate(ctx, account, r, holder, c, memo)); err != nil {
				return FeedResult{}, false, false, err
			}
		}
		if !progress {
			// Blocks of the feed that each want the other's nights (two events swapped
			// dates): delete them, so that the next round creates them on their new nights.
			for _, b := range stuck {
				if err := step(s.feedDelete(ctx, account, r.FeedID, holder, b)); err != nil {
					return FeedResult{}, false, false, err
				}
			}
		}
	}
	return last, false, true, nil
}

// feedRun is a run of nights one uid's block should hold.
type feedRun struct {
	uid   string
	dates []string // ascending, consecutive
}

type feedMoveOp struct {
	block Block
	run   feedRun
}

type feedPlan struct {
	deletes []Block
	moves   []feedMoveOp
	creates []feedRun
	result  FeedResult
}

// errPlanLate: planning reached the point past which no new change begins.
var errPlanLate = errors.New("planning ran past the sync's time")

// feedNights counts the nights of the events together (MaxFeedNights bounds them).
func feedNights(events []FeedEvent) int {
	n := 0
	for _, e := range events {
		n += max(pricing.DaysBetween(e.Start, e.End), 0)
	}
	return n
}

// planFeed compares the wanted nights with the ledger's owners and the feed's blocks. Its
// work and memory are linear in the events' nights (at most MaxFeedNights) and the feed's
// blocks' nights, with sorting; it stops with errPlanLate once stopAt is past.
func (s *Service) planFeed(ctx context.Context, account string, r FeedSync, stopAt time.Time) (feedPlan, error) {
	var p feedPlan
	ticks := 0
	tick := func() error {
		if ticks++; ticks%4096 != 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(stopAt) {
			return errPlanLate
		}
		return nil
	}
	blocks, err := s.blocks.FeedBlocks(ctx, account, r.PropertyID, r.FeedID)
	if err != nil {
		return p, err
	}
	own := map[string]Block{} // owner → block of this feed
	first, last := "", ""
	span := func(a, b string) {
		if first == "" || a < first {
			first = a
		}
		if b > last {
			last = b
		}
	}
	for _, b := range blocks {
		own[blockOwner(b.BlockID)] = b
		span(b.StartDate, b.EndDate)
	}
	// The nights each uid wants (a set: overlapping events of one uid count once), then the
	// uids that want each night, each uid once.
	byUID := map[string]map[string]bool{}
	for _, e := range r.Events {
		if !e.Start.Before(e.End) {
			continue
		}
		set := byUID[e.UID]
		if set == nil {
			set = map[string]bool{}
			byUID[e.UID] = set
		}
		for d := e.Start; d.Before(e.End); d = d.AddDays(1) {
			if err := tick(); err != nil {
				return p, err
			}
			set[d.String()] = true
		}
		span(e.Start.String(), e.End.AddDays(-1).String())
	}
	wanted := map[string][]string{}
	for u, set := range byUID {
		for d := range set {
			if err := tick(); err != nil {
				return p, err
			}
			wanted[d] = append(wanted[d], u)
		}
	}
	owners := map[string]string{}
	if first != "" {
		if owners, err = s.ledger.Owners(ctx, account, r.PropertyID, first, last); err != nil {
			return p, err
		}
	}
	// Each wanted night goes to one uid: the uid of the feed's block that holds it if that
	// uid still wants it, else the smallest uid. A night a booking holds is a conflict of
	// every uid that wants it; one another block holds is left alone; one a block of this
	// feed holds for a uid that no longer wants it is given out once that block let it go.
	assigned := map[string][]string{}         // uid → dates
	conflict := map[string]map[string]int64{} // uid → date → booking
	for d, uids := range wanted {
		if err := tick(); err != nil {
			return p, err
		}
		o := owners[d]
		switch b, ok := own[o]; {
		case ok && byUID[b.UID][d]:
			assigned[b.UID] = append(assigned[b.UID], d)
		case ok:
			// held by this feed's block for a uid that no longer wants it: not yet free
		case o == "":
			u := slices.Min(uids)
			assigned[u] = append(assigned[u], d)
		case strings.HasPrefix(o, "booking:"):
			id, _ := strconv.ParseInt(strings.TrimPrefix(o, "booking:"), 10, 64)
			for _, u := range uids {
				if conflict[u] == nil {
					conflict[u] = map[string]int64{}
				}
				conflict[u][d] = id
			}
		}
	}
	// Which blocks of the feed cover each night, for the overlaps below.
	cover := map[string][]int64{}
	ownByUID := map[string][]Block{}
	uidOf := map[int64]string{}
	for _, b := range blocks {
		uidOf[b.BlockID] = b.UID
		ownByUID[b.UID] = append(ownByUID[b.UID], b)
		for _, d := range blockNights(b.StartDate, b.EndDate) {
			if err := tick(); err != nil {
				return p, err
			}
			cover[d] = append(cover[d], b.BlockID)
		}
	}
	// Runs per uid, matched to the uid's blocks: largest overlap first (ties: the earlier
	// run, then the lower block id), then the rest in date order (a moved event keeps its
	// block), then new blocks; blocks left are deleted. Overlaps are counted night by night,
	// only for the pairs that share one.
	uids := make([]string, 0, len(assigned))
	for u := range assigned {
		uids = append(uids, u)
	}
	slices.Sort(uids)
	matched := map[int64]bool{}
	for _, u := range uids {
		runs := runsOf(assigned[u])
		type pair struct {
			run   int
			block int64
			n     int
		}
		count := map[[2]int64]int{}
		for i, run := range runs {
			for _, d := range run {
				if err := tick(); err != nil {
					return p, err
				}
				for _, id := range cover[d] {
					if uidOf[id] == u {
						count[[2]int64{int64(i), id}]++
					}
				}
			}
		}
		pairs := make([]pair, 0, len(count))
		for k, n := range count {
			pairs = append(pairs, pair{run: int(k[0]), block: k[1], n: n})
		}
		slices.SortFunc(pairs, func(a, b pair) int {
			if a.n != b.n {
				return b.n - a.n
			}
			if a.run != b.run {
				return a.run - b.run
			}
			return int(a.block - b.block)
		})
		target := make([]int64, len(runs))
		for _, pr := range pairs {
			if target[pr.run] == 0 && !matched[pr.block] {
				target[pr.run], matched[pr.block] = pr.block, true
			}
		}
		next := 0 // the uid's blocks in id order
		for i := range runs {
			if target[i] != 0 {
				continue
			}
			for ; next < len(ownByUID[u]); next++ {
				if b := ownByUID[u][next]; !matched[b.BlockID] {
					target[i], matched[b.BlockID] = b.BlockID, true
					break
				}
			}
		}
		for i, run := range runs {
			fr := feedRun{uid: u, dates: run}
			if target[i] == 0 {
				p.creates = append(p.creates, fr)
				continue
			}
			b := own[blockOwner(target[i])]
			if b.StartDate != run[0] || b.EndDate != run[len(run)-1] {
				p.moves = append(p.moves, feedMoveOp{block: b, run: fr})
			}
			p.result.Blocks = append(p.result.Blocks, FeedBlock{UID: u, BlockID: b.BlockID, StartDate: run[0], EndDate: run[len(run)-1]})
			p.result.NightsBlocked += len(run)
		}
	}
	for _, b := range blocks {
		if !matched[b.BlockID] {
			p.deletes = append(p.deletes, b)
		}
	}
	// Conflicts by uid then date; the first MaxFeedConflicts are listed, the rest counted.
	cuids := make([]string, 0, len(conflict))
	for u := range conflict {
		cuids = append(cuids, u)
	}
	slices.Sort(cuids)
	for _, u := range cuids {
		dates := make([]string, 0, len(conflict[u]))
		for d := range conflict[u] {
			dates = append(dates, d)
		}
		for _, run := range runsOf(dates) {
			if len(p.result.Conflicts) == MaxFeedConflicts {
				p.result.ConflictsOmitted++
				continue
			}
			ids := make([]int64, 0, len(run))
			for _, d := range run {
				ids = append(ids, conflict[u][d])
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			p.result.Conflicts = append(p.result.Conflicts, FeedConflict{UID: u, StartDate: run[0], EndDate: run[len(run)-1], BookingIDs: ids})
		}
	}
	slices.SortFunc(p.result.Blocks, func(a, b FeedBlock) int {
		return strings.Compare(a.StartDate+a.UID, b.StartDate+b.UID)
	})
	return p, nil
}

// runsOf splits dates into runs of consecutive nights (dates sorted here).
func runsOf(dates []string) [][]string {
	slices.Sort(dates)
	var out [][]string
	prev := ""
	for _, d := range dates {
		if prev != "" && nextDate(prev) == d {
			out[len(out)-1] = append(out[len(out)-1], d)
		} else {
			out = append(out, []string{d})
		}
		prev = d
	}
	return out
}

func nextDate(d string) string {
	t, _ := pricing.ParseDate(d)
	return t.AddDays(1).String()
}

// overlap counts the nights run and block b share.
func overlap(run []string, b Block) int {
	n := 0
	for _, d := range run {
		if d >= b.StartDate && d <= b.EndDate {
			n++
		}
	}
	return n
}

// feedCreate creates a block of the feed on run, as CreateBlock does, its id noted in the
// feed's lease before its nights are claimed.
func (s *Service) feedCreate(ctx context.Context, account string, r FeedSync, holder string, run feedRun, memo string) error {
	id, err := s.blocks.NextBlockID(ctx)
	if err != nil {
		return err
	}
	if err := s.blocks.NoteFeedBlock(ctx, account, r.FeedID, holder, id); err != nil {
		return err
	}
	owner := blockOwner(id)
	stay := ledger.Stay{Account: account, PropertyID: r.PropertyID, Dates: run.dates}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay}}); err != nil {
		return err
	}
	faults.At(ctx, "create:begun")
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		if ledger.IsTaken(err) {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		}
		return err
	}
	faults.At(ctx, "create:claimed")
	if _, err := s.blocks.InsertBlock(ctx, Block{AccountID: account, BlockID: id, PropertyID: r.PropertyID, StartDate: run.dates[0],
		EndDate: run.dates[len(run.dates)-1], Memo: memo, FeedID: r.FeedID, UID: run.uid}); err != nil {
		return err
	}
	faults.At(ctx, "create:written")
	return s.ledger.End(ctx, account, owner)
}

// feedMove gives block b the nights of run: the nights it gains are claimed first, then the
// block changes, then the nights it lost are released; the nights both hold never move.
func (s *Service) feedMove(ctx context.Context, account string, feed int64, holder string, b Block, run feedRun) error {
	if err := s.blocks.NoteFeedBlock(ctx, account, feed, holder, b.BlockID); err != nil {
		return err
	}
	old := blockNights(b.StartDate, b.EndDate)
	owner := blockOwner(b.BlockID)
	claim := ledger.Stay{Account: account, PropertyID: b.PropertyID, Dates: diff(run.dates, old)}
	release := ledger.Stay{Account: account, PropertyID: b.PropertyID, Dates: diff(old, run.dates)}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{claim}, Release: []ledger.Stay{release}}); err != nil {
		return err
	}
	faults.At(ctx, "move:begun")
	if err := s.ledger.Claim(ctx, claim, owner); err != nil {
		if ledger.IsTaken(err) {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		}
		return err
	}
	faults.At(ctx, "move:claimed")
	if _, err := s.blocks.MoveBlock(ctx, account, b.BlockID, run.dates[0], run.dates[len(run.dates)-1]); err != nil {
		return err
	}
	faults.At(ctx, "move:written")
	if err := s.ledger.Release(ctx, release, owner); err != nil {
		return err
	}
	faults.At(ctx, "move:released")
	return s.ledger.End(ctx, account, owner)
}

// feedDelete deletes block b of the feed and frees its nights.
func (s *Service) feedDelete(ctx context.Context, account string, feed int64, holder string, b Block) error {
	if err := s.blocks.NoteFeedBlock(ctx, account, feed, holder, b.BlockID); err != nil {
		return err
	}
	owner := blockOwner(b.BlockID)
	release := ledger.Stay{Account: account, PropertyID: b.PropertyID, Dates: blockNights(b.StartDate, b.EndDate)}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Release: []ledger.Stay{release}}); err != nil {
		return err
	}
	faults.At(ctx, "delete:begun")
	if _, err := s.blocks.DeleteBlock(ctx, account, b.BlockID); err != nil {
		return err
	}
	faults.At(ctx, "delete:written")
	if err := s.ledger.Release(ctx, release, owner); err != nil {
		return err
	}
	faults.At(ctx, "delete:released")
	return s.ledger.End(ctx, account, owner)
}
