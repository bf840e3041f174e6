// Package ledger is the availability ledger that makes double booking impossible: every
// night a booking or a block holds is one record whose key is the night itself
// ("<accountId>:<propertyId>:<YYYY-MM-DD>"), and the store lets exactly one owner insert it.
//
// The protocol of a change, top to bottom in this file:
//
//  1. Begin records the change's intent (an op): the nights its owner is about to claim and
//     those it will release. One owner has one op at a time.
//  2. Claim inserts the new nights in date order, all or none: two attempts on overlapping
//     dates collide on the first night they share, and the one that got it cannot later
//     lose to the other. A failed attempt removes the nights it inserted.
//  3. The owner commits its own document (the booking or block), outside the ledger.
//  4. Release frees the nights the owner no longer needs; only nights it holds. (Transfer
//     hands nights from one owner straight to another of the same writer instead.)
//  5. End removes the op: the change is complete. A publish op (Op.Publish: a booking's
//     create) is not ended by its writer: it also stands for the change's event, and the
//     outbox relay releases it once the event is published (Handoff); a repair hands its
//     owner to Published before it ends it.
//  6. Repair, run by the janitor (and by a retried request for its own owner), finishes an
//     op whose writer stopped: every night the op touched that its owner holds but should
//     not, by its document, is released, and the op is removed.
//
// How nights and ops are kept is the Store's business (nightstore keeps them in MongoDB).
package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Stay is a set of nights of one property, dates as YYYY-MM-DD in ascending order.
type Stay struct {
	Account    string
	PropertyID int64
	Dates      []string
}

// An Op is the record of a change in progress: the nights an owner is about to claim and
// those it will release once its own document says so. It is written before the first
// night is touched and removed when the change is complete.
type Op struct {
	Owner   string
	Account string
	Claim   []Stay
	Release []Stay
	// At is when the op began; Deadline the deadline of the change's request, zero for a
	// change begun without one. Past it (and a margin) the writer has stopped.
	At       time.Time
	Deadline time.Time
	// Publish marks an op that also stands for its change's event until it is published
	// (Handoff): the writer does not end it, the relay does. It has a key of its own, so
	// that the owner's next change never waits for the relay.
	Publish bool
}

// Stays are all the nights the op touches, claimed or released.
func (op Op) Stays() []Stay { return append(append([]Stay{}, op.Claim...), op.Release...) }

// TakenError says which night another owner holds.
type TakenError struct{ Date string }

func (e *TakenError) Error() string { return "night of " + e.Date + " is not available" }

// IsTaken reports whether err is a TakenError.
func IsTaken(err error) bool { return errors.As(err, new(*TakenError)) }

// ErrBusy is returned when owner already has a change in progress.
var ErrBusy = errors.New("another change of this booking is in progress")

// ErrTaken is wrapped by a Store's InsertNights error when it stopped at a night another
// owner holds.
var ErrTaken = errors.New("night is held by another owner")

// Store keeps nights and ops. Nights are keyed by NightKey; ops by account and owner.
type Store interface {
	// InsertNights gives owner the dates of s in order and stops at the first failure,
	// reporting how many it inserted; a night held by anyone stops it with ErrTaken.
	InsertNights(ctx context.Context, s Stay, owner string, at time.Time) (int, error)
	// DeleteNights removes the nights of s whoever holds them (a claim undoing itself).
	DeleteNights(ctx context.Context, s Stay) error
	// TransferNights gives owner to the nights of s that from holds, each by a write
	// conditional on its key and on from, and reports how many it gave.
	TransferNights(ctx context.Context, s Stay, from, to string, at time.Time) (int, error)
	// NightOwner returns who holds a night ("" when free).
	NightOwner(ctx context.Context, account string, pid int64, date string) (string, error)
	// DeleteNight removes one night.
	DeleteNight(ctx context.Context, account string, pid int64, date string) error
	// NightOwners returns who holds each held night of property pid from first to last
	// (dates, both included), by date.
	NightOwners(ctx context.Context, account string, pid int64, first, last string) (map[string]string, error)
	// InsertOp records op; ErrBusy if its owner has one of the same kind (Op.Publish).
	InsertOp(ctx context.Context, op Op) error
	// Op returns the op of owner (its publish op if publish), nil when there is none.
	Op(ctx context.Context, account, owner string, publish bool) (*Op, error)
	// OpsBefore lists the ops begun before t.
	OpsBefore(ctx context.Context, t time.Time) ([]Op, error)
	// DeleteOp removes the op of owner (its publish op if publish).
	DeleteOp(ctx context.Context, account, owner string, publish bool) error
	// OpKey names owner's op for Release.
	OpKey(account, owner string, publish bool) string
	Releaser
}

