package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// serve runs an app built by New with o on a free port and returns its address and log.
func serve(t *testing.T, o Options, routes func(app *fiber.App)) (string, *telemetrytest.Buffer) {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "httpapi-test", "info")
	if err != nil {
		t.Fatal(err)
	}
	logs := &telemetrytest.Buffer{}
	tel.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.Telemetry = tel
	app := New(o)
	routes(app)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, app, "127.0.0.1:0", func(a string) { addr <- a }, 0, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-addr:
		return a, logs
	case err := <-done:
		t.Fatal(err)
	}
	return "", nil
}

// rawGet sends one GET with the given target and extra header lines, as written, and reads
// the answer.
func rawGet(t *testing.T, addr, target string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: example.test\r\n", target)
	for _, h := range headers {
		req.WriteString(h + "\r\n")
	}
	req.WriteString("\r\n")
	// The server may answer and close before reading all of an oversized request.
	_, _ = conn.Write([]byte(req.String()))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	return resp, body.Bytes()
}

func envelopeByPath(path string) Envelope {
	if strings.HasPrefix(path, "/vros/") {
		return EnvelopeB
	}
	return EnvelopeA
}

func limitRoutes(app *fiber.App) {
	ok := func(c *fiber.Ctx) error { return c.SendString("ok") }
	app.Group("/api", Use(EnvelopeA)).Get("/*", ok)
	app.Group("/vros", Use(EnvelopeB)).Get("/*", ok)
}

// TestRequestSizeLimits: a request target or header block over its limit is answered 414 or
// 431 in the envelope of its interface, with a request id, logged at info, never a 500; one
// beyond even fasthttp's read buffer is still a 431.
func TestRequestSizeLimits(t *testing.T) {
	addr, logs := serve(t, Options{BodyLimit: 1 << 20, EnvelopeFor: envelopeByPath}, limitRoutes)
	const buffer = DefaultMaxTarget + DefaultMaxHeaderBytes + requestLineSlack
	header := func(n int) string { return "X-Filler: " + strings.Repeat("h", n-len("X-Filler: ")-2) } // n bytes with CRLF
	target := func(prefix string, n int) string { return prefix + strings.Repeat("t", n-len(prefix)) }
	rows := []struct {
		name     string
		target   string
		headers  []string
		want     int
		wantType string
	}{
		{"A: target 8 KiB → 200", target("/api/x?", DefaultMaxTarget), nil, 200, ""},
		{"A: target 8 KiB + 1 → 414", target("/api/x?", DefaultMaxTarget+1), nil, 414, "uri_too_long"},
		{"B: target 8 KiB + 1 → 414", target("/vros/x?", DefaultMaxTarget+1), nil, 414, "uri_too_long"},
		{"A: headers 15 KiB → 200", "/api/x", []string{header(15 << 10)}, 200, ""},
		{"A: headers 16 KiB + 1 → 431", "/api/x", []string{header(DefaultMaxHeaderBytes + 1)}, 431, "headers_too_large"},
		{"B: headers 16 KiB + 1 → 431", "/vros/x", []string{header(DefaultMaxHeaderBytes + 1)}, 431, "headers_too_large"},
		{"A: headers past the read buffer → 431", "/api/x", []string{header(buffer), header(buffer)}, 431, "headers_too_large"},
		// fasthttp resets an unread request, path included: interface A's envelope.
		{"B: headers past the read buffer → 431 (A's envelope)", "/vros/x", []string{header(buffer), header(buffer)}, 431, "headers_too_large"},
		{"A: target past the read buffer → 431", target("/api/x?", 2*buffer), nil, 431, "headers_too_large"},
		{"unknown route, headers 16 KiB + 1 → 431", "/other", []string{header(DefaultMaxHeaderBytes + 1)}, 431, "headers_too_large"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			resp, body := rawGet(t, addr, r.target, r.headers...)
			if resp.StatusCode != r.want {
				t.Fatalf("HTTP %d, want %d: %.300s", resp.StatusCode, r.want, body)
			}
			if resp.Header.Get(HeaderRequestID) == "" {
				t.Errorf("no %s", HeaderRequestID)
			}
			if r.want == 200 {
				return
			}
			if strings.HasPrefix(r.target, "/vros/") && !strings.Contains(r.name, "(A's envelope)") {
				var b struct {
					Status  *int   `json:"status"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal(body, &b); err != nil || b.Status == nil || *b.Status != StatusTooLarge || b.Message == "" {
					t.Fatalf("want interface B's envelope with status %d: %s", StatusTooLarge, body)
				}
				return
			}
			var a aError
			if err := json.Unmarshal(body, &a); err != nil || a.Code != r.want || a.ErrorType != r.wantType || a.ErrorMessage == "" {
				t.Fatalf("want interface A's envelope with code %d and error_type %s: %s", r.want, r.wantType, body)
			}
		})
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("error logged:\n%s", logs.String())
	}
}

// TestFiberErrorsKeepTheirStatus: a *fiber.Error with a client status is answered with that
// status, not a 500.
func TestFiberErrorsKeepTheirStatus(t *testing.T) {
	addr, logs := serve(t, Options{}, func(app *fiber.App) {
		app.Get("/teapot", func(*fiber.Ctx) error { return fiber.ErrTeapot })
		app.Get("/431", func(*fiber.Ctx) error { return fiber.ErrRequestHeaderFieldsTooLarge })
	})
	for path, want := range map[string]int{"/teapot": 418, "/431": 431} {
		resp, body := rawGet(t, addr, path)
		if resp.StatusCode != want {
			t.Errorf("%s: HTTP %d, want %d: %s", path, resp.StatusCode, want, body)
		}
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("error logged:\n%s", logs.String())
	}
}

// TestClientIP: X-Forwarded-For counts only from a trusted proxy, and then its right-most
// address that is not a trusted proxy is the client's.
func TestClientIP(t *testing.T) {
	route := func(app *fiber.App) {
		app.Get("/ip", func(c *fiber.Ctx) error { return c.SendString(ClientIP(c)) })
	}
	untrusted, _ := serve(t, Options{}, route)
	proxies, err := ParseProxies([]string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	trusted, _ := serve(t, Options{TrustedProxies: proxies}, route)
	rows := []struct {
		name, addr, xff, want string
	}{
		{"no proxy configured: the peer", untrusted, "203.0.113.9", "127.0.0.1"},
		{"trusted peer, no header: the peer", trusted, "", "127.0.0.1"},
		{"trusted peer: the address it appended", trusted, "198.51.100.1, 203.0.113.9", "203.0.113.9"},
		{"chain of trusted proxies skipped", trusted, "198.51.100.1, 203.0.113.9, 10.1.2.3", "203.0.113.9"},
		{"invalid entries skipped", trusted, "203.0.113.9, nonsense", "203.0.113.9"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var h []string
			if r.xff != "" {
				h = append(h, "X-Forwarded-For: "+r.xff)
			}
			_, body := rawGet(t, r.addr, "/ip", h...)
			if string(body) != r.want {
				t.Errorf("client IP %q, want %q", body, r.want)
			}
		})
	}
	if _, err := ParseProxies([]string{"10.0.0.0/8", "proxy.local"}); err == nil || !strings.Contains(err.Error(), "proxy.local") {
		t.Errorf("want an error naming proxy.local, got %v", err)
	}
}
