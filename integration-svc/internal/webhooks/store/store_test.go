package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "whstore", &db, nil) }

var accounts atomic.Int64

type fixture struct {
	st      *store.Store
	account string
	ep      webhook.Endpoint
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, account: fmt.Sprintf("qacc%d", accounts.Add(1))}
	id, err := st.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	f.ep = webhook.Endpoint{Account: f.account, ID: id, URL: "https://example.com/h", EventTypes: []string{"*"},
		Enabled: true, Secret: "whsec_x", CreatedAt: now, UpdatedAt: now}
	if err := st.AddEndpoint(ctx, f.ep); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) add(t *testing.T, msg string, property int64, at time.Time) {
	t.Helper()
	e := webhook.Event{ID: msg, Account: f.account, Type: webhook.PropertyUpdated, PropertyID: property, At: at, Data: []byte(`{"n":"` + msg + `"}`)}
	if err := f.st.AddDeliveries(context.Background(), e, []webhook.Endpoint{f.ep}, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
}

// queued lists the account's queue documents' message ids.
func (f *fixture) queued(t *testing.T) map[string]bool {
	t.Helper()
	cur, err := db.Collection(store.Queue).Find(context.Background(), bson.D{{Key: "account_id", Value: f.account}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		MessageID string `bson:"message_id"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range docs {
		out[d.MessageID] = true
	}
	return out
}

// enable pauses (false) or enables the endpoint, holding or releasing its deliveries.
func (f *fixture) enable(t *testing.T, on bool) {
	t.Helper()
	if _, _, err := f.st.ModifyEndpoint(context.Background(), f.account, f.ep.ID, time.Now().UTC(),
		func(e *webhook.Endpoint) bool { e.Enabled = on; return true }); err != nil {
		t.Fatal(err)
	}
}

// head returns the lane's head if it may be sent: false when the lane is empty or its head
// (the oldest delivery) is held.
func (f *fixture) head(t *testing.T, property int64) (hooks.Due, bool) {
	t.Helper()
	h, ok, err := f.st.LaneHead(context.Background(), store.Lane(f.account, f.ep.ID, property))
	if err != nil {
		t.Fatal(err)
	}
	return h, ok && !h.Hold
}

func (f *fixture) finish(t *testing.T, h hooks.Due, ok bool, next *time.Time) {
	t.Helper()
	now := time.Now().UTC()
	del, leased, err := f.st.Lease(context.Background(), h, now, now.Add(time.Minute))
	if err != nil || !leased {
		t.Fatalf("lease %s: %v %v", h.MessageID, leased, err)
	}
	a := webhook.Attempt{Account: f.account, WebhookID: f.ep.ID, MessageID: del.MessageID, Attempt: del.Attempts + 1, At: now}
	if !ok {
		a.Error = "answered 503"
	}
	if err := f.st.Finish(context.Background(), del, a, ok, next); err != nil {
		t.Fatal(err)
	}
}
