package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/systest/apitest"
)

// bookedAt waits until the tab is redirected to the site's page path with ?booking=<id>, and
// answers the id.
func (p *tab) bookedAt(s *site, path string) int64 {
	p.t.Helper()
	want := s.URL + path + "?booking="
	p.until(fmt.Sprintf("location.href.startsWith(%s)", js(want)), "the redirect to "+want, `location.href + " " + `+widgetText)
	u, err := url.Parse(p.location())
	if err != nil {
		p.t.Fatal(err)
	}
	id, err := strconv.ParseInt(u.Query().Get("booking"), 10, 64)
	if err != nil || id <= 0 {
		p.t.Fatalf("redirected to %s: no booking id", u)
	}
	p.expect("#thanks", "Thank you")
	return id
}

// only is the one booking of the list, or a failure.
func only(t *testing.T, list []booking) booking {
	t.Helper()
	if len(list) != 1 {
		t.Fatalf("listbooking has %d bookings, want 1: %+v", len(list), list)
	}
	return list[0]
}

// TestBookOnTheWebsite is the browser test: a page on another origin, allowed by the
// brand, embeds the widget by its data- attributes; a guest picks a stay on the calendar
// (the departure with the keyboard), chooses guests, books, is told of a mistyped email at
// its field, has a card declined at the card number, pays with the test card and is
// redirected to the site's confirmation page with the booking's id. The owner then finds
// the booking in listbooking, sold by the brand with the lead source Website (1), paid once.
func TestBookOnTheWebsite(t *testing.T) {
	s := newSite(t)
	o := newOwner(t, []string{s.URL}, 1)
	s.page("/book", o.bookingPage(o.PIDs[0], ""))
	p := newTab(t)
	p.open(s.URL + "/book")
	p.expect(".vros-be-title", o.Names[0])

	arrival, departure := day(10), day(13)
	p.set(`.vros-be-guests [name="adults"]`, "3")
	p.set(`.vros-be-guests [name="children"]`, "1")
	p.showMonth(arrival)
	p.click(dayButton(arrival))
	p.expect(".vros-be-hint", "Minimum stay: 2 nights")
	if f := p.focused(); f != arrival {
		t.Fatalf("focus after pressing the arrival: %q, want the day %s", f, arrival)
	}
	// The departure with the keyboard: three days on, Enter.
	p.showMonth(departure)
	p.eval(fmt.Sprintf(`document.querySelector('.vros-be-calendar button[data-date=%q]') ? document.querySelector('.vros-be-calendar button[data-date=%q]').focus() : null`, arrival, arrival))
	p.key(kb.ArrowRight, kb.ArrowRight, kb.ArrowRight)
	if f := p.focused(); f != departure {
		t.Fatalf("focus after three arrows right: %q, want %s", f, departure)
	}
	p.key(kb.Enter)
	p.waitQuote()
	p.expect(".vros-be-hint", "3 nights")
	if label := p.eval(fmt.Sprintf(`document.querySelector('button[data-date=%q]').getAttribute("aria-label")`, departure)); !strings.Contains(label, "your departure") {
		t.Fatalf("the departure's label: %q", label)
	}
	p.expect(".vros-be-quote .vros-be-total", "Total")

	p.click(".vros-be-book")
	p.expect(".vros-be-hold", "held for you")
	// A mistyped email: the error is at the field, tied to it, and the focus moves there.
	p.guest("Ada", "Lovelace", "ada@example", "GB")
	p.expect(".vros-be-field-email .vros-be-error", "valid email")
	if f := p.focused(); f != "email" {
		t.Fatalf("focus after a refused form: %q, want the email field", f)
	}
	if tied := p.eval(`(() => { const i = document.querySelector('[name="email"]'); const e = document.querySelector(".vros-be-field-email .vros-be-error");
		return String(i.getAttribute("aria-invalid") === "true" && i.getAttribute("aria-describedby").split(" ").includes(e.id)) })()`); tied != "true" {
		t.Fatal("the email's error is not tied to the field (aria-invalid, aria-describedby)")
	}
	p.set(`[name="email"]`, "ada@example.com")
	p.click(".vros-be-continue")

	// A declined card: the gateway's refusal at the card number (the API's error.field).
	p.card("4000000000000002")
	p.click(".vros-be-paybutton")
	p.expect(".vros-be-field-card-number .vros-be-error", "declined")
	if f := p.focused(); f != "card.number" {
		t.Fatalf("focus after a declined card: %q, want the card number", f)
	}
	p.set(`[name="card.number"]`, "4242 4242 4242 4242")
	p.click(".vros-be-paybutton")
	id := p.bookedAt(s, "/thanks")

	b := only(t, o.bookings(t))
	if b.BookingID != id || b.PropertyID != int64(o.PIDs[0]) || b.Checkin != arrival || b.Checkout != departure ||
		b.Adults != 3 || b.Children != 1 || b.FirstName != "Ada" || b.LastName != "Lovelace" || b.Email != "ada@example.com" {
		t.Fatalf("the booking: %+v, want %d of property %d, %s to %s, 3 adults and 1 child, Ada Lovelace", b, id, o.PIDs[0], arrival, departure)
	}
	if b.LeadSource != 1 || b.BrandID != int64(o.Brand) {
		t.Fatalf("the booking's lead source %d and brand %d, want Website (1) and %d", b.LeadSource, b.BrandID, o.Brand)
	}
	if len(b.Payments) != 1 || b.Payments[0].Method != "card" {
		t.Fatalf("the booking's payments: %+v, want one card charge", b.Payments)
	}
}

