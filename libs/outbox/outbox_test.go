package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

// srv is what the tests run against: the embedded MongoDB-wire server and Kafka
// broker, or the real ones of `make test-real` (VROS_MONGO_URI, VROS_KAFKA_BROKERS), with
// the real driver and the real Kafka client either way.
var srv struct {
	mongoURI string
	brokers  []string
	// stopKafka and startKafka take the broker down and back; nil when the broker is not
	// one these tests may restart.
	stopKafka, startKafka func() error
}

var client *mongo.Client

// The tests run against the embedded MongoDB-wire server and Kafka broker, with the real
// driver and the real Kafka client.
func TestMain(m *testing.M) {
	ctx := context.Background()
	stop := func() {}
	if real := servers.FromEnv(); real != nil {
		srv.mongoURI, srv.brokers = real.MongoURI, real.KafkaBrokers
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
		srv.mongoURI, srv.brokers, stop = infra.MongoURI, infra.KafkaBrokers, infra.Close
		srv.stopKafka = infra.StopKafka
		srv.startKafka = infra.StartKafka
	}
	var err error
	if client, err = mongo.Connect(options.Client().ApplyURI(srv.mongoURI)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = client.Disconnect(ctx)
	stop()
	os.Exit(code)
}

var dbSeq atomic.Int64

// harness is one relay over its own database, with its log and metrics captured.
type harness struct {
	t      *testing.T
	db     *mongo.Database
	box    *outbox.Outbox
	log    *telemetrytest.Buffer
	reader *sdkmetric.ManualReader
	prefix string // of every aggregate of this test, so that its messages can be told apart
	pub    *events.Publisher
}

func newHarness(t *testing.T, load func(prefix string) outbox.Loader) *harness {
	t.Helper()
	h := &harness{t: t, log: &telemetrytest.Buffer{}, reader: sdkmetric.NewManualReader(),
		prefix: fmt.Sprintf("%d%d", time.Now().UnixNano()%1e9, dbSeq.Add(1))}
	h.db = client.Database(fmt.Sprintf("outbox_test_%d_%d", time.Now().UnixNano()%1e9, dbSeq.Add(1)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	h.pub = events.NewPublisher(srv.brokers)
	h.box = outbox.New(h.db, h.pub, load(h.prefix), outbox.Options{
		Lease: 100 * time.Millisecond, Sweep: 50 * time.Millisecond,
		RetryMin: 20 * time.Millisecond, RetryMax: 300 * time.Millisecond, ParkAfter: 3,
		Meter: mp.Meter("outbox_test"), Log: slog.New(slog.NewJSONHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.box.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = h.pub.Close()
		_ = h.db.Drop(context.Background())
	})
	return h
}

// agg names an aggregate of this test.
func (h *harness) agg(name string) string { return h.prefix + ":" + name }

// message is the event of an aggregate as a loader or a writer builds it.
func message(agg, state string) events.Message {
	return events.Message{Topic: events.TopicBooking, Key: agg, Value: []byte(`{"state":"` + state + `"}`)}
}

// write records an intent and hands the write to the relay (snap nil: the relay loads).
func (h *harness) write(agg string, snap *outbox.Snapshot) {
	h.t.Helper()
	in, err := h.box.Begin(context.Background(), agg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.box.Done(in, snap)
}

// crashedWrite records an intent whose writer never finishes: only the sweep finds it.
func (h *harness) crashedWrite(agg string) {
	h.t.Helper()
	if _, err := h.box.Begin(context.Background(), agg); err != nil {
		h.t.Fatal(err)
	}
}

// published reads the booking topic from the start until every key in want has been seen
// (returning the last value of each) or the timeout passes.
func (h *harness) published(want []string, timeout time.Duration) map[string]string {
	h.t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: srv.brokers, GroupID: "outbox-test-" + h.prefix + fmt.Sprint(dbSeq.Add(1)),
		Topic: events.TopicBooking, StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	got := map[string]string{}
	missing := func() int {
		n := 0
		for _, k := range want {
			if _, ok := got[k]; !ok {
				n++
			}
		}
		return n
	}
	for missing() > 0 {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			h.t.Logf("reading %s: %v", events.TopicBooking, err)
			break
		}
		if strings.HasPrefix(string(m.Key), h.prefix+":") {
			got[string(m.Key)] = string(m.Value)
		}
	}
	return got
}

// parked reads the gauge of parked aggregates.
func (h *harness) parked() int64 {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "vros.outbox.parked" {
				continue
			}
			var n int64
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				n += dp.Value
			}
			return n
		}
	}
	return 0
}

// oldestAge reads the gauge of the oldest pending intent's age; ok is false when it has no
// value.
func (h *harness) oldestAge() (float64, bool) {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "vros.outbox.oldest_pending_age" {
				continue
			}
			if dps := m.Data.(metricdata.Gauge[float64]).DataPoints; len(dps) == 1 {
				return dps[0].Value, true
			}
		}
	}
	return 0, false
}

