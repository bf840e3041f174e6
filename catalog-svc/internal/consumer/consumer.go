// Package consumer is catalog-svc's Kafka adapter: it decodes the messages of
// vros.property.v1 and vros.booking.v1 and hands them to the catalog. Like an HTTP handler it
// holds no rule of its own; libs/events.Consume commits a message only once Apply succeeded,
// and parks one the catalog can never apply.
package consumer

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events"
)

// Consumer applies the topics' messages to a catalog.
type Consumer struct {
	cat *catalog.Catalog
}

// New returns the consumer of cat.
func New(cat *catalog.Catalog) *Consumer { return &Consumer{cat: cat} }

// Apply is the events.Handler of vros.property.v1 and vros.booking.v1: a tombstone (a null
// value) forgets its key's snapshot, an event is applied by its type.
func (c *Consumer) Apply(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) {
		return c.cat.ForgetKey(ctx, string(m.Key))
	}
	var data json.RawMessage
	e, err := events.Decode(m.Value, &data)
	if err != nil {
		return events.Permanent(err)
	}
	err = c.cat.Apply(ctx, e.Type(), data)
	if errors.As(err, new(*catalog.MalformedError)) {
		return events.Permanent(err)
	}
	return err
}