// TestRefusedWebsite: the same page on an origin no brand lists is refused — the guest is
// told booking is not available here — and nothing is booked; the API refuses that origin
// without a CORS header.
func TestRefusedWebsite(t *testing.T) {
	allowed, other := newSite(t), newSite(t)
	o := newOwner(t, []string{allowed.URL}, 1)
	other.page("/book", o.bookingPage(o.PIDs[0], ""))
	p := newTab(t)
	p.open(other.URL + "/book")
	p.expect(".vros-be-alert", "Online booking is not available on this website")
	if n := p.eval(`String(document.querySelectorAll(".vros-be-calendar, .vros-be-book").length)`); n != "0" {
		t.Fatalf("a refused site shows %s calendars or Book buttons", n)
	}
	r := o.engine(t, http.MethodGet, "/site", other.URL, nil)
	if r.Code != http.StatusForbidden || !strings.Contains(string(r.Body), "origin_not_allowed") || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("the API for a refused origin: HTTP %d %s, Access-Control-Allow-Origin %q", r.Code, r.Body, r.Header.Get("Access-Control-Allow-Origin"))
	}
	if list := o.bookings(t); len(list) != 0 {
		t.Fatalf("a refused site booked: %+v", list)
	}
}

// TestRaceForTheSameNights: two guests in two browsers press Book for the same nights at
// once. One holds them and books; the other is told the nights were just taken and is back
// on the calendar with the dates cleared; choosing them again is refused the same way.
func TestRaceForTheSameNights(t *testing.T) {
	s := newSite(t)
	o := newOwner(t, []string{s.URL}, 1)
	s.page("/book", o.bookingPage(o.PIDs[0], ""))
	arrival, departure := day(6), day(9)
	guests := []*tab{newTab(t), newTab(t)}
	for _, p := range guests {
		p.open(s.URL + "/book")
		p.pickStay(arrival, departure)
	}
	var wg sync.WaitGroup
	for _, p := range guests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Not p.click: a goroutine must not end the test; a failure shows below.
			ctx, cancel := context.WithTimeout(p.ctx, stepWithin)
			defer cancel()
			_ = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".vros-be-book")))
		}()
	}
	wg.Wait()
	const outcome = `document.querySelector('.vros-be-form [name="first_name"]') ? "held" :
		(document.querySelector(".vros-be-alert") && document.querySelector(".vros-be-alert").textContent.includes("just taken")) ? "taken" : ""`
	var winner, loser *tab
	for _, p := range guests {
		p.until(outcome, "the guest form or the just-taken message", widgetText)
		switch p.eval(outcome) {
		case "held":
			if winner != nil {
				t.Fatal("both guests hold the same nights")
			}
			winner = p
		case "taken":
			loser = p
		}
	}
	if winner == nil || loser == nil {
		t.Fatalf("winner %v, loser %v: want one of each", winner != nil, loser != nil)
	}
	loser.expect(".vros-be-alert", "Sorry, those nights were just taken. Please choose other dates.")
	if d := loser.eval(`String(document.querySelectorAll(".vros-be-day.is-start, .vros-be-day.is-end").length)`); d != "0" {
		t.Fatalf("the loser's calendar still shows %s chosen days", d)
	}
	// The same nights again: the quote is refused as the checkout was, and the guest told so.
	loser.eval(`document.querySelector(".vros-be-alert").remove()`)
	loser.showMonth(arrival)
	loser.click(dayButton(arrival))
	loser.showMonth(departure)
	loser.click(dayButton(departure))
	loser.expect(".vros-be-alert", "those nights were just taken")

	winner.guest("Grace", "Hopper", "grace@example.com", "US")
	winner.card("4242424242424242")
	winner.click(".vros-be-paybutton")
	id := winner.bookedAt(s, "/thanks")
	if b := only(t, o.bookings(t)); b.BookingID != id || b.Checkin != arrival || b.Checkout != departure {
		t.Fatalf("the booking: %+v, want %d for %s to %s", b, id, arrival, departure)
	}
}

