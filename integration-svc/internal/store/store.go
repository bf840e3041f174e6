// Package store keeps integration-svc's webhook state in MongoDB: endpoints, deliveries,
// attempts, the consumer's snapshots and the accounts' private-targets switch.
package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/hooks"
	"github.com/vros/vros/integration-svc/internal/webhook"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

// Collections.
const (
	Endpoints  = "endpoints"
	Deliveries = "deliveries"
	Attempts   = "attempts"
	Snapshots  = "snapshots"
	Accounts   = "accounts"
	Counters   = "counters"
	// Queue holds one document per pending delivery (its scheduling state), apart from the
	// delivery log, so that what the deliverer scans does not grow with history.
	Queue = "due"
	// ErasedAccounts holds one permanent mark per erased account, {_id, at}, as in every
	// service (docs/erasure.md).
	ErasedAccounts = "erased_accounts"
	// Lanes holds one document per lane that has queued deliveries: when its head may next be
	// looked at and whether it is held. The deliverer's rounds read lanes, not deliveries, so
	// that one endpoint's backlog (however long) is one entry, and a lane waiting for a retry
	// is out of the round altogether.
	Lanes = "lanes"
)

// The store implements every port of the webhook domain; a missing endpoint or delivery
// is hooks.ErrNotFound.
var _ hooks.Repository = (*Store)(nil)

// Store is the webhook state of every account.
type Store struct {
	db        *mongo.Database
	endpoints *mongo.Collection
	deliv     *mongo.Collection
	queue     *mongo.Collection
	lanes     *mongo.Collection
	attempts  *mongo.Collection
	snaps     *mongo.Collection
	accounts  *mongo.Collection
	erased    *mongo.Collection
	ids       *mongostore.Sequence

	// epCache holds endpoints read for sending (EndpointCached), dropped by this process's
	// writes to them.
	epMu    sync.Mutex
	epCache map[string]cachedEndpoint
}

type cachedEndpoint struct {
	ep webhook.Endpoint
	at time.Time
}

// Open declares the collections and indexes and returns the store.
func Open(ctx context.Context, db *mongo.Database) (*Store, error) {
	colls := append(mongostore.WithLocks(Snapshots, Endpoints), Deliveries, Attempts, Accounts, Counters, Queue, Lanes, ErasedAccounts, events.ParkedCollection)
	err := mongostore.Ensure(ctx, db, colls, []mongostore.Index{
		{Collection: Endpoints, Keys: bson.D{{Key: "account_id", Value: 1}}},
		{Collection: Deliveries, Keys: bson.D{{Key: "status", Value: 1}, {Key: "hold", Value: 1}, {Key: "event_at", Value: 1}}},
		{Collection: Queue, Keys: bson.D{{Key: "hold", Value: 1}}},
		{Collection: Queue, Keys: bson.D{{Key: "lane", Value: 1}, {Key: "event_at", Value: 1}, {Key: "seq", Value: 1}, {Key: "_id", Value: 1}}},
		{Collection: Lanes, Keys: bson.D{{Key: "hold", Value: 1}, {Key: "next_at", Value: 1}}},
		{Collection: Lanes, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}}},
		{Collection: Queue, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}}},
		{Collection: Deliveries, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}, {Key: "created_at", Value: -1}}},
		{Collection: Attempts, Keys: bson.D{{Key: "delivery", Value: 1}, {Key: "attempt", Value: 1}}},
		{Collection: Attempts, Keys: bson.D{{Key: "at", Value: 1}}},
		{Collection: Attempts, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}, {Key: "at", Value: 1}}},
	})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, endpoints: db.Collection(Endpoints), deliv: db.Collection(Deliveries), queue: db.Collection(Queue), lanes: db.Collection(Lanes),
		attempts: db.Collection(Attempts), snaps: db.Collection(Snapshots), accounts: db.Collection(Accounts), erased: db.Collection(ErasedAccounts),
		ids: mongostore.NewSequence(db.Collection(Counters), "webhook", 20), epCache: map[string]cachedEndpoint{}}
	if err := s.BackfillQueue(ctx); err != nil {
		return nil, err
	}
	if _, err := s.ensureLanes(ctx, time.Now().UTC()); err != nil {
		return nil, err
	}
	return s, nil
}

