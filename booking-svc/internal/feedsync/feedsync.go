// Package feedsync imports iCal feeds into booking-svc's availability (docs/booking.md,
// "iCal import"): it makes a property's blocks imported from a feed exactly the nights of
// the feed's events that nothing else holds. It sits beside the booking domain, not in it,
// and works only through the domain's ports (booking.Blocks, booking.Ledger,
// booking.PropertyView) and its conventions (booking.BlockOwner, booking.BlockNights): the
// same ledger protocol as every other change of nights, so the janitor's repair finishes
// what a stopped sync began.
//
// A sync reads as its files: Sync (here) checks the request and takes the feed's lease
// (lease.go); rounds.go plans and applies until nothing is left to do; plan.go compares the
// wanted nights with the ledger and the feed's blocks; apply.go carries a plan out, step by
// step, so that a stop anywhere is repaired.
package feedsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// Limits of one iCal feed sync (docs/booking.md, "iCal import").
const (
	MaxEvents    = 5000
	MaxName      = 100
	MaxUIDLength = 255
	// MaxNights bounds the nights of one sync's events together (each event's nights
	// counted, overlapping or not): planning's work and memory are linear in them.
	MaxNights = 50000
	// MaxConflicts bounds the conflicts a sync answers; the rest are counted.
	MaxConflicts = 1000
)

// Event is one event of an iCal feed: its uid and the nights Start to End-1 (End is
// exclusive, as iCal's DTEND of an all-day event). Never its summary.
type Event struct {
	UID        string
	Start, End pricing.Date
}

// Request asks that the blocks of property PropertyID imported from feed FeedID be exactly
// the nights of Events that nothing else holds. Final (with no events): the feed was
// deleted; its blocks are removed and the feed id is tombstoned for good.
type Request struct {
	PropertyID int64
	FeedID     int64
	Name       string
	Events     []Event
	Final      bool
}

// ErrGone: the feed was deleted (a final sync tombstoned it); it is never synced again.
var ErrGone = errors.New("the feed was deleted")

// Block is a block of the feed after the sync (EndDate: the last night, included).
type Block struct {
	UID                string
	BlockID            int64
	StartDate, EndDate string
}

// Conflict is a run of nights an event of the feed wants that vros bookings hold
// (EndDate: the last night, included).
type Conflict struct {
	UID                string
	StartDate, EndDate string
	BookingIDs         []int64
}

// Result is the feed's state after a sync. Complete says the feed's blocks are as
// wanted; a sync that stopped early (its deadline near, or nights that kept changing hands)
// has everything it began finished, answers the blocks as they stand and the conflicts found
// so far, and the same request again goes on from there.
type Result struct {
	Blocks        []Block
	NightsBlocked int
	Conflicts     []Conflict
	// ConflictsOmitted counts the conflicts past the first MaxConflicts (by uid, then
	// date), left out of Conflicts.
	ConflictsOmitted int
	Complete         bool
}

// Deps are the domain's ports a sync works over.
type Deps struct {
	PropertyView booking.PropertyView
	Blocks       booking.Blocks
	Ledger       booking.Ledger
	// Current tells a repair what an owner should hold (booking.Service.Current): a sync
	// repairs what an earlier sync of its feed left before it begins.
	Current ledger.Current
}

// Syncer syncs iCal feeds.
type Syncer struct {
	propertyView booking.PropertyView
	blocks       booking.Blocks
	ledger       booking.Ledger
	current      ledger.Current
	// Deadline bounds every sync, so that one can never outlive the janitor's lease.
	Deadline time.Duration
	// LeaseMargin is how long past a sync's deadline its feed lease lasts (feedLeaseMargin,
	// 5 s): a test whose stopped sync surely writes nothing more shortens it.
	LeaseMargin time.Duration
	// Crash, in tests only, is called at each step of a sync with the step's name
	// ("icalsync:leased", "icalsync:move:claimed"…) and the account; it may stop the sync
	// there for good, as if the process died. Nil in production.
	Crash func(step, account string)
	now   func() time.Time
}

