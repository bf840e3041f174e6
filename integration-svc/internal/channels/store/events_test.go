package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

// srv is the broker the conflicts' events go to, and how to take it down and back (nil when
// the broker is not one these tests may restart).
var srv struct {
	brokers               []string
	stopKafka, startKafka func() error
}

func runWithServers(m *testing.M, prefix string) {
	ctx := context.Background()
	stop := func() {}
	uri := ""
	if real := servers.FromEnv(); real != nil {
		uri, srv.brokers = real.MongoURI, real.KafkaBrokers
		if real.CanRestartKafka() {
			srv.stopKafka = func() error { return real.StopKafka(ctx) }
			srv.startKafka = func() error { return real.StartKafka(ctx) }
		}
	} else {
		infra, err := testinfra.Start(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		uri, srv.brokers, stop = infra.MongoURI, infra.KafkaBrokers, infra.Close
		srv.stopKafka, srv.startKafka = infra.StopKafka, infra.StartKafka
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
	db = client.Database(fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()))
	code := m.Run()
	_ = db.Drop(ctx)
	_ = client.Disconnect(ctx)
	stop()
	os.Exit(code)
}

// relay is an outbox publishing the conflicts of s to the test broker, its relay running
// until the test ends (run false: a process that dies before its relay publishes anything).
func relay(t *testing.T, s *Stores, run bool) *outbox.Outbox {
	t.Helper()
	pub := events.NewPublisher(srv.brokers)
	ob := outbox.New(db, pub, s.Conflicts.Snapshot, outbox.Options{Lease: 200 * time.Millisecond, Sweep: 50 * time.Millisecond,
		RetryMin: 20 * time.Millisecond, RetryMax: 300 * time.Millisecond})
	s.Conflicts.Attach(ob)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if run {
		go func() { defer close(done); _ = ob.Run(ctx) }()
	} else {
		close(done)
	}
	t.Cleanup(func() { cancel(); <-done; _ = pub.Close() })
	return ob
}

// published reads vros.integration.v1 from the start until each of keys has a message whose
// value satisfies want (nil: any, a tombstone too), and answers the last value of each key.
func published(t *testing.T, keys []string, want func(key string, value []byte) bool) map[string][]byte {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: srv.brokers, GroupID: uniq("conflict-events"),
		Topic: events.TopicIntegration, StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, ok := map[string][]byte{}, map[string]bool{}
	for len(ok) < len(keys) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s: %v (found %d of %d)", events.TopicIntegration, err, len(ok), len(keys))
		}
		k := string(m.Key)
		for _, w := range keys {
			if k == w {
				got[k] = m.Value
				if want == nil || want(k, m.Value) {
					ok[k] = true
				}
			}
		}
	}
	return got
}

func conflictOf(t *testing.T, value []byte) contract.Conflict {
	t.Helper()
	var c contract.Conflict
	e, err := events.Decode(value, &c)
	if err != nil {
		t.Fatal(err)
	}
	if e.Type() != contract.ChannelConflict || e.Source() != "/vros/integration-svc" {
		t.Fatalf("event type %q source %q", e.Type(), e.Source())
	}
	return c
}

