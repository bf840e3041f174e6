package store

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
)

// bookingLife is one booking as the store holds it after each change, in the order of the
// golden files (contract.Golden): reserved, updated (a service added), cancelled. The
// records carry what is never published (the guest, the card token, the quote's details)
// so that a leak shows up as a field the contract does not have.
func bookingLife() map[string]BookingRec {
	nights := []string{"2027-03-08", "2027-03-09", "2027-03-10"}
	rec := BookingRec{ID: "1001:5001", AccountID: "1001", BookingID: 5001, PropertyID: 17, Status: booking.StatusReserved,
		PropertyName: "Villa Aurora", UserID: 77, BrandID: 1, LeadSourceID: 2,
		Guest:   GuestRec{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone1: "+44 20 1"},
		Card:    &CardRec{Sealed: "SEALED-NEVER-PUBLISHED", Masked: "4242", Brand: "visa", Expiry: "12/29"},
		Checkin: "2027-03-08", Checkout: "2027-03-11", Nights: nights, Adults: 2, Children: 1,
		Quote: QuoteRec{Currency: "EUR", TotalRent: "300.00", TaxTotal: "30.00", ServiceTotal: "83.50", GrandTotal: "413.50",
			DamageDeposit: "300.00", Nightly: map[string]string{"2027-03-08": "100.00", "2027-03-09": "100.00", "2027-03-10": "100.00"}},
		CreatedAt: time.Date(2026, 11, 22, 2, 40, 0, 123e6, time.UTC),
		// Booked on rate plan 2 for a channel, with a custom policy as it was when booked.
		RatePlanID: 2, RatePlanName: "Early bird",
		Cancellation: &CancellationRec{Policy: "custom", Tiers: []CancellationTierRec{{DaysBefore: 60, Percent: "100"}, {DaysBefore: 30, Percent: "50.5"}}},
		Channel:      "airbnb"}
	out := map[string]BookingRec{}
	step := func(change string, at time.Time, edit func(r *BookingRec)) {
		edit(&rec)
		rec.Version++
		rec.LastChange, rec.UpdatedAt = change, at
		out[change] = rec
	}
	// Reserved with one payment: its description (free text naming the guest) and its
	// gateway charge are never published.
	step(BookingReserved, rec.CreatedAt, func(r *BookingRec) {
		r.Payments = map[string]PaymentRec{"8001": {PaymentID: 8001, Amount: "100.00", Currency: "EUR",
			Description: "first installment from Ada Lovelace", Time: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), Method: booking.MethodCard,
			ChargeID: "ch_NEVER_PUBLISHED", CreatedAt: time.Date(2026, 11, 22, 2, 40, 1, 0, time.UTC)}}
		// The damage deposit is to be held a week before arrival.
		r.Deposit = &DepositRec{Status: booking.DepositScheduled, Amount: "300.00", Currency: "EUR", DueDate: "2027-03-01"}
	})
	// Updated: a service added and the arrival form completed (its guests never published).
	step(BookingUpdated, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), func(r *BookingRec) {
		r.Quote.ServiceTotal, r.Quote.GrandTotal = "113.50", "443.50"
		r.Arrival = &ArrivalRec{ArriveBy: "plane-NEVER-PUBLISHED", IsCompleted: true, Guests: []ArrivalGuest{{Name: "Ada", Surname: "Lovelace"}}}
		// A payment recorded by the owner, and the deposit held (its authorization never
		// published).
		r.Payments = maps.Clone(r.Payments)
		r.Payments["8002"] = PaymentRec{PaymentID: 8002, Amount: "50.00", Currency: "EUR", Description: "cash NEVER_PUBLISHED",
			Time: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Method: booking.MethodManual, CreatedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
		held := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
		r.Deposit = &DepositRec{Status: booking.DepositHeld, Amount: "300.00", Currency: "EUR", DueDate: "2027-03-01", Step: 2,
			AuthorizationID: "pi_NEVER_PUBLISHED", HeldAt: &held, Reauthorizations: 1, ReleaseOn: "2027-03-18"}
		// An automatic charge the card refused (published: messaging-svc's payment.failed).
		r.AutopayError = "automatic payment did not succeed: card declined"
		r.ChargeFailures = []ChargeFailureRec{{ID: "2026-11-23-100.00", Amount: "100.00", Currency: "EUR",
			At: time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), Reason: "card declined"}}
	})
	cancelled := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	// The record keeps its nights; the event of a cancelled booking holds none.
	// Cancelled with an owner's override refunding all that was paid, most recent payment
	// first: the recorded payment's part is recorded at once (payment 8003), the card's
	// waits for a retry; the deposit is released. The reason, keys, the gateway's ids and
	// the parts' errors are never published.
	step(BookingCancelled, cancelled, func(r *BookingRec) {
		r.Status, r.CancelledAt = booking.StatusCancelled, &cancelled
		r.Payments = maps.Clone(r.Payments)
		r.Payments["8003"] = PaymentRec{PaymentID: 8003, Amount: "-50.00", Currency: "EUR", Description: "refund NEVER_PUBLISHED",
			Time: cancelled, Method: booking.MethodManual, CreatedAt: cancelled, Kind: booking.KindRefund, RefundOf: 8002}
		r.Refund = &RefundRec{Status: booking.RefundPending, Policy: "custom", Percent: "50.5", PolicyAmount: "223.97", NetPaid: "150.00",
			Amount: "150.00", Override: true, Reason: "goodwill, Ada NEVER_PUBLISHED", DecidedAt: cancelled, Parts: []RefundPartRec{
				{Of: 8002, PaymentID: 8003, Amount: "50.00", Method: booking.MethodManual, Key: "refund-1001-5001-8002-1", Status: booking.RefundSucceeded, DoneAt: &cancelled},
				{Of: 8001, PaymentID: 8004, Amount: "100.00", Method: booking.MethodCard, Key: "refund-1001-5001-8001-1", Status: booking.RefundPending,
					Attempts: 1, LastError: "NEVER_PUBLISHED", NextAttemptAt: cancelled.Add(time.Minute)}}}
		d := *r.Deposit
		d.Status, d.ReleasedAt = booking.DepositReleased, &cancelled
		r.Deposit = &d
	})
	return out
}