// BackfillQueue queues every pending delivery that has no queue document (recorded before
// the queue existed, or left by a redelivery that failed half-way); at every start and once
// an hour (deliver), idempotent. It reads the log's pending deliveries.
func (s *Store) BackfillQueue(ctx context.Context) error {
	cur, err := s.deliv.Find(ctx, bson.D{{Key: "status", Value: webhook.StatusPending}}, options.Find().SetProjection(bson.D{{Key: "data", Value: 0}}))
	if err != nil {
		return err
	}
	var docs []deliveryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return err
	}
	for _, d := range docs {
		if err := s.enqueue(ctx, d, false); err != nil {
			return err
		}
	}
	return nil
}

// Snapshots is the consumer's collection of kept snapshots (mongostore.KeepNewer).
func (s *Store) Snapshots() *mongo.Collection { return s.snaps }

// BrandProperties reads the account's brands from its kept settings snapshot: each brand's
// properties (none listed: all, docs/brands.md).
func (s *Store) BrandProperties(ctx context.Context, account string) (map[int64][]int64, error) {
	snap, ok, err := mongostore.GetSnapshot(ctx, s.snaps, account+":settings")
	out := map[int64][]int64{}
	if err != nil || !ok {
		return out, err
	}
	var st contract.Settings
	if err := json.Unmarshal([]byte(snap.Data), &st); err != nil {
		return nil, err
	}
	for _, b := range st.Brands {
		out[int64(b.ID)] = b.Properties
	}
	return out, nil
}

// ---- accounts: the operator's switch ----

type accountDoc struct {
	ID           string `bson:"_id"`
	AccountID    string `bson:"account_id"`
	AllowPrivate bool   `bson:"allow_private_targets"`
}

// AllowsPrivate reports the account's switch (off unless an operator turned it on).
func (s *Store) AllowsPrivate(ctx context.Context, account string) (bool, error) {
	var d accountDoc
	err := s.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return d.AllowPrivate, err
}

// SetAllowsPrivate sets the account's switch.
func (s *Store) SetAllowsPrivate(ctx context.Context, account string, allow bool) error {
	_, err := s.accounts.UpdateOne(ctx, bson.D{{Key: "_id", Value: account}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "account_id", Value: account}, {Key: "allow_private_targets", Value: allow}}}},
		options.UpdateOne().SetUpsert(true))
	return err
}

// Erased reports whether the account was erased (its later events are ignored).
func (s *Store) Erased(ctx context.Context, account string) (bool, error) {
	err := s.erased.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

// EraseAccount marks the account erased, then deletes everything of it: the mark (its id
// and the time) is all that stays, so that its events read later, from another partition,
// change nothing, and an erasure stopped half-way is finished when its event is read again.
func (s *Store) EraseAccount(ctx context.Context, account string, at time.Time) error {
	_, err := s.erased.InsertOne(ctx, bson.D{{Key: "_id", Value: account}, {Key: "at", Value: at.UTC()}})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("mark account erased: %w", err)
	}
	s.epMu.Lock()
	clear(s.epCache) // rare: simpler than finding the account's entries
	s.epMu.Unlock()
	byAccount := bson.D{{Key: "account_id", Value: account}}
	for _, c := range []*mongo.Collection{s.endpoints, s.queue, s.lanes, s.deliv, s.attempts, s.accounts} {
		if _, err := c.DeleteMany(ctx, byAccount); err != nil {
			return err
		}
	}
	_, err = s.snaps.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}})
	return err
}

// ---- endpoints ----

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

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
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

