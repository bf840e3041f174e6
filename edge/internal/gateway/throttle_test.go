package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/gofiber/fiber/v2"
	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/accountstore"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/testinfra"
)

var store *accountstore.Store

func TestMain(m *testing.M) {
	testinfra.RunWithDatabase(m, "edge_gateway_test", nil, func(db *mongo.Database) (err error) {
		store, err = accountstore.New(context.Background(), db)
		return err
	})
}

// countingRepo counts the store lookups authentication makes.
type countingRepo struct {
	account.Repository
	lookups atomic.Int64
}

func (r *countingRepo) Credential(ctx context.Context, kind account.Kind, id string) (account.Credential, error) {
	r.lookups.Add(1)
	return r.Repository.Credential(ctx, kind, id)
}

func (r *countingRepo) Get(ctx context.Context, id string) (account.Account, error) {
	r.lookups.Add(1)
	return r.Repository.Get(ctx, id)
}

// edge is a gateway in front of a stub that answers every forwarded request 200.
type edge struct {
	url      string
	repo     *countingRepo
	accounts *account.Service
}

// serve runs app on a loopback port until t ends and returns its URL.
func serve(t *testing.T, app *fiber.App) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- httpapi.Serve(ctx, app, "127.0.0.1:0", func(a string) { addr <- a }, 0, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-done:
		t.Fatal(err)
		return ""
	}
}

func startEdge(t *testing.T, failures *throttle.Failures, trustedProxies ...string) *edge {
	t.Helper()
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
	}))
	t.Cleanup(stub.Close)
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	proxies, err := httpapi.ParseProxies(trustedProxies)
	if err != nil {
		t.Fatal(err)
	}
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	gw, err := gateway.New(gateway.Config{
		ServiceURLs: map[gateway.Upstream]string{gateway.PropertySvc: stub.URL, gateway.BookingSvc: stub.URL, gateway.CatalogSvc: stub.URL},
		Failures:    failures,
	}, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, "test-hmac-key-0123456789"), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, TrustedProxies: proxies, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	return e
}

// credentials of one account, as issued.
type credentials map[account.Kind]account.Secret

func (e *edge) newAccount(t *testing.T) credentials {
	t.Helper()
	_, secrets, err := e.accounts.Create(context.Background(), "throttle", false)
	if err != nil {
		t.Fatal(err)
	}
	out := credentials{}
	for _, s := range secrets {
		out[s.Kind] = s
	}
	return out
}

type answer struct {
	code      int
	body      []byte
	requestID string
	retry     string
	header    http.Header
}

// send makes one request from client address from (X-Forwarded-For: honoured only when
// the edge trusts 127.0.0.1).
func (e *edge) send(t *testing.T, from, method, path string, header map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
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
	return answer{code: resp.StatusCode, body: b, requestID: resp.Header.Get(httpapi.HeaderRequestID), retry: resp.Header.Get("Retry-After"),
		header: resp.Header}
}

func (e *edge) interfaceB(t *testing.T, from, key, pass string) answer {
	t.Helper()
	return e.send(t, from, http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/json"},
		fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, key, pass))
}

func (e *edge) interfaceA(t *testing.T, from string, c credentials, servicePass string) answer {
	t.Helper()
	basic := base64.StdEncoding.EncodeToString([]byte(c[account.Basic].Identifier + ":" + c[account.Basic].Secret))
	return e.send(t, from, http.MethodPost, "/api/property", map[string]string{"Content-Type": "application/json",
		"Authorization": "Basic " + basic, "servicekey": c[account.ServiceKey].Identifier, "servicepass": servicePass},
		`{"action":"list"}`)
}

func (e *edge) ownerToken(t *testing.T, from, token string) answer {
	t.Helper()
	return e.send(t, from, http.MethodGet, "/vros/api/default-config/owner_token/"+token, nil, "")
}

// wantB asserts an answer in interface B's envelope with HTTP code and status.
func wantB(t *testing.T, a answer, code, status int) {
	t.Helper()
	var env struct {
		Status  *int   `json:"status"`
		Message string `json:"message"`
	}
	if a.code != code || json.Unmarshal(a.body, &env) != nil || env.Status == nil || *env.Status != status || env.Message == "" {
		t.Fatalf("want HTTP %d with interface B status %d, got HTTP %d: %s", code, status, a.code, a.body)
	}
}

