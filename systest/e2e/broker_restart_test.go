package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
	poll "github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
)

// brokerControl stops and starts the stack's broker: the embedded one, or Apache Kafka
// when make test-real (vros-infra) started it.
func brokerControl(t *testing.T) (stop, start func() error, which string) {
	t.Helper()
	if st.Infra != nil {
		return func() error { st.Infra.StopKafka(); return nil }, st.Infra.StartKafka, "the embedded broker"
	}
	s := servers.FromEnv()
	if !s.CanRestartKafka() {
		t.Skip("the broker of VROS_KAFKA_BROKERS is not one the test can restart (" + servers.EnvControl + " unset)")
	}
	ctx := context.Background()
	return func() error { return s.StopKafka(ctx) }, func() error { return s.StartKafka(ctx) }, "Apache Kafka"
}

// converge waits for f: after a broker restart the relays back off and the consumers
// rejoin their groups before the views catch up.
func converge(t *testing.T, what string, f func() bool) {
	t.Helper()
	poll.Holds(t, what, viewsWithin, f)
}

// TestBrokerRestartDuringWrites: a property is renamed and booked again and again while
// the broker is stopped and started. Every write is accepted and every service stays ready
// (its /readyz on the internal listener answers 200: ready means "can serve", and the
// outbox and the views serve without the broker); once the broker is back,
// the outboxes empty, booking-svc's view and the catalog converge on the last name and
// every booking, and the property's snapshots on its topic never go back a version.
func TestBrokerRestartDuringWrites(t *testing.T) {
	stopBroker, startBroker, which := brokerControl(t)
	acc := newAccount(t)
	pid := bookable(t, acc, "RST1")
	spid := strconv.Itoa(pid)

	var down atomic.Bool
	var took time.Duration
	restarted, finished := make(chan error, 1), make(chan struct{})
	t.Cleanup(func() { <-finished }) // the broker is back before the next test, even after a failure
	go func() {
		defer close(finished)
		time.Sleep(500 * time.Millisecond) // writes before the outage
		if err := stopBroker(); err != nil {
			restarted <- fmt.Errorf("stop: %w", err)
			return
		}
		down.Store(true)
		time.Sleep(2 * time.Second) // writes while it is down
		start := time.Now()
		err := startBroker()
		took = time.Since(start)
		down.Store(false)
		restarted <- err
	}()

	// One rename and one one-night booking (a night apart, so each is its own range) per
	// round, until a few rounds after the broker is back.
	var lastName string
	var booked, whileDown, after int
	readyWhileDown := false
	for i := 0; after < 5; i++ {
		select {
		case err := <-restarted:
			if err != nil {
				t.Fatal(err)
			}
			after = 1
		default:
			if after > 0 {
				after++
			}
		}
		wasDown := down.Load()
		p := validProperty("RST1")
		lastName = fmt.Sprintf("Renamed During Restart %d", i)
		p["name"] = lastName
		acc.a(t, "property", obj{"action": "update", "property": p}).status(t, http.StatusOK)
		if 40+2*booked < 340 { // within the year the rates accept bookings for
			create(t, acc, guest(pid, day(40+2*booked), day(41+2*booked)))
			booked++
		}
		if wasDown && down.Load() {
			whileDown++
			if !readyWhileDown {
				allReady(t)
				readyWhileDown = down.Load() // the broker was down throughout the probes
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if whileDown == 0 {
		t.Fatal("no write was made while the broker was down")
	}
	if !readyWhileDown {
		t.Fatal("the services' /readyz were not all asked while the broker was down")
	}
	t.Logf("%d rounds of writes, %d while %s was down (2s; it took %v to start again)", booked, whileDown, which, took.Round(10*time.Millisecond))

	ctx := context.Background()
	converge(t, "the outboxes of property-svc and booking-svc are empty", func() bool {
		for _, db := range []string{"vros_property", "vros_booking"} {
			cur, err := mongoDB.Database(db).Collection("outbox").Find(ctx, bson.D{})
			if err != nil {
				return false
			}
			var docs []bson.M
			if err := cur.All(ctx, &docs); err != nil {
				return false
			}
			for _, d := range docs {
				if a, _ := d["aggregate"].(string); strings.HasPrefix(a, acc.AccountID) {
					return false
				}
			}
		}
		return true
	})
	version := field(stored(t, acc.AccountID, spid), "version")
	converge(t, "booking-svc's view has the last version", func() bool {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").
			FindOne(ctx, bson.D{{Key: "_id", Value: acc.AccountID + ":" + spid}}).Decode(&doc)
		return err == nil && doc["version"] == version
	})
	converge(t, "the catalog has the last name", func() bool {
		var list []struct{ ID, Name string }
		return acc.try(t, "getproperties", nil, &list) && len(list) == 1 && list[0].Name == lastName
	})
	converge(t, "the catalog has every booking", func() bool {
		var ranges []nonAvail
		return acc.try(t, "getnonavailabledate", obj{"propertyId": pid}, &ranges) && len(ranges) == booked
	})

	// The property's topic: its snapshots never go back, and the last one is the stored one.
	var want int64
	switch v := version.(type) {
	case int32:
		want = int64(v)
	case int64:
		want = v
	default:
		t.Fatalf("stored version %T %v", version, version)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: st.KafkaBrokers, Topic: events.TopicProperty,
		GroupID: "e2e-restart-" + time.Now().Format("150405.000000"), StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var seen []int64
	for len(seen) == 0 || seen[len(seen)-1] != want {
		m, err := r.ReadMessage(rctx)
		if err != nil {
			t.Fatalf("reading %s up to version %d (seen %v): %v", events.TopicProperty, want, seen, err)
		}
		if string(m.Key) != acc.AccountID+":"+spid {
			continue
		}
		var s snapshot
		if _, err := events.Decode(m.Value, &s); err != nil {
			t.Fatal(err)
		}
		if len(seen) > 0 && s.Version < seen[len(seen)-1] {
			t.Fatalf("snapshot version %d published after %d: %v", s.Version, seen[len(seen)-1], append(seen, s.Version))
		}
		seen = append(seen, s.Version)
	}
	t.Logf("%d snapshots on %s up to version %d, none going back", len(seen), events.TopicProperty, want)
}

// allReady asks every service's /readyz on its internal listener and wants 200 from each.
func allReady(t *testing.T) {
	t.Helper()
	for name, url := range map[string]string{"edge": st.EdgeInternalURL, "property-svc": st.PropertyInternalURL,
		"booking-svc": st.BookingInternalURL, "catalog-svc": st.CatalogInternalURL} {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			t.Errorf("%s /readyz: %v", name, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s /readyz with the broker down: %d %s, want 200", name, resp.StatusCode, body)
		}
	}
	// Through edge's public port the operational routes do not exist.
	resp, err := http.Get(st.EdgeURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("edge's public /readyz answered %d, want 404", resp.StatusCode)
	}
}
