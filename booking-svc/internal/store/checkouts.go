package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/mongostore"
)

// The booking engine's checkouts (booking.Checkouts). A checkout id names a booking of an
// account: `checkouts` keeps one small document per checkout, `_id` the checkout id, read by
// that `_id` alone (FerretDB pushes down only a lone `_id` equality, docs/booking.md "Listing
// bookings"). `checkout_holds` keeps the same for the checkouts still held, so that the
// janitor's expiry reads that small collection, never the bookings.
const (
	collCheckouts = "checkouts"
	collHolds     = "checkout_holds"
)

var _ booking.Checkouts = (*Store)(nil)

type holdRec struct {
	ID        string    `bson:"_id"`
	AccountID string    `bson:"account_id"`
	BookingID int64     `bson:"booking_id"`
	ExpiresAt time.Time `bson:"expires_at"`
}

func (r holdRec) hold() booking.Hold {
	return booking.Hold{ID: r.ID, AccountID: r.AccountID, BookingID: r.BookingID, ExpiresAt: r.ExpiresAt}
}

// PutCheckout records checkout h: its name, then its hold. Recording it again is no error.
func (s *Store) PutCheckout(ctx context.Context, h booking.Hold) error {
	r := holdRec{ID: h.ID, AccountID: h.AccountID, BookingID: h.BookingID, ExpiresAt: h.ExpiresAt.UTC()}
	for _, coll := range []string{collCheckouts, collHolds} {
		if _, err := s.db.Collection(coll).InsertOne(ctx, r); err != nil && !mongostore.IsDuplicate(err) {
			return fmt.Errorf("record checkout %s: %w", h.ID, err)
		}
	}
	return nil
}

// CheckoutHold returns the record of checkout id, held or not.
func (s *Store) CheckoutHold(ctx context.Context, id string) (booking.Hold, error) {
	var r holdRec
	err := s.db.Collection(collCheckouts).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return booking.Hold{}, fmt.Errorf("checkout %s: %w", id, booking.ErrNotFound)
	}
	if err != nil {
		return booking.Hold{}, fmt.Errorf("read checkout %s: %w", id, err)
	}
	return r.hold(), nil
}

// Holds lists the checkouts still recorded as held whose window ended by before.
func (s *Store) Holds(ctx context.Context, before time.Time) ([]booking.Hold, error) {
	cur, err := s.db.Collection(collHolds).Find(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lte", Value: before.UTC()}}}},
		options.Find().SetLimit(1000))
	if err != nil {
		return nil, fmt.Errorf("list held checkouts: %w", err)
	}
	var recs []holdRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("list held checkouts: %w", err)
	}
	out := make([]booking.Hold, len(recs))
	for i, r := range recs {
		out[i] = r.hold()
	}
	return out, nil
}

// DropHold forgets that checkout id is held.
func (s *Store) DropHold(ctx context.Context, id string) error {
	if _, err := s.db.Collection(collHolds).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return fmt.Errorf("drop hold of checkout %s: %w", id, err)
	}
	return nil
}

// Unpublished changes a booking that was never published (pending or held) in place: the
// fields apply changed, without a new version, a list entry or an event. This process's
// writes of the booking wait for each other; other replicas' changes of a checkout hold its
// ledger op.
func (s *Store) Unpublished(ctx context.Context, account string, id int64, apply func(*booking.Booking) error) (booking.Booking, error) {
	unlock := s.locks.Lock(collBookings + "/" + docID(account, id))
	b, err := s.unpublished(ctx, account, id, apply)
	unlock()
	return b, err
}

func (s *Store) unpublished(ctx context.Context, account string, id int64, apply func(*booking.Booking) error) (booking.Booking, error) {
	cur, err := s.booking(ctx, account, id)
	if err != nil {
		return booking.Booking{}, err
	}
	if cur.Status != booking.StatusPending && cur.Status != booking.StatusHeld {
		return bookingOf(cur), fmt.Errorf("booking %d is %s: only a booking never published changes in place", id, cur.Status)
	}
	b := bookingOf(cur)
	if err := apply(&b); err != nil {
		return bookingOf(cur), err
	}
	set, unset := changes(recOf(bookingOf(cur)), recOf(b))
	if len(set) == 0 && len(unset) == 0 {
		return b, nil
	}
	b.UpdatedAt = s.now()
	upd := bson.D{{Key: "$set", Value: append(set, bson.E{Key: "updated_at", Value: b.UpdatedAt})}}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	if _, err := s.bookings.UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}, upd); err != nil {
		return bookingOf(cur), fmt.Errorf("update booking %d: %w", id, err)
	}
	return b, nil
}

// EndCheckout ends held booking id, which never became a booking, as MarkFailed does
// (noted for the purge, failed, unpublished), with the checkout's outcome.
func (s *Store) EndCheckout(ctx context.Context, account string, id int64, outcome string) error {
	if _, err := s.failed.InsertOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}, {Key: "account_id", Value: account},
		{Key: "booking_id", Value: id}, {Key: "at", Value: s.now()}}); err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("note ended checkout %d: %w", id, err)
	}
	_, err := s.Unpublished(ctx, account, id, func(b *booking.Booking) error {
		if b.Status != booking.StatusHeld || b.Engine == nil {
			return fmt.Errorf("booking %d is %s, not a held checkout", id, b.Status)
		}
		b.Status, b.Card = booking.StatusFailed, nil
		b.Engine.Outcome = outcome
		return nil
	})
	return err
}

// forgetCheckout deletes the records of checkout id (a purged attempt's).
func (s *Store) forgetCheckout(ctx context.Context, id string) error {
	for _, coll := range []string{collHolds, collCheckouts} {
		if _, err := s.db.Collection(coll).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			return fmt.Errorf("forget checkout %s: %w", id, err)
		}
	}
	return nil
}
