// Package telemetry sets up logs, traces and metrics for one service.
//
// Providers are returned, not installed globally, so that several services can run in one
// process (the dev launcher) and each still exposes only its own metrics.
package telemetry

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/libs/buildinfo"
)

// Telemetry is one service's logger, tracer, meter and Prometheus registry.
type Telemetry struct {
	Service    string
	Logger     *slog.Logger
	Tracer     trace.Tracer
	Traces     trace.TracerProvider
	Meter      metric.Meter
	Meters     metric.MeterProvider
	Registry   *prometheus.Registry
	Propagator propagation.TextMapPropagator
	shutdown   []func(context.Context) error
}

// Setup builds telemetry for service. Traces are exported over OTLP/HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT is set; they are still created (and their ids logged and
// propagated) when it is not.
func Setup(ctx context.Context, service, level string) (*Telemetry, error) {
	t := &Telemetry{Service: service}
	t.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	otel.SetTextMapPropagator(t.Propagator)

	res := resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(service), semconv.ServiceVersion(buildinfo.Version))

	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, err
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)
	t.shutdown = append(t.shutdown, tp.Shutdown)
	t.Traces = tp
	t.Tracer = tp.Tracer("github.com/vros/vros/" + service)

	reg, mp, err := NewMetrics(res)
	if err != nil {
		return nil, err
	}
	t.Registry = reg
	t.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	t.shutdown = append(t.shutdown, mp.Shutdown)
	t.Meters = mp
	t.Meter = mp.Meter("github.com/vros/vros/" + service)

	out := io.Writer(os.Stderr)
	if w, ok := ctx.Value(logOutputKey{}).(io.Writer); ok {
		out = w
	}
	t.Logger = slog.New(&traceHandler{Handler: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: ParseLevel(level)})}).
		With("service", service)
	return t, nil
}

type logOutputKey struct{}

// WithLogOutput makes Setup, given a context derived from the one returned, write the
// service's log lines to w instead of standard error: the dev launcher's stack, which runs
// every service in one process, hands its tests what they all logged (systest/e2e scans it
// for card numbers). Several services may write at once: w must be safe for concurrent use.
func WithLogOutput(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, logOutputKey{}, w)
}

// NewMetrics returns a meter provider whose instruments a new Prometheus registry exports,
// as a service's /metrics does: OpenTelemetry's names with dots as underscores, the unit
// as a suffix (`_seconds`), `_total` after a counter's name (docs/observability.md).
// res may be nil. Tests read what a service would expose through it
// (telemetrytest.NewMetrics).
func NewMetrics(res *resource.Resource) (*prometheus.Registry, *sdkmetric.MeterProvider, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, err
	}
	opts := []sdkmetric.Option{sdkmetric.WithReader(exp)}
	if res != nil {
		opts = append(opts, sdkmetric.WithResource(res))
	}
	return reg, sdkmetric.NewMeterProvider(opts...), nil
}

// Shutdown flushes spans and metrics.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(t.shutdown) - 1; i >= 0; i-- {
		errs = append(errs, t.shutdown[i](ctx))
	}
	return errors.Join(errs...)
}

// ParseLevel maps debug|info|warn|error to a slog level (info when unknown).
func ParseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// traceHandler adds trace_id and span_id of the record's context to every log line.
type traceHandler struct{ slog.Handler }

func (h *traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{h.Handler.WithAttrs(as)}
}

func (h *traceHandler) WithGroup(name string) slog.Handler {
	return &traceHandler{h.Handler.WithGroup(name)}
}
