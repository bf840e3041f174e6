package idempotency

import (
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestReplaysCounted: a request answered from the stored answer of an earlier one counts
// once in vros_idempotency_replays_total (no label: no account, key or action); the first
// run and a request without a key do not.
func TestReplaysCounted(t *testing.T) {
	s := newServer(t, time.Hour, answerWait)
	key := unique("k-replay")
	metrics := telemetrytest.NewMetrics(t)
	s.keys.Instrument(metrics.Meter())
	s.next = func(c *fiber.Ctx, run int64) error { return httpapi.B(c, fiber.Map{"run": run}) }
	for i := range 3 {
		res, body := s.call(t, "metrics", key, `{}`, answerWait)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, res.StatusCode, body)
		}
		if replayed := res.Header.Get("Idempotent-Replayed") == "true"; replayed != (i > 0) {
			t.Fatalf("call %d replayed %v", i+1, replayed)
		}
	}
	if v := metrics.Value(t, "vros_idempotency_replays_total"); v != 2 {
		t.Errorf("vros_idempotency_replays_total = %v, want 2", v)
	}
	if got := metrics.LabelNames(t, "vros_idempotency_replays_total"); len(got) != 0 {
		t.Errorf("labels %v, want none", got)
	}
	if s.runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", s.runs.Load())
	}
}
