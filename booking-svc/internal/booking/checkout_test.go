package booking_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
)

// clock is a test clock the service, the ledger and the gateway read.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// coFixture is a service with checkouts, its test gateway and its clock.
type coFixture struct {
	fixture
	gw    *cardpay.Test
	clock *clock
}

// Timings of the checkout tests: a janitor lease of one minute, a window of two.
const (
	coLease  = time.Minute
	coWindow = 2 * time.Minute
)

func newCheckoutFixture(t *testing.T) coFixture { return newCheckoutFixtureWith(t, nil) }

// newCheckoutFixtureWith is newCheckoutFixture whose live payments go to intents.
func newCheckoutFixtureWith(t *testing.T, intents booking.Intents) coFixture {
	t.Helper()
	ctx := context.Background()
	st, nights := openStores(t, db)
	c := &clock{now: time.Now().UTC()}
	led := ledger.New(nights)
	led.Now = c.Now
	vw, err := propertyview.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := seal.New(seal.NewKey())
	gw := cardpay.NewTest(c.Now)
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(vw), Bookings: st, Blocks: st, Users: st, Ledger: led,
		Gateway: gw, Checkouts: st, Intents: intents, Box: box})
	svc.SetClock(c.Now)
	svc.Lease, svc.CheckoutWindow = coLease, coWindow
	return coFixture{fixture: fixture{svc: svc, st: st, led: led, vw: vw}, gw: gw, clock: c}
}

// janitor passes once, as the janitor of the service would with the test lease.
func (f coFixture) janitor(t *testing.T) {
	t.Helper()
	booking.Janitor{Bookings: f.svc, Lease: coLease, Retention: time.Hour, Log: discardLog()}.Pass(context.Background())
}

var runs atomic.Int64

