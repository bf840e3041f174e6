package telemetrytest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Spans records the spans of one test's tracer, in memory (the SDK's tracetest recorder).
type Spans struct {
	recorder *tracetest.SpanRecorder
	provider *sdktrace.TracerProvider
}

// NewSpans returns a recorder that is shut down when the test ends.
func NewSpans(t testing.TB) *Spans {
	r := tracetest.NewSpanRecorder()
	p := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r))
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return &Spans{recorder: r, provider: p}
}

// Tracer is a tracer whose spans this recorder keeps.
func (s *Spans) Tracer() trace.Tracer { return s.provider.Tracer("telemetrytest") }

// Provider is the tracer provider behind Tracer.
func (s *Spans) Provider() trace.TracerProvider { return s.provider }

// Ended are the spans ended so far, oldest first.
func (s *Spans) Ended() []sdktrace.ReadOnlySpan { return s.recorder.Ended() }

// Named is the last ended span of that name, or nil.
func (s *Spans) Named(name string) sdktrace.ReadOnlySpan {
	ended := s.recorder.Ended()
	for i := len(ended) - 1; i >= 0; i-- {
		if ended[i].Name() == name {
			return ended[i]
		}
	}
	return nil
}

// Attrs maps a span's attributes by key.
func Attrs(span sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range span.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// CheckAttrs reports every attribute of want that span lacks or holds with another value.
func CheckAttrs(t testing.TB, span sdktrace.ReadOnlySpan, want ...attribute.KeyValue) {
	t.Helper()
	got := Attrs(span)
	for _, kv := range want {
		if v, ok := got[kv.Key]; !ok || v != kv.Value {
			t.Errorf("span %q: %s = %v (set %v), want %v", span.Name(), kv.Key, v.String(), ok, kv.Value.String())
		}
	}
}
