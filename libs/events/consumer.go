package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// permanent marks an error that retrying cannot fix (a malformed event).
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that the consumer parks the message instead of retrying it.
func Permanent(err error) error { return permanent{err} }

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool { return errors.As(err, new(permanent)) }

// Handler applies one message. It must be idempotent: delivery is at least once.
type Handler func(ctx context.Context, m kafka.Message) error

// Parker keeps a message that cannot be applied, with the reason, so that it neither
// blocks its partition nor is lost.
type Parker func(ctx context.Context, m kafka.Message, reason error) error

// ConsumerOptions configure Consume.
type ConsumerOptions struct {
	Brokers []string
	GroupID string
	Topics  []string
	Park    Parker
	Log     *slog.Logger
	Tracer  trace.Tracer
	Meter   metric.Meter
	// Propagator reads the writer's trace context from the message headers.
	Propagator propagation.TextMapPropagator
	// CommitEvery, when not zero, commits the offsets of applied messages together at this
	// interval (and when Consume returns) instead of one by one: a view whose handler is
	// idempotent (version-checked snapshots) applies again at most this much after a crash,
	// and no longer waits for the broker after every message while it catches up. Zero
	// commits each message before the next is fetched.
	CommitEvery time.Duration
	// Applied, when set, is told each message once its handler returned (applied or parked),
	// after the group's committed offsets as it starts: how far the view stands, for the
	// readers that must know it (docs/catalog.md, "Answers kept at edge").
	Applied *Applied

	// phase, in tests only (export_test.go), is called as the loop enters each of its
	// phases: "fetch" (before a message is fetched), "apply" (a message fetched, before its
	// handler runs) and "commit" (the message applied or parked, before its offset is
	// committed).
	phase func(name string)
}

func (o ConsumerOptions) at(phase string) {
	if o.phase != nil {
		o.phase(phase)
	}
}

// Consume reads the topics as a member of the group until ctx ends. A message's offset is
// committed only after its handler succeeded or it was parked. A transient failure is
// retried with backoff, holding back its partition: the order of one key's events matters.
// An unreachable broker is waited for, never a reason to return. Stopped by ctx, in whichever
// phase (fetching, applying, parking, waiting to retry, committing), it returns nil; a
// message whose handler the stop cut is neither parked nor committed, and the group's next
// reader of its partition gets it again.
func Consume(ctx context.Context, o ConsumerOptions, h Handler) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: o.Brokers, GroupID: o.GroupID, GroupTopics: o.Topics,
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 250 * time.Millisecond,
		ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: time.Second,
		// After a broker restart the reader joins again as a new member, and the group waits
		// for the old one's session to expire before it assigns the partitions: the session
		// timeout is how long the views stand still then (kafka-go's default is 30s). Groups
		// are small (one replica each, by default), so a prompt heartbeat costs nothing.
		HeartbeatInterval: time.Second, SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
		JoinGroupBackoff: time.Second, CommitInterval: o.CommitEvery,
	})
	defer func() { _ = r.Close() }()

	met := newConsumerMetrics(o.Meter, o.Topics)
	if o.Meter != nil {
		lag, _ := o.Meter.Int64ObservableGauge("vros.consumer.lag", metric.WithDescription("Messages behind the end of the partitions read."))
		if lag != nil {
			group := metric.WithAttributes(attribute.String("group", o.GroupID))
			reg, err := o.Meter.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
				obs.ObserveInt64(lag, r.Stats().Lag, group)
				return nil
			}, lag)
			if err == nil {
				defer func() { _ = reg.Unregister() }()
			}
		}
	}

	if o.Applied != nil {
		// Until they are read the view's positions are only those of the messages it applies:
		// its readers then trust it less, never more. What the group committed is what this
		// view applied (the group is its own), so they stay true however late they come.
		go func() {
			for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
				err := o.Applied.LoadCommitted(ctx, o.Brokers, o.GroupID, o.Topics)
				if err == nil || ctx.Err() != nil {
					return
				}
				o.logWarn(ctx, "committed offsets not read; retrying", err, "retry_in", wait.String())
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}()
	}
	fetchBackoff := time.Duration(0)
	for {
		o.at("fetch")
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// The broker is unreachable (restarting, say) or the group could not be joined:
			// the reader heals by itself once the broker is back. Giving up here would stop the
			// service over an outage that its outbox and views are built to outlast.
			fetchBackoff = min(max(2*fetchBackoff, 100*time.Millisecond), time.Second)
			o.logWarn(ctx, "fetch failed; retrying", err, "topics", o.Topics, "retry_in", fetchBackoff.String())
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(fetchBackoff):
			}
			continue
		}
		fetchBackoff = 0
		mctx := ctx
		if o.Propagator != nil {
			mctx = o.Propagator.Extract(ctx, headerCarrier(m.Headers))
		}
		o.at("apply")
		start := time.Now()
		parked, stopped := apply(mctx, o, h, m, met)
		if stopped {
			return nil
		}
		met.done(ctx, m.Topic, parked, time.Since(start).Seconds())
		if o.Applied != nil {
			o.Applied.Mark(m.Topic, m.Partition, m.Offset)
		}
		o.at("commit")
		if err := r.CommitMessages(ctx, m); err != nil && ctx.Err() == nil {
			o.logWarn(ctx, "commit failed; the message will be applied again", err)
		}
	}
}

