package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/messaging-svc/internal/intake"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// wireIntake builds the intake over the stores and the consumer that feeds it: one member
// of the replicas' shared group (VROS_MESSAGING_CONSUMER_GROUP) reading vros.property.v1 (the
// views, account erasure), vros.booking.v1 (each booking's messages planned) and
// vros.integration.v1 (owner.channel_conflict). An event that cannot be applied is parked in
// parked_events.
func wireIntake(w *wiring) {
	w.intake = intake.New(intake.Deps{Messages: w.messages, Suppressions: w.suppressions, Views: w.views, Snapshots: w.snapshots,
		Settings: w.settings, Templates: w.templates, Now: w.now})
	in := w.intake
	tel := w.base.Tel
	handle := func(ctx context.Context, m kafka.Message) error {
		switch m.Topic {
		case events.TopicBooking:
			return in.Booking(ctx, m)
		case events.TopicProperty:
			return in.Property(ctx, m)
		case events.TopicIntegration:
			return conflict(ctx, in, m)
		}
		return nil
	}
	w.loops = append(w.loops, func(ctx context.Context) error {
		return events.Consume(ctx, events.ConsumerOptions{
			Brokers: w.cfg.KafkaBrokers, GroupID: w.cfg.ConsumerGroup,
			Topics: []string{events.TopicProperty, events.TopicBooking, events.TopicIntegration},
			Park:   events.ParkIn(w.base.DB.Collection(events.ParkedCollection)), Log: tel.Logger, Tracer: tel.Tracer,
			Meter: tel.Meter, Propagator: tel.Propagator,
		}, handle)
	})
}

// conflict applies a vros.integration.v1 event: a channel reservation integration-svc could
// not apply is the owner's owner.channel_conflict, once per conflict id (docs/messaging.md,
// "Sources"). A tombstone (the account erased) and a resolved conflict send nothing.
func conflict(ctx context.Context, in *intake.Intake, m kafka.Message) error {
	if events.IsTombstone(m) {
		return nil
	}
	var c contract.Conflict
	e, err := events.Decode(m.Value, &c)
	if err != nil {
		return events.Permanent(err)
	}
	if e.Type() != contract.ChannelConflict || c.ResolvedAt != nil {
		return nil
	}
	if c.AccountID == "" || c.ConflictID == 0 {
		return events.Permanent(errors.New("channel conflict without identity"))
	}
	reason := c.Message
	if reason == "" {
		reason = c.Reason
	}
	if err := in.Event(ctx, c.AccountID, trigger.OwnerChannelConflict, c.BookingID, strconv.FormatInt(c.ConflictID, 10),
		map[string]string{"Channel": c.Channel, "Reason": reason}); err != nil {
		return fmt.Errorf("channel conflict %d: %w", c.ConflictID, err)
	}
	return nil
}
