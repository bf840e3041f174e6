package gateway_test

import (
	"context"
	"encoding/json"
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
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// signingKey is the key edge signs the tenant headers with in these tests; the stubs
// verify with it as the services do.
const signingKey = "test-hmac-key-0123456789"

// received is one request a stub service got from edge.
type received struct {
	service gateway.Upstream
	method  string
	path    string // without the query
	query   string
	header  http.Header
	body    []byte
}

// stubs stand in for property-svc, booking-svc, catalog-svc and integration-svc: each records what it
// receives and answers 200 with B's success envelope naming itself.
type stubs struct {
	mu  sync.Mutex
	got []received
}

// take returns the requests received since the last take.
func (s *stubs) take() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

// one asserts that exactly one request reached the stubs since the last take and returns it.
func (s *stubs) one(t *testing.T) received {
	t.Helper()
	got := s.take()
	if len(got) != 1 {
		t.Fatalf("%d requests reached the services, want 1: %+v", len(got), got)
	}
	return got[0]
}

// none asserts that no request reached any stub since the last take.
func (s *stubs) none(t *testing.T) {
	t.Helper()
	if got := s.take(); len(got) != 0 {
		t.Fatalf("%d requests reached the services, want none: first %s %s at %s", len(got), got[0].method, got[0].path, got[0].service)
	}
}

// startRoutedEdge starts a gateway whose five services are recording stubs, without the
// failed-authentication throttle (the credential tables fail on purpose, many times).
func startRoutedEdge(t *testing.T) (*edge, *stubs) {
	t.Helper()
	s := &stubs{}
	urls := map[gateway.Upstream]string{}
	for _, name := range []gateway.Upstream{gateway.PropertySvc, gateway.BookingSvc, gateway.CatalogSvc, gateway.IntegrationSvc, gateway.MessagingSvc} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.got = append(s.got, received{service: name, method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: body})
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{"from":"`+string(name)+`"}}`)
		}))
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	gw, err := gateway.New(gateway.Config{ServiceURLs: urls}, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, signingKey), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	return e, s
}

// tenantAccount is an account created for a test, with its id and its secrets.
type tenantAccount struct {
	id      string
	sandbox bool
	creds   credentials
}

func (e *edge) createAccount(t *testing.T, sandbox bool) tenantAccount {
	t.Helper()
	a, secrets, err := e.accounts.Create(context.Background(), "routes", sandbox)
	if err != nil {
		t.Fatal(err)
	}
	out := tenantAccount{id: a.ID, sandbox: sandbox, creds: credentials{}}
	for _, s := range secrets {
		out.creds[s.Kind] = s
	}
	return out
}

// wantSigned asserts that r carries the tenant headers of acc, signed as edge with edge's
// key for r's method, path, query and body, as tenancyfiber.Require checks them.
func wantSigned(t *testing.T, r received, acc tenantAccount) {
	t.Helper()
	h := r.header
	if got := h.Get(tenancy.HeaderAccount); got != acc.id {
		t.Errorf("%s %s: %s %q, want %q", r.method, r.path, tenancy.HeaderAccount, got, acc.id)
	}
	mode, wantMode := h.Get(tenancy.HeaderMode), ""
	if acc.sandbox {
		wantMode = "sandbox"
	}
	if _, present := h[http.CanonicalHeaderKey(tenancy.HeaderMode)]; mode != wantMode || (!acc.sandbox && present) {
		t.Errorf("%s %s: %s %q (present %v), want %q", r.method, r.path, tenancy.HeaderMode, mode, present, wantMode)
	}
	caller, tenant, err := verifyEdge(h, r)
	if err != nil || caller != tenancy.CallerEdge || tenant.AccountID != acc.id || tenant.Sandbox != acc.sandbox {
		t.Errorf("%s %s: the tenant headers do not verify with edge's key: %s %+v %v (%v)", r.method, r.path, caller, tenant, err, h)
	}
	// The mode is covered by the signature: the other mode does not verify.
	flipped := h.Clone()
	if acc.sandbox {
		flipped.Del(tenancy.HeaderMode)
	} else {
		flipped.Set(tenancy.HeaderMode, "sandbox")
	}
	if _, _, err := verifyEdge(flipped, r); err == nil {
		t.Errorf("%s %s: the signature also verifies with sandbox=%v", r.method, r.path, !acc.sandbox)
	}
}

// verifyEdge checks r's signed tenant context, with headers h, as a service that accepts
// edge's key does (a verifier of its own: each received request is checked once).
func verifyEdge(h http.Header, r received) (string, tenancy.Tenant, error) {
	v := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: signingKey})
	return v.Verify(h.Get, r.method, r.path, r.query, r.body)
}

// wantUnsigned asserts that r carries no tenant headers (a public route).
func wantUnsigned(t *testing.T, r received) {
	t.Helper()
	for _, k := range []string{tenancy.HeaderCaller, tenancy.HeaderAccount, tenancy.HeaderTime, tenancy.HeaderNonce, tenancy.HeaderSignature, tenancy.HeaderMode} {
		if v := r.header.Get(k); v != "" {
			t.Errorf("%s %s: public request carries %s %q", r.method, r.path, k, v)
		}
	}
}

// errorA is interface A's error envelope.
type errorA struct {
	Code         *int   `json:"code"`
	ErrorType    string `json:"error_type"`
	ErrorMessage string `json:"error_message"`
}

// errorB is interface B's envelope.
type errorB struct {
	Status  *int   `json:"status"`
	Message string `json:"message"`
}

// refusedA asserts an interface A refusal: HTTP code, the same code and error_type in A's
// envelope (and no B status), and a message containing message.
func refusedA(t *testing.T, a answer, code int, errorType, message string) {
	t.Helper()
	var env errorA
	var raw map[string]any
	if a.code != code || json.Unmarshal(a.body, &env) != nil || json.Unmarshal(a.body, &raw) != nil ||
		env.Code == nil || *env.Code != code || env.ErrorType != errorType || !strings.Contains(env.ErrorMessage, message) {
		t.Fatalf("want HTTP %d {code:%d, error_type:%s, error_message:…%s…}, got HTTP %d: %s", code, code, errorType, message, a.code, a.body)
	}
	if _, ok := raw["status"]; ok {
		t.Fatalf("interface A answer in B's envelope: %s", a.body)
	}
}

// refusedB asserts an interface B refusal: HTTP code, status in B's envelope (and no A
// code), and a message containing message.
func refusedB(t *testing.T, a answer, code, status int, message string) {
	t.Helper()
	var env errorB
	var raw map[string]any
	if a.code != code || json.Unmarshal(a.body, &env) != nil || json.Unmarshal(a.body, &raw) != nil ||
		env.Status == nil || *env.Status != status || !strings.Contains(env.Message, message) {
		t.Fatalf("want HTTP %d {status:%d, message:…%s…}, got HTTP %d: %s", code, status, message, a.code, a.body)
	}
	if _, ok := raw["code"]; ok {
		t.Fatalf("interface B answer in A's envelope: %s", a.body)
	}
}

// passed asserts that edge answered what the stub of service said.
func passed(t *testing.T, a answer, service gateway.Upstream) {
	t.Helper()
	if a.code != http.StatusOK || !strings.Contains(string(a.body), `"from":"`+string(service)+`"`) {
		t.Fatalf("want %s's answer, got HTTP %d: %s", service, a.code, a.body)
	}
}
