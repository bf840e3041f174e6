package crash

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// The booking engine's checkouts (docs/booking-engine.md, docs/booking.md "Checkouts") when
// a guest walks away and when booking-svc dies in the middle of one. The checkout window is
// booking-svc's default, 15 minutes, measured by its clock: the tests move the clock past it
// (clock.advance) instead of waiting.

// window is booking-svc's checkout window (VROS_BOOKING_CHECKOUT_WINDOW's default).
const window = 15 * time.Minute

// site is an account's website on the public booking API: its origin and brand.
type site struct {
	acc    account
	origin string
	brand  int
	pid    int
}

// newSite makes a brand of acc allowed from origin selling a new property, and waits until
// the booking API quotes it (catalog-svc and booking-svc know the brand).
func newSite(t *testing.T, acc account, origin, code string) site {
	t.Helper()
	s := site{acc: acc, origin: origin, pid: bookable(t, acc, code)}
	r := acc.a(t, "account-brand", obj{"action": "create", "brand": obj{"name": "Villas " + code, "origins": []string{origin},
		"properties": []string{code}}})
	var out struct {
		Data struct {
			BrandID string `json:"brand_id"`
		} `json:"data"`
	}
	r.decode(t, &out)
	var err error
	if s.brand, err = strconv.Atoi(out.Data.BrandID); r.Code != http.StatusOK || err != nil {
		t.Fatalf("brand: HTTP %d %s", r.Code, r.Body)
	}
	eventually.Holds(t, "the booking API quotes the brand's property", 30*time.Second, func() bool {
		return s.call(t, http.MethodPost, "/quote", nil, stay(s.pid, 300, 301)).Code == http.StatusOK
	})
	return s
}

// call sends a public API request through edge, as the site's pages do.
func (s site) call(t *testing.T, method, path string, headers map[string]string, body any) response {
	t.Helper()
	h := map[string]string{"Origin": s.origin}
	for k, v := range headers {
		h[k] = v
	}
	text := ""
	if body != nil {
		text = apitest.JSON(body)
	}
	return do(t, method, st.EdgeURL+"/widget/api/v1/"+s.acc.OwnerToken+path, h, text)
}

// direct sends a booking engine route straight to booking-svc, signed as edge signs it for
// a sandbox account, with the brand edge would add: the requests this test stops go this
// way, so that no edge request waits on a handler that "died".
func (s site) direct(c *http.Client, route, key string, fields obj) (response, error) {
	path := "/internal/engine/" + route
	fields["brand_id"] = s.brand
	body := apitest.JSON(fields)
	h := map[string]string{}
	tenancy.NewSigner(tenancy.CallerEdge, keys.Edge.Reveal()).SetHeaders(func(k, v string) { h[k] = v },
		tenancy.Tenant{AccountID: s.acc.AccountID, Sandbox: true}, http.MethodPost, path, []byte(body), time.Now())
	if key != "" {
		h["Idempotency-Key"] = key
	}
	r, err := apitest.Send(c, http.MethodPost, st.BookingURL+path, h, body)
	return response(r), err
}

func stay(pid, from, to int) obj {
	return obj{"property": pid, "arrival": day(from), "departure": day(to), "adults": 2}
}

func guestOf(last string) obj {
	return obj{"first_name": "Grace", "last_name": last, "email": "grace@example.com", "country": "US"}
}

func cardOf() obj {
	return obj{"card": obj{"number": "4242424242424242", "name": "Grace Hopper", "exp_month": 12, "exp_year": time.Now().Year() + 3, "cvc": "123"}}
}

func newKey() map[string]string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return map[string]string{"Idempotency-Key": hex.EncodeToString(b[:])}
}

// checkoutJSON is the part of the public API's Checkout the tests read.
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

// checkout decodes a checkout answer of status want.
func (r response) checkout(t *testing.T, want int) checkoutJSON {
	t.Helper()
	var env struct {
		Data  checkoutJSON `json:"data"`
		Error struct{ Code string }
	}
	r.decode(t, &env)
	if r.Code != want {
		t.Fatalf("HTTP %d, want %d: %s", r.Code, want, r.Body)
	}
	return env.Data
}

