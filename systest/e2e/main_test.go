// Package e2e tests vros end to end: every request goes through edge to the services,
// which run against the embedded MongoDB and Kafka broker (or real ones, when
// VROS_MONGO_URI and VROS_KAFKA_BROKERS are set).
package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	booking "github.com/vros/vros/booking-svc/service"
	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/stripemock"
)

// The per-account rate limit of the test stack: high enough for every test's requests
// (TestTenantIsolationUnderLoad sends 625 per account at once); TestRateLimit exceeds it.
// The refill is slow (a token per 2 s) so that no token comes back between TestRateLimit's
// draining and its last check, even on a loaded machine or make test-real's servers, with
// every answer checked against the OpenAPI documents (a token per 500 ms came back once).
const (
	rateLimitRPS   = 0.5
	rateLimitBurst = 1000
)

// viewsWithin bounds how long the tests wait for an event-fed view (booking-svc's property
// view, the catalog) to show a write. It is a bound on liveness, generous for a loaded
// machine; how fast views really are is measured by make bench (docs/benchmarks.md).
const viewsWithin = time.Minute

// usageFlush is how often edge flushes its usage counts here (5 s in a deployment): the usage
// tests wait for flushes they can observe (flushedSince), and short ones keep that wait short.
const usageFlush = 200 * time.Millisecond

var (
	st          *stack.Stack
	adminToken  = "test-admin-token-0123456789"
	mongoDB     *mongo.Client
	apiContract *apitest.Contract
	// internalKeys and encryptionKey are the stack's secrets: no answer may show them
	// (engine_test.go scans the booking engine's).
	internalKeys  = stack.NewKeys()
	encryptionKey = seal.NewKey()
	// stripes stands between booking-svc and stripe-mock (engine_test.go); serviceLogs
	// reads every line the services log (engine_test.go scans them for card numbers).
	stripes     *stripeRoutes
	serviceLogs = newLogScan(os.Stderr)
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	// The tests that own their accounts run in parallel (t.Parallel); they spend their time
	// waiting on the stack (views, outboxes, webhooks), not on the CPU, so more of them overlap
	// than the -parallel default (GOMAXPROCS) would let. An explicit -parallel wins.
	flag.Parse()
	if !flagSet("test.parallel") {
		_ = flag.Set("test.parallel", strconv.Itoa(parallel))
	}
	// Live accounts' card charges go to Stripe: here to stripe-mock, whose confirmed
	// payments succeed (gateway_test.go).
	stripeURL, stopStripe, err := stripemock.Run("succeeded")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stripes = newStripeRoutes(stripeURL)
	stopMock := stopStripe
	stopStripe = func() { stripes.Close(); stopMock() }
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Booking: func(c *booking.Config) { c.StripeAPIURL = stripes.URL },
		Keys:    internalKeys, EncryptionKey: encryptionKey, AdminToken: adminToken,
		// Every level is logged, into serviceLogs (which passes errors on to standard
		// error, as before): a card number must not reach any line.
		LogLevel: "debug", ServiceLog: serviceLogs,
		PhotoFetchAllowPrivate: true, OutboxLease: time.Second, PasswordCost: 4, AutopayInterval: 200 * time.Millisecond,
		UsageFlush:   usageFlush,
		RateLimitRPS: rateLimitRPS, RateLimitBurst: rateLimitBurst,
		// messaging-svc plans and sends mail for each booking this suite makes, none of which
		// it examines, and its sender's due query and a stay's cancels scan the whole messages
		// collection on FerretDB: with it, one loaded run took 612 s (the package's timeout)
		// instead of 414 on embedded servers, and its latency tests missed their bounds.
		// systest/messaging runs messaging-svc end to end, its part of an erasure included.
		NoMessaging: true,
	})
	if err != nil {
		stopStripe()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Every exchange of the tests is checked against the OpenAPI documents (edge/openapi):
	// an answer that drifts from them fails the suite.
	if apiContract, err = apitest.NewContract(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = st.Close()
		stopStripe()
		os.Exit(1)
	}
	if u, err := url.Parse(st.EdgeURL); err == nil {
		apiContract.Host = u.Host
	}
	http.DefaultClient.Transport = apiContract
	code := m.Run()
	if v := apiContract.Violations(); len(v) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d of %d exchanges break the OpenAPI documents (edge/openapi):\n", len(v), apiContract.Checked())
		for _, line := range v {
			fmt.Fprintln(os.Stderr, " -", line)
		}
		code = 1
	}
	_ = mongoDB.Disconnect(ctx)
	if err := st.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stack close:", err)
	}
	stopStripe()
	os.Exit(code)
}