// RepairHolds schedules the lanes that lost their schedule (ensureLanes), releases the held
// deliveries and lanes of every endpoint that is enabled, and drops what is left of an
// endpoint that no longer exists; it returns how many lanes and endpoints it repaired. A
// delivery takes its hold from a copy of its endpoint read a moment earlier (the consumer
// recording it, a redelivery, the deliverer holding it at send time), so one written just
// after its endpoint was enabled elsewhere would wait behind an enabled endpoint for good.
// Each endpoint is read under its lease, as ModifyEndpoint writes it, so a disabling cannot
// come between the read and the release.
func (s *Store) RepairHolds(ctx context.Context, now time.Time) (int, error) {
	repaired, err := s.ensureLanes(ctx, now)
	if err != nil {
		return repaired, err
	}
	held := map[string][2]any{} // endpoint key → account, webhook id
	for _, c := range []*mongo.Collection{s.queue, s.lanes} {
		cur, err := c.Find(ctx, bson.D{{Key: "hold", Value: true}},
			options.Find().SetProjection(bson.D{{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}}))
		if err != nil {
			return repaired, err
		}
		var docs []queueDoc
		if err := cur.All(ctx, &docs); err != nil {
			return repaired, err
		}
		for _, d := range docs {
			held[endpointKey(d.AccountID, d.WebhookID)] = [2]any{d.AccountID, d.WebhookID}
		}
	}
	for key, ep := range held {
		account, id := ep[0].(string), ep[1].(int64)
		err := mongostore.WithLease(ctx, s.endpoints, key, func() error {
			e, err := s.Endpoint(ctx, account, id)
			switch {
			case errors.Is(err, hooks.ErrNotFound):
				repaired++
				return s.dropDeliveries(ctx, account, id)
			case err != nil || !e.Enabled:
				return err
			}
			repaired++
			return s.setHold(ctx, account, id, false, now)
		})
		if err != nil {
			return repaired, err
		}
	}
	return repaired, nil
}

// ensureLanes schedules, due at now, every lane that has queued deliveries and no schedule
// (one queued while its lane was being removed as empty, if LaneDone's second look missed
// it; or queued before lanes were kept); it returns how many.
func (s *Store) ensureLanes(ctx context.Context, now time.Time) (int, error) {
	cur, err := s.queue.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "lane", Value: 1},
		{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}, {Key: "hold", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var queued []queueDoc
	if err := cur.All(ctx, &queued); err != nil {
		return 0, err
	}
	if len(queued) == 0 {
		return 0, nil
	}
	lcur, err := s.lanes.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var lanes []laneDoc
	if err := lcur.All(ctx, &lanes); err != nil {
		return 0, err
	}
	scheduled := make(map[string]bool, len(lanes))
	for _, l := range lanes {
		scheduled[l.ID] = true
	}
	n := 0
	for _, q := range queued {
		if scheduled[q.Lane] {
			continue
		}
		scheduled[q.Lane] = true
		l := laneDoc{ID: q.Lane, AccountID: q.AccountID, WebhookID: q.WebhookID, Endpoint: endpointKey(q.AccountID, q.WebhookID), NextAt: now, Hold: q.Hold}
		if _, err := s.lanes.InsertOne(ctx, l); err != nil && !mongostore.IsDuplicate(err) {
			return n, err
		}
		n++
	}
	return n, nil
}

// Drop deletes a delivery whose endpoint no longer exists (recorded just after its
// deletion), with its queue document.
func (s *Store) Drop(ctx context.Context, d webhook.Delivery) error {
	key := DeliveryKey(d.Account, d.WebhookID, d.MessageID)
	if _, err := s.queue.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}}); err != nil {
		return err
	}
	_, err := s.deliv.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
	return err
}

// setHold holds (endpoint disabled or paused) or releases the endpoint's pending deliveries
// and its lanes; a release makes the held ones due now, and leaves a delivery that waits for
// a retry (not held) at its time. Only called with the endpoint's lease held.
//
// The queue alone, not the log: the log's pending entries are written by their attempts
// only. Writing them here too raced the attempts that re-enabling lets go at once: FerretDB
// applies an update as a read and a write of the whole document, so an entry just recorded
// delivered was put back to pending (devstack/hookcrash TestAutoDisable).
func (s *Store) setHold(ctx context.Context, account string, id int64, hold bool, now time.Time) error {
	ep := bson.D{{Key: "account_id", Value: account}, {Key: "webhook_id", Value: id}}
	set := bson.D{{Key: "hold", Value: hold}}
	laneSet := bson.D{{Key: "hold", Value: hold}}
	if !hold {
		set = append(set, bson.E{Key: "next_attempt_at", Value: now})
		laneSet = append(laneSet, bson.E{Key: "next_at", Value: now})
	}
	if _, err := s.queue.UpdateMany(ctx, append(slices.Clone(ep), bson.E{Key: "hold", Value: !hold}),
		bson.D{{Key: "$set", Value: set}}); err != nil {
		return err
	}
	_, err := s.lanes.UpdateMany(ctx, ep, bson.D{{Key: "$set", Value: laneSet}})
	return err
}

