package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// The queue holds exactly the pending deliveries: a delivered or given-up one leaves it, a
// retried one stays with its new schedule, and the log keeps them all.
func TestQueueHoldsOnlyPending(t *testing.T) {
	f := setup(t)
	base := time.Now().UTC()
	for i, m := range []string{"msg_q1", "msg_q2", "msg_q3"} {
		f.add(t, m, 1, base.Add(time.Duration(i)*time.Millisecond))
	}
	h, ok := f.head(t, 1)
	if !ok || h.MessageID != "msg_q1" {
		t.Fatalf("head %+v %v", h, ok)
	}
	f.finish(t, h, true, nil) // delivered
	h, _ = f.head(t, 1)
	f.finish(t, h, false, nil) // given up
	h, _ = f.head(t, 1)
	later := time.Now().Add(time.Hour).UTC()
	f.finish(t, h, false, &later) // retried later
	q := f.queued(t)
	if len(q) != 1 || !q["msg_q3"] {
		t.Fatalf("queue %v", q)
	}
	h, ok = f.head(t, 1)
	if !ok || h.Attempts != 1 || h.NextAttemptAt == nil || !h.NextAttemptAt.Equal(later.Truncate(time.Millisecond)) {
		t.Fatalf("retried head %+v", h)
	}
	dels, _, err := f.st.ListDeliveries(context.Background(), f.account, f.ep.ID, hooks.DeliveryFilter{Limit: 10})
	if err != nil || len(dels) != 3 {
		t.Fatalf("log %d %v", len(dels), err)
	}
	status := map[string]string{}
	for _, d := range dels {
		status[d.MessageID] = d.Status
	}
	if status["msg_q1"] != webhook.StatusDelivered || status["msg_q2"] != webhook.StatusFailed || status["msg_q3"] != webhook.StatusPending {
		t.Fatalf("log statuses %v", status)
	}
}

