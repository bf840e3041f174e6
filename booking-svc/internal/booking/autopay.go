package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/vros/vros/libs/periodic"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/libs/pricing"
)

// Autopay charges the due installments of paymentAuto bookings every Interval.
type Autopay struct {
	Bookings *Service
	Interval time.Duration // 0: 10 minutes
	Log      *slog.Logger
}

// Run charges until ctx ends.
func (a Autopay) Run(ctx context.Context) error {
	interval := a.Interval
	if interval <= 0 {
		interval = 10 * time.Minute
	}
	periodic.Run(ctx, interval, func(ctx context.Context) error {
		n, err := a.Bookings.ChargeAutopay(ctx)
		if n > 0 {
			a.Log.Info("automatic payments charged", "count", n)
		}
		return err
	}, func(err error) { a.Log.Warn("automatic payments failed", "err", err) })
	return nil
}

// ChargeAutopay charges, for every booking with paymentAuto, what its schedule has made
// due and card charges have not yet paid, with the card kept at booking. A declined card is
// noted on the booking and not tried again until the booking changes. It returns how many
// charges were made.
func (s *Service) ChargeAutopay(ctx context.Context) (int, error) {
	bookings, err := s.store.Autopay(ctx)
	if err != nil {
		return 0, fmt.Errorf("list automatic payments: %w", err)
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
			errs = append(errs, fmt.Errorf("booking %d: %w", b.BookingID, err))
			continue
		}
		charged++
	}
	return charged, errors.Join(errs...)
}

// outstanding is what the schedule has made due by today, less what cards paid.
func outstanding(b Booking, today string) decimal.Decimal {
	due := decimal.Zero
	for _, in := range b.Quote.Schedule {
		if in.Label != pricing.LabelDeposit && in.Due <= today {
			amt, _ := decimal.NewFromString(in.Amount)
			due = due.Add(amt)
		}
	}
	for _, p := range b.Payments {
		if p.Method == MethodCard && p.Kind != KindDepositCapture { // a captured deposit pays no installment
			amt, _ := decimal.NewFromString(p.Amount)
			due = due.Sub(amt)
		}
	}
	return due
}

func (s *Service) autopay(ctx context.Context, b Booking, due decimal.Decimal, today string) error {
	plain, err := s.box.Open(b.Card.Sealed, cardContext(b.AccountID, b.BookingID))
	if err != nil {
		return fmt.Errorf("open card: %w", err)
	}
	var st card.Stored
	if err := json.Unmarshal([]byte(plain), &st); err != nil {
		return fmt.Errorf("read card: %w", err)
	}
	// One key per booking, day and amount: a retry after a crash charges nothing twice.
	key := "booking-" + strconv.FormatInt(b.BookingID, 10) + "-auto-" + today + "-" + due.String()
	ch, err := s.charge(ctx, b, due.StringFixed(2), st.Card(), key)
	var pe *PaymentError
	if errors.As(err, &pe) {
		// The refusal and the attempt, in the booking's one write: its event carries the
		// failure (charge_failures), so messaging-svc's payment.failed cannot miss it.
		f := ChargeFailure{ID: today + "-" + due.StringFixed(2), Amount: due.StringFixed(2), Currency: b.Quote.Currency,
			At: s.now().UTC(), Reason: pe.Reason}
		_, uerr := s.store.Update(ctx, b.AccountID, b.BookingID, Updated, func(b *Booking) error {
			b.AutopayError = "automatic payment did not succeed: " + pe.Reason
			if !slices.ContainsFunc(b.ChargeFailures, func(x ChargeFailure) bool { return x.ID == f.ID }) {
				b.ChargeFailures = append(b.ChargeFailures, f)
			}
			return nil
		})
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
		return fmt.Errorf("index payment %d: %w", id, err)
	}
	p := Payment{PaymentID: id, Amount: due.StringFixed(2), Currency: b.Quote.Currency, Description: "automatic card payment",
		Time: ch.At, Method: MethodCard, ChargeID: ch.ID, CreatedAt: s.store.Now()}
	_, err = s.store.Update(ctx, b.AccountID, b.BookingID, Updated, func(b *Booking) error {
		addPayment(b, &p)
		return nil
	})
	return err
}
