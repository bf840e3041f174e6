package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/libs/tenancy"
)

// TestRequestOutcomesCounted: every answer of the interface routes is counted in
// vros_booking_requests_total by its canonical action and its outcome, as written: a
// create, its replay (from the stored answer: also counted in
// vros_idempotency_replays_total), a create on the taken dates (status_8, and one ledger
// conflict), an invalid one (status_4), an unknown action, and interface A's block dates
// (blockdate: success, http_409 on booked nights). No label carries the account.
func TestRequestOutcomesCounted(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	s := newServerWith(t, io.Discard, metrics.Meter())
	acct := newAccount("rm")
	priceable(t, s, acct, 1)
	in := time.Now().AddDate(0, 3, 0)
	day := func(d int) string { return in.AddDate(0, 0, d).Format(time.DateOnly) }
	create := fmt.Sprintf(`{"propertyId":1,"firstName":"Mira","lastName":"Count","email":"mira@example.com","phone1":"+44 20 7946 0002",
		"numberofadults":2,"leadsourceId":1,"checkin":%q,"checkout":%q}`, day(0), day(3))
	for _, r := range []struct {
		name, path, body, key string
		status                int
	}{
		{"create", "/internal/b/create", create, "k1", 200},
		{"create replayed", "/internal/b/create", create, "k1", 200},
		{"create on taken dates", "/internal/b/create", create, "", 409},
		{"create invalid", "/internal/b/create", `{"propertyId":1,"firstName":"Mira","email":"mira@"}`, "", 400},
		{"no such action", "/internal/b/nosuchaction", `{}`, "", 404},
		{"block", "/internal/a/property-blockdate", fmt.Sprintf(`{"action":"create","block":{"internal_code":"P1","start_date":%q,"end_date":%q}}`, day(10), day(11)), "", 200},
		{"block on booked nights", "/internal/a/property-blockdate", fmt.Sprintf(`{"action":"create","block":{"internal_code":"P1","start_date":%q,"end_date":%q}}`, day(1), day(1)), "", 409},
	} {
		req := httptest.NewRequest(http.MethodPost, r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		if r.key != "" {
			req.Header.Set(idempotency.Header, r.key)
		}
		tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acct}, http.MethodPost, r.path, []byte(r.body), time.Now())
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != r.status {
			t.Fatalf("%s: %d %s, want %d", r.name, resp.StatusCode, out, r.status)
		}
	}
	const name = "vros_booking_requests_total"
	for _, c := range []struct {
		action, outcome string
		want            float64
	}{
		{"create", "success", 2}, {"create", "status_8", 1}, {"create", "status_4", 1}, {ActionUnknown, "status_32", 1},
		{ActionBlockDate, "success", 1}, {ActionBlockDate, "http_409", 1},
	} {
		if v := metrics.Value(t, name, "action", c.action, "outcome", c.outcome); v != c.want {
			t.Errorf("%s{action=%q,outcome=%q} = %v, want %v", name, c.action, c.outcome, v, c.want)
		}
	}
	if v := metrics.Value(t, name); v != 7 {
		t.Errorf("%s = %v in all, want 7", name, v)
	}
	for _, s := range metrics.Scrape(t)[name].Series {
		if len(s.Labels) != 2 || strings.Contains(fmt.Sprint(s.Labels), acct) {
			t.Errorf("%s labels %v, want action and outcome only", name, s.Labels)
		}
	}
	if v := metrics.Value(t, "vros_idempotency_replays_total"); v != 1 {
		t.Errorf("vros_idempotency_replays_total = %v, want 1", v)
	}
	// The booking's three nights and the block's two; the create and the block on taken
	// nights refused.
	if v := metrics.Value(t, "vros_ledger_nights_claimed_total"); v != 5 {
		t.Errorf("vros_ledger_nights_claimed_total = %v, want 5", v)
	}
	if v := metrics.Value(t, "vros_ledger_conflicts_total"); v != 2 {
		t.Errorf("vros_ledger_conflicts_total = %v, want 2", v)
	}
}
