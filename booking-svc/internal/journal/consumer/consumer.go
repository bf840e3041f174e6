// Package consumer is the Kafka side of the ledger: the handler of vros.booking.v1 that
// touches the booking each booking event names, so that its entries follow it. The domain
// (package journal) never sees a Kafka message.
package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// ConsumerGroup is the group of booking-svc's replicas that post the bookings' entries:
// shared, so that each booking event is applied by one of them.
const ConsumerGroup = "booking-svc-journal"

// ApplyBookingEvent brings the entries of a booking event's booking on vros.booking.v1 up
// to date (journal.Service.Follow: they follow the booking as it is now, whatever the event
// says); block events and tombstones are ignored. A booking whose postings cannot be
// computed is parked.
func ApplyBookingEvent(s *journal.Service) events.Handler {
	return func(ctx context.Context, m kafka.Message) error { return apply(ctx, s, m) }
}

func apply(ctx context.Context, s *journal.Service, m kafka.Message) error {
	if events.IsTombstone(m) {
		return nil
	}
	var b contract.Booking
	ev, err := events.Decode(m.Value, nil)
	if err != nil {
		return events.Permanent(err)
	}
	if !strings.HasPrefix(ev.Type(), contract.BookingTypePrefix) {
		return nil
	}
	if err := ev.DataAs(&b); err != nil {
		return events.Permanent(fmt.Errorf("event data: %w", err))
	}
	if b.AccountID == "" || b.BookingID == 0 {
		return events.Permanent(fmt.Errorf("booking event %s names no booking", ev.ID()))
	}
	err = s.Follow(ctx, b.AccountID, journal.BookingSource(b.BookingID))
	if errors.Is(err, journal.ErrInvalid) || errors.Is(err, journal.ErrUnbalanced) {
		return events.Permanent(err)
	}
	return err
}
