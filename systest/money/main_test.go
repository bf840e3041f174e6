// Package money proves docs/money.md end to end: a whole vros (embedded servers), every
// request through edge, live accounts paying through Stripe — stripe-mock behind a proxy of
// the test's (stripe.go) that records every request and fails the ones a test asks it to —
// and booking-svc on a test clock, stopped at a faults step and restarted on the same
// stores as systest/crash does. Refunds (refund_test.go), damage-deposit holds
// (deposit_test.go) and owner statements (statement_test.go); after each test the
// account's ledger balances to zero.
//
// The tests run one after another: they move the one clock and restart booking-svc.
package money

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	booking "github.com/vros/vros/booking-svc/service"
	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/stripemock"
)

const adminToken = "money-admin-token-0123456789"

// moneyInterval is how often booking-svc's money worker runs here (30 s in a deployment).
const moneyInterval = 100 * time.Millisecond

// releaseDays is VROS_BOOKING_DEPOSIT_RELEASE_DAYS here (7 in a deployment): short, so that
// a release comes before a hold is old enough to be renewed (6 days).
const releaseDays = 2

// within bounds every wait on the stack: liveness on a loaded machine, not a measure.
const within = 30 * time.Second

var (
	st          *stack.Stack
	mongoDB     *mongo.Client
	stripe      *stripeProxy
	faults      = apitest.NewCrasher()
	clock       apitest.Clock
	keys        = stack.NewKeys()
	apiContract *apitest.Contract
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	stripeURL, stopStripe, err := stripemock.Run("succeeded")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stripe = newStripeProxy(stripeURL)
	code := 1
	func() {
		defer stopStripe()
		defer stripe.Close()
		st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
			Keys: keys, EncryptionKey: seal.NewKey(), AdminToken: adminToken,
			LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4, RateLimitRPS: 1000, RateLimitBurst: 5000,
			Booking: func(c *booking.Config) {
				c.StripeAPIURL = stripe.URL
				c.Crash = faults.Hook
				c.Clock = clock.Now
				c.MoneyInterval, c.OwnerFeeInterval = moneyInterval, moneyInterval
				c.DepositReleaseDays, c.DepositReauthorizeAfter = releaseDays, 144*time.Hour
			},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		defer func() {
			_ = mongoDB.Disconnect(ctx)
			if err := st.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "stack close:", err)
			}
		}()
		// Every exchange through edge is checked against the OpenAPI documents (edge/openapi),
		// the answers' new money fields included.
		if apiContract, err = apitest.NewContract(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		if u, err := url.Parse(st.EdgeURL); err == nil {
			apiContract.Host = u.Host
		}
		client.Transport = apiContract
		code = m.Run()
		if v := apiContract.Violations(); len(v) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d of %d exchanges break the OpenAPI documents (edge/openapi):\n", len(v), apiContract.Checked())
			for _, line := range v {
				fmt.Fprintln(os.Stderr, " -", line)
			}
			code = 1
		}
	}()
	os.Exit(code)
}

