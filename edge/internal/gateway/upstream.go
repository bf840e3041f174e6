package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/vros/vros/edge/internal/kept"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// upstream is one service edge forwards to, over a pooled keep-alive client.
type upstream struct {
	name   Upstream
	client *fasthttp.HostClient
	signer *tenancy.Signer
	prop   propagation.TextMapPropagator
	tracer trace.Tracer
	// base is scheme://host[:port] of url.full; host and port its server.address and .port.
	base string
	host string
	port int
	// public is X-Vros-Public-URL's value ("": not sent); nil in tests that build one alone.
	public func() string
	// kept holds the answers of the service that edge serves again itself (catalog-svc's
	// alone; nil: none); keeps the paths it has marked an answer of as keepable (kept.go).
	kept  *kept.Store
	keeps sync.Map
}

// connWait bounds how long a request waits for a connection to a service when all of them
// are busy; then it is answered 503 ("busy; retry later").
const connWait = 5 * time.Second

func newUpstream(name Upstream, rawURL string, signer *tenancy.Signer, prop propagation.TextMapPropagator, tracer trace.Tracer) (*upstream, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%s URL %q is not an http(s) URL", name, rawURL)
	}
	if tracer == nil {
		tracer = noop.NewTracerProvider().Tracer("")
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = map[string]int{"http": 80, "https": 443}[u.Scheme]
	}
	return &upstream{
		tracer: tracer, base: u.Scheme + "://" + u.Host, host: u.Hostname(), port: port,
		name: name,
		client: &fasthttp.HostClient{
			Addr:     u.Host,
			IsTLS:    u.Scheme == "https",
			MaxConns: 1024,
			// A request finding every connection busy waits for one (a burst is queued),
			// for at most connWait, instead of failing at once.
			MaxConnWaitTimeout:  connWait,
			ReadTimeout:         30 * time.Second,
			WriteTimeout:        30 * time.Second,
			MaxIdleConnDuration: 60 * time.Second,
			MaxResponseBodySize: MaxBody,
		},
		signer: signer,
		prop:   prop,
	}, nil
}

// forward sends method path with body to the service on behalf of account (signed; empty
// account for public routes), with the extra headers given as name, value pairs, and copies
// the answer back to the client.
func (u *upstream) forward(c *fiber.Ctx, method, path string, body []byte, t tenancy.Tenant, extra ...string) error {
	key := u.keptKey(c, method, path, body, t, extra)
	if key != "" {
		if ans, ok := u.kept.Get(key, time.Now()); ok {
			sendKept(c, ans)
			return nil
		}
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	extra = append(extra, httpapi.HeaderRequestID, httpapi.RequestID(c))
	for _, h := range forwardedHeaders {
		if v := c.Get(h); v != "" {
			extra = append(extra, h, v)
		}
	}
	if err := u.send(c.UserContext(), req, resp, method, path, body, t, extra...); err != nil {
		return err
	}
	if u.kept != nil {
		u.keep(key, path, t.AccountID, resp)
	}
	c.Status(resp.StatusCode())
	// Only the type the service sent: fasthttp reports a default for none.
	resp.Header.SetNoDefaultContentType(true)
	if resp.StatusCode() == fiber.StatusNotModified {
		// A 304 carries the validators and no representation: not even the default type.
		c.Response().Header.SetNoDefaultContentType(true)
	}
	for _, h := range answerHeaders {
		if v := resp.Header.Peek(h); len(v) > 0 {
			c.Response().Header.SetBytesV(h, v)
		}
	}
	// Copy: resp goes back to fasthttp's pool when forward returns, while Fiber writes the
	// client's answer after that. Send would keep a reference to resp's buffer, which the
	// next forwarded request overwrites (another tenant's answer sent to this client).
	c.Response().SetBody(resp.Body())
	return nil
}

// send fills req (method, path, body, the signed tenant t, the public URL, trace context and
// the extra headers as name, value pairs), sends it within a client span and leaves the
// service's answer in resp. A service that cannot be reached is a 503 of edge's own. The
// caller owns req and resp (pooled): nothing of them may outlive its use.
func (u *upstream) send(ctx context.Context, req *fasthttp.Request, resp *fasthttp.Response, method, path string, body []byte, t tenancy.Tenant, extra ...string) error {
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetHost(u.client.Addr)
	if body != nil {
		req.Header.SetContentType(fiber.MIMEApplicationJSON)
		req.SetBodyRaw(body)
	}
	if u.public != nil {
		if p := u.public(); p != "" {
			req.Header.Set(HeaderPublicURL, p)
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	if t.AccountID != "" {
		// Signed as sent: the path with its raw query, and the body's exact bytes (nil and
		// empty alike: no body).
		u.signer.SetHeaders(req.Header.Set, t, method, path, body, time.Now())
	}
	ctx, span := u.span(ctx, method, path)
	defer span.End()
	u.prop.Inject(ctx, requestCarrier{&req.Header})

	if err := u.do(req, resp); err != nil {
		kind := "_OTHER"
		if err == fasthttp.ErrTimeout {
			kind = "timeout"
		} else if _, ok := err.(net.Error); ok {
			kind = "connection"
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(kind))
		span.SetStatus(codes.Error, kind)
		if errors.Is(err, fasthttp.ErrNoFreeConns) {
			return httpapi.Unavailable(fmt.Sprintf("%s is busy; retry later", u.name))
		}
		return httpapi.Unavailable(fmt.Sprintf("%s is not reachable; retry later", u.name))
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode()))
	if resp.StatusCode() >= 500 {
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode())))
		span.SetStatus(codes.Error, "")
	}
	return nil
}

