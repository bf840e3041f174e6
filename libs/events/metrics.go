package events

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"

	"github.com/vros/vros/libs/telemetry"
)

// The messaging operations timed (messaging.operation.name).
const (
	opSend    = "send"
	opProcess = "process"
)

// DurationBuckets are the bucket boundaries (seconds) of the Kafka client operations and of
// applying an event: OpenTelemetry's advice for client operation durations.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// clientMetrics is the histogram messaging.client.operation.duration with the attribute sets
// of the label values seen so far (operations, topics and error types are a few fixed
// names), built once and looked up without allocating.
type clientMetrics struct {
	duration messagingconv.ClientOperationDuration
	sets     *telemetry.AttrSets[clientKey]
}

type clientKey struct{ op, topic, errType string }

// maxSets bounds the cached attribute sets; past it a set is built per operation.
const maxSets = 1024

// newClientMetrics returns nil for a nil meter: no metrics.
func newClientMetrics(meter metric.Meter) *clientMetrics {
	if meter == nil {
		return nil
	}
	d, _ := messagingconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(DurationBuckets...))
	return &clientMetrics{duration: d, sets: telemetry.NewAttrSets[clientKey](maxSets)}
}

func (m *clientMetrics) record(ctx context.Context, seconds float64, op, topic, errType string) {
	if m == nil {
		return
	}
	set := m.sets.Get(clientKey{op: op, topic: topic, errType: errType}, func() []attribute.KeyValue {
		attrs := []attribute.KeyValue{semconv.MessagingSystemKafka, semconv.MessagingOperationName(op),
			semconv.MessagingDestinationName(topic)}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		return attrs
	})
	m.duration.Inst().Record(ctx, seconds, set)
}

// kafkaErrorType is the error.type of a failed write: Kafka's error name in snake case
// ("not_leader_for_partition"), timeout, canceled, connection (the broker unreachable), or
// _OTHER. Never the error's text, which names hosts.
func kafkaErrorType(err error) string {
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil {
				return kafkaErrorType(e)
			}
		}
	}
	var ke kafka.Error
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ke):
		return strings.ReplaceAll(strings.ToLower(ke.Title()), " ", "_")
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection"
	}
	return "_OTHER"
}

// consumerMetrics are Consume's instruments; nil: none.
type consumerMetrics struct {
	applied, failed, parked metric.Int64Counter
	apply                   metric.Float64Histogram
	client                  *clientMetrics
	byTopic                 map[string]metric.MeasurementOption // built once per topic read
}

func newConsumerMetrics(meter metric.Meter, topics []string) *consumerMetrics {
	if meter == nil {
		return nil
	}
	m := &consumerMetrics{client: newClientMetrics(meter), byTopic: map[string]metric.MeasurementOption{}}
	m.applied, _ = meter.Int64Counter("vros.consumer.applied", metric.WithDescription("Events applied."))
	m.failed, _ = meter.Int64Counter("vros.consumer.errors", metric.WithDescription("Events that failed to apply (retried or parked)."))
	m.parked, _ = meter.Int64Counter("vros.consumer.parked",
		metric.WithDescription("Events that could not be applied (a permanent failure) and were parked in parked_events."))
	m.apply, _ = meter.Float64Histogram("vros.consumer.apply.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to apply one event, from its first attempt until it is applied or parked (retries included)."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	for _, t := range topics {
		set := metric.WithAttributeSet(attribute.NewSet(attribute.String("topic", t)))
		m.byTopic[t] = set
		// Exported at 0 from the start, so that a rate or an alert has a series before the
		// first failure.
		for _, c := range []metric.Int64Counter{m.applied, m.failed, m.parked} {
			if c != nil {
				c.Add(context.Background(), 0, set)
			}
		}
	}
	return m
}

// topic is the attribute set of topic.
func (m *consumerMetrics) topic(topic string) metric.MeasurementOption {
	if o, ok := m.byTopic[topic]; ok {
		return o
	}
	return metric.WithAttributes(attribute.String("topic", topic))
}

// done counts an event consumed: applied, or parked after it failed for good; took is the
// time it took.
func (m *consumerMetrics) done(ctx context.Context, topic string, parked bool, took float64) {
	if m == nil {
		return
	}
	t := m.topic(topic)
	m.apply.Record(ctx, took, t)
	m.applied.Add(ctx, 1, t) // parked ones too, as ever: "done with"
	if parked {
		m.parked.Add(ctx, 1, t)
	}
}

// attempt times one run of the handler and counts a failed one.
func (m *consumerMetrics) attempt(ctx context.Context, topic string, took float64, err error) {
	if m == nil {
		return
	}
	m.client.record(ctx, took, opProcess, topic, errorKind(err))
	if err != nil {
		m.failed.Add(ctx, 1, m.topic(topic))
	}
}
