package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/libs/telemetry"
)

// HeaderRequestID carries the request id from edge to the services and back to the client.
const HeaderRequestID = "X-Request-Id"

// Options shape one service's Fiber app.
type Options struct {
	Telemetry *telemetry.Telemetry
	// BodyLimit is the largest body any route accepts; routes may check a smaller one.
	BodyLimit int
	// Ready reports whether the service can serve (Mongo and Kafka reachable).
	Ready func(ctx context.Context) error
}

// New builds a Fiber app with recovery, request ids, tracing, metrics, an access log and the
// /healthz, /readyz and /metrics routes.
func New(o Options) *fiber.App {
	log := o.Telemetry.Logger
	app := fiber.New(fiber.Config{
		AppName:               o.Telemetry.Service,
		BodyLimit:             o.BodyLimit,
		DisableStartupMessage: true,
		ErrorHandler:          ErrorHandler(log),
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
		// Every string and byte slice a handler gets from the request (Params, Get, Query,
		// Body…) is its own copy, not a view of fasthttp's pooled buffers, so nothing a
		// handler keeps (a cache key, a log attribute, a goroutine's argument, a metric
		// label) can change under it when the buffer serves the next request.
		Immutable: true,
	})
	app.Use(observe(o.Telemetry))
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/readyz", func(c *fiber.Ctx) error {
		if o.Ready != nil {
			ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
			defer cancel()
			if err := o.Ready(ctx); err != nil {
				return c.Status(fiber.StatusServiceUnavailable).SendString("not ready: " + err.Error())
			}
		}
		return c.SendString("ready")
	})
	metrics := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(o.Telemetry.Registry, promhttp.HandlerOpts{}))
	app.Get("/metrics", func(c *fiber.Ctx) error {
		metrics(c.Context())
		return nil
	})
	return app
}

// RequestID is the id of the request being served.
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(HeaderRequestID).(string)
	return id
}

// observe is the outermost middleware: it recovers panics, assigns the request id, starts
// the server span from the incoming trace context, records per-route metrics and writes
// one access-log line. It logs the route pattern, never the raw path, because owner
// tokens travel in paths.
func observe(t *telemetry.Telemetry) fiber.Handler {
	duration, _ := t.Meter.Float64Histogram("http.server.request.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of HTTP requests by route and status."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
	log := t.Logger
	return func(c *fiber.Ctx) (err error) {
		start := time.Now()
		rid := c.Get(HeaderRequestID)
		if rid == "" || len(rid) > 64 {
			rid = newID()
		}
		c.Locals(HeaderRequestID, rid)
		c.Set(HeaderRequestID, rid)

		ctx := t.Propagator.Extract(c.UserContext(), HeaderCarrier{c})
		ctx, span := t.Tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)

		defer func() {
			if r := recover(); r != nil {
				log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()), "request_id", rid)
				err = Internal(rid)
			}
			if err != nil {
				if herr := c.App().ErrorHandler(c, err); herr != nil {
					_ = c.SendStatus(fiber.StatusInternalServerError)
				}
				err = nil
			}
			route := c.Route().Path
			status := c.Response().StatusCode()
			span.SetName(c.Method() + " " + route)
			span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
			elapsed := time.Since(start)
			duration.Record(ctx, elapsed.Seconds(), metric.WithAttributes(
				attribute.String("http.request.method", c.Method()), attribute.String("http.route", route),
				attribute.Int("http.response.status_code", status)))
			if route != "/healthz" && route != "/readyz" && route != "/metrics" {
				log.LogAttrs(ctx, slog.LevelInfo, "request",
					slog.String("method", c.Method()), slog.String("route", route), slog.Int("status", status),
					slog.Duration("duration", elapsed), slog.String("request_id", rid))
			}
		}()
		return c.Next()
	}
}

// HeaderCarrier adapts a Fiber request's headers for trace-context extraction.
type HeaderCarrier struct{ C *fiber.Ctx }

var _ propagation.TextMapCarrier = HeaderCarrier{}

func (h HeaderCarrier) Get(key string) string { return h.C.Get(key) }
func (h HeaderCarrier) Set(key, value string) { h.C.Set(key, value) }
func (h HeaderCarrier) Keys() []string {
	var keys []string
	h.C.Request().Header.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Serve runs app on addr until ctx ends, then drains for up to grace.
func Serve(ctx context.Context, app *fiber.App, addr string, ready func(addr string), grace time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return app.ShutdownWithTimeout(grace)
	}
}