// unique is an account name of its own for each run of a test.
func unique(name string) string {
	return fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano()%1e9, runs.Add(1))
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// property puts a property of account in the view: 100 a night, any day in and out, with
// policy (JSON, "null" none), and the extra snapshot members extra (",…" or "").
func (f fixture) property(t *testing.T, account string, pid int64, policy, extra string) {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":1,"deleted":false,
	 "content":{"name":"Engine test villa","maxguest":6}, "policy":%s,
	 "rates":{"rate":{"daily_price":"100"},"minimum_stay":2,
	   "setting":{"standard_occupants":6,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}%s}`,
		account, pid, pid, policy, extra)
	v, err := events.Encode("/test", "vros.property.rates.updated", account, time.Now(), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.vw.Apply(context.Background(), kafka.Message{Value: v}); err != nil {
		t.Fatal(err)
	}
}

// brands gives account brand 1 (selling every property) and brand 2 (selling property 2
// only, quoting in EUR, in Italian, with lead source 4), and EUR at 0.5.
func (f fixture) brands(t *testing.T, account string) {
	f.settings(t, contract.Settings{AccountID: account, Version: 1, Languages: []string{"en", "it", "de"}, DefaultLeadSource: 3,
		ExchangeRates: map[string]string{"EUR": "0.5"},
		Brands: []contract.Brand{{ID: 1, Name: "All"}, {ID: 2, Name: "Two", Properties: []int64{2}, DefaultCurrency: "EUR",
			DefaultLanguage: "it", LeadSource: 4}, {ID: 3, Name: "Pounds", DefaultCurrency: "GBP"}}})
}

const partialPolicy = `{"payment_type":"Partial","first_payment":{"is_due_at":"Booking","amount_type":"PercentOfGrandTotal","amount":"30"},
	"remaining_payment":{"is_due_at":"XDayPriorArrival","x_day":14},"damage_deposit":{"is_due_at":"Arrival","amount_type":"Flat","amount":"200"}}`

const extras = `, "taxes":[{"name":"City tax","amount":"5","type":1,"def":true}],
	"services":[{"name":"Cleaning","amount":"50","type":1,"applicable":1,"unit":1,"def":true,"taxes":[{"name":"VAT","perc":"10"}]}]`

var visa = card.Card{Number: cardpay.CardVisa, NameOnCard: "Ada Lovelace", ExpMonth: 12, ExpYear: 2040, CVC: "123"}

var guestAda = booking.Guest{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Country: "GB"}

// stay is an engine stay of brand 1 checking in days after the clock's today.
func (f coFixture) stay(pid int64, days, nights int) booking.EngineStay {
	in := pricing.DateOf(f.clock.Now()).AddDays(days)
	return booking.EngineStay{BrandID: 1, PropertyID: pid, Checkin: in, Checkout: in.AddDays(nights), Adults: 2}
}

// TestEngineQuote: a website's quote is getinfo's price (one pricer, the same rules), in the
// brand's currency and language, with lines that add up to its total and what a checkout
// would charge now by the property's payment policy.
func TestEngineQuote(t *testing.T) {
	f := newCheckoutFixture(t)
	ctx := context.Background()
	account := unique("eq-acct")
	f.brands(t, account)
	f.property(t, account, 1, partialPolicy, extras)
	f.property(t, account, 2, "null", "")
	f.property(t, account, 3, `{"payment_type":"Full","payment_full":{"is_due_at":"Arrival"}}`, "")
	f.property(t, account, 4, `{"payment_type":"Full","payment_full":{"is_due_at":"Booking"}}`, "")
	f.property(t, account, 5, `{"payment_type":"None","damage_deposit":{"is_due_at":"Arrival","amount_type":"Flat","amount":"100"}}`, "")

	// The quote is getinfo's, converted and labelled.
	es := f.stay(1, 30, 3)
	o, err := f.svc.EngineQuote(ctx, account, es)
	if err != nil {
		t.Fatal(err)
	}
	_, pr, err := f.svc.Quote(ctx, account, booking.Stay{PropertyID: 1, Checkin: es.Checkin, Checkout: es.Checkout, Adults: 2}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if q := pr.Quote(); o.Quote.GrandTotal != q.GrandTotal || o.Quote.TotalRent != q.TotalRent || o.Nights != 3 || o.Lang != "en" {
		t.Fatalf("engine quote %+v, getinfo %+v", o, q)
	}
	first := o.Quote.Schedule[0]
	if o.DueNow != first.Amount || first.Label != pricing.LabelFirst {
		t.Fatalf("due now %s, schedule %+v", o.DueNow, o.Quote.Schedule)
	}
	// Later is the rest: due now and later add up to the total.
	total, _ := decimal.NewFromString(o.DueNow)
	for _, in := range o.Later {
		if in.Label != pricing.LabelRemaining {
			t.Fatalf("later %+v", o.Later)
		}
		amt, _ := decimal.NewFromString(in.Amount)
		total = total.Add(amt)
	}
	if len(o.Later) != 1 || total.StringFixed(2) != o.Quote.GrandTotal {
		t.Fatalf("due now %s and later %+v do not add up to %s", o.DueNow, o.Later, o.Quote.GrandTotal)
	}

	for _, c := range []struct {
		name     string
		es       booking.EngineStay
		due      string // "" the grand total
		currency string
		lang     string
	}{
		{"no policy: paid in full at booking", withBrand(f.stay(2, 30, 3), 1, "it-IT"), "", "USD", "it"},
		{"full at arrival: nothing now", f.stay(3, 40, 3), "0.00", "USD", "en"},
		{"full at booking", withBrand(f.stay(4, 40, 3), 1, "de"), "", "USD", "de"},
		{"no payment but a deposit: nothing now", withBrand(f.stay(5, 40, 3), 1, "fr"), "0.00", "USD", "en"},
		{"the brand's currency and language", withBrand(f.stay(2, 50, 3), 2, ""), "", "EUR", "it"},
		{"a brand currency without a rate: the property's", withBrand(f.stay(2, 60, 3), 3, "pt-BR"), "", "USD", "en"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := f.svc.EngineQuote(ctx, account, c.es)
			if err != nil {
				t.Fatal(err)
			}
			want := c.due
			if want == "" {
				want = o.Quote.GrandTotal
			}
			if o.DueNow != want || o.Quote.Currency != c.currency || o.Lang != c.lang {
				t.Fatalf("due %s %s in %s, want %s %s in %s", o.DueNow, o.Quote.Currency, o.Lang, want, c.currency, c.lang)
			}
		})
	}

	// Refusals, as getinfo's and create's.
	if _, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: booking.Stay{PropertyID: 2, Checkin: pricing.DateOf(f.clock.Now()).AddDays(71),
		Checkout: pricing.DateOf(f.clock.Now()).AddDays(73), Adults: 2}, Party: ada}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		es    booking.EngineStay
		check func(error) bool
	}{
		{"a property the brand does not sell", withBrand(f.stay(1, 30, 3), 2, ""), func(err error) bool { return errors.Is(err, booking.ErrNoProperty) }},
		{"a brand the account does not have", withBrand(f.stay(1, 30, 3), 9, ""), func(err error) bool { return errors.Is(err, booking.ErrNoProperty) }},
		{"a property the account does not have", f.stay(99, 30, 3), func(err error) bool { return errors.Is(err, booking.ErrNoProperty) }},
		{"a stay under the minimum", f.stay(2, 30, 1), func(err error) bool {
			var fe *booking.FieldError
			return errors.As(err, &fe) && fe.Field == "checkout"
		}},
		{"a night booked: the first is named", f.stay(2, 69, 5), func(err error) bool {
			var ue *booking.UnavailableError
			return errors.As(err, &ue) && ue.Date == pricing.DateOf(f.clock.Now()).AddDays(71).String()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := f.svc.EngineQuote(ctx, account, c.es); !c.check(err) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func withBrand(es booking.EngineStay, brand int64, lang string) booking.EngineStay {
	es.BrandID, es.Lang = brand, lang
	return es
}

// owners returns who holds each night of a stay of property pid.
func (f coFixture) nightsOf(t *testing.T, account string, pid int64, es booking.EngineStay) map[string]string {
	t.Helper()
	var dates []string
	for d := es.Checkin; d.Before(es.Checkout); d = d.AddDays(1) {
		dates = append(dates, d.String())
	}
	return f.owners(t, account, pid, dates)
}

// TestCheckoutLifecycle: a checkout holds its nights unlisted; it is confirmed once it has
// its guest and a card; a refused card leaves it held and a new card is a new charge; the
// confirm books it through the outbox with the charge recorded as create records it, once;
// a booked checkout is answered again and cannot be cancelled; a cancelled one frees its
// nights at once.
func TestCheckoutLifecycle(t *testing.T) {
	f := newCheckoutFixture(t)
	ctx := context.Background()
	account := unique("co-life")
	f.brands(t, account)
	f.property(t, account, 1, partialPolicy, extras)
	es := f.stay(1, 30, 3)
	b, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	co := b.Engine
	if b.Status != booking.StatusHeld || co == nil || !booking.ValidCheckoutID(co.ID) || co.Gateway != booking.GatewayTest ||
		!co.ExpiresAt.Equal(f.clock.Now().Add(coWindow).Truncate(time.Millisecond)) || b.LeadSourceID != 3 || b.BrandID != 1 {
		t.Fatalf("checkout %+v %+v", b, co)
	}
	for d, o := range f.nightsOf(t, account, 1, es) {
		if o != bookingOwner(b.BookingID) {
			t.Fatalf("night %s held by %q", d, o)
		}
	}
	if list, n, err := f.svc.List(ctx, account, booking.ListFilter{Limit: 10}); err != nil || n != 0 || len(list) != 0 {
		t.Fatalf("a held checkout is listed: %d %v", n, err)
	}
	// A second guest cannot quote or hold its nights.
	var ue *booking.UnavailableError
	if _, err := f.svc.EngineQuote(ctx, account, es); !errors.As(err, &ue) {
		t.Fatalf("quote of held nights: %v", err)
	}
	if _, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: f.stay(1, 32, 3), Sandbox: true}); !errors.As(err, &ue) ||
		ue.Date != es.Checkin.AddDays(2).String() {
		t.Fatalf("checkout of held nights: %v", err)
	}

	// Found by its id only by its own account and brand.
	for _, c := range []struct {
		account string
		brand   int64
		id      string
	}{{unique("co-other"), 1, co.ID}, {account, 2, co.ID}, {account, 1, "co_0123456789abcdef0123456789abcdef"}, {account, 1, "12"}} {
		if _, err := f.svc.FindCheckout(ctx, c.account, c.brand, c.id); !errors.Is(err, booking.ErrNoCheckout) {
			t.Fatalf("find %+v: %v", c, err)
		}
	}

	confirm := func(c *card.Card) (booking.Booking, error) { return f.svc.ConfirmCheckout(ctx, account, 1, co.ID, c) }
	var fe *booking.FieldError
	if _, err := confirm(&visa); !errors.As(err, &fe) || fe.Field != "guest" {
		t.Fatalf("confirm without a guest: %v", err)
	}
	if g, err := f.svc.CheckoutGuest(ctx, account, 1, co.ID, guestAda); err != nil || g.Guest.FirstName != "Ada" || g.Guest.PhoneCountryCode != "+44" {
		t.Fatalf("guest: %v %+v", err, g.Guest)
	}
	if _, err := confirm(nil); !errors.As(err, &fe) || fe.Field != "card" {
		t.Fatalf("confirm without a card: %v", err)
	}
	declined := visa
	declined.Number = cardpay.CardDeclined
	var pe *booking.PaymentError
	if _, err := confirm(&declined); !errors.As(err, &pe) {
		t.Fatalf("declined card: %v", err)
	}
	if got, err := f.svc.FindCheckout(ctx, account, 1, co.ID); err != nil || got.Status != booking.StatusHeld || got.Engine.Declined != 1 {
		t.Fatalf("after a refusal: %v %+v", err, got.Engine)
	}
	booked, err := confirm(&visa)
	if err != nil {
		t.Fatal(err)
	}
	if booked.Status != booking.StatusReserved || booked.Version != 1 || len(booked.Payments) != 1 {
		t.Fatalf("booked %+v", booked)
	}
	for _, p := range booked.Payments {
		if p.Method != booking.MethodCard || p.Amount != co.DueNow || p.ChargeID == "" || p.Currency != "USD" {
			t.Fatalf("payment %+v, due %s", p, co.DueNow)
		}
	}
	if n := len(f.gw.Charges()); n != 1 {
		t.Fatalf("%d charges", n)
	}
	again, err := confirm(&visa)
	if err != nil || again.BookingID != booked.BookingID || len(f.gw.Charges()) != 1 {
		t.Fatalf("second confirm: %v %d, %d charges", err, again.BookingID, len(f.gw.Charges()))
	}
	if list, n, err := f.svc.List(ctx, account, booking.ListFilter{Limit: 10}); err != nil || n != 1 || list[0].BookingID != booked.BookingID {
		t.Fatalf("the booking is not listed: %d %v", n, err)
	}
	var be *booking.CheckoutBookedError
	if _, err := f.svc.CancelCheckout(ctx, account, 1, co.ID); !errors.As(err, &be) {
		t.Fatalf("cancel of a booked checkout: %v", err)
	}
	if _, err := f.svc.CheckoutGuest(ctx, account, 1, co.ID, guestAda); !errors.As(err, &be) {
		t.Fatalf("guest of a booked checkout: %v", err)
	}

	// Cancel frees the nights at once; cancelling again answers the same.
	es2 := f.stay(1, 40, 3)
	b2, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es2, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := f.svc.CancelCheckout(ctx, account, 1, b2.Engine.ID)
		if err != nil || booking.CheckoutStatus(c, f.clock.Now()) != booking.CheckoutCancelled {
			t.Fatalf("cancel: %v %+v", err, c)
		}
	}
	for d, o := range f.nightsOf(t, account, 1, es2) {
		if o != "" {
			t.Fatalf("night %s held by %q after the cancel", d, o)
		}
	}
	var ended *booking.CheckoutEndedError
	if _, err := f.svc.ConfirmCheckout(ctx, account, 1, b2.Engine.ID, &visa); !errors.As(err, &ended) || ended.Outcome != booking.CheckoutCancelled {
		t.Fatalf("confirm of a cancelled checkout: %v", err)
	}

	// Nothing due now: booked without a card, through no gateway.
	f.property(t, account, 3, `{"payment_type":"Full","payment_full":{"is_due_at":"Arrival"}}`, "")
	b3, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: f.stay(3, 30, 3), Sandbox: true})
	if err != nil || b3.Engine.Gateway != booking.GatewayNone {
		t.Fatalf("free checkout: %v %+v", err, b3.Engine)
	}
	if _, err := f.svc.CheckoutGuest(ctx, account, 1, b3.Engine.ID, guestAda); err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.ConfirmCheckout(ctx, account, 1, b3.Engine.ID, nil); err != nil || got.Status != booking.StatusReserved ||
		len(got.Payments) != 0 || len(f.gw.Charges()) != 1 {
		t.Fatalf("free confirm: %v %+v", err, got)
	}
}

// TestConcurrentCheckouts: 50 checkouts at once for overlapping nights: exactly one holds,
// the 49 others are told the nights are taken, and the ledger holds exactly the winner's
// nights.
func TestConcurrentCheckouts(t *testing.T) {
	f := newCheckoutFixture(t)
	ctx := context.Background()
	account := unique("co-race")
	f.brands(t, account)
	f.property(t, account, 1, "null", "")
	var wg sync.WaitGroup
	type result struct {
		b   booking.Booking
		err error
		es  booking.EngineStay
	}
	results := make([]result, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			es := f.stay(1, 20+i%5, 5+i%3) // all hold the night of day 24
			b, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true})
			results[i] = result{b, err, es}
		}()
	}
	wg.Wait()
	var won []result
	for _, r := range results {
		var ue *booking.UnavailableError
		switch {
		case r.err == nil:
			won = append(won, r)
		case !errors.As(r.err, &ue):
			t.Fatalf("unexpected error %v", r.err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d checkouts hold the nights", len(won))
	}
	w := won[0]
	held, err := f.led.Owners(ctx, account, 1, f.stay(1, 0, 1).Checkin.String(), f.stay(1, 40, 1).Checkin.String())
	if err != nil {
		t.Fatal(err)
	}
	want := f.nightsOf(t, account, 1, w.es)
	if len(held) != len(want) {
		t.Fatalf("ledger holds %v, want the winner's %v", held, want)
	}
	for d, o := range held {
		if o != bookingOwner(w.b.BookingID) || want[d] != o {
			t.Fatalf("night %s held by %q, want the winner's", d, o)
		}
	}
}

// TestConcurrentConfirms: 20 confirms of one checkout at once book it once, charge once,
// and all answer the same booking; two tenants doing it at once each get their own.
func TestConcurrentConfirms(t *testing.T) {
	f := newCheckoutFixture(t)
	ctx := context.Background()
	accounts := []string{unique("co-conf-a"), unique("co-conf-b")}
	ids := map[string]string{}
	for _, a := range accounts {
		f.brands(t, a)
		f.property(t, a, 1, partialPolicy, extras)
		b, err := f.svc.CreateCheckout(ctx, a, booking.NewCheckout{EngineStay: f.stay(1, 30, 3), Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CheckoutGuest(ctx, a, 1, b.Engine.ID, guestAda); err != nil {
			t.Fatal(err)
		}
		ids[a] = b.Engine.ID
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string][]int64{}
	for _, a := range accounts {
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := f.svc.ConfirmCheckout(ctx, a, 1, ids[a], &visa)
				if err != nil {
					t.Errorf("%s: %v", a, err)
					return
				}
				if b.AccountID != a || b.Status != booking.StatusReserved {
					t.Errorf("%s: answered %s's booking %d (%s)", a, b.AccountID, b.BookingID, b.Status)
				}
				mu.Lock()
				answers[a] = append(answers[a], b.BookingID)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if n := len(f.gw.Charges()); n != 2 {
		t.Fatalf("%d charges for two checkouts", n)
	}
	for _, a := range accounts {
		if len(answers[a]) != 20 {
			t.Fatalf("%s: %d answers", a, len(answers[a]))
		}
		for _, id := range answers[a] {
			if id != answers[a][0] {
				t.Fatalf("%s: answers name bookings %v", a, answers[a])
			}
		}
		b, err := f.svc.Booking(ctx, a, answers[a][0])
		if err != nil || len(b.Payments) != 1 || b.Version != 1 {
			t.Fatalf("%s: booking %+v %v", a, b, err)
		}
		other := accounts[0]
		if other == a {
			other = accounts[1]
		}
		if _, err := f.svc.FindCheckout(ctx, other, 1, ids[a]); !errors.Is(err, booking.ErrNoCheckout) {
			t.Fatalf("%s finds %s's checkout: %v", other, a, err)
		}
	}
}

// TestCheckoutExpiry: once its window is over a checkout cannot be confirmed; the janitor
// expires it and frees its nights, and a new checkout of them then holds; a confirm that
// comes first ends it itself.
func TestCheckoutExpiry(t *testing.T) {
	f := newCheckoutFixture(t)
	ctx := context.Background()
	account := unique("co-expiry")
	f.brands(t, account)
	f.property(t, account, 1, partialPolicy, extras)
	es := f.stay(1, 30, 3)
	b, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.CheckoutGuest(ctx, account, 1, b.Engine.ID, guestAda); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(coWindow - time.Millisecond)
	f.janitor(t)
	if got, _ := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID); got.Status != booking.StatusHeld {
		t.Fatalf("expired before its window: %s", got.Status)
	}
	f.clock.Add(time.Millisecond)
	var ended *booking.CheckoutEndedError
	if _, err := f.svc.CheckoutGuest(ctx, account, 1, b.Engine.ID, guestAda); !errors.As(err, &ended) {
		t.Fatalf("guest after the window: %v", err)
	}
	if got, _ := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID); booking.CheckoutStatus(got, f.clock.Now()) != booking.CheckoutExpired {
		t.Fatalf("shown %s after its window", booking.CheckoutStatus(got, f.clock.Now()))
	}
	f.janitor(t)
	got, err := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID)
	if err != nil || got.Status != booking.StatusFailed || got.Engine.Outcome != booking.CheckoutExpired {
		t.Fatalf("after the janitor: %v %s %+v", err, got.Status, got.Engine)
	}
	for d, o := range f.nightsOf(t, account, 1, es) {
		if o != "" {
			t.Fatalf("night %s still held by %q", d, o)
		}
	}
	if _, err := f.svc.ConfirmCheckout(ctx, account, 1, b.Engine.ID, &visa); !errors.As(err, &ended) || ended.Outcome != booking.CheckoutExpired {
		t.Fatalf("confirm after expiry: %v", err)
	}
	if len(f.gw.Charges()) != 0 {
		t.Fatal("an expired checkout was charged")
	}
	b2, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true})
	if err != nil {
		t.Fatalf("a new checkout of the freed nights: %v", err)
	}

	// A confirm after the window, before the janitor: refused, and the nights freed at once.
	if _, err := f.svc.CheckoutGuest(ctx, account, 1, b2.Engine.ID, guestAda); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(coWindow)
	if _, err := f.svc.ConfirmCheckout(ctx, account, 1, b2.Engine.ID, &visa); !errors.As(err, &ended) {
		t.Fatalf("confirm after the window: %v", err)
	}
	for d, o := range f.nightsOf(t, account, 1, es) {
		if o != "" {
			t.Fatalf("night %s still held by %q after a late confirm", d, o)
		}
	}
	if len(f.gw.Charges()) != 0 {
		t.Fatal("a late confirm was charged")
	}
}

// stepper stops a change of an account at an armed step: the change waits there (reached
// is closed) until released, or for good when kill is called (runtime.Goexit: as if the
// process died there).
type stepper struct {
	mu    sync.Mutex
	armed map[string]*stop // "account step" → stop
}

type stop struct {
	reached, release chan struct{}
	kill             bool
}

func newStepper() *stepper { return &stepper{armed: map[string]*stop{}} }

func (s *stepper) hook(step, account string) {
	s.mu.Lock()
	st, ok := s.armed[account+" "+step]
	delete(s.armed, account+" "+step)
	s.mu.Unlock()
	if !ok {
		return
	}
	close(st.reached)
	<-st.release
	if st.kill {
		runtime.Goexit()
	}
}

func (s *stepper) arm(account, step string, kill bool) *stop {
	st := &stop{reached: make(chan struct{}), release: make(chan struct{}), kill: kill}
	s.mu.Lock()
	s.armed[account+" "+step] = st
	s.mu.Unlock()
	return st
}

// TestConfirmRacesExpiry: a confirm and the expiry of one checkout never both win. A confirm
// holding the checkout while its window ends books it (the janitor leaves it); the janitor
// expiring it while a confirm waits makes the confirm refused, uncharged.
func TestConfirmRacesExpiry(t *testing.T) {
	f := newCheckoutFixture(t)
	ctx := context.Background()
	steps := newStepper()
	f.svc.Crash = steps.hook
	account := unique("co-rx")
	f.brands(t, account)
	f.property(t, account, 1, partialPolicy, extras)
	hold := func(days int) booking.Booking {
		b, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: f.stay(1, days, 3), Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CheckoutGuest(ctx, account, 1, b.Engine.ID, guestAda); err != nil {
			t.Fatal(err)
		}
		return b
	}

	// The confirm first, ten seconds before the window ends: charged, then the window ends
	// and the janitor passes (the confirm's op is younger than the lease).
	b := hold(30)
	f.clock.Add(coWindow - 10*time.Second)
	st := steps.arm(account, "confirm:charged", false)
	done := make(chan error, 1)
	go func() {
		_, err := f.svc.ConfirmCheckout(ctx, account, 1, b.Engine.ID, &visa)
		done <- err
	}()
	<-st.reached
	f.clock.Add(10 * time.Second)
	f.janitor(t)
	close(st.release)
	if err := <-done; err != nil {
		t.Fatalf("confirm: %v", err)
	}
	f.janitor(t)
	got, err := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID)
	if err != nil || got.Status != booking.StatusReserved || len(f.gw.Charges()) != 1 {
		t.Fatalf("confirm then expiry: %v %s, %d charges", err, got.Status, len(f.gw.Charges()))
	}
	for d, o := range f.nightsOf(t, account, 1, f.stay(1, 30, 3)) {
		if o != bookingOwner(b.BookingID) {
			t.Fatalf("night %s held by %q", d, o)
		}
	}

	// The expiry first: the confirm waits for it, then is refused.
	b = hold(40)
	f.clock.Add(coWindow)
	st = steps.arm(account, "expire:op", false)
	janitor := make(chan struct{})
	go func() { f.janitor(t); close(janitor) }()
	<-st.reached
	go func() {
		_, err := f.svc.ConfirmCheckout(ctx, account, 1, b.Engine.ID, &visa)
		done <- err
	}()
	close(st.release)
	<-janitor
	err = <-done
	var ended *booking.CheckoutEndedError
	if !errors.As(err, &ended) || len(f.gw.Charges()) != 1 {
		t.Fatalf("confirm after the expiry: %v, %d charges", err, len(f.gw.Charges()))
	}
	for d, o := range f.nightsOf(t, account, 1, f.stay(1, 40, 3)) {
		if o != "" {
			t.Fatalf("night %s held by %q after the expiry", d, o)
		}
	}
}

// TestCheckoutCrashes: a checkout's create, confirm or expiry stopped at any of its steps
// (the process died there) leaves no night held past the window once the janitor runs, and
// never loses a booking it made: a confirm stopped after its write is booked, its nights
// kept.
func TestCheckoutCrashes(t *testing.T) {
	for _, c := range []struct {
		step   string
		booked bool // the stopped change had booked it
	}{
		{"checkout:op", false}, {"checkout:pending", false}, {"checkout:recorded", false}, {"checkout:claimed", false},
		{"checkout:held", false},
		{"confirm:op", false}, {"confirm:charged", false}, {"confirm:intent", false}, {"confirm:written", true},
		{"confirm:reserved", true},
		{"expire:op", false}, {"expire:ended", false}, {"expire:released", false},
		{"cancel-checkout:op", false}, {"cancel-checkout:ended", false},
	} {
		t.Run(c.step, func(t *testing.T) {
			f := newCheckoutFixture(t)
			ctx := context.Background()
			steps := newStepper()
			f.svc.Crash = steps.hook
			account := unique("co-crash-" + c.step)
			f.brands(t, account)
			f.property(t, account, 1, partialPolicy, extras)
			es := f.stay(1, 30, 3)
			st := steps.arm(account, c.step, true)
			stopped := make(chan struct{})
			var id string
			run := func(fn func()) {
				go func() {
					defer close(stopped)
					fn()
				}()
				<-st.reached
			}
			change, _, _ := cutStep(c.step)
			if change == "checkout" {
				run(func() { _, _ = f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true}) })
			} else {
				b, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true})
				if err != nil {
					t.Fatal(err)
				}
				id = b.Engine.ID
				if _, err := f.svc.CheckoutGuest(ctx, account, 1, id, guestAda); err != nil {
					t.Fatal(err)
				}
				switch change {
				case "confirm":
					run(func() { _, _ = f.svc.ConfirmCheckout(ctx, account, 1, id, &visa) })
				case "expire":
					f.clock.Add(coWindow)
					run(func() { f.janitor(t) })
				case "cancel-checkout":
					run(func() { _, _ = f.svc.CancelCheckout(ctx, account, 1, id) })
				}
			}
			close(st.release) // the process dies there
			<-stopped

			// The janitor after the window (the lease is shorter): then a second pass, a
			// lease later, for a change the first found too young to repair.
			f.clock.Add(coWindow)
			f.janitor(t)
			f.clock.Add(coLease)
			f.janitor(t)
			owners := f.nightsOf(t, account, 1, es)
			if c.booked {
				got, err := f.svc.FindCheckout(ctx, account, 1, id)
				if err != nil || got.Status != booking.StatusReserved {
					t.Fatalf("the booked checkout is %s (%v)", got.Status, err)
				}
				for d, o := range owners {
					if o != bookingOwner(got.BookingID) {
						t.Fatalf("night %s of the booking held by %q", d, o)
					}
				}
				return
			}
			for d, o := range owners {
				if o != "" {
					t.Fatalf("night %s still held by %q", d, o)
				}
			}
			if id != "" {
				got, err := f.svc.FindCheckout(ctx, account, 1, id)
				if err != nil || got.Status != booking.StatusFailed {
					t.Fatalf("the stopped checkout is %s (%v)", got.Status, err)
				}
			}
			if _, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: es, Sandbox: true}); err != nil {
				t.Fatalf("a new checkout of the nights: %v", err)
			}
		})
	}
}

func cutStep(step string) (change, at string, ok bool) {
	for i := len(step) - 1; i >= 0; i-- {
		if step[i] == ':' {
			return step[:i], step[i+1:], true
		}
	}
	return step, "", false
}

// TestCheckoutEndedMessage: the booking engine's checkout_expired message says how the
// checkout ended, in English (`make fuzz-api` answered "has cancelled").
func TestCheckoutEndedMessage(t *testing.T) {
	for _, tc := range []struct{ outcome, want string }{
		{booking.CheckoutExpired, "checkout co_1 has expired"},
		{booking.CheckoutCancelled, "checkout co_1 was cancelled"},
	} {
		if got := (&booking.CheckoutEndedError{ID: "co_1", Outcome: tc.outcome}).Error(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.outcome, got, tc.want)
		}
	}
}
