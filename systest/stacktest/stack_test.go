package stacktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vros/vros/devstack/stack"
	integration "github.com/vros/vros/integration-svc/service"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
)

const adminToken = "test-admin-token"

// TestIntegrationService: the stack runs integration-svc as its fifth service (edge routes
// its resources there, Options.Integration adjusts its configuration, it is ready on its
// internal port), StopIntegration and StartIntegration stop and start it alone (edge answers
// 503 meanwhile, then serves the same endpoints again), and with NoIntegration edge routes to
// Options.IntegrationURL instead.
func TestIntegrationService(t *testing.T) {
	ctx := context.Background()
	key, keys := seal.NewKey(), stack.NewKeys()
	var adjusted atomic.Bool
	st, db, err := apitest.StartStack(ctx, stack.Options{Keys: keys, EncryptionKey: key,
		AdminToken: adminToken, LogLevel: "error", PasswordCost: 4,
		Integration: func(c *integration.Config) {
			adjusted.Store(c.AllowHTTP && c.BookingURL != "" && c.ConsumerGroup == "integration-svc" && c.Webhooks.Timeout > 0)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = db.Disconnect(ctx)
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	if !adjusted.Load() {
		t.Error("Options.Integration did not see the stack's settings and the documented defaults")
	}
	if st.IntegrationURL == "" || st.IntegrationInternalURL == "" {
		t.Fatalf("no integration-svc URLs: %q %q", st.IntegrationURL, st.IntegrationInternalURL)
	}
	c := http.DefaultClient
	if r, err := apitest.Send(c, http.MethodGet, st.IntegrationInternalURL+"/readyz", nil, ""); err != nil || r.Code != http.StatusOK {
		t.Fatalf("integration-svc /readyz: %v %d", err, r.Code)
	}
	acc, err := apitest.NewAccount(c, st.EdgeURL, adminToken, "Hooks")
	if err != nil {
		t.Fatal(err)
	}
	if err := apitest.AllowPrivateTargets(c, st.EdgeURL, adminToken, acc.AccountID, true); err != nil {
		t.Fatal(err)
	}
	create := `{"action":"create","webhook":{"url":"http://127.0.0.1:9/hooks","event_types":["booking.created"]}}`
	if r, err := apitest.Send(c, http.MethodPost, st.EdgeURL+"/api/webhook", acc.AHeaders(), create); err != nil || r.Code != http.StatusOK {
		t.Fatalf("create a webhook to a loopback receiver: %v HTTP %d %s", err, r.Code, r.Body)
	}
	list := func() apitest.Response {
		t.Helper()
		r, err := apitest.Send(c, http.MethodPost, st.EdgeURL+"/api/webhook", acc.AHeaders(), `{"action":"list"}`)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	st.StopIntegration()
	if r := list(); r.Code != http.StatusServiceUnavailable {
		t.Errorf("integration-svc stopped: HTTP %d, want 503: %s", r.Code, r.Body)
	}
	if err := st.StartIntegration(ctx); err != nil {
		t.Fatal(err)
	}
	if r := list(); r.Code != http.StatusOK || !strings.Contains(string(r.Body), `"url":"http://127.0.0.1:9/hooks"`) {
		t.Errorf("integration-svc started again: HTTP %d %s, want the endpoint", r.Code, r.Body)
	}

	// NoIntegration: edge routes to the URL given (a test running the binary itself).
	var got atomic.Value
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Method + " " + r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"code":200,"data":{"webhooks":[]}}`))
	}))
	defer stub.Close()
	other, err := stack.Start(ctx, stack.Options{MongoURI: st.MongoURI, KafkaBrokers: st.KafkaBrokers, Keys: keys,
		EncryptionKey: key, AdminToken: adminToken, LogLevel: "error", PasswordCost: 4,
		NoIntegration: true, IntegrationURL: stub.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	if other.IntegrationURL != "" {
		t.Errorf("NoIntegration: IntegrationURL %q, want none", other.IntegrationURL)
	}
	r, err := apitest.Send(c, http.MethodPost, other.EdgeURL+"/api/webhook", acc.AHeaders(), `{"action":"list"}`)
	if err != nil || r.Code != http.StatusOK || got.Load() != "POST /internal/a/webhook" {
		t.Errorf("NoIntegration: HTTP %d %s; the stub got %v", r.Code, r.Body, got.Load())
	}
}
