package booking_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// planned puts version v of property pid of account in the view: 100 a night, any day in
// and out, minimum stay 1, with the rate-plan members extra (",…": rate_plans, restrictions,
// standard_plan, channel_markups).
func (f fixture) planned(t *testing.T, account string, pid, v int64, extra string) {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":%d,"deleted":false,
	 "content":{"name":"Rate plan villa","maxguest":6},
	 "rates":{"rate":{"daily_price":"100"},"minimum_stay":1,
	   "setting":{"standard_occupants":6,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}%s}`,
		account, pid, pid, v, extra)
	ev, err := events.Encode("/test", contract.RatePlansUpdated, account, time.Now(), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.vw.Apply(context.Background(), kafka.Message{Value: ev}); err != nil {
		t.Fatal(err)
	}
}

// Plans of the tests' property: 1 "Non-refundable", 10 % off, breakfast, sold direct and on
// every brand; 2 "Channel rate", the standard price, moderate, sold on airbnb only; 3
// "Week saver", 20 % off, strict, at least 7 nights, sold direct.
const testPlans = `, "rate_plans":[
	{"id":1,"name":"Non-refundable","inclusions":"Breakfast","cancellation":{"policy":"non_refundable"},
	 "adjustment":{"type":"percent","value":"-10"},"sold_on":{"direct":true,"all_brands":true}},
	{"id":2,"name":"Channel rate","inclusions":"","cancellation":{"policy":"moderate"},
	 "adjustment":{"type":"amount","value":"0"},"sold_on":{"direct":false,"all_brands":false,"channels":["airbnb"]}},
	{"id":3,"name":"Week saver","inclusions":"","cancellation":{"policy":"strict"},
	 "adjustment":{"type":"percent","value":"-20"},"minimum_stay":7,"sold_on":{"direct":true,"all_brands":false}}]`

// markups gives account a 15 % markup on airbnb.
func (f fixture) markups(t *testing.T, account string) {
	f.settings(t, contract.Settings{AccountID: account, Version: 1, DefaultLeadSource: 3,
		ChannelMarkups: []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: contract.AdjustPercent, Value: "15"}}}})
}

// planStay is a stay of pid on plan for channel, from n days after base for nights.
func planStay(pid int64, base pricing.Date, n, nights int, plan int64, channel string) booking.Stay {
	return booking.Stay{PropertyID: pid, Checkin: base.AddDays(n), Checkout: base.AddDays(n + nights), Adults: 2,
		Services: &[]pricing.ServiceLine{}, RatePlanID: plan, Channel: channel}
}

func terms(t booking.Terms) string {
	var tiers []string
	for _, x := range t.Cancellation.Tiers {
		tiers = append(tiers, fmt.Sprintf("%d:%s", x.DaysBefore, x.Percent))
	}
	return fmt.Sprintf("%d %s [%s] %s %s", t.ID, t.Name, t.Inclusions, t.Cancellation.Policy, strings.Join(tiers, ","))
}

// TestRatePlanPricesAndTerms: getinfo and create price a stay on the plan asked for, with its
// terms; the booking records the plan, its name, its policy and the channel; a plan not sold
// direct is refused direct and accepted on its channel with the channel's markup; the quote
// lists every plan sold where it was asked that accepts the stay (the standard plan first),
// priced like it, in the currency asked for.
func TestRatePlanPricesAndTerms(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := unique("plans")
	const pid = 7
	f.planned(t, account, pid, 1, testPlans)
	f.settings(t, contract.Settings{AccountID: account, Version: 1, DefaultLeadSource: 3, ExchangeRates: map[string]string{"EUR": "0.5"},
		ChannelMarkups: []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: contract.AdjustPercent, Value: "15"}}}})
	base := pricing.DateOf(time.Now().UTC()).AddDays(40)

	for i, c := range []struct {
		name     string
		plan     int64
		channel  string
		currency string
		rent     string // 3 nights
		terms    string
		offers   string // "id:rent" of each bookable plan
	}{
		{"the standard plan, direct", 0, "", "", "300.00", "0 Standard [] flexible 1:100", "0:300.00 1:270.00"},
		{"non-refundable, direct", 1, "", "", "270.00", "1 Non-refundable [Breakfast] non_refundable ", "0:300.00 1:270.00"},
		{"the channel rate on airbnb, with its markup", 2, "airbnb", "", "345.00", "2 Channel rate [] moderate 5:100,1:50",
			"0:345.00 2:345.00"},
		{"the standard plan on airbnb, with its markup", 0, "airbnb", "", "345.00", "0 Standard [] flexible 1:100", "0:345.00 2:345.00"},
		{"a channel without a markup", 0, "vrbo", "", "300.00", "0 Standard [] flexible 1:100", "0:300.00"},
		{"in euros, every plan converted", 1, "", "EUR", "135.00", "1 Non-refundable [Breakfast] non_refundable ", "0:150.00 1:135.00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := planStay(pid, base, 4*i, 3, c.plan, c.channel)
			st.Currency = c.currency
			_, pr, err := f.svc.Quote(ctx, account, st, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := pr.Quote().TotalRent; got != c.rent || terms(pr.Terms) != c.terms {
				t.Fatalf("quote: rent %s terms %q, want %s %q", got, terms(pr.Terms), c.rent, c.terms)
			}
			var offers []string
			for _, o := range pr.Offers {
				offers = append(offers, strconv.FormatInt(o.ID, 10)+":"+o.TotalRent)
				if o.ID == pr.Terms.ID && (terms(o.Terms) != c.terms || o.GrandTotal != pr.Quote().GrandTotal) {
					t.Errorf("the plan quoted among the offers: %+v, quote %+v", o, pr.Terms)
				}
			}
			if strings.Join(offers, " ") != c.offers {
				t.Fatalf("offers %v, want %s", offers, c.offers)
			}
			// create books the same price and records the plan as it is now.
			b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: st, Party: ada})
			if err != nil {
				t.Fatal(err)
			}
			if b.Quote.TotalRent != c.rent || b.RatePlanID != c.plan || b.Channel != c.channel || b.Cancellation == nil ||
				terms(booking.Terms{ID: b.RatePlanID, Name: b.RatePlanName, Inclusions: pr.Terms.Inclusions, Cancellation: *b.Cancellation}) != c.terms {
				t.Fatalf("booking: %s plan %d %q %+v channel %q", b.Quote.TotalRent, b.RatePlanID, b.RatePlanName, b.Cancellation, b.Channel)
			}
			stored, err := f.st.Booking(ctx, account, b.BookingID)
			if err != nil || stored.RatePlanID != b.RatePlanID || stored.RatePlanName != b.RatePlanName || stored.Channel != b.Channel ||
				fmt.Sprint(stored.Cancellation) != fmt.Sprint(b.Cancellation) {
				t.Fatalf("stored %+v, %v", stored, err)
			}
		})
	}

	// Refused alike by getinfo and create, naming ratePlanId: a plan that does not exist, one
	// not sold direct, one not sold on the channel asked; nothing is held.
	for i, c := range []struct {
		name    string
		plan    int64
		channel string
		brand   int64
		want    string
	}{
		{"an unknown plan", 9, "", 0, "ratePlanId: rate plan 9 does not exist"},
		{"a channel's plan, direct", 2, "", 0, "ratePlanId: rate plan 2 is not sold"},
		{"a channel's plan on another channel", 2, "vrbo", 0, "ratePlanId: rate plan 2 is not sold"},
		{"a direct plan on a channel", 1, "airbnb", 0, "ratePlanId: rate plan 1 is not sold"},
		{"a plan not sold on brands, through a brand", 3, "", 1, "ratePlanId: rate plan 3 is not sold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.settings(t, contract.Settings{AccountID: account, Version: int64(10 + i), DefaultLeadSource: 3, ExchangeRates: map[string]string{"EUR": "0.5"},
				Brands: []contract.Brand{{ID: 1, Name: "Aurora"}}})
			st := planStay(pid, base, 30, 7, c.plan, c.channel)
			_, _, qerr := f.svc.Quote(ctx, account, st, "", c.brand)
			p := ada
			p.BrandID = c.brand
			_, cerr := f.svc.Create(ctx, account, booking.NewBooking{Stay: st, Party: p})
			var fe *booking.FieldError
			if !errors.As(qerr, &fe) || fe.Field != "ratePlanId" || !strings.HasPrefix(qerr.Error(), c.want) || cerr == nil || cerr.Error() != qerr.Error() {
				t.Fatalf("quote %v\ncreate %v\nwant %s…", qerr, cerr, c.want)
			}
			for d, o := range f.owners(t, account, pid, nights(st)) {
				if o != "" {
					t.Fatalf("a refused create left the night of %s held by %s", d, o)
				}
			}
		})
	}
	// Through a brand, a plan sold on every brand is quoted and booked, with the brand.
	p := ada
	p.BrandID = 1
	b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: planStay(pid, base, 40, 2, 1, ""), Party: p})
	if err != nil || b.RatePlanID != 1 || b.BrandID != 1 || b.Quote.TotalRent != "180.00" {
		t.Fatalf("plan 1 through brand 1: %v %+v", err, b)
	}
}

func nights(st booking.Stay) []string {
	var out []string
	for d := st.Checkin; d.Before(st.Checkout); d = d.AddDays(1) {
		out = append(out, d.String())
	}
	return out
}

// restrictionsOf are the property's restrictions and plan 1's own, on days after base:
// night 2 stopped; day 10 closed to arrival; day 20 closed to departure; arrivals on day
// 30 stay at most 3 nights; on day 40 at least 5; plan 1 stops night 52.
func restrictionsOf(base pricing.Date) string {
	d := func(n int) string { return base.AddDays(n).String() }
	return fmt.Sprintf(`, "restrictions":[
	  {"start_date":%q,"end_date":%q,"stop_sell":true},
	  {"start_date":%q,"end_date":%q,"closed_to_arrival":true},
	  {"start_date":%q,"end_date":%q,"closed_to_departure":true},
	  {"start_date":%q,"end_date":%q,"max_stay":3},
	  {"start_date":%q,"end_date":%q,"min_stay_arrival":5}],
	 "rate_plans":[{"id":1,"name":"Non-refundable","cancellation":{"policy":"non_refundable"},
	   "adjustment":{"type":"percent","value":"-10"},"sold_on":{"direct":true},
	   "restrictions":[{"start_date":%q,"end_date":%q,"stop_sell":true}]},
	  {"id":3,"name":"Week saver","cancellation":{"policy":"strict"},"adjustment":{"type":"percent","value":"-20"},
	   "minimum_stay":7,"sold_on":{"direct":true}}]`,
		d(2), d(2), d(10), d(10), d(20), d(20), d(30), d(30), d(40), d(40), d(52), d(52))
}

// TestRestrictionsRefuseAQuoteAndACreateAlike: each restriction refuses getinfo and create
// with the same error naming the same field, and nothing is held; the stays beside them are
// sold. Plan 1's own restriction refuses plan 1 only; plan 3's minimum stay plan 3 only.
func TestRestrictionsRefuseAQuoteAndACreateAlike(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := unique("restrict")
	const pid = 8
	base := pricing.DateOf(time.Now().UTC()).AddDays(40)
	f.planned(t, account, pid, 1, restrictionsOf(base))
	for _, c := range []struct {
		name       string
		in, nights int
		plan       int64
		field      string // "": sold
	}{
		{"a stopped night", 0, 4, 0, "checkin"},
		{"arriving on the stopped night", 2, 2, 0, "checkin"},
		{"leaving on the stopped night is sold", 0, 2, 0, ""},
		{"arriving on a day closed to arrival", 10, 2, 0, "checkin"},
		{"staying through a day closed to arrival is sold", 9, 3, 0, ""},
		{"leaving on a day closed to departure", 18, 2, 0, "checkout"},
		{"arriving on a day closed to departure is sold", 20, 2, 0, ""},
		{"longer than the maximum stay", 30, 4, 0, "checkout"},
		{"the maximum stay", 30, 3, 0, ""},
		{"shorter than the minimum stay on arrival", 40, 3, 0, "checkout"},
		{"the minimum stay on arrival", 40, 5, 0, ""},
		{"the plan's own stop-sell", 50, 4, 1, "checkin"},
		{"the plan's own stop-sell does not stop the standard plan", 50, 4, 0, ""},
		{"shorter than the plan's minimum stay", 60, 3, 3, "checkout"},
		{"the plan's minimum stay", 60, 7, 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := planStay(pid, base, c.in, c.nights, c.plan, "")
			_, _, qerr := f.svc.Quote(ctx, account, st, "", 0)
			b, cerr := f.svc.Create(ctx, account, booking.NewBooking{Stay: st, Party: ada})
			if c.field == "" {
				if qerr != nil || cerr != nil {
					t.Fatalf("quote %v, create %v", qerr, cerr)
				}
				if _, err := f.svc.Cancel(ctx, account, b.BookingID); err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *booking.FieldError
			if !errors.As(qerr, &fe) || fe.Field != c.field || cerr == nil || cerr.Error() != qerr.Error() {
				t.Fatalf("quote %v\ncreate %v\nwant both on %s", qerr, cerr, c.field)
			}
			for d, o := range f.owners(t, account, pid, nights(st)) {
				if o != "" {
					t.Fatalf("a refused create left the night of %s held by %s", d, o)
				}
			}
		})
	}
}

// TestUpdateKeepsThePlan: an update that does not name a plan keeps the booking's plan, its
// name and its policy as booked, though the owner renamed the plan and changed its policy
// since (the price follows the plan's adjustment now, as any update prices again); an update
// that names another plan records that plan's terms as they are now, and one that names the
// same plan is no change of plan; a booking whose plan was deleted is refused until the
// update names a plan; a move to another property must name the plan it takes there.
func TestUpdateKeepsThePlan(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := unique("keep-plan")
	const pid, other = 9, 10
	f.planned(t, account, pid, 1, testPlans)
	f.planned(t, account, other, 1, "")
	f.markups(t, account)
	base := pricing.DateOf(time.Now().UTC()).AddDays(40)
	b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: planStay(pid, base, 0, 3, 1, ""), Party: ada})
	if err != nil {
		t.Fatal(err)
	}
	booked := func(b booking.Booking) string {
		c := "<nil>"
		if b.Cancellation != nil {
			c = b.Cancellation.Policy
		}
		return fmt.Sprintf("%d %s %s %s %s", b.RatePlanID, b.RatePlanName, c, b.Channel, b.Quote.TotalRent)
	}
	if got := booked(b); got != "1 Non-refundable non_refundable  270.00" {
		t.Fatalf("booked %s", got)
	}
	// The owner renames plan 1, makes it moderate and 20 % off.
	f.planned(t, account, pid, 2, strings.Replace(strings.Replace(strings.Replace(testPlans,
		`"Non-refundable"`, `"Saver"`, 1), `{"policy":"non_refundable"}`, `{"policy":"moderate"}`, 1), `"-10"`, `"-20"`, 1))
	in, out := base.AddDays(1), base.AddDays(5)
	name := "Augusta"
	steps := []struct {
		name  string
		patch booking.Patch
		want  string
	}{
		{"a rename keeps the plan's name and policy as booked (its price is the plan's now, as any update prices again)",
			booking.Patch{FirstName: &name},
			"1 Non-refundable non_refundable  240.00"},
		{"new dates keep the plan as booked, priced as the plan is now", booking.Patch{Checkin: &in, Checkout: &out},
			"1 Non-refundable non_refundable  320.00"},
		{"the same plan named is no change of plan", booking.Patch{RatePlanID: ptr(int64(1))}, "1 Non-refundable non_refundable  320.00"},
		{"the standard plan named records its terms", booking.Patch{RatePlanID: ptr(int64(0))}, "0 Standard flexible  400.00"},
		{"plan 1 named again records its terms as they are now", booking.Patch{RatePlanID: ptr(int64(1))}, "1 Saver moderate  320.00"},
		{"a channel's plan on its channel", booking.Patch{RatePlanID: ptr(int64(2)), Channel: ptr("airbnb")}, "2 Channel rate moderate airbnb 460.00"},
		{"back to direct on the standard plan", booking.Patch{RatePlanID: ptr(int64(0)), Channel: ptr("")}, "0 Standard flexible  400.00"},
	}
	for _, s := range steps {
		u, err := f.svc.Update(ctx, account, b.BookingID, s.patch)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := booked(u); got != s.want {
			t.Fatalf("%s: %s, want %s", s.name, got, s.want)
		}
	}
	// The channel's plan, then direct again without naming the plan: not sold direct.
	if _, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{RatePlanID: ptr(int64(2)), Channel: ptr("airbnb")}); err != nil {
		t.Fatal(err)
	}
	var fe *booking.FieldError
	if _, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{Channel: ptr("")}); !errors.As(err, &fe) || fe.Field != "ratePlanId" {
		t.Fatalf("plan 2 direct: %v", err)
	}
	if u, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{RatePlanID: ptr(int64(1)), Channel: ptr("")}); err != nil ||
		booked(u) != "1 Saver moderate  320.00" {
		t.Fatalf("plan 1 direct: %v %s", err, booked(u))
	}
	// Moving to another property must name the plan there.
	o := int64(other)
	if _, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{PropertyID: &o}); !errors.As(err, &fe) || fe.Field != "ratePlanId" ||
		!strings.Contains(fe.Message, "rate plan 1 to another property") {
		t.Fatalf("a move without a plan: %v", err)
	}
	if u, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{PropertyID: &o, RatePlanID: ptr(int64(0))}); err != nil ||
		booked(u) != "0 Standard flexible  400.00" {
		t.Fatalf("a move onto the standard plan: %v %s", err, booked(u))
	}
	// A booking whose plan was deleted: refused until a plan is named.
	b, err = f.svc.Create(ctx, account, booking.NewBooking{Stay: planStay(pid, base, 20, 3, 3, ""), Party: ada})
	if err == nil {
		t.Fatal("3 nights on plan 3 (7 nights at least) booked")
	}
	b, err = f.svc.Create(ctx, account, booking.NewBooking{Stay: planStay(pid, base, 20, 7, 3, ""), Party: ada})
	if err != nil {
		t.Fatal(err)
	}
	f.planned(t, account, pid, 3, `, "rate_plans":[{"id":1,"name":"Saver","cancellation":{"policy":"moderate"},
	  "adjustment":{"type":"percent","value":"-20"},"sold_on":{"direct":true}}]`)
	if _, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{FirstName: &name}); !errors.As(err, &fe) || fe.Field != "ratePlanId" ||
		!strings.Contains(fe.Message, "rate plan 3 no longer exists") {
		t.Fatalf("an update of a booking on a deleted plan: %v", err)
	}
	if u, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{FirstName: &name, RatePlanID: ptr(int64(0))}); err != nil ||
		booked(u) != "0 Standard flexible  700.00" {
		t.Fatalf("moved to the standard plan: %v %s", err, booked(u))
	}
}

// TestConcurrentCreatesOnOnePlan: 30 creates of the same stay on one plan at once give one
// booking; the others are refused for the first night (status 8), none for the plan; then
// 40 creates of random overlapping stays on two plans leave every night held by exactly the
// reserved booking that lists it.
func TestConcurrentCreatesOnOnePlan(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := unique("plan-race")
	const pid = 11
	f.planned(t, account, pid, 1, testPlans)
	base := pricing.DateOf(time.Now().UTC()).AddDays(40)
	type outcome struct {
		b   booking.Booking
		err error
	}
	race := func(n int, stay func(i int) booking.Stay) []outcome {
		out := make([]outcome, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i].b, out[i].err = f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(i), Party: ada})
			}()
		}
		close(start)
		wg.Wait()
		return out
	}
	booked := 0
	for _, o := range race(30, func(int) booking.Stay { return planStay(pid, base, 0, 3, 1, "") }) {
		var ue *booking.UnavailableError
		switch {
		case o.err == nil:
			booked++
			if o.b.RatePlanID != 1 || o.b.Quote.TotalRent != "270.00" {
				t.Errorf("the booking: %+v", o.b)
			}
		case !errors.As(o.err, &ue) || ue.Date != base.String():
			t.Errorf("a losing create: %v", o.err)
		}
	}
	if booked != 1 {
		t.Fatalf("%d bookings of one stay", booked)
	}

	const span = 20
	outs := race(40, func(i int) booking.Stay { return planStay(pid, base, 5+(i*7)%span, 1+i%3, int64(i%2), "") })
	want := map[string]string{}
	for _, o := range outs {
		var ue *booking.UnavailableError
		if o.err != nil {
			if !errors.As(o.err, &ue) {
				t.Errorf("a create: %v", o.err)
			}
			continue
		}
		for _, n := range o.b.Nights {
			if w, dup := want[n]; dup {
				t.Errorf("night %s booked by %s and booking:%d", n, w, o.b.BookingID)
			}
			want[n] = "booking:" + strconv.FormatInt(o.b.BookingID, 10)
		}
	}
	var dates []string
	for i := 5; i < 5+span+3; i++ {
		dates = append(dates, base.AddDays(i).String())
	}
	for d, o := range f.owners(t, account, pid, dates) {
		if o != want[d] {
			t.Errorf("night %s held by %q, booked by %q", d, o, want[d])
		}
	}
}

// TestTenantsPlansApart: two accounts whose property and plan have the same ids, with other
// terms, quote and book at once; each sees its own plan's price, name and policy only.
func TestTenantsPlansApart(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a, b := unique("tenant-a"), unique("tenant-b")
	const pid = 12
	f.planned(t, a, pid, 1, `, "rate_plans":[{"id":1,"name":"A's plan","inclusions":"Breakfast","cancellation":{"policy":"non_refundable"},
	  "adjustment":{"type":"percent","value":"-10"},"sold_on":{"direct":true}}]`)
	f.planned(t, b, pid, 1, `, "rate_plans":[{"id":1,"name":"B's plan","inclusions":"Dinner","cancellation":{"policy":"custom",
	  "tiers":[{"days_before":60,"percent":"80"}]},"adjustment":{"type":"amount","value":"25"},"sold_on":{"direct":true}}]`)
	want := map[string]string{a: "1 A's plan [Breakfast] non_refundable  270.00", b: "1 B's plan [Dinner] custom 60:80 375.00"}
	base := pricing.DateOf(time.Now().UTC()).AddDays(40)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 10 {
		for _, account := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := planStay(pid, base, 4*i, 3, 1, "")
				_, pr, err := f.svc.Quote(ctx, account, st, "", 0)
				if err != nil {
					errs <- err
					return
				}
				if got := terms(pr.Terms) + " " + pr.Quote().TotalRent; got != want[account] {
					errs <- fmt.Errorf("%s quoted %s", account, got)
				}
				bk, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: st, Party: ada})
				if err != nil {
					errs <- err
					return
				}
				got := terms(booking.Terms{ID: bk.RatePlanID, Name: bk.RatePlanName, Inclusions: pr.Terms.Inclusions, Cancellation: *bk.Cancellation})
				if got+" "+bk.Quote.TotalRent != want[account] {
					errs <- fmt.Errorf("%s booked %s %s", account, got, bk.Quote.TotalRent)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