// ---- deliveries ----

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

// queueDoc is a pending delivery's place in the queue: its lane, order and scheduling
// state. It exists exactly while its delivery is pending (a stale one, left by a stop
// between two writes, is removed when it is next leased).
type queueDoc struct {
	ID            string     `bson:"_id"`
	AccountID     string     `bson:"account_id"`
	WebhookID     int64      `bson:"webhook_id"`
	MessageID     string     `bson:"message_id"`
	Lane          string     `bson:"lane"`
	EventAt       time.Time  `bson:"event_at"`
	Seq           int        `bson:"seq"`
	Hold          bool       `bson:"hold"`
	Attempts      int        `bson:"attempts"`
	NextAttemptAt *time.Time `bson:"next_attempt_at"`
	LeaseUntil    time.Time  `bson:"lease_until"`
	// LeaseToken names the lease under which an attempt runs; a redelivery clears it, so the
	// attempt's outcome no longer overwrites the delivery (Finish).
	LeaseToken string `bson:"lease_token"`
}

func (q queueDoc) due() hooks.Due {
	return hooks.Due{Delivery: webhook.Delivery{Account: q.AccountID, WebhookID: q.WebhookID, MessageID: q.MessageID,
		EventAt: q.EventAt.UTC(), Status: webhook.StatusPending, Attempts: q.Attempts, NextAttemptAt: utc(q.NextAttemptAt)},
		Lane: q.Lane, Hold: q.Hold, LeaseUntil: q.LeaseUntil.UTC()}
}

// laneDoc is a lane's scheduling state (Lanes).
type laneDoc struct {
	ID        string    `bson:"_id"` // the lane
	AccountID string    `bson:"account_id"`
	WebhookID int64     `bson:"webhook_id"`
	Endpoint  string    `bson:"ep"` // account:webhook
	NextAt    time.Time `bson:"next_at"`
	Hold      bool      `bson:"hold"`
}

// enqueue queues pending delivery d and makes sure its lane is scheduled; reset (a
// redelivery) also resets an existing queue document's schedule and lease, and makes its lane
// due now (the delivery may now be its head), else an existing one is left as it is. The
// queue document is written before the lane's, so that a lane found empty and removed
// meanwhile is seen to have it (LaneDone).
func (s *Store) enqueue(ctx context.Context, d deliveryDoc, reset bool) error {
	sched := bson.D{{Key: "hold", Value: d.Hold}, {Key: "attempts", Value: d.Attempts},
		{Key: "next_attempt_at", Value: d.NextAttemptAt}, {Key: "lease_until", Value: time.Time{}}, {Key: "lease_token", Value: ""}}
	ident := bson.D{{Key: "account_id", Value: d.AccountID}, {Key: "webhook_id", Value: d.WebhookID},
		{Key: "message_id", Value: d.MessageID}, {Key: "lane", Value: d.Lane}, {Key: "event_at", Value: d.EventAt}, {Key: "seq", Value: d.Seq}}
	var err error
	if reset {
		_, err = s.queue.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, bson.D{{Key: "$setOnInsert", Value: ident}, {Key: "$set", Value: sched}},
			options.UpdateOne().SetUpsert(true))
	} else {
		// an insert is one write where FerretDB runs an upsert as a read and a write
		_, err = s.queue.InsertOne(ctx, append(bson.D{{Key: "_id", Value: d.ID}}, append(ident, sched...)...))
	}
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("queue delivery %s: %w", d.ID, err)
	}
	next := time.Now().UTC()
	if d.NextAttemptAt != nil {
		next = *d.NextAttemptAt
	}
	lane := laneDoc{ID: d.Lane, AccountID: d.AccountID, WebhookID: d.WebhookID, Endpoint: endpointKey(d.AccountID, d.WebhookID), NextAt: next, Hold: d.Hold}
	if reset {
		_, err = s.lanes.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.Lane}}, bson.D{
			{Key: "$set", Value: bson.D{{Key: "next_at", Value: next}}},
			{Key: "$setOnInsert", Value: bson.D{{Key: "account_id", Value: lane.AccountID}, {Key: "webhook_id", Value: lane.WebhookID},
				{Key: "ep", Value: lane.Endpoint}, {Key: "hold", Value: lane.Hold}}}}, options.UpdateOne().SetUpsert(true))
	} else {
		// A lane already scheduled keeps its time: its head is older than d. Read first: a
		// failed insert is a rolled-back write on the embedded store. A lane removed right
		// after the read (LaneDone) looks at the queue again after its removal and finds d,
		// queued before the read.
		err = s.lanes.FindOne(ctx, bson.D{{Key: "_id", Value: d.Lane}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			_, err = s.lanes.InsertOne(ctx, lane)
		}
	}
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("schedule lane %s: %w", d.Lane, err)
	}
	return nil
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

