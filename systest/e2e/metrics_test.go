package e2e

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/systest/apitest"
)

// metricSample is one line of a Prometheus scrape: a series and its value.
type metricSample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrapeMetrics reads a service's /metrics (apitest.ScrapeMetrics).
func scrapeMetrics(t *testing.T, internalURL string) []metricSample {
	t.Helper()
	var out []metricSample
	for _, s := range apitest.ScrapeMetrics(t, internalURL) {
		out = append(out, metricSample{name: s.Name, labels: s.Labels, value: s.Value})
	}
	return out
}

// findMetric sums the samples of name (a counter, a gauge, or a histogram's _count) whose labels
// include every pair of labels ("key", "value", …); found is whether there was one.
func findMetric(samples []metricSample, name string, labels ...string) (sum float64, found bool) {
next:
	for _, s := range samples {
		if s.name != name {
			continue
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if s.labels[labels[i]] != labels[i+1] {
				continue next
			}
		}
		sum += s.value
		found = true
	}
	return sum, found
}

// TestMetricsAnOperatorNeeds: a day of an owner's business — a property, a booking (sent
// twice with one Idempotency-Key), a conflicting booking, a recorded payment, a webhook
// delivered, an iCal feed imported, a wrong interface B key, a wrong admin token, a body over
// its limit — shows in every service's /metrics under the names docs/observability.md lists,
// with their labels; and no series anywhere carries a label whose value is the account's id,
// a booking's id, the guest's email or a credential (labels are bounded: per-account figures
// are the usage report's).
func TestMetricsAnOperatorNeeds(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	allowPrivate(t, acc)
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hookSrv.Close()
	acc.hookAction(t, obj{"action": "create", "webhook": obj{"url": hookSrv.URL + "/hooks", "event_types": []string{"booking.created"}}})
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = io.WriteString(w, icalFile(map[string][2]string{"metrics-1": {day(120), day(122)}}))
	}))
	defer feedSrv.Close()

	pid := bookable(t, acc, "MET1")
	const email = "metrics.guest@example.com"
	party := guest(pid, day(60), day(63))
	party["email"] = email
	body := acc.BBody("create", party)
	key := map[string]string{"Idempotency-Key": "metrics-create-1"}
	var b bookingData
	do(t, http.MethodPost, "/vros/external-booking", key, body).ok(t, &b)
	var replayed bookingData
	do(t, http.MethodPost, "/vros/external-booking", key, body).ok(t, &replayed)
	if replayed.BookingID != b.BookingID {
		t.Fatalf("replay answered booking %d, want %d", replayed.BookingID, b.BookingID)
	}
	acc.b(t, "create", guest(pid, day(61), day(62))).wantStatus(t, 8)
	acc.b(t, "addbookingpayment", obj{"bookingId": b.BookingID, "amount": "75.50", "description": "deposit"}).ok(t, nil)
	acc.feedAction(t, obj{"action": "create", "feed": obj{"internal_code": "MET1", "url": feedSrv.URL + "/cal.ics", "name": "Channel"}})

	// Refusals: a wrong key, a wrong admin token, a body over interface B's 1 MiB.
	do(t, http.MethodPost, "/vros/external-booking", nil, fmt.Sprintf(`{"key":%q,"pass":"wrong","action":"getinfo"}`, acc.Key)).wantStatus(t, 2)
	do(t, http.MethodGet, "/admin/v1/accounts/"+acc.AccountID, map[string]string{"Authorization": "Bearer wrong-token"}, "").status(t, http.StatusUnauthorized)
	pad := obj{"propertyId": pid, "pad": strings.Repeat("x", 1<<20)}
	if r := do(t, http.MethodPost, "/vros/external-booking", nil, acc.BBody("getinfo", pad)); r.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over 1 MiB: HTTP %d", r.Code)
	}

	services := map[string]string{"edge": st.EdgeInternalURL, "property-svc": st.PropertyInternalURL, "booking-svc": st.BookingInternalURL,
		"catalog-svc": st.CatalogInternalURL, "integration-svc": st.IntegrationInternalURL}
	type want struct {
		service, name string
		labels        []string
	}
	const (
		msgOp = "messaging_client_operation_duration_seconds_count"
		dbOp  = "db_client_operation_duration_seconds_count"
	)
	wants := []want{
		{"booking-svc", "vros_booking_requests_total", []string{"action", "create", "outcome", "success"}},
		{"booking-svc", "vros_booking_requests_total", []string{"action", "create", "outcome", "status_8"}},
		{"booking-svc", "vros_booking_requests_total", []string{"action", "addbookingpayment", "outcome", "success"}},
		{"booking-svc", "vros_ledger_nights_claimed_total", nil},
		{"booking-svc", "vros_ledger_conflicts_total", nil},
		{"booking-svc", "vros_payments_total", []string{"gateway", "manual", "outcome", "success"}},
		{"booking-svc", "vros_idempotency_replays_total", nil},
		{"booking-svc", "vros_outbox_oldest_pending_age_seconds", nil}, // a gauge: present (0 with nothing pending)
		{"property-svc", "vros_outbox_oldest_pending_age_seconds", nil},
		{"booking-svc", "vros_consumer_apply_duration_seconds_count", []string{"topic", "vros.property.v1"}},
		{"catalog-svc", "vros_consumer_apply_duration_seconds_count", []string{"topic", "vros.booking.v1"}},
		{"integration-svc", "vros_consumer_apply_duration_seconds_count", []string{"topic", "vros.booking.v1"}},
		{"property-svc", msgOp, []string{"messaging_system", "kafka", "messaging_operation_name", "send", "messaging_destination_name", "vros.property.v1"}},
		{"booking-svc", msgOp, []string{"messaging_system", "kafka", "messaging_operation_name", "send", "messaging_destination_name", "vros.booking.v1"}},
		{"catalog-svc", msgOp, []string{"messaging_system", "kafka", "messaging_operation_name", "process", "messaging_destination_name", "vros.property.v1"}},
		{"booking-svc", dbOp, []string{"db_system_name", "mongodb", "db_operation_name", "insert", "db_collection_name", "bookings"}},
		{"edge", dbOp, []string{"db_system_name", "mongodb"}},
		{"property-svc", dbOp, []string{"db_system_name", "mongodb"}},
		{"catalog-svc", dbOp, []string{"db_system_name", "mongodb"}},
		{"integration-svc", dbOp, []string{"db_system_name", "mongodb"}},
		{"edge", "vros_edge_auth_failures_total", []string{"kind", "key"}},
		{"edge", "vros_edge_auth_failures_total", []string{"kind", "admin"}},
		{"edge", "vros_edge_rejections_total", []string{"reason", "body_size"}},
		{"integration-svc", "vros_webhook_deliveries_total", []string{"outcome", "delivered"}},
		{"integration-svc", "vros_ical_imports_total", []string{"outcome", "ok"}},
	}
	// The views, the webhook and the poller follow the writes: wait for every name (bounded).
	var scraped map[string][]metricSample
	var missing []string
	deadline := time.Now().Add(viewsWithin)
	for {
		scraped = map[string][]metricSample{}
		for svc, u := range services {
			scraped[svc] = scrapeMetrics(t, u)
		}
		missing = nil
		for _, w := range wants {
			v, ok := findMetric(scraped[w.service], w.name, w.labels...)
			if !ok || (v <= 0 && !strings.HasSuffix(w.name, "_age_seconds")) {
				missing = append(missing, fmt.Sprintf("%s %s%v", w.service, w.name, w.labels))
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, m := range missing {
		t.Errorf("not scraped: %s", m)
	}
	bk := scraped["booking-svc"]
	if v, _ := findMetric(bk, "vros_ledger_conflicts_total"); v < 1 {
		t.Errorf("vros_ledger_conflicts_total = %v, want at least 1", v)
	}
	if v, _ := findMetric(bk, "vros_ledger_nights_claimed_total"); v < 3 {
		t.Errorf("vros_ledger_nights_claimed_total = %v, want at least the booking's 3 nights", v)
	}
	// The semantic-convention labels of a database operation, and error_type only on failure.
	for _, s := range bk {
		if s.name != dbOp {
			continue
		}
		for _, l := range []string{"db_system_name", "db_operation_name"} {
			if s.labels[l] == "" {
				t.Errorf("%s without %s: %v", dbOp, l, s.labels)
			}
		}
		if e, ok := s.labels["error_type"]; ok && e == "" {
			t.Errorf("%s with an empty error_type: %v", dbOp, s.labels)
		}
	}

	// Cardinality: no label value anywhere is the account, a booking, the guest or a secret.
	secrets := []string{acc.AccountID, acc.BasicUser, acc.BasicPassword, acc.ServiceKey, acc.ServicePass, acc.Key, acc.Pass, acc.OwnerToken,
		email, adminToken, "wrong-token"}
	ids := []string{strconv.FormatInt(b.BookingID, 10), strconv.Itoa(pid)}
	for svc, samples := range scraped {
		for _, s := range samples {
			for k, v := range s.labels {
				for _, bad := range []string{"account", "booking_id", "guest", "email", "token", "user"} {
					if strings.Contains(k, bad) {
						t.Errorf("%s: %s has a label %s=%q", svc, s.name, k, v)
					}
				}
				for _, secret := range secrets {
					if secret != "" && strings.Contains(v, secret) {
						t.Errorf("%s: %s{%s=%q} carries an account id, an email or a credential", svc, s.name, k, v)
					}
				}
				if k != "le" && k != "quantile" && slices.Contains(ids, v) {
					t.Errorf("%s: %s{%s=%q} is a booking's or a property's id", svc, s.name, k, v)
				}
			}
		}
	}
	// With -v (or on failure), what each service exports: the names and label names the
	// dashboards and alert rules may use.
	if t.Failed() || testing.Verbose() {
		for _, svc := range slices.Sorted(maps.Keys(scraped)) {
			families := map[string]map[string]bool{}
			for _, s := range scraped[svc] {
				if !strings.HasPrefix(s.name, "vros_") && !strings.HasPrefix(s.name, "db_") &&
					!strings.HasPrefix(s.name, "messaging_") && !strings.HasPrefix(s.name, "http_") {
					continue
				}
				if families[s.name] == nil {
					families[s.name] = map[string]bool{}
				}
				for k := range s.labels {
					if !strings.HasPrefix(k, "otel_scope_") && k != "le" {
						families[s.name][k] = true
					}
				}
			}
			for _, name := range slices.Sorted(maps.Keys(families)) {
				t.Logf("%s: %s%v", svc, name, slices.Sorted(maps.Keys(families[name])))
			}
		}
	}
}