// intents returns the intents left in the collection, by aggregate.
func (h *harness) intents() map[string][]bson.M {
	h.t.Helper()
	cur, err := h.db.Collection(outbox.Collection).Find(context.Background(), bson.D{})
	if err != nil {
		h.t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(context.Background(), &docs); err != nil {
		h.t.Fatal(err)
	}
	out := map[string][]bson.M{}
	for _, d := range docs {
		a, _ := d["aggregate"].(string)
		out[a] = append(out[a], d)
	}
	return out
}

// TestOneAggregateDoesNotBlockOthers is the outage of issue 8: one aggregate whose current
// state is an empty message (a booking whose create was cut off) and one whose loader fails
// are recorded before twenty ordinary writes. The twenty are published at once, the two are
// parked (error log, gauge, marked intents) and never stop the relay.
func TestOneAggregateDoesNotBlockOthers(t *testing.T) {
	h := newHarness(t, func(prefix string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			switch strings.TrimPrefix(agg, prefix+":") {
			case "broken-loader":
				return nil, errors.New("document is corrupt")
			case "empty-message":
				return []events.Message{{}}, nil // what an unencodable snapshot used to give
			case "nothing":
				return nil, nil
			}
			return []events.Message{message(agg, "loaded")}, nil
		}
	})
	broken, empty, nothing := h.agg("broken-loader"), h.agg("empty-message"), h.agg("nothing")
	h.crashedWrite(empty) // the interrupted create: only the sweep finds it
	h.write(broken, nil)
	h.write(empty, &outbox.Snapshot{Version: 1, Messages: []events.Message{{}}})
	h.write(nothing, nil)

	var want []string
	start := time.Now()
	for i := 0; i < 20; i++ {
		a := h.agg(fmt.Sprintf("good-%d", i))
		want = append(want, a)
		if i%2 == 0 {
			h.write(a, &outbox.Snapshot{Version: 1, Messages: []events.Message{message(a, "handed")}})
		} else {
			h.write(a, nil)
		}
	}
	// A snapshot handed over that Kafka cannot take is repaired from the current state.
	repaired := h.agg("repaired")
	h.write(repaired, &outbox.Snapshot{Version: 2, Messages: []events.Message{{Key: repaired}}})
	want = append(want, repaired)

	got := h.published(want, 10*time.Second)
	if len(got) != len(want) {
		t.Fatalf("published %d of %d aggregates while two were broken: %v", len(got), len(want), got)
	}
	t.Logf("%d aggregates published in %v beside two broken ones", len(got), time.Since(start).Round(time.Millisecond))
	if got[repaired] != `{"state":"loaded"}` {
		t.Fatalf("unpublishable snapshot not repaired from the loader: %q", got[repaired])
	}
	if got[h.agg("good-0")] != `{"state":"handed"}` || got[h.agg("good-1")] != `{"state":"loaded"}` {
		t.Fatalf("published %q and %q", got[h.agg("good-0")], got[h.agg("good-1")])
	}

	eventually.Holds(t, "both broken aggregates parked", 10*time.Second, func() bool { return h.parked() == 2 })
	eventually.Holds(t, "parked intents marked", 5*time.Second, func() bool {
		left := h.intents()
		for _, a := range []string{broken, empty} {
			if len(left[a]) == 0 {
				return false
			}
			for _, d := range left[a] {
				if d["parked"] != true || d["error"] == "" {
					return false
				}
			}
		}
		return true
	})
	left := h.intents()
	if len(left) != 2 {
		t.Fatalf("intents left for %d aggregates, want the 2 parked ones: %v", len(left), left)
	}
	if len(left[empty]) != 2 {
		t.Fatalf("the crashed and the handed-over intents of %s: %v", empty, left[empty])
	}
	for _, a := range []string{broken, empty} {
		if !strings.Contains(h.log.String(), `"msg":"outbox aggregate parked`) || !strings.Contains(h.log.String(), a) {
			t.Fatalf("no error line parking %s in the log:\n%s", a, h.log.String())
		}
	}
	// Parked aggregates do not stop later writes either.
	late := h.agg("late")
	h.write(late, nil)
	if got := h.published([]string{late}, 20*time.Second); got[late] == "" {
		t.Fatal("a write after the parking was not published")
	}
}

