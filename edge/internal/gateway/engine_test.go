package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// The public booking API (docs/booking-engine.md) against stubs of catalog-svc's and
// booking-svc's /internal/engine/ routes.

// engineStub stands in for catalog-svc and booking-svc: it verifies each request's signed
// tenant as the services do (401 when it does not verify), answers the origins of each
// account as set in origins, and any other route 200 (201 for a new checkout, or the
// status a body's "answer_status" asks for) with {"data": {service, path, account, got}},
// got being the body it received. It records every request but the origins' reads, which
// it counts per account.
type engineStub struct {
	mu      sync.Mutex
	got     []received
	origins map[string]string // account id → catalog-svc's brands, as JSON
	// originsAnswer, when set, is answered to every read of the origins instead.
	originsAnswer *stubAnswer
	fetches       map[string]int
}

type stubAnswer struct {
	status int
	body   string
}

func (s *engineStub) handler(name gateway.Upstream) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := received{service: name, method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: body}
		_, tenant, err := verifyEdge(r.Header, rec)
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		s.mu.Lock()
		if r.URL.Path == "/internal/engine/origins" {
			s.fetches[tenant.AccountID]++
			brands, answer := s.origins[tenant.AccountID], s.originsAnswer
			s.mu.Unlock()
			if answer != nil {
				w.WriteHeader(answer.status)
				_, _ = io.WriteString(w, answer.body)
				return
			}
			_, _ = io.WriteString(w, `{"data":{"brands":`+brands+`}}`)
			return
		}
		s.got = append(s.got, rec)
		s.mu.Unlock()
		status := http.StatusOK
		if r.URL.Path == "/internal/engine/checkout/create" {
			status = http.StatusCreated
		}
		var f struct {
			AnswerStatus int `json:"answer_status"`
		}
		if json.Unmarshal(body, &f) == nil && f.AnswerStatus != 0 {
			status = f.AnswerStatus
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
			"service": name, "path": r.URL.Path, "account": tenant.AccountID, "got": json.RawMessage(body)}})
	})
}

func (s *engineStub) setOrigins(accountID, brands string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.origins[accountID] = brands
}

func (s *engineStub) setOriginsAnswer(a *stubAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.originsAnswer = a
}

func (s *engineStub) fetchesOf(accountID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches[accountID]
}

func (s *engineStub) take() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// engineEdge is a gateway whose catalog-svc and booking-svc are one engineStub, reading the
// time from clock (the booking API's buckets and origins cache), trusting X-Forwarded-For
// from loopback so that a test can send from many addresses.
type engineEdge struct {
	*edge
	stub  *engineStub
	gw    *gateway.Gateway
	clock *testClock

	// secrets are every secret of the accounts the test made (track): no answer may carry
	// one (try checks each).
	mu      sync.Mutex
	secrets []string
}

func startEngineEdge(t *testing.T, cfg gateway.Config) *engineEdge {
	t.Helper()
	s := &engineStub{origins: map[string]string{}, fetches: map[string]int{}}
	cfg.ServiceURLs = map[gateway.Upstream]string{}
	for _, name := range []gateway.Upstream{gateway.CatalogSvc, gateway.BookingSvc} {
		srv := httptest.NewServer(s.handler(name))
		t.Cleanup(srv.Close)
		cfg.ServiceURLs[name] = srv.URL
	}
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	proxies, err := httpapi.ParseProxies([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	gw, err := gateway.New(cfg, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, signingKey), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	gw.SetEngineClock(clock.now)
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, TrustedProxies: proxies, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	return &engineEdge{edge: e, stub: s, gw: gw, clock: clock}
}

// account creates an account whose brands catalog-svc answers as brands (JSON).
func (e *engineEdge) account(t *testing.T, sandbox bool, brands string) tenantAccount {
	t.Helper()
	acc := e.createAccount(t, sandbox)
	e.stub.setOrigins(acc.id, brands)
	e.track(acc)
	return acc
}

// track adds acc's secrets, its owner token included, to those no answer may carry.
func (e *engineEdge) track(acc tenantAccount) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range acc.creds {
		e.secrets = append(e.secrets, s.Secret)
		if s.Kind != account.OwnerToken {
			e.secrets = append(e.secrets, s.Identifier)
		}
	}
}

// leaked is the first secret a carries (its headers or its body), or "".
func (e *engineEdge) leaked(a engineAnswer) string {
	var text strings.Builder
	for k, vs := range a.header {
		fmt.Fprintf(&text, "%s: %s\n", k, strings.Join(vs, ", "))
	}
	text.Write(a.body)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range append(e.secrets, signingKey) {
		if strings.Contains(text.String(), s) {
			return s
		}
	}
	return secretFormats.FindString(text.String())
}

// engineAnswer is one answer of the booking API, with its headers.
type engineAnswer struct {
	code   int
	body   []byte
	header http.Header
}

// engineClient sends as a browser would, without asking for compression (the scripts'
// tests ask for it themselves).
var engineClient = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}

