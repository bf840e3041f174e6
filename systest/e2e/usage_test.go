package e2e

import (
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/systest/apitest"
)

// tally sends an account's requests through edge and counts each by interface (a, b,
// read) and outcome as edge's usage report defines them (docs/usage.md): ok, client_error
// (4xx, and interface B application errors on HTTP 200), server_error (5xx), refused (edge
// refused it after authentication: 429, 413).
type tally struct {
	acc    account
	mu     sync.Mutex
	counts map[string]map[string]int64
}

func newTally(acc account) *tally {
	return &tally{acc: acc, counts: map[string]map[string]int64{}}
}

// outcome classifies an answer of interface iface.
func outcome(iface string, r response) string {
	switch {
	case r.Code == http.StatusTooManyRequests || r.Code == http.StatusRequestEntityTooLarge:
		return "refused"
	case r.Code >= 500:
		return "server_error"
	case r.Code >= 400:
		return "client_error"
	case iface == "b" && bStatus(r.Body) > 0, iface == "read" && bError(r.Body):
		return "client_error"
	}
	return "ok"
}

func (u *tally) record(iface string, r response) response {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.counts[iface] == nil {
		u.counts[iface] = map[string]int64{}
	}
	u.counts[iface][outcome(iface, r)]++
	return r
}

// a sends an interface A request.
func (u *tally) a(t *testing.T, resource string, body any) response {
	t.Helper()
	return u.record("a", u.acc.a(t, resource, body))
}

// b sends an interface B action.
func (u *tally) b(t *testing.T, action string, fields obj) response {
	t.Helper()
	return u.record("b", u.acc.b(t, action, fields))
}

// read sends an owner-token read (GET), of one property when pid is not empty.
func (u *tally) read(t *testing.T, name, pid string) response {
	t.Helper()
	return u.record("read", u.acc.read(t, name, pid, nil))
}

// want is the counts as the report shows them: every interface and outcome, zeros too.
func (u *tally) want() map[string]map[string]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := map[string]map[string]int64{}
	for _, iface := range []string{"a", "b", "read"} {
		out[iface] = map[string]int64{}
		for _, o := range []string{"ok", "client_error", "server_error", "refused"} {
			out[iface][o] = u.counts[iface][o]
		}
	}
	return out
}

// property creates a property with simple rates through u and waits until booking-svc
// prices it.
func (u *tally) property(t *testing.T, code string) int {
	t.Helper()
	r := u.a(t, "property", obj{"action": "create", "property": validProperty(code)})
	r.status(t, http.StatusOK)
	var out struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	r.decode(t, &out)
	pid, err := strconv.Atoi(out.Data.PropertyID)
	if err != nil {
		t.Fatalf("property_id in %s", r.Body)
	}
	u.a(t, "property-rate", simpleRates(code)).status(t, http.StatusOK)
	waitVersion(t, u.acc, pid)
	return pid
}

// usageData is the usage report's data.
type usageData struct {
	AccountID  string                      `json:"account_id"`
	From       string                      `json:"from"`
	To         string                      `json:"to"`
	Requests   map[string]map[string]int64 `json:"requests"`
	Properties struct {
		Current int64 `json:"current"`
		Created int64 `json:"created"`
		Deleted int64 `json:"deleted"`
	} `json:"properties"`
	Photos struct {
		Count int64 `json:"count"`
		Bytes int64 `json:"bytes"`
	} `json:"photos"`
	Bookings struct {
		Created   int64 `json:"created"`
		Cancelled int64 `json:"cancelled"`
		Nights    int64 `json:"nights"`
	} `json:"bookings"`
	Blocks struct {
		Created int64 `json:"created"`
	} `json:"blocks"`
}

// usageOf reads the usage report of acc for the query (from, to).
func usageOf(t *testing.T, acc account, query url.Values) usageData {
	t.Helper()
	r := operator(t, http.MethodGet, "/accounts/"+acc.AccountID+"/usage?"+query.Encode(), "")
	r.status(t, http.StatusOK)
	var out struct {
		Data usageData `json:"data"`
	}
	r.decode(t, &out)
	return out.Data
}

