package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/outbox"
)

// eventSource is the CloudEvents source of integration-svc's events.
const eventSource = "/vros/integration-svc"

// conflictInfix separates the account from the conflict id in a conflict's aggregate.
const conflictInfix = ":conflict:"

// ConflictAggregate is a conflict's outbox aggregate and Kafka key on vros.integration.v1,
// `<accountId>:conflict:<conflictId>` (docs/events.md).
func ConflictAggregate(account string, id int64) string {
	return account + conflictInfix + strconv.FormatInt(id, 10)
}

// Attach publishes each conflict's event (contract.ChannelConflict) through ob: Record,
// Resolve and the account's erasure record an intent before their write and hand it to the
// relay after, so that the event reaches Kafka even when Kafka is down at the time (the
// intent waits in MongoDB). Without it (tests of other parts) nothing is published. Call it
// before the store is used; ob's loader is c.Snapshot.
func (c *Conflicts) Attach(ob *outbox.Outbox) { c.ob = ob }

// begin records the intent to change a conflict's aggregate (none without an outbox).
func (c *Conflicts) begin(ctx context.Context, account string, id int64) (*outbox.Intent, error) {
	if c.ob == nil {
		return nil, nil
	}
	in, err := c.ob.Begin(ctx, ConflictAggregate(account, id))
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// done hands a finished write to the relay, which reads the conflict as it now stands.
func (c *Conflicts) done(in *outbox.Intent) {
	if in != nil {
		c.ob.Done(*in, nil)
	}
}

// Snapshot is the outbox's loader: the event of the conflict an aggregate names, as it is
// stored now, or a tombstone when it is not (erased; or never stored: a write cut off after
// its intent, which deletes a key nobody wrote).
func (c *Conflicts) Snapshot(ctx context.Context, aggregate string) ([]events.Message, error) {
	i := strings.LastIndex(aggregate, conflictInfix)
	if i <= 0 {
		return nil, fmt.Errorf("conflict aggregate %q: want <account>:conflict:<id>", aggregate)
	}
	id, err := strconv.ParseInt(aggregate[i+len(conflictInfix):], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("conflict aggregate %q: %w", aggregate, err)
	}
	k, err := c.Get(ctx, aggregate[:i], id)
	if err == channel.ErrNotFound {
		return []events.Message{{Topic: events.TopicIntegration, Key: aggregate, Tombstone: true}}, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := ConflictMessage(k)
	if err != nil {
		return nil, err
	}
	return []events.Message{m}, nil
}

// ConflictMessage is a conflict's event on vros.integration.v1: the conflict mapped to
// contract.Conflict, never the guest's name nor the owner's note. Its time is the
// resolution's once resolved, else the record's.
func ConflictMessage(k channel.Conflict) (events.Message, error) {
	data := contract.Conflict{AccountID: k.Account, ConflictID: k.ID, ConnectionID: k.ConnectionID, PropertyID: k.PropertyID,
		BookingIDs: k.BookingIDs, Channel: k.Channel, ReservationID: k.ReservationID, RevisionID: k.RevisionID,
		Checkin: k.Checkin, Checkout: k.Checkout, Reason: k.Reason, Message: k.Message, Nights: k.Nights,
		Total: k.Total, Currency: k.Currency, At: k.CreatedAt.UTC(), ResolvedAt: k.ResolvedAt}
	if len(k.BookingIDs) > 0 {
		data.BookingID = k.BookingIDs[0]
	}
	if len(data.BookingIDs) == 0 {
		data.BookingIDs = nil
	}
	if len(data.Nights) == 0 {
		data.Nights = nil
	}
	at := data.At
	if k.ResolvedAt != nil {
		t := k.ResolvedAt.UTC()
		data.ResolvedAt, at = &t, t
	}
	agg := ConflictAggregate(k.Account, k.ID)
	v, err := events.Encode(eventSource, contract.ChannelConflict, agg, at, data)
	if err != nil {
		return events.Message{}, fmt.Errorf("conflict event %s: %w", agg, err)
	}
	return events.Message{Topic: events.TopicIntegration, Key: agg, Value: v}, nil
}

// beginErase records the intent to delete each of the account's conflicts, before they are
// deleted: once they are, the relay publishes a tombstone for each key.
func (c *Conflicts) beginErase(ctx context.Context, account string) ([]*outbox.Intent, error) {
	if c.ob == nil {
		return nil, nil
	}
	cur, err := c.coll.Find(ctx, bson.D{{Key: "account_id", Value: account}},
		options.Find().SetProjection(bson.D{{Key: "conflict_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []struct {
		ID int64 `bson:"conflict_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]*outbox.Intent, 0, len(docs))
	for _, d := range docs {
		in, err := c.begin(ctx, account, d.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}
