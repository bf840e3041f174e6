package poller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestImportsCounted: each poll counts once in vros_ical_imports_total by outcome: the file
// read and synced (ok), the feed unchanged (HTTP 304, unchanged), the feed failing (error).
// Nothing else labels the series (no account, feed or link).
func TestImportsCounted(t *testing.T) {
	e := setup(t)
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch polls.Add(1) {
		case 1:
			w.Header().Set("ETag", `"v1"`)
			_, _ = w.Write([]byte(calendar))
		case 2:
			w.WriteHeader(http.StatusNotModified)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	f := e.create(t, "acc-metrics", srv.URL+"/cal.ics")
	metrics := telemetrytest.NewMetrics(t)
	p := e.poller(true)
	p.Meter = metrics.Meter()
	for range 3 {
		if err := p.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(e.get(t, f).Status.NextPollAt.Add(time.Second))
	}
	for outcome, want := range map[string]float64{"ok": 1, "unchanged": 1, "error": 1} {
		if v := metrics.Value(t, "vros_ical_imports_total", "outcome", outcome); v != want {
			t.Errorf("vros_ical_imports_total{outcome=%q} = %v, want %v", outcome, v, want)
		}
	}
	for _, s := range metrics.Scrape(t)["vros_ical_imports_total"].Series {
		if len(s.Labels) != 1 {
			t.Errorf("labels %v, want outcome only", s.Labels)
		}
	}
}