// code is a refusal's code ("" for a success).
func (r response) code() string {
	var env struct {
		Error struct{ Code string }
	}
	_ = json.Unmarshal(r.Body, &env)
	return env.Error.Code
}

// checkoutBooking is the booking id of checkout id (booking-svc's checkouts record).
func checkoutBooking(t *testing.T, id string) int64 {
	t.Helper()
	var doc struct {
		BookingID int64 `bson:"booking_id"`
	}
	if err := mongoDB.Database("vros_booking").Collection("checkouts").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatalf("checkout %s: %v", id, err)
	}
	return doc.BookingID
}

// TestCheckoutAbandoned: a guest holds a stay and walks away. While the window runs another
// guest is told the nights are taken; once the window is over (booking-svc's clock moved on
// 15 minutes) the checkout reads expired at once, the janitor frees its nights within a pass
// and another guest's checkout of them holds, and the first guest's confirm is
// checkout_expired, charging nothing and booking nothing.
func TestCheckoutAbandoned(t *testing.T) {
	acc := newAccount(t)
	s := newSite(t, acc, "https://abandoned.example", "COAB")
	first := s.call(t, http.MethodPost, "/checkouts", newKey(), stay(s.pid, 20, 23)).checkout(t, http.StatusCreated)
	s.call(t, http.MethodPost, "/checkouts/"+first.ID+"/guest", nil, guestOf("Walkaway")).checkout(t, http.StatusOK)
	if c := s.call(t, http.MethodPost, "/checkouts", newKey(), stay(s.pid, 22, 24)).code(); c != "dates_taken" {
		t.Fatalf("a second guest while the first holds the nights: %q, want dates_taken", c)
	}
	owner := "booking:" + strconv.FormatInt(checkoutBooking(t, first.ID), 10)
	if held := nights(t, acc, s.pid, 20, 3); len(held) != 3 || held[day(20)] != owner || held[day(22)] != owner {
		t.Fatalf("nights %v, want the checkout's %s", held, owner)
	}

	clock.Advance(t, window+time.Minute)
	if got := s.call(t, http.MethodGet, "/checkouts/"+first.ID, nil, nil).checkout(t, http.StatusOK); got.Status != "expired" {
		t.Fatalf("after the window: %+v, want expired", got)
	}
	var second checkoutJSON
	eventually.Holds(t, "another guest's checkout of the nights holds after the window", janitorLease+10*time.Second, func() bool {
		r := s.call(t, http.MethodPost, "/checkouts", newKey(), stay(s.pid, 20, 23))
		if r.Code == http.StatusConflict && r.code() == "dates_taken" {
			return false
		}
		second = r.checkout(t, http.StatusCreated)
		return true
	})
	if r := s.call(t, http.MethodPost, "/checkouts/"+first.ID+"/confirm", nil, cardOf()); r.Code != http.StatusConflict || r.code() != "checkout_expired" {
		t.Fatalf("the first guest's confirm after the window: HTTP %d %s, want checkout_expired", r.Code, r.Body)
	}
	newOwner := "booking:" + strconv.FormatInt(checkoutBooking(t, second.ID), 10)
	if held := nights(t, acc, s.pid, 20, 3); len(held) != 3 || held[day(20)] != newOwner || held[day(22)] != newOwner {
		t.Fatalf("nights %v, want the second checkout's %s", held, newOwner)
	}
	var list struct {
		Total int `json:"totalRecords"`
	}
	acc.b(t, "listbooking", obj{"propertyId": s.pid}).ok(t, &list)
	if list.Total != 0 {
		t.Fatalf("%d bookings listed, want none (one checkout expired, one held)", list.Total)
	}
	if b := bookingsOf(t, acc)[checkoutBooking(t, first.ID)]; b["status"] != "failed" || len(asM(b["payments"])) > 0 {
		t.Fatalf("the expired checkout's booking: status %v, payments %v", b["status"], b["payments"])
	}
}

