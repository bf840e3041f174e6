// Package store keeps integration-svc's webhook state in MongoDB: endpoints, deliveries,
// attempts, the consumer's snapshots and the accounts' private-targets switch. It implements
// the webhook domain's ports (hooks.Repository), one file per aggregate: endpoints.go and
// outcomes.go (an endpoint and its failure streak), deliveries.go, queue.go (pending
// deliveries in lanes), attempts.go, accounts.go, erase.go.
package store

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/events"
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

// Snapshots is the consumer's collection of kept snapshots (mongostore.KeepNewer).
func (s *Store) Snapshots() *mongo.Collection { return s.snaps }

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
