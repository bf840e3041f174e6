package events_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

// The tests run against the broker VROS_KAFKA_BROKERS names (make test-real: Apache Kafka),
// else against the embedded one (kfake). Rebalances, compaction and a real broker's
// timings are what the first run adds.
var (
	brokers    []string
	realBroker bool
	// Exactly one of these restarts the broker: the embedded one, or vros-infra's.
	embeddedInfra *testinfra.Infra
	realServers   *servers.Servers
)

func TestMain(m *testing.M) {
	if s := servers.FromEnv(); s != nil && len(s.KafkaBrokers) > 0 {
		brokers, realBroker, realServers = s.KafkaBrokers, true, s
		os.Exit(m.Run())
	}
	in, err := testinfra.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	brokers, embeddedInfra = in.KafkaBrokers, in
	code := m.Run()
	in.Close()
	os.Exit(code)
}

var topicSeq atomic.Int64

// newTopic creates a topic of its own for a test (the broker creates none on a write).
func newTopic(t *testing.T, partitions int, configs ...kafka.ConfigEntry) string {
	t.Helper()
	name := fmt.Sprintf("vros.test.%s.%d.%d", strings.ToLower(t.Name()), time.Now().UnixNano()%1e9, topicSeq.Add(1))
	// Through kafka-go's default transport, the publishers': it then refreshes the metadata
	// it caches (for seconds) until the topic is in it.
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	resp, err := client.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: name, NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs}}})
	if err == nil {
		err = resp.Errors[name]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	return name
}

// snapshotMsg is version v of key k, as the outbox publishes snapshots: the value carries
// the version.
func snapshotMsg(topic, k string, v int) events.Message {
	return events.Message{Topic: topic, Key: k, Value: []byte(strconv.Itoa(v))}
}

// applied records, across every consumer of one view, each key's snapshots in the order
// the handlers ran. A version seen again is a redelivery (delivery is at least once); a
// version beyond the next one means one was lost or applied out of order. Over a
// compacted log versions may be skipped, but never go back.
type applied struct {
	compacted bool
	mu        sync.Mutex
	last      map[string]int // highest version applied per key
	by        map[string]int // handler calls per consumer
	dups      int
	badList   []string
}

func newApplied() *applied { return &applied{last: map[string]int{}, by: map[string]int{}} }

func (a *applied) handler(consumer string) events.Handler {
	return func(_ context.Context, m kafka.Message) error {
		v, err := strconv.Atoi(string(m.Value))
		if err != nil {
			return events.Permanent(err)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.by[consumer]++
		k := string(m.Key)
		switch last := a.last[k]; {
		case v == last || v < last && !a.compacted:
			a.dups++
		case v == last+1 || v > last && a.compacted:
			a.last[k] = v
		default:
			a.badList = append(a.badList, fmt.Sprintf("%s applied %s v%d after v%d (partition %d offset %d)", consumer, k, v, last, m.Partition, m.Offset))
		}
		return nil
	}
}

func (a *applied) calls(consumer string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.by[consumer]
}

// reached reports whether every key has reached version v.
func (a *applied) reached(keys []string, v int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		if a.last[k] < v {
			return false
		}
	}
	return true
}

func (a *applied) bad() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.badList)
}

