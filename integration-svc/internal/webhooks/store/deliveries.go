package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/mongostore"
)

// Deliveries: the log of an event's delivery to an endpoint, one document per (endpoint,
// message), with its payload; recorded by AddDeliveries, listed and redelivered by the
// account. Its outcome is written by the attempts (queue.go: Finish).

type deliveryDoc struct {
	ID         string    `bson:"_id"`
	AccountID  string    `bson:"account_id"`
	WebhookID  int64     `bson:"webhook_id"`
	MessageID  string    `bson:"message_id"`
	EventType  string    `bson:"event_type"`
	PropertyID int64     `bson:"property_id"`
	BookingID  int64     `bson:"booking_id"`
	Lane       string    `bson:"lane"`
	Data       string    `bson:"data"`
	EventAt    time.Time `bson:"event_at"`
	Seq        int       `bson:"seq"`
	Status     string    `bson:"status"`
	// LastToken is the lease under which the latest outcome was written (Finish): a queue
	// document whose last lease it is has been finished (Lease drops it).
	LastToken     string     `bson:"last_token,omitempty"`
	Hold          bool       `bson:"hold"`
	Attempts      int        `bson:"attempts"`
	NextAttemptAt *time.Time `bson:"next_attempt_at"`
	LeaseUntil    time.Time  `bson:"lease_until"`
	CreatedAt     time.Time  `bson:"created_at"`
	DeliveredAt   *time.Time `bson:"delivered_at"`
}

// DeliveryKey is a delivery's document id: one per (endpoint, message).
func DeliveryKey(account string, webhookID int64, msg string) string {
	return endpointKey(account, webhookID) + ":" + msg
}

// Lane is the ordering unit: one endpoint's deliveries of one property.
func Lane(account string, webhookID, property int64) string {
	return endpointKey(account, webhookID) + ":" + strconv.FormatInt(property, 10)
}

func (d deliveryDoc) delivery() webhook.Delivery {
	return webhook.Delivery{Account: d.AccountID, WebhookID: d.WebhookID, MessageID: d.MessageID,
		EventType: d.EventType, PropertyID: d.PropertyID, BookingID: d.BookingID, Data: []byte(d.Data),
		EventAt: d.EventAt.UTC(), Status: d.Status, Attempts: d.Attempts, NextAttemptAt: utc(d.NextAttemptAt),
		CreatedAt: d.CreatedAt.UTC(), DeliveredAt: utc(d.DeliveredAt)}
}

// AddDeliveries records event e for each endpoint, once: a delivery already recorded (the
// same message derived again) is left as it is. Deliveries to a disabled endpoint wait.
// The delivery is written first, then its queue document: a stop between the two is
// repaired when the message is derived again (it is, as it was not committed).
func (s *Store) AddDeliveries(ctx context.Context, e webhook.Event, to []webhook.Endpoint, now time.Time) error {
	for _, ep := range to {
		d := deliveryDoc{ID: DeliveryKey(e.Account, ep.ID, e.ID), AccountID: e.Account, WebhookID: ep.ID,
			MessageID: e.ID, EventType: e.Type, PropertyID: e.PropertyID, BookingID: e.BookingID,
			Lane: Lane(e.Account, ep.ID, e.PropertyID), Data: string(e.Data), EventAt: e.At.UTC(), Seq: e.Seq,
			Status: webhook.StatusPending, Hold: !ep.Enabled, NextAttemptAt: &now, CreatedAt: now}
		_, err := s.deliv.InsertOne(ctx, d)
		if err != nil && !mongostore.IsDuplicate(err) {
			return fmt.Errorf("record delivery %s: %w", d.ID, err)
		}
		if err != nil {
			// recorded before: queue it only if it is still pending (its queue document may
			// be missing after a stop).
			var old deliveryDoc
			err := s.deliv.FindOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, options.FindOne().SetProjection(bson.D{{Key: "data", Value: 0}})).Decode(&old)
			if errors.Is(err, mongo.ErrNoDocuments) {
				continue
			}
			if err != nil {
				return err
			}
			if old.Status != webhook.StatusPending {
				continue
			}
			d = old
		}
		if err := s.enqueue(ctx, d, false); err != nil {
			return err
		}
	}
	return nil
}

