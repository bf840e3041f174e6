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
// in place (nights it keeps are never free in between, and nights passing between two of
// the feed's blocks of one uid change owner without being freed); blocks whose run vanished
// are deleted. What a block holds is read from the ledger, so a block whose document and
// ledger nights differ is reconciled. Nights a booking holds are conflicts, nights another
// block holds are left alone.
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
			now, err := s.standing(ctx, account, FeedSync{FeedID: r.FeedID}) // every property's
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
		if err != nil && ctx.Err() != nil {
			return false, ErrBusy // waited out its time for the lease (the lease's own lock too)
		}
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
		// The taken-over lease keeps these notes until this sync ends done.
		for _, id := range left {
			if _, err := s.ledger.RepairStopped(ctx, account, blockOwner(id), s.Current); err != nil {
				return true, fmt.Errorf("repair block %d of feed %d: %w", id, feed, err)
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
	now, err := s.standing(ctx, account, r)
	if err != nil {
		return FeedResult{}, done, err
	}
	now.Conflicts = res.Conflicts
	return now, done, nil
}

// standing is the feed's blocks as they stand, by start date: the answer of a sync that
// stopped early, read once its changes are over. The read has a deadline of its own, not
// the sync's, which kept only a fifth of its time after the last change might begin: a read
// cut there would fail a sync whose changes all hold, and a read changes nothing, so it may
// outlast the sync's deadline.
func (s *Service) standing(ctx context.Context, account string, r FeedSync) (FeedResult, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Deadline)
	defer cancel()
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
	// It is a time of the service's clock (SetClock): the time left, less a fifth of the
	// deadline, from now.
	dl, _ := ctx.Deadline()
	stopAt := s.now().Add(time.Until(dl) - s.Deadline/5)
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
		if len(p.changes) == 0 {
			return p.result, true, true, nil
		}
		a := &feedApply{s: s, account: account, r: r, holder: holder, memo: memo, stopAt: stopAt, plan: p}
		stopped, err := a.run(ctx)
		if err != nil {
			return FeedResult{}, false, false, err
		}
		if stopped {
			return last, false, true, nil
		}
	}
	return last, false, true, nil
}

// feedRun is a run of nights one uid's block should hold.
type feedRun struct {
	uid   string
	dates []string // ascending, consecutive
}

// feedChange is what a round does to one block of the feed.
type feedChange struct {
	kind  string // "delete", "move" or "create"
	block Block  // a create's block id is given when it begins
	run   feedRun
	// gains are the run's nights the block does not hold (in the ledger), losses the nights
	// it holds outside the run, kept the run's nights it holds.
	gains, losses, kept []string
	// from names, for each gained night another block of the feed holds now, that block's
	// owner: the night is handed over from it, never freed.
	from                map[string]string
	begun, done, failed bool
	settled, finished   bool
}

type feedPlan struct {
	changes []*feedChange // deletes, then moves, then creates
	// docs are the nights each block of the feed's document lists (owner → night).
	docs   map[string]map[string]bool
	result FeedResult
}

// minNight and maxNight bound every night key of a property.
const minNight, maxNight = "0000-01-01", "9999-12-31"

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