// consume runs events.Consume until the returned stop is called.
func consume(t *testing.T, group, topic string, h events.Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: group, Topics: []string{topic}}, h)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("consumer of %s in %s: %v", topic, group, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestReplicasJoinAndLeave: snapshots of twelve keys are published in rounds while
// consumers come and go. A second member of the group joins (the partitions are split
// between the two: a rebalance) and leaves (the first takes them back: another); a replica
// with a group of its own, as every booking-svc and catalog-svc replica has, starts half way
// and reads from the beginning. No snapshot is lost and none is applied before the one
// that precedes it, in the group as in the replica; redeliveries are allowed.
func TestReplicasJoinAndLeave(t *testing.T) {
	topic := newTopic(t, 3)
	group := topic + ".group"
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("acc:%d", i)
	}
	members, replica := newApplied(), newApplied()
	consume(t, group, topic, members.handler("a"))

	// The producer publishes round after round until told to stop.
	var round atomic.Int64
	stopProducing := make(chan struct{})
	produced := make(chan error, 1)
	go func() {
		for r := 1; ; r++ {
			select {
			case <-stopProducing:
				produced <- nil
				return
			default:
			}
			msgs := make([]events.Message, len(keys))
			for i, k := range keys {
				msgs[i] = snapshotMsg(topic, k, r)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := pub.Publish(ctx, msgs...)
			cancel()
			if err != nil {
				produced <- fmt.Errorf("round %d: %w", r, err)
				return
			}
			round.Store(int64(r))
			time.Sleep(10 * time.Millisecond)
		}
	}()

	eventually.Holds(t, "member a applies", 30*time.Second, func() bool { return members.calls("a") > 50 })
	stopB := consume(t, group, topic, members.handler("b"))
	stopReplica := consume(t, topic+".replica", topic, replica.handler("replica"))
	// b has joined once the group gave it partitions and it applied from them.
	eventually.Holds(t, "member b gets partitions", 60*time.Second, func() bool { return members.calls("b") > 50 })
	aBefore := members.calls("a")
	eventually.Holds(t, "member a keeps applying beside b", 30*time.Second, func() bool { return members.calls("a") > aBefore+50 })
	stopB()
	bLeft := members.calls("b")
	// a takes b's partitions back: every key keeps moving after b left.
	after := int(round.Load())
	eventually.Holds(t, "member a applies every key after b left", 60*time.Second, func() bool { return members.reached(keys, after) })
	close(stopProducing)
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	last := int(round.Load())
	eventually.Holds(t, "the group applies the last round", 60*time.Second, func() bool { return members.reached(keys, last) })
	eventually.Holds(t, "the replica applies the last round", 60*time.Second, func() bool { return replica.reached(keys, last) })
	stopReplica()

	if bad := members.bad(); len(bad) > 0 {
		t.Fatalf("group members lost or reordered snapshots (%d): %v", len(bad), bad[:min(len(bad), 10)])
	}
	if bad := replica.bad(); len(bad) > 0 {
		t.Fatalf("the replica lost or reordered snapshots (%d): %v", len(bad), bad[:min(len(bad), 10)])
	}
	if members.calls("b") != bLeft {
		t.Fatalf("member b applied %d snapshots after it left", members.calls("b")-bLeft)
	}
	t.Logf("%d rounds of %d keys (real broker: %v); a applied %d, b %d (then left), redelivered %d; the replica applied %d",
		last, len(keys), realBroker, members.calls("a"), bLeft, members.dups, replica.calls("replica"))
}

// TestTopicsAreCompacted: the vros topics are compacted on the broker, and compaction
// keeps what a replica needs: a new group reading a compacted topic from the start ends
// with the latest snapshot of every key, though the ones before it are gone. (kfake keeps
// the setting but never compacts; that half needs a real broker.)
func TestTopicsAreCompacted(t *testing.T) {
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second, Transport: tr}
	ctx := context.Background()
	for _, topic := range []string{events.TopicProperty, events.TopicBooking} {
		resp, err := client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{
			{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"cleanup.policy"}}}})
		if err != nil {
			t.Fatalf("describe %s: %v", topic, err)
		}
		policy := ""
		for _, r := range resp.Resources {
			if r.Error != nil {
				t.Fatalf("describe %s: %v", topic, r.Error)
			}
			for _, e := range r.ConfigEntries {
				if e.ConfigName == "cleanup.policy" {
					policy = e.ConfigValue
				}
			}
		}
		if policy != "compact" {
			t.Fatalf("%s has cleanup.policy %q, want compact", topic, policy)
		}
	}
	if !realBroker {
		t.Log("the embedded broker never compacts: the compaction half runs against a real broker (make test-real)")
		return
	}

	// The vros topics' policy, with segments that roll and get cleaned at once.
	topic := newTopic(t, 1,
		kafka.ConfigEntry{ConfigName: "cleanup.policy", ConfigValue: "compact"},
		kafka.ConfigEntry{ConfigName: "segment.ms", ConfigValue: "100"},
		kafka.ConfigEntry{ConfigName: "min.cleanable.dirty.ratio", ConfigValue: "0.01"},
		kafka.ConfigEntry{ConfigName: "min.compaction.lag.ms", ConfigValue: "0"})
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	keys := []string{"acc:1", "acc:2", "acc:3", "acc:4", "acc:5"}
	const versions = 40
	for v := 1; v <= versions; v++ {
		var msgs []events.Message
		for _, k := range keys {
			msgs = append(msgs, snapshotMsg(topic, k, v))
		}
		if err := pub.Publish(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	// A segment is closed (and can be cleaned) when a write comes after segment.ms.
	roll := func() {
		time.Sleep(200 * time.Millisecond)
		if err := pub.Publish(ctx, snapshotMsg(topic, "roll", 1)); err != nil {
			t.Fatal(err)
		}
	}
	roll()
	var left int
	eventually.Holds(t, "the log cleaner compacts the closed segment", 60*time.Second, func() bool {
		left = countMessages(t, topic, keys[0])
		if left > 1 {
			roll() // the cleaner also waits for a newer segment; keep giving it one
		}
		return left == 1
	})

	view := newApplied()
	view.compacted = true
	consume(t, topic+".new-replica", topic, view.handler("new"))
	eventually.Holds(t, "a new replica reads the latest snapshots", 30*time.Second, func() bool { return view.reached(keys, versions) })
	if bad := view.bad(); len(bad) > 0 {
		t.Fatalf("a new replica of a compacted topic: %v", bad)
	}
	if n := view.calls("new"); n >= versions*len(keys) {
		t.Fatalf("the replica applied %d messages: nothing was compacted", n)
	}
	t.Logf("%d snapshots of %d keys compacted; a new replica converged after %d messages", versions*len(keys), len(keys), view.calls("new"))
}

// countMessages reads partition 0 of topic up to its end and counts the messages of key.
func countMessages(t *testing.T, topic, key string) int {
	t.Helper()
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	end, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read %s: %v", topic, err)
		}
		if string(m.Key) == key {
			n++
		}
		if m.Offset >= end-1 {
			return n
		}
	}
}