// Data reads a delivery's stored payload data.
func (s *Store) Data(ctx context.Context, d webhook.Delivery) ([]byte, error) {
	var doc deliveryDoc
	err := s.deliv.FindOne(ctx, bson.D{{Key: "_id", Value: DeliveryKey(d.Account, d.WebhookID, d.MessageID)}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, hooks.ErrNotFound
	}
	return []byte(doc.Data), err
}

// ListDeliveries lists an endpoint's deliveries, newest first, with their attempts.
func (s *Store) ListDeliveries(ctx context.Context, account string, webhookID int64, f hooks.DeliveryFilter) ([]webhook.Delivery, map[string][]webhook.Attempt, error) {
	q := bson.D{{Key: "account_id", Value: account}, {Key: "webhook_id", Value: webhookID}}
	if f.Status != "" {
		q = append(q, bson.E{Key: "status", Value: f.Status})
	}
	created := bson.D{}
	if f.From != nil {
		created = append(created, bson.E{Key: "$gte", Value: *f.From})
	}
	if f.To != nil {
		created = append(created, bson.E{Key: "$lt", Value: *f.To})
	}
	if f.Before != "" {
		var b deliveryDoc
		err := s.deliv.FindOne(ctx, bson.D{{Key: "_id", Value: DeliveryKey(account, webhookID, f.Before)}}).Decode(&b)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil, hooks.ErrNotFound
		}
		if err != nil {
			return nil, nil, err
		}
		q = append(q, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "created_at", Value: bson.D{{Key: "$lt", Value: b.CreatedAt}}}},
			bson.D{{Key: "created_at", Value: b.CreatedAt}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: b.ID}}}},
		}})
	}
	if len(created) > 0 {
		q = append(q, bson.E{Key: "created_at", Value: created})
	}
	cur, err := s.deliv.Find(ctx, q, options.Find().SetSort(bson.D{{Key: "created_at", Value: -1}, {Key: "_id", Value: -1}}).SetLimit(f.Limit))
	if err != nil {
		return nil, nil, err
	}
	var docs []deliveryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, nil, err
	}
	out := make([]webhook.Delivery, 0, len(docs))
	keys := make([]string, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.delivery())
		keys = append(keys, d.ID)
	}
	attempts := map[string][]webhook.Attempt{}
	if len(keys) == 0 {
		return out, attempts, nil
	}
	acur, err := s.attempts.Find(ctx, bson.D{{Key: "delivery", Value: bson.D{{Key: "$in", Value: keys}}}},
		options.Find().SetSort(bson.D{{Key: "at", Value: 1}}))
	if err != nil {
		return nil, nil, err
	}
	var adocs []attemptDoc
	if err := acur.All(ctx, &adocs); err != nil {
		return nil, nil, err
	}
	for _, a := range adocs {
		msg := a.Delivery[len(endpointKey(account, webhookID))+1:]
		attempts[msg] = append(attempts[msg], webhook.Attempt{Account: a.AccountID, WebhookID: a.WebhookID, MessageID: msg,
			Attempt: a.Attempt, At: a.At.UTC(), StatusCode: a.StatusCode, LatencyMS: a.LatencyMS, Error: a.Error,
			ResponseExcerpt: a.ResponseExcerpt})
	}
	return out, attempts, nil
}

// Redeliver makes the endpoint's deliveries selected by msg (one message) or by their
// creation in [from, to) pending again, due now, keeping their message ids; it returns
// how many.
func (s *Store) Redeliver(ctx context.Context, account string, webhookID int64, msg string, from, to time.Time, hold bool, now time.Time) (int64, error) {
	q := bson.D{{Key: "account_id", Value: account}, {Key: "webhook_id", Value: webhookID}}
	if msg != "" {
		q = append(q, bson.E{Key: "_id", Value: DeliveryKey(account, webhookID, msg)})
	} else {
		q = append(q, bson.E{Key: "created_at", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}})
	}
	r, err := s.deliv.UpdateMany(ctx, q, bson.D{{Key: "$set", Value: bson.D{
		{Key: "status", Value: webhook.StatusPending}, {Key: "hold", Value: hold}, {Key: "attempts", Value: 0},
		{Key: "next_attempt_at", Value: now}, {Key: "delivered_at", Value: nil}, {Key: "lease_until", Value: time.Time{}}}}})
	if err != nil {
		return 0, err
	}
	if msg != "" && r.MatchedCount == 0 {
		return 0, hooks.ErrNotFound
	}
	// then queue them, due now (a delivery in flight meanwhile is sent again: at-least-once).
	cur, err := s.deliv.Find(ctx, q, options.Find().SetProjection(bson.D{{Key: "data", Value: 0}}))
	if err != nil {
		return 0, err
	}
	var docs []deliveryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, err
	}
	for _, d := range docs {
		if err := s.enqueue(ctx, d, true); err != nil {
			return 0, err
		}
	}
	return r.MatchedCount, nil
}

// dropDeliveries deletes an endpoint's queue, deliveries and attempts.
func (s *Store) dropDeliveries(ctx context.Context, account string, id int64) error {
	f := bson.D{{Key: "account_id", Value: account}, {Key: "webhook_id", Value: id}}
	for _, c := range []*mongo.Collection{s.queue, s.lanes, s.deliv, s.attempts} {
		if _, err := c.DeleteMany(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
