package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/mongostore"
)

// Endpoints: an account's webhook endpoints (its subscriptions), one document each, keyed
// "<account>:<webhook id>". Every write goes through ModifyEndpoint, under the endpoint's
// lease; the deliverer reads them through a short per-process cache (EndpointCached).

type endpointDoc struct {
	ID             string     `bson:"_id"`
	AccountID      string     `bson:"account_id"`
	WebhookID      int64      `bson:"webhook_id"`
	URL            string     `bson:"url"`
	EventTypes     []string   `bson:"event_types"`
	BrandID        int64      `bson:"brand_id"`
	Description    string     `bson:"description"`
	Enabled        bool       `bson:"enabled"`
	DisabledAt     *time.Time `bson:"disabled_at"`
	DisabledReason string     `bson:"disabled_reason"`
	StreakFrom     *time.Time `bson:"streak_from"`
	LastSuccessAt  *time.Time `bson:"last_success_at"`
	Secret         string     `bson:"secret"`
	OldSecret      string     `bson:"old_secret"`
	OldSecretUntil *time.Time `bson:"old_secret_until"`
	CreatedAt      time.Time  `bson:"created_at"`
	UpdatedAt      time.Time  `bson:"updated_at"`
	Notice         *noticeDoc `bson:"notice,omitempty"`
}

// noticeDoc is the webhook.disabled event waiting to be recorded.
type noticeDoc struct {
	ID   string    `bson:"id"`
	At   time.Time `bson:"at"`
	Data string    `bson:"data"`
}

func endpointKey(account string, id int64) string { return account + ":" + strconv.FormatInt(id, 10) }

func toEndpointDoc(e webhook.Endpoint) endpointDoc {
	return endpointDoc{ID: endpointKey(e.Account, e.ID), AccountID: e.Account, WebhookID: e.ID, URL: e.URL,
		EventTypes: e.EventTypes, BrandID: e.BrandID, Description: e.Description, Enabled: e.Enabled,
		DisabledAt: e.DisabledAt, DisabledReason: e.DisabledReason,
		StreakFrom: e.StreakFrom, LastSuccessAt: e.LastSuccessAt,
		Secret: e.Secret, OldSecret: e.OldSecret, OldSecretUntil: e.OldSecretUntil, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
		Notice: noticeOf(e.Notice)}
}

func noticeOf(e *webhook.Event) *noticeDoc {
	if e == nil {
		return nil
	}
	return &noticeDoc{ID: e.ID, At: e.At, Data: string(e.Data)}
}

func (d endpointDoc) endpoint() webhook.Endpoint {
	return webhook.Endpoint{Account: d.AccountID, ID: d.WebhookID, URL: d.URL, EventTypes: d.EventTypes,
		BrandID: d.BrandID, Description: d.Description, Enabled: d.Enabled, DisabledAt: utc(d.DisabledAt),
		DisabledReason: d.DisabledReason, StreakFrom: utc(d.StreakFrom),
		LastSuccessAt: utc(d.LastSuccessAt), Secret: d.Secret,
		OldSecret: d.OldSecret, OldSecretUntil: utc(d.OldSecretUntil), CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
		Notice: d.Notice.event(d.AccountID)}
}

func (n *noticeDoc) event(account string) *webhook.Event {
	if n == nil {
		return nil
	}
	return &webhook.Event{ID: n.ID, Account: account, Type: webhook.WebhookDisabled, At: n.At.UTC(), Data: []byte(n.Data)}
}

// NextID hands out a new endpoint id.
func (s *Store) NextID(ctx context.Context) (int64, error) { return s.ids.Next(ctx) }

// CountEndpoints is the number of endpoints of the account.
func (s *Store) CountEndpoints(ctx context.Context, account string) (int64, error) {
	return s.endpoints.CountDocuments(ctx, bson.D{{Key: "account_id", Value: account}})
}

// AddEndpoint stores a new endpoint.
func (s *Store) AddEndpoint(ctx context.Context, e webhook.Endpoint) error {
	_, err := s.endpoints.InsertOne(ctx, toEndpointDoc(e))
	return err
}

