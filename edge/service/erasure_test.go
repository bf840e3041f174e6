package service

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// fakeServices stand in for property-svc's, booking-svc's and integration-svc's internal
// account routes. They
// verify the signed tenant context as tenancyfiber.Require does and record what they got.
type fakeServices struct {
	t           *testing.T
	property    *httptest.Server
	booking     *httptest.Server
	integration *httptest.Server
	// private is integration-svc's allow_private_targets switch by account.
	private map[string]bool

	mu     sync.Mutex
	got    []string // "<service> <method> <path>?<query> account=<id> body=<body>"
	erases atomic.Int64
	// down makes a service answer 503; notZip makes its export not a zip; stray puts an
	// entry outside its folder in booking-svc's export; erase503 makes
	// property-svc's erase fail.
	down     map[string]bool
	notZip   bool
	stray    bool
	erase503 atomic.Bool
	// usageMissing drops a member of property-svc's usage answer.
	usageMissing bool
}

func newFakeServices(t *testing.T) *fakeServices {
	f := &fakeServices{t: t, down: map[string]bool{}, private: map[string]bool{}}
	auth := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: "test-hmac-key-0123456789"})
	handler := func(service string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			acc := r.Header.Get(tenancy.HeaderAccount)
			if _, _, err := auth.Verify(r.Header.Get, r.Method, r.URL.Path, r.URL.RawQuery, body); err != nil {
				http.Error(w, `{"error":"missing or invalid internal signature"}`, http.StatusUnauthorized)
				return
			}
			f.mu.Lock()
			f.got = append(f.got, fmt.Sprintf("%s %s %s?%s account=%s body=%s", service, r.Method, r.URL.Path, r.URL.RawQuery, acc, body))
			down := f.down[service]
			f.mu.Unlock()
			if down {
				http.Error(w, `{"error":"down"}`, http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			switch service + " " + r.URL.Path {
			case "property-svc /internal/account/usage":
				if f.usageMissing {
					_, _ = io.WriteString(w, `{"properties":{"current":3,"created":2,"deleted":1}}`)
					return
				}
				_, _ = io.WriteString(w, `{"photos":{"count":4,"bytes":4096},"properties":{"current":3,"created":2,"deleted":1}}`)
			case "booking-svc /internal/account/usage":
				_, _ = io.WriteString(w, `{"blocks":{"created":1},"bookings":{"created":5,"cancelled":1,"nights":12}}`)
			case "property-svc /internal/account/export", "booking-svc /internal/account/export":
				if f.notZip {
					_, _ = io.WriteString(w, "not a zip")
					return
				}
				w.Header().Set("Content-Type", "application/zip")
				_, _ = w.Write(serviceZip(t, service, acc, f.stray && service == "booking-svc"))
			case "property-svc /internal/account/erase":
				f.erases.Add(1)
				if f.erase503.Load() {
					http.Error(w, `{"error":"erase failed"}`, http.StatusServiceUnavailable)
					return
				}
				_, _ = io.WriteString(w, `{"erased":true}`)
			case "booking-svc /internal/account/guests/erase":
				_, _ = io.WriteString(w, `{"bookings":2,"users":1}`)
			case "integration-svc /internal/account/integrations":
				f.mu.Lock()
				defer f.mu.Unlock()
				if r.Method == http.MethodPut {
					var in struct {
						Allow *bool `json:"allow_private_targets"`
					}
					if json.Unmarshal(body, &in) != nil || in.Allow == nil {
						http.Error(w, `{"error":"allow_private_targets: is required"}`, http.StatusBadRequest)
						return
					}
					f.private[acc] = *in.Allow
				}
				_, _ = fmt.Fprintf(w, `{"allow_private_targets":%v}`, f.private[acc])
			case "integration-svc /internal/account/channels":
				// An extra member (a credential, were it ever sent) must not reach the operator.
				_, _ = io.WriteString(w, `{"connections":[{"connection_id":4,"adapter":"channex","endpoint":"https://cm.example/",`+
					`"channel":"bookingcom","enabled":true,"days":500,"credentials_set":true,"mappings":2,"open_conflicts":1,`+
					`"created_at":"2027-01-02T03:04:05Z","updated_at":"2027-01-02T03:04:06Z","api_key":"leak"}]}`)
			default: // a forwarded request: accepted
				_, _ = io.WriteString(w, `{"code":200,"status":0,"message":"Success","data":{}}`)
			}
		}
	}
	f.property = httptest.NewServer(handler("property-svc"))
	f.booking = httptest.NewServer(handler("booking-svc"))
	f.integration = httptest.NewServer(handler("integration-svc"))
	t.Cleanup(f.property.Close)
	t.Cleanup(f.booking.Close)
	t.Cleanup(f.integration.Close)
	return f
}

