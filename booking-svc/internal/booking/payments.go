package booking

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/store"
)

// PaymentInput records a payment received for a booking (B3).
type PaymentInput struct {
	Amount      decimal.Decimal
	Description string
	Time        *time.Time // nil: now
	Currency    string     // "": the booking's
	// ID is the payment id, reserved beforehand (NewPaymentID) by a request that may be
	// retried; 0 allocates one.
	ID int64
}

// NewPaymentID allocates a payment id.
func (s *Service) NewPaymentID(ctx context.Context) (int64, error) { return s.store.NextPaymentID(ctx) }

// booked returns a booking that payments may be recorded on (reserved or cancelled: refunds
// and cancellation fees are recorded after a cancellation too).
func (s *Service) booked(ctx context.Context, account string, id int64) (store.BookingRec, error) {
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && b.Status != store.StatusReserved && b.Status != store.StatusCancelled) {
		return b, ErrNoBooking
	}
	return b, err
}

func (s *Service) paymentRec(b store.BookingRec, id int64, in PaymentInput) (store.PaymentRec, error) {
	cur := b.Quote.Currency
	if in.Currency != "" && in.Currency != cur {
		return store.PaymentRec{}, &FieldError{Field: "currency", Message: "must be " + cur + ", the booking's currency"}
	}
	at := s.store.Now()
	if in.Time != nil {
		at = in.Time.UTC()
	}
	return store.PaymentRec{PaymentID: id, Amount: in.Amount.StringFixed(2), Currency: cur, Description: in.Description, Time: at,
		Method: "manual", CreatedAt: s.store.Now()}, nil
}

// AddPayment records a payment on a booking and returns its id.
func (s *Service) AddPayment(ctx context.Context, account string, bookingID int64, in PaymentInput) (int64, error) {
	b, err := s.booked(ctx, account, bookingID)
	if err != nil {
		return 0, err
	}
	id := in.ID
	if id == 0 {
		if id, err = s.store.NextPaymentID(ctx); err != nil {
			return 0, err
		}
	}
	rec, err := s.paymentRec(b, id, in)
	if err != nil {
		return 0, err
	}
	if err := s.store.IndexPayment(ctx, account, id, bookingID); err != nil {
		return 0, err
	}
	_, err = s.store.UpdateBooking(ctx, account, bookingID, store.BookingUpdated, bson.D{{Key: "payments." + strconv.FormatInt(id, 10), Value: rec}})
	return id, err
}

// paymentBooking finds the booking holding payment id.
func (s *Service) paymentBooking(ctx context.Context, account string, id int64) (store.BookingRec, store.PaymentRec, error) {
	bid, err := s.store.PaymentBooking(ctx, account, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.BookingRec{}, store.PaymentRec{}, ErrNotFound
	}
	if err != nil {
		return store.BookingRec{}, store.PaymentRec{}, err
	}
	b, err := s.store.Booking(ctx, account, bid)
	if err != nil {
		return b, store.PaymentRec{}, err
	}
	p, ok := b.Payments[strconv.FormatInt(id, 10)]
	if !ok {
		return b, p, ErrNotFound
	}
	return b, p, nil
}

// UpdatePayment changes a recorded payment. Card charges made by the gateway cannot be
// changed: they happened.
func (s *Service) UpdatePayment(ctx context.Context, account string, id int64, in PaymentInput) error {
	b, old, err := s.paymentBooking(ctx, account, id)
	if err != nil {
		return err
	}
	if old.Method != "manual" {
		return &FieldError{Field: "paymentId", Message: "is a card charge made through the gateway and cannot be changed; record a refund instead"}
	}
	rec, err := s.paymentRec(b, id, in)
	if err != nil {
		return err
	}
	rec.CreatedAt = old.CreatedAt
	_, err = s.store.UpdateBooking(ctx, account, b.BookingID, store.BookingUpdated, bson.D{{Key: "payments." + strconv.FormatInt(id, 10), Value: rec}})
	return err
}

// RemovePayment deletes a recorded payment.
func (s *Service) RemovePayment(ctx context.Context, account string, id int64) error {
	b, old, err := s.paymentBooking(ctx, account, id)
	if err != nil {
		return err
	}
	if old.Method != "manual" {
		return &FieldError{Field: "paymentId", Message: "is a card charge made through the gateway and cannot be removed"}
	}
	if _, err := s.store.UpdateBooking(ctx, account, b.BookingID, store.BookingUpdated, bson.D{}, "payments."+strconv.FormatInt(id, 10)); err != nil {
		return err
	}
	return s.store.UnindexPayment(ctx, account, id)
}

// SetArrival applies an arrival form to a booking.
func (s *Service) SetArrival(ctx context.Context, account string, bookingID int64, apply func(*store.ArrivalRec)) error {
	b, err := s.booked(ctx, account, bookingID)
	if err != nil {
		return err
	}
	a := store.ArrivalRec{Guests: []store.ArrivalGuest{}}
	if b.Arrival != nil {
		a = *b.Arrival
	}
	apply(&a)
	_, err = s.store.UpdateBooking(ctx, account, bookingID, store.BookingUpdated, bson.D{{Key: "arrival", Value: a}})
	return err
}

// List pages through the account's bookings.
func (s *Service) List(ctx context.Context, account string, f store.ListFilter) ([]store.BookingRec, int64, error) {
	return s.store.List(ctx, account, f)
}

// Booking returns a booking of account (reserved or cancelled).
func (s *Service) Booking(ctx context.Context, account string, id int64) (store.BookingRec, error) {
	return s.booked(ctx, account, id)
}