// restart kills booking-svc (every stopped request ends there) and starts it again on the
// same stores.
func restart(t *testing.T) {
	t.Helper()
	faults.Kill()
	st.StopBooking()
	if err := st.StartBooking(context.Background()); err != nil {
		t.Fatal(err)
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

type obj = map[string]any

// account is a tenant with one property priced 100.00 USD a night; a live one's property
// takes cards through Stripe with a secret key of its own, which names its requests at the
// proxy.
type account struct {
	demo.Account
	live   bool
	pid    int
	code   string
	secret string
}

var accounts atomic.Int64

// newAccount makes a live (or sandbox) account and its property, and waits until booking-svc
// prices it.
func newAccount(t *testing.T, live bool) account {
	t.Helper()
	n := accounts.Add(1)
	a, err := apitest.NewAccountOf(client, st.EdgeURL, adminToken, fmt.Sprintf("Money Owner %d", n), !live)
	if err != nil {
		t.Fatal(err)
	}
	acc := account{Account: a, live: live, code: fmt.Sprintf("M%d", n)}
	acc.EdgeURL = st.EdgeURL
	r := acc.a(t, "property", obj{"action": "create", "property": obj{
		"internal_code": acc.code, "name": "Money Test Villa by the Sea", "type": "Villa", "brief": strings.Repeat("Quiet. ", 60),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": obj{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false, "timezone": "UTC",
	}}).ok(t)
	var out struct {
		PropertyID string `json:"property_id"`
	}
	r.data(t, &out)
	if acc.pid, err = strconv.Atoi(out.PropertyID); err != nil {
		t.Fatalf("property id %q", out.PropertyID)
	}
	acc.a(t, "property-rate", obj{"internal_code": acc.code, "rate": obj{"daily_price": 100, "minimum_stay": 1},
		"setting": obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}).ok(t)
	if live {
		acc.secret = "sk_test_money" + acc.AccountID
		acc.a(t, "property-method", obj{"internal_code": acc.code,
			"stripe": obj{"secret_key": acc.secret, "public_key": "pk_test_money" + acc.AccountID}}).ok(t)
	}
	acc.waitPriced(t)
	return acc
}

// waitPriced waits until booking-svc's view of the property has its latest version.
func (acc account) waitPriced(t *testing.T) {
	t.Helper()
	id := acc.AccountID + ":" + strconv.Itoa(acc.pid)
	var prop bson.M
	if err := mongoDB.Database("vros_property").Collection("properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&prop); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "booking-svc prices property "+id, within, func() bool {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		return err == nil && doc["version"] == prop["version"]
	})
}

// response is an HTTP answer.
type response struct {
	apitest.Response
	what string
}

func send(t *testing.T, method, u string, headers map[string]string, body string, what string) response {
	t.Helper()
	r, err := apitest.Send(client, method, u, headers, body)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return response{r, what}
}

// a sends an interface A request through edge.
func (acc account) a(t *testing.T, resource string, body any) response {
	t.Helper()
	return send(t, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), apitest.JSON(body), resource)
}

// b sends an interface B action through edge.
func (acc account) b(t *testing.T, action string, fields obj) response {
	t.Helper()
	return send(t, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, acc.BBody(action, fields), action)
}

// direct sends an interface B action straight to booking-svc, signed as edge signs it: the
// requests a test stops at a faults step go this way, so that no edge request waits on a
// handler that "died".
func (acc account) direct(c *http.Client, action string, fields obj) (apitest.Response, error) {
	path := "/internal/b/" + action
	body := apitest.JSON(fields)
	h := map[string]string{}
	tenancy.NewSigner(tenancy.CallerEdge, keys.Edge.Reveal()).SetHeaders(func(k, v string) { h[k] = v },
		tenancy.Tenant{AccountID: acc.AccountID, Sandbox: !acc.live}, http.MethodPost, path, []byte(body), time.Now())
	return apitest.Send(c, http.MethodPost, st.BookingURL+path, h, body)
}

// ok asserts success: interface B's status 0, or interface A's HTTP 200.
func (r response) ok(t *testing.T) response {
	t.Helper()
	var b struct {
		Status *int `json:"status"`
	}
	_ = json.Unmarshal(r.Body, &b)
	if r.Code != http.StatusOK || (b.Status != nil && *b.Status != 0) {
		t.Fatalf("%s: HTTP %d %s", r.what, r.Code, r.Body)
	}
	return r
}

// data decodes the answer's data into v.
func (r response) data(t *testing.T, v any) {
	t.Helper()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("%s: %s: %v", r.what, r.Body, err)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("%s: data %s: %v", r.what, env.Data, err)
	}
}

var day = apitest.Day

// cardGuest is a create body for the account's property from day(from) to day(to), paid
// in full by card (paymentCharge 1) when charge.
func (acc account) cardGuest(from, to int, last string, charge bool) obj {
	return apitest.CardGuest(acc.pid, from, to, last, charge)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