func (f *fakeServices) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.got
	f.got = nil
	return out
}

// serviceZip is a service's export as the shared design fixes it.
func serviceZip(t *testing.T, service, acc string, stray bool) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	records := map[string][]string{}
	add := func(name string, body []byte) {
		w, err := zw.Create(name)
		if err != nil {
			t.Error(err)
		}
		_, _ = w.Write(body)
	}
	if service == "property-svc" {
		add("property-svc/properties.json", []byte(`[{"id":11},{"id":10}]`))
		add("property-svc/photos/p1.jpg", []byte("\xff\xd8jpeg"))
		records["properties"] = []string{"11", "10"}
		records["photos"] = []string{"p1"}
	} else {
		add("booking-svc/bookings.json", []byte(`[{"id":"b1"}]`))
		records["bookings"] = []string{"b1"}
	}
	if stray {
		add("manifest.json", []byte(`{}`))
	}
	m, _ := json.Marshal(map[string]any{"service": service, "account_id": acc, "records": records})
	add(service+"/manifest.json", m)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (f *fakeServices) cfg() Config {
	return Config{PublicURL: "https://api.example.com", PropertyURL: f.property.URL, BookingURL: f.booking.URL,
		IntegrationURL: f.integration.URL, CacheTTL: time.Hour, AccountPoll: 100 * time.Millisecond, UsageFlush: 50 * time.Millisecond}
}

// badGateway asserts a 502 in A's envelope naming service.
func badGateway(t *testing.T, a answer, service string) {
	t.Helper()
	if a.code != http.StatusBadGateway {
		t.Fatalf("HTTP %d, want 502: %s", a.code, a.body)
	}
	if _, msg := aError(t, a); !strings.Contains(msg, service) {
		t.Errorf("502 message %q does not name %s", msg, service)
	}
}