func intents(t *testing.T, agg string) int64 {
	t.Helper()
	n, err := db.Collection(outbox.Collection).CountDocuments(ctx, bson.D{{Key: "aggregate", Value: agg}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testConflict(account string, conn int64, rev string) channel.Conflict {
	return channel.Conflict{Account: account, ConnectionID: conn, ReservationID: "BDC-" + rev, RevisionID: rev,
		Channel: "booking.com", PropertyID: 17, Checkin: "2027-03-09", Checkout: "2027-03-12", Reason: channel.ReasonNightsTaken,
		Message: "the night of 2027-03-09 is taken", Nights: []string{"2027-03-09", "2027-03-10"}, BookingIDs: []int64{5001},
		GuestName: "Ada NEVER-PUBLISHED", Total: "420.00", Currency: "EUR", CreatedAt: time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)}
}

// TestConflictEventWhileKafkaIsDown: a conflict recorded while Kafka is down is stored and its
// event waits in MongoDB (the outbox's intent); so does one recorded by a process that dies
// before its relay publishes anything. Once Kafka is back, each reaches vros.integration.v1,
// keyed by the conflict, with the contract's fields and never the guest's name; recording the
// same revision again stores nothing new. No intent is left.
func TestConflictEventWhileKafkaIsDown(t *testing.T) {
	if srv.stopKafka == nil {
		t.Skip("the broker is not one these tests may restart")
	}
	live, dead := open(t), open(t)
	relay(t, live, true)
	relay(t, dead, false)
	acc := uniq("acc-conflict-down")
	conn := newConnection(t, live, acc, uniq("tok-conflict-down-0123456789"))

	if err := srv.stopKafka(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = srv.startKafka()
		}
	}()
	a, fresh, err := live.Conflicts.Record(ctx, testConflict(acc, conn.ID, "rev-1"))
	if err != nil || !fresh {
		t.Fatalf("record while Kafka is down: %v (new %v)", err, fresh)
	}
	b, fresh, err := dead.Conflicts.Record(ctx, testConflict(acc, conn.ID, "rev-2"))
	if err != nil || !fresh {
		t.Fatalf("record by the dying process: %v (new %v)", err, fresh)
	}
	again, fresh, err := live.Conflicts.Record(ctx, testConflict(acc, conn.ID, "rev-1"))
	if err != nil || fresh || again.ID != a.ID {
		t.Fatalf("the same revision again: %+v, new %v, %v", again, fresh, err)
	}
	aggA, aggB := ConflictAggregate(acc, a.ID), ConflictAggregate(acc, b.ID)
	if intents(t, aggA) == 0 || intents(t, aggB) == 0 {
		t.Fatal("no intent waits for Kafka")
	}

	if err := srv.startKafka(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	got := published(t, []string{aggA, aggB}, nil)
	for _, k := range []channel.Conflict{a, b} {
		agg := ConflictAggregate(acc, k.ID)
		c := conflictOf(t, got[agg])
		want := contract.Conflict{AccountID: acc, ConflictID: k.ID, ConnectionID: conn.ID, PropertyID: 17, BookingID: 5001,
			BookingIDs: []int64{5001}, Channel: "booking.com", ReservationID: "BDC-" + k.RevisionID, RevisionID: k.RevisionID,
			Checkin: "2027-03-09", Checkout: "2027-03-12", Reason: contract.ConflictNightsTaken, Message: "the night of 2027-03-09 is taken",
			Nights: []string{"2027-03-09", "2027-03-10"}, Total: "420.00", Currency: "EUR", At: k.CreatedAt}
		if fmt.Sprint(c) != fmt.Sprint(want) {
			t.Errorf("%s published\n%+v\nwant\n%+v", agg, c, want)
		}
		if bytes.Contains(got[agg], []byte("NEVER-PUBLISHED")) {
			t.Errorf("%s carries the guest's name", agg)
		}
	}
	eventually.Holds(t, "the intents removed", 10*time.Second, func() bool { return intents(t, aggA)+intents(t, aggB) == 0 })
}

// TestConflictEventResolvedAndErased: resolving a conflict publishes it again with its
// resolution time (the owner's note is never published); erasing the account publishes a
// tombstone for each of its conflicts' keys.
func TestConflictEventResolvedAndErased(t *testing.T) {
	s := open(t)
	relay(t, s, true)
	acc := uniq("acc-conflict-life")
	conn := newConnection(t, s, acc, uniq("tok-conflict-life-0123456789"))
	k, _, err := s.Conflicts.Record(ctx, testConflict(acc, conn.ID, "rev-1"))
	if err != nil {
		t.Fatal(err)
	}
	agg := ConflictAggregate(acc, k.ID)
	first := conflictOf(t, published(t, []string{agg}, nil)[agg])
	if first.ResolvedAt != nil || first.ConflictID != k.ID {
		t.Fatalf("first event %+v", first)
	}
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	if _, err := s.Conflicts.Resolve(ctx, acc, k.ID, "moved the guest NOTE-NEVER-PUBLISHED", at); err != nil {
		t.Fatal(err)
	}
	resolved := published(t, []string{agg}, func(_ string, v []byte) bool {
		return len(v) > 0 && conflictOf(t, v).ResolvedAt != nil
	})[agg]
	if c := conflictOf(t, resolved); !c.ResolvedAt.Equal(at) {
		t.Fatalf("resolved at %v, want %v", c.ResolvedAt, at)
	}
	if bytes.Contains(resolved, []byte("NOTE-NEVER-PUBLISHED")) {
		t.Fatal("the owner's note is published")
	}

	if err := s.Erase(ctx, acc); err != nil {
		t.Fatal(err)
	}
	published(t, []string{agg}, func(_ string, v []byte) bool { return len(v) == 0 })
	if _, err := s.Conflicts.Get(ctx, acc, k.ID); err != channel.ErrNotFound {
		t.Fatalf("after the erasure: %v", err)
	}
}

// TestConflictEventMatchesTheContract: the event of a conflict is the contract's golden
// payload of vros.channel.conflict, keyed <account>:conflict:<id> on vros.integration.v1.
func TestConflictEventMatchesTheContract(t *testing.T) {
	k := testConflict("1001", 3, "rev-9")
	k.ID, k.ReservationID = 12, "BDC-4711"
	m, err := ConflictMessage(k)
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != events.TopicIntegration || m.Key != "1001:conflict:"+strconv.Itoa(12) {
		t.Fatalf("topic %q key %q", m.Topic, m.Key)
	}
	diffs, err := contracttest.DiffPublished(m.Value, contract.ChannelConflict, "/vros/integration-svc")
	if err != nil || len(diffs) != 0 {
		t.Fatalf("not the golden payload: %v %v", diffs, err)
	}
}
