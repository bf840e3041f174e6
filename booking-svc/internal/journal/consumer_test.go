package journal_test

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/journal/consumer"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

func message(t *testing.T, typ string, data any) kafka.Message {
	t.Helper()
	v, err := events.Encode("/vros/booking-svc", typ, "subject", time.Now(), data)
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Topic: events.TopicBooking, Value: v}
}

// Each booking event touches its booking (whatever the event's own data says of it); block
// events and tombstones are ignored; what cannot be applied is parked (a permanent error).
func TestBookingEventsTouchTheirBooking(t *testing.T) {
	ctx := context.Background()
	l, st, acc := newLedger(t)
	bs := &bookings{m: map[int64]booking.Booking{}}
	l.Register("booking", journal.BookingResolver(bs, nil))
	bs.put(booking.Booking{AccountID: acc, BookingID: 5, PropertyID: 1, Status: booking.StatusReserved, Checkin: "2026-06-01", Checkout: "2026-06-03",
		Quote:    booking.Quote{Currency: "EUR", TotalRent: "200.00", GrandTotal: "200.00"},
		Payments: map[int64]booking.Payment{9: {PaymentID: 9, Amount: "200.00", Currency: "EUR", Time: at("2026-05-01")}}})

	if err := consumer.ApplyBookingEvent(l)(ctx, message(t, contract.BlockCreated, contract.Block{AccountID: acc, BlockID: 5})); err != nil {
		t.Fatal(err)
	}
	if err := consumer.ApplyBookingEvent(l)(ctx, kafka.Message{Topic: events.TopicBooking, Key: []byte(acc + ":booking:5")}); err != nil {
		t.Fatal(err)
	}
	if ps := posted(t, st, acc, "booking:5"); len(ps) != 0 {
		t.Fatalf("a block event or a tombstone posted %+v", ps)
	}
	ev := contract.Booking{AccountID: acc, BookingID: 5, Status: "reserved", Version: 1}
	for range 2 { // delivered twice: posted once
		if err := consumer.ApplyBookingEvent(l)(ctx, message(t, contract.BookingReserved, ev)); err != nil {
			t.Fatal(err)
		}
	}
	es, err := st.Posted(ctx, acc, "booking:5")
	if err != nil || len(es) != 2 { // the payment's day and the check-out's
		t.Fatalf("posted %+v (%v)", es, err)
	}
	if b, _ := l.Balance(ctx, acc, journal.Query{LedgerAccount: journal.RentalIncome, Currency: "EUR"}); !b.Equal(d("-200")) {
		t.Fatalf("rental income %s", b)
	}

	for name, m := range map[string]kafka.Message{
		"not a CloudEvent":  {Topic: events.TopicBooking, Value: []byte("{")},
		"no booking named":  message(t, contract.BookingUpdated, contract.Booking{AccountID: acc}),
		"an invalid amount": message(t, contract.BookingUpdated, contract.Booking{AccountID: acc, BookingID: 6}),
	} {
		if name == "an invalid amount" {
			bs.put(booking.Booking{AccountID: acc, BookingID: 6, Status: booking.StatusReserved, Checkout: "2026-06-03",
				Quote: booking.Quote{Currency: "EUR", TotalRent: "lots"}})
		}
		if err := consumer.ApplyBookingEvent(l)(ctx, m); !events.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
}
