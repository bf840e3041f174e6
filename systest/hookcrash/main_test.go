// Package hookcrash kills integration-svc with SIGKILL while it delivers webhooks and shows
// that no event is lost (each arrives at least once; a duplicate carries the same
// webhook-id), and drives an endpoint through the automatic disabling and its re-enabling,
// end to end through edge. It has its own stack without the in-process integration-svc:
// integration-svc runs here as its own binary, built from the workspace, so that a kill is a
// real kill -9 (no deferred function, no drain, no commit), with the retry schedule and the
// disabling bounds shortened so that all of it takes seconds (docs/webhooks.md).
package hookcrash

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/proc"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
)

const (
	adminToken = "hookcrash-admin-token-0123456789"
	// webhookTimeout bounds one attempt; a delivery being sent is leased for twice that plus
	// 5 s, so a delivery whose attempt the kill interrupted is sent again 9 s after it began.
	webhookTimeout = "2s"
	// The wait before each attempt: ten attempts within 6 s.
	retrySchedule = "0s,200ms,200ms,500ms,500ms,1s,1s,1s,1s,1s"
	// An endpoint is disabled after 3 failed attempts in a row, however short the streak.
	disableMinFailures = 3
)

var (
	st      *stack.Stack
	mongoDB *mongo.Client
	svc     *integration
	client  = &http.Client{Timeout: 20 * time.Second}
	// keys sign the requests between the processes; the integration-svc process gets its own.
	keys = stack.NewKeys()
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "hookcrash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// The current code of integration-svc, built from the workspace (go.work).
	bin, addr, internal, err := proc.BuildService(tmp, "integration-svc", "../../integration-svc/cmd/integration-svc")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	encryptionKey := seal.NewKey()
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Keys: keys, EncryptionKey: encryptionKey, AdminToken: adminToken,
		LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4,
		NoIntegration: true, IntegrationURL: "http://" + addr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		_ = mongoDB.Disconnect(ctx)
		if err := st.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stack close:", err)
		}
	}()
	svc = &integration{url: "http://" + addr, Service: &proc.Service{Name: "integration-svc", Bin: bin,
		LogPath: filepath.Join(tmp, "integration-svc.log"), InternalURL: "http://" + internal,
		Env: apitest.IntegrationEnv(st, keys, addr, internal, encryptionKey,
			"VROS_WEBHOOK_TIMEOUT="+webhookTimeout,
			"VROS_WEBHOOK_POLL=100ms",
			"VROS_WEBHOOK_RETRY_SCHEDULE="+retrySchedule,
			"VROS_WEBHOOK_DISABLE_MIN_FAILURES="+strconv.Itoa(disableMinFailures),
			"VROS_WEBHOOK_DISABLE_AFTER=0s",
		)}}
	defer svc.Kill() // no process left behind, whatever happened
	if err := svc.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, svc.LogTail())
		return 1
	}
	return m.Run()
}

// integration is integration-svc running as a child process, at a fixed address.
type integration struct {
	*proc.Service
	url string
}

// ensureRunning starts integration-svc if an earlier test left it stopped, and shows its log
// when the test fails.
func ensureRunning(t *testing.T) { apitest.EnsureRunning(t, svc.Service) }

// account is a tenant created through edge's admin API, allowed loopback targets (the
// receivers listen there).
type account struct{ demo.Account }

type obj = map[string]any

func newAccount(t *testing.T) account {
	t.Helper()
	a, err := apitest.NewAccount(client, st.EdgeURL, adminToken, "Hook Crash Owner")
	if err != nil {
		t.Fatal(err)
	}
	if err := apitest.AllowPrivateTargets(client, st.EdgeURL, adminToken, a.AccountID, true); err != nil {
		t.Fatal(err)
	}
	return account{a}
}

// a sends an interface A request through edge and decodes its data into out (nil: skip),
// failing the test unless the answer is 200.
func (acc account) a(t *testing.T, resource string, body any, out any) {
	t.Helper()
	r, err := apitest.Send(client, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), apitest.JSON(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != http.StatusOK {
		t.Fatalf("%s %v: HTTP %d %s", resource, body, r.Code, r.Body)
	}
	if out != nil {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatalf("%s: %s: %v", resource, r.Body, err)
		}
		if err := json.Unmarshal(env.Data, out); err != nil {
			t.Fatalf("%s data %s: %v", resource, env.Data, err)
		}
	}
}