// TestParkedAggregateRecovers: once the aggregate's state can be published again, a parked
// aggregate is published by the relay's own retries and unparked.
func TestParkedAggregateRecovers(t *testing.T) {
	var healthy atomic.Bool
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			if !healthy.Load() {
				return nil, errors.New("not readable yet")
			}
			return []events.Message{message(agg, "recovered")}, nil
		}
	})
	a := h.agg("flaky")
	h.crashedWrite(a)
	eventually.Holds(t, "parked", 10*time.Second, func() bool { return h.parked() == 1 })
	healthy.Store(true)
	if got := h.published([]string{a}, 10*time.Second); got[a] != `{"state":"recovered"}` {
		t.Fatalf("parked aggregate not published after repair: %v", got)
	}
	eventually.Holds(t, "unparked and forgotten", 5*time.Second, func() bool { return h.parked() == 0 && len(h.intents()) == 0 })
	if !strings.Contains(h.log.String(), "published after being parked") {
		t.Fatalf("no log line for the recovery:\n%s", h.log.String())
	}
}

// TestNotReadyWaits: an aggregate its loader calls not ready (a booking still being
// created) is asked again later, neither published nor parked, and published once ready.
func TestNotReadyWaits(t *testing.T) {
	var ready atomic.Bool
	var asked atomic.Int64
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			asked.Add(1)
			if !ready.Load() {
				return nil, fmt.Errorf("booking is pending: %w", outbox.ErrNotReady)
			}
			return []events.Message{message(agg, "ready")}, nil
		}
	})
	a := h.agg("pending")
	h.crashedWrite(a)
	eventually.Holds(t, "asked several times", 10*time.Second, func() bool { return asked.Load() >= 5 })
	if h.parked() != 0 || len(h.intents()[a]) != 1 {
		t.Fatalf("a not-ready aggregate was parked (%d) or dropped (%v)", h.parked(), h.intents())
	}
	ready.Store(true)
	if got := h.published([]string{a}, 10*time.Second); got[a] != `{"state":"ready"}` {
		t.Fatalf("not published once ready: %v", got)
	}
}