// requestsEqual compares the report's request counts with want; a missing count reads 0.
func requestsEqual(got, want map[string]map[string]int64) bool {
	for iface, outs := range want {
		for o, n := range outs {
			if got[iface][o] != n {
				return false
			}
		}
	}
	for iface, outs := range got {
		for o, n := range outs {
			if want[iface][o] != n {
				return false
			}
		}
	}
	return true
}

// converged polls acc's usage report for period until its request counts equal want (edge
// flushes its counters every usageFlush), at most 30 s, and returns it.
func converged(t *testing.T, acc account, period url.Values, want map[string]map[string]int64) usageData {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := usageOf(t, acc, period)
		if requestsEqual(got.Requests, want) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("account %s: requests reported %v, want %v", acc.AccountID, got.Requests, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// flushedSince returns once edge has stored one whole flush of its usage counts that began
// after the call: a marker account's request is counted, then a second one. The flush that
// stored the first began after the call but may still be storing other accounts' counts;
// the one that stored the second began after it ended (edge flushes one at a time).
func flushedSince(t *testing.T, period url.Values) {
	t.Helper()
	marker := newTally(newAccount(t))
	for range 2 {
		marker.read(t, "default-config", "")
		converged(t, marker.acc, period, marker.want())
	}
}

// renditionBytes is the size of every rendition property-svc stores of a photo, as edge
// serves them.
func renditionBytes(t *testing.T, key string) int64 {
	t.Helper()
	var n int64
	for _, name := range []string{"original", "banner", "small", "317_179", "h_179", "w_800", "thumbnail"} {
		r := do(t, http.MethodGet, "/media/"+key+"/"+name+".jpg", nil, "")
		r.status(t, http.StatusOK)
		n += int64(len(r.Body))
	}
	return n
}

// TestUsageReport: an account's known traffic through edge — interface A accepted and
// refused by validation, interface B accepted and answered with an application error,
// owner-token reads, one request refused by the rate limit — and its bookings, blocks,
// properties and photo are reported exactly over the period that holds them; a period
// before them reports none of it; another account's traffic is reported apart.
func TestUsageReport(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	u, o := newTally(acc), newTally(other)

	pid := u.property(t, "US1")
	u.a(t, "property", obj{"action": "create", "property": validProperty("US2")}).status(t, http.StatusOK)
	u.a(t, "property", obj{"action": "fly", "property": validProperty("US3")}).wantViolation(t, "action", "")
	u.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "US2"}}).status(t, http.StatusOK)
	photo := photoID(t, u.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "US1", "image": samplePNG(t, 400, 300)}}))
	u.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "US1", "start_date": day(60), "end_date": day(61)}}).status(t, http.StatusOK)

	var b1, b2 bookingData
	u.b(t, "create", guest(pid, day(30), day(32))).ok(t, &b1)
	u.b(t, "create", guest(pid, day(40), day(43))).ok(t, &b2)
	u.b(t, "cancel", obj{"bookingId": b2.BookingID}).ok(t, nil)
	u.b(t, "getinfo", obj{"propertyId": 99999999, "numberofadults": 1, "checkin": day(70), "checkout": day(71)}).wantStatus(t, 16)
	u.b(t, "create", guest(pid, day(30), day(31))).wantStatus(t, 8) // the nights are taken
	u.read(t, "default-config", "")
	// The catalog learns of the property from Kafka, a moment after the write: the reads until
	// it has it are counted too (as client errors), like any other.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if r := u.read(t, "property-detail", strconv.Itoa(pid)); outcome("read", r) == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the catalog never served the property")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := u.read(t, "get-min-max-price-property", "99999999"); outcome("read", r) != "client_error" {
		t.Fatalf("a read of an unknown property: HTTP %d %s", r.Code, r.Body)
	}

	// The other account's traffic at the same time.
	opid := o.property(t, "US1")
	o.b(t, "create", guest(opid, day(30), day(35))).ok(t, nil)
	o.read(t, "default-config", "")

	// One request refused by the account's rate limit: a bucket of one token, refilled every
	// 1000 s, then a cheap read until edge refuses one.
	setPlan(t, acc, obj{"rate_rps": 0.001, "rate_burst": 1})
	for i := 0; ; i++ {
		r := u.b(t, "listcountry", nil)
		if r.Code == http.StatusTooManyRequests {
			break
		}
		r.ok(t, nil)
		if i == 5 {
			t.Fatal("the rate limit of one token refused nothing")
		}
	}
	setPlan(t, acc, obj{"rate_rps": 0, "rate_burst": 0})

	period := url.Values{"from": {day(-1)}, "to": {day(2)}}
	want, owant := u.want(), o.want()
	if want["b"]["refused"] != 1 || want["a"]["client_error"] != 1 || want["b"]["client_error"] != 2 || want["read"]["client_error"] < 1 {
		t.Fatalf("the test's own tally: %v", want)
	}
	// Edge flushes its counters every few seconds: each report converges, then stays.
	converged(t, acc, period, want)
	if g := converged(t, other, period, owant); g.Bookings.Created != 1 || g.Bookings.Nights != 5 {
		t.Errorf("the other account's bookings: %+v", g.Bookings)
	}
	flushedSince(t, period) // another whole flush: nothing counted twice
	got := usageOf(t, acc, period)
	if !requestsEqual(got.Requests, want) {
		t.Fatalf("requests reported %v after another flush, want %v", got.Requests, want)
	}
	if got.AccountID != acc.AccountID {
		t.Errorf("account_id %q", got.AccountID)
	}
	p := got.Properties
	if p.Current != 1 || p.Created != 2 || p.Deleted != 1 {
		t.Errorf("properties %+v, want current 1, created 2, deleted 1", p)
	}
	key := photoKey(t, acc, strconv.Itoa(pid), photo)
	if b := renditionBytes(t, key); got.Photos.Count != 1 || got.Photos.Bytes != b {
		t.Errorf("photos %+v, want 1 photo of %d bytes (its seven renditions)", got.Photos, b)
	}
	if bk := got.Bookings; bk.Created != 2 || bk.Cancelled != 1 || bk.Nights != 5 {
		t.Errorf("bookings %+v, want created 2 (5 nights), cancelled 1", bk)
	}
	if got.Blocks.Created != 1 {
		t.Errorf("blocks %+v, want 1", got.Blocks)
	}

	// A period before all of it: no request, nothing created; what is stored now is.
	past := usageOf(t, acc, url.Values{"from": {"2020-01-01"}, "to": {"2020-02-01T00:00:00Z"}})
	if !requestsEqual(past.Requests, newTally(acc).want()) || past.Properties.Created != 0 || past.Properties.Deleted != 0 ||
		past.Properties.Current != 1 || past.Bookings.Created != 0 || past.Bookings.Nights != 0 || past.Blocks.Created != 0 ||
		past.Photos.Count != 1 {
		t.Errorf("January 2020: %+v", past)
	}
	// The default period is the last 30 days: it holds today's traffic.
	if def := usageOf(t, acc, nil); !requestsEqual(def.Requests, want) || def.Bookings.Created != 2 {
		t.Errorf("the default period: %+v", def)
	}
}

