// Package enginetest tests the guest booking engine (docs/booking-engine.md) as a guest meets
// it: a website on an origin of its own embeds the widget edge serves, and Debian's Chromium
// (chromedp) books through it against a whole vros (embedded servers), paying with the
// sandbox gateway's test cards (a live account through Stripe: stripe-mock, and Stripe.js
// stood for by the test). What the tests assert is what the guest sees (the widget's
// text, the redirect) and what the owner then finds through interface B (listbooking).
package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	bookingsvc "github.com/vros/vros/booking-svc/service"
	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/stripemock"
)

const adminToken = "test-admin-token-0123456789"

// viewsWithin bounds how long a test waits for an event-fed view to show a write.
const viewsWithin = time.Minute

var (
	st      *stack.Stack
	mongoDB *mongo.Client // the stack's store, for waiting on a view
)

// stripeAmount is what every PaymentIntent of stripe-mock reads back as: the live test's
// stay, 2 nights at 100.00 USD.
const stripeAmount, stripeCurrency = 20000, "usd"

func TestMain(m *testing.M) {
	// Live accounts pay through Stripe: here stripe-mock, whose intents read back succeeded.
	stripeURL, stopStripe, err := stripemock.Run("succeeded", stripemock.IntentAmount(stripeAmount, stripeCurrency))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Not apitest.Main, which exits at once: stripe-mock is stopped once the stack is closed.
	code := 0
	func() {
		defer stopStripe()
		code = run(m, stack.Options{Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(), AdminToken: adminToken,
			LogLevel: "error", PasswordCost: 4, OutboxLease: time.Second, RateLimitRPS: 1000, RateLimitBurst: 5000,
			Booking: func(c *bookingsvc.Config) { c.StripeAPIURL = stripeURL }})
	}()
	os.Exit(code)
}

// run starts the stack, runs the tests and closes the stack.
func run(m *testing.M, o stack.Options) int {
	ctx := context.Background()
	s, db, err := apitest.StartStack(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, mongoDB = s, db
	code := m.Run()
	_ = db.Disconnect(ctx)
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stack close:", err)
	}
	return code
}

// day is the date n days from today (UTC).
func day(n int) string { return apitest.Day(n) }

// owner is a sandbox account with properties (the demo property's content and rates: a
// minimum stay of 2 nights, up to 6 guests) and one brand, its website, whose origins are
// the sites allowed to book.
type owner struct {
	demo.Account
	Brand int
	PIDs  []int
	Codes []string
	Names []string
}

// newOwner makes a sandbox account, its properties and its brand with origins, and waits
// until the booking API sells every property from the first origin.
func newOwner(t *testing.T, origins []string, properties int) owner {
	t.Helper()
	return newOwnerOf(t, origins, properties, false)
}

// newOwnerOf is newOwner for a sandbox or (live) a live account, whose properties cost 100.00
// a night, any night, and take card payments through Stripe.
func newOwnerOf(t *testing.T, origins []string, properties int, live bool) owner {
	t.Helper()
	acc, err := apitest.NewAccountOf(http.DefaultClient, st.EdgeURL, adminToken, "Villas by the sea", !live)
	if err != nil {
		t.Fatal(err)
	}
	acc.EdgeURL = st.EdgeURL
	o := owner{Account: acc}
	for i := 1; i <= properties; i++ {
		code := fmt.Sprintf("E%d", i)
		name := fmt.Sprintf("Villa %d of account %s by the sea", i, acc.AccountID)
		prop := strings.Replace(strings.Replace(demo.Property, `"DEMO1"`, `"`+code+`"`, 1), "Seaside Villa with Garden", name, 1)
		var created struct {
			Data struct {
				PropertyID string `json:"property_id"`
			} `json:"data"`
		}
		o.a(t, "property", `{"action":"create","property":`+prop+`}`, &created)
		pid, _ := strconv.Atoi(created.Data.PropertyID)
		rates := strings.Replace(demo.Rates, `"DEMO1"`, `"`+code+`"`, 1)
		if live {
			o.a(t, "property-method", apitest.JSON(map[string]any{"internal_code": code,
				"stripe": map[string]string{"secret_key": "sk_test_enginewidget" + code, "public_key": "pk_test_enginewidget" + code}}), nil)
			rates = apitest.JSON(map[string]any{"internal_code": code, "rate": map[string]any{"daily_price": 100, "minimum_stay": 1},
				"setting": map[string]any{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}})
		}
		o.a(t, "property-rate", rates, nil)
		o.PIDs, o.Names, o.Codes = append(o.PIDs, pid), append(o.Names, name), append(o.Codes, code)
	}
	var brand struct {
		Data struct {
			BrandID string `json:"brand_id"`
		} `json:"data"`
	}
	o.a(t, "account-brand", apitest.JSON(map[string]any{"action": "create",
		"brand": map[string]any{"name": "Villas by the sea", "origins": origins, "properties": o.Codes}}), &brand)
	o.Brand, _ = strconv.Atoi(brand.Data.BrandID)
	o.waitSelling(t, origins[0])
	return o
}

