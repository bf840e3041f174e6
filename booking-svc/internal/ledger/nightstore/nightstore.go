// Package nightstore keeps the availability ledger in MongoDB (database vros_booking): one
// document per held night whose `_id` is the night itself, "<accountId>:<propertyId>:<date>",
// so that MongoDB's unique `_id` lets exactly one owner insert it, and one document per
// change in progress (an op), `_id` "<accountId>:<owner>" ("…|publish" for an op that also
// stands for its change's event: ledger.Op.Publish). It satisfies ledger.Store, and
// ledger.Releaser for the outbox relay.
package nightstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/mongostore"
)

// Collections of the ledger.
const (
	CollNights = "nights"
	CollOps    = "ledger_ops"
)

// Store is the ledger's MongoDB store.
type Store struct {
	nights *mongo.Collection
	ops    *mongo.Collection
}

var _ ledger.Store = (*Store)(nil)

// New returns the store in db, creating its collections.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	if err := mongostore.Ensure(ctx, db, []string{CollNights, CollOps}, nil); err != nil {
		return nil, fmt.Errorf("ledger collections: %w", err)
	}
	return &Store{nights: db.Collection(CollNights), ops: db.Collection(CollOps)}, nil
}

type nightDoc struct {
	ID    string    `bson:"_id"`
	Owner string    `bson:"owner"`
	At    time.Time `bson:"at"`
}

// InsertNights inserts the nights of s in date order with one ordered insert, so that it
// stops at the first night another owner holds (a duplicate `_id`).
func (s *Store) InsertNights(ctx context.Context, st ledger.Stay, owner string, at time.Time) (int, error) {
	docs := make([]any, len(st.Dates))
	for i, d := range st.Dates {
		docs[i] = nightDoc{ID: ledger.NightKey(st.Account, st.PropertyID, d), Owner: owner, At: at}
	}
	_, err := s.nights.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true))
	if err == nil {
		return len(docs), nil
	}
	inserted := 0
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
		inserted = bwe.WriteErrors[0].Index
		if mongostore.IsDuplicate(err) {
			return inserted, fmt.Errorf("%w: %w", ledger.ErrTaken, err)
		}
	}
	return inserted, err
}

// DeleteNights removes the nights of st.
func (s *Store) DeleteNights(ctx context.Context, st ledger.Stay) error {
	for _, d := range st.Dates {
		if err := s.DeleteNight(ctx, st.Account, st.PropertyID, d); err != nil {
			return err
		}
	}
	return nil
}

// TransferNights gives owner to the nights of st that from holds with one update filtered
// on their keys and on from: each document is updated only if it still matches.
func (s *Store) TransferNights(ctx context.Context, st ledger.Stay, from, to string, at time.Time) (int, error) {
	keys := make([]string, len(st.Dates))
	for i, d := range st.Dates {
		keys[i] = ledger.NightKey(st.Account, st.PropertyID, d)
	}
	r, err := s.nights.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}, {Key: "owner", Value: from}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "owner", Value: to}, {Key: "at", Value: at}}}})
	if err != nil {
		return 0, fmt.Errorf("transfer nights of %s to %s: %w", from, to, err)
	}
	return int(r.MatchedCount), nil
}

// NightOwner returns who holds a night ("" when free).
func (s *Store) NightOwner(ctx context.Context, account string, pid int64, date string) (string, error) {
	var d nightDoc
	err := s.nights.FindOne(ctx, bson.D{{Key: "_id", Value: ledger.NightKey(account, pid, date)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read night %s: %w", date, err)
	}
	return d.Owner, nil
}

// NightOwners reads the held nights of property pid from first to last with one range scan
// of `_id` (a night's key ends with its date, and dates sort as text).
func (s *Store) NightOwners(ctx context.Context, account string, pid int64, first, last string) (map[string]string, error) {
	lo, hi := ledger.NightKey(account, pid, first), ledger.NightKey(account, pid, last)
	cur, err := s.nights.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: lo}, {Key: "$lte", Value: hi}}}})
	if err != nil {
		return nil, fmt.Errorf("read nights %s..%s: %w", first, last, err)
	}
	var docs []nightDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read nights %s..%s: %w", first, last, err)
	}
	prefix := len(lo) - len(first)
	out := make(map[string]string, len(docs))
	for _, d := range docs {
		out[d.ID[prefix:]] = d.Owner
	}
	return out, nil
}