// TestDoublePayBooksOnce: a double click on Pay sends one confirm; that confirm books, but
// its answer is lost on the way back (the browser's connection is cut after the server
// answered). The guest, told the service could not be reached, presses Pay again: the same
// checkout is confirmed again and answers the same booking. One booking, charged once.
func TestDoublePayBooksOnce(t *testing.T) {
	s := newSite(t)
	o := newOwner(t, []string{s.URL}, 1)
	s.page("/book", o.bookingPage(o.PIDs[0], ""))
	p := newTab(t)
	p.open(s.URL + "/book")
	p.pickStay(day(15), day(18))
	p.click(".vros-be-book")
	p.guest("Alan", "Turing", "alan@example.com", "GB")
	p.card("5555555555554444")

	// Cut the first confirm's answer: at the response stage, after the server answered.
	var confirms atomic.Int32
	ictx, stop := context.WithCancel(p.ctx)
	defer stop()
	paused := chromedp.Events(ictx, fetch.RequestPaused)
	go func() {
		for e, err := range paused {
			if err != nil {
				return
			}
			if e.Request.Method == http.MethodPost && strings.HasSuffix(e.Request.URL, "/confirm") && confirms.Add(1) == 1 {
				_, _ = chromedp.Call(ictx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonConnectionReset})
				continue
			}
			_, _ = chromedp.Call(ictx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		}
	}()
	if _, err := chromedp.Call(p.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/confirm", RequestStage: fetch.RequestStageResponse}}}); err != nil {
		t.Fatal(err)
	}

	// A double click as a mouse makes it: two presses, the second counted as such.
	p.present(".vros-be-paybutton")
	var xy [2]float64
	if err := json.Unmarshal([]byte(p.eval(`(() => { const b = document.querySelector(".vros-be-paybutton"); b.scrollIntoView({block: "center"});
		const r = b.getBoundingClientRect(); return JSON.stringify([r.left + r.width / 2, r.top + r.height / 2]) })()`)), &xy); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.MouseClickXY(xy[0], xy[1]), chromedp.MouseClickXY(xy[0], xy[1], chromedp.ClickCount(2)))
	p.expect(".vros-be-form-error", "could not be reached")
	if n := confirms.Load(); n != 1 {
		t.Fatalf("a double click on Pay sent %d confirms, want 1", n)
	}
	p.until(`!document.querySelector(".vros-be-paybutton").disabled`, "Pay enabled again", widgetText)
	p.click(".vros-be-paybutton")
	id := p.bookedAt(s, "/thanks")
	if n := confirms.Load(); n != 2 {
		t.Fatalf("%d confirms, want 2 (the lost one and the retry)", n)
	}
	b := only(t, o.bookings(t))
	if b.BookingID != id || len(b.Payments) != 1 {
		t.Fatalf("the booking: %+v, want %d paid once", b, id)
	}
}

