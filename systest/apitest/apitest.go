// Package apitest is the client side of vros's end-to-end tests (systest/e2e,
// systest/crash): requests through edge as each kind of caller sends them, safe to use from
// any goroutine (nothing here calls testing.T.Fatal).
package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/proc"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/config"
)

// Response is an HTTP answer, read whole.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Send sends body (JSON unless headers say otherwise) and reads the whole answer.
func Send(c *http.Client, method, url string, headers map[string]string, body string) (Response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: b}, err
}

// JSON is v as JSON text; tests only pass values that encode.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("apitest: %T does not encode: %v", v, err))
	}
	return string(b)
}

// PostA sends an interface A request for resource as acc (to acc.EdgeURL) and decodes its
// answer into out (nil: only checked); an answer other than 200 is an error.
func PostA(c *http.Client, acc demo.Account, resource, body string, out any) error {
	r, err := Send(c, http.MethodPost, acc.EdgeURL+"/api/"+resource, acc.AHeaders(), body)
	if err != nil || r.Code != http.StatusOK {
		return fmt.Errorf("%s: %v %d %s", resource, err, r.Code, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			return fmt.Errorf("%s: %s: %w", resource, r.Body, err)
		}
	}
	return nil
}

// NewAccount creates a sandbox account through edge's admin API: the tests pay with the
// test gateway's card numbers.
func NewAccount(c *http.Client, edgeURL, adminToken, name string) (demo.Account, error) {
	return NewAccountOf(c, edgeURL, adminToken, name, true)
}

// NewAccountOf creates a sandbox or a live account. A live account's card charges go to its
// properties' Stripe accounts, never to the test gateway.
func NewAccountOf(c *http.Client, edgeURL, adminToken, name string, sandbox bool) (demo.Account, error) {
	r, err := Send(c, http.MethodPost, edgeURL+"/admin/v1/accounts", map[string]string{"Authorization": "Bearer " + adminToken},
		JSON(map[string]any{"name": name, "sandbox": sandbox}))
	if err != nil {
		return demo.Account{}, err
	}
	if r.Code != http.StatusCreated {
		return demo.Account{}, fmt.Errorf("create account: HTTP %d %s", r.Code, r.Body)
	}
	var out struct {
		Data demo.Account `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return demo.Account{}, fmt.Errorf("create account: %s: %w", r.Body, err)
	}
	return out.Data, nil
}

// Day is the date n days from today (UTC), as YYYY-MM-DD.
func Day(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format(time.DateOnly) }

// CardGuest is an interface B create body for property pid from Day(from) to Day(to), two
// adults, with a card the gateways approve; paid in full by it (paymentCharge 1) when charge.
func CardGuest(pid, from, to int, last string, charge bool) map[string]any {
	g := map[string]any{"propertyId": pid, "firstName": "Grace", "lastName": last, "email": "grace@example.com",
		"numberofadults": 2, "leadsourceId": 1, "checkin": Day(from), "checkout": Day(to),
		"creditCard": map[string]any{"CCNumber": "4242424242424242", "NameOnCard": "GRACE HOPPER", "Expiration": "12/2035", "CVC": "123"}}
	if charge {
		g["paymentCharge"] = 1
	}
	return g
}

// StartStack starts a whole vros for a test package's TestMain, on the servers of
// VROS_MONGO_URI / VROS_KAFKA_BROKERS when they are set (make test-real) and embedded ones
// otherwise, with logs discarded, and connects a MongoDB client to its store for the tests
// that look at what was stored.
func StartStack(ctx context.Context, o stack.Options) (*stack.Stack, *mongo.Client, error) {
	o.MongoURI = os.Getenv("VROS_MONGO_URI")
	if b := os.Getenv("VROS_KAFKA_BROKERS"); b != "" {
		o.KafkaBrokers = strings.Split(b, ",")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st, err := stack.Start(ctx, o)
	if err != nil {
		return nil, nil, fmt.Errorf("stack: %w", err)
	}
	db, err := mongo.Connect(options.Client().ApplyURI(st.MongoURI).SetBSONOptions(&options.BSONOptions{DefaultDocumentM: true}))
	if err != nil {
		_ = st.Close()
		return nil, nil, fmt.Errorf("mongo: %w", err)
	}
	return st, db, nil
}

// Main is the TestMain of a test package that needs a whole vros and nothing else: it starts
// one with o (StartStack), keeps it in *st for the tests, runs them, closes it and exits with
// their code.
func Main(m *testing.M, o stack.Options, st **stack.Stack) {
	ctx := context.Background()
	s, db, err := StartStack(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*st = s
	code := m.Run()
	_ = db.Disconnect(ctx)
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stack close:", err)
	}
	os.Exit(code)
}

// AllowPrivateTargets sets the account's allow_private_targets through edge's admin API
// (PUT /admin/v1/accounts/{id}/integrations): on, its webhooks and iCal feeds may name
// loopback and other private addresses, as the tests' receivers are.
func AllowPrivateTargets(c *http.Client, edgeURL, adminToken, accountID string, allow bool) error {
	r, err := Send(c, http.MethodPut, edgeURL+"/admin/v1/accounts/"+accountID+"/integrations",
		map[string]string{"Authorization": "Bearer " + adminToken}, JSON(map[string]bool{"allow_private_targets": allow}))
	if err != nil {
		return err
	}
	if r.Code != http.StatusOK {
		return fmt.Errorf("allow_private_targets: HTTP %d %s", r.Code, r.Body)
	}
	return nil
}

// EnsureRunning starts svc, a service a test runs as its own process (proc.BuildService), if
// an earlier test left it stopped (reaping a process that exited by itself), and shows the
// tail of its log when t fails.
func EnsureRunning(t *testing.T, svc *proc.Service) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", svc.Name, svc.LogTail())
		}
	})
	if !svc.Running() {
		svc.Kill()
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// IntegrationEnv is the environment of an integration-svc binary started beside stack st
// (the crash tests' own process): the servers, its addresses, booking-svc, one consumer
// group shared with its restarts, http:// targets allowed, the encryption key, then extra
// (later values win) and the internal keys.
func IntegrationEnv(st *stack.Stack, keys config.InternalKeys, addr, internal, encryptionKey string, extra ...string) []string {
	env := append(proc.WithoutVROS(os.Environ()),
		"VROS_MONGO_URI="+st.MongoURI,
		"VROS_KAFKA_BROKERS="+strings.Join(st.KafkaBrokers, ","),
		"VROS_LOG_LEVEL=warn",
		"VROS_INTERNAL_ADDR="+internal,
		"VROS_INTEGRATION_ADDR="+addr,
		"VROS_INTEGRATION_BOOKING_URL="+st.BookingURL,
		"VROS_INTEGRATION_CONSUMER_GROUP=integration-svc",
		"VROS_INTEGRATION_ALLOW_HTTP=true",
		"VROS_ENCRYPTION_KEY="+encryptionKey,
	)
	return append(append(env, extra...), stack.KeyEnv(keys, "integration-svc")...)
}
