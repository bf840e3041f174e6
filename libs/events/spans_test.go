package events_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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

// TestProducerSpan: a message that carries its writer's trace context (Message.Trace) is sent
// in a producer span "send <topic>", the child of that context, with the messaging
// conventions' attributes and never the value; its headers carry the send span's context, so
// that the consumer's process span is the send span's child: one trace from the write to the
// consumer. A message of no trace is sent without a span, its headers without a traceparent.
func TestProducerSpan(t *testing.T) {
	topic := newTopic(t, 1)
	spans := telemetrytest.NewSpans(t)
	prop := propagation.TraceContext{}
	pub := events.NewPublisherWith(brokers, events.PublisherOptions{Tracer: spans.Tracer(), Propagator: prop})
	defer pub.Close()

	wctx, write := spans.Tracer().Start(context.Background(), "the write")
	traced := events.Message{Topic: topic, Key: "acc1:42", Value: []byte(`{"secret":"value"}`), Trace: events.TraceOf(wctx, prop)}
	write.End()
	untraced := events.Message{Topic: topic, Key: "acc1:43", Value: []byte(`{}`)}
	if err := pub.Publish(context.Background(), traced, untraced); err != nil {
		t.Fatal(err)
	}
	if n := len(spans.Ended()); n != 2 { // the write and one send
		t.Fatalf("%d spans ended, want the write's and one send span", n)
	}
	send := spans.Named("send " + topic)
	if send == nil {
		t.Fatalf("no span 'send %s'", topic)
	}
	if send.SpanKind() != trace.SpanKindProducer {
		t.Errorf("span kind %v, want producer", send.SpanKind())
	}
	if send.Parent().SpanID() != write.SpanContext().SpanID() || send.SpanContext().TraceID() != write.SpanContext().TraceID() {
		t.Errorf("send span's parent %v, want the write's span %v", send.Parent(), write.SpanContext())
	}
	telemetrytest.CheckAttrs(t, send, semconv.MessagingSystemKafka, semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("send"), semconv.MessagingDestinationName(topic),
		semconv.MessagingKafkaMessageKey("acc1:42"), semconv.MessagingMessageBodySize(len(traced.Value)))
	for _, kv := range send.Attributes() {
		if strings.Contains(kv.Value.String(), "secret") {
			t.Errorf("span attribute %s carries the message value", kv.Key)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := map[string][]kafka.Header{}
	var mu sync.Mutex
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: fmt.Sprintf("send-spans-%d", time.Now().UnixNano()),
			Topics: []string{topic}, Tracer: spans.Tracer(), Propagator: prop}, func(_ context.Context, m kafka.Message) error {
			mu.Lock()
			defer mu.Unlock()
			got[string(m.Key)] = m.Headers
			if len(got) == 2 {
				cancel()
			}
			return nil
		})
	}()
	<-done
	if len(got) != 2 {
		t.Fatalf("consumed %d of 2 messages", len(got))
	}
	header := func(key, name string) string {
		for _, h := range got[key] {
			if h.Key == name {
				return string(h.Value)
			}
		}
		return ""
	}
	if tp, want := header("acc1:42", "traceparent"), "00-"+send.SpanContext().TraceID().String()+"-"+send.SpanContext().SpanID().String()+"-01"; tp != want {
		t.Errorf("traceparent header %q, want the send span's %q", tp, want)
	}
	if tp := header("acc1:43", "traceparent"); tp != "" {
		t.Errorf("a message of no trace carries traceparent %q", tp)
	}
	var process sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(5 * time.Second); process == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, s := range spans.Ended() {
			if s.Name() == "process "+topic && s.Parent().SpanID() == send.SpanContext().SpanID() {
				process = s
			}
		}
	}
	if process == nil {
		t.Fatal("no process span whose parent is the send span")
	}
	if process.SpanContext().TraceID() != write.SpanContext().TraceID() {
		t.Errorf("process span in trace %v, want the write's %v", process.SpanContext().TraceID(), write.SpanContext().TraceID())
	}
}