// TestAdminUsage: the usage report holds edge's counts of the period and both services'
// figures, in a fixed order; a bad period is refused naming the field, an unknown account
// 404, a service that fails 502 naming it.
func TestAdminUsage(t *testing.T) {
	f := newFakeServices(t)
	e := start(t, f.cfg())
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Usage"}`))
	for range 3 {
		e.send(t, http.MethodPost, "/vros/external-booking", nil, fmt.Sprintf(`{"key":%q,"pass":%q,"action":"create"}`, acc.Key, acc.Pass))
	}
	f.take()
	from, to := time.Now().UTC().Add(-2*time.Hour).Truncate(time.Hour), time.Now().UTC().Add(time.Hour)
	path := fmt.Sprintf("/accounts/%s/usage?from=%s&to=%s", acc.AccountID, from.Format(time.RFC3339), to.Format(time.RFC3339))
	var a answer
	deadline := time.Now().Add(5 * time.Second)
	for {
		a = e.admin(t, http.MethodGet, path, "")
		if a.code != http.StatusOK {
			t.Fatalf("HTTP %d: %s", a.code, a.body)
		}
		if strings.Contains(string(a.body), `"b":{"client_error":0,"ok":3`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := fmt.Sprintf(`{"code":200,"data":{"account_id":%q,"from":%q,"to":%q,"requests":{"a":{"client_error":0,"ok":0,"refused":0,"server_error":0},`+
		`"b":{"client_error":0,"ok":3,"refused":0,"server_error":0},"engine":{"client_error":0,"ok":0,"refused":0,"server_error":0},`+
		`"read":{"client_error":0,"ok":0,"refused":0,"server_error":0}},`+
		`"properties":{"current":3,"created":2,"deleted":1},"photos":{"count":4,"bytes":4096},`+
		`"bookings":{"created":5,"cancelled":1,"nights":12},"blocks":{"created":1}}}`,
		acc.AccountID, from.Format(time.RFC3339), to.Format(time.RFC3339))
	if string(a.body) != want {
		t.Errorf("usage\n got %s\nwant %s", a.body, want)
	}
	q := "from=" + from.Format(time.RFC3339) + "&to=" + to.Format(time.RFC3339)
	for _, s := range []string{"property-svc", "booking-svc"} {
		if got := f.take(); !slices.ContainsFunc(got, func(g string) bool {
			return strings.HasPrefix(g, s+" GET /internal/account/usage?") && strings.Contains(g, "account="+acc.AccountID) &&
				strings.Contains(g, strings.ReplaceAll(q, ":", "%3A"))
		}) {
			t.Errorf("%s was not asked for the period: %v", s, got)
		}
		e.admin(t, http.MethodGet, path, "")
	}

	for _, tc := range []struct{ query, field string }{
		{"from=yesterday", "from"},
		{"to=2026-13-01", "to"},
		{"from=2026-02-01&to=2026-01-01", "to"},
		{"from=2026-02-01&to=2026-02-01", "to"},
		{"from=2025-01-01&to=2026-01-03", "to"},
	} {
		a := e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/usage?"+tc.query, "")
		if a.code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400: %s", tc.query, a.code, a.body)
			continue
		}
		if _, msg := aError(t, a); !strings.Contains(msg, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.query, msg, tc.field)
		}
	}
	if a := e.admin(t, http.MethodGet, "/accounts/2026-01-01/usage?from=2026-01-01&to=2026-12-31", ""); a.code != http.StatusNotFound {
		t.Errorf("unknown account: HTTP %d, want 404", a.code)
	}
	if a := e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/usage?from=2025-01-01&to=2026-01-01", ""); a.code != http.StatusOK {
		t.Errorf("366 days by dates: HTTP %d: %s", a.code, a.body)
	}
	f.down["booking-svc"] = true
	badGateway(t, e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/usage", ""), "booking-svc")
	f.down["booking-svc"] = false
	f.usageMissing = true
	badGateway(t, e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/usage", ""), "property-svc")
}

// TestAdminExport: the export streams one zip: manifest.json first, listing every record
// by <service>/<collection>; edge's account (no secret, no credential identifier) and audit;
// then every entry of both services' exports as they wrote them. A service that fails is a
// 502 naming it, never a partial archive.
func TestAdminExport(t *testing.T) {
	f := newFakeServices(t)
	e := start(t, f.cfg())
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Export Owner"}`))
	e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/plan", `{"max_properties":9}`)
	a := e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/export", "")
	if a.code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", a.code, a.body)
	}
	zr, err := zip.NewReader(bytes.NewReader(a.body), int64(len(a.body)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var names []string
	files := map[string][]byte{}
	for _, zf := range zr.File {
		names = append(names, zf.Name)
		r, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[zf.Name], _ = io.ReadAll(r)
		r.Close()
	}
	wantNames := []string{"manifest.json", "edge/account.json", "edge/audit.json",
		"property-svc/properties.json", "property-svc/photos/p1.jpg", "property-svc/manifest.json",
		"booking-svc/bookings.json", "booking-svc/manifest.json"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("entries %v, want %v", names, wantNames)
	}
	if string(files["property-svc/photos/p1.jpg"]) != "\xff\xd8jpeg" {
		t.Errorf("photo not copied as it was: %q", files["property-svc/photos/p1.jpg"])
	}
	var man struct {
		AccountID string              `json:"account_id"`
		Records   map[string][]string `json:"records"`
	}
	if err := json.Unmarshal(files["manifest.json"], &man); err != nil {
		t.Fatal(err)
	}
	if man.AccountID != acc.AccountID || !slices.Equal(man.Records["edge/account"], []string{acc.AccountID}) ||
		len(man.Records["edge/audit"]) != 2 || !slices.Equal(man.Records["property-svc/properties"], []string{"10", "11"}) ||
		!slices.Equal(man.Records["property-svc/photos"], []string{"p1"}) || !slices.Equal(man.Records["booking-svc/bookings"], []string{"b1"}) {
		t.Errorf("manifest %s", files["manifest.json"])
	}
	var account map[string]any
	_ = json.Unmarshal(files["edge/account.json"], &account)
	if account["name"] != "Export Owner" || account["plan"].(map[string]any)["max_properties"] != 9.0 {
		t.Errorf("edge/account.json %s", files["edge/account.json"])
	}
	for _, secret := range []string{acc.BasicUser, acc.BasicPassword, acc.ServiceKey, acc.ServicePass, acc.Key, acc.Pass, acc.OwnerToken} {
		if bytes.Contains(a.body, []byte(secret)) {
			t.Errorf("the export holds a credential (%.6s…)", secret)
		}
	}
	var audit []map[string]any
	if err := json.Unmarshal(files["edge/audit.json"], &audit); err != nil || len(audit) != 2 || audit[0]["action"] != "create" {
		t.Errorf("edge/audit.json %s", files["edge/audit.json"])
	}

	f.down["booking-svc"] = true
	badGateway(t, e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/export", ""), "booking-svc")
	f.down["booking-svc"] = false
	f.stray = true
	badGateway(t, e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/export", ""), "booking-svc")
	f.stray = false
	f.notZip = true
	badGateway(t, e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID+"/export", ""), "property-svc")
	if a := e.admin(t, http.MethodGet, "/accounts/999999/export", ""); a.code != http.StatusNotFound {
		t.Errorf("unknown account: HTTP %d", a.code)
	}
}

// TestAdminGuestErase: a guest's erasure goes to booking-svc with the address; the answer
// is its counts; the audit record and the logs hold the counts, never the address. A bad
// body is refused naming the field and reaches no service.
func TestAdminGuestErase(t *testing.T) {
	f := newFakeServices(t)
	e := start(t, f.cfg())
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Guests"}`))
	f.take()
	for _, tc := range []struct{ body, field string }{
		{``, "body"},
		{`{}`, "email"},
		{`{"email":""}`, "email"},
		{`{"email":42}`, "email"},
		{`{"email":"not an address"}`, "email"},
		{`{"email":"Jane <jane@example.com>"}`, "email"},
		{`{"email":"a@b"}`, "email"}, // booking-svc's rule (one domain label is refused), not a 502
		{`{"email":"` + strings.Repeat("a", 250) + `@example.com"}`, "email"},
		{`{"email":"jane@example.com","name":"Jane"}`, "name"},
	} {
		a := e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/guests/erase", tc.body)
		if a.code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400: %s", tc.body, a.code, a.body)
			continue
		}
		if _, msg := aError(t, a); !strings.Contains(msg, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.body, msg, tc.field)
		}
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("refused requests reached the services: %v", got)
	}
	a := e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/guests/erase", `{"email":"Jane.Guest@Example.com"}`)
	if a.code != http.StatusOK || string(a.body) != `{"code":200,"data":{"bookings":2,"users":1}}` {
		t.Fatalf("HTTP %d: %s", a.code, a.body)
	}
	if got := f.take(); len(got) != 1 || got[0] != "booking-svc POST /internal/account/guests/erase? account="+acc.AccountID+` body={"email":"Jane.Guest@Example.com"}` {
		t.Errorf("booking-svc got %v", got)
	}
	audit := e.admin(t, http.MethodGet, "/audit?account="+acc.AccountID, "")
	if !strings.Contains(string(audit.body), `"action":"guest_erase","changes":[{"field":"bookings","old":null,"new":2},{"field":"users","old":null,"new":1}]`) {
		t.Errorf("no audit record of the counts: %s", audit.body)
	}
	for what, text := range map[string]string{"audit": string(audit.body), "logs": e.logs.String()} {
		if strings.Contains(strings.ToLower(text), "jane.guest") {
			t.Errorf("the %s hold the guest's address", what)
		}
	}
	f.down["booking-svc"] = true
	badGateway(t, e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/guests/erase", `{"email":"jane@example.com"}`), "booking-svc")
}

// credentialRefused reports whether edge refuses c's key/pass and its interface A pair (401
// or B's status 2), as opposed to forwarding them.
func (e *testEdge) credentialRefused(t *testing.T, c issued) bool {
	t.Helper()
	b := e.send(t, http.MethodPost, "/vros/external-booking", nil, fmt.Sprintf(`{"key":%q,"pass":%q,"action":"create"}`, c.Key, c.Pass))
	bRefused := b.code == http.StatusOK && strings.Contains(string(b.body), `"status":2`)
	msg, aRefused := e.refusal(t, "basic+service", c)
	_ = msg
	return bRefused && aRefused
}

// TestAdminDelete: DELETE marks the account deleting (every credential refused at once, on
// every replica within the poll), has property-svc erase it, and leaves a deleted record:
// every admin route for the id then answers 404 and its credentials 401. A deletion whose
// erase failed answers 502, leaves the account deleting and unchangeable, and is finished
// by the next DELETE. Concurrent DELETEs all succeed.
func TestAdminDelete(t *testing.T) {
	f := newFakeServices(t)
	e, other := start(t, f.cfg()), start(t, f.cfg())
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Doomed Owner"}`))
	if other.credentialRefused(t, acc) {
		t.Fatal("a new account's credentials are refused")
	}
	f.erase503.Store(true)
	badGateway(t, e.admin(t, http.MethodDelete, "/accounts/"+acc.AccountID, ""), "property-svc")
	if !e.credentialRefused(t, acc) {
		t.Error("credentials accepted while the account is deleting")
	}
	deadline := time.Now().Add(3 * time.Second)
	for !other.credentialRefused(t, acc) {
		if time.Now().After(deadline) {
			t.Fatal("the other replica still accepts the deleting account's credentials")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if a := e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID, ""); a.code != http.StatusOK || !strings.Contains(string(a.body), `"status":"deleting"`) {
		t.Errorf("GET while deleting: HTTP %d %s", a.code, a.body)
	}
	for _, p := range []string{"/rotate", "/reinstate", "/plan"} {
		if a := e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+p, `{}`); a.code != http.StatusConflict {
			t.Errorf("POST %s while deleting: HTTP %d, want 409: %s", p, a.code, a.body)
		}
	}
	f.erase503.Store(false)
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Go(func() {
			a := []*testEdge{e, other}[i%2].admin(t, http.MethodDelete, "/accounts/"+acc.AccountID, "")
			codes[i] = a.code
			if a.code == http.StatusOK && !strings.Contains(string(a.body), `"account_id":"`+acc.AccountID+`","deleted_at":`) {
				t.Errorf("DELETE answer %s", a.body)
			}
		})
	}
	wg.Wait()
	if !slices.Contains(codes, http.StatusOK) || slices.ContainsFunc(codes, func(c int) bool { return c != http.StatusOK && c != http.StatusNotFound }) {
		t.Errorf("concurrent DELETEs answered %v, want 200 (or 404 after another finished)", codes)
	}
	if f.erases.Load() < 2 {
		t.Errorf("property-svc asked to erase %d times", f.erases.Load())
	}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "", ""}, {http.MethodDelete, "", ""}, {http.MethodGet, "/plan", ""}, {http.MethodPost, "/plan", `{}`},
		{http.MethodPost, "/rotate", `{}`}, {http.MethodPost, "/suspend", ``}, {http.MethodPost, "/reinstate", ``},
		{http.MethodPost, "/settings", `{"legacy_credentials":true}`}, {http.MethodGet, "/usage", ""}, {http.MethodGet, "/export", ""},
		{http.MethodPost, "/guests/erase", `{"email":"a@example.com"}`},
	} {
		if a := other.admin(t, r.method, "/accounts/"+acc.AccountID+r.path, r.body); a.code != http.StatusNotFound {
			t.Errorf("%s %s after deletion: HTTP %d, want 404: %s", r.method, r.path, a.code, a.body)
		}
	}
	if a := e.admin(t, http.MethodGet, "/accounts?q="+acc.AccountID, ""); !strings.Contains(string(a.body), `"accounts":[]`) {
		t.Errorf("the list still shows the deleted account: %s", a.body)
	}
	for _, x := range []*testEdge{e, other} {
		if !x.credentialRefused(t, acc) {
			t.Error("credentials accepted after deletion")
		}
	}
	audit := e.admin(t, http.MethodGet, "/audit?account="+acc.AccountID, "")
	if strings.Contains(string(audit.body), "Doomed") || !strings.Contains(string(audit.body), `"action":"deleted"`) {
		t.Errorf("audit after deletion: %s", audit.body)
	}
	for _, x := range []*testEdge{e, other} {
		if strings.Contains(x.logs.String(), "Doomed") {
			t.Error("the logs hold the deleted account's name")
		}
	}
	// A new account never takes the id.
	next := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{}`))
	if next.AccountID == acc.AccountID {
		t.Error("the deleted id was given to a new account")
	}
}