// TestPluginGlobals: a page made as the 365villas plugin's booking page is (its globals set
// in a script, then /widget/general-olb.js inside .booking-container) books the property
// named by _365_property_id — the second of two the brand sells — for the dates and guests
// it sets, in the language it sets, and redirects to _365_redirect_url.
func TestPluginGlobals(t *testing.T) {
	s := newSite(t)
	o := newOwner(t, []string{s.URL}, 2)
	arrival, departure := day(20), day(24)
	s.page("/grazie", thanksPage)
	s.page("/prenota", page("it", fmt.Sprintf(`<div class="booking-container">
	<script>
		_365_owner = "villas";
		_365_owner_token = %s;
		_365_language = "it";
		_365_redirect_url = "";
		_365_redirect_url = %s;
		_365_property_id = '%d';
		_365_start_date = '%s';
		_365_end_date  = '%s';
		_365_adults  = '3';
		_365_children  = '1';
		_365_number_month = '2';
		_365_show_star_discount = 1;
		_365_domain = %s;
	</script>
	<script src="%s/widget/general-olb.js"></script>
</div>`, js(o.OwnerToken), js(s.URL+"/grazie"), o.PIDs[1], arrival, departure, js(s.URL), st.EdgeURL)))
	p := newTab(t)
	p.open(s.URL + "/prenota")
	p.expect(".vros-be-title", o.Names[1])
	p.waitQuote()
	p.expect(".vros-be-book", "Prenota ora")
	p.expect(".vros-be-hint", "4 notti")
	if a := p.eval(`document.querySelector('.vros-be-guests [name="adults"]').value + "+" + document.querySelector('.vros-be-guests [name="children"]').value`); a != "3+1" {
		t.Fatalf("guests shown %s, want 3+1", a)
	}
	p.click(".vros-be-book")
	p.expect(".vros-be-title", "I tuoi dati")
	p.guest("Maria", "Montessori", "maria@example.com", "IT")
	p.card("4242424242424242")
	p.expect(".vros-be-paybutton", "Paga")
	p.click(".vros-be-paybutton")
	id := p.bookedAt(s, "/grazie")
	b := only(t, o.bookings(t))
	if b.BookingID != id || b.PropertyID != int64(o.PIDs[1]) || b.Checkin != arrival || b.Checkout != departure || b.Adults != 3 || b.Children != 1 {
		t.Fatalf("the booking: %+v, want %d of property %d, %s to %s, 3 adults and 1 child", b, id, o.PIDs[1], arrival, departure)
	}
}

// overflow is what of the widget reaches past the viewport's width ("" when nothing).
const overflow = `(() => {
	const root = document.querySelector(".vros-be");
	if (!root) return "no widget";
	const out = [];
	if (root.scrollWidth > root.clientWidth) out.push("root scrolls: " + root.scrollWidth + " > " + root.clientWidth);
	if (document.documentElement.scrollWidth > innerWidth) out.push("page scrolls: " + document.documentElement.scrollWidth + " > " + innerWidth);
	for (const e of root.querySelectorAll("*")) {
		const r = e.getBoundingClientRect();
		if (r.width > 0 && (r.right > innerWidth + 0.5 || r.left < -0.5)) out.push((e.className || e.tagName) + " spans " + r.left + ".." + r.right);
	}
	return out.slice(0, 8).join("; ");
})()`

// TestNarrowScreen: at 320 px wide nothing of the widget reaches past the screen — the
// calendar, the quote, the guest form, the payment form. Cancelling the checkout frees the
// nights at once: the same stay is quoted again.
func TestNarrowScreen(t *testing.T) {
	s := newSite(t)
	o := newOwner(t, []string{s.URL}, 1)
	s.page("/book", o.bookingPage(o.PIDs[0], ""))
	p := newTab(t)
	p.do(chromedp.EmulateViewport(320, 640))
	p.open(s.URL + "/book")
	check := func(step string) {
		t.Helper()
		if got := p.eval(overflow); got != "" {
			t.Errorf("at 320 px, %s: %s", step, got)
		}
	}
	p.present(".vros-be-calendar .vros-be-month")
	check("the calendar")
	p.pickStay(day(25), day(28))
	check("the quote")
	p.click(".vros-be-book")
	p.present(`[name="first_name"]`)
	check("the guest form")
	p.guest("Ada", "Lovelace", "ada@example.com", "GB")
	p.present(`[name="card.number"]`)
	check("the payment form")
	p.click(".vros-be-cancel")
	p.waitQuote()
	check("the quote after a cancelled checkout")
	if list := o.bookings(t); len(list) != 0 {
		t.Fatalf("a cancelled checkout booked: %+v", list)
	}
}

