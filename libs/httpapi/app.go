package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/telemetry"
)

// HeaderRequestID carries the request id from edge to the services and back to the client.
const HeaderRequestID = "X-Request-Id"

// A catalog-svc answer that edge may keep and serve again itself (docs/catalog.md, "Answers
// kept at edge") carries both: until when it holds (Unix milliseconds), and where the
// catalog's consumer stood before the answer was read (events.Positions). edge never passes
// them on to a client.
const (
	HeaderKeepUntil = "X-Vros-Keep-Until"
	HeaderApplied   = "X-Vros-Applied"
)

// Options shape one service's Fiber app.
type Options struct {
	Telemetry *telemetry.Telemetry
	// BodyLimit is the largest body any route accepts; routes may check a smaller one.
	BodyLimit int
	// Ready reports whether the service can serve (its MongoDB reachable; never Kafka, whose
	// outage the outbox absorbs). /readyz on the internal listener asks it.
	Ready func(ctx context.Context) error
	// MaxTarget bounds the request target (path and query) and MaxHeaderBytes the header
	// fields together; zero means DefaultMaxTarget and DefaultMaxHeaderBytes. Over them a
	// request is answered 414 or 431 in the envelope of its path, before routing.
	MaxTarget, MaxHeaderBytes int
	// TrustedProxies may set X-Forwarded-For (see ClientIP); from any other peer it is
	// ignored. ParseProxies reads them from configuration.
	TrustedProxies []netip.Prefix
	// EnvelopeFor picks the envelope of a request answered before any route group set one
	// (a 414, a 431, an unknown route); nil means interface A's.
	EnvelopeFor func(path string) Envelope
	// StreamRequestBody makes fasthttp read at most 8 KiB of a body before the handlers run
	// and hand them the rest as a stream (Request.BodyStream), unbounded: BodyLimit is then
	// not enforced, and a middleware registered before every route must read the body
	// within its own limits (edge's gateway.Intake) or c.Body() reads it whole.
	StreamRequestBody bool
}

// Default request limits (docs/limits.md).
const (
	DefaultMaxTarget      = 8 << 10
	DefaultMaxHeaderBytes = 16 << 10
	// requestLineSlack is what the request line holds besides the target (method,
	// protocol, spaces, CRLF), rounded up generously.
	requestLineSlack = 1 << 10
)

// New builds a Fiber app with recovery, request ids, tracing, metrics and an access log. Its
// /healthz, /readyz and /metrics are not routes of the app: Serve answers them on the
// internal listener (internal.go).
func New(o Options) *fiber.App {
	log := o.Telemetry.Logger
	if o.MaxTarget <= 0 {
		o.MaxTarget = DefaultMaxTarget
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	proxies := make([]string, len(o.TrustedProxies))
	for i, p := range o.TrustedProxies {
		proxies[i] = p.String()
	}
	cfg := fiber.Config{
		AppName:               o.Telemetry.Service,
		BodyLimit:             o.BodyLimit,
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler(log, o.EnvelopeFor, o.MaxTarget+o.MaxHeaderBytes+requestLineSlack),
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
		// fasthttp refuses a request whose request line and headers do not fit its read
		// buffer (4 KiB by default) before any handler runs. The buffer holds every request
		// within our limits, so that observe refuses the larger ones with their envelope;
		// beyond the buffer, the error handler still answers 431.
		ReadBufferSize: o.MaxTarget + o.MaxHeaderBytes + requestLineSlack,
		// X-Forwarded-For, X-Forwarded-Host and X-Forwarded-Proto count only from a trusted
		// proxy; with none configured, from no one.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          proxies,
		EnableIPValidation:      true,
		// Every string and byte slice a handler gets from the request (Params, Get, Query,
		// Body…) is its own copy, not a view of fasthttp's pooled buffers, so nothing a
		// handler keeps (a cache key, a log attribute, a goroutine's argument, a metric
		// label) can change under it when the buffer serves the next request.
		Immutable: true,
		// A multipart body is read by the handler that wants it (edge turns it into JSON),
		// not parsed by fasthttp while the request is read: that would refuse a malformed one
		// before any handler could answer it in its interface's envelope, and write file
		// parts to temporary files.
		DisablePreParseMultipartForm: true,
		StreamRequestBody:            o.StreamRequestBody,
	}
	if len(proxies) > 0 {
		cfg.ProxyHeader = fiber.HeaderXForwardedFor
	}
	app := fiber.New(cfg)
	drain := &draining{}
	servers.Store(app, &server{drain: drain, ops: opsHandler(o, drain)})
	app.Use(func(c *fiber.Ctx) error {
		if drain.Load() {
			// Stopping: clients open their next request elsewhere instead of finding this
			// keep-alive connection closed under them.
			c.Set(fiber.HeaderConnection, "close")
		}
		return c.Next()
	})
	app.Use(observe(o.Telemetry, limits{target: o.MaxTarget, header: o.MaxHeaderBytes, proxies: o.TrustedProxies}))
	return app
}

// RequestID is the id of the request being served.
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(HeaderRequestID).(string)
	return id
}

