package deliver_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/webhooks/deliver"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/testkit/eventually"
)

// TestDeliveriesCounted: each attempt counts in vros_webhook_deliveries_total by what became
// of its delivery: retry (it failed, another follows), delivered, failed (the last attempt
// failed). A delivery that succeeds at its third attempt counts retry twice and delivered
// once; one whose only attempt fails counts failed. The attempts counter is kept as it was.
func TestDeliveriesCounted(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	// Each engine in a subtest of its own, stopped when it ends: both share the database, so
	// the first, still running, could take the second's delivery and retry it by its own
	// schedule (a fresh-clone run counted retry 3, failure 4).
	t.Run("delivered at the third attempt", func(t *testing.T) {
		var calls atomic.Int32
		flaky := newReceiver(t, func(received) int {
			if calls.Add(1) < 3 {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		e := startWith(t, deliver.Config{Schedule: []time.Duration{0, 100 * time.Millisecond, 100 * time.Millisecond}}, metrics.Meter())
		e.endpoint(t, flaky.srv.URL, "*")
		e.emit(t, "msg_counted", 1, webhook.RatesUpdated, time.Now())
		eventually.Holds(t, "delivered at the third attempt", 10*time.Second, func() bool {
			return metrics.Value(t, "vros_webhook_deliveries_total", "outcome", "delivered") == 1
		})
	})
	t.Run("given up after its only attempt", func(t *testing.T) {
		down := newReceiver(t, func(received) int { return http.StatusInternalServerError })
		once := startWith(t, deliver.Config{Schedule: []time.Duration{0}}, metrics.Meter())
		once.endpoint(t, down.srv.URL, "*")
		once.emit(t, "msg_given_up", 1, webhook.RatesUpdated, time.Now())
		eventually.Holds(t, "given up after its only attempt", 10*time.Second, func() bool {
			return metrics.Value(t, "vros_webhook_deliveries_total", "outcome", "failed") == 1
		})
	})
	for outcome, want := range map[string]float64{"retry": 2, "delivered": 1, "failed": 1} {
		if v := metrics.Value(t, "vros_webhook_deliveries_total", "outcome", outcome); v != want {
			t.Errorf("vros_webhook_deliveries_total{outcome=%q} = %v, want %v", outcome, v, want)
		}
	}
	for outcome, want := range map[string]float64{"success": 1, "failure": 3} {
		if v := metrics.Value(t, "vros_webhook_attempts_total", "outcome", outcome); v != want {
			t.Errorf("vros_webhook_attempts_total{outcome=%q} = %v, want %v", outcome, v, want)
		}
	}
}