// A Releaser removes published publish ops by key, all in one go (the outbox relay's
// outbox.Releaser).
type Releaser interface {
	Release(ctx context.Context, keys []string) error
}

// NightKey is the key of a night: account, property and date.
func NightKey(account string, pid int64, date string) string {
	return account + ":" + strconv.FormatInt(pid, 10) + ":" + date
}

// Ledger claims and releases nights.
type Ledger struct {
	store Store
	// Now is the ledger's clock; tests move it forward.
	Now func() time.Time
	// Published, when set, makes sure the change of owner is published, before a repair
	// ends owner's publish op (the op stood for the event): booking-svc records an outbox
	// intent for the booking. An error leaves the op for the next repair.
	Published func(ctx context.Context, account, owner string) error
	// claimed and conflicts count nights claimed and claims refused (Instrument; nil: none).
	claimed, conflicts metric.Int64Counter
}

// New returns the ledger kept in st.
func New(st Store) *Ledger { return &Ledger{store: st, Now: time.Now} }

// Instrument counts, in meter, the nights claimed (vros.ledger.nights_claimed: bookings' and
// blocks' alike) and the claims refused because a night is held (vros.ledger.conflicts:
// interface B's status 8). Call it once, before the ledger is used; a nil meter counts
// nothing.
func (l *Ledger) Instrument(meter metric.Meter) {
	if meter == nil {
		return
	}
	l.claimed, _ = meter.Int64Counter("vros.ledger.nights_claimed", metric.WithUnit("{night}"),
		metric.WithDescription("Nights claimed in the ledger by bookings and blocks."))
	l.conflicts, _ = meter.Int64Counter("vros.ledger.conflicts", metric.WithUnit("{claim}"),
		metric.WithDescription("Claims refused because one of their nights is held by another booking or block."))
	for _, c := range []metric.Int64Counter{l.claimed, l.conflicts} { // exported at 0 from the start
		if c != nil {
			c.Add(context.Background(), 0)
		}
	}
}

// Begin records op. One owner has at most one op at a time: a second concurrent change of
// the same booking gets ErrBusy. The deadline of ctx is recorded with it (RepairOwner).
func (l *Ledger) Begin(ctx context.Context, op Op) error {
	op.At = l.Now().UTC()
	op.Deadline = time.Time{}
	if dl, ok := ctx.Deadline(); ok {
		op.Deadline = dl.UTC()
	}
	return l.store.InsertOp(ctx, op)
}

// Claim gives owner every night of s, or none: on a night held by anyone else it removes
// what it inserted and returns a TakenError naming that night.
func (l *Ledger) Claim(ctx context.Context, s Stay, owner string) error {
	if len(s.Dates) == 0 {
		return nil
	}
	inserted, err := l.store.InsertNights(ctx, s, owner, l.Now().UTC())
	if err == nil {
		if l.claimed != nil {
			l.claimed.Add(ctx, int64(len(s.Dates)))
		}
		return nil
	}
	taken := errors.Is(err, ErrTaken) && inserted < len(s.Dates)
	if taken && l.conflicts != nil {
		l.conflicts.Add(ctx, 1)
	}
	undo := Stay{Account: s.Account, PropertyID: s.PropertyID, Dates: s.Dates[:inserted]}
	if rerr := l.store.DeleteNights(ctx, undo); rerr != nil {
		return errors.Join(err, rerr) // the op stays; the janitor finishes the release
	}
	if taken {
		return &TakenError{Date: s.Dates[inserted]}
	}
	return fmt.Errorf("claim nights: %w", err)
}