// parallel is how many of the parallel tests run at once unless -parallel says.
const parallel = 8

// flagSet tells whether the command line set the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// account is a tenant created through the admin API.
type account struct{ demo.Account }

func newAccount(t *testing.T) account {
	t.Helper()
	a, err := apitest.NewAccount(http.DefaultClient, st.EdgeURL, adminToken, "Test Owner")
	if err != nil {
		t.Fatal(err)
	}
	return account{a}
}

// response is an HTTP answer, with the assertions the tests make on it.
type response apitest.Response

func (r response) status(t *testing.T, want int) {
	t.Helper()
	if r.Code != want {
		t.Fatalf("HTTP %d, want %d: %s", r.Code, want, r.Body)
	}
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// aError is interface A's error envelope.
type aError struct {
	Code         int    `json:"code"`
	ErrorType    string `json:"error_type"`
	ErrorMessage string `json:"error_message"`
	Errors       []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

func (r response) aError(t *testing.T) aError {
	t.Helper()
	var e aError
	r.decode(t, &e)
	if e.Code != r.Code {
		t.Fatalf("envelope code %d != HTTP %d: %s", e.Code, r.Code, r.Body)
	}
	return e
}

// wantViolation asserts a 400 that names field with a message containing msg.
func (r response) wantViolation(t *testing.T, field, msg string) {
	t.Helper()
	r.status(t, http.StatusBadRequest)
	e := r.aError(t)
	if e.ErrorType != "validation_error" {
		t.Fatalf("error_type %q: %s", e.ErrorType, r.Body)
	}
	for _, v := range e.Errors {
		if v.Field == field && strings.Contains(v.Message, msg) {
			return
		}
	}
	t.Fatalf("no violation %s %q in %s", field, msg, r.Body)
}

func do(t *testing.T, method, path string, headers map[string]string, body string) response {
	t.Helper()
	r, err := apitest.Send(http.DefaultClient, method, st.EdgeURL+path, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	return response(r)
}

// a sends an interface A request as acc.
func (acc account) a(t *testing.T, resource string, body any) response {
	t.Helper()
	return do(t, http.MethodPost, "/api/"+resource, acc.AHeaders(), jsonText(body))
}

// jsonText is body as JSON text; a string is taken as already written.
func jsonText(body any) string {
	if s, ok := body.(string); ok {
		return s
	}
	return apitest.JSON(body)
}

// obj is a JSON object under construction.
type obj = map[string]any

// validProperty is an A1 property with every field; tests change one field at a time.
func validProperty(code string) obj {
	return obj{
		"internal_code": code, "name": "Seaside Villa with Garden", "type": "Villa", "brief": strings.Repeat("Lovely. ", 60),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": obj{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false,
	}
}

func createProperty(t *testing.T, acc account, code string) string {
	t.Helper()
	r := acc.a(t, "property", obj{"action": "create", "property": validProperty(code)})
	r.status(t, http.StatusOK)
	var out struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	r.decode(t, &out)
	if out.Data.PropertyID == "" {
		t.Fatalf("no property_id in %s", r.Body)
	}
	return out.Data.PropertyID
}

// stored reads a property record straight from MongoDB, to show what a request did or did
// not change.
func stored(t *testing.T, accountID, propertyID string) bson.M {
	t.Helper()
	var doc bson.M
	err := mongoDB.Database("vros_property").Collection("properties").
		FindOne(context.Background(), bson.D{{Key: "_id", Value: accountID + ":" + propertyID}}).Decode(&doc)
	if err != nil {
		t.Fatalf("stored %s:%s: %v", accountID, propertyID, err)
	}
	return doc
}

func field(doc bson.M, path ...string) any {
	var cur any = doc
	for _, p := range path {
		m, ok := cur.(bson.M)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
