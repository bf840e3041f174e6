package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

const (
	collSnapshots = "booking_snapshots"
	// collPlans holds nothing: its lease collection (booking_plans_locks) holds the
	// bookings' planning leases (Planning).
	collPlans = "booking_plans"
)

// snapshotDoc is a booking_snapshots document, _id "<account>:<booking>": the last
// contract.Booking intake applied, as the event's JSON (the contract's wire shape, read back
// with the contract's own tags).
type snapshotDoc struct {
	ID        string `bson:"_id"`
	Account   string `bson:"account"`
	BookingID int64  `bson:"booking_id"`
	Version   int64  `bson:"version"`
	// Live: the booking is reserved (not cancelled), so a re-plan visits it.
	Live bool   `bson:"live"`
	Data string `bson:"data"`
}

// Snapshots keep the last booking snapshot applied per (account, booking): what the next
// event of the booking is compared with (trigger.Plan's prev), and the live bookings a
// settings change re-plans. A snapshot is written only when its version is higher than the
// stored one (conditional under its lease), so two replicas or a replay never move it back.
type Snapshots struct {
	coll, plans *mongo.Collection
}

// NewSnapshots returns the snapshots in db, creating their collection.
func NewSnapshots(ctx context.Context, db *mongo.Database) (*Snapshots, error) {
	err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(collSnapshots), collPlans+"_locks"),
		[]mongostore.Index{{Collection: collSnapshots, Keys: bson.D{{Key: "account", Value: 1}, {Key: "live", Value: 1}}}})
	if err != nil {
		return nil, err
	}
	return &Snapshots{coll: db.Collection(collSnapshots), plans: db.Collection(collPlans)}, nil
}

// Planning runs fn holding the booking's planning lease (mongostore.WithLease): intake reads
// the snapshot, plans and applies the plan, and saves the snapshot inside it, so that two
// replicas (a rebalance, a re-plan beside an event) never plan one booking from the same
// snapshot at once. The lease is not reentrant, and a holder that stopped is taken over once
// mongostore.SnapshotLease has passed.
func (s *Snapshots) Planning(ctx context.Context, account string, booking int64, fn func() error) error {
	return mongostore.WithLease(ctx, s.plans, snapshotID(account, booking), fn)
}

func snapshotID(account string, booking int64) string {
	return account + ":" + strconv.FormatInt(booking, 10)
}

// Get answers the booking's last snapshot applied (nil: none).
func (s *Snapshots) Get(ctx context.Context, account string, booking int64) (*contract.Booking, error) {
	var d snapshotDoc
	// The _id holds the account: a look-up by it is the account's alone.
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: snapshotID(account, booking)}}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("booking snapshot: %w", err)
	case d.Account != account:
		return nil, nil
	}
	b, err := snapshotOf(d)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

func snapshotOf(d snapshotDoc) (contract.Booking, error) {
	var b contract.Booking
	if err := json.Unmarshal([]byte(d.Data), &b); err != nil {
		return b, fmt.Errorf("booking snapshot %s: %w", d.ID, err)
	}
	return b, nil
}

// Save stores b as its booking's snapshot unless one of the same or a higher version is
// stored, and reports whether it wrote.
func (s *Snapshots) Save(ctx context.Context, b contract.Booking) (bool, error) {
	if b.AccountID == "" || b.BookingID == 0 {
		return false, errors.New("booking snapshot without identity")
	}
	data, err := json.Marshal(b)
	if err != nil {
		return false, fmt.Errorf("booking snapshot: %w", err)
	}
	d := snapshotDoc{ID: snapshotID(b.AccountID, b.BookingID), Account: b.AccountID, BookingID: b.BookingID,
		Version: b.Version, Live: b.Status == "reserved", Data: string(data)}
	return viewsKeepNewer(ctx, s.coll, d.ID, b.Version, d)
}

// Bookings calls fn with every live (reserved, not cancelled) booking of the account, in
// booking id order, until fn fails.
func (s *Snapshots) Bookings(ctx context.Context, account string, fn func(contract.Booking) error) error {
	cur, err := s.coll.Find(ctx, bson.D{{Key: "account", Value: account}, {Key: "live", Value: true}})
	if err != nil {
		return fmt.Errorf("live bookings: %w", err)
	}
	var docs []snapshotDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("live bookings: %w", err)
	}
	// Sorted here: the embedded store would sort the whole collection.
	slices.SortFunc(docs, func(a, b snapshotDoc) int { return cmp.Compare(a.BookingID, b.BookingID) })
	for _, d := range docs {
		b, err := snapshotOf(d)
		if err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// Delete forgets a booking's snapshot (its key's tombstone: the booking was erased).
func (s *Snapshots) Delete(ctx context.Context, account string, booking int64) error {
	_, err := s.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: snapshotID(account, booking)}, {Key: "account", Value: account}})
	if err != nil {
		return fmt.Errorf("delete booking snapshot: %w", err)
	}
	return nil
}

// Erase deletes every snapshot of the account (the account was erased).
func (s *Snapshots) Erase(ctx context.Context, account string) error {
	if _, err := s.coll.DeleteMany(ctx, bson.D{{Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("erase booking snapshots: %w", err)
	}
	return nil
}
