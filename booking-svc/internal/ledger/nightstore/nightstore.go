// Package ledger is the availability ledger that makes double booking impossible: every
// night a booking or a block holds is one document whose `_id` is the night itself,
// "<accountId>:<propertyId>:<YYYY-MM-DD>". MongoDB's unique `_id` lets exactly one owner
// insert it; everyone else gets a duplicate-key error.
//
// Nights are claimed in date order with an ordered insert, so two attempts on overlapping
// dates collide on the first night they share, and the one that got it cannot later lose
// to the other: among identical requests exactly one succeeds. A failed attempt removes the
// nights it inserted. A change records its intent (an op) first, so that the janitor can
// release what a crashed attempt left behind.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/mongostore"
)

// Collections of the ledger.
const (
	CollNights = "nights"
	CollOps    = "ledger_ops"
)

// TakenError says which night another owner holds.
type TakenError struct{ Date string }

func (e *TakenError) Error() string { return "night of " + e.Date + " is not available" }

// IsTaken reports whether err is a TakenError.
func IsTaken(err error) bool { return errors.As(err, new(*TakenError)) }

// Ledger claims and releases nights.
type Ledger struct {
	nights *mongo.Collection
	ops    *mongo.Collection
	now    func() time.Time
}

// New returns the ledger in db, creating its collections.
func New(ctx context.Context, db *mongo.Database) (*Ledger, error) {
	if err := mongostore.Ensure(ctx, db, []string{CollNights, CollOps}, nil); err != nil {
		return nil, err
	}
	return &Ledger{nights: db.Collection(CollNights), ops: db.Collection(CollOps), now: time.Now}, nil
}

// Stay is a set of nights of one property, dates as YYYY-MM-DD in ascending order.
type Stay struct {
	Account    string
	PropertyID int64
	Dates      []string
}

func nightID(account string, pid int64, date string) string {
	return account + ":" + strconv.FormatInt(pid, 10) + ":" + date
}

type nightDoc struct {
	ID    string    `bson:"_id"`
	Owner string    `bson:"owner"`
	At    time.Time `bson:"at"`
}

// Claim gives owner every night of s, or none: on a night held by anyone else it removes
// what it inserted and returns a TakenError naming that night.
func (l *Ledger) Claim(ctx context.Context, s Stay, owner string) error {
	if len(s.Dates) == 0 {
		return nil
	}
	now := l.now().UTC()
	docs := make([]any, len(s.Dates))
	for i, d := range s.Dates {
		docs[i] = nightDoc{ID: nightID(s.Account, s.PropertyID, d), Owner: owner, At: now}
	}
	_, err := l.nights.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true))
	if err == nil {
		return nil
	}
	inserted, taken := 0, -1
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
		inserted = bwe.WriteErrors[0].Index
		if mongostore.IsDuplicate(err) {
			taken = inserted
		}
	}
	undo := Stay{Account: s.Account, PropertyID: s.PropertyID, Dates: s.Dates[:inserted]}
	if rerr := l.release(ctx, undo); rerr != nil {
		return errors.Join(err, rerr) // the op stays; the janitor finishes the release
	}
	if taken >= 0 {
		return &TakenError{Date: s.Dates[taken]}
	}
	return fmt.Errorf("claim nights: %w", err)
}

// Release frees the nights of s that owner holds. A night another owner holds now is left
// alone: a release can never free a night it does not own, whatever a stale read of the
// caller's document said. Each night is read, then deleted, by `_id`: a night owner holds
// cannot change hands in between, because only its owner (or the janitor, for an owner that
// is no longer running) ever deletes it.
func (l *Ledger) Release(ctx context.Context, s Stay, owner string) error {
	for _, d := range s.Dates {
		id := nightID(s.Account, s.PropertyID, d)
		var n nightDoc
		err := l.nights.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&n)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return fmt.Errorf("release night %s: %w", d, err)
		}
		if n.Owner != owner {
			continue
		}
		if _, err := l.nights.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			return fmt.Errorf("release night %s: %w", d, err)
		}
	}
	return nil
}

// release frees nights just inserted by the caller (a claim that failed part way).
func (l *Ledger) release(ctx context.Context, s Stay) error {
	for _, d := range s.Dates {
		if _, err := l.nights.DeleteOne(ctx, bson.D{{Key: "_id", Value: nightID(s.Account, s.PropertyID, d)}}); err != nil {
			return fmt.Errorf("release night %s: %w", d, err)
		}
	}
	return nil
}

// Owner returns who holds a night ("" when free).
func (l *Ledger) Owner(ctx context.Context, account string, pid int64, date string) (string, error) {
	var d nightDoc
	err := l.nights.FindOne(ctx, bson.D{{Key: "_id", Value: nightID(account, pid, date)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return "", nil
	}
	return d.Owner, err
}
