package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// An Op is the record of a change in progress: the nights an owner is about to claim and
// those it will release once its own document says so. It is written before the first
// night is touched and removed when the change is complete.
type Op struct {
	Owner   string
	Account string
	Claim   []Stay
	Release []Stay
	At      time.Time
}

type opDoc struct {
	ID      string    `bson:"_id"` // "<account>:<owner>"
	Owner   string    `bson:"owner"`
	Account string    `bson:"account_id"`
	Stays   []stayDoc `bson:"stays"`
	At      time.Time `bson:"at"`
	// Deadline is the deadline of the change's request: past it (and a margin) its writer
	// has stopped, so the op may be repaired. Zero for an op begun without one.
	Deadline time.Time `bson:"deadline,omitempty"`
}

type stayDoc struct {
	PropertyID int64    `bson:"property_id"`
	Dates      []string `bson:"dates"`
}

func opID(account, owner string) string { return account + ":" + owner }

// ErrBusy is returned when owner already has a change in progress.
var ErrBusy = errors.New("another change of this booking is in progress")

// Begin records op. One owner has at most one op at a time: a second concurrent change of
// the same booking gets ErrBusy. The deadline of ctx is recorded with it (RepairOwner).
func (l *Ledger) Begin(ctx context.Context, op Op) error {
	d := opDoc{ID: opID(op.Account, op.Owner), Owner: op.Owner, Account: op.Account, At: l.now().UTC()}
	if dl, ok := ctx.Deadline(); ok {
		d.Deadline = dl.UTC()
	}
	for _, s := range append(append([]Stay{}, op.Claim...), op.Release...) {
		d.Stays = append(d.Stays, stayDoc{PropertyID: s.PropertyID, Dates: s.Dates})
	}
	_, err := l.ops.InsertOne(ctx, d)
	if err != nil && mongo.IsDuplicateKeyError(err) {
		return ErrBusy
	}
	return err
}

// End removes the op of owner: the change is complete.
func (l *Ledger) End(ctx context.Context, account, owner string) error {
	_, err := l.ops.DeleteOne(ctx, bson.D{{Key: "_id", Value: opID(account, owner)}})
	return err
}

// Current tells the janitor which nights an owner should hold now, from its own document
// (the booking or block); a failed or cancelled one holds none.
type Current func(ctx context.Context, account, owner string) ([]Stay, error)

// Repair finishes the ops older than lease: every night an op touched that its owner holds
// but should not (per current) is released. Nights an owner should hold are never touched:
// a change claims its new nights before it changes its document and releases old ones only
// after, so whatever step a crash interrupted, the document's nights are held.
func (l *Ledger) Repair(ctx context.Context, lease time.Duration, current Current) (int, error) {
	cur, err := l.ops.Find(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: l.now().UTC().Add(-lease)}}}})
	if err != nil {
		return 0, fmt.Errorf("list ops: %w", err)
	}
	var docs []opDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fmt.Errorf("list ops: %w", err)
	}
	repaired := 0
	for _, listed := range docs {
		// Read again: the op may have ended, and a new change of the same owner begun, since
		// the list was read; that one is not ours to repair.
		d, err := l.op(ctx, listed.Account, listed.Owner)
		if err != nil {
			return repaired, err
		}
		if d == nil || !d.At.Equal(listed.At) {
			continue
		}
		if err := l.repair(ctx, *d, current); err != nil {
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
	d, err := l.op(ctx, account, owner)
	if err != nil || d == nil {
		return false, err
	}
	now := l.now()
	stopped := now.After(d.Deadline.Add(margin))
	if d.Deadline.IsZero() {
		stopped = now.After(d.At.Add(lease))
	}
	if !stopped {
		return false, ErrBusy
	}
	return true, l.repair(ctx, *d, current)
}

func (l *Ledger) op(ctx context.Context, account, owner string) (*opDoc, error) {
	var d opDoc
	err := l.ops.FindOne(ctx, bson.D{{Key: "_id", Value: opID(account, owner)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read op %s: %w", owner, err)
	}
	return &d, nil
}

// repair releases what op d touched that its owner should not hold, then removes the op.
func (l *Ledger) repair(ctx context.Context, d opDoc, current Current) error {
	keep, err := current(ctx, d.Account, d.Owner)
	if err != nil {
		return fmt.Errorf("repair %s: %w", d.ID, err)
	}
	held := map[string]bool{}
	for _, s := range keep {
		for _, date := range s.Dates {
			held[nightID(d.Account, s.PropertyID, date)] = true
		}
	}
	for _, s := range d.Stays {
		var drop []string
		for _, date := range s.Dates {
			if !held[nightID(d.Account, s.PropertyID, date)] {
				drop = append(drop, date)
			}
		}
		// Only the owner's nights: one may have been freed and claimed by someone else since.
		if err := l.Release(ctx, Stay{Account: d.Account, PropertyID: s.PropertyID, Dates: drop}, d.Owner); err != nil {
			return fmt.Errorf("repair %s: %w", d.ID, err)
		}
	}
	// Remove this op, not one begun since by a new change of the owner.
	now, err := l.op(ctx, d.Account, d.Owner)
	if err != nil || now == nil || !now.At.Equal(d.At) {
		return err
	}
	return l.End(ctx, d.Account, d.Owner)
}
