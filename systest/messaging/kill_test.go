package messaging

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/smtpcatcher"
)

// TestKillDuringBurst: 200 bookings of one account, made through edge by 8 clients at once,
// while messaging-svc runs as its own binary (the stack's replica stopped for the test, the
// same store and consumer group); the process is killed with SIGKILL once 40 of the
// confirmations have arrived, while the rest are being sent (a message seen `sending`, when
// one is), and started again; the first 120 bookings are made before the kill, the other 80
// from the kill on, while the process is dead and starting again.
// Then every booking's confirmation has arrived, each under the Message-ID of its natural
// id; one arrives twice only if it was being sent when the process died (the crash window of
// docs/messaging.md, "Exactly once": a send repeated after the server accepted it but before
// the record), and then with the same Message-ID, which mail clients show once; the store
// holds one message per booking, and the log (the stack's replica back) lists each sent.
func TestKillDuringBurst(t *testing.T) {
	ctx := context.Background()
	acc := newAccount(t, "Burst Stays", nil)
	// The account sends confirmations alone: the other triggers off (/api/message-trigger),
	// so that the store holds the burst's 200 messages and no more.
	var off []obj
	for _, name := range []string{"booking.modified", "booking.cancelled", "payment.received", "payment.failed",
		"payment.due_soon", "deposit.held", "deposit.released", "stay.arrival", "stay.checkout", "stay.thanks",
		"owner.booking", "owner.cancellation", "owner.channel_conflict"} {
		off = append(off, obj{"trigger": name, "enabled": false})
	}
	acc.a(t, "message-trigger", obj{"action": "update", "triggers": off}).ok(t)

	// The binary alone: the stack's replica stops until the end of the test, when the binary
	// stops (the other tests run on the stack's replica and its test clock).
	st.StopMessaging()
	back := false
	replicaBack := func() {
		svc.Stop()
		if !back {
			back = true
			if err := st.StartMessaging(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(replicaBack)
	apitest.EnsureRunning(t, svc)
	const (
		bookings  = 200
		clients   = 8
		killAfter = 40  // confirmations arrived before the kill
		before    = 120 // bookings made before the kill; the rest from the kill on
	)
	var props []property
	for i := range 4 {
		props = append(props, acc.newProperty(t, fmt.Sprintf("BURST%d", i), "UTC"))
	}

	// The clients: booking i is a night of its own at one of the properties.
	type made struct {
		g       guest
		booking int64
	}
	var (
		mu       sync.Mutex
		done     []made
		failures []string
		created  atomic.Int64
	)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p, night := props[i%len(props)], 150+i/len(props)
				g := acc.guest(fmt.Sprintf("Guest%03d", i), "Burst")
				r, err := apitest.Send(client, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil,
					acc.BBody("create", stay(p, g, day(night), day(night+1))))
				var b struct {
					Status int `json:"status"`
					Data   struct {
						BookingID int64 `json:"bookingId"`
					} `json:"data"`
				}
				if err == nil {
					err = json.Unmarshal(r.Body, &b)
				}
				mu.Lock()
				if err != nil || r.Code != http.StatusOK || b.Status != 0 || b.Data.BookingID < 1 {
					failures = append(failures, fmt.Sprintf("booking %d: HTTP %d %s (%v)", i, r.Code, r.Body, err))
				} else {
					done = append(done, made{g, b.Data.BookingID})
				}
				mu.Unlock()
				created.Add(1)
			}
		}()
	}
	killed := make(chan struct{})
	go func() {
		for i := range bookings {
			if i == before {
				<-killed
			}
			jobs <- i
		}
		close(jobs)
	}()
	release := sync.OnceFunc(func() { close(killed) })
	t.Cleanup(wg.Wait)
	t.Cleanup(release) // before wg.Wait, whatever happened

	// burst is the account's guests' messages: confirmations only.
	burst := func(msgs []smtpcatcher.Message) []smtpcatcher.Message {
		var out []smtpcatcher.Message
		for _, m := range msgs {
			if len(m.EnvelopeTo) == 1 && strings.HasSuffix(m.EnvelopeTo[0], "@"+acc.mailDomain()) {
				out = append(out, m)
			}
		}
		return out
	}
	// The kill: once killAfter confirmations have arrived, at a moment when a message is
	// being sent if one is seen so (polled; the verdicts do not depend on it), else once
	// twice as many have.
	messages := mongoDB.Database("vros_messaging").Collection("messages")
	eventually.Holds(t, fmt.Sprintf("%d confirmations arrived before the kill", killAfter), 3*within, func() bool {
		arrived := len(burst(catcher.Messages()))
		if arrived < killAfter {
			return false
		}
		n, err := messages.CountDocuments(ctx, bson.D{{Key: "account", Value: acc.AccountID},
			{Key: "trigger", Value: "booking.confirmed"}, {Key: "status", Value: "sending"}})
		return (err == nil && n > 0) || arrived >= 2*killAfter
	})
	svc.Kill()
	atKill := created.Load()
	release()
	// What the dead process was sending stays "sending" until its lease (10 s) ends, after
	// its restart: those are the only messages a repeated send may deliver twice.
	var sending []string
	cur, err := messages.Find(ctx,
		bson.D{{Key: "account", Value: acc.AccountID}, {Key: "trigger", Value: "booking.confirmed"}, {Key: "status", Value: "sending"}})
	if err != nil {
		t.Fatal(err)
	}
	var held []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &held); err != nil {
		t.Fatal(err)
	}
	window := map[string]bool{}
	for _, h := range held {
		window[messageID(h.ID)] = true
		sending = append(sending, h.ID)
	}
	t.Logf("SIGKILL after %d bookings made and %d confirmations arrived; %d messages being sent: %v",
		atKill, len(burst(catcher.Messages())), len(sending), sending)
	began := time.Now()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("messaging-svc restarted, ready in %v", time.Since(began).Round(time.Millisecond))

	wg.Wait()
	mu.Lock()
	for _, f := range failures {
		t.Error(f)
	}
	mu.Unlock()
	if len(done) != bookings {
		t.Fatalf("%d of %d bookings made", len(done), bookings)
	}
	want := map[string]made{} // Message-ID → the booking
	for _, d := range done {
		want[messageID(acc.natural("booking.confirmed", d.booking, "once"))] = d
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	msgs, err := catcher.Wait(wctx, func(msgs []smtpcatcher.Message) bool {
		seen := map[string]bool{}
		for _, m := range burst(msgs) {
			if _, ok := want[m.MessageID]; ok {
				seen[m.MessageID] = true
			}
		}
		return len(seen) == bookings
	})
	if err != nil {
		missing(t, acc, msgs, want, burst)
		t.Fatalf("not every confirmation arrived: %v", err)
	}

	count := map[string]int{}
	for _, m := range burst(msgs) {
		d, ok := want[m.MessageID]
		switch {
		case !ok:
			t.Errorf("a message to %s with Message-ID %s, subject %q, is no booking's confirmation", m.EnvelopeTo, m.MessageID, m.Subject)
		case m.EnvelopeTo[0] != d.g.email:
			t.Errorf("booking %d's confirmation went to %s, want %s", d.booking, m.EnvelopeTo[0], d.g.email)
		case !strings.Contains(m.HTML, fmt.Sprint(d.booking)):
			t.Errorf("booking %d's confirmation does not name it:\n%s", d.booking, m.HTML)
		}
		count[m.MessageID]++
	}
	twice := 0
	for id, n := range count {
		if n > 1 {
			twice++
			if !window[id] || n > 2 {
				t.Errorf("booking %d's confirmation arrived %d times, and was not being sent at the kill", want[id].booking, n)
			}
		}
	}
	t.Logf("%d confirmations, %d distinct Message-IDs; %d arrived twice (each being sent at the kill, the same Message-ID)",
		len(burst(msgs)), len(count), twice)

	// The store and the log: one message per booking, each sent, and nothing else.
	replicaBack()
	n, err := messages.CountDocuments(ctx, bson.D{{Key: "account", Value: acc.AccountID}})
	if err != nil || n != bookings {
		t.Errorf("the store holds %d messages of the account (%v), want the %d confirmations", n, err, bookings)
	}
	var page struct {
		Total int64 `json:"total"`
	}
	eventually.Holds(t, "the log lists every confirmation sent", within, func() bool {
		acc.a(t, "message-log", obj{"action": "list", "trigger": "booking.confirmed", "status": "sent", "limit": 1}).ok(t).data(t, &page)
		return page.Total == bookings
	})
}

