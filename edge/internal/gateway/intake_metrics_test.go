package gateway_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestIntakeRefusalsCounted: the bodies edge's intake refuses count in
// vros_edge_rejections_total: a declared length over 25 MiB and a body over 25 MiB once
// decoded as body_size (413), a body whose bytes are not free in its address's share in
// time as body_budget (503).
func TestIntakeRefusalsCounted(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	in, err := gateway.NewIntake(gateway.MinBodyMemory, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	in.Metrics = edgemetrics.New(metrics.Meter())
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, StreamRequestBody: true, EnvelopeFor: gateway.EnvelopeFor})
	app.Use(in.Handler)
	app.Post("/api/:resource", func(c *fiber.Ctx) error { return c.SendString("read") })
	url := serve(t, app)
	addr := strings.TrimPrefix(url, "http://")

	// A declared length over 25 MiB: refused before the body past its first 8 KiB is read.
	over := rawRequest(t, addr, gateway.MaxBody+1, 9<<10)
	defer over.Close()
	if code := statusOf(t, over); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a declared body over 25 MiB: HTTP %d, want 413", code)
	}
	// A gzip body over 25 MiB once decoded.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write(make([]byte, gateway.MaxBody+1))
	_ = zw.Close()
	req, _ := http.NewRequest(http.MethodPost, url+"/api/property", &bomb)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a gzip body over 25 MiB once decoded: HTTP %d, want 413", resp.StatusCode)
	}

	// Two bodies of 25 MiB from one address hold its share while their senders hold back
	// the rest; a third waits past its wait and is refused.
	for range 2 {
		held := rawRequest(t, addr, gateway.MaxBody, 9<<10)
		defer held.Close()
	}
	hang := time.After(2 * time.Minute) // a hang, not a speed
	for in.Held() != 2*gateway.MaxBody {
		select {
		case <-hang:
			t.Fatalf("the intake holds %d bytes, want %d", in.Held(), 2*gateway.MaxBody)
		default:
			runtime.Gosched()
		}
	}
	third := rawRequest(t, addr, gateway.MaxBody, 9<<10)
	defer third.Close()
	if code := statusOf(t, third); code != http.StatusServiceUnavailable {
		t.Fatalf("a third body of 25 MiB from the address: HTTP %d, want 503", code)
	}

	for reason, want := range map[string]float64{"body_size": 2, "body_budget": 1, "rate": 0} {
		if v := metrics.Value(t, "vros_edge_rejections_total", "reason", reason); v != want {
			t.Errorf("vros_edge_rejections_total{reason=%q} = %v, want %v", reason, v, want)
		}
	}
}

// rawRequest opens a connection to addr and sends an interface A request declaring a body
// of length bytes, of which it sends the first send.
func rawRequest(t *testing.T, addr string, length, send int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/property HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, length)
	if send > 0 {
		if _, err := conn.Write(bytes.Repeat([]byte{' '}, send)); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// statusOf reads the status code of the answer on conn.
func statusOf(t *testing.T, conn net.Conn) int {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a hang, not a speed
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