// TestNoBatchingDelay: a lone event reaches Kafka and a consumer in well under a second.
// kafka-go's writer waits up to its BatchTimeout (1s by default) for more messages before
// sending a batch, which would delay every change event by that much; the publisher sets
// it to a few milliseconds (TestPublisherSettings). The fastest of several rounds must beat
// the default's floor, so that a loaded machine cannot make the test fail.
func TestNoBatchingDelay(t *testing.T) {
	topic := newTopic(t, 1)
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	got := make(chan time.Time, 16)
	consume(t, topic+".latency", topic, func(context.Context, kafka.Message) error {
		got <- time.Now()
		return nil
	})
	ctx := context.Background()
	// The first publish also fetches metadata and connects; the consumer joins its group.
	if err := pub.Publish(ctx, snapshotMsg(topic, "warm", 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("the consumer never received the first event")
	}
	var publish, deliver []time.Duration
	for i := 1; i <= 5; i++ {
		start := time.Now()
		if err := pub.Publish(ctx, snapshotMsg(topic, "k", i)); err != nil {
			t.Fatal(err)
		}
		publish = append(publish, time.Since(start))
		select {
		case at := <-got:
			deliver = append(deliver, at.Sub(start))
		case <-time.After(30 * time.Second):
			t.Fatalf("event %d never delivered", i)
		}
	}
	slices.Sort(publish)
	slices.Sort(deliver)
	t.Logf("real broker %v: publish acknowledged min %v median %v; delivered to a consumer min %v median %v", realBroker,
		publish[0].Round(time.Microsecond), publish[2].Round(time.Microsecond), deliver[0].Round(time.Microsecond), deliver[2].Round(time.Microsecond))
	if publish[0] >= 500*time.Millisecond {
		t.Fatalf("the fastest of 5 lone publishes took %v: the writer batches", publish[0])
	}
	// The consumer long-polls (MaxWait 250ms returns as soon as there is data).
	if deliver[0] >= 500*time.Millisecond {
		t.Fatalf("the fastest of 5 deliveries took %v", deliver[0])
	}
}

// TestConsumerOutlivesBrokerRestart: a consumer keeps waiting through a broker outage and
// applies what is published once the broker is back. (It used to return the reader's
// dial error, which stopped booking-svc and catalog-svc with it.)
func TestConsumerOutlivesBrokerRestart(t *testing.T) {
	var stopBroker, startBroker func() error
	switch {
	case embeddedInfra != nil:
		stopBroker = embeddedInfra.StopKafka
		startBroker = embeddedInfra.StartKafka
	case realServers.CanRestartKafka():
		ctx := context.Background()
		stopBroker = func() error { return realServers.StopKafka(ctx) }
		startBroker = func() error { return realServers.StartKafka(ctx) }
	default:
		t.Skip("the broker of VROS_KAFKA_BROKERS is not one the test can restart")
	}
	topic := newTopic(t, 1)
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	view := newApplied()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: topic + ".outage", Topics: []string{topic}}, view.handler("c"))
	}()
	publish := func(v int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for { // the writer finds the restarted broker within a few tries
			err := pub.Publish(ctx, snapshotMsg(topic, "acc:1", v))
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("publish v%d: %v", v, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	publish(1)
	eventually.Holds(t, "v1 applied", time.Minute, func() bool { return view.reached([]string{"acc:1"}, 1) })

	if err := stopBroker(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = startBroker()
		}
	}()
	select {
	case err := <-done:
		t.Fatalf("Consume returned while the broker was down: %v", err)
	case <-time.After(5 * time.Second):
	}
	if err := startBroker(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	back := time.Now()
	publish(2)
	published := time.Since(back)
	eventually.Holds(t, "v2 applied after the restart", time.Minute, func() bool { return view.reached([]string{"acc:1"}, 2) })
	t.Logf("after the restart: published in %v, applied after %v", published.Round(time.Millisecond), time.Since(back).Round(time.Millisecond))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Consume: %v", err)
	}
	if bad := view.bad(); len(bad) > 0 {
		t.Fatal(bad)
	}
}

// TestTombstones: a Message with Tombstone reaches Kafka as a null value, which IsTombstone
// tells from a snapshot; an empty value without Tombstone is not what the publisher sends.
func TestTombstones(t *testing.T) {
	topic := newTopic(t, 1)
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	ctx := context.Background()
	if err := pub.Publish(ctx, snapshotMsg(topic, "acc:1", 1), events.Message{Topic: topic, Key: "acc:1", Tombstone: true}); err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var got []bool
	for len(got) < 2 {
		m, err := r.ReadMessage(rctx)
		if err != nil {
			t.Fatalf("read %s: %v", topic, err)
		}
		if m.Value != nil && len(m.Value) == 0 {
			t.Errorf("the tombstone arrived as an empty value, not a null one")
		}
		got = append(got, events.IsTombstone(m))
	}
	if got[0] || !got[1] {
		t.Fatalf("IsTombstone of a snapshot then a tombstone: %v", got)
	}
}

// TestCommitEveryCommitsWhenItStops: with CommitEvery, the offsets of applied messages are
// committed together — none after each message — and all of them when Consume returns, so a
// view stopped for a rolling update reads nothing again.
func TestCommitEveryCommitsWhenItStops(t *testing.T) {
	topic := newTopic(t, 1)
	const n = 10
	var msgs []events.Message
	for i := range n {
		msgs = append(msgs, snapshotMsg(topic, fmt.Sprintf("k%d", i), 1))
	}
	if err := events.NewPublisher(brokers).Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	group := "commit-every-" + topic
	var got atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: group, Topics: []string{topic},
			CommitEvery: time.Hour}, func(context.Context, kafka.Message) error { got.Add(1); return nil })
	}()
	deadline := time.Now().Add(30 * time.Second)
	for got.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages applied", got.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	committed := func() int64 {
		cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
		res, err := cl.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
		if err != nil || res.Error != nil || len(res.Topics[topic]) != 1 {
			t.Fatalf("offsets of %s: %v %v %v", group, err, res.Error, res.Topics)
		}
		return res.Topics[topic][0].CommittedOffset
	}
	if c := committed(); c >= n {
		t.Errorf("while it runs: committed offset %d, want none yet (committed together, every hour)", c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := committed(); c != n {
		t.Errorf("after it stopped: committed offset %d, want %d (every applied message)", c, n)
	}
}
