package feedsync

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// feedRun is a run of nights one uid's block should hold.
type feedRun struct {
	uid   string
	dates []string // ascending, consecutive
}

// feedChange is what a round does to one block of the feed.
type feedChange struct {
	kind  string        // "delete", "move" or "create"
	block booking.Block // a create's block id is given when it begins
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
	result Result
}

// minNight and maxNight bound every night key of a property.
const minNight, maxNight = "0000-01-01", "9999-12-31"

// errPlanLate: planning reached the point past which no new change begins.
var errPlanLate = errors.New("planning ran past the sync's time")

// planFeed compares the wanted nights with the ledger's owners and the feed's blocks. It
// trusts the ledger, not the blocks' documents, for what a block of the feed holds: a move's
// document written after the next sync repaired its op says other dates than the nights the
// block holds, and the plan claims the nights the document should list and lets go of the
// others. Its work and memory are linear in the events' nights (at most MaxNights), the
// property's held nights and the feed's blocks' nights, with sorting; it stops with
// errPlanLate once stopAt (a time of the service's clock) is past.
//
// It goes in steps, each a method of planner: what the feed's blocks list, what the events
// want, who holds which night, which uid each wanted night goes to, which block each run of
// a uid's nights goes to (and so the moves, creates and deletes), and the conflicts.
func (s *Syncer) planFeed(ctx context.Context, account string, r Request, stopAt time.Time) (plan *feedPlan, err error) {
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
	p := &planner{s: s, ctx: ctx, stopAt: stopAt, plan: &feedPlan{docs: map[string]map[string]bool{}}}
	if p.blocks, err = s.blocks.FeedBlocks(ctx, account, r.PropertyID, r.FeedID); err != nil {
		return nil, err
	}
	if err := p.readDocuments(); err != nil {
		return nil, err
	}
	if err := p.wantNights(r.Events); err != nil {
		return nil, err
	}
	if err := p.readHolders(account, r.PropertyID); err != nil {
		return nil, err
	}
	if err := p.assignNights(); err != nil {
		return nil, err
	}
	if err := p.matchRuns(); err != nil {
		return nil, err
	}
	p.deleteUnmatched()
	p.listConflicts()
	slices.SortFunc(p.plan.result.Blocks, func(a, b Block) int {
		return strings.Compare(a.StartDate+a.UID, b.StartDate+b.UID)
	})
	return p.plan, nil
}

// planner is one plan in the making: what each step found, for the steps after it.
type planner struct {
	s      *Syncer
	ctx    context.Context // ends at stopAt
	stopAt time.Time
	ticks  int
	plan   *feedPlan

	blocks []booking.Block            // the feed's blocks of the property
	own    map[string]booking.Block   // owner → block of this feed
	byUID  map[string]map[string]bool // uid → the nights it wants
	wanted map[string][]string        // night → the uids that want it, each once
	owners map[string]string          // night → who holds it in the ledger
	held   map[string][]string        // owner of the feed → the nights the ledger shows it holding
	// assigned are the nights each uid gets, conflict the nights of each uid a booking holds.
	assigned map[string][]string         // uid → nights
	conflict map[string]map[string]int64 // uid → night → booking
	// matched are the blocks a run goes to; moves and creates the changes they make.
	matched        map[int64]bool
	moves, creates []*feedChange
}

