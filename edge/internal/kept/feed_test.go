package kept

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

// The tests run against the broker VROS_KAFKA_BROKERS names (make test-real: Apache Kafka),
// else against the embedded one.
var brokers []string

func TestMain(m *testing.M) {
	if s := servers.FromEnv(); s != nil && len(s.KafkaBrokers) > 0 {
		brokers = s.KafkaBrokers
		os.Exit(m.Run())
	}
	in, err := testinfra.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
	brokers = in.KafkaBrokers
	code := m.Run()
	in.Close()
	os.Exit(code)
}

func newTopic(t *testing.T, name string, partitions int) string {
	t.Helper()
	name = fmt.Sprintf("vros.test.kept.%s.%d", name, time.Now().UnixNano())
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	res, err := client.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: name, NumPartitions: partitions, ReplicationFactor: 1}}})
	if err == nil {
		err = res.Errors[name]
	}
	if err != nil {
		t.Fatal(err)
	}
	return name
}

type heardLog struct {
	mu  sync.Mutex
	got map[string]events.Positions
}

func (h *heardLog) heard(acc string, p events.Partition, off int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.got[acc] == nil {
		h.got[acc] = events.Positions{}
	}
	h.got[acc][p] = off
}

func (h *heardLog) of(acc string) events.Positions {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := events.Positions{}
	for p, o := range h.got[acc] {
		out[p] = o
	}
	return out
}

// TestFeedHearsFromItsStart: the Feed hears every message published after it started, by
// account and position, and none before; it is live once it has read the partitions to
// their ends; a catalog covers it only when it has applied every message before its start.
func TestFeedHearsFromItsStart(t *testing.T) {
	a, b := newTopic(t, "a", 2), newTopic(t, "b", 1)
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	ctx := context.Background()
	if err := pub.Publish(ctx, events.Message{Topic: a, Key: "before:1", Value: []byte("1")},
		events.Message{Topic: b, Key: "before:2", Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	log := &heardLog{got: map[string]events.Positions{}}
	f := NewFeed(brokers, []string{a, b})
	f.Heard = log.heard
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); f.Run(fctx, func(err error) { t.Log(err) }) }()
	defer func() { stop(); <-done }()
	eventually.Holds(t, "the Feed live", 30*time.Second, f.Live)

	f.mu.Lock()
	start := events.Positions{}
	for p, o := range f.start {
		start[p] = o
	}
	f.mu.Unlock()
	if len(start) != 3 {
		t.Fatalf("started on %v, want the 3 partitions", start)
	}
	if !f.Covers(start) {
		t.Error("the positions of its start do not cover it")
	}
	for p := range start {
		behind := events.Positions{}
		for q, o := range start {
			behind[q] = o
		}
		behind[p]--
		if f.Covers(behind) {
			t.Errorf("a catalog a message behind on %v covers it", p)
		}
	}

	for i := range 6 {
		if err := pub.Publish(ctx, events.Message{Topic: a, Key: fmt.Sprintf("acc1:%d", i), Value: []byte("x")},
			events.Message{Topic: b, Key: "acc2:booking:1", Value: []byte("y")}); err != nil {
			t.Fatal(err)
		}
	}
	// Where each message went, by the partitions' ends now.
	next, err := events.NextOffsets(ctx, &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second},
		[]events.Partition{{Topic: a, ID: 0}, {Topic: a, ID: 1}, {Topic: b, ID: 0}})
	if err != nil {
		t.Fatal(err)
	}
	ends := events.Positions{}
	for p, o := range next {
		ends[p] = o - 1
	}
	eventually.Holds(t, "every message heard", 30*time.Second, func() bool {
		got := events.Positions{}
		for p, o := range log.of("acc1") {
			got[p] = o
		}
		for p, o := range log.of("acc2") {
			got[p] = o
		}
		for p, end := range ends {
			if end > start[p] && got[p] != end {
				return false
			}
		}
		return true
	})
	if got := log.of("before"); len(got) != 0 {
		t.Errorf("heard messages from before its start: %v", got)
	}
	if got := log.of("acc2"); len(got) != 1 || got[events.Partition{Topic: b, ID: 0}] != ends[events.Partition{Topic: b, ID: 0}] {
		t.Errorf("acc2 heard at %v, want its last message %v", got, ends)
	}
	eventually.Holds(t, "the Feed live again", 30*time.Second, f.Live)
}

// TestFeedWithoutBrokerIsNotLive: a Feed that cannot reach its broker is never live, so edge
// serves nothing kept.
func TestFeedWithoutBrokerIsNotLive(t *testing.T) {
	f := NewFeed([]string{"127.0.0.1:1"}, []string{"vros.property.v1"})
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	warned := make(chan error, 1)
	f.Run(ctx, func(err error) {
		select {
		case warned <- err:
		default:
		}
	})
	if f.Live() {
		t.Fatal("live without a broker")
	}
	select {
	case <-warned:
	default:
		t.Fatal("the unreachable broker was not told")
	}
}
