package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/telemetry"
)

// TestOpsRoutesNotPublic: /healthz, /readyz and /metrics are not routes of the public app
// (the Ingress routes everything to it); they answer 404 there.
func TestOpsRoutesNotPublic(t *testing.T) {
	app := New(Options{Telemetry: testTelemetry(t)})
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("public %s answered %d, want 404", path, resp.StatusCode)
		}
	}
}

// TestInternalListener: Serve answers /healthz, /readyz and /metrics on the internal address
// of its context; a failing readiness check is logged, never echoed.
func TestInternalListener(t *testing.T) {
	tel := testTelemetry(t)
	var failing error
	app := New(Options{Telemetry: tel, Ready: func(context.Context) error { return failing }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	internal, public, done := make(chan string, 1), make(chan string, 1), make(chan error, 1)
	ctx = WithInternal(ctx, "127.0.0.1:0", func(a string) { internal <- a })
	go func() { done <- Serve(ctx, app, "127.0.0.1:0", func(a string) { public <- a }, 0, time.Second) }()
	base, pub := "http://"+<-internal, "http://"+<-public
	if base == pub {
		t.Fatalf("internal and public listeners share %s", base)
	}

	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(base + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d %q", code, body)
	}
	if code, body := get(base + "/readyz"); code != http.StatusOK || body != "ready" {
		t.Errorf("/readyz %d %q, want 200 ready", code, body)
	}
	if code, body := get(base + "/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics %d, body without go_goroutines", code)
	}
	if code, _ := get(pub + "/readyz"); code != http.StatusNotFound {
		t.Errorf("public /readyz %d, want 404", code)
	}
	failing = errors.New("server selection error: 10.1.2.3:27017 secret-host")
	if code, body := get(base + "/readyz"); code != http.StatusServiceUnavailable || strings.Contains(body, "secret-host") || !strings.HasPrefix(body, "not ready") {
		t.Errorf("failing /readyz %d %q, want 503 'not ready' without the error text", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("internal listener still accepting after Serve returned")
	}
}

func testTelemetry(t *testing.T) *telemetry.Telemetry {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "httpapi-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	return tel
}
