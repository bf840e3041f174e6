package events

import (
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestPublisherSettings: the writer sends at once (no batching delay: kafka-go's default
// BatchTimeout is a second), waits for every in-sync replica, writes synchronously and
// partitions as the Java client does. TestNoBatchingDelay measures the first against a
// broker.
func TestPublisherSettings(t *testing.T) {
	p := NewPublisher([]string{"127.0.0.1:9"})
	defer p.Close()
	w := p.w
	if w.BatchTimeout <= 0 || w.BatchTimeout > 10*time.Millisecond {
		t.Errorf("BatchTimeout %v: every lone event would wait that long for company", w.BatchTimeout)
	}
	if w.Async {
		t.Error("Async: Publish would return before Kafka has the events, and the outbox would forget them")
	}
	if w.RequiredAcks != kafka.RequireAll {
		t.Errorf("RequiredAcks %v, want all in-sync replicas", w.RequiredAcks)
	}
	if _, ok := w.Balancer.(*kafka.Murmur2Balancer); !ok {
		t.Errorf("Balancer %T, want murmur2 (the Java client's partitioner)", w.Balancer)
	}
	if w.AllowAutoTopicCreation {
		t.Error("AllowAutoTopicCreation: topics are created compacted by the chart, never by a write")
	}
}
