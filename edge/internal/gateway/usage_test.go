package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// memUsage is a usage.Store in memory with the real one's rule: a (replica, batch) is added
// to a record once.
type memUsage struct {
	mu     sync.Mutex
	counts map[string]usage.Counts
	last   map[string]int64
}

func (m *memUsage) Add(_ context.Context, replica string, batch int64, b usage.Bucket, c usage.Counts) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := b.Account + "|" + replica + "|" + b.Hour.String()
	if m.last[key] >= batch {
		return nil
	}
	m.last[key] = batch
	n := m.counts[b.Account]
	n.Add(c)
	m.counts[b.Account] = n
	return nil
}

func (m *memUsage) Requests(_ context.Context, account string, _, _ time.Time) (usage.Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[account], nil
}

// countingEdge is a gateway counting usage, whose services answer the HTTP code a request
// asks for in its body's "want" (200 when absent), after "hold" milliseconds; catalog-svc
// is not deployed.
type countingEdge struct {
	*limitedEdge
	counter *usage.Counter
	store   *memUsage
}

func startCountingEdge(t *testing.T) *countingEdge {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f struct {
			Want int `json:"want"`
			Hold int `json:"hold"` // milliseconds before answering
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &f)
		time.Sleep(time.Duration(f.Hold) * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		if f.Want == 0 {
			_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
			return
		}
		w.WriteHeader(f.Want)
		_, _ = fmt.Fprintf(w, `{"status":4,"message":"answered %d","code":%d,"error_type":"x","error_message":"answered %d"}`, f.Want, f.Want, f.Want)
	}))
	t.Cleanup(srv.Close)
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	ms := &memUsage{counts: map[string]usage.Counts{}, last: map[string]int64{}}
	counter := usage.NewCounter(ms, "test")
	gw, err := gateway.New(gateway.Config{
		ServiceURLs: map[gateway.Upstream]string{gateway.PropertySvc: srv.URL, gateway.BookingSvc: srv.URL},
		Usage:       counter,
	}, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, signingKey), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	return &countingEdge{limitedEdge: &limitedEdge{edge: e, gw: gw, app: app}, counter: counter, store: ms}
}

// counted flushes and returns the account's counts.
func (e *countingEdge) counted(t *testing.T, id string) usage.Counts {
	t.Helper()
	if err := e.counter.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, _ := e.store.Requests(context.Background(), id, time.Time{}, time.Time{})
	return c
}

