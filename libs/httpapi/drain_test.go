package httpapi

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/telemetry"
)

// TestServeDrains: after the stop signal the app keeps answering for the drain period, each
// answer with Connection: close and /readyz 503 on the internal listener (so a rolling
// update loses no request), then stops accepting on both.
func TestServeDrains(t *testing.T) {
	tel, err := telemetry.Setup(context.Background(), "httpapi-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	app := New(Options{Telemetry: tel})
	app.Get("/work", func(c *fiber.Ctx) error { return c.SendString("done") })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, internal, done := make(chan string, 1), make(chan string, 1), make(chan error, 1)
	sctx := WithInternal(ctx, "127.0.0.1:0", func(a string) { internal <- a })
	go func() {
		done <- Serve(sctx, app, "127.0.0.1:0", func(a string) { addr <- a }, time.Second, time.Second)
	}()
	ops, base := "http://"+<-internal, "http://"+<-addr

	// closing: the answer said Connection: close (net/http moves it to Response.Close).
	get := func(url string) (code int, closing bool, err error) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, false, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Close, nil
	}
	if code, closing, err := get(ops + "/readyz"); err != nil || code != http.StatusOK || closing {
		t.Fatalf("before the stop: /readyz %d close=%v err %v, want 200 keep-alive", code, closing, err)
	}
	stopped := time.Now()
	cancel()
	// Draining once /readyz says so: the stop reaches Serve through a goroutine, in its time
	// (polled, not a guessed pause; the drain's second bounds the wait).
	for {
		code, _, err := get(ops + "/readyz")
		if err == nil && code == http.StatusServiceUnavailable {
			break
		}
		if time.Since(stopped) > time.Second {
			t.Fatalf("a drain's length after the stop /readyz answers %d (%v), want 503", code, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, tc := range []struct {
		url  string
		want int
	}{{base + "/work", http.StatusOK}, {ops + "/readyz", http.StatusServiceUnavailable}, {ops + "/healthz", http.StatusOK}} {
		code, closing, err := get(tc.url)
		if err != nil || code != tc.want || !closing {
			t.Errorf("draining: %s answered %d close=%v err %v, want %d and Connection: close", tc.url, code, closing, err, tc.want)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(stopped); waited < time.Second {
		t.Errorf("Serve returned %s after the stop, before the 1 s drain", waited)
	}
	for _, url := range []string{base + "/work", ops + "/healthz"} {
		if _, _, err := get(url); err == nil {
			t.Errorf("%s: still accepting after the drain", url)
		}
	}
}