// planFeed compares the wanted nights with the ledger's owners and the feed's blocks. It
// trusts the ledger, not the blocks' documents, for what a block of the feed holds: a move's
// document written after the next sync repaired its op says other dates than the nights the
// block holds, and the plan claims the nights the document should list and lets go of the
// others. Its work and memory are linear in the events' nights (at most MaxFeedNights), the
// property's held nights and the feed's blocks' nights, with sorting; it stops with
// errPlanLate once stopAt (a time of the service's clock) is past.
func (s *Service) planFeed(ctx context.Context, account string, r FeedSync, stopAt time.Time) (plan *feedPlan, err error) {
	// Planning only reads: its reads end at stopAt, and a read cut there is errPlanLate (the
	// sync answers with the blocks as they stand, a read of its own), never
	// an error of the request.
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, stopAt.Sub(s.now()))
	defer cancel()
	defer func() {
		// (The driver refuses a read that its deadline would cut before ctx is done.)
		cut := ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)
		if err != nil && cut && outer.Err() == nil {
			plan, err = nil, errPlanLate
		}
	}()
	p := &feedPlan{docs: map[string]map[string]bool{}}
	ticks := 0
	tick := func() error {
		if ticks++; ticks%4096 != 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.now().After(stopAt) {
			return errPlanLate
		}
		return nil
	}
	blocks, err := s.blocks.FeedBlocks(ctx, account, r.PropertyID, r.FeedID)
	if err != nil {
		return nil, err
	}
	own := map[string]Block{} // owner → block of this feed
	for _, b := range blocks {
		o := blockOwner(b.BlockID)
		own[o] = b
		p.docs[o] = map[string]bool{}
		for _, d := range blockNights(b.StartDate, b.EndDate) {
			if err := tick(); err != nil {
				return nil, err
			}
			p.docs[o][d] = true
		}
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
				return nil, err
			}
			set[d.String()] = true
		}
	}
	wanted := map[string][]string{}
	for u, set := range byUID {
		for d := range set {
			if err := tick(); err != nil {
				return nil, err
			}
			wanted[d] = append(wanted[d], u)
		}
	}
	// Who holds what: the whole property, since a block of the feed may hold nights its
	// document does not list, anywhere.
	owners := map[string]string{}
	if len(blocks) > 0 || len(wanted) > 0 {
		if owners, err = s.ledger.Owners(ctx, account, r.PropertyID, minNight, maxNight); err != nil {
			return nil, err
		}
	}
	held := map[string][]string{} // owner of the feed → the nights the ledger shows it holding
	for d, o := range owners {
		if err := tick(); err != nil {
			return nil, err
		}
		if _, ok := own[o]; ok {
			held[o] = append(held[o], d)
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
			return nil, err
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
	// Runs per uid, matched to the uid's blocks: largest overlap (the run's nights the block
	// holds) first, ties to the earlier run then the lower block id; then the rest in date
	// order (a moved event keeps its block); then new blocks; blocks left are deleted.
	ownByUID := map[string][]Block{}
	for _, b := range blocks {
		ownByUID[b.UID] = append(ownByUID[b.UID], b)
	}
	uids := make([]string, 0, len(assigned))
	for u := range assigned {
		uids = append(uids, u)
	}
	slices.Sort(uids)
	matched := map[int64]bool{}
	var moves, creates []*feedChange
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
					return nil, err
				}
				if b, ok := own[owners[d]]; ok && b.UID == u {
					count[[2]int64{int64(i), b.BlockID}]++
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
			c := &feedChange{kind: "create", run: feedRun{uid: u, dates: run}, gains: run}
			if target[i] != 0 {
				b := own[blockOwner(target[i])]
				h := held[blockOwner(b.BlockID)]
				slices.Sort(h)
				p.result.Blocks = append(p.result.Blocks, FeedBlock{UID: u, BlockID: b.BlockID, StartDate: run[0], EndDate: run[len(run)-1]})
				if slices.Equal(h, run) && b.StartDate == run[0] && b.EndDate == run[len(run)-1] {
					p.result.NightsBlocked += len(run)
					continue
				}
				c = &feedChange{kind: "move", block: b, run: c.run, gains: diff(run, h), losses: diff(h, run), kept: diff(run, diff(run, h))}
			}
			p.result.NightsBlocked += len(run)
			for _, d := range c.gains {
				if o := owners[d]; o != "" {
					if c.from == nil {
						c.from = map[string]string{}
					}
					c.from[d] = o // a block of the feed: the assignment gives no one else's night
				}
			}
			if c.kind == "create" {
				creates = append(creates, c)
			} else {
				moves = append(moves, c)
			}
		}
	}
	for _, b := range blocks {
		if !matched[b.BlockID] {
			h := held[blockOwner(b.BlockID)]
			slices.Sort(h)
			p.changes = append(p.changes, &feedChange{kind: "delete", block: b, losses: h})
		}
	}
	p.changes = append(append(p.changes, moves...), creates...)
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