// b sends an interface B action through edge; safe from any goroutine: a failure is an
// error, never a Fatal.
func (acc account) b(action string, fields obj, out any) error {
	r, err := apitest.Send(client, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, acc.BBody(action, fields))
	if err != nil {
		return err
	}
	var env struct {
		Status  int             `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || r.Code != http.StatusOK || env.Status != 0 {
		return fmt.Errorf("%s: HTTP %d %s", action, r.Code, r.Body)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

// bookable creates a property priced 100 a night, any day in and out, and waits until
// booking-svc prices it.
func bookable(t *testing.T, acc account, code string) int64 {
	t.Helper()
	var created struct {
		PropertyID json.Number `json:"property_id"`
	}
	acc.a(t, "property", obj{"action": "create", "property": obj{
		"internal_code": code, "name": "Webhook Crash Villa by the Sea", "type": "Villa", "brief": strings.Repeat("Quiet. ", 60),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": obj{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false,
	}}, &created)
	pid, err := created.PropertyID.Int64()
	if err != nil {
		t.Fatalf("property_id %q", created.PropertyID)
	}
	acc.a(t, "property-rate", obj{"internal_code": code, "rate": obj{"daily_price": 100, "minimum_stay": 1},
		"setting": obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}, nil)
	id := acc.AccountID + ":" + strconv.FormatInt(pid, 10)
	var prop bson.M
	if err := mongoDB.Database("vros_property").Collection("properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&prop); err != nil {
		t.Fatal(err)
	}
	holds(t, "booking-svc prices property "+id, time.Minute, func() bool {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		return err == nil && doc["version"] == prop["version"]
	})
	return pid
}

// guest is a valid create body for one night, n days from today.
func guest(pid int64, n int) obj {
	return obj{"propertyId": pid, "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
		"numberofadults": 2, "leadsourceId": 1, "checkin": apitest.Day(n), "checkout": apitest.Day(n + 1)}
}

// holds polls cond every 50 ms until it holds, failing the test after within.
func holds(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// receiver is a webhook endpoint in the test: every request's signature is verified with
// the Standard Webhooks library, and what arrives is recorded in order. answer is the
// status it answers (204 unless set).
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	secret   string
	answer   int
	requests int // every request, whatever the answer
	got      []message
	bad      []string
	// trap, when set, holds the next accepted message unanswered: its webhook-id is sent on
	// trap, and the answer waits for release to close.
	trap    chan string
	release chan struct{}
}

// message is one webhook as received.
type message struct {
	ID   string
	Type string
	Data map[string]any
	At   time.Time
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{answer: http.StatusNoContent, release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.requests++
		wh, err := standardwebhooks.NewWebhook(r.secret)
		if err == nil {
			err = wh.Verify(body, req.Header)
		}
		if err != nil {
			r.bad = append(r.bad, fmt.Sprintf("%s: %v", req.Header.Get("webhook-id"), err))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.answer/100 != 2 {
			w.WriteHeader(r.answer)
			return
		}
		var p struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			r.bad = append(r.bad, fmt.Sprintf("%s: body %s: %v", req.Header.Get("webhook-id"), body, err))
		}
		r.got = append(r.got, message{ID: req.Header.Get("webhook-id"), Type: p.Type, Data: p.Data, At: time.Now()})
		answer, trap, release := r.answer, r.trap, r.release
		r.trap = nil
		r.mu.Unlock()
		if trap != nil {
			// Received but not yet answered: the sender sees no answer until the test
			// releases it, after the kill.
			trap <- req.Header.Get("webhook-id")
			<-release
		}
		r.mu.Lock()
		w.WriteHeader(answer)
	}))
	t.Cleanup(r.srv.Close)
	t.Cleanup(r.releaseAll) // before Close: a held answer would hold Close up
	return r
}

// arm makes the receiver hold the next accepted message unanswered; its webhook-id will be
// sent on the channel returned.
func (r *receiver) arm() <-chan string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan string, 1)
	r.trap = ch
	return ch
}

// releaseAll lets every held answer go (to a sender that may be gone).
func (r *receiver) releaseAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.release)
	r.release = make(chan struct{})
}

func (r *receiver) setSecret(s string) { r.mu.Lock(); r.secret = s; r.mu.Unlock() }
func (r *receiver) setAnswer(c int)    { r.mu.Lock(); r.answer = c; r.mu.Unlock() }

func (r *receiver) count() (requests, accepted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, len(r.got)
}

// all is every accepted message in order of receipt; it fails the test if any signature was
// refused.
func (r *receiver) all(t *testing.T) []message {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		t.Fatalf("signatures or bodies refused: %v", r.bad)
	}
	return append([]message(nil), r.got...)
}

// endpoint is the part of the webhook resource's endpoint JSON the tests read.
type endpoint struct {
	WebhookID     int64   `json:"webhook_id"`
	Enabled       bool    `json:"enabled"`
	DisabledAt    *string `json:"disabled_at"`
	DisabledReas  string  `json:"disabled_reason"`
	FailureStreak int     `json:"failure_streak"`
	Secret        string  `json:"secret"`
}

// createEndpoint subscribes rc to types and gives it the secret.
func createEndpoint(t *testing.T, acc account, rc *receiver, types ...string) endpoint {
	t.Helper()
	var ep endpoint
	acc.a(t, "webhook", obj{"action": "create", "webhook": obj{"url": rc.srv.URL + "/hooks", "event_types": types}}, &ep)
	if ep.WebhookID == 0 || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("created endpoint %+v", ep)
	}
	rc.setSecret(ep.Secret)
	return ep
}

// delivery is one entry of the webhook-delivery log.
type delivery struct {
	MessageID string `json:"message_id"`
	EventType string `json:"event_type"`
	Status    string `json:"status"`
	Attempts  []struct {
		Attempt    int    `json:"attempt"`
		StatusCode int    `json:"status_code"`
		Error      string `json:"error"`
	} `json:"attempts"`
}

// deliveries lists an endpoint's delivery log through edge (status "" = any), newest first.
func deliveries(t *testing.T, acc account, webhookID int64, status string) []delivery {
	t.Helper()
	q := obj{"webhook_id": webhookID, "limit": 500}
	if status != "" {
		q["status"] = status
	}
	var out struct {
		Deliveries []delivery `json:"deliveries"`
	}
	acc.a(t, "webhook-delivery", obj{"action": "list", "delivery": q}, &out)
	return out.Deliveries
}
