// Package consumer reads ARI out's projection from Kafka: the handler events.Consume calls
// for vros.property.v1 and vros.booking.v1 in the channels' own consumer group, handing each
// message to ari.Projector (docs/channels.md, "ARI out").
package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/libs/events"
)

// Handler turns messages into ari.Events.
type Handler struct {
	Projector *ari.Projector
}

// Handle is an events.Handler. A message that can never be applied is Permanent (parked);
// any other failure is retried, holding its partition. events.Consume commits the offset
// after Handle returned nil, so after the dirty marks.
func (h *Handler) Handle(ctx context.Context, m kafka.Message) error {
	account, rest, _ := strings.Cut(string(m.Key), ":")
	e := ari.Event{Account: account, Rest: rest}
	if events.IsTombstone(m) {
		e.Tombstone = true
	} else {
		var raw json.RawMessage
		ce, err := events.Decode(m.Value, &raw)
		if err != nil {
			return events.Permanent(err)
		}
		e.Type, e.Data = ce.Type(), raw
	}
	err := h.Projector.Apply(ctx, e)
	if me := (*ari.MalformedError)(nil); errors.As(err, &me) {
		return events.Permanent(err)
	}
	return err
}
