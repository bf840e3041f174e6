package events_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/testkit/eventually"
)

// TestProduceAndConsumeMetrics: a publisher with a meter times each write per topic in
// messaging_client_operation_duration_seconds (send); a write to a broker that is not there
// is timed with its error type. The consumer times each event it applies in
// vros_consumer_apply_duration_seconds (retries included: an event applied on its third
// attempt after two 200 ms failures takes longer than them), each handler run as a
// "process" operation (a failed one with error_type retry or permanent), and counts the
// event it parks in vros_consumer_parked_total.
func TestProduceAndConsumeMetrics(t *testing.T) {
	topic := newTopic(t, 1)
	metrics := telemetrytest.NewMetrics(t)
	pub := events.NewPublisherWith(brokers, events.PublisherOptions{Meter: metrics.Meter()})
	defer pub.Close()
	msgs := []events.Message{{Topic: topic, Key: "a", Value: []byte("ok")}, {Topic: topic, Key: "b", Value: []byte("slow")},
		{Topic: topic, Key: "c", Value: []byte("bad")}}
	if err := pub.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	const messaging = "messaging_client_operation_duration_seconds"
	send := []string{"messaging_system", "kafka", "messaging_operation_name", "send", "messaging_destination_name", topic}
	if n := metrics.Count(t, messaging, send...); n != 1 {
		t.Errorf("one write of three messages to one topic timed %d times, want 1", n)
	}
	for _, s := range metrics.Matching(t, messaging, send...) {
		if _, ok := s.Labels["error_type"]; ok || s.Sum <= 0 {
			t.Errorf("successful send: labels %v, %v s", s.Labels, s.Sum)
		}
	}

	var slow atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: "metrics-" + topic, Topics: []string{topic},
			Meter: metrics.Meter(), Park: func(context.Context, kafka.Message, error) error { return nil }},
			func(_ context.Context, m kafka.Message) error {
				switch string(m.Value) {
				case "slow":
					if slow.Add(1) < 3 {
						time.Sleep(200 * time.Millisecond)
						return errors.New("store unreachable")
					}
				case "bad":
					return events.Permanent(errors.New("not an event"))
				}
				return nil
			})
	}()
	defer func() { cancel(); <-done }()
	const apply = "vros_consumer_apply_duration_seconds"
	eventually.Holds(t, "three events consumed", 30*time.Second, func() bool {
		return metrics.Count(t, apply, "topic", topic) == 3
	})
	if got := metrics.LabelNames(t, apply); !slices.Equal(got, []string{"topic"}) {
		t.Errorf("%s labels %v, want [topic]", apply, got)
	}
	// Two failed runs of 200 ms, their backoff (100 ms, 200 ms), then the run that applied it.
	if s := metrics.Matching(t, apply, "topic", topic); len(s) != 1 || s[0].Sum < 0.6 {
		t.Errorf("apply durations %+v, want over 0.6 s in all (the retried event's attempts and backoff)", s)
	}
	if v := metrics.Value(t, "vros_consumer_parked_total", "topic", topic); v != 1 {
		t.Errorf("vros_consumer_parked_total{topic} = %v, want 1", v)
	}
	process := []string{"messaging_system", "kafka", "messaging_operation_name", "process", "messaging_destination_name", topic}
	for _, c := range []struct {
		errType string
		want    uint64
	}{{"", 2}, {"retry", 2}, {"permanent", 1}} {
		var n uint64
		for _, s := range metrics.Matching(t, messaging, process...) {
			if s.Labels["error_type"] == c.errType {
				n += s.Count
			}
		}
		if n != c.want {
			t.Errorf("process runs with error_type %q: %d, want %d", c.errType, n, c.want)
		}
	}

	// A broker that is not there: the failed write is timed with its error type.
	down := events.NewPublisherWith([]string{"127.0.0.1:9"}, events.PublisherOptions{Meter: metrics.Meter()})
	defer down.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer wcancel()
	if err := down.Publish(wctx, events.Message{Topic: "vros.test.nowhere", Key: "k", Value: []byte("v")}); err == nil {
		t.Fatal("a write to no broker succeeded")
	}
	failed := metrics.Matching(t, messaging, "messaging_operation_name", "send", "messaging_destination_name", "vros.test.nowhere")
	if len(failed) != 1 || failed[0].Labels["error_type"] == "" || failed[0].Count != 1 {
		t.Errorf("failed write: %+v, want one observation with an error_type", failed)
	}
}
