// Package consumer is the Kafka side of the account erasure: the handler of vros.property.v1
// that reads an account's erasure event and calls erasure.Eraser.Erase, and hands every other
// message to the property view. The domain (package erasure) never sees a Kafka message.
package consumer

import (
	"context"
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/erasure"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// Handler routes the messages of vros.property.v1.
type Handler struct {
	Eraser *erasure.Eraser
	// Next handles every message that is not an erasure (the property view).
	Next events.Handler
}

// Apply is the consumer handler of vros.property.v1 (events.Handler): an account's erasure
// event erases it, every other message goes to Next.
func (h *Handler) Apply(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) || !strings.HasSuffix(string(m.Key), ":account") {
		return h.Next(ctx, m)
	}
	var d contract.AccountErasure
	ev, err := events.Decode(m.Value, &d)
	if err != nil {
		return events.Permanent(err)
	}
	if ev.Type() != contract.AccountErased {
		return h.Next(ctx, m)
	}
	if d.AccountID == "" || events.AccountKey(d.AccountID) != string(m.Key) {
		return events.Permanent(fmt.Errorf("account erasure event for %q under key %q", d.AccountID, m.Key))
	}
	return h.Eraser.Erase(ctx, d.AccountID)
}