// tick counts one step of work; every 4096th it checks the time, so that planning stops
// once stopAt is past.
func (p *planner) tick() error {
	if p.ticks++; p.ticks%4096 != 0 {
		return nil
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if p.s.now().After(p.stopAt) {
		return errPlanLate
	}
	return nil
}

// readDocuments notes the nights each of the feed's blocks' documents lists.
func (p *planner) readDocuments() error {
	p.own = map[string]booking.Block{}
	for _, b := range p.blocks {
		o := booking.BlockOwner(b.BlockID)
		p.own[o] = b
		p.plan.docs[o] = map[string]bool{}
		for _, d := range booking.BlockNights(b.StartDate, b.EndDate) {
			if err := p.tick(); err != nil {
				return err
			}
			p.plan.docs[o][d] = true
		}
	}
	return nil
}

// wantNights finds the nights each uid wants (a set: overlapping events of one uid count
// once), then the uids that want each night, each uid once.
func (p *planner) wantNights(events []Event) error {
	p.byUID = map[string]map[string]bool{}
	for _, e := range events {
		if !e.Start.Before(e.End) {
			continue
		}
		set := p.byUID[e.UID]
		if set == nil {
			set = map[string]bool{}
			p.byUID[e.UID] = set
		}
		for d := e.Start; d.Before(e.End); d = d.AddDays(1) {
			if err := p.tick(); err != nil {
				return err
			}
			set[d.String()] = true
		}
	}
	p.wanted = map[string][]string{}
	for u, set := range p.byUID {
		for d := range set {
			if err := p.tick(); err != nil {
				return err
			}
			p.wanted[d] = append(p.wanted[d], u)
		}
	}
	return nil
}

// readHolders reads who holds what: the whole property, since a block of the feed may hold
// nights its document does not list, anywhere.
func (p *planner) readHolders(account string, pid int64) error {
	p.owners = map[string]string{}
	if len(p.blocks) > 0 || len(p.wanted) > 0 {
		var err error
		if p.owners, err = p.s.ledger.Owners(p.ctx, account, pid, minNight, maxNight); err != nil {
			return err
		}
	}
	p.held = map[string][]string{}
	for d, o := range p.owners {
		if err := p.tick(); err != nil {
			return err
		}
		if _, ok := p.own[o]; ok {
			p.held[o] = append(p.held[o], d)
		}
	}
	return nil
}

// assignNights gives each wanted night to one uid: the uid of the feed's block that holds it
// if that uid still wants it, else the smallest uid. A night a booking holds is a conflict
// of every uid that wants it; one another block holds is left alone; one a block of this
// feed holds for a uid that no longer wants it is given out once that block let it go.
func (p *planner) assignNights() error {
	p.assigned = map[string][]string{}
	p.conflict = map[string]map[string]int64{}
	for d, uids := range p.wanted {
		if err := p.tick(); err != nil {
			return err
		}
		o := p.owners[d]
		switch b, ok := p.own[o]; {
		case ok && p.byUID[b.UID][d]:
			p.assigned[b.UID] = append(p.assigned[b.UID], d)
		case ok:
			// held by this feed's block for a uid that no longer wants it: not yet free
		case o == "":
			u := slices.Min(uids)
			p.assigned[u] = append(p.assigned[u], d)
		case strings.HasPrefix(o, "booking:"):
			id, _ := strconv.ParseInt(strings.TrimPrefix(o, "booking:"), 10, 64)
			for _, u := range uids {
				if p.conflict[u] == nil {
					p.conflict[u] = map[string]int64{}
				}
				p.conflict[u][d] = id
			}
		}
	}
	return nil
}

// matchRuns splits each uid's nights into runs and matches them to the uid's blocks (by
// uid, in order): each run becomes a move of its block, or a create.
func (p *planner) matchRuns() error {
	ownByUID := map[string][]booking.Block{}
	for _, b := range p.blocks {
		ownByUID[b.UID] = append(ownByUID[b.UID], b)
	}
	uids := make([]string, 0, len(p.assigned))
	for u := range p.assigned {
		uids = append(uids, u)
	}
	slices.Sort(uids)
	p.matched = map[int64]bool{}
	for _, u := range uids {
		runs := runsOf(p.assigned[u])
		target, err := p.targets(u, runs, ownByUID[u])
		if err != nil {
			return err
		}
		for i, run := range runs {
			p.change(u, run, target[i])
		}
	}
	return nil
}

// targets picks the block each of uid u's runs goes to (0: a new block): largest overlap (the
// run's nights the block holds) first, ties to the earlier run then the lower block id; then
// the rest in date order (a moved event keeps its block), from the uid's blocks left, in id
// order; then new blocks. Blocks left unmatched are deleted.
func (p *planner) targets(u string, runs [][]string, blocks []booking.Block) ([]int64, error) {
	type pair struct {
		run   int
		block int64
		n     int
	}
	count := map[[2]int64]int{}
	for i, run := range runs {
		for _, d := range run {
			if err := p.tick(); err != nil {
				return nil, err
			}
			if b, ok := p.own[p.owners[d]]; ok && b.UID == u {
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
		if target[pr.run] == 0 && !p.matched[pr.block] {
			target[pr.run], p.matched[pr.block] = pr.block, true
		}
	}
	next := 0 // the uid's blocks in id order
	for i := range runs {
		if target[i] != 0 {
			continue
		}
		for ; next < len(blocks); next++ {
			if b := blocks[next]; !p.matched[b.BlockID] {
				target[i], p.matched[b.BlockID] = b.BlockID, true
				break
			}
		}
	}
	return target, nil
}

// change plans what run of uid u does to its target block (0: a new one): nothing when the
// block already holds and lists exactly the run, else a move or a create, whose gained
// nights another block of the feed holds are handed over from it. The run counts in the
// result either way.
func (p *planner) change(u string, run []string, target int64) {
	c := &feedChange{kind: "create", run: feedRun{uid: u, dates: run}, gains: run}
	if target != 0 {
		b := p.own[booking.BlockOwner(target)]
		h := p.held[booking.BlockOwner(b.BlockID)]
		slices.Sort(h)
		p.plan.result.Blocks = append(p.plan.result.Blocks, Block{UID: u, BlockID: b.BlockID, StartDate: run[0], EndDate: run[len(run)-1]})
		if slices.Equal(h, run) && b.StartDate == run[0] && b.EndDate == run[len(run)-1] {
			p.plan.result.NightsBlocked += len(run)
			return
		}
		c = &feedChange{kind: "move", block: b, run: c.run, gains: booking.DatesNotIn(run, h), losses: booking.DatesNotIn(h, run), kept: booking.DatesNotIn(run, booking.DatesNotIn(run, h))}
	}
	p.plan.result.NightsBlocked += len(run)
	for _, d := range c.gains {
		if o := p.owners[d]; o != "" {
			if c.from == nil {
				c.from = map[string]string{}
			}
			c.from[d] = o // a block of the feed: the assignment gives no one else's night
		}
	}
	if c.kind == "create" {
		p.creates = append(p.creates, c)
	} else {
		p.moves = append(p.moves, c)
	}
}

// deleteUnmatched deletes the blocks no run went to, and orders the plan's changes: deletes,
// then moves, then creates.
func (p *planner) deleteUnmatched() {
	for _, b := range p.blocks {
		if !p.matched[b.BlockID] {
			h := p.held[booking.BlockOwner(b.BlockID)]
			slices.Sort(h)
			p.plan.changes = append(p.plan.changes, &feedChange{kind: "delete", block: b, losses: h})
		}
	}
	p.plan.changes = append(append(p.plan.changes, p.moves...), p.creates...)
}

// listConflicts lists the conflicts by uid then date, as runs of nights with the bookings
// that hold them; the first MaxConflicts are listed, the rest counted.
func (p *planner) listConflicts() {
	cuids := make([]string, 0, len(p.conflict))
	for u := range p.conflict {
		cuids = append(cuids, u)
	}
	slices.Sort(cuids)
	for _, u := range cuids {
		dates := make([]string, 0, len(p.conflict[u]))
		for d := range p.conflict[u] {
			dates = append(dates, d)
		}
		for _, run := range runsOf(dates) {
			if len(p.plan.result.Conflicts) == MaxConflicts {
				p.plan.result.ConflictsOmitted++
				continue
			}
			ids := make([]int64, 0, len(run))
			for _, d := range run {
				ids = append(ids, p.conflict[u][d])
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			p.plan.result.Conflicts = append(p.plan.result.Conflicts, Conflict{UID: u, StartDate: run[0], EndDate: run[len(run)-1], BookingIDs: ids})
		}
	}
}