// apply runs h until it succeeds, parks a permanent failure (parked true), or ctx ends
// (stopped true). A failure once ctx has ended is no failure of the message (the stop most
// likely cut the handler's or the parker's work): it is neither parked nor retried, and the
// message stays uncommitted. Each run is timed as a messaging "process" operation, a failed
// one with its error type.
func apply(ctx context.Context, o ConsumerOptions, h Handler, m kafka.Message, met *consumerMetrics) (parked, stopped bool) {
	backoff := 100 * time.Millisecond
	for {
		start := time.Now()
		err := run(ctx, o, h, m)
		met.attempt(ctx, m.Topic, time.Since(start).Seconds(), err)
		if err == nil {
			return false, false
		}
		if ctx.Err() != nil {
			return false, true
		}
		if IsPermanent(err) && o.Park != nil {
			perr := o.Park(ctx, m, err)
			if perr == nil {
				o.logWarn(ctx, "event parked", err, "topic", m.Topic, "partition", m.Partition, "offset", m.Offset)
				return true, false
			}
			if ctx.Err() != nil {
				return false, true
			}
			err = errors.Join(err, perr)
		}
		o.logWarn(ctx, "event not applied; retrying", err, "topic", m.Topic, "offset", m.Offset)
		select {
		case <-ctx.Done():
			return false, true
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// errorKind is a handler error's error.type: permanent (parked), retry, or "" for none.
func errorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case IsPermanent(err):
		return "permanent"
	}
	return "retry"
}

// run calls h in a consumer span, turning a panic into a permanent error. The span follows
// OpenTelemetry's messaging conventions for a Kafka "process" span; the message key
// (<accountId>:<propertyId>, two ids) is recorded, the value never.
func run(ctx context.Context, o ConsumerOptions, h Handler, m kafka.Message) (err error) {
	if o.Tracer != nil {
		var span trace.Span
		ctx, span = o.Tracer.Start(ctx, "process "+m.Topic, trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(semconv.MessagingSystemKafka, semconv.MessagingOperationTypeProcess,
				semconv.MessagingOperationName("process"), semconv.MessagingDestinationName(m.Topic),
				semconv.MessagingDestinationPartitionID(strconv.Itoa(m.Partition)), semconv.MessagingKafkaOffset(int(m.Offset)),
				semconv.MessagingConsumerGroupName(o.GroupID), semconv.MessagingKafkaMessageKey(string(m.Key))))
		defer func() { // after the recover below: err is final
			if err != nil {
				kind := errorKind(err)
				span.SetAttributes(semconv.ErrorTypeKey.String(kind))
				span.SetStatus(codes.Error, kind)
			}
			span.End()
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			err = Permanent(fmt.Errorf("handler panicked: %v", r))
		}
	}()
	return h(ctx, m)
}

func (o ConsumerOptions) logWarn(ctx context.Context, msg string, err error, args ...any) {
	if o.Log != nil {
		o.Log.WarnContext(ctx, msg, append([]any{"err", err, "group", o.GroupID}, args...)...)
	}
}

// headerCarrier reads trace context from Kafka headers.
type headerCarrier []kafka.Header

func (h headerCarrier) Get(key string) string {
	for _, x := range h {
		if x.Key == key {
			return string(x.Value)
		}
	}
	return ""
}
func (h headerCarrier) Set(string, string) {}
func (h headerCarrier) Keys() []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = x.Key
	}
	return out
}

// ReplicaGroup returns group, or when it is empty a group of this replica alone
// ("<prefix>-<hostname>"). A service that keeps what it consumes in memory needs every
// replica to read every partition; the topics are compacted, so a new group starts from the
// current snapshots.
func ReplicaGroup(group, prefix string) (string, error) {
	if group != "" {
		return group, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("consumer group from host name: %w", err)
	}
	return prefix + "-" + host, nil
}
