// Package checkoutkill kills booking-svc with SIGKILL while guests make the booking engine's
// checkouts through edge, starts it again on the same stores, and shows that no night stays
// held past a checkout's window (issue 30, "a kill -9 during checkout leaves no night held
// past the window"; docs/booking.md "Checkouts" and "Crashes"). systest/crash stops a
// checkout at each of its steps in process; here the kill is a real kill -9 of booking-svc
// running as its own binary, built from the workspace (no deferred function, no drain, no
// commit), wherever its requests happen to be. The stack runs without the in-process
// booking-svc (stack.Options.NoBooking): edge and integration-svc reach the binary at a fixed
// address, which it binds again when restarted. Its timings are shortened so that all of it
// takes seconds: a request deadline of 1 s, a janitor lease of 3 s, an idempotency lease of
// 2 s and a checkout window of 3 s (the window at least the lease, as booking-svc requires).
//
// refund_test.go kills it the same way between Stripe's answer to a cancellation's refund and
// its record (issue 33; docs/money.md section 1): live accounts pay through stripe-mock behind
// a proxy of the test's, and the money worker runs every 200 ms.
package checkoutkill

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/proc"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/stripemock"
)

const (
	adminToken = "checkoutkill-admin-token-0123456789"
	// booking-svc's shortened timings (VROS_BOOKING_*).
	requestDeadline  = time.Second
	janitorLease     = 3 * time.Second
	idempotencyLease = 2 * time.Second
	window           = 3 * time.Second
	// moneyInterval is how often the money worker attempts the refunds due (30 s deployed).
	moneyInterval = 200 * time.Millisecond
)

var (
	st      *stack.Stack
	mongoDB *mongo.Client
	svc     *proc.Service
	client  = &http.Client{Timeout: 20 * time.Second}
	// keys sign the requests between the processes; the booking-svc process gets its own.
	keys = stack.NewKeys()
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "checkoutkill-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// The current code of booking-svc, built from the workspace (go.work).
	bin, addr, internal, err := proc.BuildService(tmp, "booking-svc", "../../booking-svc/cmd/booking-svc")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Live accounts' card payments and refunds go to stripe-mock through the test's proxy
	// (refund_test.go), which can kill booking-svc in the middle of a refund.
	stripeURL, stopStripe, err := stripemock.Run("succeeded")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopStripe()
	gateway = newRefundKiller(stripeURL)
	defer gateway.Close()
	encryptionKey := seal.NewKey()
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Keys: keys, EncryptionKey: encryptionKey, AdminToken: adminToken,
		LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4,
		NoBooking: true, BookingURL: "http://" + addr,
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
	svc = &proc.Service{Name: "booking-svc", Bin: bin, LogPath: filepath.Join(tmp, "booking-svc.log"),
		InternalURL: "http://" + internal, Env: append(append(proc.WithoutVROS(os.Environ()),
			// libs/config's variables (config.Common) and booking-svc's own (service.Config).
			"VROS_MONGO_URI="+st.MongoURI,
			"VROS_KAFKA_BROKERS="+strings.Join(st.KafkaBrokers, ","),
			"VROS_LOG_LEVEL=warn",
			"VROS_INTERNAL_ADDR="+internal,
			"VROS_BOOKING_ADDR="+addr,
			"VROS_ENCRYPTION_KEY="+encryptionKey,
			"VROS_BOOKING_PASSWORD_COST=4",
			"VROS_BOOKING_OUTBOX_LEASE=1s",
			"VROS_BOOKING_REQUEST_DEADLINE="+requestDeadline.String(),
			"VROS_BOOKING_JANITOR_LEASE="+janitorLease.String(),
			"VROS_BOOKING_IDEMPOTENCY_LEASE="+idempotencyLease.String(),
			"VROS_BOOKING_CHECKOUT_WINDOW="+window.String(),
			"VROS_BOOKING_CONSUMER_GROUP=booking-svc",
			"VROS_BOOKING_PROPERTY_URL="+st.PropertyURL,
			"VROS_BOOKING_STRIPE_API_URL="+gateway.URL,
			"VROS_BOOKING_MONEY_INTERVAL="+moneyInterval.String(),
		), stack.KeyEnv(keys, "booking-svc")...)}
	defer svc.Kill() // no process left behind, whatever happened
	if err := svc.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, svc.LogTail())
		return 1
	}
	return m.Run()
}

// ensureRunning starts booking-svc if an earlier test left it stopped, and shows its log
// when the test fails.
func ensureRunning(t *testing.T) { apitest.EnsureRunning(t, svc) }

// account is a sandbox tenant created through edge's admin API: its checkouts pay with the
// test gateway.
type account struct{ demo.Account }

type obj = map[string]any

func newAccount(t *testing.T) account { t.Helper(); return accountOf(t, "Checkout Kill Owner", true) }