// call sends method path from client address from (X-Forwarded-For) with Origin origin
// (none when empty) and the headers and body given.
func (e *engineEdge) call(t *testing.T, from, method, path, origin string, header map[string]string, body string) engineAnswer {
	t.Helper()
	a, err := e.try(from, method, path, origin, header, body)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// try is call for goroutines other than the test's.
func (e *engineEdge) try(from, method, path, origin string, header map[string]string, body string) (engineAnswer, error) {
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		return engineAnswer{}, err
	}
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := engineClient.Do(req)
	if err != nil {
		return engineAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := engineAnswer{code: resp.StatusCode, body: b, header: resp.Header}
	if err == nil && resp.Header.Get("Content-Encoding") == "" {
		// Every answer of every test here is scanned (gzipped ones by TestEngineNoSecrets).
		if s := e.leaked(a); s != "" {
			err = fmt.Errorf("%s %s: the answer (HTTP %d) carries a secret %.6s…", method, path, a.code, s)
		}
	}
	return a, err
}

// api is the path of route of the booking API with token.
func api(token, route string) string { return "/widget/api/v1/" + token + "/" + route }

// tokenOf is acc's owner token.
func tokenOf(acc tenantAccount) string { return acc.creds[account.OwnerToken].Secret }

// refusedEngine asserts a refusal of the booking API: HTTP code and exactly
// {"error":{"code","field"?,"message"}} with errCode, field ("" for none) and a message
// containing message (starting with the field when there is one).
func refusedEngine(t *testing.T, a engineAnswer, code int, errCode, field, message string) {
	t.Helper()
	var env map[string]json.RawMessage
	var e struct {
		Code    string  `json:"code"`
		Field   *string `json:"field"`
		Message string  `json:"message"`
	}
	if a.code != code || json.Unmarshal(a.body, &env) != nil || len(env) != 1 || json.Unmarshal(env["error"], &e) != nil {
		t.Fatalf("want HTTP %d {error: {code: %s}}, got HTTP %d: %s", code, errCode, a.code, a.body)
	}
	gotField := ""
	if e.Field != nil {
		gotField = *e.Field
	}
	if e.Code != errCode || gotField != field || !strings.Contains(e.Message, message) || (field != "" && !strings.HasPrefix(e.Message, field+": ")) {
		t.Fatalf("want HTTP %d {code: %s, field: %q, message: …%s…}, got %s", code, errCode, field, message, a.body)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("refusal's Content-Type %q", ct)
	}
}

// noCORS asserts that a carries no Access-Control-Allow-* header: the page cannot read it.
func noCORS(t *testing.T, a engineAnswer) {
	t.Helper()
	for k := range a.header {
		if strings.HasPrefix(strings.ToLower(k), "access-control-allow") {
			t.Errorf("answer HTTP %d carries %s: %v", a.code, k, a.header[k])
		}
	}
}

// corsFor asserts that a is readable by a page of origin, and only of it.
func corsFor(t *testing.T, a engineAnswer, origin string) {
	t.Helper()
	if got := a.header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != origin {
		t.Errorf("Access-Control-Allow-Origin %q, want %q", got, origin)
	}
	if !strings.Contains(a.header.Get("Vary"), "Origin") {
		t.Errorf("Vary %q, want Origin", a.header.Get("Vary"))
	}
	if a.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("credentials mode allowed")
	}
	if exp := a.header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "Retry-After") {
		t.Errorf("Access-Control-Expose-Headers %q", exp)
	}
}

