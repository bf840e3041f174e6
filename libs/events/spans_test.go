package events_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestConsumerSpan: each message is handled in a consumer span "process <topic>" with the
// messaging conventions' attributes (system, operation, topic, partition, offset, group, key)
// and never the value.
func TestConsumerSpan(t *testing.T) {
	topic := newTopic(t, 1)
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	if err := pub.Publish(context.Background(), events.Message{Topic: topic, Key: "acc1:42", Value: []byte(`{"secret":"value"}`)}); err != nil {
		t.Fatal(err)
	}
	spans := telemetrytest.NewSpans(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	group := fmt.Sprintf("spans-%d", time.Now().UnixNano())
	handled := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: group, Topics: []string{topic},
			Tracer: spans.Tracer()}, func(context.Context, kafka.Message) error { close(handled); return nil })
	}()
	select {
	case <-handled:
	case <-ctx.Done():
		t.Fatal("the message was never handled")
	}
	cancel()
	<-done

	var s = spans.Named("process " + topic)
	for deadline := time.Now().Add(5 * time.Second); s == nil && time.Now().Before(deadline); s = spans.Named("process " + topic) {
		time.Sleep(10 * time.Millisecond) // the span ends just after the handler returns
	}
	if s == nil {
		t.Fatalf("no span 'process %s'", topic)
	}
	if s.SpanKind() != trace.SpanKindConsumer {
		t.Errorf("span kind %v, want consumer", s.SpanKind())
	}
	telemetrytest.CheckAttrs(t, s, semconv.MessagingSystemKafka, semconv.MessagingOperationTypeProcess,
		semconv.MessagingDestinationName(topic), semconv.MessagingDestinationPartitionID("0"), semconv.MessagingKafkaOffset(0),
		semconv.MessagingConsumerGroupName(group), semconv.MessagingKafkaMessageKey("acc1:42"))
	for _, kv := range s.Attributes() {
		if strings.Contains(kv.Value.String(), "secret") {
			t.Errorf("span attribute %s carries the message value", kv.Key)
		}
	}
}
