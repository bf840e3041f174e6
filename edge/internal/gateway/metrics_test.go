package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/libs/tenancy"
)

// TestRefusalsCounted: each wrong credential counts once in vros_edge_auth_failures_total by
// the kind presented (basic, service, key, owner_token); what edge refuses itself counts in
// vros_edge_rejections_total by reason: an address whose failures are spent (auth_throttle),
// an account over its rate (rate), a body over its limit (body_size). No series carries an
// account, a credential or an address.
func TestRefusalsCounted(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	stub := httptest.NewServer(okStub())
	t.Cleanup(stub.Close)
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	proxies, _ := httpapi.ParseProxies([]string{"127.0.0.1"})
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	gw, err := gateway.New(gateway.Config{
		ServiceURLs:  map[gateway.Upstream]string{gateway.PropertySvc: stub.URL, gateway.BookingSvc: stub.URL, gateway.CatalogSvc: stub.URL},
		Failures:     throttle.NewFailures(0.0001, 3),
		RateLimitRPS: 0.0001, RateLimitBurst: 2,
		Metrics: edgemetrics.New(metrics.Meter()),
	}, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, "test-hmac-key-0123456789"), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, TrustedProxies: proxies, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	c := e.newAccount(t)

	// One failure of each kind, from an address of its own (each within its burst).
	wantA(t, e.interfaceA(t, "10.9.0.1", credentials{account.Basic: account.Secret{Identifier: c[account.Basic].Identifier, Secret: "wrong"},
		account.ServiceKey: c[account.ServiceKey]}, c[account.ServiceKey].Secret), 401, "unauthorized")
	wantA(t, e.interfaceA(t, "10.9.0.2", c, "wrong-service-pass"), 401, "unauthorized")
	wantB(t, e.interfaceB(t, "10.9.0.3", c[account.Key].Identifier, "wrong"), 200, httpapi.StatusUnauthorized)
	wantB(t, e.ownerToken(t, "10.9.0.4", "no-such-token-0123456789"), 200, httpapi.StatusUnauthorized)
	// An address that spends its three failures is refused before any lookup.
	for range 3 {
		e.interfaceB(t, "10.9.0.5", c[account.Key].Identifier, "wrong")
	}
	wantB(t, e.interfaceB(t, "10.9.0.5", c[account.Key].Identifier, c[account.Key].Secret), 429, httpapi.StatusRateLimited)
	// The account's burst of two, then its rate.
	for range 2 {
		wantB(t, e.interfaceB(t, "10.9.0.6", c[account.Key].Identifier, c[account.Key].Secret), 200, httpapi.StatusSuccess)
	}
	wantB(t, e.interfaceB(t, "10.9.0.6", c[account.Key].Identifier, c[account.Key].Secret), 429, httpapi.StatusRateLimited)
	// A body over interface B's limit (1 MiB), from another account.
	d := e.newAccount(t)
	big := fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax","pad":%q}`, d[account.Key].Identifier, d[account.Key].Secret, strings.Repeat("x", 1<<20))
	if a := e.send(t, "10.9.0.7", http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/json"}, big); a.code != 413 {
		t.Fatalf("a body over 1 MiB: HTTP %d %s, want 413", a.code, a.body)
	}

	for kind, want := range map[string]float64{"basic": 1, "service": 1, "key": 4, "owner_token": 1, "admin": 0, "panel": 0} {
		if v := metrics.Value(t, "vros_edge_auth_failures_total", "kind", kind); v != want {
			t.Errorf("vros_edge_auth_failures_total{kind=%q} = %v, want %v", kind, v, want)
		}
	}
	for reason, want := range map[string]float64{"auth_throttle": 1, "rate": 1, "body_size": 1, "concurrency": 0} {
		if v := metrics.Value(t, "vros_edge_rejections_total", "reason", reason); v != want {
			t.Errorf("vros_edge_rejections_total{reason=%q} = %v, want %v", reason, v, want)
		}
	}
	secrets := []string{c[account.Key].Identifier, c[account.Key].Secret, c[account.Basic].Identifier, "10.9.0."}
	for name, f := range metrics.Scrape(t) {
		for _, s := range f.Series {
			if strings.HasPrefix(name, "vros_edge_") && len(s.Labels) != 1 {
				t.Errorf("%s labels %v, want one", name, s.Labels)
			}
			for k, v := range s.Labels {
				for _, secret := range secrets {
					if strings.Contains(v, secret) {
						t.Errorf("%s label %s=%q carries %q", name, k, v, secret)
					}
				}
			}
		}
	}
}