// forwarded decodes the JSON a service received.
func forwarded(t *testing.T, r received) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("forwarded body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// stubData is the data of an engineStub's answer.
type stubData struct {
	Service string         `json:"service"`
	Path    string         `json:"path"`
	Account string         `json:"account"`
	Got     map[string]any `json:"got"`
}

func dataOf(t *testing.T, a engineAnswer) stubData {
	t.Helper()
	var out struct {
		Data stubData `json:"data"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil {
		t.Fatalf("answer %s: %v", a.body, err)
	}
	return out.Data
}

const twoBrands = `[{"id":7,"origins":["https://a.example","http://localhost:8081"]},{"id":9,"origins":["https://shop.a.example"]}]`

// TestEngineOrigin: every request of the booking API, GET, POST and preflight alike, needs
// an Origin of one of the account's brands (compared with scheme and host lowercased and a
// default port dropped); it then sells as that brand and its answer names the origin.
// Otherwise 403 origin_not_allowed, with no Access-Control-Allow-* header, and nothing is
// forwarded.
func TestEngineOrigin(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{})
	acc := e.account(t, false, twoBrands)
	none := e.account(t, false, `[]`)
	for _, tc := range []struct {
		name, origin string
		acc          tenantAccount
		brand        float64 // 0: refused
	}{
		{"a brand's origin", "https://a.example", acc, 7},
		{"upper case, default port", "HTTPS://A.Example:443", acc, 7},
		{"with its port", "http://localhost:8081", acc, 7},
		{"the other brand's origin", "https://shop.a.example", acc, 9},
		{"another port", "https://a.example:8443", acc, 0},
		{"another scheme", "http://a.example", acc, 0},
		{"another host", "https://b.example", acc, 0},
		{"a suffix of a brand's", "https://evil-a.example", acc, 0},
		{"no Origin", "", acc, 0},
		{"null", "null", acc, 0},
		{"with a path", "https://a.example/book", acc, 0},
		{"user info", "https://x@a.example", acc, 0},
		{"an account without brands", "https://a.example", none, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := tokenOf(tc.acc)
			for _, req := range []struct {
				method, route, body string
				header              map[string]string
			}{
				{http.MethodGet, "site?lang=en", "", nil},
				{http.MethodPost, "quote", `{"property":12}`, map[string]string{"Content-Type": "application/json"}},
				{http.MethodPost, "checkouts", `{"property":12}`, map[string]string{"Content-Type": "application/json", "Idempotency-Key": "k-" + tc.name}},
				{http.MethodOptions, "checkouts", "", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,idempotency-key"}},
				{http.MethodOptions, "site", "", map[string]string{"Access-Control-Request-Method": "GET"}},
			} {
				e.stub.take()
				a := e.call(t, "", req.method, api(token, req.route), tc.origin, req.header, req.body)
				got := e.stub.take()
				if tc.brand == 0 {
					refusedEngine(t, a, http.StatusForbidden, "origin_not_allowed", "", "Origin")
					noCORS(t, a)
					if len(got) != 0 {
						t.Errorf("%s %s: forwarded although refused: %+v", req.method, req.route, got)
					}
					continue
				}
				corsFor(t, a, tc.origin)
				if req.method == http.MethodOptions {
					if a.code != http.StatusNoContent || len(a.body) != 0 || len(got) != 0 {
						t.Errorf("preflight %s: HTTP %d %s, %d forwarded", req.route, a.code, a.body, len(got))
					}
					wantMethods := map[string]string{"site": "GET, OPTIONS", "checkouts": "POST, OPTIONS"}[req.route]
					if h := a.header; h.Get("Access-Control-Allow-Methods") != wantMethods ||
						h.Get("Access-Control-Allow-Headers") != "Content-Type, Idempotency-Key" || h.Get("Access-Control-Max-Age") != "600" {
						t.Errorf("preflight %s headers %v", req.route, h)
					}
					continue
				}
				if a.code != http.StatusOK && a.code != http.StatusCreated || len(got) != 1 {
					t.Fatalf("%s %s: HTTP %d %s, %d forwarded", req.method, req.route, a.code, a.body, len(got))
				}
				if b := forwarded(t, got[0])["brand_id"]; b != tc.brand {
					t.Errorf("%s %s: brand_id %v forwarded, want %v", req.method, req.route, b, tc.brand)
				}
			}
		})
	}
}

// TestEngineOriginCache: the account's origins are read from catalog-svc once per account
// and kept 2 s (the staleness a brand's change of origins may see), read again after; many
// requests at once on a cold cache read them once; a failed read is not kept (503, then the
// next request reads again).
func TestEngineOriginCache(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{})
	acc := e.account(t, false, `[{"id":1,"origins":["https://one.example"]}]`)
	site := api(tokenOf(acc), "site")
	allowed := func(origin string, want float64) {
		t.Helper()
		e.stub.take()
		a := e.call(t, "", http.MethodGet, site, origin, nil, "")
		if want == 0 {
			refusedEngine(t, a, http.StatusForbidden, "origin_not_allowed", "", origin)
			return
		}
		got := e.stub.take()
		if a.code != http.StatusOK || len(got) != 1 || forwarded(t, got[0])["brand_id"] != want {
			t.Fatalf("from %s: HTTP %d %s, forwarded %+v; want brand %v", origin, a.code, a.body, got, want)
		}
	}
	allowed("https://one.example", 1)
	allowed("https://one.example", 1)
	if n := e.stub.fetchesOf(acc.id); n != 1 {
		t.Fatalf("origins read %d times, want 1", n)
	}
	// The brand's origins change: until 2 s after the read, edge still uses the old ones.
	e.stub.setOrigins(acc.id, `[{"id":2,"origins":["https://two.example"]}]`)
	e.clock.advance(1999 * time.Millisecond)
	allowed("https://one.example", 1)
	allowed("https://two.example", 0)
	e.clock.advance(time.Millisecond)
	allowed("https://two.example", 2)
	allowed("https://one.example", 0)
	if n := e.stub.fetchesOf(acc.id); n != 2 {
		t.Fatalf("origins read %d times, want 2", n)
	}

	t.Run("many requests at once read once", func(t *testing.T) {
		cold := e.account(t, false, `[{"id":5,"origins":["https://cold.example"]}]`)
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for range 32 {
			wg.Go(func() {
				a, err := e.try("", http.MethodGet, api(tokenOf(cold), "site"), "https://cold.example", nil, "")
				if err == nil && a.code != http.StatusOK {
					err = fmt.Errorf("HTTP %d %s", a.code, a.body)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := e.stub.fetchesOf(cold.id); n != 1 {
			t.Errorf("32 requests at once read the origins %d times, want 1", n)
		}
	})

	t.Run("a failed read is not kept", func(t *testing.T) {
		e.clock.advance(2 * time.Second) // acc's origins are stale
		for _, bad := range []stubAnswer{{500, `{}`}, {200, `{"brands":[]}`}, {200, `not json`}, {200, `{"data":{"brands":[{"origins":["https://two.example"]}]}}`}} {
			e.stub.setOriginsAnswer(&bad)
			before := e.stub.fetchesOf(acc.id)
			a := e.call(t, "", http.MethodGet, site, "https://two.example", nil, "")
			refusedEngine(t, a, http.StatusServiceUnavailable, "unavailable", "", "catalog-svc")
			noCORS(t, a)
			if e.stub.fetchesOf(acc.id) != before+1 {
				t.Errorf("answer %+v: the origins were not read", bad)
			}
		}
		e.stub.setOriginsAnswer(nil)
		allowed("https://two.example", 2)
	})
}

// TestEngineForward: each route reaches its service's /internal/engine/ path as a POST,
// signed with the account's tenant (sandbox too), with the page's JSON object, or a GET's
// query parameters as strings, plus brand_id (the origin's brand, over any the page sent)
// and, on a checkout's routes, checkout_id (the path's, over any sent). Idempotency-Key goes
// along, and to catalog-svc the base of its links; the service's answer comes back with its
// status.
func TestEngineForward(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{})
	asJSON := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name, method, route, body string
		header                    map[string]string
		service                   gateway.Upstream
		path                      string
		want                      string // the forwarded body
		code                      int
	}{
		{"site", http.MethodGet, "site?lang=fr", "", nil, gateway.CatalogSvc, "/internal/engine/site", `{"lang":"fr","brand_id":7}`, 200},
		{"site, HEAD", http.MethodHead, "site", "", nil, gateway.CatalogSvc, "/internal/engine/site", `{"brand_id":7}`, 200},
		{"site, trailing slash", http.MethodGet, "site/", "", nil, gateway.CatalogSvc, "/internal/engine/site", `{"brand_id":7}`, 200},
		{"calendar, brand_id in the query", http.MethodGet, "calendar?property=12&from=2030-01-01&months=3&brand_id=9&lang=a%20b", "", nil, gateway.CatalogSvc,
			"/internal/engine/calendar", `{"property":"12","from":"2030-01-01","months":"3","lang":"a b","brand_id":7}`, 200},
		{"calendar, a GET's body is not read", http.MethodGet, "calendar?property=1", `{"property":2}`, nil, gateway.CatalogSvc,
			"/internal/engine/calendar", `{"property":"1","brand_id":7}`, 200},
		{"quote, brand_id sent", http.MethodPost, "quote", `{"property":12,"arrival":"2030-01-01","adults":2,"brand_id":99}`, asJSON, gateway.BookingSvc,
			"/internal/engine/quote", `{"property":12,"arrival":"2030-01-01","adults":2,"brand_id":7}`, 200},
		{"quote, a POST's query is not read", http.MethodPost, "quote?property=3", `{"property":12}`, asJSON, gateway.BookingSvc,
			"/internal/engine/quote", `{"property":12,"brand_id":7}`, 200},
		{"quote, text/plain", http.MethodPost, "quote", "\ufeff {\"property\":12} ", map[string]string{"Content-Type": "text/plain"}, gateway.BookingSvc,
			"/internal/engine/quote", `{"property":12,"brand_id":7}`, 200},
		{"quote, the service's 409", http.MethodPost, "quote", `{"answer_status":409}`, asJSON, gateway.BookingSvc,
			"/internal/engine/quote", `{"answer_status":409,"brand_id":7}`, 409},
		{"checkouts", http.MethodPost, "checkouts", `{"property":12,"checkout_id":"x"}`, map[string]string{"Idempotency-Key": "key-1"}, gateway.BookingSvc,
			"/internal/engine/checkout/create", `{"property":12,"checkout_id":"x","brand_id":7}`, 201},
		{"checkout", http.MethodGet, "checkouts/ck_1?checkout_id=other", "", nil, gateway.BookingSvc,
			"/internal/engine/checkout/get", `{"checkout_id":"ck_1","brand_id":7}`, 200},
		{"guest", http.MethodPost, "checkouts/ck_1/guest", `{"first_name":"Ana","checkout_id":"ck_2","brand_id":"7"}`, asJSON, gateway.BookingSvc,
			"/internal/engine/checkout/guest", `{"first_name":"Ana","checkout_id":"ck_1","brand_id":7}`, 200},
		{"confirm", http.MethodPost, "checkouts/ck_1/confirm", `{"card":{"number":"4242424242424242","brand_id":1}}`, map[string]string{"Idempotency-Key": "c-1"}, gateway.BookingSvc,
			"/internal/engine/checkout/confirm", `{"card":{"number":"4242424242424242","brand_id":1},"checkout_id":"ck_1","brand_id":7}`, 200},
		{"cancel, no body", http.MethodPost, "checkouts/A-b_9/cancel", "", nil, gateway.BookingSvc,
			"/internal/engine/checkout/cancel", `{"checkout_id":"A-b_9","brand_id":7}`, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modes(t, e.edge, func(t *testing.T, acc tenantAccount) {
				e.stub.setOrigins(acc.id, twoBrands)
				e.track(acc)
				e.stub.take()
				a := e.call(t, "", tc.method, api(tokenOf(acc), tc.route), "https://a.example", tc.header, tc.body)
				got := e.stub.take()
				if a.code != tc.code || len(got) != 1 {
					t.Fatalf("HTTP %d %s, %d forwarded; want %d", a.code, a.body, len(got), tc.code)
				}
				corsFor(t, a, "https://a.example")
				r := got[0]
				if r.service != tc.service || r.method != http.MethodPost || r.path != tc.path || r.query != "" {
					t.Errorf("forwarded %s %s?%s to %s, want POST %s to %s", r.method, r.path, r.query, r.service, tc.path, tc.service)
				}
				var want map[string]any
				if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
					t.Fatal(err)
				}
				if m := forwarded(t, r); !reflect.DeepEqual(m, want) {
					t.Errorf("forwarded %s, want %s", r.body, tc.want)
				}
				if k := tc.header["Idempotency-Key"]; r.header.Get("Idempotency-Key") != k {
					t.Errorf("Idempotency-Key %q forwarded, want %q", r.header.Get("Idempotency-Key"), k)
				}
				wantSigned(t, r, acc)
				// catalog-svc's answers carry links (site's photo_url): edge's base goes along.
				if base, want := r.header.Get(gateway.HeaderPublicBase), map[bool]string{true: e.url}[tc.service == gateway.CatalogSvc]; base != want {
					t.Errorf("%s %q, want %q", gateway.HeaderPublicBase, base, want)
				}
				if tc.method == http.MethodHead {
					return
				}
				if d := dataOf(t, a); d.Path != tc.path || d.Account != acc.id || !reflect.DeepEqual(d.Got, want) {
					t.Errorf("answer %s is not the service's", a.body)
				}
			})
		})
	}
}

// TestEngineRequestRules: a path of no route is 404, another method 405 (before the token
// is even looked at); a body that is not a JSON object 400, one over 16 KiB 413, a checkout
// without Idempotency-Key (or one over 255 characters) 400 naming it; none is forwarded.
// Refusals after the origin is allowed are readable by its page.
func TestEngineRequestRules(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{})
	acc := e.account(t, false, twoBrands)
	token := tokenOf(acc)
	const origin = "https://a.example"
	big := `{"notes":"` + strings.Repeat("x", 16*1024) + `"}`
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		errCode, field, message  string
		cors                     bool
	}{
		{"unknown route", http.MethodGet, api(token, "sites"), "", nil, 404, "not_found", "", "no such route", false},
		{"unknown checkout route", http.MethodPost, api(token, "checkouts/ck_1/pay"), "", nil, 404, "not_found", "", "no such route", false},
		{"not a checkout id", http.MethodGet, api(token, "checkouts/ck.1"), "", nil, 404, "not_found", "", "no such route", false},
		{"a checkout id too long", http.MethodGet, api(token, "checkouts/"+strings.Repeat("a", 65)), "", nil, 404, "not_found", "", "no such route", false},
		{"no route", http.MethodGet, api(token, ""), "", nil, 404, "not_found", "", "no such route", false},
		{"another version", http.MethodGet, "/widget/api/v2/" + token + "/site", "", nil, 404, "not_found", "", "no such route", false},
		{"the API's root", http.MethodGet, "/widget/api", "", nil, 404, "not_found", "", "no such route", false},
		{"POST site", http.MethodPost, api(token, "site"), `{}`, nil, 405, "method_not_allowed", "", "use GET", false},
		{"GET quote", http.MethodGet, api(token, "quote"), "", nil, 405, "method_not_allowed", "", "use POST", false},
		{"DELETE checkout", http.MethodDelete, api(token, "checkouts/ck_1"), "", nil, 405, "method_not_allowed", "", "use GET", false},
		{"not JSON", http.MethodPost, api(token, "quote"), `property=12`, nil, 400, "bad_request", "", "JSON object", true},
		{"a JSON array", http.MethodPost, api(token, "quote"), `[{"property":12}]`, nil, 400, "bad_request", "", "JSON object", true},
		{"a JSON string", http.MethodPost, api(token, "quote"), `"x"`, nil, 400, "bad_request", "", "JSON object", true},
		{"cut JSON", http.MethodPost, api(token, "checkouts/ck_1/guest"), `{"first_name":`, nil, 400, "bad_request", "", "JSON object", true},
		{"an object and more", http.MethodPost, api(token, "quote"), `{"a":1}{"b":2}`, nil, 400, "bad_request", "", "JSON object", true},
		{"over 16 KiB", http.MethodPost, api(token, "checkouts/ck_1/guest"), big, nil, 413, "payload_too_large", "", "16384 bytes", true},
		{"no Idempotency-Key", http.MethodPost, api(token, "checkouts"), `{"property":12}`, nil, 400, "bad_request", "Idempotency-Key", "required", true},
		{"Idempotency-Key too long", http.MethodPost, api(token, "checkouts"), `{"property":12}`, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)},
			400, "bad_request", "Idempotency-Key", "at most 255", true},
		{"Idempotency-Key too long on confirm", http.MethodPost, api(token, "checkouts/ck_1/confirm"), `{}`, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)},
			400, "bad_request", "Idempotency-Key", "at most 255", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.stub.take()
			a := e.call(t, "", tc.method, tc.path, origin, tc.header, tc.body)
			refusedEngine(t, a, tc.code, tc.errCode, tc.field, tc.message)
			if got := e.stub.take(); len(got) != 0 {
				t.Errorf("forwarded: %+v", got)
			}
			if tc.cors {
				corsFor(t, a, origin)
			} else {
				noCORS(t, a)
			}
			if tc.code == 405 && a.header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
			if strings.Contains(string(a.body), token) {
				t.Errorf("the answer repeats the token: %s", a.body)
			}
		})
	}
	// 255 characters is a key.
	a := e.call(t, "", http.MethodPost, api(token, "checkouts"), origin, map[string]string{"Idempotency-Key": strings.Repeat("k", 255)}, `{}`)
	if a.code != http.StatusCreated {
		t.Errorf("a 255-character key: HTTP %d %s", a.code, a.body)
	}
}

// TestEngineCredentials: the owner token in the path must be an active account's current
// one: a wrong token, another kind of secret, or a suspended account's is 401 before the
// origin is looked at (no Access-Control-Allow-*, nothing forwarded, catalog-svc not
// asked); wrong tokens spend the address's failed authentications, as the owner-token
// reads' do.
func TestEngineCredentials(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{Failures: throttle.NewFailures(0.001, 4)})
	live := e.account(t, false, twoBrands)
	suspended := e.account(t, false, twoBrands)
	if a := e.call(t, "", http.MethodGet, api(tokenOf(suspended), "site"), "https://a.example", nil, ""); a.code != http.StatusOK {
		t.Fatalf("before the suspension: HTTP %d %s", a.code, a.body)
	}
	if _, err := e.accounts.SetStatus(context.Background(), suspended.id, account.Revoked); err != nil {
		t.Fatal(err)
	}
	e.stub.take()
	for i, tc := range []struct {
		name, token, message string
	}{
		{"wrong token", unknown(account.OwnerToken).Secret, "invalid credentials"},
		{"one character changed", changed(tokenOf(live), 5), "invalid credentials"},
		{"B's pass as token", live.creds[account.Key].Secret, "invalid credentials"},
		{"suspended account", tokenOf(suspended), "account suspended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fetches := e.stub.fetchesOf(live.id) + e.stub.fetchesOf(suspended.id)
			a := e.call(t, fmt.Sprintf("198.51.100.%d", i+1), http.MethodPost, api(tc.token, "quote"), "https://a.example", nil, `{}`)
			refusedEngine(t, a, http.StatusUnauthorized, "unauthorized", "", tc.message)
			noCORS(t, a)
			if got := e.stub.take(); len(got) != 0 || e.stub.fetchesOf(live.id)+e.stub.fetchesOf(suspended.id) != fetches {
				t.Errorf("reached a service: %+v", got)
			}
		})
	}
	t.Run("throttled", func(t *testing.T) {
		const from = "192.0.2.77"
		for range 4 {
			a := e.call(t, from, http.MethodGet, api(unknown(account.OwnerToken).Secret, "site"), "https://a.example", nil, "")
			refusedEngine(t, a, http.StatusUnauthorized, "unauthorized", "", "invalid credentials")
		}
		a := e.call(t, from, http.MethodGet, api(tokenOf(live), "site"), "https://a.example", nil, "")
		refusedEngine(t, a, http.StatusTooManyRequests, "rate_limited", "", "failed authentications")
		if a.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		if a := e.call(t, "192.0.2.78", http.MethodGet, api(tokenOf(live), "site"), "https://a.example", nil, ""); a.code != http.StatusOK {
			t.Errorf("another address: HTTP %d %s", a.code, a.body)
		}
	})
}

// TestEngineRateLimits: the booking API's own buckets (on the test's clock): per client
// address, per account, and checkouts per client address; over one, 429 rate_limited with
// Retry-After, readable by the page, nothing forwarded; the bucket refills with time.
func TestEngineRateLimits(t *testing.T) {
	const origin = "https://a.example"
	limited := func(t *testing.T, a engineAnswer, message, retry string) {
		t.Helper()
		refusedEngine(t, a, http.StatusTooManyRequests, "rate_limited", "", message)
		corsFor(t, a, origin)
		if got := a.header.Get("Retry-After"); got != retry && (retry != "" || got == "") {
			t.Errorf("Retry-After %q, want %q", got, retry)
		}
	}
	ok := func(t *testing.T, a engineAnswer) {
		t.Helper()
		if a.code != http.StatusOK && a.code != http.StatusCreated && a.code != http.StatusNoContent {
			t.Fatalf("HTTP %d %s", a.code, a.body)
		}
	}

	t.Run("per address", func(t *testing.T) {
		e := startEngineEdge(t, gateway.Config{Engine: gateway.EngineLimits{AddressRPS: 0.5, AddressBurst: 3, KeyRPS: 1, KeyBurst: 100}})
		acc := e.account(t, false, twoBrands)
		site := api(tokenOf(acc), "site")
		for range 3 {
			ok(t, e.call(t, "203.0.113.1", http.MethodGet, site, origin, nil, ""))
		}
		e.stub.take()
		limited(t, e.call(t, "203.0.113.1", http.MethodGet, site, origin, nil, ""), "from this address", "2")
		limited(t, e.call(t, "203.0.113.1", http.MethodOptions, site, origin, nil, ""), "from this address", "2") // preflights count
		if got := e.stub.take(); len(got) != 0 {
			t.Errorf("forwarded: %+v", got)
		}
		ok(t, e.call(t, "203.0.113.2", http.MethodGet, site, origin, nil, ""))
		// An IPv6 client's /64 is one address.
		for range 3 {
			ok(t, e.call(t, "2001:db8:1:2::1", http.MethodGet, site, origin, nil, ""))
		}
		limited(t, e.call(t, "2001:db8:1:2::ff", http.MethodGet, site, origin, nil, ""), "from this address", "2")
		e.clock.advance(2 * time.Second)
		ok(t, e.call(t, "203.0.113.1", http.MethodGet, site, origin, nil, ""))
		limited(t, e.call(t, "203.0.113.1", http.MethodGet, site, origin, nil, ""), "from this address", "2")
	})

	t.Run("per account", func(t *testing.T) {
		e := startEngineEdge(t, gateway.Config{Engine: gateway.EngineLimits{KeyRPS: 0.25, KeyBurst: 5, AddressRPS: 10, AddressBurst: 10}})
		acc, other := e.account(t, false, twoBrands), e.account(t, false, twoBrands)
		for i := range 5 {
			ok(t, e.call(t, fmt.Sprintf("203.0.113.%d", 10+i), http.MethodGet, api(tokenOf(acc), "site"), origin, nil, ""))
		}
		limited(t, e.call(t, "203.0.113.99", http.MethodPost, api(tokenOf(acc), "quote"), origin, nil, `{}`), "for this account", "4")
		ok(t, e.call(t, "203.0.113.99", http.MethodPost, api(tokenOf(other), "quote"), origin, nil, `{}`))
		e.clock.advance(4 * time.Second)
		ok(t, e.call(t, "203.0.113.99", http.MethodPost, api(tokenOf(acc), "quote"), origin, nil, `{}`))
	})

	t.Run("checkouts per address", func(t *testing.T) {
		e := startEngineEdge(t, gateway.Config{Engine: gateway.EngineLimits{AddressCheckouts: 2, CheckoutPeriod: time.Hour, AddressRPS: 10, AddressBurst: 100}})
		acc := e.account(t, false, twoBrands)
		checkouts := api(tokenOf(acc), "checkouts")
		create := func(from, key string) engineAnswer {
			return e.call(t, from, http.MethodPost, checkouts, origin, map[string]string{"Idempotency-Key": key}, `{"property":12}`)
		}
		ok(t, create("203.0.113.5", "a"))
		ok(t, create("203.0.113.5", "b"))
		e.stub.take()
		limited(t, create("203.0.113.5", "c"), "checkouts from this address", "1800")
		if got := e.stub.take(); len(got) != 0 {
			t.Errorf("forwarded: %+v", got)
		}
		// The address still reads, quotes and asks the preflight; another address checks out.
		ok(t, e.call(t, "203.0.113.5", http.MethodGet, api(tokenOf(acc), "site"), origin, nil, ""))
		ok(t, e.call(t, "203.0.113.5", http.MethodPost, api(tokenOf(acc), "quote"), origin, nil, `{}`))
		ok(t, e.call(t, "203.0.113.5", http.MethodOptions, checkouts, origin, nil, ""))
		ok(t, e.call(t, "203.0.113.5", http.MethodPost, api(tokenOf(acc), "checkouts/ck_1/confirm"), origin, nil, `{}`))
		ok(t, create("203.0.113.6", "d"))
		e.clock.advance(30*time.Minute + time.Second) // one checkout's worth, and a little
		ok(t, create("203.0.113.5", "e"))
		limited(t, create("203.0.113.5", "f"), "checkouts from this address", "")
	})

	t.Run("off by default", func(t *testing.T) {
		e := startEngineEdge(t, gateway.Config{})
		acc := e.account(t, false, twoBrands)
		for i := range 50 {
			ok(t, e.call(t, "203.0.113.7", http.MethodPost, api(tokenOf(acc), "checkouts"), origin, map[string]string{"Idempotency-Key": fmt.Sprint(i)}, `{}`))
		}
	})
}

// TestEngineBrandsNeverCross: many browsers of two accounts, each on its own websites (and
// both on one origin each lists for a brand of its own), at once: every request is
// forwarded as its own account with its own brand, every answer is its own and names its
// own origin, and an account's token from the other's website is always refused.
func TestEngineBrandsNeverCross(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{})
	a := e.account(t, false, `[{"id":101,"origins":["https://a.example"]},{"id":103,"origins":["https://shared.example"]}]`)
	b := e.account(t, true, `[{"id":202,"origins":["https://b.example"]},{"id":203,"origins":["https://shared.example"]}]`)
	type visit struct {
		acc    tenantAccount
		origin string
		brand  float64 // 0: refused
	}
	visits := []visit{{a, "https://a.example", 101}, {a, "https://shared.example", 103}, {b, "https://b.example", 202},
		{b, "https://shared.example", 203}, {a, "https://b.example", 0}, {b, "https://a.example", 0}}
	routes := []struct{ method, route, body string }{
		{http.MethodGet, "site?lang=en", ""}, {http.MethodPost, "quote", `{"property":1}`},
		{http.MethodGet, "checkouts/ck_9", ""}, {http.MethodPost, "checkouts/ck_9/guest", `{"first_name":"Ana"}`},
	}
	const workers, each = 48, 25
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	var allowed atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				v, r := visits[(w+i)%len(visits)], routes[(w*7+i)%len(routes)]
				ans, err := e.try(fmt.Sprintf("10.1.%d.%d", w, i), r.method, api(tokenOf(v.acc), r.route), v.origin, nil, r.body)
				if err != nil {
					errs <- err
					return
				}
				if v.brand == 0 {
					if ans.code != http.StatusForbidden || ans.header.Get("Access-Control-Allow-Origin") != "" {
						errs <- fmt.Errorf("%s from %s: HTTP %d %s", v.acc.id, v.origin, ans.code, ans.body)
						return
					}
					continue
				}
				allowed.Add(1)
				var out struct {
					Data struct {
						Account string         `json:"account"`
						Got     map[string]any `json:"got"`
					} `json:"data"`
				}
				if ans.code != http.StatusOK || json.Unmarshal(ans.body, &out) != nil || out.Data.Account != v.acc.id ||
					out.Data.Got["brand_id"] != v.brand || ans.header.Get("Access-Control-Allow-Origin") != v.origin {
					errs <- fmt.Errorf("%s from %s (brand %v): HTTP %d %s, ACAO %q", v.acc.id, v.origin, v.brand, ans.code, ans.body, ans.header.Get("Access-Control-Allow-Origin"))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// What the services received: each request as its own account, with its own brands.
	own := map[string]map[float64]bool{a.id: {101: true, 103: true}, b.id: {202: true, 203: true}}
	got := e.stub.take()
	for _, r := range got {
		_, tenant, err := verifyEdge(r.header, r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if json.Unmarshal(r.body, &m) != nil || !own[tenant.AccountID][m["brand_id"].(float64)] {
			t.Errorf("%s received for %s: %s", r.path, tenant.AccountID, r.body)
		}
		if tenant.Sandbox != (tenant.AccountID == b.id) {
			t.Errorf("%s: sandbox %v", tenant.AccountID, tenant.Sandbox)
		}
	}
	if int64(len(got)) != allowed.Load() {
		t.Errorf("%d requests forwarded, want %d", len(got), allowed.Load())
	}
}