// blockLife is an owner's block, created then deleted, and a block imported from iCal feed
// 5 after its feed event moved (its uid is kept, never published).
func blockLife() map[string]BlockRec {
	b := BlockRec{ID: "1001:9", AccountID: "1001", BlockID: 9, PropertyID: 17, StartDate: "2027-04-01", EndDate: "2027-04-03",
		Memo: "painting", Version: 1, CreatedAt: time.Date(2026, 11, 22, 2, 45, 10, 0, time.UTC)}
	deleted := b
	deleted.Deleted, deleted.Version, deleted.UpdatedAt = true, 2, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	moved := b
	moved.StartDate, moved.EndDate, moved.Version, moved.UpdatedAt = "2027-04-02", "2027-04-05", 2, time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)
	moved.Memo, moved.FeedID, moved.UID = "Imported from Airbnb", 5, "UID-NEVER-PUBLISHED"
	return map[string]BlockRec{BlockCreated: b, BlockUpdated: moved, BlockDeleted: deleted}
}

// TestEventsMatchTheContract: what booking-svc publishes for each change of a booking or
// block is exactly the contract's golden payload of that event type, on the topic and key
// docs/events.md gives. A field renamed, dropped, added or mapped wrongly fails here.
func TestEventsMatchTheContract(t *testing.T) {
	for typ, rec := range bookingLife() {
		t.Run(typ, func(t *testing.T) {
			m, err := bookingMessage(rec)
			if err != nil {
				t.Fatal(err)
			}
			if m.Topic != events.TopicBooking || m.Key != "1001:booking:5001" {
				t.Fatalf("message: topic %q key %q", m.Topic, m.Key)
			}
			sameAsGolden(t, typ, m.Value)
		})
	}
	for typ, rec := range blockLife() {
		t.Run(typ, func(t *testing.T) {
			m, err := blockMessage(rec)
			if err != nil {
				t.Fatal(err)
			}
			if m.Topic != events.TopicBooking || m.Key != "1001:block:9" {
				t.Fatalf("message: topic %q key %q", m.Topic, m.Key)
			}
			// the event's time is the change's: the creation, then each move or the deletion.
			want := rec.CreatedAt
			if !rec.UpdatedAt.IsZero() {
				want = rec.UpdatedAt
			}
			if ce, err := events.Decode(m.Value, new(json.RawMessage)); err != nil || !ce.Time().Equal(want) {
				t.Errorf("%s: event time %v (%v), want %v", typ, ce.Time(), err, want)
			}
			sameAsGolden(t, typ, m.Value)
		})
	}
	for typ := range contracttest.Types() {
		_, isBooking := bookingLife()[typ]
		_, isBlock := blockLife()[typ]
		if !isBooking && !isBlock && (strings.HasPrefix(typ, contract.BookingTypePrefix) || strings.HasPrefix(typ, contract.BlockTypePrefix)) {
			t.Errorf("no test publishes %s", typ)
		}
	}
}