// Nothing lost, nothing stuck, when a process stops between two writes.
func TestQueueAfterStopBetweenWrites(t *testing.T) {
	ctx := context.Background()
	queue := db.Collection(store.Queue)
	cases := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"recorded, not queued: the message derived again queues it", func(t *testing.T, f *fixture) {
			f.add(t, "msg_s1", 1, time.Now())
			if _, err := queue.DeleteOne(ctx, bson.D{{Key: "_id", Value: store.DeliveryKey(f.account, f.ep.ID, "msg_s1")}}); err != nil {
				t.Fatal(err)
			}
			f.add(t, "msg_s1", 1, time.Now())
			if h, ok := f.head(t, 1); !ok || h.MessageID != "msg_s1" {
				t.Fatalf("not queued again: %+v %v", h, ok)
			}
		}},
		{"recorded, not queued: the next start queues it", func(t *testing.T, f *fixture) {
			f.add(t, "msg_s2", 1, time.Now())
			if _, err := queue.DeleteOne(ctx, bson.D{{Key: "_id", Value: store.DeliveryKey(f.account, f.ep.ID, "msg_s2")}}); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Open(ctx, db); err != nil {
				t.Fatal(err)
			}
			if h, ok := f.head(t, 1); !ok || h.MessageID != "msg_s2" {
				t.Fatalf("not queued at start: %+v %v", h, ok)
			}
		}},
		{"delivered, queue not updated: the next lease drops it and the lane goes on", func(t *testing.T, f *fixture) {
			f.add(t, "msg_s3", 1, time.Now())
			f.add(t, "msg_s4", 1, time.Now().Add(time.Millisecond))
			h, _ := f.head(t, 1)
			now := time.Now().UTC()
			del, _, err := f.st.Lease(ctx, h, now, now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.st.Finish(ctx, del, webhook.Attempt{Account: f.account, WebhookID: f.ep.ID, MessageID: "msg_s3", Attempt: 1, At: now}, true, nil); err != nil {
				t.Fatal(err)
			}
			// the queue document as the finish found it, leased (the stop cut its removal)
			if _, err := queue.InsertOne(ctx, bson.D{{Key: "_id", Value: store.DeliveryKey(f.account, f.ep.ID, "msg_s3")},
				{Key: "account_id", Value: f.account}, {Key: "webhook_id", Value: f.ep.ID}, {Key: "message_id", Value: "msg_s3"},
				{Key: "lane", Value: store.Lane(f.account, f.ep.ID, 1)}, {Key: "event_at", Value: h.EventAt}, {Key: "hold", Value: false},
				{Key: "attempts", Value: 0}, {Key: "lease_until", Value: time.Time{}}, {Key: "lease_token", Value: del.Lease}}); err != nil {
				t.Fatal(err)
			}
			stale, _ := f.head(t, 1)
			if _, leased, err := f.st.Lease(ctx, stale, now, now.Add(time.Minute)); err != nil || leased {
				t.Fatalf("a delivered delivery leased again: %v %v", leased, err)
			}
			if h, ok := f.head(t, 1); !ok || h.MessageID != "msg_s4" {
				t.Fatalf("lane stuck on the stale document: %+v %v", h, ok)
			}
		}},
		{"already delivered, derived again: not queued again", func(t *testing.T, f *fixture) {
			f.add(t, "msg_s5", 1, time.Now())
			h, _ := f.head(t, 1)
			f.finish(t, h, true, nil)
			f.add(t, "msg_s5", 1, time.Now())
			if q := f.queued(t); len(q) != 0 {
				t.Fatalf("queued again: %v", q)
			}
		}},
		{"leased by a stopped process: taken again once the lease ends", func(t *testing.T, f *fixture) {
			f.add(t, "msg_s6", 1, time.Now())
			h, _ := f.head(t, 1)
			now := time.Now().UTC()
			if _, ok, err := f.st.Lease(ctx, h, now, now.Add(50*time.Millisecond)); err != nil || !ok {
				t.Fatal(ok, err)
			}
			if _, ok, _ := f.st.Lease(ctx, h, now, now.Add(time.Minute)); ok {
				t.Fatal("leased twice")
			}
			h, _ = f.head(t, 1)
			later := now.Add(100 * time.Millisecond)
			if del, ok, err := f.st.Lease(ctx, h, later, later.Add(time.Minute)); err != nil || !ok || string(del.Data) != `{"n":"msg_s6"}` {
				t.Fatalf("not taken after the lease: %v %v %s", ok, err, del.Data)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, setup(t)) })
	}
}

// A held endpoint's deliveries leave the heads and cannot be leased; a release makes them
// due now; deleting the endpoint empties its queue; a redelivery queues again.
func TestQueueHoldDeleteRedeliver(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	f.add(t, "msg_h1", 1, time.Now())
	h, _ := f.head(t, 1)
	f.enable(t, false)
	if _, ok := f.head(t, 1); ok {
		t.Fatal("a held delivery is a head")
	}
	now := time.Now().UTC()
	if _, ok, _ := f.st.Lease(ctx, h, now, now.Add(time.Minute)); ok {
		t.Fatal("a held delivery leased")
	}
	f.enable(t, true)
	h, ok := f.head(t, 1)
	if !ok {
		t.Fatal("released delivery not a head")
	}
	f.finish(t, h, true, nil)
	n, err := f.st.Redeliver(ctx, f.account, f.ep.ID, "msg_h1", time.Time{}, time.Time{}, false, time.Now().UTC())
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if h, ok := f.head(t, 1); !ok || h.MessageID != "msg_h1" || h.Attempts != 0 {
		t.Fatalf("redelivery not queued: %+v", h)
	}
	if err := f.st.DeleteEndpoint(ctx, f.account, f.ep.ID); err != nil {
		t.Fatal(err)
	}
	if q := f.queued(t); len(q) != 0 {
		t.Fatalf("queue after delete: %v", q)
	}
}