// New returns a syncer over the domain's ports.
func New(d Deps) *Syncer {
	return &Syncer{propertyView: d.PropertyView, blocks: d.Blocks, ledger: d.Ledger, current: d.Current, Deadline: 25 * time.Second,
		LeaseMargin: feedLeaseMargin, now: time.Now}
}

// SetClock makes now the syncer's clock (time.Now by default): the time a sync measures its
// deadline on, so that a test decides when a sync runs out of time. Set it before the
// syncer is used.
func (s *Syncer) SetClock(now func() time.Time) { s.now = now }

// steps returns ctx carrying the Crash hook for a sync of account.
func (s *Syncer) steps(ctx context.Context, account string) context.Context {
	if s.Crash == nil {
		return ctx
	}
	crash := s.Crash
	return faults.With(ctx, func(step string) { crash("icalsync:"+step, account) })
}

// Sync reconciles the property's blocks imported from the feed with its events: every
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
// tombstones the feed id; from then on a sync of it is ErrGone and changes nothing (a
// poll that outlived its lease cannot bring the blocks back), and a final one again only
// finds nothing left to remove.
func (s *Syncer) Sync(ctx context.Context, account string, r Request) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, account)
	if n := feedNights(r.Events); n > MaxNights {
		return Result{}, &booking.FieldError{Field: "events", Message: fmt.Sprintf("must hold at most %d nights in all (each event's nights counted), not %d", MaxNights, n)}
	}
	if r.Final {
		r.Events = nil
	} else {
		if err := s.feedAlive(ctx, account, r.FeedID); err != nil {
			return Result{}, err
		}
		if _, err := s.propertyView.Property(ctx, account, r.PropertyID); err != nil {
			return Result{}, err
		}
	}
	holder, err := leaseHolder()
	if err != nil {
		return Result{}, err
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
		return Result{}, err
	}
	faults.At(ctx, "leased")
	if !r.Final {
		// Read again under the lease: a final sync that held it before has tombstoned it.
		if err := s.feedAlive(ctx, account, r.FeedID); err != nil {
			done = true
			return Result{}, err
		}
		var res Result
		res, done, err = s.syncRounds(ctx, account, r, holder)
		return res, err
	}
	var res Result
	res, done, err = s.finalSync(ctx, account, r, holder)
	return res, err
}

// feedAlive is ErrGone for a tombstoned feed.
func (s *Syncer) feedAlive(ctx context.Context, account string, feed int64) error {
	gone, err := s.blocks.FeedGone(ctx, account, feed)
	if err == nil && gone {
		err = fmt.Errorf("feed %d: %w", feed, ErrGone)
	}
	return err
}

// finalSync removes every block of the feed, of whichever property, then tombstones the
// feed id; it reports whether everything it began was finished.
func (s *Syncer) finalSync(ctx context.Context, account string, r Request, holder string) (Result, bool, error) {
	left, err := s.blocks.FeedBlocks(ctx, account, 0, r.FeedID)
	if err != nil {
		return Result{}, true, err
	}
	pids := []int64{r.PropertyID}
	for _, b := range left {
		if !slices.Contains(pids, b.PropertyID) {
			pids = append(pids, b.PropertyID)
		}
	}
	res := Result{Complete: true}
	for _, pid := range pids {
		one := r
		one.PropertyID = pid
		got, done, err := s.syncRounds(ctx, account, one, holder)
		if err != nil || !done {
			return Result{}, done, err
		}
		if !got.Complete {
			now, err := s.standing(ctx, account, Request{FeedID: r.FeedID}) // every property's
			return now, true, err
		}
	}
	faults.At(ctx, "removed")
	if err := s.blocks.BuryFeed(ctx, account, r.FeedID); err != nil {
		return Result{}, true, err
	}
	return res, true, nil
}

// feedNights counts the nights of the events together (MaxNights bounds them).
func feedNights(events []Event) int {
	n := 0
	for _, e := range events {
		n += max(pricing.DaysBetween(e.Start, e.End), 0)
	}
	return n
}
