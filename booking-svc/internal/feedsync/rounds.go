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

// maxSyncRounds bounds the plan-and-apply rounds of one sync (docs/booking.md, "iCal
// import": a round frees the nights a later round gives to another block of the feed).
const maxSyncRounds = 8

// syncRounds plans from what the ledger and the blocks say now and applies the plan, until
// a plan has nothing left to do. It reports whether everything it began was finished.
func (s *Syncer) syncRounds(ctx context.Context, account string, r Request, holder string) (Result, bool, error) {
	res, complete, done, err := s.syncRoundsUntil(ctx, account, r, holder)
	if err != nil || complete {
		res.Complete = complete
		return res, done, err
	}
	// Stopped early with everything begun finished: the blocks as they stand.
	now, err := s.standing(ctx, account, r)
	if err != nil {
		return Result{}, done, err
	}
	now.Conflicts = res.Conflicts
	return now, done, nil
}

// standing is the feed's blocks as they stand, by start date: the answer of a sync that
// stopped early, read once its changes are over. The read has a deadline of its own, not
// the sync's, which kept only a fifth of its time after the last change might begin: a read
// cut there would fail a sync whose changes all hold, and a read changes nothing, so it may
// outlast the sync's deadline.
func (s *Syncer) standing(ctx context.Context, account string, r Request) (Result, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Deadline)
	defer cancel()
	blocks, err := s.blocks.FeedBlocks(ctx, account, r.PropertyID, r.FeedID)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, b := range blocks {
		res.Blocks = append(res.Blocks, Block{UID: b.UID, BlockID: b.BlockID, StartDate: b.StartDate, EndDate: b.EndDate})
		res.NightsBlocked += len(booking.BlockNights(b.StartDate, b.EndDate))
	}
	slices.SortFunc(res.Blocks, func(a, b Block) int {
		return strings.Compare(a.StartDate+a.UID, b.StartDate+b.UID)
	})
	return res, nil
}

// syncRoundsUntil runs the rounds; it reports whether the feed is complete (else the last
// plan's result, for its conflicts) and whether everything it began was finished.
func (s *Syncer) syncRoundsUntil(ctx context.Context, account string, r Request, holder string) (Result, bool, bool, error) {
	memo := "Imported from " + r.Name
	if r.Name == "" {
		memo = "Imported from iCal feed " + strconv.FormatInt(r.FeedID, 10)
	}
	// Past this point no new change begins: what is begun is finished within the deadline.
	// It is a time of the service's clock (SetClock): the time left, less a fifth of the
	// deadline, from now.
	dl, _ := ctx.Deadline()
	stopAt := s.now().Add(time.Until(dl) - s.Deadline/5)
	var last Result
	for range maxSyncRounds {
		p, err := s.planFeed(ctx, account, r, stopAt)
		if errors.Is(err, errPlanLate) {
			return last, false, true, nil
		}
		if err != nil {
			return Result{}, false, true, err
		}
		last = p.result
		if len(p.changes) == 0 {
			return p.result, true, true, nil
		}
		a := &feedApply{s: s, account: account, r: r, holder: holder, memo: memo, stopAt: stopAt, plan: p}
		stopped, err := a.run(ctx)
		if err != nil {
			return Result{}, false, false, err
		}
		if stopped {
			return last, false, true, nil
		}
	}
	return last, false, true, nil
}
