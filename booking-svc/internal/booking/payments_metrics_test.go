package booking_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestRecordedPaymentsCounted: a payment the owner records (addbookingpayment) counts in
// vros_payments_total{gateway="manual",outcome="success"}; one refused for its booking is no
// payment and is not counted.
func TestRecordedPaymentsCounted(t *testing.T) {
	f := newFixture(t)
	metrics := telemetrytest.NewMetrics(t)
	box, _ := seal.New(seal.NewKey())
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: cardpay.NewTest(time.Now), Box: box, Payments: cardpay.NewPayments(metrics.Meter())})
	ctx := context.Background()
	f.reserve(t, "pm", 31, 1, []string{"2027-05-10"})
	if _, err := svc.AddPayment(ctx, "pm", 31, booking.PaymentInput{Amount: decimal.RequireFromString("100")}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPayment(ctx, "pm", 32, booking.PaymentInput{Amount: decimal.RequireFromString("100")}); !errors.Is(err, booking.ErrNoBooking) {
		t.Fatalf("a payment on no booking: %v, want ErrNoBooking", err)
	}
	if v := metrics.Value(t, "vros_payments_total", "gateway", "manual", "outcome", "success"); v != 1 {
		t.Errorf("manual successes = %v, want 1", v)
	}
	if v := metrics.Value(t, "vros_payments_total"); v != 1 {
		t.Errorf("vros_payments_total = %v in all, want 1 (the refused one is no payment)", v)
	}
}
