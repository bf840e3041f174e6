package gateway

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/libs/tenancy"
)

// TestForwardClientSpan: each forwarded request is a client span by OpenTelemetry's HTTP
// conventions whose context reaches the service; url.full holds neither the query, nor a
// photo's key, nor a channel connection's inbound token.
func TestForwardClientSpan(t *testing.T) {
	traceparents := make(chan string, 4)
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparents <- r.Header.Get("Traceparent")
		if strings.HasPrefix(r.URL.Path, "/internal/b/") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer stub.Close()
	spans := telemetrytest.NewSpans(t)
	u, err := newUpstream(CatalogSvc, stub.URL, tenancy.NewSigner(tenancy.CallerEdge, "test-hmac-key-0123456789"), propagation.TraceContext{}, spans.Tracer())
	if err != nil {
		t.Fatal(err)
	}
	su, _ := url.Parse(stub.URL)
	port, _ := strconv.Atoi(su.Port())

	app := fiber.New()
	app.Get("/read", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodGet, "/internal/read/getcalendar?property_id=42", nil, tenancy.Tenant{AccountID: "acc1"})
	})
	app.Get("/photo", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodGet, "/media/k3y-s3cret/large.jpg", nil, tenancy.Tenant{})
	})
	app.Post("/channel", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodPost, "/internal/channels/inbound/channex/t0k3n-s3cret", []byte(`{}`), tenancy.Tenant{})
	})
	app.Post("/book", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodPost, "/internal/b/createbooking", []byte(`{}`), tenancy.Tenant{AccountID: "acc1"})
	})
	for _, tc := range []struct {
		method, path, span, full, template string
		status                             int
	}{
		{"GET", "/read", "GET /internal/read/getcalendar", "/internal/read/getcalendar", "/internal/read/getcalendar", 200},
		{"GET", "/photo", "GET /media/{key}/{file}", "/media/REDACTED/large.jpg", "/media/{key}/{file}", 200},
		{"POST", "/channel", "POST /internal/channels/inbound/{adapter}/{token}", "/internal/channels/inbound/channex/REDACTED",
			"/internal/channels/inbound/{adapter}/{token}", 200},
		{"POST", "/book", "POST /internal/b/createbooking", "/internal/b/createbooking", "/internal/b/createbooking", 503},
	} {
		resp, err := app.Test(httptest.NewRequest(tc.method, tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tp := <-traceparents
		s := spans.Named(tc.span)
		if s == nil {
			t.Errorf("%s: no span %q", tc.path, tc.span)
			continue
		}
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("%s: span kind %v, want client", tc.path, s.SpanKind())
		}
		if !strings.Contains(tp, s.SpanContext().SpanID().String()) {
			t.Errorf("%s: the service got traceparent %q, not the client span %s", tc.path, tp, s.SpanContext().SpanID())
		}
		telemetrytest.CheckAttrs(t, s, semconv.HTTPRequestMethodKey.String(tc.method), semconv.ServerAddress(su.Hostname()),
			semconv.ServerPort(port), semconv.URLFull(stub.URL+tc.full), semconv.URLTemplate(tc.template),
			semconv.HTTPResponseStatusCode(tc.status))
		if tc.status >= 500 && (s.Status().Code != codes.Error || telemetrytest.Attrs(s)[semconv.ErrorTypeKey].AsString() != "503") {
			t.Errorf("%s: status %+v error.type %v, want an error of type 503", tc.path, s.Status(), telemetrytest.Attrs(s)[semconv.ErrorTypeKey].String())
		}
	}
	// The service is gone: the span says so.
	stub.Close()
	resp, err := app.Test(httptest.NewRequest("GET", "/read", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := spans.Ended()[len(spans.Ended())-1]; s.Status().Code != codes.Error || telemetrytest.Attrs(s)[semconv.ErrorTypeKey].AsString() == "" {
		t.Errorf("unreachable service: span status %+v attrs %v, want an error with error.type", s.Status(), s.Attributes())
	}
}

// TestForwardAfterServiceRestart: once a service restarts, every connection edge keeps idle
// to it is dead; the next requests, POSTs included, still reach the new process instead of
// answering 503 (fasthttp alone tries a few dead connections, then gives up).
func TestForwardAfterServiceRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	serve := func(ln net.Listener) *http.Server {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })}
		go func() { _ = srv.Serve(ln) }()
		return srv
	}
	srv := serve(ln)
	u, err := newUpstream(BookingSvc, "http://"+addr, tenancy.NewSigner(tenancy.CallerEdge, "test-hmac-key-0123456789"), propagation.TraceContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Post("/channel", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodPost, "/internal/channels/inbound/channex/t0k3n-s3cret", []byte(`{}`), tenancy.Tenant{})
	})
	app.Post("/book", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodPost, "/internal/b/createbooking", []byte(`{}`), tenancy.Tenant{AccountID: "acc1"})
	})
	post := func() int {
		resp, err := app.Test(httptest.NewRequest(http.MethodPost, "/book", nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Fill the pool: 32 requests in flight at once, each on a connection of its own.
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() { defer wg.Done(); post() }()
	}
	wg.Wait()
	if err := srv.Shutdown(context.Background()); err != nil { // closes the idle connections
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer serve(ln).Close()
	for i := range 10 {
		if code := post(); code != http.StatusOK {
			t.Fatalf("request %d after the restart: HTTP %d, want 200", i, code)
		}
	}
}

// TestForwardWaitsForAConnection: more requests in flight than the pool has connections wait
// for one to come free (a burst is queued) instead of answering 503 "not reachable" at once;
// found by make bench's open-loop load, where half of the quotes failed so.
func TestForwardWaitsForAConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	u, err := newUpstream(BookingSvc, srv.URL, tenancy.NewSigner(tenancy.CallerEdge, "test-hmac-key-0123456789"), propagation.TraceContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u.client.MaxConns = 2 // the pool, made small
	app := fiber.New()
	app.Post("/channel", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodPost, "/internal/channels/inbound/channex/t0k3n-s3cret", []byte(`{}`), tenancy.Tenant{})
	})
	app.Post("/book", func(c *fiber.Ctx) error {
		return u.forward(c, fiber.MethodPost, "/internal/b/createbooking", []byte(`{}`), tenancy.Tenant{AccountID: "acc1"})
	})
	codes := make([]int, 8)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := app.Test(httptest.NewRequest(http.MethodPost, "/book", nil), -1)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("request %d of 8 over a pool of 2: HTTP %d, want 200", i, code)
		}
	}
}
