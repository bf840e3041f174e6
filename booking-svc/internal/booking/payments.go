package booking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/cardpay"
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
func (s *Service) booked(ctx context.Context, account string, id int64) (Booking, error) {
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, ErrNotFound) || (err == nil && b.Status != StatusReserved && b.Status != StatusCancelled) {
		return b, ErrNoBooking
	}
	return b, err
}

func (s *Service) payment(b Booking, id int64, in PaymentInput) (Payment, error) {
	cur := b.Quote.Currency
	if in.Currency != "" && in.Currency != cur {
		return Payment{}, &FieldError{Field: "currency", Message: "must be " + cur + ", the booking's currency"}
	}
	at := s.store.Now()
	if in.Time != nil {
		at = in.Time.UTC()
	}
	return Payment{PaymentID: id, Amount: in.Amount.StringFixed(2), Currency: cur, Description: in.Description, Time: at,
		Method: MethodManual, CreatedAt: s.store.Now()}, nil
}

// AddPayment records a payment on a booking and returns its id. It is counted as a payment
// of gateway manual: a success, or an error when it could not be stored (a refused request,
// no booking or another currency, is no payment).
func (s *Service) AddPayment(ctx context.Context, account string, bookingID int64, in PaymentInput) (id int64, err error) {
	defer func() {
		var fe *FieldError
		switch {
		case err == nil:
			s.payments.Count(ctx, cardpay.NameManual, cardpay.OutcomeSuccess)
		case !errors.Is(err, ErrNoBooking) && !errors.As(err, &fe):
			s.payments.Count(ctx, cardpay.NameManual, cardpay.OutcomeError)
		}
	}()
	b, err := s.booked(ctx, account, bookingID)
	if err != nil {
		return 0, err
	}
	id = in.ID
	if id == 0 {
		if id, err = s.store.NextPaymentID(ctx); err != nil {
			return 0, err
		}
	}
	p, err := s.payment(b, id, in)
	if err != nil {
		return 0, err
	}
	if err := s.store.IndexPayment(ctx, account, id, bookingID); err != nil {
		return 0, fmt.Errorf("index payment %d: %w", id, err)
	}
	_, err = s.store.Update(ctx, account, bookingID, Updated, func(b *Booking) error {
		addPayment(b, &p)
		return nil
	})
	return id, err
}

// paymentBooking finds the booking holding payment id.
func (s *Service) paymentBooking(ctx context.Context, account string, id int64) (Booking, Payment, error) {
	bid, err := s.store.PaymentBooking(ctx, account, id)
	if err != nil {
		return Booking{}, Payment{}, err // ErrNotFound too
	}
	b, err := s.store.Booking(ctx, account, bid)
	if err != nil {
		return b, Payment{}, err
	}
	p, ok := b.Payments[id]
	if !ok {
		return b, p, ErrNotFound
	}
	return b, p, nil
}

// manual returns the recorded payment id of b that may change: gateway charges happened.
func manual(b *Booking, id int64, refusal string) (Payment, error) {
	p, ok := b.Payments[id]
	switch {
	case !ok:
		return p, ErrNotFound
	case p.Kind == KindRefund:
		return p, &FieldError{Field: "paymentId", Message: "is a refund recorded by the booking's cancellation and cannot be changed or removed"}
	case p.Method != MethodManual:
		return p, &FieldError{Field: "paymentId", Message: refusal}
	}
	return p, nil
}

// UpdatePayment changes a recorded payment. Card charges made by the gateway cannot be
// changed: they happened.
func (s *Service) UpdatePayment(ctx context.Context, account string, id int64, in PaymentInput) error {
	const refusal = "is a card charge made through the gateway and cannot be changed; record a refund instead"
	b, _, err := s.paymentBooking(ctx, account, id)
	if err != nil {
		return err
	}
	if _, err := manual(&b, id, refusal); err != nil {
		return err
	}
	p, err := s.payment(b, id, in)
	if err != nil {
		return err
	}
	_, err = s.store.Update(ctx, account, b.BookingID, Updated, func(b *Booking) error {
		old, err := manual(b, id, refusal)
		if err != nil {
			return err
		}
		p.CreatedAt = old.CreatedAt
		b.Payments[id] = p
		return nil
	})
	return err
}

// RemovePayment deletes a recorded payment.
func (s *Service) RemovePayment(ctx context.Context, account string, id int64) error {
	const refusal = "is a card charge made through the gateway and cannot be removed"
	b, _, err := s.paymentBooking(ctx, account, id)
	if err != nil {
		return err
	}
	if _, err := manual(&b, id, refusal); err != nil {
		return err
	}
	_, err = s.store.Update(ctx, account, b.BookingID, Updated, func(b *Booking) error {
		if _, err := manual(b, id, refusal); err != nil {
			return err
		}
		delete(b.Payments, id)
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.store.UnindexPayment(ctx, account, id); err != nil {
		return fmt.Errorf("unindex payment %d: %w", id, err)
	}
	return nil
}

// SetArrival lays an arrival form over the booking's (B5): the fields it sent replace the
// stored ones, its guest list the stored list.
func (s *Service) SetArrival(ctx context.Context, account string, bookingID int64, form arrival.Form) error {
	if _, err := s.booked(ctx, account, bookingID); err != nil {
		return err
	}
	_, err := s.store.Update(ctx, account, bookingID, Updated, func(b *Booking) error {
		var a arrival.Arrival
		if b.Arrival != nil {
			a = *b.Arrival
		}
		next := form.Apply(a)
		b.Arrival = &next
		return nil
	})
	return err
}

// List pages through the account's bookings.
func (s *Service) List(ctx context.Context, account string, f ListFilter) ([]Booking, int64, error) {
	return s.store.List(ctx, account, f)
}

// Booking returns a booking of account (reserved or cancelled).
func (s *Service) Booking(ctx context.Context, account string, id int64) (Booking, error) {
	return s.booked(ctx, account, id)
}