// feedApply applies one round's plan, on the ledger's op protocol, so that a stop at any step
// is repaired (each block's op records the nights it claims and those it lets go):
//
//   - a delete begins its op, marks the block deleted;
//   - a move or a create begins its op, claims the free nights it gains, takes over those
//     another block of the feed hands over (ledger.Transfer, by the night's key and its old
//     owner: never freed), then writes its block (new dates, or the new block). It goes only
//     once every block it takes nights from has a document that no longer lists them (deleted,
//     moved, or shrunk), so that a stop leaves no document listing a night its block does not
//     hold;
//   - when nothing can go on (two blocks of one uid each need the other's nights), a block
//     that hands nights over first shrinks its document to the longest run of the nights it
//     keeps, which lets the others go on;
//   - at the end, each block begun releases what it holds that its document does not list
//     (what it handed over is no longer its own) and ends its op.
//
// The nights a block keeps are never free: they are in its document and its hold throughout.
// A claim that loses a night to someone else fails that change alone; the next round plans
// again (the night is a conflict, or another block's).
type feedApply struct {
	s       *Service
	account string
	r       FeedSync
	holder  string
	memo    string
	stopAt  time.Time // on the service's clock
	plan    *feedPlan
	// takers counts, per block owner, the changes not yet done or failed that take nights
	// from it; byOwner is each existing block's change.
	takers  map[string]int
	byOwner map[string]*feedChange
}

func (a *feedApply) late() bool { return a.s.now().After(a.stopAt) }

func (a *feedApply) stay(dates []string) ledger.Stay {
	return ledger.Stay{Account: a.account, PropertyID: a.r.PropertyID, Dates: dates}
}

// run applies the plan; it reports whether it stopped early (the round's end is near), with
// every change it began finished. An error leaves what it began to the next holder's repair.
func (a *feedApply) run(ctx context.Context) (bool, error) {
	var ids []int64
	for _, c := range a.plan.changes {
		if c.kind != "create" {
			ids = append(ids, c.block.BlockID)
		}
	}
	if len(ids) > 0 {
		if err := a.s.blocks.NoteFeedBlock(ctx, a.account, a.r.FeedID, a.holder, ids...); err != nil {
			return false, err
		}
	}
	faults.At(ctx, "noted")
	a.takers, a.byOwner = map[string]int{}, map[string]*feedChange{}
	for _, c := range a.plan.changes {
		if c.kind != "create" {
			a.byOwner[blockOwner(c.block.BlockID)] = c
		}
		for _, src := range givers(c) {
			a.takers[src]++
		}
	}
	stopped := false
	for _, c := range a.plan.changes {
		if c.kind != "delete" {
			continue
		}
		if a.late() {
			stopped = true
			break
		}
		if err := a.delete(ctx, c); err != nil {
			return false, err
		}
		if err := a.settle(ctx, c); err != nil {
			return false, err
		}
	}
	for {
		progressed := false
		for _, c := range a.plan.changes {
			if c.kind == "delete" || c.done || c.failed || !a.canTake(c) {
				continue
			}
			// Past the stop point only what takes handed-over nights goes on: they are held
			// by a block that let them go and would be freed otherwise.
			if !c.begun && len(c.from) == 0 && a.late() {
				stopped = true
				continue
			}
			if err := a.complete(ctx, c); err != nil {
				return false, err
			}
			if err := a.settle(ctx, c); err != nil {
				return false, err
			}
			progressed = true
		}
		if progressed {
			continue
		}
		c := a.giverToShrink()
		if c == nil || (!c.begun && a.late()) {
			break
		}
		if err := a.shrink(ctx, c); err != nil {
			return false, err
		}
		if err := a.settle(ctx, c); err != nil {
			return false, err
		}
	}
	// What is left begun: givers whose takers could not take, and changes stopped midway.
	for _, c := range a.plan.changes {
		if c.begun && !c.finished {
			if err := a.finish(ctx, c); err != nil {
				return false, err
			}
		}
	}
	return stopped, nil
}

