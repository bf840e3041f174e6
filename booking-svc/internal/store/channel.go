package store

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/mongostore"
)

// collChannelRes maps channel reservations to their bookings: `_id`
// "<account>:<connection>:<reservation id>" (booking.ChannelReservationKey), inserted once, so
// a reservation has one booking id for good, whoever inserts it first.
const collChannelRes = "channel_reservations"

// ChannelResRec is what a channel booking records of its reservation
// (booking.ChannelReservation).
type ChannelResRec struct {
	ConnectionID  int64    `bson:"connection_id"`
	ReservationID string   `bson:"reservation_id"`
	Revisions     []string `bson:"revisions"`
	Order         int64    `bson:"order"`
}

var _ booking.ChannelReservations = (*Store)(nil)

type channelResDoc struct {
	ID            string `bson:"_id"`
	AccountID     string `bson:"account_id"`
	ConnectionID  int64  `bson:"connection_id"`
	ReservationID string `bson:"reservation_id"`
	BookingID     int64  `bson:"booking_id"`
}

// ReservationBooking returns the booking id of a channel reservation.
func (s *Store) ReservationBooking(ctx context.Context, account string, connection int64, reservation string) (int64, error) {
	var d channelResDoc
	key := booking.ChannelReservationKey(account, connection, reservation)
	err := s.db.Collection(collChannelRes).FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, fmt.Errorf("channel reservation %s: %w", key, booking.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("read channel reservation %s: %w", key, err)
	}
	return d.BookingID, nil
}

// AddReservation records id as the reservation's booking unless one is, and answers the one
// recorded.
func (s *Store) AddReservation(ctx context.Context, account string, connection int64, reservation string, id int64) (int64, error) {
	key := booking.ChannelReservationKey(account, connection, reservation)
	_, err := s.db.Collection(collChannelRes).InsertOne(ctx, channelResDoc{ID: key, AccountID: account, ConnectionID: connection,
		ReservationID: reservation, BookingID: id})
	switch {
	case err == nil:
		return id, nil
	case mongostore.IsDuplicate(err):
		return s.ReservationBooking(ctx, account, connection, reservation)
	}
	return 0, fmt.Errorf("record channel reservation %s: %w", key, err)
}

// Revive rewrites failed booking b.BookingID in place as pending with b's content (its
// creation time kept). A failed attempt was never published, so nothing was: the booking's
// next write (reserved) is its first event. The caller holds the booking's ledger op.
func (s *Store) Revive(ctx context.Context, b booking.Booking) error {
	unlock := s.locks.Lock(collBookings + "/" + docID(b.AccountID, b.BookingID))
	defer unlock()
	cur, err := s.booking(ctx, b.AccountID, b.BookingID)
	if err != nil {
		return err
	}
	if cur.Status != booking.StatusFailed || cur.Version != 0 {
		return fmt.Errorf("booking %d is %s (version %d): only a failed attempt is tried again", b.BookingID, cur.Status, cur.Version)
	}
	r := recOf(b)
	r.Status, r.Version, r.CreatedAt, r.UpdatedAt = booking.StatusPending, 0, cur.CreatedAt, s.now()
	res, err := s.bookings.ReplaceOne(ctx, bson.D{{Key: "_id", Value: r.ID}}, r)
	if err != nil {
		return fmt.Errorf("revive booking %d: %w", b.BookingID, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("booking %d: %w", b.BookingID, booking.ErrNotFound)
	}
	return nil
}
