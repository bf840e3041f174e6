// Package events defines how vros change events look on Kafka and how they are written:
// CloudEvents 1.0 in structured JSON mode, keyed by `<accountId>:<propertyId>`, with the
// W3C trace context in the message headers.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Topics.
const (
	TopicProperty = "vros.property.v1"
	TopicBooking  = "vros.booking.v1"
	// TopicIntegration carries what integration-svc raises itself: channel reservation
	// conflicts (contract.ChannelConflict).
	TopicIntegration = "vros.integration.v1"
)

// Topics are every vros topic, all compacted: what the dev stacks and the chart create.
var Topics = []string{TopicProperty, TopicBooking, TopicIntegration}

// ContentType is the Kafka content-type header of a structured CloudEvent.
const ContentType = "application/cloudevents+json"

// Message is one event ready for Kafka.
type Message struct {
	Topic string
	Key   string
	Value []byte
	// Tombstone publishes the key with a null value (Value must be nil): on a compacted topic
	// it erases the key's earlier values. Consumers read it with IsTombstone.
	Tombstone bool
	// Trace is the W3C trace context of the write that caused the event.
	Trace map[string]string
}

// Key is the message key of everything that belongs to one property of one account.
func Key(accountID, propertyID string) string { return accountID + ":" + propertyID }

// AccountKey is the message key of an account's erasure event (contract.AccountErased).
func AccountKey(accountID string) string { return accountID + ":account" }

// IsTombstone reports whether m is a tombstone: the key's earlier values are to be forgotten.
// Every consumer handles it as such, never as a malformed event.
func IsTombstone(m kafka.Message) bool { return len(m.Value) == 0 }