// givers are the owners c takes nights from, each once, in order.
func givers(c *feedChange) []string {
	var out []string
	for _, src := range c.from {
		out = append(out, src)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// settle finishes, once c is done or failed, what no longer waits: c itself unless another
// change still takes nights from it, and each of its givers that c was the last to wait for.
func (a *feedApply) settle(ctx context.Context, c *feedChange) error {
	if c.settled || !(c.done || c.failed) {
		return nil
	}
	c.settled = true
	ready := []*feedChange{c}
	for _, src := range givers(c) {
		if a.takers[src]--; a.takers[src] == 0 {
			if g := a.byOwner[src]; g != nil && (g.done || g.failed) {
				ready = append(ready, g)
			}
		}
	}
	for _, r := range ready {
		if r.begun && !r.finished && (r.kind == "create" || a.takers[blockOwner(r.block.BlockID)] == 0) {
			if err := a.finish(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// canTake tells whether every night c takes from another block is no longer in that block's
// document.
func (a *feedApply) canTake(c *feedChange) bool {
	for d, src := range c.from {
		if a.plan.docs[src][d] {
			return false
		}
	}
	return true
}

// begin records c's op; false when another change of its block is in progress (c fails, the
// next round plans again).
func (a *feedApply) begin(ctx context.Context, c *feedChange) (bool, error) {
	if c.begun {
		return true, nil
	}
	err := a.s.ledger.Begin(ctx, ledger.Op{Owner: blockOwner(c.block.BlockID), Account: a.account,
		Claim: []ledger.Stay{a.stay(c.gains)}, Release: []ledger.Stay{a.stay(c.losses)}})
	if errors.Is(err, ledger.ErrBusy) {
		c.failed = true
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.begun = true
	faults.At(ctx, c.kind+":begun")
	return true, nil
}

// delete marks c's block deleted; its nights are let go at the end of the round.
func (a *feedApply) delete(ctx context.Context, c *feedChange) error {
	if ok, err := a.begin(ctx, c); !ok {
		return err
	}
	if _, err := a.s.blocks.DeleteBlock(ctx, a.account, c.block.BlockID); err != nil {
		return err
	}
	a.plan.docs[blockOwner(c.block.BlockID)] = nil
	c.done = true
	faults.At(ctx, "delete:written")
	return nil
}

// complete gives c's block the nights of its run: the free ones claimed, the others handed
// over, then the block written.
func (a *feedApply) complete(ctx context.Context, c *feedChange) error {
	if c.kind == "create" && c.block.BlockID == 0 {
		if err := a.newIDs(ctx); err != nil {
			return err
		}
	}
	if ok, err := a.begin(ctx, c); !ok {
		return err
	}
	owner := blockOwner(c.block.BlockID)
	var free []string
	handed := map[string][]string{} // giver → nights
	for _, d := range c.gains {
		if src, ok := c.from[d]; ok {
			handed[src] = append(handed[src], d)
		} else {
			free = append(free, d)
		}
	}
	if err := a.s.ledger.Claim(ctx, a.stay(free), owner); err != nil {
		if ledger.IsTaken(err) {
			c.failed = true
			return nil
		}
		return err
	}
	faults.At(ctx, c.kind+":claimed")
	for _, src := range givers(c) {
		missing, err := a.s.ledger.Transfer(ctx, a.stay(handed[src]), src, owner)
		if err != nil {
			return err
		}
		// Not the giver's any more (a repair released it): claimed if it is free.
		if err := a.s.ledger.Claim(ctx, a.stay(missing), owner); err != nil {
			if ledger.IsTaken(err) {
				c.failed = true
				return nil
			}
			return err
		}
	}
	if len(handed) > 0 {
		faults.At(ctx, c.kind+":handed")
	}
	run := c.run.dates
	var err error
	if c.kind == "create" {
		_, err = a.s.blocks.InsertBlock(ctx, Block{AccountID: a.account, BlockID: c.block.BlockID, PropertyID: a.r.PropertyID, StartDate: run[0],
			EndDate: run[len(run)-1], Memo: a.memo, FeedID: a.r.FeedID, UID: c.run.uid})
	} else {
		_, err = a.s.blocks.MoveBlock(ctx, a.account, c.block.BlockID, run[0], run[len(run)-1])
	}
	if errors.Is(err, ErrNotFound) { // deleted meanwhile (its feed tombstoned, by its owner)
		c.failed = true
		return nil
	}
	if err != nil {
		return err
	}
	a.plan.docs[owner] = setOf(run)
	c.done = true
	faults.At(ctx, c.kind+":written")
	return nil
}

// newIDs gives block ids to the next creates without one (up to 64), noted in the lease
// before any is touched.
func (a *feedApply) newIDs(ctx context.Context) error {
	var ids []int64
	for _, c := range a.plan.changes {
		if c.kind != "create" || c.block.BlockID != 0 || c.failed {
			continue
		}
		id, err := a.s.blocks.NextBlockID(ctx)
		if err != nil {
			return err
		}
		c.block = Block{BlockID: id, PropertyID: a.r.PropertyID}
		if ids = append(ids, id); len(ids) == 64 {
			break
		}
	}
	return a.s.blocks.NoteFeedBlock(ctx, a.account, a.r.FeedID, a.holder, ids...)
}

// giverToShrink is a move not yet done whose document lists nights another pending change
// takes from it, and that keeps some nights of its run: shrunk to them, it lets the others go
// on (every cycle of blocks needing each other's nights has one: the runs are matched to
// blocks by largest overlap first).
func (a *feedApply) giverToShrink() *feedChange {
	needed := map[string]bool{}
	for _, c := range a.plan.changes {
		if c.done || c.failed {
			continue
		}
		for d, src := range c.from {
			if a.plan.docs[src][d] {
				needed[src] = true
			}
		}
	}
	for _, c := range a.plan.changes {
		if c.kind == "move" && !c.done && !c.failed && needed[blockOwner(c.block.BlockID)] && len(c.kept) > 0 {
			return c
		}
	}
	return nil
}

// shrink writes c's block on the longest run of the nights it keeps: its document no longer
// lists what it hands over (it still holds those nights, in its op, until they are taken).
func (a *feedApply) shrink(ctx context.Context, c *feedChange) error {
	if ok, err := a.begin(ctx, c); !ok {
		return err
	}
	var k []string
	for _, run := range runsOf(slices.Clone(c.kept)) {
		if len(run) > len(k) {
			k = run
		}
	}
	_, err := a.s.blocks.MoveBlock(ctx, a.account, c.block.BlockID, k[0], k[len(k)-1])
	if errors.Is(err, ErrNotFound) {
		c.failed = true
		return nil
	}
	if err != nil {
		return err
	}
	a.plan.docs[blockOwner(c.block.BlockID)] = setOf(k)
	faults.At(ctx, "move:shrunk")
	return nil
}

// finish releases the nights c's op touched that its block holds and its document does not
// list, and ends the op.
func (a *feedApply) finish(ctx context.Context, c *feedChange) error {
	owner := blockOwner(c.block.BlockID)
	doc := a.plan.docs[owner]
	var release []string
	for _, d := range append(slices.Clone(c.gains), c.losses...) {
		if !doc[d] {
			release = append(release, d)
		}
	}
	slices.Sort(release)
	if err := a.s.ledger.Release(ctx, a.stay(release), owner); err != nil {
		return err
	}
	faults.At(ctx, c.kind+":released")
	c.finished = true
	return a.s.ledger.End(ctx, a.account, owner)
}

func setOf(dates []string) map[string]bool {
	out := make(map[string]bool, len(dates))
	for _, d := range dates {
		out[d] = true
	}
	return out
}