// TestUsageReportRules: a bad period is refused naming the field and the rule; an unknown
// account is not found.
func TestUsageReportRules(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	for _, c := range []struct {
		name, query, field string
	}{
		{"from not a date", "from=yesterday&to=" + day(1), "from"},
		{"to not a date", "from=" + day(-1) + "&to=2026-13-01", "to"},
		{"to before from", "from=" + day(1) + "&to=" + day(-1), "to"},
		{"to equal to from", "from=" + day(1) + "&to=" + day(1), "to"},
		{"more than 366 days", "from=2024-01-01&to=2025-01-03", "to"},
	} {
		r := operator(t, http.MethodGet, "/accounts/"+acc.AccountID+"/usage?"+c.query, "")
		if r.Code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %s", c.name, r.Code, r.Body)
			continue
		}
		named := false
		for _, v := range r.aError(t).Errors {
			named = named || v.Field == c.field
		}
		if !named {
			t.Errorf("%s: the answer does not name %s: %s", c.name, c.field, r.Body)
		}
	}
	usageOf(t, acc, url.Values{"from": {"2025-01-01"}, "to": {"2026-01-02"}}) // 366 days
	operator(t, http.MethodGet, "/accounts/99999999/usage", "").status(t, http.StatusNotFound)
}

// apitestSend sends a request through edge from any goroutine (no testing.T calls).
func apitestSend(method, path string, headers map[string]string, body string) (response, error) {
	r, err := apitest.Send(http.DefaultClient, method, st.EdgeURL+path, headers, body)
	return response(r), err
}
