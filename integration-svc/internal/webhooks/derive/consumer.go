package derive

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

// Consumer is the handler of the topics' messages (events.Consume).
type Consumer struct {
	// Snaps is the collection of kept snapshots, keyed by the Kafka key.
	Snaps *mongo.Collection
	// Emit records the deliveries of one message's events (all of one account).
	Emit func(ctx context.Context, evs []webhook.Event) error
	// Erased tells whether an account was erased (its later events are ignored).
	Erased func(ctx context.Context, account string) (bool, error)
	// Erase deletes what integration-svc holds of an erased account.
	Erase func(ctx context.Context, account string) error
}

// Handle derives the message's webhook events. The order loses nothing: the deliveries are
// recorded first (deterministic ids, so recording them again changes nothing), then the
// snapshot is kept, then events.Consume commits; a message read again after a stop derives
// the same deliveries.
func (c *Consumer) Handle(ctx context.Context, m kafka.Message) error {
	key := string(m.Key)
	account, _, _ := strings.Cut(key, ":")
	if account == "" {
		return events.Permanent(errBadKey)
	}
	if events.IsTombstone(m) {
		_, err := c.Snaps.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
		return err
	}
	var raw json.RawMessage
	ce, err := events.Decode(m.Value, &raw)
	if err != nil {
		return events.Permanent(err)
	}
	if ce.Type() == contract.AccountErased {
		var e contract.AccountErasure
		if err := json.Unmarshal(raw, &e); err != nil || e.AccountID == "" {
			return events.Permanent(errBadErasure)
		}
		return c.Erase(ctx, e.AccountID)
	}
	var v struct {
		Version int64 `json:"version"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return events.Permanent(err)
	}
	old, ok, err := mongostore.GetSnapshot(ctx, c.Snaps, key)
	if err != nil {
		return err
	}
	if ok && old.Version >= v.Version {
		return nil
	}
	ch := Change{Key: key, Account: account, Type: ce.Type(), At: ce.Time().UTC(), New: raw}
	if ok {
		ch.Old = []byte(old.Data)
	}
	evs, err := Events(ch)
	if err != nil {
		return events.Permanent(err)
	}
	if err := c.Emit(ctx, evs); err != nil {
		return err
	}
	keep := mongostore.KeepNewer
	if !ok {
		keep = mongostore.KeepNewerFresh // none was stored a moment ago: insert without reading again
	}
	if _, _, err = keep(ctx, c.Snaps, key, v.Version, string(raw)); err != nil {
		return err
	}
	// The account may be erased: before this message (a late one), or while it was handled
	// (its erasure event is read from another partition). Its endpoints are gone then, so
	// nothing was recorded; what was just kept must not outlive the erasure. Looked at once,
	// after the keep, not also before: the consumer is a burst's bottleneck, and a late
	// message of an erased account is rare.
	if erased, err := c.Erased(ctx, account); err != nil || !erased {
		return err
	}
	_, err = c.Snaps.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
	return err
}

type consumerError string

func (e consumerError) Error() string { return string(e) }

const (
	errBadKey     = consumerError("message key names no account")
	errBadErasure = consumerError("account erasure names no account")
)