// queueOrder is a lane's order: event time, then the order of the events derived from one
// message, then the message id.
var queueOrder = bson.D{{Key: "event_at", Value: 1}, {Key: "seq", Value: 1}, {Key: "_id", Value: 1}}

// DueLanes returns at most limit lanes not held whose time has come, the longest waiting
// first, leaving out the endpoints in busy (account:webhook keys: those this process sends to
// as much as it may). A lane is one entry however many deliveries wait in it, and a lane
// whose head waits for a retry is not among them, so one endpoint's backlog never crowds out
// other endpoints' deliveries.
func (s *Store) DueLanes(ctx context.Context, now time.Time, busy []string, limit int64) ([]hooks.DueLane, error) {
	f := bson.D{{Key: "hold", Value: false}, {Key: "next_at", Value: bson.D{{Key: "$lte", Value: now}}}}
	if len(busy) > 0 {
		f = append(f, bson.E{Key: "ep", Value: bson.D{{Key: "$nin", Value: busy}}})
	}
	cur, err := s.lanes.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "next_at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(limit))
	if err != nil {
		return nil, err
	}
	var docs []laneDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]hooks.DueLane, 0, len(docs))
	for _, d := range docs {
		out = append(out, hooks.DueLane{Lane: d.ID, Account: d.AccountID, WebhookID: d.WebhookID})
	}
	return out, nil
}

// LaneHead returns the lane's oldest queued delivery, held or not (a held head holds its
// lane: nothing behind it goes first); false when the lane has none.
func (s *Store) LaneHead(ctx context.Context, lane string) (hooks.Due, bool, error) {
	var d queueDoc
	err := s.queue.FindOne(ctx, bson.D{{Key: "lane", Value: lane}}, options.FindOne().SetSort(queueOrder)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return hooks.Due{}, false, nil
	}
	if err != nil {
		return hooks.Due{}, false, err
	}
	return d.due(), true, nil
}

// SetLaneNext makes the lane's rounds wait until at (its head waits for a retry, or is
// held: hold).
func (s *Store) SetLaneNext(ctx context.Context, lane string, at time.Time, hold bool) error {
	_, err := s.lanes.UpdateOne(ctx, bson.D{{Key: "_id", Value: lane}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "next_at", Value: at}, {Key: "hold", Value: hold}}}})
	return err
}