// missing says, for each confirmation that has not arrived, where its message is: its
// document in the store (status, attempts, answer, lease), or none and whether messaging-svc
// has the booking's snapshot; and how many events are parked.
func missing[M any](t *testing.T, acc account, msgs []smtpcatcher.Message, want map[string]M,
	burst func([]smtpcatcher.Message) []smtpcatcher.Message) {
	t.Helper()
	ctx := context.Background()
	db := mongoDB.Database("vros_messaging")
	seen := map[string]bool{}
	for _, m := range burst(msgs) {
		seen[m.MessageID] = true
	}
	shown := 0
	for id := range want {
		if seen[id] || shown == 20 {
			continue
		}
		shown++
		var doc bson.M
		err := db.Collection("messages").FindOne(ctx, bson.D{{Key: "account", Value: acc.AccountID},
			{Key: "trigger", Value: "booking.confirmed"}, {Key: "message_id", Value: strings.Trim(id, "<>")}}).Decode(&doc)
		if err == nil {
			t.Logf("missing %s: %v", id, doc)
			continue
		}
		t.Logf("missing %s: no message sent under it (%v)", id, err)
	}
	var all []bson.M
	cur, err := db.Collection("messages").Find(ctx, bson.D{{Key: "account", Value: acc.AccountID},
		{Key: "trigger", Value: "booking.confirmed"}, {Key: "status", Value: bson.D{{Key: "$ne", Value: "sent"}}}})
	if err == nil && cur.All(ctx, &all) == nil {
		t.Logf("%d confirmations not sent in the store:", len(all))
		for i, d := range all {
			if i < 20 {
				t.Logf("  %v", d)
			}
		}
	}
	n, _ := db.Collection("messages").CountDocuments(ctx, bson.D{{Key: "account", Value: acc.AccountID}, {Key: "trigger", Value: "booking.confirmed"}})
	snaps, _ := db.Collection("booking_snapshots").CountDocuments(ctx, bson.D{{Key: "account", Value: acc.AccountID}})
	parked, _ := db.Collection("parked_events").CountDocuments(ctx, bson.D{})
	t.Logf("the store: %d confirmations, %d booking snapshots of the account, %d parked events", n, snaps, parked)
}