// do sends req. When the service closed the connection before answering a byte, the pool's
// idle connections are most likely all closed the same way (the service restarted: a rollout,
// a crash), and fasthttp, which tries a request that is not idempotent again only on such an
// answer and at most MaxIdemponentCallAttempts times, would meet one dead connection after
// another and give up while the service is up. So the idle connections are dropped and the
// request is sent once more, on a new one. It is safe for the reason fasthttp's own retry is:
// a service that closes a connection before answering has not read the request from it (a
// process killed half-way through a request is the exception any client retry shares, and
// the booking writes that matter take an Idempotency-Key).
func (u *upstream) do(req *fasthttp.Request, resp *fasthttp.Response) error {
	err := u.client.Do(req, resp)
	if errors.Is(err, fasthttp.ErrConnectionClosed) {
		u.client.CloseIdleConnections()
		err = u.client.Do(req, resp)
	}
	return err
}

// span starts the client span of one forwarded request (OpenTelemetry's HTTP client
// conventions). url.full leaves out the query (a property id today, anything tomorrow) and a
// photo's key (a capability: whoever knows it sees the photo); the span is named by the
// template, so a path never splits the span names.
func (u *upstream) span(ctx context.Context, method, path string) (context.Context, trace.Span) {
	p, _, _ := strings.Cut(path, "?")
	template := p
	if strings.HasPrefix(p, "/media/") {
		template = "/media/{key}/{file}"
		p = "/media/REDACTED/" + p[strings.LastIndexByte(p, '/')+1:]
	}
	if strings.HasPrefix(p, "/internal/channels/inbound/") {
		// The token is a capability: whoever knows it posts reservations to the connection.
		rest := strings.TrimPrefix(p, "/internal/channels/inbound/")
		adapter, _, _ := strings.Cut(rest, "/")
		template = "/internal/channels/inbound/{adapter}/{token}"
		p = "/internal/channels/inbound/" + adapter + "/REDACTED"
	}
	if strings.HasPrefix(p, "/internal/ical/") {
		// The token is a capability: whoever knows it reads the property's calendar.
		template = "/internal/ical/{token}.ics"
		p = "/internal/ical/REDACTED.ics"
	}
	if strings.HasPrefix(p, "/internal/statements/") {
		// The token is a capability: whoever knows it reads an owner's statement.
		template = "/internal/statements/{token}"
		p = "/internal/statements/REDACTED"
	}
	return u.tracer.Start(ctx, method+" "+template, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.ServerAddress(u.host), semconv.ServerPort(u.port),
			semconv.URLFull(u.base+p), semconv.URLTemplate(template), attribute.String("vros.upstream", string(u.name))))
}

// answerHeaders are the headers of a service's answer that edge passes on to the client.
var answerHeaders = []string{fiber.HeaderContentType, fiber.HeaderCacheControl, fiber.HeaderETag, fiber.HeaderLastModified,
	"Idempotent-Replayed", fiber.HeaderRetryAfter}

// forwardedHeaders are the client headers a service may need.
var forwardedHeaders = []string{fiber.HeaderIfNoneMatch, "Idempotency-Key"}

// requestCarrier injects trace context into an outgoing fasthttp request.
type requestCarrier struct{ h *fasthttp.RequestHeader }

func (r requestCarrier) Get(key string) string { return string(r.h.Peek(key)) }
func (r requestCarrier) Set(key, value string) { r.h.Set(key, value) }
func (r requestCarrier) Keys() []string        { return nil }
