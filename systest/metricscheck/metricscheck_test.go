package metricscheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/systest/apitest"
)

// scrapeWithin bounds how long the test waits for what the traffic causes asynchronously
// (events applied, webhooks delivered, gauges refreshed) to show in the scrapes.
const scrapeWithin = time.Minute

// TestDashboardAndRulesUseExportedMetrics drives traffic through edge, then checks every
// metric of every dashboard query and alert rule against the services' /metrics: a query
// that names a service (job="catalog-svc") needs that service to export the metric, any
// other one needs some service to. Counters and histograms appear after their first
// measurement, so the traffic causes each thing a panel counts; what it does not cause
// (janitor repairs, parked events, consumer errors) the services must declare at 0 when they
// start — the alerts' increase() needs that 0 too, so the test does not force them (with a
// broken event on a topic, say), which would hide a counter that starts at 1.
func TestDashboardAndRulesUseExportedMetrics(t *testing.T) {
	drive(t)

	queries := append(dashboardQueries(t), ruleQueries(t)...)
	services := map[string]string{
		"edge": st.EdgeInternalURL, "property-svc": st.PropertyInternalURL, "booking-svc": st.BookingInternalURL,
		"catalog-svc": st.CatalogInternalURL, "integration-svc": st.IntegrationInternalURL,
		"messaging-svc": st.MessagingInternalURL,
	}
	var missing []string
	deadline := time.Now().Add(scrapeWithin)
	for {
		exported := map[string]map[string]bool{} // job → sample names
		for job, url := range services {
			exported[job] = scrape(t, url+"/metrics")
		}
		missing = check(queries, exported)
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, m := range missing {
		t.Error(m)
	}
}

// check names each metric a query uses that is not exported where it must be, once per
// metric and job, with the queries that use it.
func check(queries []query, exported map[string]map[string]bool) []string {
	where := map[use][]string{}
	for _, q := range queries {
		for _, u := range metricsOf(q.expr) {
			if !slices.Contains(where[u], q.where) {
				where[u] = append(where[u], q.where)
			}
		}
	}
	var out []string
	for u, places := range where {
		var by []string
		for job, names := range exported {
			if names[u.metric] {
				by = append(by, job)
			}
		}
		sort.Strings(by)
		switch {
		case len(by) == 0:
			out = append(out, fmt.Sprintf("%s is exported by no service (used by %s)", u, strings.Join(places, "; ")))
		case u.job != "" && !slices.Contains(by, u.job):
			if _, known := exported[u.job]; !known {
				out = append(out, fmt.Sprintf("%s names job %q, which is no service (used by %s)", u, u.job, strings.Join(places, "; ")))
				continue
			}
			out = append(out, fmt.Sprintf("%s is not exported by %s, only by %s (used by %s)", u, u.job, strings.Join(by, ", "),
				strings.Join(places, "; ")))
		}
	}
	sort.Strings(out)
	return out
}

// scrape reads the names of the samples of a Prometheus text exposition: a histogram shows
// as <name>_bucket, <name>_sum and <name>_count, a counter as <name>_total, which is how
// queries name them.
func scrape(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", url, resp.StatusCode, body)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// drive sends through edge one of each thing the panels count: interface A writes (a
// property and its rates, a webhook, an iCal feed and its sync), a quote, a calendar read, a
// booking paid by card and its replay under the same Idempotency-Key, a conflicting booking
// (status 8), a declined card, wrong credentials until the throttle refuses, and a body over
// its limit.
func drive(t *testing.T) {
	t.Helper()
	acc, err := apitest.NewAccount(http.DefaultClient, st.EdgeURL, adminToken, "Metrics Owner")
	if err != nil {
		t.Fatal(err)
	}
	acc.EdgeURL = st.EdgeURL
	// The webhook receiver and the feed are on loopback.
	if err := apitest.AllowPrivateTargets(http.DefaultClient, st.EdgeURL, adminToken, acc.AccountID, true); err != nil {
		t.Fatal(err)
	}
	var delivered atomic.Int32
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		delivered.Add(1)
	}))
	t.Cleanup(hooks.Close)
	a := func(resource, body string, out any) {
		t.Helper()
		r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), body)
		if err != nil || r.Code != http.StatusOK {
			t.Fatalf("%s: %v HTTP %d %s", resource, err, r.Code, r.Body)
		}
		if out != nil {
			if err := json.Unmarshal(r.Body, out); err != nil {
				t.Fatalf("%s: %s: %v", resource, r.Body, err)
			}
		}
	}
	a("webhook", apitest.JSON(map[string]any{"action": "create", "webhook": map[string]any{"url": hooks.URL + "/hooks", "event_types": []string{"*"}}}), nil)
	// A read of messaging-svc's settings: its HTTP and MongoDB measures (its dashboard row).
	a("message-trigger", `{"action":"get"}`, nil)

	code := "M" + acc.AccountID
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	a("property", `{"action":"create","property":`+strings.Replace(demo.Property, `"DEMO1"`, `"`+code+`"`, 1)+`}`, &created)
	var pid int
	fmt.Sscan(created.Data.PropertyID, &pid)
	a("property-rate", strings.Replace(demo.Rates, `"DEMO1"`, `"`+code+`"`, 1), nil)

	// An iCal feed of one stay, synced at once.
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = io.WriteString(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//channel//EN\r\nBEGIN:VEVENT\r\nUID:stay-1\r\n"+
			"DTSTART;VALUE=DATE:"+strings.ReplaceAll(apitest.Day(200), "-", "")+"\r\nDTEND;VALUE=DATE:"+
			strings.ReplaceAll(apitest.Day(203), "-", "")+"\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	}))
	t.Cleanup(feed.Close)
	var f struct {
		Data struct {
			FeedID int64 `json:"feed_id"`
		} `json:"data"`
	}
	// integration-svc knows the property once it consumed its event: until then, 404.
	newFeed := apitest.JSON(map[string]any{"action": "create", "feed": map[string]any{"internal_code": code, "url": feed.URL + "/cal.ics",
		"name": "Channel", "interval_minutes": 1440}})
	for deadline := time.Now().Add(scrapeWithin); ; time.Sleep(50 * time.Millisecond) {
		r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/ical-feed", acc.AHeaders(), newFeed)
		if err == nil && r.Code == http.StatusOK {
			if err := json.Unmarshal(r.Body, &f); err != nil {
				t.Fatalf("ical-feed: %s: %v", r.Body, err)
			}
			break
		}
		if err != nil || r.Code != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("ical-feed: %v HTTP %d %s", err, r.Code, r.Body)
		}
	}
	a("ical-feed", apitest.JSON(map[string]any{"action": "sync", "feed": map[string]any{"feed_id": f.Data.FeedID}}), nil)

	guest := func(checkin, checkout string, card string) map[string]any {
		g := map[string]any{"propertyId": pid, "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
			"numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout}
		if card != "" {
			g["paymentCharge"] = 1
			g["creditCard"] = map[string]any{"CCNumber": card, "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
		}
		return g
	}
	// A quote, once booking-svc's view prices the property (status 16 or no rates before).
	deadline := time.Now().Add(scrapeWithin)
	for {
		s, msg := b(t, acc.BBody("getinfo", map[string]any{"propertyId": pid, "numberofadults": 2, "checkin": apitest.Day(30),
			"checkout": apitest.Day(33)}), nil)
		if s == 0 {
			break
		}
		if s != 16 && !strings.Contains(msg, "no rates") || time.Now().After(deadline) {
			t.Fatalf("getinfo: status %d %s", s, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A catalog read (catalog-svc), once its view has the property.
	for {
		s, msg := b(t, acc.BBody("getcalendar", map[string]any{"propertyId": acc.AccountID + "_" + created.Data.PropertyID,
			"startDate": apitest.Day(30), "endDate": apitest.Day(33)}), nil)
		if s == 0 {
			break
		}
		if s != 16 || time.Now().After(deadline) {
			t.Fatalf("getcalendar: status %d %s", s, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	key := map[string]string{"Idempotency-Key": "metrics-" + acc.AccountID}
	booking := acc.BBody("create", guest(apitest.Day(30), apitest.Day(33), "4242424242424242"))
	for i := range 2 { // the second is a replay
		if s, msg := b(t, booking, key); s != 0 {
			t.Fatalf("create %d: status %d %s", i, s, msg)
		}
	}
	if s, msg := b(t, acc.BBody("create", guest(apitest.Day(31), apitest.Day(34), "")), nil); s != 8 {
		t.Fatalf("conflicting create: status %d %s, want 8", s, msg)
	}
	if s, msg := b(t, acc.BBody("create", guest(apitest.Day(40), apitest.Day(42), "4000000000000002")), nil); s != 111 {
		t.Fatalf("declined card: status %d %s, want 111", s, msg)
	}

	// Wrong credentials: two failures, then the throttle (burst 2) refuses.
	wrong := acc
	wrong.Pass = "not-the-pass"
	for range 3 {
		_, _ = b(t, wrong.BBody("getinfo", map[string]any{"propertyId": pid}), nil)
	}
	bad := acc.AHeaders()
	bad["servicepass"] = "not-the-pass"
	if r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/property", bad, `{"action":"get"}`); err != nil || r.Code < 400 {
		t.Fatalf("wrong servicepass: %v HTTP %d", err, r.Code)
	}
	// A body over interface B's 1 MiB.
	if r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil,
		`{"action":"getinfo","x":"`+strings.Repeat("x", 1<<20)+`"}`); err != nil || r.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %v HTTP %d", err, r.Code)
	}

	// The throttle lifts within a second or so (10 a second come back), before the test goes
	// on or runs again.
	for until := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if s, _ := b(t, acc.BBody("listbooking", map[string]any{"propertyId": pid}), nil); s != 56 {
			break
		}
		if time.Now().After(until) {
			t.Fatal("the failed-authentication throttle did not lift within 10 s")
		}
	}

	// The booking's events reach the webhook receiver (integration-svc consumed them).
	for delivered.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if delivered.Load() == 0 {
		t.Errorf("no webhook delivered within %v", scrapeWithin)
	}
}

// b sends an interface B request and returns its status and message.
func b(t *testing.T, body string, headers map[string]string) (int, string) {
	t.Helper()
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", headers, body)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("HTTP %d %s", r.Code, r.Body)
	}
	return a.Status, a.Message
}