// LaneDone removes the lane's schedule once it has no queued delivery. A delivery queued
// meanwhile wrote its queue document before it found the lane scheduled, so it is seen by
// the look that follows the removal, and the lane is scheduled again.
func (s *Store) LaneDone(ctx context.Context, lane string) error {
	var l laneDoc
	err := s.lanes.FindOne(ctx, bson.D{{Key: "_id", Value: lane}}).Decode(&l)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := s.lanes.DeleteOne(ctx, bson.D{{Key: "_id", Value: lane}}); err != nil {
		return err
	}
	h, ok, err := s.LaneHead(ctx, lane)
	if err != nil || !ok {
		return err
	}
	l.NextAt, l.Hold = time.Now().UTC(), h.Hold
	if _, err := s.lanes.InsertOne(ctx, l); err != nil && !mongostore.IsDuplicate(err) {
		return err
	}
	return nil
}

// Lease claims a pending delivery until until; false when it is no longer pending, is
// held, is leased by another, or was tried since it was read (attempts differ). The
// returned delivery carries its data and the lease's token.
//
// A queue document whose last lease's outcome is already in the log (a stop came between
// Finish's two writes) is dropped: the log names the lease it was written under. A
// redelivered one carries no lease yet, so whatever an attempt in flight wrote to the log
// meanwhile, it is sent (with a fresh schedule: its attempts start again).
func (s *Store) Lease(ctx context.Context, d hooks.Due, now, until time.Time) (webhook.Delivery, bool, error) {
	key := DeliveryKey(d.Account, d.WebhookID, d.MessageID)
	var prev queueDoc
	token := rand.Text()
	err := s.queue.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: key}, {Key: "hold", Value: false},
		{Key: "attempts", Value: d.Attempts}, {Key: "lease_until", Value: bson.D{{Key: "$lte", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: until}, {Key: "lease_token", Value: token}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&prev)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return webhook.Delivery{}, false, nil
	}
	if err != nil {
		return webhook.Delivery{}, false, err
	}
	var doc deliveryDoc
	err = s.deliv.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&doc)
	finished := prev.LeaseToken != "" && doc.LastToken == prev.LeaseToken
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && finished && doc.Status != webhook.StatusPending {
		// deleted, or finished by an attempt whose queue update a stop cut short.
		_, err = s.queue.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "lease_token", Value: token}})
		return webhook.Delivery{}, false, err
	}
	if err != nil {
		return webhook.Delivery{}, false, err
	}
	out := doc.delivery()
	out.Status, out.Attempts, out.Lease = webhook.StatusPending, prev.Attempts, token
	if finished { // the log is one attempt ahead of the queue (a stop between the two)
		out.Attempts = max(doc.Attempts, prev.Attempts)
	}
	return out, true, nil
}

// Finish records attempt a of delivery d (leased as d.Lease) and its outcome: delivered,
// retried at next (nil: failed, given up), releasing the lease. The attempt is logged first,
// then the delivery (with the lease's token), then the queue document, only if it still
// carries this lease: a redelivery meanwhile (which clears the lease) is not undone, and a
// stop in between leaves the queue document, whose next lease finds its outcome in the log
// and drops it.
func (s *Store) Finish(ctx context.Context, d webhook.Delivery, a webhook.Attempt, ok bool, next *time.Time) error {
	key := DeliveryKey(d.Account, d.WebhookID, d.MessageID)
	_, err := s.attempts.InsertOne(ctx, attemptDoc{ID: key + ":" + strconv.Itoa(a.Attempt) + ":" + strconv.FormatInt(a.At.UnixNano(), 36),
		AccountID: d.Account, WebhookID: d.WebhookID, Delivery: key, Attempt: a.Attempt, At: a.At,
		StatusCode: a.StatusCode, LatencyMS: a.LatencyMS, Error: a.Error, ResponseExcerpt: a.ResponseExcerpt, OK: ok})
	if err != nil {
		return err
	}
	// A redelivery meanwhile (it cleared the lease) owns the delivery now: the log keeps
	// showing it pending. (A redelivery landing between this look and the writes below only
	// shows this attempt's outcome in the log until its own attempt: the queue write is
	// conditional on the lease, so the redelivery is sent either way.)
	var q queueDoc
	err = s.queue.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&q)
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && q.LeaseToken != d.Lease {
		return nil
	}
	if err != nil {
		return err
	}
	set := bson.D{{Key: "attempts", Value: a.Attempt}, {Key: "lease_until", Value: time.Time{}}, {Key: "last_token", Value: d.Lease}}
	switch {
	case ok:
		set = append(set, bson.E{Key: "status", Value: webhook.StatusDelivered}, bson.E{Key: "delivered_at", Value: a.At},
			bson.E{Key: "next_attempt_at", Value: nil})
	case next == nil:
		set = append(set, bson.E{Key: "status", Value: webhook.StatusFailed}, bson.E{Key: "next_attempt_at", Value: nil})
	default:
		set = append(set, bson.E{Key: "next_attempt_at", Value: *next})
	}
	// by _id alone: FerretDB reads only the one document then (any other condition makes
	// it scan the collection); the lease keeps other attempts off this delivery.
	if _, err = s.deliv.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}}, bson.D{{Key: "$set", Value: set}}); err != nil {
		return err
	}
	mine := bson.D{{Key: "_id", Value: key}, {Key: "lease_token", Value: d.Lease}}
	if next == nil || ok {
		_, err = s.queue.DeleteOne(ctx, mine)
		return err
	}
	_, err = s.queue.UpdateOne(ctx, mine, bson.D{{Key: "$set", Value: bson.D{
		{Key: "attempts", Value: a.Attempt}, {Key: "next_attempt_at", Value: *next}, {Key: "lease_until", Value: time.Time{}}}}})
	return err
}