// Release frees the nights of s that owner holds. A night another owner holds now is left
// alone: a release can never free a night it does not own, whatever a stale read of the
// caller's document said. Each night is read, then deleted: a night owner holds cannot
// change hands in between, because only its owner (or the janitor, for an owner that is no
// longer running) ever deletes it.
func (l *Ledger) Release(ctx context.Context, s Stay, owner string) error {
	for _, d := range s.Dates {
		o, err := l.store.NightOwner(ctx, s.Account, s.PropertyID, d)
		if err != nil {
			return fmt.Errorf("release night %s: %w", d, err)
		}
		if o != owner {
			continue
		}
		if err := l.store.DeleteNight(ctx, s.Account, s.PropertyID, d); err != nil {
			return fmt.Errorf("release night %s: %w", d, err)
		}
	}
	return nil
}

// Transfer passes the nights of s that owner from holds to owner to, so that they are never
// free in between (a release then a claim would let anyone take them for a moment): each
// night changes owner only if from still holds it, by a write conditional on the night's key
// and on from. It returns the nights of s that to does not hold afterwards (another owner's,
// or free). Only the writer of both owners may transfer (the iCal sync of one feed, under the
// feed's lease, between two of its blocks): to's op records the nights as claimed and from's
// document no longer lists them, so that whatever step a stop interrupts, a repair releases
// them (to's document does not list them yet) or leaves them with to (it does).
func (l *Ledger) Transfer(ctx context.Context, s Stay, from, to string) ([]string, error) {
	if len(s.Dates) == 0 {
		return nil, nil
	}
	n, err := l.store.TransferNights(ctx, s, from, to, l.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("transfer nights: %w", err)
	}
	if n == len(s.Dates) {
		return nil, nil
	}
	var missing []string
	for _, d := range s.Dates {
		o, err := l.store.NightOwner(ctx, s.Account, s.PropertyID, d)
		if err != nil {
			return nil, fmt.Errorf("transfer night %s: %w", d, err)
		}
		if o != to {
			missing = append(missing, d)
		}
	}
	return missing, nil
}

// End removes the op of owner: the change is complete.
func (l *Ledger) End(ctx context.Context, account, owner string) error {
	return l.store.DeleteOp(ctx, account, owner, false)
}

// EndPublish removes the publish op of owner: for a change that stopped before it wrote
// anything to publish (a create whose nights were taken).
func (l *Ledger) EndPublish(ctx context.Context, account, owner string) error {
	return l.store.DeleteOp(ctx, account, owner, true)
}

// OnPublish sets Published.
func (l *Ledger) OnPublish(f func(ctx context.Context, account, owner string) error) { l.Published = f }

// Handoff is what the outbox relay releases once owner's change is published: the releaser
// and the key of owner's publish op.
func (l *Ledger) Handoff(account, owner string) (Releaser, string) {
	return l.store, l.store.OpKey(account, owner, true)
}

// Owner returns who holds a night ("" when free).
func (l *Ledger) Owner(ctx context.Context, account string, pid int64, date string) (string, error) {
	return l.store.NightOwner(ctx, account, pid, date)
}

// Owners returns who holds each held night of property pid from first to last (both
// included), by date; a free night is absent.
func (l *Ledger) Owners(ctx context.Context, account string, pid int64, first, last string) (map[string]string, error) {
	return l.store.NightOwners(ctx, account, pid, first, last)
}

// Current tells the janitor which nights an owner should hold now, from its own document
// (the booking or block); a failed or cancelled one holds none.
type Current func(ctx context.Context, account, owner string) ([]Stay, error)