// wantA asserts an answer in interface A's envelope with HTTP code and error_type.
func wantA(t *testing.T, a answer, code int, errorType string) {
	t.Helper()
	var env struct {
		Code      int    `json:"code"`
		ErrorType string `json:"error_type"`
	}
	if a.code != code || json.Unmarshal(a.body, &env) != nil || env.Code != code || env.ErrorType != errorType {
		t.Fatalf("want HTTP %d with error_type %s, got HTTP %d: %s", code, errorType, a.code, a.body)
	}
}

// TestFailedAuthenticationsThrottled: after its burst of failures, a client address is
// refused 429, in the envelope of the interface, before any credential is looked up, on
// every interface; other addresses are unaffected, and successes do not count.
func TestFailedAuthenticationsThrottled(t *testing.T) {
	const burst = 5
	e := startEdge(t, throttle.NewFailures(0.001, burst), "127.0.0.1")
	c := e.newAccount(t)
	key := c[account.Key]

	const attacker = "203.0.113.1"
	for i := range burst {
		wantB(t, e.interfaceB(t, attacker, key.Identifier, fmt.Sprint("wrong-", i)), 200, httpapi.StatusUnauthorized)
	}
	before := e.repo.lookups.Load()
	throttled := e.interfaceB(t, attacker, key.Identifier, key.Secret) // right secret, still refused
	wantB(t, throttled, 429, httpapi.StatusRateLimited)
	if throttled.retry == "" || throttled.requestID == "" {
		t.Errorf("429 without Retry-After (%q) or request id (%q)", throttled.retry, throttled.requestID)
	}
	wantA(t, e.interfaceA(t, attacker, c, c[account.ServiceKey].Secret), 429, "rate_limited")
	wantB(t, e.ownerToken(t, attacker, c[account.OwnerToken].Secret), 429, httpapi.StatusRateLimited)
	if n := e.repo.lookups.Load() - before; n != 0 {
		t.Errorf("%d store lookups for throttled requests, want none", n)
	}

	t.Run("other addresses unaffected", func(t *testing.T) {
		if a := e.interfaceB(t, "203.0.113.2", key.Identifier, key.Secret); a.code != 200 {
			t.Fatalf("HTTP %d: %s", a.code, a.body)
		}
		wantB(t, e.interfaceB(t, "203.0.113.2", key.Identifier, "wrong"), 200, httpapi.StatusUnauthorized)
	})
	t.Run("successes not counted", func(t *testing.T) {
		const client = "203.0.113.3"
		for range 3 * burst {
			if a := e.interfaceB(t, client, key.Identifier, key.Secret); a.code != 200 {
				t.Fatalf("HTTP %d: %s", a.code, a.body)
			}
			if a := e.interfaceA(t, client, c, c[account.ServiceKey].Secret); a.code != 200 {
				t.Fatalf("HTTP %d: %s", a.code, a.body)
			}
		}
		for range burst {
			wantA(t, e.interfaceA(t, client, c, "wrong"), 401, "unauthorized")
		}
		wantA(t, e.interfaceA(t, client, c, c[account.ServiceKey].Secret), 429, "rate_limited")
	})
}

// TestForwardedForNeedsTrustedProxy: without a trusted proxy, X-Forwarded-For does not
// change the client address, so a client cannot escape its throttle by inventing one.
func TestForwardedForNeedsTrustedProxy(t *testing.T) {
	const burst = 3
	e := startEdge(t, throttle.NewFailures(0.001, burst))
	key := e.newAccount(t)[account.Key]
	for i := range burst {
		wantB(t, e.interfaceB(t, fmt.Sprintf("198.51.100.%d", i), key.Identifier, "wrong"), 200, httpapi.StatusUnauthorized)
	}
	wantB(t, e.interfaceB(t, "198.51.100.200", key.Identifier, "wrong"), 429, httpapi.StatusRateLimited)
}