// Hold holds one delivery (its endpoint turned out disabled at send time).
func (s *Store) Hold(ctx context.Context, d webhook.Delivery) error {
	_, err := s.queue.UpdateOne(ctx, bson.D{{Key: "_id", Value: DeliveryKey(d.Account, d.WebhookID, d.MessageID)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "hold", Value: true}, {Key: "lease_until", Value: time.Time{}}}}})
	return err
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

// ---- attempts ----

type attemptDoc struct {
	ID              string    `bson:"_id"`
	AccountID       string    `bson:"account_id"`
	WebhookID       int64     `bson:"webhook_id"`
	Delivery        string    `bson:"delivery"`
	Attempt         int       `bson:"attempt"`
	At              time.Time `bson:"at"`
	StatusCode      int       `bson:"status_code"`
	LatencyMS       int64     `bson:"latency_ms"`
	Error           string    `bson:"error"`
	ResponseExcerpt string    `bson:"response_excerpt"`
	OK              bool      `bson:"ok"`
}

// PruneAttempts deletes attempts made before cutoff (the log keeps 7 days).
func (s *Store) PruneAttempts(ctx context.Context, cutoff time.Time) (int64, error) {
	r, err := s.attempts.DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: cutoff}}}})
	if err != nil {
		return 0, err
	}
	return r.DeletedCount, nil
}

// ---- endpoint outcomes (several deliveries of one endpoint end at once) ----

// Succeeded records the time of a successful attempt, which ends the failure streak (the
// streak is counted from the attempt log after it: Streak); an earlier time than the one
// stored (attempts end out of order) changes nothing.
func (s *Store) Succeeded(ctx context.Context, account string, id int64, at time.Time) error {
	_, _, err := s.ModifyEndpoint(ctx, account, id, at, func(e *webhook.Endpoint) bool {
		if e.LastSuccessAt != nil && !at.After(*e.LastSuccessAt) {
			return false
		}
		e.LastSuccessAt = &at
		return true
	})
	if errors.Is(err, hooks.ErrNotFound) {
		return nil // deleted meanwhile
	}
	return err
}

// Failed is the endpoint after a failed attempt (already in the attempt log, Finish), its
// streak filled in (Streak). It writes nothing: the streak lives in the attempt log alone,
// so no update of the endpoint document can race a Disable (FerretDB applies an update as a
// read and a write of the whole document, and a concurrent one is lost), and attempts
// ending at once in several replicas all count.
func (s *Store) Failed(ctx context.Context, account string, id int64) (webhook.Endpoint, error) {
	e, err := s.Endpoint(ctx, account, id)
	if err != nil {
		return e, err
	}
	return s.Streak(ctx, e)
}

