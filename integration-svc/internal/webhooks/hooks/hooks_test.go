package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "hooks", &db, nil) }

var accounts atomic.Int64

// open returns two services over one database, as two replicas have.
func open(t *testing.T) (*hooks.Hooks, *hooks.Hooks, string) {
	t.Helper()
	var hs [2]*hooks.Hooks
	for i := range hs {
		st, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		hs[i] = hooks.New(st)
		stores.Store(hs[i], st)
	}
	return hs[0], hs[1], fmt.Sprintf("hacc%d", accounts.Add(1))
}

// stores holds the store each service of open runs over (the replica's), for what a test
// reads or writes behind the service.
var stores sync.Map // *hooks.Hooks → *store.Store

func storeOf(h *hooks.Hooks) *store.Store {
	st, _ := stores.Load(h)
	return st.(*store.Store)
}

// held counts the endpoint's queued deliveries that are held, and all of them.
func held(t *testing.T, account string, id int64) (held, all int) {
	t.Helper()
	cur, err := db.Collection(store.Queue).Find(context.Background(), bson.D{{Key: "account_id", Value: account}, {Key: "webhook_id", Value: id}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		Hold bool `bson:"hold"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Hold {
			held++
		}
	}
	return held, len(docs)
}

// An account's writes to an endpoint (a rotated secret, a changed description) are never
// undone by the deliverers' writes to it (the last success, from several replicas at once):
// the secret the API answered is the one stored and signed with.
func TestEndpointWritesSurviveConcurrentSuccesses(t *testing.T) {
	ctx := context.Background()
	api, other, account := open(t)
	ep, err := api.Create(ctx, webhook.Endpoint{Account: account, URL: "https://example.com/h", EventTypes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		st := storeOf([]*hooks.Hooks{api, other}[i%2])
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := st.Succeeded(ctx, account, ep.ID, time.Now().UTC()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range 20 {
		rot, err := api.RotateSecret(ctx, account, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		desc := fmt.Sprintf("round %d", i)
		if _, err := api.Update(ctx, account, ep.ID, hooks.Change{Description: &desc}); err != nil {
			t.Fatal(err)
		}
		got, err := storeOf(other).Endpoint(ctx, account, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Secret != rot.Secret || got.Description != desc {
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: stored secret %s… description %q; the API answered secret %s… and wrote %q",
				i, got.Secret[:10], got.Description, rot.Secret[:10], desc)
		}
	}
	close(stop)
	wg.Wait()
}

// A disabling that races an account's update of the endpoint loses neither: the update is
// stored, and the endpoint's queue is held exactly when the endpoint ends disabled, so no
// delivery waits behind an enabled endpoint.
func TestDisableRacingUpdatesLeavesQueueMatchingEndpoint(t *testing.T) {
	ctx := context.Background()
	api, deliverer, account := open(t)
	ep, err := api.Create(ctx, webhook.Endpoint{Account: account, URL: "https://example.com/h", EventTypes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range 3 {
		data := []byte(`{}`)
		if err := api.Emit(ctx, webhook.Event{ID: fmt.Sprintf("msg_r%d", i), Account: account, Type: webhook.PropertyUpdated,
			PropertyID: int64(i + 1), At: now, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	enable, disable := true, false
	for i := range 30 {
		// rounds alternate: the account re-enables (after a disabling) or pauses, while the
		// deliverer of another replica disables for a failure streak and the account edits.
		seen, err := storeOf(deliverer).Endpoint(ctx, account, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		desc := fmt.Sprintf("round %d", i)
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := storeOf(deliverer).Disable(ctx, account, ep.ID, time.Now().UTC(), "test streak", seen, webhook.Event{ID: fmt.Sprintf("msg_notice%d", i), Account: account, Type: webhook.WebhookDisabled, At: time.Now(), Data: []byte(`{}`)}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := api.Update(ctx, account, ep.ID, hooks.Change{Description: &desc}); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		got, err := storeOf(api).Endpoint(ctx, account, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		h, all := held(t, account, ep.ID)
		if got.Description != desc {
			t.Fatalf("round %d: the account's update was lost (description %q)", i, got.Description)
		}
		if got.Enabled && h != 0 || !got.Enabled && h != all {
			t.Fatalf("round %d: endpoint enabled=%v with %d of %d queued deliveries held", i, got.Enabled, h, all)
		}
		toggle := &enable
		if i%3 == 2 {
			toggle = &disable // a pause, then an enabling, between rounds
			if _, err := api.Update(ctx, account, ep.ID, hooks.Change{Enabled: toggle}); err != nil {
				t.Fatal(err)
			}
			toggle = &enable
		}
		if _, err := api.Update(ctx, account, ep.ID, hooks.Change{Enabled: toggle}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMatchingByTypeAndBrand: an event goes to the account's endpoints subscribed to its
// type (or "*"); an endpoint of one brand gets a booking's events by the booking's brand and
// property-level events by the brand's properties (a brand listing none has them all, an
// unknown brand none); one message's events are recorded for each endpoint they match.
func TestMatchingByTypeAndBrand(t *testing.T) {
	ctx := context.Background()
	h, _, account := open(t)
	settings, _ := json.Marshal(contract.Settings{Brands: []contract.Brand{{ID: 1, Properties: []int64{10}}, {ID: 2}}})
	if _, _, err := mongostore.KeepNewer(ctx, storeOf(h).Snapshots(), account+":settings", 1, string(settings)); err != nil {
		t.Fatal(err)
	}
	eps := map[string]webhook.Endpoint{}
	for name, ep := range map[string]webhook.Endpoint{
		"all":      {EventTypes: []string{"*"}},
		"bookings": {EventTypes: []string{webhook.BookingCreated}},
		"brand1":   {EventTypes: []string{"*"}, BrandID: 1},
		"brand2":   {EventTypes: []string{"*"}, BrandID: 2},
		"brand3":   {EventTypes: []string{"*"}, BrandID: 3},
	} {
		ep.Account, ep.URL = account, "https://example.com/"+name
		created, err := h.Create(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		eps[name] = created
	}
	// other: an endpoint of another account, subscribed to everything.
	other, err := h.Create(ctx, webhook.Endpoint{Account: account + "x", URL: "https://example.com/other", EventTypes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(id, typ string, property, brand int64) webhook.Event {
		return webhook.Event{ID: id, Account: account, Type: typ, PropertyID: property, BrandID: brand, BookingID: 7, At: time.Now(), Data: []byte(`{}`)}
	}
	rows := []struct {
		e    webhook.Event
		want []string
	}{
		{ev("msg_b1", webhook.BookingCreated, 11, 1), []string{"all", "bookings", "brand1"}},
		{ev("msg_b0", webhook.BookingCreated, 10, 0), []string{"all", "bookings"}},
		{ev("msg_b2", webhook.BookingCancelled, 10, 2), []string{"all", "brand2"}},
		{ev("msg_p10", webhook.PropertyUpdated, 10, 0), []string{"all", "brand1", "brand2"}},
		{ev("msg_p11", webhook.PropertyUpdated, 11, 0), []string{"all", "brand2"}},
	}
	evs := make([]webhook.Event, len(rows))
	for i, r := range rows {
		evs[i] = r.e
	}
	if err := h.EmitAll(ctx, evs); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var got []string
		for name, ep := range eps {
			if _, err := storeOf(h).Data(ctx, webhook.Delivery{Account: account, WebhookID: ep.ID, MessageID: r.e.ID}); err == nil {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, r.want) {
			t.Errorf("%s %s (property %d, brand %d) went to %v, want %v", r.e.ID, r.e.Type, r.e.PropertyID, r.e.BrandID, got, r.want)
		}
		for _, acc := range []string{account, other.Account} {
			if _, err := storeOf(h).Data(ctx, webhook.Delivery{Account: acc, WebhookID: other.ID, MessageID: r.e.ID}); err == nil {
				t.Errorf("%s went to another account's endpoint", r.e.ID)
			}
		}
	}
	if err := h.EmitAll(ctx, []webhook.Event{ev("msg_x", webhook.PropertyUpdated, 1, 0), {ID: "msg_y", Account: "another"}}); err == nil {
		t.Error("events of two accounts emitted together")
	}
}
