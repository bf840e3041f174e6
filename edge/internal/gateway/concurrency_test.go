package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// limitedEdge is a gateway with a per-account concurrency limit in front of stub.
type limitedEdge struct {
	*edge
	gw  *gateway.Gateway
	app *fiber.App
}

func startLimitedEdge(t *testing.T, limit int, wait time.Duration, stub http.Handler) *limitedEdge {
	t.Helper()
	srv := httptest.NewServer(stub)
	t.Cleanup(srv.Close)
	return startLimitedEdgeAt(t, limit, wait, srv.URL)
}

func startLimitedEdgeAt(t *testing.T, limit int, wait time.Duration, serviceURL string) *limitedEdge {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	gw, err := gateway.New(gateway.Config{
		ServiceURLs:        map[gateway.Upstream]string{gateway.PropertySvc: serviceURL, gateway.BookingSvc: serviceURL, gateway.CatalogSvc: serviceURL},
		AccountConcurrency: limit, ConcurrencyWait: wait,
	}, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, "test-hmac-key-0123456789"), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	le := &limitedEdge{edge: e, gw: gw, app: app}
	// The panic route: a forwarded request whose handler panics (see TestConcurrencySlotReleased).
	app.Post("/test-panic/:account", func(c *fiber.Ctx) error {
		return gw.Admit(c, strings.Clone(c.Params("account")), func() error { panic("handler panicked") })
	})
	e.url = serve(t, app)
	return le
}

// newLimitedAccount creates an account, returning its id and credentials.
func (e *limitedEdge) newLimitedAccount(t *testing.T) (string, credentials) {
	t.Helper()
	a, secrets, err := e.accounts.Create(context.Background(), "fairness", false)
	if err != nil {
		t.Fatal(err)
	}
	out := credentials{}
	for _, s := range secrets {
		out[s.Kind] = s
	}
	return a.ID, out
}