// Streak fills in e's failure streak from the attempt log: the failed attempts since the
// later of its last success and its re-enabling, the first and the last of them.
func (s *Store) Streak(ctx context.Context, e webhook.Endpoint) (webhook.Endpoint, error) {
	q := bson.D{{Key: "account_id", Value: e.Account}, {Key: "webhook_id", Value: e.ID}, {Key: "ok", Value: false}}
	from := e.LastSuccessAt
	if e.StreakFrom != nil && (from == nil || e.StreakFrom.After(*from)) {
		from = e.StreakFrom
	}
	if from != nil {
		q = append(q, bson.E{Key: "at", Value: bson.D{{Key: "$gt", Value: *from}}})
	}
	cur, err := s.attempts.Find(ctx, q, options.Find().SetProjection(bson.D{{Key: "at", Value: 1}}))
	if err != nil {
		return e, err
	}
	var docs []struct {
		At time.Time `bson:"at"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return e, err
	}
	e.FailureStreak, e.FirstFailureAt, e.LastFailureAt = len(docs), nil, nil
	for _, d := range docs {
		at := d.At.UTC()
		if e.FirstFailureAt == nil || at.Before(*e.FirstFailureAt) {
			e.FirstFailureAt = &at
		}
		if e.LastFailureAt == nil || at.After(*e.LastFailureAt) {
			e.LastFailureAt = &at
		}
	}
	return e, nil
}

// Disable disables the endpoint for reason and holds its deliveries, if it is still as seen
// when its failure streak was counted: enabled, with no success and no re-enabling since.
// False when it was not (another replica disabled it first, the account paused or
// re-enabled it, or an attempt succeeded meanwhile) or was deleted.
//
// notice is the webhook.disabled event to record for the account's other endpoints: it is
// kept on the endpoint with the disabling (PendingNotices) until NoticeRecorded.
func (s *Store) Disable(ctx context.Context, account string, id int64, at time.Time, reason string, seen webhook.Endpoint, notice webhook.Event) (bool, error) {
	_, disabled, err := s.ModifyEndpoint(ctx, account, id, at, func(e *webhook.Endpoint) bool {
		if !e.Enabled || !sameTime(e.LastSuccessAt, seen.LastSuccessAt) || !sameTime(e.StreakFrom, seen.StreakFrom) {
			return false
		}
		e.Enabled, e.DisabledAt, e.DisabledReason, e.UpdatedAt, e.Notice = false, &at, reason, at, &notice
		return true
	})
	if errors.Is(err, hooks.ErrNotFound) {
		return false, nil
	}
	return disabled, err
}

// PendingNotices lists the endpoints whose disabling's notice is not recorded yet (a store
// error right after the disabling), with their notices.
func (s *Store) PendingNotices(ctx context.Context) ([]webhook.Endpoint, error) {
	eps, err := s.findEndpoints(ctx, bson.D{{Key: "notice", Value: bson.D{{Key: "$ne", Value: nil}}}})
	return slices.DeleteFunc(eps, func(e webhook.Endpoint) bool { return e.Notice == nil }), err
}

// NoticeRecorded clears the endpoint's pending notice msg (recorded for the other endpoints).
func (s *Store) NoticeRecorded(ctx context.Context, account string, id int64, msg string) error {
	_, _, err := s.ModifyEndpoint(ctx, account, id, time.Now().UTC(), func(e *webhook.Endpoint) bool {
		if e.Notice == nil || e.Notice.ID != msg {
			return false
		}
		e.Notice = nil
		return true
	})
	if errors.Is(err, hooks.ErrNotFound) {
		return nil
	}
	return err
}

func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

// Release gives up a lease without an attempt (the attempt could not be made: booking-svc
// did not answer); the delivery is due again at next.
func (s *Store) Release(ctx context.Context, d webhook.Delivery, next time.Time) error {
	_, err := s.queue.UpdateOne(ctx, bson.D{{Key: "_id", Value: DeliveryKey(d.Account, d.WebhookID, d.MessageID)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: time.Time{}}, {Key: "next_attempt_at", Value: next}}}})
	return err
}