// a sends an interface A request and decodes its answer into out (nil: only checked).
func (o owner) a(t *testing.T, resource, body string, out any) {
	t.Helper()
	if err := apitest.PostA(http.DefaultClient, o.Account, resource, body, out); err != nil {
		t.Fatal(err)
	}
}

// engine calls the public booking API as a page of origin does, with more headers as pairs.
func (o owner) engine(t *testing.T, method, path, origin string, body any, headers ...string) apitest.Response {
	t.Helper()
	payload := ""
	if body != nil {
		payload = apitest.JSON(body)
	}
	h := map[string]string{"Origin": origin}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	r, err := apitest.Send(http.DefaultClient, method, st.EdgeURL+"/widget/api/v1/"+o.OwnerToken+path, h, payload)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// waitSelling waits until the booking API, asked from origin, lists every property, shows a
// priced calendar for it and quotes a stay (the brand's origins, the catalog and
// booking-svc's view are fed by events).
func (o owner) waitSelling(t *testing.T, origin string) {
	t.Helper()
	deadline := time.Now().Add(viewsWithin)
	wait := func(what string, ok func() (bool, string)) {
		for {
			done, got := ok()
			if done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the booking API never %s: %s", what, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("listed the properties", func() (bool, string) {
		r := o.engine(t, http.MethodGet, "/site", origin, nil)
		var s struct {
			Data struct {
				Properties []struct {
					ID json.Number `json:"id"`
				} `json:"properties"`
			} `json:"data"`
		}
		if r.Code != http.StatusOK || json.Unmarshal(r.Body, &s) != nil {
			return false, fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
		}
		for _, pid := range o.PIDs {
			if !slices.ContainsFunc(s.Data.Properties, func(p struct {
				ID json.Number `json:"id"`
			}) bool {
				return p.ID.String() == strconv.Itoa(pid)
			}) {
				return false, string(r.Body)
			}
		}
		return true, ""
	})
	for _, pid := range o.PIDs {
		wait("priced the calendar", func() (bool, string) {
			r := o.engine(t, http.MethodGet, fmt.Sprintf("/calendar?property=%d&from=%s&months=2", pid, day(0)[:8]+"01"), origin, nil)
			var c struct {
				Data struct {
					Days []struct {
						Date      string  `json:"date"`
						Available bool    `json:"available"`
						Price     *string `json:"price"`
					} `json:"days"`
				} `json:"data"`
			}
			if r.Code != http.StatusOK || json.Unmarshal(r.Body, &c) != nil {
				return false, fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
			}
			for _, d := range c.Data.Days {
				if d.Date == day(10) {
					return d.Available && d.Price != nil, string(r.Body)
				}
			}
			return false, string(r.Body)
		})
		wait("quoted a stay", func() (bool, string) {
			r := o.engine(t, http.MethodPost, "/quote", origin, map[string]any{"property": pid, "arrival": day(60), "departure": day(62), "adults": 2, "children": 0, "lang": "en"})
			return r.Code == http.StatusOK, fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
		})
	}
}

// booking is what the tests read of interface B's listbooking.
type booking struct {
	BookingID  int64       `json:"bookingId"`
	Status     string      `json:"status"`
	PropertyID int64       `json:"propertyId"`
	Checkin    string      `json:"checkin"`
	Checkout   string      `json:"checkout"`
	Adults     int         `json:"numberofadults"`
	Children   int         `json:"numberofchildren"`
	LeadSource int64       `json:"leadsourceId"`
	BrandID    int64       `json:"brandId"`
	FirstName  string      `json:"firstName"`
	LastName   string      `json:"lastName"`
	Email      string      `json:"email"`
	Country    string      `json:"country"`
	GrandTotal json.Number `json:"grandTotal"`
	AmountPaid json.Number `json:"amountPaid"`
	Payments   []struct {
		Amount json.Number `json:"amount"`
		Method string      `json:"method"`
	} `json:"payments"`
}

// bookings is the account's bookings, as interface B's listbooking answers them.
func (o owner) bookings(t *testing.T) []booking {
	t.Helper()
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, o.BBody("listbooking", map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Status int `json:"status"`
		Data   struct {
			List []booking `json:"listBooking"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &a); err != nil || a.Status != 0 {
		t.Fatalf("listbooking: %v %s", err, r.Body)
	}
	for i := range a.Data.List { // "2026-12-09 15:00:00": the day is what the guest chose
		b := &a.Data.List[i]
		b.Checkin, b.Checkout = b.Checkin[:min(10, len(b.Checkin))], b.Checkout[:min(10, len(b.Checkout))]
	}
	return a.Data.List
}

// bookingPage is a page of a site embedding the widget by its data- attributes.
func (o owner) bookingPage(pid int, extra string) string {
	return page("en", fmt.Sprintf(`<h2>Book your stay</h2><div id="booking">
<script src="%s/widget/vros-booking.js" data-key="%s" data-property="%d" data-redirect="/thanks" %s></script></div>`,
		st.EdgeURL, o.OwnerToken, pid, extra))
}