// TestRepairHoldsReleasesEnabledAndDropsDeleted: deliveries recorded from a copy of their
// endpoint read just before a change (held by a copy that said disabled; for an endpoint
// deleted meanwhile) are repaired: the enabled endpoint's are released and due, the deleted
// one's are gone, and a disabled endpoint's stay held.
func TestRepairHoldsReleasesEnabledAndDropsDeleted(t *testing.T) {
	ctx := context.Background()
	enabled, deleted, disabled := setup(t), setup(t), setup(t)
	for _, f := range []*fixture{enabled, deleted, disabled} {
		stale := f.ep
		stale.Enabled = false
		e := webhook.Event{ID: "msg_r1", Account: f.account, Type: webhook.PropertyUpdated, PropertyID: 1, At: time.Now(), Data: []byte(`{}`)}
		if err := f.st.AddDeliveries(ctx, e, []webhook.Endpoint{stale}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.head(t, 1); ok {
			t.Fatal("a delivery recorded from a disabled copy is not held")
		}
	}
	if err := deleted.st.DeleteEndpoint(ctx, deleted.account, deleted.ep.ID); err != nil {
		t.Fatal(err)
	}
	deleted.add(t, "msg_r2", 1, time.Now()) // recorded just after the deletion
	disabled.enable(t, false)
	if _, err := enabled.st.RepairHolds(ctx, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if h, ok := enabled.head(t, 1); !ok || h.MessageID != "msg_r1" || h.NextAttemptAt == nil || h.NextAttemptAt.After(time.Now()) {
		t.Fatalf("the enabled endpoint's delivery is not released and due: %+v %v", h, ok)
	}
	if q := deleted.queued(t); len(q) != 1 || !q["msg_r2"] {
		// msg_r2 is not held: the deliverer drops it when it finds the endpoint gone.
		t.Fatalf("the deleted endpoint's queue after the repair: %v", q)
	}
	if _, err := deleted.st.Data(ctx, webhook.Delivery{Account: deleted.account, WebhookID: deleted.ep.ID, MessageID: "msg_r1"}); !errors.Is(err, hooks.ErrNotFound) {
		t.Fatalf("the deleted endpoint's held delivery is still logged: %v", err)
	}
	if q := disabled.queued(t); len(q) != 1 {
		t.Fatalf("the disabled endpoint's queue: %v", q)
	}
	if _, ok := disabled.head(t, 1); ok {
		t.Fatal("the disabled endpoint's delivery was released")
	}
}

// A redelivery made while an attempt is in flight wins: the attempt's outcome (here its last,
// failed) is logged but neither fails the delivery nor takes it out of the queue.
func TestRedeliveryWhileAttemptInFlight(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	f.add(t, "msg_fl", 1, time.Now())
	h, _ := f.head(t, 1)
	now := time.Now().UTC()
	del, ok, err := f.st.Lease(ctx, h, now, now.Add(time.Minute))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if n, err := f.st.Redeliver(ctx, f.account, f.ep.ID, "msg_fl", time.Time{}, time.Time{}, false, now); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	a := webhook.Attempt{Account: f.account, WebhookID: f.ep.ID, MessageID: "msg_fl", Attempt: 1, At: now, Error: "answered 503"}
	if err := f.st.Finish(ctx, del, a, false, nil); err != nil {
		t.Fatal(err)
	}
	if h, ok := f.head(t, 1); !ok || h.MessageID != "msg_fl" || h.Attempts != 0 {
		t.Fatalf("the redelivery is not queued afresh: %+v %v", h, ok)
	}
	dels, atts, err := f.st.ListDeliveries(ctx, f.account, f.ep.ID, hooks.DeliveryFilter{Limit: 10})
	if err != nil || len(dels) != 1 || dels[0].Status != webhook.StatusPending || len(atts["msg_fl"]) != 1 {
		t.Fatalf("log: %+v attempts %v (%v)", dels, atts, err)
	}
}

// Queue order within a lane: event time, then the derived order (Seq), then the id.
func TestLaneOrderBySeq(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	at := time.Now()
	for i, id := range []string{"msg_z", "msg_a"} {
		e := webhook.Event{ID: id, Account: f.account, Type: webhook.PropertyUpdated, PropertyID: 1, At: at, Seq: i, Data: []byte(`{}`)}
		if err := f.st.AddDeliveries(ctx, e, []webhook.Endpoint{f.ep}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	if h, ok := f.head(t, 1); !ok || h.MessageID != "msg_z" {
		t.Fatalf("head %+v, want msg_z (seq 0)", h)
	}
}
