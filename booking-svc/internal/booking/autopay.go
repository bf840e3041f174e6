package booking

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/pricing"
)

// ChargeAutopay charges, for every booking with paymentAuto, what its schedule has made
// due and card charges have not yet paid, with the card kept at booking. A declined card is
// noted on the booking and not tried again until the booking changes. It returns how many
// charges were made.
func (s *Service) ChargeAutopay(ctx context.Context) (int, error) {
	bookings, err := s.store.Autopay(ctx)
	if err != nil {
		return 0, err
	}
	today := s.now().UTC().Format(time.DateOnly)
	charged := 0
	var errs []error
	for _, b := range bookings {
		if b.Card == nil || b.AutopayError != "" {
			continue
		}
		due := outstanding(b, today)
		if !due.IsPositive() {
			continue
		}
		if err := s.autopay(ctx, b, due, today); err != nil {
			errs = append(errs, err)
			continue
		}
		charged++
	}
	return charged, errors.Join(errs...)
}

// outstanding is what the schedule has made due by today, less what cards paid.
func outstanding(b store.BookingRec, today string) decimal.Decimal {
	due := decimal.Zero
	for _, in := range b.Quote.Schedule {
		if in.Label != pricing.LabelDeposit && in.Due <= today {
			amt, _ := decimal.NewFromString(in.Amount)
			due = due.Add(amt)
		}
	}
	for _, p := range b.Payments {
		if p.Method == "card" {
			amt, _ := decimal.NewFromString(p.Amount)
			due = due.Sub(amt)
		}
	}
	return due
}

func (s *Service) autopay(ctx context.Context, b store.BookingRec, due decimal.Decimal, today string) error {
	plain, err := s.box.Open(b.Card.Sealed, cardContext(b.AccountID, b.BookingID))
	if err != nil {
		return err
	}
	var st card.Stored
	if err := json.Unmarshal([]byte(plain), &st); err != nil {
		return err
	}
	// One key per booking, day and amount: a retry after a crash charges nothing twice.
	key := "booking-" + strconv.FormatInt(b.BookingID, 10) + "-auto-" + today + "-" + due.String()
	ch, err := s.charge(ctx, due.StringFixed(2), b.Quote.Currency, st.Card(), key)
	var pe *PaymentError
	if errors.As(err, &pe) {
		_, uerr := s.store.UpdateBooking(ctx, b.AccountID, b.BookingID, store.BookingUpdated,
			bson.D{{Key: "autopay_error", Value: "automatic payment did not succeed: " + pe.Reason}})
		return uerr
	}
	if err != nil {
		return err
	}
	id, err := s.store.NextPaymentID(ctx)
	if err != nil {
		return err
	}
	if err := s.store.IndexPayment(ctx, b.AccountID, id, b.BookingID); err != nil {
		return err
	}
	rec := store.PaymentRec{PaymentID: id, Amount: due.StringFixed(2), Currency: b.Quote.Currency, Description: "automatic card payment",
		Time: ch.At, Method: "card", ChargeID: ch.ID, CreatedAt: s.store.Now()}
	_, err = s.store.UpdateBooking(ctx, b.AccountID, b.BookingID, store.BookingUpdated,
		bson.D{{Key: "payments." + strconv.FormatInt(id, 10), Value: rec}})
	return err
}