// Repair finishes the ops older than lease: every night an op touched that its owner holds
// but should not (per current) is released. Nights an owner should hold are never touched:
// a change claims its new nights before it changes its document and releases old ones only
// after, so whatever step a crash interrupted, the document's nights are held.
func (l *Ledger) Repair(ctx context.Context, lease time.Duration, current Current) (int, error) {
	ops, err := l.store.OpsBefore(ctx, l.Now().UTC().Add(-lease))
	if err != nil {
		return 0, fmt.Errorf("list ops: %w", err)
	}
	repaired := 0
	for _, listed := range ops {
		// Read again: the op may have ended, and a new change of the same owner begun, since
		// the list was read; that one is not ours to repair.
		op, err := l.store.Op(ctx, listed.Account, listed.Owner, listed.Publish)
		if err != nil {
			return repaired, err
		}
		if op == nil || !op.At.Equal(listed.At) {
			continue
		}
		if err := l.repair(ctx, *op, current); err != nil {
			return repaired, err
		}
		repaired++
	}
	return repaired, nil
}

// RepairOwner repairs the op of owner now if its writer has stopped: its request deadline
// passed more than margin ago (an op without a deadline: it is older than lease). It
// reports whether there was an op to repair, and ErrBusy if the op's writer may still be
// running. The idempotency of a retried request uses it to settle what the first attempt
// left before running again.
func (l *Ledger) RepairOwner(ctx context.Context, account, owner string, margin, lease time.Duration, current Current) (bool, error) {
	repaired := false
	for _, publish := range []bool{false, true} {
		op, err := l.store.Op(ctx, account, owner, publish)
		if err != nil {
			return repaired, err
		}
		if op == nil {
			continue
		}
		now := l.Now()
		stopped := now.After(op.Deadline.Add(margin))
		if op.Deadline.IsZero() {
			stopped = now.After(op.At.Add(lease))
		}
		if !stopped {
			return repaired, ErrBusy
		}
		if err := l.repair(ctx, *op, current); err != nil {
			return repaired, err
		}
		repaired = true
	}
	return repaired, nil
}

// RepairStopped repairs the op of owner now, for a caller that knows its writer has stopped
// (the iCal sync that took over a feed whose earlier sync returned or whose lease expired).
// It reports whether there was an op.
func (l *Ledger) RepairStopped(ctx context.Context, account, owner string, current Current) (bool, error) {
	op, err := l.store.Op(ctx, account, owner, false)
	if err != nil || op == nil {
		return false, err
	}
	return true, l.repair(ctx, *op, current)
}

// repair releases what op touched that its owner should not hold, then removes the op.
func (l *Ledger) repair(ctx context.Context, op Op, current Current) error {
	id := op.Account + ":" + op.Owner
	keep, err := current(ctx, op.Account, op.Owner)
	if err != nil {
		return fmt.Errorf("repair %s: %w", id, err)
	}
	held := map[string]bool{}
	for _, s := range keep {
		for _, date := range s.Dates {
			held[NightKey(op.Account, s.PropertyID, date)] = true
		}
	}
	for _, s := range op.Stays() {
		var drop []string
		for _, date := range s.Dates {
			if !held[NightKey(op.Account, s.PropertyID, date)] {
				drop = append(drop, date)
			}
		}
		// Only the owner's nights: one may have been freed and claimed by someone else since.
		if err := l.Release(ctx, Stay{Account: op.Account, PropertyID: s.PropertyID, Dates: drop}, op.Owner); err != nil {
			return fmt.Errorf("repair %s: %w", id, err)
		}
	}
	if op.Publish && l.Published != nil {
		if err := l.Published(ctx, op.Account, op.Owner); err != nil {
			return fmt.Errorf("repair %s: publish: %w", id, err)
		}
	}
	// Remove this op, not one begun since by a new change of the owner.
	now, err := l.store.Op(ctx, op.Account, op.Owner, op.Publish)
	if err != nil || now == nil || !now.At.Equal(op.At) {
		return err
	}
	return l.store.DeleteOp(ctx, op.Account, op.Owner, op.Publish)
}