// TestCheckoutKillAndRestart: booking-svc dies (killed, then started again on the same stores) while
// a checkout is being created, at each step of the create, and while checkouts are being
// confirmed, at each step of the confirm. Then: each stopped confirm, retried by the guest
// (the same checkout), books once with one payment of due now; a checkout stopped once it
// was held still holds its nights until its window ends; after the window (booking-svc's
// clock moved on) the janitor has freed every night the stopped creates took — a new
// checkout of each stay holds — no ledger change is left, and nothing of the stopped
// creates is listed or published: the account lists the confirmed bookings alone, and
// catalog-svc's reservations are exactly those.
func TestCheckoutKillAndRestart(t *testing.T) {
	ctx := context.Background()
	acc := newAccount(t)
	s := newSite(t, acc, "https://crashing.example", "COCR")
	comp := acc.AccountID + "_" + strconv.Itoa(s.pid)

	stop := func(step string, send func() (response, error)) {
		t.Helper()
		faults.Arm(acc.AccountID, step)
		answered := make(chan string, 1)
		go func() {
			res, err := send() // never answered: the handler is stopped, then "dies"
			answered <- fmt.Sprintf("HTTP %d %s (%v)", res.Code, res.Body, err)
		}()
		select {
		case got := <-faults.Frozen:
			if got != step {
				t.Fatalf("stopped at %s, armed %s", got, step)
			}
		case a := <-answered:
			t.Fatalf("%s was never reached: %s", step, a)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was never reached", step)
		}
	}
	slow := &http.Client{Timeout: 30 * time.Second}

	// Creates stopped at each step, each on its own stay.
	createSteps := []string{"op", "pending", "recorded", "claimed", "held"}
	type stayAt struct{ from, to int }
	creates := map[string]stayAt{}
	for k, step := range createSteps {
		at := stayAt{20 + 3*k, 22 + 3*k}
		creates[step] = at
		stop("checkout:"+step, func() (response, error) {
			return s.direct(slow, "checkout/create", "crash-checkout-"+step, stay(s.pid, at.from, at.to))
		})
	}
	// Confirms stopped at each step, each of its own checkout.
	confirmSteps := []string{"op", "charged", "intent", "written", "reserved"}
	confirms := map[string]checkoutJSON{}
	for k, step := range confirmSteps {
		co := s.call(t, http.MethodPost, "/checkouts", newKey(), stay(s.pid, 60+3*k, 62+3*k)).checkout(t, http.StatusCreated)
		s.call(t, http.MethodPost, "/checkouts/"+co.ID+"/guest", nil, guestOf("Confirm-"+step)).checkout(t, http.StatusOK)
		confirms[step] = co
		stop("confirm:"+step, func() (response, error) {
			body := cardOf()
			body["checkout_id"] = co.ID
			return s.direct(slow, "checkout/confirm", "", body)
		})
	}

	faults.Kill()
	st.StopBooking()
	if err := st.StartBooking(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()

	// The guest retries each stopped confirm: booked once, one payment of due now.
	booked := map[int64]bool{}
	for _, step := range confirmSteps {
		co := confirms[step]
		var done checkoutJSON
		eventually.Holds(t, "the retried confirm stopped at "+step+" books", janitorLease+10*time.Second, func() bool {
			r := s.call(t, http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, cardOf())
			if r.Code == http.StatusServiceUnavailable { // the dead confirm's op, until the janitor ends it
				return false
			}
			done = r.checkout(t, http.StatusOK)
			return true
		})
		if done.Status != "booked" || done.Booking == nil {
			t.Fatalf("confirm stopped at %s, retried: %+v", step, done)
		}
		again := s.call(t, http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, cardOf()).checkout(t, http.StatusOK)
		if again.Booking == nil || again.Booking.ID != done.Booking.ID {
			t.Fatalf("confirm stopped at %s, retried twice: %+v, want booking %d", step, again, done.Booking.ID)
		}
		var list struct {
			List []struct {
				Payments []struct {
					Amount decimal.Decimal `json:"amount"`
				} `json:"payments"`
			} `json:"listBooking"`
		}
		acc.b(t, "listbooking", obj{"bookingId": done.Booking.ID}).ok(t, &list)
		if len(list.List) != 1 || len(list.List[0].Payments) != 1 || !list.List[0].Payments[0].Amount.Equal(decimal.RequireFromString(co.Payment.Amount)) {
			t.Fatalf("confirm stopped at %s: booking %d %+v, want one payment of %s", step, done.Booking.ID, list.List, co.Payment.Amount)
		}
		booked[done.Booking.ID] = true
	}
	t.Logf("%d confirms stopped at every step booked once each after the restart (%v)", len(confirmSteps), time.Since(restarted).Round(time.Millisecond))

	// The checkout stopped once held keeps its nights while its window runs.
	held := creates["held"]
	if c := s.call(t, http.MethodPost, "/checkouts", newKey(), stay(s.pid, held.from, held.to)).code(); c != "dates_taken" {
		t.Fatalf("the nights of the checkout stopped once held, within its window: %q, want dates_taken", c)
	}

	// After the window no stopped create holds a night: a new checkout of each stay holds.
	clock.Advance(t, window+time.Minute)
	for _, step := range createSteps {
		at := creates[step]
		eventually.Holds(t, "a new checkout of the stay of the create stopped at "+step, janitorLease+10*time.Second, func() bool {
			r := s.call(t, http.MethodPost, "/checkouts", newKey(), stay(s.pid, at.from, at.to))
			if r.Code == http.StatusConflict && r.code() == "dates_taken" {
				return false
			}
			co := r.checkout(t, http.StatusCreated)
			owner := "booking:" + strconv.FormatInt(checkoutBooking(t, co.ID), 10)
			for d, o := range nights(t, acc, s.pid, at.from, at.to-at.from) {
				if o != owner {
					t.Fatalf("night %s of the new checkout held by %s, want %s", d, o, owner)
				}
			}
			return true
		})
	}
	eventually.Holds(t, "no unfinished ledger change", janitorLease+10*time.Second, func() bool {
		n, err := mongoDB.Database("vros_booking").Collection("ledger_ops").CountDocuments(ctx, bson.D{{Key: "account_id", Value: acc.AccountID}})
		return err == nil && n == 0
	})
	t.Logf("creates stopped at every step freed their nights %v after the restart", time.Since(restarted).Round(time.Millisecond))

	// Nothing of the stopped creates listed or published; none is left pending or held.
	var list struct {
		Total int `json:"totalRecords"`
		List  []struct {
			BookingID int64 `json:"bookingId"`
		} `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"limit": 100}).ok(t, &list)
	if list.Total != len(booked) {
		t.Errorf("%d bookings listed, want the %d confirmed: %+v", list.Total, len(booked), list.List)
	}
	for _, b := range list.List {
		if !booked[b.BookingID] {
			t.Errorf("booking %d listed, not a confirmed checkout", b.BookingID)
		}
	}
	statuses := map[string]int{}
	for _, b := range bookingsOf(t, acc) {
		statuses[b["status"].(string)]++
	}
	if statuses["pending"] != 0 || statuses["held"] != len(createSteps) || statuses["reserved"] != len(confirmSteps) {
		t.Errorf("bookings by status %v, want %d reserved (the confirms), %d held (the new checkouts), none pending, the rest failed",
			statuses, len(confirmSteps), len(createSteps))
	}
	var last map[int64][3]string
	eventually.Holds(t, "catalog-svc's reservations are the confirmed bookings", 15*time.Second, func() bool {
		last = reservations(t, acc, comp)
		ids := make([]int64, 0, len(last))
		for id := range last {
			ids = append(ids, id)
		}
		want := make([]int64, 0, len(booked))
		for id := range booked {
			want = append(want, id)
		}
		slices.Sort(ids)
		slices.Sort(want)
		return slices.Equal(ids, want)
	})
	for id, r := range last {
		if r[2] != "reserved" {
			t.Errorf("reservation %d: %v", id, r)
		}
	}
}

// asM is v as a document (nil when it is none).
func asM(v any) bson.M {
	m, _ := v.(bson.M)
	return m
}
