package hookcrash

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestKillDuringBurst writes a burst of bookings (4 clients, 3 properties, one booking in
// five cancelled at once) while integration-svc delivers their webhooks, kills it with
// SIGKILL twice while the receiver has some of the events but not all — each time while the
// receiver holds one received webhook unanswered, so an attempt is cut off mid-flight — keeps
// writing, starts it again each time, and checks that:
//   - every event the writes caused arrives (one booking.created and one
//     availability.changed per booking answered, one booking.cancelled and one more
//     availability.changed per cancel answered), and no other;
//   - each duplicate (same webhook-id) has the same type and ids as the first receipt, and
//     the webhook held at each kill arrives again under its webhook-id;
//   - per property, a booking's booking.created arrives before its booking.cancelled;
//   - the delivery log ends with every delivery delivered and none pending (nothing stuck),
//     and holds exactly the messages received.
func TestKillDuringBurst(t *testing.T) {
	ensureRunning(t)
	acc := newAccount(t)
	var pids [3]int64
	for i := range pids {
		pids[i] = bookable(t, acc, fmt.Sprintf("HKB%d", i+1))
	}
	rc := newReceiver(t)
	ep := createEndpoint(t, acc, rc, "booking.created", "booking.cancelled", "availability.changed")

	const (
		bookings = 150
		writers  = 4
	)
	var (
		mu        sync.Mutex
		property  = map[int64]int64{} // booking → property, of every create answered
		cancelled = map[int64]bool{}  // bookings whose cancel was answered
		failures  []string
		written   int
	)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < bookings; k += writers {
				pid := pids[k%3]
				var d struct {
					BookingID int64 `json:"bookingId"`
				}
				err := acc.b("create", guest(pid, 10+k/3), &d)
				if err == nil && d.BookingID == 0 {
					err = fmt.Errorf("create answered no bookingId")
				}
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				mu.Lock()
				property[d.BookingID] = pid
				written++
				mu.Unlock()
				if k%5 == 0 {
					err := acc.b("cancel", obj{"bookingId": d.BookingID}, nil)
					mu.Lock()
					if err != nil {
						failures = append(failures, err.Error())
					} else {
						cancelled[d.BookingID] = true
					}
					mu.Unlock()
				}
			}
		}()
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()
	isWriting := func() bool {
		select {
		case <-writing:
			return false
		default:
			return true
		}
	}

	// Two kills, each once the receiver has at least 20 more messages than at the previous
	// restart, so that each interrupts deliveries in progress.
	ctx := context.Background()
	mark := 0
	var killedAt []int // webhooks received at each kill
	var held []string  // the webhook-id in flight at each kill
	for kill := 1; kill <= 2; kill++ {
		holds(t, fmt.Sprintf("20 more webhooks before kill %d", kill), 60*time.Second, func() bool {
			_, n := rc.count()
			return n >= mark+20
		})
		// The next webhook is received and then held unanswered: the kill comes while its
		// attempt is in flight, so integration-svc never learns it arrived.
		trap := rc.arm()
		select {
		case id := <-trap:
			held = append(held, id)
		case <-time.After(30 * time.Second):
			t.Fatalf("no webhook reached the receiver within 30 s before kill %d", kill)
		}
		svc.Kill()
		rc.releaseAll()
		_, n := rc.count()
		mu.Lock()
		w, c := written, len(cancelled)
		mu.Unlock()
		t.Logf("kill %d: SIGKILL after %d webhooks received, %d bookings and %d cancels answered so far (writers still running: %v)",
			kill, n, w, c, isWriting())
		killedAt = append(killedAt, n)
		time.Sleep(300 * time.Millisecond) // writes go on while it is down
		began := time.Now()
		if err := svc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("restart %d: ready in %v", kill, time.Since(began).Round(time.Millisecond))
		_, mark = rc.count()
	}
	<-writing
	wrote := time.Now()
	mu.Lock()
	if len(failures) > 0 {
		t.Errorf("%d writes failed (integration-svc is not on their path): %v", len(failures), failures)
	}
	t.Logf("burst: %d bookings, %d cancelled", len(property), len(cancelled))
	mu.Unlock()

	// Every event the writes caused arrives: distinct message ids per (type, booking).
	want := map[string]int{}
	for id := range property {
		want[key("booking.created", id)] = 1
		want[key("availability.changed", id)] = 1
		if cancelled[id] {
			want[key("booking.cancelled", id)] = 1
			want[key("availability.changed", id)] = 2
		}
	}
	distinct := func(msgs []message) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		for _, m := range msgs {
			k := key(m.Type, bookingOf(m))
			if out[k] == nil {
				out[k] = map[string]bool{}
			}
			out[k][m.ID] = true
		}
		return out
	}
	missing := func(msgs []message) []string {
		got := distinct(msgs)
		var out []string
		for k, n := range want {
			if len(got[k]) < n {
				out = append(out, fmt.Sprintf("%s (%d of %d)", k, len(got[k]), n))
			}
		}
		return out
	}
	total := 0
	for _, n := range want {
		total += n
	}
	for i, n := range killedAt {
		if n >= total {
			t.Errorf("kill %d came after all %d events had arrived: it interrupted no delivery", i+1, total)
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(missing(rc.all(t))) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	msgs := rc.all(t)
	if m := missing(msgs); len(m) > 0 {
		t.Logf("where the missing events stand:\n%s", whereAre(acc, m))
		t.Fatalf("%d events never arrived, e.g. %v", len(m), m[:min(len(m), 10)])
	}
	t.Logf("every event arrived %v after the last write was answered", time.Since(wrote).Round(time.Millisecond))
	for k, ids := range distinct(msgs) {
		if len(ids) != want[k] {
			t.Errorf("%s: %d distinct messages, want %d", k, len(ids), want[k])
		}
	}

	// Duplicates: the same webhook-id always carries the same event.
	first := map[string]message{}
	dups := 0
	for _, m := range msgs {
		f, seen := first[m.ID]
		if !seen {
			first[m.ID] = m
			continue
		}
		dups++
		if identity(f) != identity(m) {
			t.Errorf("webhook-id %s carried %s, then %s", m.ID, identity(f), identity(m))
		}
	}
	t.Logf("%d webhooks received, %d distinct, %d duplicates (same webhook-id)", len(msgs), len(first), dups)
	// The attempt each kill interrupted after receipt is sent again, under the same id.
	for i, id := range held {
		n := 0
		for _, m := range msgs {
			if m.ID == id {
				n++
			}
		}
		if n < 2 {
			t.Errorf("kill %d: %s, received but unanswered when integration-svc died, arrived %d time(s), want again after the restart", i+1, id, n)
		}
	}

	// Per property, a booking's creation arrives before its cancellation.
	at := map[string]int{} // first receipt of (type, booking)
	for i, m := range msgs {
		k := key(m.Type, bookingOf(m))
		if _, ok := at[k]; !ok {
			at[k] = i
		}
		if pid, ok := m.Data["property_id"].(float64); !ok || property[bookingOf(m)] != int64(pid) {
			t.Errorf("%s of booking %d names property %v, want %d", m.Type, bookingOf(m), m.Data["property_id"], property[bookingOf(m)])
		}
	}
	for id := range cancelled {
		if at[key("booking.created", id)] > at[key("booking.cancelled", id)] {
			t.Errorf("booking %d: booking.cancelled arrived before booking.created", id)
		}
	}

	// Nothing stuck: the log ends with nothing pending, and holds exactly what arrived.
	holds(t, "no delivery pending in the log", 30*time.Second, func() bool {
		return len(deliveries(t, acc, ep.WebhookID, "pending")) == 0
	})
	log := deliveries(t, acc, ep.WebhookID, "")
	if len(log) != len(first) {
		t.Errorf("the log holds %d deliveries, the receiver got %d distinct messages", len(log), len(first))
	}
	for _, d := range log {
		if d.Status != "delivered" {
			t.Errorf("delivery %s (%s) is %s: %+v", d.MessageID, d.EventType, d.Status, d.Attempts)
		}
		if _, ok := first[d.MessageID]; !ok {
			t.Errorf("delivery %s (%s) in the log never arrived", d.MessageID, d.EventType)
		}
	}
}

func key(typ string, booking int64) string { return fmt.Sprintf("%s:%d", typ, booking) }

// bookingOf is the booking_id a message's data names (0 when none).
func bookingOf(m message) int64 {
	id, _ := m.Data["booking_id"].(float64)
	return int64(id)
}

// identity is what must not differ between two receipts of one webhook-id.
func identity(m message) string {
	return fmt.Sprintf("%s booking=%v property=%v status=%v dates=%v..%v reason=%v",
		m.Type, m.Data["booking_id"], m.Data["property_id"], m.Data["status"], m.Data["start_date"], m.Data["end_date"], m.Data["reason"])
}

// whereAre describes, for a failure message, how far the bookings of the missing events
// (keys "type:booking (n of m)") got: booking-svc's record and outbox intents, integration-svc's
// kept snapshot, deliveries and queue documents, read from the stores.
func whereAre(acc account, missing []string) string {
	ctx := context.Background()
	var b strings.Builder
	seen := map[string]bool{}
	for _, m := range missing {
		_, rest, _ := strings.Cut(m, ":")
		id, _, _ := strings.Cut(rest, " ")
		if seen[id] {
			continue
		}
		seen[id] = true
		agg := acc.AccountID + ":booking:" + id
		dump := func(db, coll string, f bson.D) {
			cur, err := mongoDB.Database(db).Collection(coll).Find(ctx, f)
			if err != nil {
				fmt.Fprintf(&b, "  %s.%s: %v\n", db, coll, err)
				return
			}
			var docs []bson.M
			_ = cur.All(ctx, &docs)
			for _, d := range docs {
				delete(d, "data")
				delete(d, "guest")
				fmt.Fprintf(&b, "  %s.%s: %v\n", db, coll, d)
			}
			if len(docs) == 0 {
				fmt.Fprintf(&b, "  %s.%s: none for %v\n", db, coll, f)
			}
		}
		n, _ := strconv.ParseInt(id, 10, 64)
		fmt.Fprintf(&b, "booking %s:\n", id)
		dump("vros_booking", "bookings", bson.D{{Key: "account_id", Value: acc.AccountID}, {Key: "booking_id", Value: n}})
		dump("vros_booking", "outbox", bson.D{{Key: "aggregate", Value: agg}})
		dump("vros_integration", "snapshots", bson.D{{Key: "_id", Value: agg}})
		dump("vros_integration", "deliveries", bson.D{{Key: "account_id", Value: acc.AccountID}, {Key: "booking_id", Value: n}})
		dump("vros_integration", "due", bson.D{{Key: "account_id", Value: acc.AccountID}})
		dump("vros_integration", "lanes", bson.D{{Key: "account_id", Value: acc.AccountID}})
	}
	return b.String()
}
