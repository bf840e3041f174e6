package booking_test

import (
	"context"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// fullAtBooking is a policy whose whole grand total is due on the day of booking.
const fullAtBooking = `{"payment_type":"Full","payment_full":{"is_due_at":"Booking"}}`

// TestAutopayDeclineIsInTheSnapshot: an automatic charge the card refuses is kept on the
// booking as a charge failure (its day and amount as id, the amount, the gateway's reason),
// in the same write as the autopay error, so the booking's event carries it
// (charge_failures: messaging-svc's payment.failed); a second pass tries nothing and adds
// nothing, and a card that pays records no failure.
func TestAutopayDeclineIsInTheSnapshot(t *testing.T) {
	ctx := context.Background()
	f := newDepositFixture(t, fullAtBooking)
	declined := card.Card{Number: cardpay.CardDeclined, NameOnCard: "ADA LOVELACE", ExpMonth: 12, ExpYear: 2031, CVC: "123"}
	book := func(c card.Card, in int) booking.Booking {
		b, err := f.svc.Create(ctx, f.account, booking.NewBooking{
			Stay:           booking.Stay{PropertyID: 1, Checkin: f.today.AddDays(in), Checkout: f.today.AddDays(in + 3), Adults: 2},
			Party:          ada,
			PaymentRequest: booking.PaymentRequest{Auto: true, Card: &c}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bad, good := book(declined, 20), book(visaCard, 30)
	for range 2 {
		if _, err := f.svc.ChargeAutopay(ctx); err != nil {
			t.Fatal(err)
		}
	}

	got := f.read(t, bad.BookingID)
	total := got.Quote.GrandTotal
	want := booking.ChargeFailure{ID: depositStart.Format(time.DateOnly) + "-" + total, Amount: total, Currency: got.Quote.Currency,
		At: depositStart, Reason: cardpay.ReasonDeclined}
	if len(got.ChargeFailures) != 1 || got.ChargeFailures[0].ID != want.ID || got.ChargeFailures[0].Amount != want.Amount ||
		got.ChargeFailures[0].Currency != want.Currency || !got.ChargeFailures[0].At.Equal(want.At) || got.ChargeFailures[0].Reason != want.Reason {
		t.Fatalf("charge failures %+v, want [%+v]", got.ChargeFailures, want)
	}
	if got.AutopayError == "" || len(got.Payments) != 0 {
		t.Fatalf("autopay error %q, payments %v", got.AutopayError, got.Payments)
	}

	msgs, err := f.st.Snapshot(ctx, store.BookingAggregate(f.account, bad.BookingID))
	if err != nil || len(msgs) != 1 {
		t.Fatalf("snapshot: %d messages, %v", len(msgs), err)
	}
	var ev contract.Booking
	if _, err := events.Decode(msgs[0].Value, &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.ChargeFailures) != 1 {
		t.Fatalf("the event carries %+v", ev.ChargeFailures)
	}
	cf := ev.ChargeFailures[0]
	if cf.ID != want.ID || cf.Amount != total || cf.Currency != want.Currency || !cf.At.Equal(depositStart) || cf.Reason != cardpay.ReasonDeclined {
		t.Fatalf("the event's failure %+v, want %+v", cf, want)
	}

	paid := f.read(t, good.BookingID)
	if len(paid.ChargeFailures) != 0 || len(paid.Payments) != 1 {
		t.Fatalf("a card that pays: failures %+v, payments %v", paid.ChargeFailures, paid.Payments)
	}
}