// settled waits until none of accountID's requests holds a slot.
func (e *limitedEdge) settled(t *testing.T, accountID string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.gw.InFlight(accountID) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests of account %s still hold a slot", e.gw.InFlight(accountID), accountID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blockingStub answers 200 once release is closed, counting the requests it holds.
type blockingStub struct {
	release chan struct{}
	held    atomic.Int32
}

func (s *blockingStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.held.Add(1)
	defer s.held.Add(-1)
	<-s.release
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
}

// TestAccountConcurrencyLimit: on every interface, an account with its limit of requests
// in flight has its next one refused 429 in the interface's envelope with Retry-After
// (interface B keeps HTTP 429, status 56: a transport failure), after the queue wait; another
// account is served at once meanwhile; when the requests end, every slot is back.
func TestAccountConcurrencyLimit(t *testing.T) {
	const limit, wait = 2, 50 * time.Millisecond
	stub := &blockingStub{release: make(chan struct{})}
	e := startLimitedEdge(t, limit, wait, stub)
	busyID, busy := e.newLimitedAccount(t)
	quietID, quiet := e.newLimitedAccount(t)

	interfaces := []struct {
		name string
		send func(c credentials) answer
		want func(t *testing.T, a answer)
	}{
		{"interface A", func(c credentials) answer { return e.interfaceA(t, "", c, c[account.ServiceKey].Secret) },
			func(t *testing.T, a answer) { wantA(t, a, 429, "rate_limited") }},
		{"interface B", func(c credentials) answer {
			return e.interfaceB(t, "", c[account.Key].Identifier, c[account.Key].Secret)
		},
			func(t *testing.T, a answer) { wantB(t, a, 429, httpapi.StatusRateLimited) }},
		{"owner-token read", func(c credentials) answer { return e.ownerToken(t, "", c[account.OwnerToken].Secret) },
			func(t *testing.T, a answer) { wantB(t, a, 429, httpapi.StatusRateLimited) }},
	}
	for _, in := range interfaces {
		t.Run(in.name, func(t *testing.T) {
			stub.release = make(chan struct{})
			var wg sync.WaitGroup
			codes := make(chan int, limit)
			for range limit {
				wg.Add(1)
				go func() { defer wg.Done(); codes <- in.send(busy).code }()
			}
			for e.gw.InFlight(busyID) < limit {
				time.Sleep(time.Millisecond)
			}
			start := time.Now()
			refused := in.send(busy)
			in.want(t, refused)
			if refused.retry == "" {
				t.Error("429 without Retry-After")
			}
			if took := time.Since(start); took < wait {
				t.Errorf("refused after %v, before the queue wait of %v", took, wait)
			}
			// The other account is not held up by the busy one: it gets the stub too.
			quietDone := make(chan answer, 1)
			go func() { quietDone <- in.send(quiet) }()
			for stub.held.Load() < limit+1 {
				time.Sleep(time.Millisecond)
			}
			if n := e.gw.InFlight(quietID); n != 1 {
				t.Errorf("the quiet account has %d in flight, want 1", n)
			}
			close(stub.release)
			if a := <-quietDone; a.code != 200 {
				t.Errorf("quiet account: HTTP %d: %s", a.code, a.body)
			}
			wg.Wait()
			close(codes)
			for code := range codes {
				if code != 200 {
					t.Errorf("a request within the limit answered HTTP %d", code)
				}
			}
			e.settled(t, busyID)
			e.settled(t, quietID)
			if n := e.gw.TrackedAccounts(); n != 0 {
				t.Errorf("%d accounts kept with nothing in flight", n)
			}
		})
	}
}

// TestConcurrencySlotReleased: the slot comes back however the forwarded request ends.
// Each case holds the account's only slot, then a second request must be served.
func TestConcurrencySlotReleased(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + closed.Addr().String()
	_ = closed.Close()

	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
	})
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"status":500,"message":"boom"}`)
	})
	hangUp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	tests := []struct {
		name string
		edge func(t *testing.T) *limitedEdge
		// run sends the request that takes the slot, returning once it ended for the client.
		run      func(t *testing.T, e *limitedEdge, id string, c credentials)
		wantCode int
	}{
		{name: "service answers 500", edge: func(t *testing.T) *limitedEdge { return startLimitedEdge(t, 1, 0, failing) }, wantCode: 500},
		{name: "service hangs up", edge: func(t *testing.T) *limitedEdge { return startLimitedEdge(t, 1, 0, hangUp) }, wantCode: 503},
		{name: "service unreachable", edge: func(t *testing.T) *limitedEdge { return startLimitedEdgeAt(t, 1, 0, unreachable) }, wantCode: 503},
		{name: "handler panics", edge: func(t *testing.T) *limitedEdge { return startLimitedEdge(t, 1, 0, failing) }, wantCode: 500,
			run: func(t *testing.T, e *limitedEdge, id string, _ credentials) {
				a := e.send(t, "", http.MethodPost, "/test-panic/"+id, nil, "")
				if a.code != 500 {
					t.Errorf("panicking handler answered HTTP %d", a.code)
				}
			}},
		{name: "client hangs up", edge: func(t *testing.T) *limitedEdge { return startLimitedEdge(t, 1, 0, slow) }, wantCode: 200,
			run: func(t *testing.T, e *limitedEdge, _ string, c credentials) {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/vros/external-booking",
					strings.NewReader(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, c[account.Key].Identifier, c[account.Key].Secret)))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
					t.Error("the client was answered before its timeout")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.edge(t)
			id, c := e.newLimitedAccount(t)
			if tt.run != nil {
				tt.run(t, e, id, c)
			} else if a := e.interfaceB(t, "", c[account.Key].Identifier, c[account.Key].Secret); a.code != tt.wantCode {
				t.Errorf("HTTP %d, want %d: %s", a.code, tt.wantCode, a.body)
			}
			e.settled(t, id)
			if a := e.interfaceB(t, "", c[account.Key].Identifier, c[account.Key].Secret); a.code == 429 {
				t.Fatalf("the account's only slot was not given back: %s", a.body)
			}
		})
	}
}

// TestConcurrencyFairnessNoLeak: many goroutines of two accounts through edge, against a
// service that fails at random (500s, hung-up connections, slow answers) while clients hang
// up at random. The flooding account is held to its limit; the light one is never refused;
// after 10 000 requests no slot is left held.
func TestConcurrencyFairnessNoLeak(t *testing.T) {
	const limit, floodClients, lightClients, total = 4, 32, 2, 10_000
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch rand.IntN(10) {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
		case 1:
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		case 2:
			time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
		}
		_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
	})
	e := startLimitedEdge(t, limit, 20*time.Millisecond, stub)
	floodID, flood := e.newLimitedAccount(t)
	lightID, light := e.newLimitedAccount(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: floodClients + lightClients}}
	t.Cleanup(client.CloseIdleConnections)

	body := func(c credentials) string {
		return fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, c[account.Key].Identifier, c[account.Key].Secret)
	}
	var sent, floodRefused, lightRefused, lightServed, maxInFlight atomic.Int64
	one := func(c credentials, refused *atomic.Int64) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if refused == &floodRefused && rand.IntN(20) == 0 {
			// A flooding client hangs up (the light one's slots stay its own two).
			time.AfterFunc(time.Duration(rand.IntN(2000))*time.Microsecond, cancel)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/vros/external-booking", strings.NewReader(body(c)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 429 {
			refused.Add(1)
		} else if refused == &lightRefused {
			lightServed.Add(1)
		}
	}
	var wg sync.WaitGroup
	run := func(n int, c credentials, refused *atomic.Int64) {
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for sent.Add(1) <= total {
					one(c, refused)
				}
			}()
		}
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := int64(e.gw.InFlight(floodID)); n > maxInFlight.Load() {
				maxInFlight.Store(n)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	run(floodClients, flood, &floodRefused)
	run(lightClients, light, &lightRefused)
	wg.Wait()
	close(stop)

	t.Logf("flood refused %d; light served %d, refused %d; flood's most in flight %d", floodRefused.Load(), lightServed.Load(), lightRefused.Load(), maxInFlight.Load())
	if lightRefused.Load() != 0 {
		t.Errorf("the light account was refused %d times while the other flooded", lightRefused.Load())
	}
	if lightServed.Load() == 0 {
		t.Error("the light account was never served")
	}
	if floodRefused.Load() == 0 {
		t.Error("32 clients of one account against a limit of 4 were never refused")
	}
	if maxInFlight.Load() > limit {
		t.Errorf("the flooding account had %d in flight, over its limit of %d", maxInFlight.Load(), limit)
	}
	e.settled(t, floodID)
	e.settled(t, lightID)
	if n := e.gw.TrackedAccounts(); n != 0 {
		t.Errorf("%d accounts kept after every request ended", n)
	}
}
