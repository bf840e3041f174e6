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

// channelToken is the one inbound token the integration stub of these tests knows, for
// either adapter (43 base64url characters, as integration-svc makes them).
const channelToken = "ChAnNeLtOkEn0123456789-_abcdefghijklmnopqrs"

const soapReply = `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><OTA_HotelResNotifRS/></soap:Body></soap:Envelope>`

// channelStub stands in for integration-svc's POST /internal/channels/inbound/{adapter}/{token}:
// the known token answers 200 (Channex: JSON; OpenTravel: XML), any other 404; it records
// what it receives. Every other path answers 200 JSON (the A resources).
type channelStub struct {
	mu  sync.Mutex
	got []received
}

func (s *channelStub) take() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func (s *channelStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, received{service: gateway.IntegrationSvc, method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body})
	s.mu.Unlock()
	switch r.URL.Path {
	case "/internal/channels/inbound/channex/" + channelToken:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	case "/internal/channels/inbound/opentravel/" + channelToken:
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = io.WriteString(w, soapReply)
	default:
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/internal/channels/") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"code":404,"error_type":"not_found","error_message":"no such channel connection"}`)
			return
		}
		_, _ = io.WriteString(w, `{"code":200,"data":{}}`)
	}
}

// startChannelEdge starts a gateway whose integration-svc is a channelStub, with cfg's
// failure throttle (X-Forwarded-For trusted from loopback).
func startChannelEdge(t *testing.T, cfg gateway.Config) (*edge, *channelStub) {
	t.Helper()
	stub := &channelStub{}
	srv := httptest.NewServer(stub)
	t.Cleanup(srv.Close)
	cfg.ServiceURLs = map[gateway.Upstream]string{gateway.IntegrationSvc: srv.URL}
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
	return e, stub
}

type channelAnswer struct {
	code               int
	body               string
	contentType, cache string
}

func postChannel(t *testing.T, e *edge, method, path, from, contentType, body string) channelAnswer {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return channelAnswer{code: resp.StatusCode, body: string(b), contentType: resp.Header.Get("Content-Type"), cache: resp.Header.Get("Cache-Control")}
}

// TestRouteChannels: POST /channels/{adapter}/{token} reaches integration-svc's POST
// /internal/channels/inbound/{adapter}/{token} unsigned, with the body and its Content-Type
// as sent, up to 1 MiB; the answer's status, type and body come back unchanged; an unknown
// adapter, a malformed token or a body over 1 MiB never reach it.
func TestRouteChannels(t *testing.T) {
	e, stub := startChannelEdge(t, gateway.Config{PublicURL: "https://edge.example.com"})
	webhook := `{"event":"booking","payload":{"property_id":"p-1","booking_id":"b-1"}}`
	soap := `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>`
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name, method, path, contentType, body string
		want                                  channelAnswer
		reaches                               bool
	}{
		{"channex webhook", http.MethodPost, "/channels/channex/" + channelToken, "application/json", webhook,
			channelAnswer{200, `{"ok":true}`, "application/json", ""}, true},
		{"opentravel push", http.MethodPost, "/channels/opentravel/" + channelToken, "text/xml; charset=utf-8", soap,
			channelAnswer{200, soapReply, "text/xml; charset=utf-8", ""}, true},
		{"a body of exactly 1 MiB", http.MethodPost, "/channels/channex/" + channelToken, "application/json", big,
			channelAnswer{200, `{"ok":true}`, "application/json", ""}, true},
		{"unknown token", http.MethodPost, "/channels/channex/" + strings.Repeat("x", 43), "application/json", webhook,
			channelAnswer{code: 404}, true},
		{"the other adapter's token", http.MethodPost, "/channels/opentravel/" + strings.Repeat("y", 43), "text/xml", soap,
			channelAnswer{code: 404}, true},
		{"unknown adapter", http.MethodPost, "/channels/siteminder/" + channelToken, "text/xml", soap, channelAnswer{code: 404, cache: "no-store"}, false},
		{"not a token", http.MethodPost, "/channels/channex/a%2E%2E%2Fb", "application/json", webhook, channelAnswer{code: 404, cache: "no-store"}, false},
		{"a token too long", http.MethodPost, "/channels/channex/" + strings.Repeat("x", 129), "application/json", webhook, channelAnswer{code: 404, cache: "no-store"}, false},
		{"over 1 MiB", http.MethodPost, "/channels/channex/" + channelToken, "application/json", big + "x", channelAnswer{code: 413}, false},
		{"GET", http.MethodGet, "/channels/channex/" + channelToken, "", "", channelAnswer{code: 405}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := postChannel(t, e, tc.method, tc.path, "", tc.contentType, tc.body)
			if got.code != tc.want.code {
				t.Fatalf("HTTP %d, want %d: %.200s", got.code, tc.want.code, got.body)
			}
			if tc.want.code == 200 && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if tc.want.cache != "" && got.cache != tc.want.cache {
				t.Errorf("Cache-Control %q, want %q", got.cache, tc.want.cache)
			}
			reached := stub.take()
			if !tc.reaches {
				if len(reached) != 0 {
					t.Errorf("reached integration-svc: %s %s", reached[0].method, reached[0].path)
				}
				return
			}
			if len(reached) != 1 {
				t.Fatalf("%d requests reached integration-svc, want 1", len(reached))
			}
			r := reached[0]
			want := "/internal/channels/inbound/" + strings.TrimPrefix(tc.path, "/channels/")
			if r.method != http.MethodPost || r.path != want {
				t.Errorf("reached %s %s, want POST %s", r.method, r.path, want)
			}
			if string(r.body) != tc.body || r.header.Get("Content-Type") != tc.contentType {
				t.Errorf("forwarded %d bytes as %q, want %d as %q", len(r.body), r.header.Get("Content-Type"), len(tc.body), tc.contentType)
			}
			if got := r.header.Get(gateway.HeaderPublicURL); got != "https://edge.example.com" {
				t.Errorf("%s %q", gateway.HeaderPublicURL, got)
			}
			wantUnsigned(t, r)
		})
	}
}