// stripeJS is where the widget loads Stripe.js from.
const stripeJS = "https://js.stripe.com/v3/"

// fakeStripeJS stands for Stripe.js, which the test serves in its place (the browser's
// network is closed): its Card Element is an input of the page, its confirmCardPayment
// answers succeeded (as stripe-mock's intents read back). It keeps what the widget asked of it
// in sessionStorage, which the site's confirmation page, of the same origin, still has.
const fakeStripeJS = `(() => {
	const log = (...call) => {
		const calls = JSON.parse(sessionStorage.getItem("fakeStripe") || "[]");
		calls.push(call);
		sessionStorage.setItem("fakeStripe", JSON.stringify(calls));
	};
	window.Stripe = (key) => {
		log("Stripe", key);
		return {
			elements: () => ({
				create: (type) => {
					log("create", type);
					let input = null;
					return {
						mount: (el) => { input = document.createElement("input"); input.name = "stripe-card"; input.setAttribute("aria-label", "Card number"); el.append(input); log("mount") },
						on: () => {},
					};
				},
			}),
			confirmCardPayment: async (secret, data) => {
				log("confirmCardPayment", secret, !!(data && data.payment_method && data.payment_method.card));
				return { paymentIntent: { status: "succeeded" } };
			},
		};
	};
})();`