// TestEventOfABookingBeforeRatePlans: a booking stored before rate plans (no plan, name,
// policy or channel recorded) publishes none of them, which the contract reads as the
// standard plan, direct; a named policy publishes its name alone (its tiers are the
// contract's), a custom one its tiers.
func TestEventOfABookingBeforeRatePlans(t *testing.T) {
	old := bookingLife()[BookingReserved]
	old.RatePlanID, old.RatePlanName, old.Cancellation, old.Channel = 0, "", nil, ""
	m, err := bookingMessage(old)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if _, err := events.Decode(m.Value, &ev); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rate_plan_id", "rate_plan_name", "cancellation", "channel"} {
		if _, ok := ev[k]; ok {
			t.Errorf("%s published for a booking without it: %v", k, ev[k])
		}
	}
	named := bookingLife()[BookingReserved]
	named.Cancellation = &CancellationRec{Policy: "moderate", Tiers: []CancellationTierRec{{DaysBefore: 5, Percent: "100"}, {DaysBefore: 1, Percent: "50"}}}
	if m, err = bookingMessage(named); err != nil {
		t.Fatal(err)
	}
	var b contract.Booking
	if _, err := events.Decode(m.Value, &b); err != nil {
		t.Fatal(err)
	}
	if b.Cancellation == nil || b.Cancellation.Policy != "moderate" || b.Cancellation.Tiers != nil || b.RatePlanID != 2 || b.Channel != "airbnb" {
		t.Errorf("a named policy: %+v", b)
	}
}

// sameAsGolden checks that value is a CloudEvent of type typ from booking-svc whose data is
// the golden payload.
func sameAsGolden(t *testing.T, typ string, value []byte) {
	t.Helper()
	for _, secret := range []string{"ada@example.com", "Lovelace", "SEALED", "4242", "NEVER_PUBLISHED", "NEVER-PUBLISHED", "installment from"} {
		if strings.Contains(string(value), secret) {
			t.Errorf("guest data or card published (%q): %s", secret, value)
		}
	}
	diffs, err := contracttest.DiffPublished(value, typ, eventSource)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("testdata/%s.json: %s", typ, d)
	}
}

// TestEventOfACapturedDeposit: a captured deposit publishes what was captured and when,
// never the owner's reason (free text that may name the guest) nor the authorization; a
// refund's Refunded counts only the parts that succeeded, with the currency's digits.
func TestEventOfACapturedDeposit(t *testing.T) {
	rec := bookingLife()[BookingUpdated]
	at := time.Date(2027, 3, 12, 10, 0, 0, 0, time.UTC)
	d := *rec.Deposit
	d.Status, d.CapturedAmount, d.CaptureReason, d.CapturedAt = booking.DepositCaptured, "120.50", "broken vase, NEVER_PUBLISHED", &at
	rec.Deposit = &d
	rec.Quote.Currency = "JPY"
	rec.Refund = &RefundRec{Status: booking.RefundFailed, Amount: "300", Parts: []RefundPartRec{
		{Amount: "100", Status: booking.RefundSucceeded}, {Amount: "120", Status: booking.RefundSucceeded}, {Amount: "80", Status: booking.RefundFailed}}}
	m, err := bookingMessage(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(m.Value), "NEVER") {
		t.Errorf("reason or authorization published: %s", m.Value)
	}
	var b contract.Booking
	if _, err := events.Decode(m.Value, &b); err != nil {
		t.Fatal(err)
	}
	if b.Deposit == nil || b.Deposit.Status != "captured" || b.Deposit.CapturedAmount != "120.50" || b.Deposit.CapturedAt == nil || !b.Deposit.CapturedAt.Equal(at) {
		t.Errorf("deposit: %+v", b.Deposit)
	}
	if b.Refund == nil || b.Refund.Status != "failed" || b.Refund.Refunded != "220" || b.Refund.Currency != "JPY" {
		t.Errorf("refund: %+v", b.Refund)
	}
}