// accountOf is a tenant named name created through edge's admin API, sandbox or live.
func accountOf(t *testing.T, name string, sandbox bool) account {
	t.Helper()
	a, err := apitest.NewAccountOf(client, st.EdgeURL, adminToken, name, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	return account{a}
}

// a sends an interface A request through edge (apitest.PostA) and decodes its data into out
// (nil: skip), failing the test unless the answer is 200.
func (acc account) a(t *testing.T, resource string, body any, out any) {
	t.Helper()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := apitest.PostA(client, acc.Account, resource, apitest.JSON(body), &env); err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			t.Fatalf("%s data %s: %v", resource, env.Data, err)
		}
	}
}

// b sends an interface B action through edge and decodes its data into out, failing the
// test unless it succeeded.
func (acc account) b(t *testing.T, action string, fields obj, out any) {
	t.Helper()
	r, err := apitest.Send(client, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, acc.BBody(action, fields))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Status int             `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || r.Code != http.StatusOK || env.Status != 0 {
		t.Fatalf("%s: HTTP %d %s", action, r.Code, r.Body)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		t.Fatalf("%s data %s: %v", action, env.Data, err)
	}
}

// bookable creates a property priced 100 a night, any day in and out, and waits until
// booking-svc prices it.
func bookable(t *testing.T, acc account, code string) int {
	t.Helper()
	var created struct {
		PropertyID json.Number `json:"property_id"`
	}
	acc.a(t, "property", obj{"action": "create", "property": obj{
		"internal_code": code, "name": "Checkout Kill Villa by the Sea", "type": "Villa", "brief": strings.Repeat("Quiet. ", 60),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": obj{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false,
	}}, &created)
	pid, err := strconv.Atoi(created.PropertyID.String())
	if err != nil {
		t.Fatalf("property_id %q", created.PropertyID)
	}
	acc.a(t, "property-rate", obj{"internal_code": code, "rate": obj{"daily_price": 100, "minimum_stay": 1},
		"setting": obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}, nil)
	waitPriced(t, acc, pid)
	return pid
}

// waitPriced waits until booking-svc's view of acc's property pid has its latest version.
func waitPriced(t *testing.T, acc account, pid int) {
	t.Helper()
	id := acc.AccountID + ":" + strconv.Itoa(pid)
	var prop bson.M
	if err := mongoDB.Database("vros_property").Collection("properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&prop); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "booking-svc prices property "+id, time.Minute, func() bool {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		return err == nil && doc["version"] == prop["version"]
	})
}

// site is an account's brand as its website sees the public booking API.
type site struct {
	acc    account
	origin string
	props  []int
}

// newSite makes a brand of acc selling codes' properties (bookable, made here), allowed from
// origin, and waits until the booking API quotes each of them through edge.
func newSite(t *testing.T, acc account, origin string, codes ...string) site {
	t.Helper()
	s := site{acc: acc, origin: origin}
	for _, c := range codes {
		s.props = append(s.props, bookable(t, acc, c))
	}
	acc.a(t, "account-brand", obj{"action": "create", "brand": obj{"name": "Villas " + codes[0], "origins": []string{origin},
		"properties": codes}}, nil)
	for _, pid := range s.props {
		eventually.Holds(t, fmt.Sprintf("the booking API quotes property %d", pid), time.Minute, func() bool {
			r, err := s.send(http.MethodPost, "/quote", nil, stay(pid, 300, 301))
			return err == nil && r.Code == http.StatusOK
		})
	}
	return s
}

// send sends a public API request through edge with the site's Origin, as its pages do. It
// never fails a test: the guests' goroutines use it.
func (s site) send(method, path string, headers map[string]string, body any) (apitest.Response, error) {
	h := map[string]string{"Origin": s.origin}
	for k, v := range headers {
		h[k] = v
	}
	text := ""
	if body != nil {
		text = apitest.JSON(body)
	}
	return apitest.Send(client, method, st.EdgeURL+"/widget/api/v1/"+s.acc.OwnerToken+path, h, text)
}

// day is the date n days from today.
func day(n int) string { return apitest.Day(n) }

// stay is a checkout's body: two adults, from day from to day to.
func stay(pid, from, to int) obj {
	return obj{"property": pid, "arrival": day(from), "departure": day(to), "adults": 2, "children": 0, "lang": "en"}
}

func guestOf(last string) obj {
	return obj{"first_name": "Grace", "last_name": last, "email": "grace@example.com", "country": "US"}
}

// cardOf is a sandbox confirm's body, with a card the test gateway approves.
func cardOf() obj {
	return obj{"card": obj{"number": "4242424242424242", "name": "Grace Hopper", "exp_month": 12, "exp_year": time.Now().Year() + 3, "cvc": "123"}}
}

// checkoutJSON is the part of the public API's Checkout the test reads.
type checkoutJSON struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Payment struct {
		Amount string `json:"amount"`
	} `json:"payment"`
	Booking *struct {
		ID int64 `json:"id"`
	} `json:"booking"`
}

// answer is a public API answer decoded: its data (a Checkout) or its refusal's code.
type answer struct {
	code     int
	errCode  string
	checkout checkoutJSON
	body     string
}

func decode(r apitest.Response) answer {
	var env struct {
		Data  checkoutJSON `json:"data"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &env)
	return answer{code: r.Code, errCode: env.Error.Code, checkout: env.Data, body: string(r.Body)}
}