// Encode builds a CloudEvent of type typ from source about subject with data as its JSON
// payload.
func Encode(source, typ, subject string, at time.Time, data any) ([]byte, error) {
	e := cloudevents.New()
	e.SetID(uuid.NewString())
	e.SetSource(source)
	e.SetType(typ)
	e.SetSubject(subject)
	e.SetTime(at.UTC())
	if err := e.SetData("application/json", data); err != nil {
		return nil, fmt.Errorf("event data: %w", err)
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	return json.Marshal(e)
}

// Decode parses a structured CloudEvent and unmarshals its data into data.
func Decode(value []byte, data any) (cloudevents.Event, error) {
	var e cloudevents.Event
	if err := json.Unmarshal(value, &e); err != nil {
		return e, fmt.Errorf("not a CloudEvent: %w", err)
	}
	if data != nil {
		if err := e.DataAs(data); err != nil {
			return e, fmt.Errorf("event data: %w", err)
		}
	}
	return e, nil
}

// Publisher writes messages to Kafka, waiting for all in-sync replicas.
type Publisher struct {
	w       *kafka.Writer
	metrics *clientMetrics // nil: none
	tracer  trace.Tracer   // nil: no spans
	prop    propagation.TextMapPropagator
}

// PublisherOptions configure NewPublisherWith.
type PublisherOptions struct {
	// Meter times every write in messaging.client.operation.duration (operation send); nil:
	// no metrics.
	Meter metric.Meter
	// Tracer and Propagator, both set, trace the produce of every message that carries a
	// trace context (Message.Trace, the write that caused it, else ctx's span): a producer
	// span "send <topic>", its child, whose context then travels in the message's headers in
	// place of Message.Trace, so that the consumer's process span is the produce span's child
	// and one trace runs from the write to every consumer (docs/tracing.md). Without them, or
	// for a message of no trace, Message.Trace goes into the headers as it is.
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
}

// NewPublisher returns a publisher for brokers, without metrics. Messages are partitioned by
// key with murmur2, the Java client's hash, so that any client agrees on a key's partition.
func NewPublisher(brokers []string) *Publisher { return NewPublisherWith(brokers, PublisherOptions{}) }

// NewPublisherWith is NewPublisher with options.
func NewPublisherWith(brokers []string, o PublisherOptions) *Publisher {
	return &Publisher{w: &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Balancer:     &kafka.Murmur2Balancer{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 2 * time.Millisecond,
		MaxAttempts:  3,
		WriteTimeout: 5 * time.Second,
		ReadTimeout:  5 * time.Second,
	}, metrics: newClientMetrics(o.Meter), tracer: o.Tracer, prop: o.Propagator}
}

// Publish writes msgs; it returns once Kafka has acknowledged all of them. The write is timed
// once for each topic it writes to (a failed write with its error type), and each traced
// message's produce is a span (PublisherOptions.Tracer).
func (p *Publisher) Publish(ctx context.Context, msgs ...Message) error {
	out := make([]kafka.Message, len(msgs))
	spans := make([]trace.Span, len(msgs))
	for i, m := range msgs {
		out[i] = kafka.Message{Topic: m.Topic, Key: []byte(m.Key), Value: m.Value,
			Headers: []kafka.Header{{Key: "content-type", Value: []byte(ContentType)}}}
		headers := m.Trace
		if p.tracer != nil && p.prop != nil {
			headers, spans[i] = p.startSend(ctx, m)
		}
		for k, v := range headers {
			out[i].Headers = append(out[i].Headers, kafka.Header{Key: k, Value: []byte(v)})
		}
	}
	start := time.Now()
	err := p.w.WriteMessages(ctx, out...)
	took := time.Since(start).Seconds()
	p.endSends(spans, err)
	if p.metrics == nil {
		return err
	}
	errType := ""
	if err != nil {
		errType = kafkaErrorType(err)
	}
	var seen [4]string
	topics := seen[:0]
	for _, m := range msgs {
		if !slices.Contains(topics, m.Topic) {
			topics = append(topics, m.Topic)
			p.metrics.record(ctx, took, opSend, m.Topic, errType)
		}
	}
	return err
}

// startSend starts the producer span of m, the child of m's trace context (or of ctx's span),
// and returns the headers that carry the span's context (m.Trace and no span when m belongs
// to no trace). The span follows OpenTelemetry's messaging conventions for a Kafka "send";
// the key (<accountId>:<propertyId>, two ids) is recorded, the value never.
func (p *Publisher) startSend(ctx context.Context, m Message) (map[string]string, trace.Span) {
	parent := ctx
	if len(m.Trace) > 0 {
		parent = p.prop.Extract(ctx, propagation.MapCarrier(m.Trace))
	}
	if !trace.SpanContextFromContext(parent).IsValid() {
		return m.Trace, nil
	}
	attrs := []attribute.KeyValue{semconv.MessagingSystemKafka, semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("send"), semconv.MessagingDestinationName(m.Topic),
		semconv.MessagingKafkaMessageKey(m.Key), semconv.MessagingMessageBodySize(len(m.Value))}
	if m.Tombstone {
		attrs = append(attrs, semconv.MessagingKafkaMessageTombstone(true))
	}
	sctx, span := p.tracer.Start(parent, "send "+m.Topic, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	headers := propagation.MapCarrier{}
	p.prop.Inject(sctx, headers)
	return headers, span
}

// endSends ends the produce spans of one write; err is the write's (kafka.WriteErrors tells
// which messages failed; any other error failed them all).
func (p *Publisher) endSends(spans []trace.Span, err error) {
	var we kafka.WriteErrors
	perMessage := errors.As(err, &we) && len(we) == len(spans)
	for i, span := range spans {
		if span == nil {
			continue
		}
		failed := err
		if perMessage {
			failed = we[i]
		}
		if failed != nil {
			kind := kafkaErrorType(failed)
			span.SetAttributes(semconv.ErrorTypeKey.String(kind))
			span.SetStatus(codes.Error, kind)
		}
		span.End()
	}
}

// Close flushes and closes the writer.
func (p *Publisher) Close() error { return p.w.Close() }

// TraceOf returns the W3C trace headers of ctx, to store beside a pending event.
func TraceOf(ctx context.Context, prop propagation.TextMapPropagator) map[string]string {
	c := propagation.MapCarrier{}
	prop.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// Reachable reports whether one of brokers answers the Kafka protocol.
func Reachable(ctx context.Context, brokers []string) error {
	var last error
	for _, b := range brokers {
		conn, err := (&kafka.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", b)
		if err == nil {
			_, err = conn.Brokers()
			_ = conn.Close()
			if err == nil {
				return nil
			}
		}
		last = err
	}
	return fmt.Errorf("kafka unreachable: %w", last)
}