// TestRouteChannelsNeverThrottled: a channel manager's address posting to many unknown or
// dead tokens (connections deleted, tokens rotated) is never refused a live one, and spends
// none of its failed-authentication budget.
func TestRouteChannelsNeverThrottled(t *testing.T) {
	e, stub := startChannelEdge(t, gateway.Config{Failures: throttle.NewFailures(0.001, 3)})
	for i := range 10 {
		if got := postChannel(t, e, http.MethodPost, "/channels/channex/dead"+strings.Repeat("x", i), "203.0.113.9", "application/json", `{}`); got.code != 404 {
			t.Fatalf("dead token %d: HTTP %d, want 404", i, got.code)
		}
		if got := postChannel(t, e, http.MethodPost, "/channels/nosuch/x", "203.0.113.9", "application/json", `{}`); got.code != 404 {
			t.Fatalf("unknown adapter %d: HTTP %d, want 404", i, got.code)
		}
	}
	stub.take()
	for range 5 {
		if got := postChannel(t, e, http.MethodPost, "/channels/channex/"+channelToken, "203.0.113.9", "application/json", `{"event":"booking"}`); got.code != 200 {
			t.Fatalf("the live token after 20 dead ones: HTTP %d: %s", got.code, got.body)
		}
	}
	if n := len(stub.take()); n != 5 {
		t.Errorf("integration-svc was asked %d times, want 5", n)
	}
	// The address's budget is untouched: a wrong credential is refused as such (401), not as
	// throttled (429).
	acc := e.createAccount(t, false)
	h := headersA(acc)
	h["servicepass"] = "wrong"
	if got := e.send(t, "203.0.113.9", http.MethodPost, "/api/channel-connection", h, `{"action":"list"}`); got.code != http.StatusUnauthorized {
		t.Fatalf("a wrong credential after the dead tokens: HTTP %d", got.code)
	}
}

// TestRouteChannelResources: the four channel resources reach integration-svc signed, with the
// public URL the inbound URL is built on.
func TestRouteChannelResources(t *testing.T) {
	e, stub := startChannelEdge(t, gateway.Config{PublicURL: "https://edge.example.com/"})
	acc := e.createAccount(t, false)
	for _, name := range []string{"channel-connection", "channel-mapping", "channel-log", "channel-conflict"} {
		body := `{"action":"list"}`
		if got := e.send(t, "", http.MethodPost, "/api/"+name, headersA(acc), body); got.code != 200 {
			t.Fatalf("%s: HTTP %d %s", name, got.code, got.body)
		}
		got := stub.take()
		if len(got) != 1 || got[0].path != "/internal/a/"+name || string(got[0].body) != body ||
			got[0].header.Get(gateway.HeaderPublicURL) != "https://edge.example.com" {
			t.Fatalf("%s reached %+v", name, got)
		}
		wantSigned(t, got[0], acc)
	}
}
