// Package crash stops booking changes part way, as if booking-svc died there, restarts
// booking-svc against the same stores and checks what survives: no acknowledged booking
// lost, no night held by nobody, every Idempotency-Key resolved within its lease, events of
// everyone else still flowing. It has its own stack, because it stops and restarts
// booking-svc, with the booking timings shortened so that all of it takes seconds.
package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// The booking timings of this stack: a change stops before it commits after deadline; a
// stopped change is repaired by the janitor after janitorLease, and its Idempotency-Key is
// taken over by a retry after idempotencyLease.
const (
	deadline         = time.Second
	janitorLease     = 3 * time.Second
	idempotencyLease = 2 * time.Second
	adminToken       = "crash-admin-token-0123456789"
)

var (
	st      *stack.Stack
	mongoDB *mongo.Client
	faults  = apitest.NewCrasher()
	// clock is booking-svc's clock (booking.Config.Clock): checkout_test.go moves it past a
	// checkout's window instead of waiting for it.
	clock apitest.Clock
	// keys sign the requests between the processes; direct signs as edge with Edge.
	keys = stack.NewKeys()
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	var err error
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Keys: keys, EncryptionKey: seal.NewKey(), AdminToken: adminToken,
		LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4,
		Booking: func(c *booking.Config) {
			c.RequestDeadline, c.JanitorLease, c.IdempotencyLease = deadline, janitorLease, idempotencyLease
			c.Crash = faults.Hook
			c.Clock = clock.Now
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = mongoDB.Disconnect(ctx)
	if err := st.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stack close:", err)
	}
	os.Exit(code)
}

// account is a tenant created through the admin API.
type account struct{ demo.Account }

func newAccount(t *testing.T) account {
	t.Helper()
	a, err := apitest.NewAccount(client, st.EdgeURL, adminToken, "Crash Owner")
	if err != nil {
		t.Fatal(err)
	}
	return account{a}
}

type obj = map[string]any

// response is an HTTP answer, with the assertions the test makes on it.
type response apitest.Response

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// bAnswer is interface B's envelope.
type bAnswer struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// ok asserts interface B success and decodes data into v.
func (r response) ok(t *testing.T, v any) {
	t.Helper()
	var a bAnswer
	r.decode(t, &a)
	if r.Code != http.StatusOK || a.Status != 0 {
		t.Fatalf("HTTP %d: %s", r.Code, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(a.Data, v); err != nil {
			t.Fatalf("data %s: %v", a.Data, err)
		}
	}
}

var client = &http.Client{Timeout: 20 * time.Second}

func do(t *testing.T, method, url string, headers map[string]string, body string) response {
	t.Helper()
	r, err := apitest.Send(client, method, url, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	return response(r)
}

// a sends an interface A request through edge.
func (acc account) a(t *testing.T, resource string, body any) response {
	t.Helper()
	return do(t, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), apitest.JSON(body))
}

// b sends an interface B action through edge.
func (acc account) b(t *testing.T, action string, fields obj) response {
	t.Helper()
	return do(t, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, acc.BBody(action, fields))
}

// direct sends an interface B action straight to booking-svc, signed as edge signs it, with
// an Idempotency-Key (none when key is empty). The requests this test stops go this way, so that no edge request
// waits on a connection whose handler "died"; their retries go the same way, with the same
// body.
func (acc account) direct(c *http.Client, action, key, body string) (response, error) {
	path := "/internal/b/" + action
	h := map[string]string{}
	tenancy.NewSigner(tenancy.CallerEdge, keys.Edge.Reveal()).SetHeaders(func(k, v string) { h[k] = v },
		tenancy.Tenant{AccountID: acc.AccountID}, http.MethodPost, path, []byte(body), time.Now())
	if key != "" {
		h["Idempotency-Key"] = key
	}
	r, err := apitest.Send(c, http.MethodPost, st.BookingURL+path, h, body)
	return response(r), err
}

var day = apitest.Day

// bookable creates a property priced 100 a night, any day in and out, and waits until
// booking-svc prices it.
func bookable(t *testing.T, acc account, code string) int {
	t.Helper()
	r := acc.a(t, "property", obj{"action": "create", "property": obj{
		"internal_code": code, "name": "Crash Test Villa by the Sea", "type": "Villa", "brief": strings.Repeat("Quiet. ", 60),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": obj{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false,
	}})
	var out struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	r.decode(t, &out)
	pid, err := strconv.Atoi(out.Data.PropertyID)
	if r.Code != http.StatusOK || err != nil {
		t.Fatalf("create property: HTTP %d %s", r.Code, r.Body)
	}
	if r := acc.a(t, "property-rate", obj{"internal_code": code, "rate": obj{"daily_price": 100, "minimum_stay": 1},
		"setting": obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}); r.Code != http.StatusOK {
		t.Fatalf("rates: HTTP %d %s", r.Code, r.Body)
	}
	var prop bson.M
	id := acc.AccountID + ":" + strconv.Itoa(pid)
	if err := mongoDB.Database("vros_property").Collection("properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&prop); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "booking-svc prices property "+id, 15*time.Second, func() bool {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		return err == nil && doc["version"] == prop["version"]
	})
	return pid
}

// guest is a valid create body; last is the guest's last name, unique per request so that
// listbooking's keyword finds every booking a request made.
func guest(pid int, checkin, checkout, last string) obj {
	return obj{"propertyId": pid, "firstName": "Grace", "lastName": last, "email": "grace@example.com",
		"numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout,
		"creditCard": obj{"CCNumber": "4242424242424242", "NameOnCard": "GRACE HOPPER", "Expiration": "12/2035", "CVC": "123"}}
}

// bookingData is the part of a booking answer the test reads.
type bookingData struct {
	BookingID int64  `json:"bookingId"`
	Status    string `json:"status"`
	Checkin   string `json:"checkin"`
	Checkout  string `json:"checkout"`
}

// nights returns who holds each night of a property from day(from) for n days.
func nights(t *testing.T, acc account, pid, from, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := 0; i < n; i++ {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("nights").FindOne(context.Background(),
			bson.D{{Key: "_id", Value: fmt.Sprintf("%s:%d:%s", acc.AccountID, pid, day(from+i))}}).Decode(&doc)
		if err == nil {
			out[day(from+i)], _ = doc["owner"].(string)
		}
	}
	return out
}

// bookingsOf reads every booking document of an account straight from MongoDB.
func bookingsOf(t *testing.T, acc account) map[int64]bson.M {
	t.Helper()
	cur, err := mongoDB.Database("vros_booking").Collection("bookings").Find(context.Background(), bson.D{{Key: "account_id", Value: acc.AccountID}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	out := map[int64]bson.M{}
	for _, d := range docs {
		id, _ := d["booking_id"].(int64)
		out[id] = d
	}
	return out
}

// post is a JSON body as bytes, for comparisons in failure messages.
func post(b []byte) string { return string(bytes.TrimSpace(b)) }