// limits are what observe checks of every request before routing.
type limits struct {
	target, header int
	proxies        []netip.Prefix
}

// observe is the outermost middleware: it recovers panics, assigns the request id, starts
// the server span from the incoming trace context, refuses a request target or header
// block over its limit, records per-route metrics and writes one access-log line. It logs
// the route pattern, never the raw path, because owner tokens travel in paths. The request's
// context carries a mongostore.Tally: the store round trips made before the answer are
// recorded in vros.store.operations by the request's kind (SetKind).
func observe(t *telemetry.Telemetry, lim limits) fiber.Handler {
	duration, _ := t.Meter.Float64Histogram("http.server.request.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of HTTP requests by route and status."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
	ops := newStoreOps(t.Meter)
	log := t.Logger
	return func(c *fiber.Ctx) (err error) {
		start := time.Now()
		rid := c.Get(HeaderRequestID)
		if rid == "" || len(rid) > 64 {
			rid = newID()
		}
		c.Locals(HeaderRequestID, rid)
		c.Set(HeaderRequestID, rid)
		if len(lim.proxies) > 0 {
			c.Locals(proxiesKey, lim.proxies)
		}

		ctx := t.Propagator.Extract(c.UserContext(), HeaderCarrier{c})
		ctx, span := t.Tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		ctx, tally := mongostore.WithTally(ctx)
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
			ops.record(ctx, Kind(c), tally.Count())
			// Probes and scrapes go to the internal listener, so every line here is a client's.
			log.LogAttrs(ctx, slog.LevelInfo, "request",
				slog.String("method", c.Method()), slog.String("route", route), slog.Int("status", status),
				slog.Duration("duration", elapsed), slog.String("request_id", rid))
		}()
		// Lengths only: the header's bytes belong to fasthttp's pooled buffer.
		if n := len(c.Request().Header.RequestURI()); n > lim.target {
			return URITooLong(lim.target)
		}
		if n := len(c.Request().Header.RawHeaders()); n > lim.header {
			return HeadersTooLarge(lim.header)
		}
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

// draining is set once Serve's context ends: answers carry Connection: close and /readyz
// answers 503 while the app still serves.
type draining struct{ atomic.Bool }

// server is what Serve needs of an app New built besides the app: its draining flag and the
// handler of its internal routes.
type server struct {
	drain *draining
	ops   http.Handler
}

// servers maps each app New built to its server (several apps share a process in tests).
var servers sync.Map // *fiber.App -> *server

// Serve runs app on addr until ctx ends, and its internal routes on the internal address of
// ctx (WithInternal). Then, for drain, it goes on serving both while telling clients and
// probes that it is going away (see draining), and finally shuts down, letting requests in
// flight finish for up to grace.
func Serve(ctx context.Context, app *fiber.App, addr string, ready func(addr string), drain, grace time.Duration) error {
	srv, _ := servers.Load(app)
	defer servers.Delete(app)
	s, _ := srv.(*server)

	var ops *http.Server
	opsErr := make(chan error, 1)
	if il, ok := internalFrom(ctx); ok && s != nil {
		ln, err := net.Listen("tcp", il.addr)
		if err != nil {
			return fmt.Errorf("internal listener: %w", err)
		}
		ops = &http.Server{Handler: s.ops, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
		if il.ready != nil {
			il.ready(ln.Addr().String())
		}
		go func() {
			if err := ops.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				opsErr <- fmt.Errorf("internal listener: %w", err)
			}
		}()
		defer ops.Close()
	}

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
	case err := <-opsErr:
		_ = app.Shutdown()
		return err
	case <-ctx.Done():
	}
	if s != nil && drain > 0 {
		s.drain.Store(true)
		if ops != nil {
			// net/http then answers every request with Connection: close.
			ops.SetKeepAlivesEnabled(false)
		}
		select {
		case err := <-errc:
			return err
		case <-time.After(drain):
		}
	}
	err = app.ShutdownWithTimeout(grace)
	if ops != nil {
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		err = errors.Join(err, ops.Shutdown(sctx))
	}
	return err
}
