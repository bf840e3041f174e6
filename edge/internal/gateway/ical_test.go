package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// icalToken is the one token the catalog stub of these tests knows (43 base64url characters).
const icalToken = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde"

const icalBody = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"

// icalStub stands in for catalog-svc's GET /internal/ical/{token}.ics: the known token's
// feed with ETag "v1" (304 when If-None-Match names it), 404 for any other file. It records
// what it receives.
type icalStub struct {
	mu  sync.Mutex
	got []received
}

func (s *icalStub) take() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func (s *icalStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.got = append(s.got, received{service: gateway.CatalogSvc, method: r.Method, path: r.URL.Path, header: r.Header.Clone()})
	s.mu.Unlock()
	if r.URL.Path != "/internal/ical/"+icalToken+".ics" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"no such calendar"}`)
		return
	}
	w.Header().Set("ETag", `"v1"`)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == `"v1"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	_, _ = io.WriteString(w, icalBody)
}

// startICalEdge starts a gateway whose catalog-svc is an icalStub and whose other services
// are recording stubs, with cfg's public URL and failure throttle (X-Forwarded-For trusted
// from loopback, so that a test can send from several addresses).
func startICalEdge(t *testing.T, cfg gateway.Config) (*edge, *icalStub, *stubs, *gateway.Gateway) {
	t.Helper()
	cat := &icalStub{}
	srv := httptest.NewServer(cat)
	t.Cleanup(srv.Close)
	s := &stubs{}
	cfg.ServiceURLs = map[gateway.Upstream]string{gateway.CatalogSvc: srv.URL}
	for _, name := range []gateway.Upstream{gateway.PropertySvc, gateway.BookingSvc, gateway.IntegrationSvc} {
		stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.got = append(s.got, received{service: name, method: r.Method, path: r.URL.Path, header: r.Header.Clone()})
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"code":200,"data":{"from":"`+string(name)+`"}}`)
		}))
		t.Cleanup(stub.Close)
		cfg.ServiceURLs[name] = stub.URL
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
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, TrustedProxies: proxies, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	return e, cat, s, gw
}

// icalAnswer is one answer of the feed route with the headers it must carry.
type icalAnswer struct {
	code                     int
	body                     string
	etag, cache, contentType string
}

func getICal(t *testing.T, e *edge, method, path, from string, header map[string]string) icalAnswer {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return icalAnswer{code: resp.StatusCode, body: string(b), etag: resp.Header.Get("ETag"),
		cache: resp.Header.Get("Cache-Control"), contentType: resp.Header.Get("Content-Type")}
}

// TestRouteICal: GET and HEAD /ical/{token}.ics reach catalog-svc's GET
// /internal/ical/{token}.ics unsigned, with If-None-Match; the answer's ETag, Cache-Control,
// Content-Type, body and a 304 come back unchanged; a file not ending in .ics (or not a
// token) is 404 without reaching catalog-svc.
func TestRouteICal(t *testing.T) {
	e, cat, _, _ := startICalEdge(t, gateway.Config{PublicURL: "https://edge.example.com"})
	file := "/ical/" + icalToken + ".ics"
	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		want               icalAnswer
		reaches            bool
	}{
		{"feed", http.MethodGet, file, nil,
			icalAnswer{200, icalBody, `"v1"`, "no-cache", "text/calendar; charset=utf-8"}, true},
		{"head", http.MethodHead, file, nil,
			icalAnswer{200, "", `"v1"`, "no-cache", "text/calendar; charset=utf-8"}, true},
		{"not modified", http.MethodGet, file, map[string]string{"If-None-Match": `"v1"`},
			icalAnswer{304, "", `"v1"`, "no-cache", ""}, true},
		{"changed", http.MethodGet, file, map[string]string{"If-None-Match": `"v0"`},
			icalAnswer{200, icalBody, `"v1"`, "no-cache", "text/calendar; charset=utf-8"}, true},
		{"unknown token", http.MethodGet, "/ical/" + strings.Repeat("x", 43) + ".ics", nil, icalAnswer{code: 404}, true},
		{"not .ics", http.MethodGet, "/ical/" + icalToken + ".txt", nil, icalAnswer{code: 404}, false},
		{"no extension", http.MethodGet, "/ical/" + icalToken, nil, icalAnswer{code: 404}, false},
		{"only .ics", http.MethodGet, "/ical/.ics", nil, icalAnswer{code: 404}, false},
		{"not a token", http.MethodGet, "/ical/a%2E%2E%2Fb.ics", nil, icalAnswer{code: 404}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := getICal(t, e, tc.method, tc.path, "", tc.header)
			if tc.want.code != 404 && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if got.code != tc.want.code {
				t.Errorf("HTTP %d, want %d: %s", got.code, tc.want.code, got.body)
			}
			reached := cat.take()
			if !tc.reaches {
				if len(reached) != 0 {
					t.Errorf("reached catalog-svc: %+v", reached)
				}
				return
			}
			if len(reached) != 1 {
				t.Fatalf("%d requests reached catalog-svc, want 1", len(reached))
			}
			r := reached[0]
			want := "/internal/ical/" + tc.path[len("/ical/"):]
			if r.method != http.MethodGet || r.path != want {
				t.Errorf("reached %s %s, want GET %s", r.method, r.path, want)
			}
			if inm := tc.header["If-None-Match"]; r.header.Get("If-None-Match") != inm {
				t.Errorf("If-None-Match %q forwarded, want %q", r.header.Get("If-None-Match"), inm)
			}
			wantUnsigned(t, r)
		})
	}
}

// TestRouteICalNeverThrottled: an address that polls many unknown or dead links (a
// channel's fetcher) is never refused a live one, and spends none of its
// failed-authentication budget; a malformed link's 404 is not cached.
func TestRouteICalNeverThrottled(t *testing.T) {
	e, cat, _, _ := startICalEdge(t, gateway.Config{Failures: throttle.NewFailures(0.001, 3)})
	file := "/ical/" + icalToken + ".ics"
	for i := range 10 {
		if got := getICal(t, e, http.MethodGet, "/ical/dead"+strings.Repeat("x", i)+".ics", "203.0.113.7", nil); got.code != 404 {
			t.Fatalf("dead link %d: HTTP %d, want 404", i, got.code)
		}
	}
	cat.take()
	for range 5 {
		if got := getICal(t, e, http.MethodGet, file, "203.0.113.7", nil); got.code != 200 {
			t.Fatalf("the live link after 10 dead ones: HTTP %d, want 200: %s", got.code, got.body)
		}
	}
	if n := len(cat.take()); n != 5 {
		t.Errorf("catalog-svc was asked %d times, want 5", n)
	}
	// the address's budget is untouched: an interface A request with a wrong credential is
	// refused as such (401), not as throttled (429).
	acc := e.createAccount(t, false)
	h := headersA(acc)
	h["servicepass"] = "wrong"
	if got := e.send(t, "203.0.113.7", http.MethodPost, "/api/property", h, `{"action":"list"}`); got.code != http.StatusUnauthorized {
		t.Fatalf("a wrong credential after the dead links: HTTP %d", got.code)
	}
	if got := getICal(t, e, http.MethodGet, "/ical/not%20base64.ics", "203.0.113.7", nil); got.code != 404 || got.cache != "no-store" {
		t.Fatalf("a malformed link: HTTP %d, Cache-Control %q", got.code, got.cache)
	}
}

// TestPublicURLHeader: every forwarded request carries X-Vros-Public-URL, edge's public base
// URL without a trailing slash: the configured one, else the listen URL; neither, none.
func TestPublicURLHeader(t *testing.T) {
	for _, tc := range []struct {
		name, public, listen, want string
	}{
		{"configured", "https://edge.example.com/", "http://127.0.0.1:8080", "https://edge.example.com"},
		{"listen address", "", "http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
		{"none", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, cat, s, gw := startICalEdge(t, gateway.Config{PublicURL: tc.public})
			if tc.listen != "" {
				gw.SetListenURL(tc.listen)
			}
			acc := e.createAccount(t, false)
			var got []received
			for _, name := range []string{"property-ical", "webhook", "ical-feed"} {
				e.send(t, "", http.MethodPost, "/api/"+name, headersA(acc), `{"action":"list"}`)
				got = append(got, s.take()...)
			}
			e.send(t, "", http.MethodGet, "/media/k3y/large.jpg", nil, "")
			got = append(got, s.take()...)
			getICal(t, e, http.MethodGet, "/ical/"+icalToken+".ics", "", nil)
			got = append(got, cat.take()...)
			if len(got) != 5 {
				t.Fatalf("%d requests forwarded, want 5", len(got))
			}
			for _, r := range got {
				if v, ok := r.header[http.CanonicalHeaderKey(gateway.HeaderPublicURL)]; strings.Join(v, ",") != tc.want || (tc.want == "" && ok) {
					t.Errorf("%s %s at %s: %s %q, want %q", r.method, r.path, r.service, gateway.HeaderPublicURL, v, tc.want)
				}
			}
		})
	}
}