// TestKafkaDownParksNothing: while Kafka is down nothing is held against the aggregates;
// when it is back every write is published.
func TestKafkaDownParksNothing(t *testing.T) {
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			return []events.Message{message(agg, "after-outage")}, nil
		}
	})
	if srv.stopKafka == nil {
		t.Skip("the broker is not one these tests may restart")
	}
	if err := srv.stopKafka(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = srv.startKafka()
		}
	}()
	var want []string
	for i := 0; i < 5; i++ {
		a := h.agg(fmt.Sprintf("outage-%d", i))
		want = append(want, a)
		h.write(a, nil)
	}
	time.Sleep(3 * time.Second) // many retry rounds: enough to park anything held responsible
	if n := h.parked(); n != 0 {
		t.Fatalf("%d aggregates parked for a Kafka outage", n)
	}
	if err := srv.startKafka(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if got := h.published(want, 30*time.Second); len(got) != len(want) {
		t.Fatalf("after the outage %d of %d published", len(got), len(want))
	}
}

// TestOldestPendingAgeWhileKafkaIsDown: the gauge of the oldest unpublished intent's age is 0
// with nothing pending, grows with the time a write waits while Kafka is down (read from the
// intents at each collection, the index on their time declared by outbox.Index), and is 0
// again once the write is published.
func TestOldestPendingAgeWhileKafkaIsDown(t *testing.T) {
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			return []events.Message{message(agg, "after-outage")}, nil
		}
	})
	if srv.stopKafka == nil {
		t.Skip("the broker is not one these tests may restart")
	}
	if err := mongostore.Ensure(context.Background(), h.db, []string{outbox.Collection}, []mongostore.Index{outbox.Index}); err != nil {
		t.Fatal(err)
	}
	if age, ok := h.oldestAge(); !ok || age != 0 {
		t.Fatalf("nothing pending: oldest age %v (set %v), want 0", age, ok)
	}
	if err := srv.stopKafka(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = srv.startKafka()
		}
	}()
	a := h.agg("waiting")
	start := time.Now()
	h.write(a, nil)
	time.Sleep(1500 * time.Millisecond)
	first, ok := h.oldestAge()
	if !ok || first < 1.4 || first > time.Since(start).Seconds()+0.1 {
		t.Fatalf("after 1.5 s with Kafka down: oldest age %v (set %v), want about 1.5", first, ok)
	}
	time.Sleep(time.Second)
	if second, _ := h.oldestAge(); second < first+0.9 {
		t.Fatalf("a second later the oldest age is %v, was %v: it does not grow", second, first)
	}
	if err := srv.startKafka(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if got := h.published([]string{a}, 30*time.Second); len(got) != 1 {
		t.Fatal("not published after the outage")
	}
	eventually.Holds(t, "oldest age back to 0", 10*time.Second, func() bool {
		age, ok := h.oldestAge()
		return ok && age == 0
	})
}

// TestCrashBetweenIntentAndPublish: a process records its intent, makes its state write and
// dies before it hands the write to a relay (or before its relay publishes). Another
// process's relay, on the same database, adopts the intent once its lease is over and
// publishes the state as it now stands; nothing is left behind.
func TestCrashBetweenIntentAndPublish(t *testing.T) {
	var state sync.Map // aggregate → its stored state, as the dead process left it
	load := func(_ context.Context, agg string) ([]events.Message, error) {
		s, ok := state.Load(agg)
		if !ok {
			return nil, nil
		}
		return []events.Message{message(agg, s.(string))}, nil
	}
	h := newHarness(t, func(string) outbox.Loader { return load })
	dead := outbox.New(h.db, h.pub, load, outbox.Options{Lease: 100 * time.Millisecond}) // its relay never runs
	var want []string
	for i := range 5 {
		a := h.agg(fmt.Sprintf("orphan-%d", i))
		want = append(want, a)
		if _, err := dead.Begin(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		state.Store(a, "written-before-the-crash")
	}
	got := h.published(want, 10*time.Second)
	for _, a := range want {
		if got[a] != `{"state":"written-before-the-crash"}` {
			t.Fatalf("%s: published %q, want the state the dead process wrote", a, got[a])
		}
	}
	eventually.Holds(t, "the adopted intents removed", 5*time.Second, func() bool { return len(h.intents()) == 0 })
}