// ModifyEndpoint applies change to the endpoint as it is stored and writes the result,
// unless change reports that it changed nothing; it returns the endpoint as it is then.
// When change enables or disables the endpoint, its queued deliveries are released (due
// at now) or held with it.
//
// Every write of a stored endpoint goes through here, under the endpoint's lease
// (mongostore.WithLease): the account's edits, a secret's rotation, the deliverers' records
// of a success and their disabling run in several replicas at once, and FerretDB applies an
// update as a read and a write of the whole document, so without the lease a replica's
// success record could put back a rotated-out secret, and a disabling could land between an
// enabling and its release of the queue, leaving deliveries held behind an enabled endpoint.
func (s *Store) ModifyEndpoint(ctx context.Context, account string, id int64, now time.Time,
	change func(e *webhook.Endpoint) bool) (webhook.Endpoint, bool, error) {
	key := endpointKey(account, id)
	defer s.forget(account, id)
	var e webhook.Endpoint
	var changed bool
	err := mongostore.WithLease(ctx, s.endpoints, key, func() error {
		var err error
		if e, err = s.Endpoint(ctx, account, id); err != nil {
			return err
		}
		was := e.Enabled
		if changed = change(&e); !changed {
			return nil
		}
		// no upsert: an endpoint deleted meanwhile stays deleted.
		if _, err := s.endpoints.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, toEndpointDoc(e)); err != nil {
			return err
		}
		if e.Enabled != was {
			return s.setHold(ctx, account, id, !e.Enabled, now)
		}
		return nil
	})
	return e, changed, err
}

// Endpoint reads one endpoint of the account.
func (s *Store) Endpoint(ctx context.Context, account string, id int64) (webhook.Endpoint, error) {
	var d endpointDoc
	err := s.endpoints.FindOne(ctx, bson.D{{Key: "_id", Value: endpointKey(account, id)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return webhook.Endpoint{}, hooks.ErrNotFound
	}
	if err != nil {
		return webhook.Endpoint{}, err
	}
	return d.endpoint(), nil
}

// EndpointCached is Endpoint read at most maxAge ago by this process and not written by it
// since (the deliverer's read: an endpoint's URL and secrets change rarely, and a pause,
// disabling or deletion is honoured by the queue's hold, not by this copy).
func (s *Store) EndpointCached(ctx context.Context, account string, id int64, maxAge time.Duration) (webhook.Endpoint, error) {
	key := endpointKey(account, id)
	now := time.Now()
	s.epMu.Lock()
	c, ok := s.epCache[key]
	s.epMu.Unlock()
	if ok && now.Sub(c.at) < maxAge {
		return c.ep, nil
	}
	e, err := s.Endpoint(ctx, account, id)
	if err != nil {
		return e, err
	}
	s.epMu.Lock()
	if len(s.epCache) > 10000 {
		clear(s.epCache)
	}
	s.epCache[key] = cachedEndpoint{ep: e, at: now}
	s.epMu.Unlock()
	return e, nil
}

// forget drops the cached copy of an endpoint this process writes.
func (s *Store) forget(account string, id int64) {
	s.epMu.Lock()
	delete(s.epCache, endpointKey(account, id))
	s.epMu.Unlock()
}

// ListEndpoints lists the account's endpoints by id (brand > 0: that brand's only).
func (s *Store) ListEndpoints(ctx context.Context, account string, brand int64) ([]webhook.Endpoint, error) {
	f := bson.D{{Key: "account_id", Value: account}}
	if brand > 0 {
		f = append(f, bson.E{Key: "brand_id", Value: brand})
	}
	return s.findEndpoints(ctx, f)
}

// findEndpoints reads the endpoints matching f, by id.
func (s *Store) findEndpoints(ctx context.Context, f bson.D) ([]webhook.Endpoint, error) {
	cur, err := s.endpoints.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "webhook_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []endpointDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]webhook.Endpoint, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.endpoint())
	}
	return out, nil
}

// DeleteEndpoint deletes the endpoint, its deliveries and their attempts.
func (s *Store) DeleteEndpoint(ctx context.Context, account string, id int64) error {
	defer s.forget(account, id)
	r, err := s.endpoints.DeleteOne(ctx, bson.D{{Key: "_id", Value: endpointKey(account, id)}})
	if err != nil {
		return err
	}
	if err := s.dropDeliveries(ctx, account, id); err != nil {
		return err
	}
	if r.DeletedCount == 0 {
		return hooks.ErrNotFound
	}
	return nil
}