// TestUsageOutcomes: each authenticated request is counted once, by its interface and
// outcome; a request whose caller is not known is not counted.
func TestUsageOutcomes(t *testing.T) {
	e := startCountingEdge(t)
	bodyA := func(want int) string { return fmt.Sprintf(`{"action":"list","want":%d}`, want) }
	bodyB := func(c credentials, action string, want int) string {
		return fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q,"want":%d}`, c[account.Key].Identifier, c[account.Key].Secret, action, want)
	}
	sendA := func(t *testing.T, c credentials, body string) answer {
		return e.send(t, "", http.MethodPost, "/api/property", map[string]string{"Content-Type": "application/json",
			"Authorization": basicHeader(c[account.Basic].Identifier, c[account.Basic].Secret),
			"servicekey":    c[account.ServiceKey].Identifier, "servicepass": c[account.ServiceKey].Secret}, body)
	}
	sendB := func(t *testing.T, body string) answer {
		return e.send(t, "", http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/json"}, body)
	}
	tests := []struct {
		name    string
		plan    account.Plan
		send    func(t *testing.T, c credentials) answer
		code    int // HTTP code the client gets
		counted bool
		iface   usage.Interface
		outcome usage.Outcome
	}{
		{"A 200 → a ok", account.Plan{}, func(t *testing.T, c credentials) answer { return sendA(t, c, bodyA(0)) }, 200, true, usage.A, usage.OK},
		{"A service 404 → a client_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendA(t, c, bodyA(404)) }, 404, true, usage.A, usage.ClientError},
		{"A service 500 → a server_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendA(t, c, bodyA(500)) }, 500, true, usage.A, usage.ServerError},
		{"A service 502 → a server_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendA(t, c, bodyA(502)) }, 502, true, usage.A, usage.ServerError},
		{"A service 429 (its own) → a client_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendA(t, c, bodyA(429)) }, 429, true, usage.A, usage.ClientError},
		{"A body over the plan's limit → a refused", account.Plan{BodyLimit: 1024}, func(t *testing.T, c credentials) answer {
			return sendA(t, c, `{"action":"list","pad":"`+strings.Repeat("x", 2000)+`"}`)
		}, 413, true, usage.A, usage.Refused},
		{"A wrong secret → not counted", account.Plan{}, func(t *testing.T, c credentials) answer {
			c2 := credentials{account.Basic: c[account.Basic], account.ServiceKey: {Identifier: c[account.ServiceKey].Identifier, Secret: "wrong"}}
			return sendA(t, c2, bodyA(0))
		}, 401, false, 0, 0},
		{"B success → b ok", account.Plan{}, func(t *testing.T, c credentials) answer { return sendB(t, bodyB(c, "create", 0)) }, 200, true, usage.B, usage.OK},
		{"B application error on HTTP 200 → b client_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendB(t, bodyB(c, "create", 400)) }, 200, true, usage.B, usage.ClientError},
		{"B unknown action (edge's 400) → b client_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendB(t, bodyB(c, "nosuch", 0)) }, 200, true, usage.B, usage.ClientError},
		{"B service 500 → b server_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendB(t, bodyB(c, "create", 500)) }, 500, true, usage.B, usage.ServerError},
		{"B service not deployed (503) → b server_error", account.Plan{}, func(t *testing.T, c credentials) answer { return sendB(t, bodyB(c, "getproperties", 0)) }, 503, true, usage.B, usage.ServerError},
		{"B over the plan's rate → b refused", account.Plan{RateRPS: 0.001, RateBurst: 1}, func(t *testing.T, c credentials) answer {
			sendB(t, bodyB(c, "create", 0)) // the burst's one request, counted ok; the next is refused
			return sendB(t, bodyB(c, "create", 0))
		}, 429, true, usage.B, usage.Refused},
		{"B over the plan's concurrency → b refused", account.Plan{MaxConcurrent: 1}, func(t *testing.T, c credentials) answer {
			held := make(chan struct{})
			go func() { // holds the account's one slot for 400 ms; counted ok
				defer close(held)
				sendB(t, fmt.Sprintf(`{"key":%q,"pass":%q,"action":"create","hold":400}`, c[account.Key].Identifier, c[account.Key].Secret))
			}()
			time.Sleep(100 * time.Millisecond)
			a := sendB(t, bodyB(c, "create", 0))
			<-held
			return a
		}, 429, true, usage.B, usage.Refused},
		{"B wrong pass → not counted", account.Plan{}, func(t *testing.T, c credentials) answer {
			return sendB(t, fmt.Sprintf(`{"key":%q,"pass":"wrong","action":"create"}`, c[account.Key].Identifier))
		}, 200, false, 0, 0},
		{"read not deployed (503) → read server_error", account.Plan{}, func(t *testing.T, c credentials) answer {
			return e.send(t, "", http.MethodGet, "/vros/api/default-config/owner_token/"+c[account.OwnerToken].Secret, nil, "")
		}, 503, true, usage.Read, usage.ServerError},
		{"read wrong token → not counted", account.Plan{}, func(t *testing.T, c credentials) answer {
			return e.send(t, "", http.MethodGet, "/vros/api/default-config/owner_token/ot_wrong", nil, "")
		}, 200, false, 0, 0},
		{"booking API, catalog-svc not deployed (503) → engine server_error", account.Plan{}, func(t *testing.T, c credentials) answer {
			return e.send(t, "", http.MethodGet, "/widget/api/v1/"+c[account.OwnerToken].Secret+"/site", map[string]string{"Origin": "https://a.example"}, "")
		}, 503, true, usage.Engine, usage.ServerError},
		{"booking API wrong token → not counted", account.Plan{}, func(t *testing.T, c credentials) answer {
			return e.send(t, "", http.MethodGet, "/widget/api/v1/ot_wrong/site", map[string]string{"Origin": "https://a.example"}, "")
		}, 401, false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, c := e.newLimitedAccount(t)
			if tc.plan != (account.Plan{}) {
				if _, err := e.accounts.SetPlan(context.Background(), id, tc.plan); err != nil {
					t.Fatal(err)
				}
			}
			before := e.counted(t, id)
			a := tc.send(t, c)
			if a.code != tc.code && !(tc.code == 200 && a.code == 401) {
				t.Fatalf("HTTP %d, want %d: %s", a.code, tc.code, a.body)
			}
			got := e.counted(t, id)
			var want usage.Counts
			want.Add(before)
			if tc.counted {
				want[tc.iface][tc.outcome]++
			}
			if strings.HasPrefix(tc.name, "B over the plan's") {
				want[usage.B][usage.OK]++
			}
			if got != want {
				t.Errorf("counts %v, want %v", got.Map(), want.Map())
			}
		})
	}
}

// TestUsageConcurrentAccounts: many clients of two accounts at once, while counts are
// flushed all along: each account's counts are exact, none lost or counted twice.
func TestUsageConcurrentAccounts(t *testing.T) {
	e := startCountingEdge(t)
	type acct struct {
		id string
		c  credentials
	}
	var accs []acct
	for range 2 {
		id, c := e.newLimitedAccount(t)
		accs = append(accs, acct{id, c})
	}
	stop := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		for {
			select {
			case <-stop:
				return
			default:
				_ = e.counter.Flush(context.Background())
			}
		}
	}()
	const clients, each = 8, 25
	var wg sync.WaitGroup
	for i := range clients {
		a := accs[i%2]
		wg.Go(func() {
			for j := range each {
				want := 0
				if j%5 == 0 {
					want = 500
				}
				body := fmt.Sprintf(`{"key":%q,"pass":%q,"action":"create","want":%d}`, a.c[account.Key].Identifier, a.c[account.Key].Secret, want)
				req, _ := http.NewRequest(http.MethodPost, e.url+"/vros/external-booking", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-flushed
	per := clients / 2 * each
	for _, a := range accs {
		got := e.counted(t, a.id)
		var want usage.Counts
		want[usage.B][usage.OK] = int64(per - per/5)
		want[usage.B][usage.ServerError] = int64(per / 5)
		if got != want {
			t.Errorf("account %s: counts %v, want %v", a.id, got.Map(), want.Map())
		}
	}
}

// TestMaxPropertiesSigned: the account plan's max_properties travels to the services in
// the signed header on every interface; an account without one sends no header.
func TestMaxPropertiesSigned(t *testing.T) {
	e, s := startRoutedEdge(t)
	for _, limit := range []int{0, 7} {
		t.Run("max_properties "+strconv.Itoa(limit), func(t *testing.T) {
			acc := e.createAccount(t, false)
			if _, err := e.accounts.SetPlan(context.Background(), acc.id, account.Plan{MaxProperties: limit}); err != nil {
				t.Fatal(err)
			}
			s.take()
			passed(t, e.send(t, "", http.MethodPost, "/api/property", headersA(acc), `{"action":"list"}`), gateway.PropertySvc)
			passed(t, e.send(t, "", http.MethodPost, "/vros/external-booking", nil,
				fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, acc.creds[account.Key].Identifier, acc.creds[account.Key].Secret)), gateway.CatalogSvc)
			for _, r := range s.take() {
				h := r.header
				got, want := h.Get(tenancy.HeaderMaxProperties), ""
				if limit > 0 {
					want = strconv.Itoa(limit)
				}
				if got != want {
					t.Errorf("%s: %s %q, want %q", r.path, tenancy.HeaderMaxProperties, got, want)
				}
				if _, tenant, err := verifyEdge(h, r); err != nil || tenant.MaxProperties != limit {
					t.Errorf("%s: the signature does not cover max_properties %d: %+v %v", r.path, limit, tenant, err)
				}
				changed := h.Clone()
				changed.Set(tenancy.HeaderMaxProperties, strconv.Itoa(limit+1))
				if _, _, err := verifyEdge(changed, r); err == nil {
					t.Errorf("%s: the signature also verifies with max_properties %d", r.path, limit+1)
				}
			}
		})
	}
}
