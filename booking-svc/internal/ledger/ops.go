package ledger

import (
	"context"
	"errors"
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
}

type stayDoc struct {
	PropertyID int64    `bson:"property_id"`
	Dates      []string `bson:"dates"`
}

func opID(account, owner string) string { return account + ":" + owner }

// ErrBusy is returned when owner already has a change in progress.
var ErrBusy = errors.New("another change of this booking is in progress")

// Begin records op. One owner has at most one op at a time: a second concurrent change of
// the same booking gets ErrBusy.
func (l *Ledger) Begin(ctx context.Context, op Op) error {
	d := opDoc{ID: opID(op.Account, op.Owner), Owner: op.Owner, Account: op.Account, At: l.now().UTC()}
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
		return 0, err
	}
	var docs []opDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, err
	}
	repaired := 0
	for _, d := range docs {
		keep, err := current(ctx, d.Account, d.Owner)
		if err != nil {
			return repaired, err
		}
		held := map[string]bool{}
		for _, s := range keep {
			for _, date := range s.Dates {
				held[nightID(d.Account, s.PropertyID, date)] = true
			}
		}
		for _, s := range d.Stays {
			for _, date := range s.Dates {
				id := nightID(d.Account, s.PropertyID, date)
				if held[id] {
					continue
				}
				// Filtered on the owner too: the night may have been freed and claimed by
				// someone else since. Rare, so the scan this costs on the embedded store is
				// acceptable.
				if _, err := l.nights.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "owner", Value: d.Owner}}); err != nil {
					return repaired, err
				}
			}
		}
		if err := l.End(ctx, d.Account, d.Owner); err != nil {
			return repaired, err
		}
		repaired++
	}
	return repaired, nil
}