// DeleteNight removes one night.
func (s *Store) DeleteNight(ctx context.Context, account string, pid int64, date string) error {
	if _, err := s.nights.DeleteOne(ctx, bson.D{{Key: "_id", Value: ledger.NightKey(account, pid, date)}}); err != nil {
		return fmt.Errorf("delete night %s: %w", date, err)
	}
	return nil
}

type opDoc struct {
	ID      string `bson:"_id"` // opKey
	Owner   string `bson:"owner"`
	Account string `bson:"account_id"`
	Publish bool   `bson:"publish,omitempty"`
	// Stays are the op's claimed and released stays alike: a repair treats them the same.
	Stays    []stayDoc `bson:"stays"`
	At       time.Time `bson:"at"`
	Deadline time.Time `bson:"deadline,omitempty"`
}

type stayDoc struct {
	PropertyID int64    `bson:"property_id"`
	Dates      []string `bson:"dates"`
}

// OpKey is the `_id` of owner's op: one plain op per owner at a time, and one publish op.
func (s *Store) OpKey(account, owner string, publish bool) string {
	if publish {
		return account + ":" + owner + "|publish"
	}
	return account + ":" + owner
}

// InsertOp records op; a second op of one owner (of the same kind) is ledger.ErrBusy.
func (s *Store) InsertOp(ctx context.Context, op ledger.Op) error {
	d := opDoc{ID: s.OpKey(op.Account, op.Owner, op.Publish), Owner: op.Owner, Account: op.Account, Publish: op.Publish, At: op.At, Deadline: op.Deadline}
	for _, st := range op.Stays() {
		d.Stays = append(d.Stays, stayDoc{PropertyID: st.PropertyID, Dates: st.Dates})
	}
	_, err := s.ops.InsertOne(ctx, d)
	if err != nil && mongostore.IsDuplicate(err) {
		return ledger.ErrBusy
	}
	if err != nil {
		return fmt.Errorf("record op %s: %w", op.Owner, err)
	}
	return nil
}

// opOf is a stored op. Its stays come back as claims: a stored op does not say which it
// claimed and which it releases, and a repair needs no more.
func opOf(d opDoc) ledger.Op {
	op := ledger.Op{Owner: d.Owner, Account: d.Account, Publish: d.Publish, At: d.At, Deadline: d.Deadline}
	for _, st := range d.Stays {
		op.Claim = append(op.Claim, ledger.Stay{Account: d.Account, PropertyID: st.PropertyID, Dates: st.Dates})
	}
	return op
}

// Op returns the op of owner (its publish op if publish), nil when there is none.
func (s *Store) Op(ctx context.Context, account, owner string, publish bool) (*ledger.Op, error) {
	var d opDoc
	err := s.ops.FindOne(ctx, bson.D{{Key: "_id", Value: s.OpKey(account, owner, publish)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read op %s: %w", owner, err)
	}
	op := opOf(d)
	return &op, nil
}

// OpsBefore lists the ops begun before t.
func (s *Store) OpsBefore(ctx context.Context, t time.Time) ([]ledger.Op, error) {
	cur, err := s.ops.Find(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: t}}}})
	if err != nil {
		return nil, err
	}
	var docs []opDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]ledger.Op, len(docs))
	for i, d := range docs {
		out[i] = opOf(d)
	}
	return out, nil
}

// DeleteOp removes the op of owner (its publish op if publish).
func (s *Store) DeleteOp(ctx context.Context, account, owner string, publish bool) error {
	if _, err := s.ops.DeleteOne(ctx, bson.D{{Key: "_id", Value: s.OpKey(account, owner, publish)}}); err != nil {
		return fmt.Errorf("end op %s: %w", owner, err)
	}
	return nil
}

// Release removes the publish ops of keys (OpKey), whose events the outbox relay published:
// one delete for all of them.
func (s *Store) Release(ctx context.Context, keys []string) error {
	if _, err := s.ops.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}); err != nil {
		return fmt.Errorf("end published ops: %w", err)
	}
	return nil
}

// EraseAccount deletes every night and op of account (an erased account: docs/booking.md,
// "Export and erasure").
func (s *Store) EraseAccount(ctx context.Context, account string) error {
	if _, err := s.nights.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
		return fmt.Errorf("erase account's nights: %w", err)
	}
	if _, err := s.ops.DeleteMany(ctx, bson.D{{Key: "account_id", Value: account}}); err != nil {
		return fmt.Errorf("erase account's ledger ops: %w", err)
	}
	return nil
}