// waitBookingView waits until booking-svc's view of each property holds its current
// version (interface A's get), the Stripe method among it: a checkout made before would
// answer payments_not_set_up. Read in booking-svc's store, as the e2e tests wait.
func (o owner) waitBookingView(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(viewsWithin)
	for i, pid := range o.PIDs {
		var got struct {
			Data struct {
				Version json.Number `json:"version"`
			} `json:"data"`
		}
		o.a(t, "property", apitest.JSON(map[string]any{"action": "get", "property": map[string]string{"internal_code": o.Codes[i]}}), &got)
		id := fmt.Sprintf("%s:%d", o.AccountID, pid)
		for {
			var doc bson.M
			err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
			if err == nil && fmt.Sprint(doc["version"]) == got.Data.Version.String() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("booking-svc's view of %s never reached version %s (%v, %v)", id, got.Data.Version, doc["version"], err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// stripeBrowser is a browser whose requests for Stripe.js get fakeStripeJS; it answers the
// bodies of the confirms sent. With cut, the first confirm is cut before it leaves the
// browser (vros never sees it).
func stripeBrowser(t *testing.T, cut bool) (*tab, func() []string) {
	t.Helper()
	p := newTab(t, stripeJS)
	var mu sync.Mutex
	var confirmBodies []string
	ictx, stop := context.WithCancel(p.ctx)
	t.Cleanup(stop)
	paused := chromedp.Events(ictx, fetch.RequestPaused)
	go func() {
		for e, err := range paused {
			if err != nil {
				return
			}
			if strings.HasPrefix(e.Request.URL, stripeJS) {
				_, _ = chromedp.Call(ictx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: http.StatusOK,
					ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/javascript"}}, Body: []byte(fakeStripeJS)})
				continue
			}
			if e.Request.Method == http.MethodPost {
				var body []byte
				for _, d := range e.Request.PostDataEntries {
					body = append(body, d.Bytes...)
				}
				mu.Lock()
				confirmBodies = append(confirmBodies, string(body))
				first := len(confirmBodies) == 1
				mu.Unlock()
				if cut && first {
					_, _ = chromedp.Call(ictx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonConnectionReset})
					continue
				}
			}
			_, _ = chromedp.Call(ictx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		}
	}()
	if _, err := chromedp.Call(p.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: stripeJS + "*", RequestStage: fetch.RequestStageRequest}, {URLPattern: "*/confirm", RequestStage: fetch.RequestStageRequest}}}); err != nil {
		t.Fatal(err)
	}
	return p, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(confirmBodies)
	}
}

// TestLiveStripe: a live account's checkout pays through Stripe. Stripe.js is loaded only
// then, from js.stripe.com; the widget makes it with the property's publishable key, mounts
// its Card Element in the payment form, confirms the PaymentIntent with the checkout's
// client secret and the card, then confirms the checkout with an empty body: the card number
// never goes to vros. booking-svc reads the intent back (stripe-mock: succeeded) and books.
func TestLiveStripe(t *testing.T) {
	s := newSite(t)
	o := newOwnerOf(t, []string{s.URL}, 1, true)
	o.waitBookingView(t)
	s.page("/book", o.bookingPage(o.PIDs[0], ""))
	p, confirms := stripeBrowser(t, false)

	p.open(s.URL + "/book")
	p.pickStay(day(30), day(32))
	if loaded := p.eval(`String(!!window.Stripe || !!document.querySelector('script[src^="https://js.stripe.com"]'))`); loaded != "false" {
		t.Fatal("Stripe.js loaded before a checkout asked for it")
	}
	p.click(".vros-be-book")
	p.guest("Ada", "Lovelace", "ada@example.com", "GB")
	p.present(`.vros-be-stripe input[name="stripe-card"]`)
	if n := p.eval(`String(document.querySelectorAll('[name="card.number"]').length)`); n != "0" {
		t.Fatal("a Stripe checkout shows the sandbox card fields")
	}
	const number = "4242424242424242"
	p.set(`[name="stripe-card"]`, number)
	p.expect(".vros-be-paybutton", "Pay $200.00")
	p.click(".vros-be-paybutton")
	id := p.bookedAt(s, "/thanks")

	var calls [][]any
	if err := json.Unmarshal([]byte(p.eval(`sessionStorage.getItem("fakeStripe")`)), &calls); err != nil {
		t.Fatal(err)
	}
	var key, secret string
	var withCard bool
	for _, c := range calls {
		switch c[0] {
		case "Stripe":
			key, _ = c[1].(string)
		case "confirmCardPayment":
			secret, _ = c[1].(string)
			withCard, _ = c[2].(bool)
		}
	}
	if key != "pk_test_enginewidgetE1" || secret == "" || !withCard {
		t.Fatalf("Stripe.js was asked %v: want the property's publishable key, the client secret and the card", calls)
	}
	if bodies := confirms(); len(bodies) != 1 || strings.TrimSpace(bodies[0]) != "{}" {
		t.Fatalf("the confirms sent %q, want one empty body (no card number)", bodies)
	}
	b := only(t, o.bookings(t))
	if b.BookingID != id || len(b.Payments) != 1 || b.Payments[0].Amount.String() != "200.00" {
		t.Fatalf("the booking: %+v, want %d with one payment of 200.00", b, id)
	}
}

// TestLiveStripePaidThenCancelled: Stripe took the payment but the widget's confirm never
// reached vros (cut in the browser); the guest, told the service could not be reached,
// presses Cancel. A paid checkout is not cancelled (checkout_booked): the widget reads it
// back, shows the booking and redirects. One booking.
func TestLiveStripePaidThenCancelled(t *testing.T) {
	s := newSite(t)
	o := newOwnerOf(t, []string{s.URL}, 1, true)
	o.waitBookingView(t)
	s.page("/book", o.bookingPage(o.PIDs[0], ""))
	p, confirms := stripeBrowser(t, true)
	p.open(s.URL + "/book")
	p.pickStay(day(40), day(42))
	p.click(".vros-be-book")
	p.guest("Ada", "Lovelace", "ada@example.com", "GB")
	p.set(`.vros-be-stripe [name="stripe-card"]`, "4242424242424242")
	p.click(".vros-be-paybutton")
	p.expect(".vros-be-form-error", "could not be reached")
	p.until(`!document.querySelector(".vros-be-paybutton").disabled`, "Pay enabled again", widgetText)
	p.click(".vros-be-cancel")
	id := p.bookedAt(s, "/thanks")
	if n := len(confirms()); n != 1 {
		t.Fatalf("%d confirms sent, want the one cut", n)
	}
	if b := only(t, o.bookings(t)); b.BookingID != id {
		t.Fatalf("the booking: %+v, want %d", b, id)
	}
}
