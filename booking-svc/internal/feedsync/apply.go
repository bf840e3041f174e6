package feedsync

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
)

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
	s       *Syncer
	account string
	r       Request
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
			a.byOwner[booking.BlockOwner(c.block.BlockID)] = c
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
		if r.begun && !r.finished && (r.kind == "create" || a.takers[booking.BlockOwner(r.block.BlockID)] == 0) {
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
	err := a.s.ledger.Begin(ctx, ledger.Op{Owner: booking.BlockOwner(c.block.BlockID), Account: a.account,
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
	a.plan.docs[booking.BlockOwner(c.block.BlockID)] = nil
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
	owner := booking.BlockOwner(c.block.BlockID)
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
		_, err = a.s.blocks.InsertBlock(ctx, booking.Block{AccountID: a.account, BlockID: c.block.BlockID, PropertyID: a.r.PropertyID, StartDate: run[0],
			EndDate: run[len(run)-1], Memo: a.memo, FeedID: a.r.FeedID, UID: c.run.uid})
	} else {
		_, err = a.s.blocks.MoveBlock(ctx, a.account, c.block.BlockID, run[0], run[len(run)-1])
	}
	if errors.Is(err, booking.ErrNotFound) { // deleted meanwhile (its feed tombstoned, by its owner)
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
		c.block = booking.Block{BlockID: id, PropertyID: a.r.PropertyID}
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
		if c.kind == "move" && !c.done && !c.failed && needed[booking.BlockOwner(c.block.BlockID)] && len(c.kept) > 0 {
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
	if errors.Is(err, booking.ErrNotFound) {
		c.failed = true
		return nil
	}
	if err != nil {
		return err
	}
	a.plan.docs[booking.BlockOwner(c.block.BlockID)] = setOf(k)
	faults.At(ctx, "move:shrunk")
	return nil
}

// finish releases the nights c's op touched that its block holds and its document does not
// list, and ends the op.
func (a *feedApply) finish(ctx context.Context, c *feedChange) error {
	owner := booking.BlockOwner(c.block.BlockID)
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
