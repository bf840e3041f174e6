package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/together"
)

// The revenue controls (rate plans, restrictions per date and their price, channel
// markups) through the domain service over a real store: what the relay publishes after
// each change, with which type, one version a change; a per-date price nobody touched keeps
// its text; concurrent changes of one property all land; accounts apart.

func (h *harness) ratePlan(t *testing.T, props *property.Properties, account, body string) int64 {
	t.Helper()
	req, err := property.DecodeRatePlan([]byte(body))
	must(t, err)
	id, err := props.ChangeRatePlan(ctx, account, req)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return id
}

func restrictOn(t *testing.T, props *property.Properties, account, body string) (int, error) {
	t.Helper()
	req, err := property.DecodeRestriction([]byte(body))
	must(t, err)
	return props.SetRestrictions(ctx, account, req)
}

func markupOn(t *testing.T, props *property.Properties, account, body string) {
	t.Helper()
	req, err := property.DecodeMarkup([]byte(body))
	must(t, err)
	if err := props.ChangeMarkup(ctx, account, req); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
}

// lastChange is the type of the event the relay would publish for the property now.
func (h *harness) lastChange(t *testing.T, account string, pid int64) string {
	t.Helper()
	msgs, err := h.st.Snapshot(ctx, recordID(account, pid))
	must(t, err)
	var e struct {
		Type string `json:"type"`
	}
	must(t, json.Unmarshal(msgs[0].Value, &e))
	return e.Type
}

// TestRevenuePublished: each resource's change is one write of the property, one version
// on, published as the snapshot with its type; the members read back as sent.
func TestRevenuePublished(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	props := h.props()
	props.SetClock(func() time.Time { return time.Date(2027, 6, 1, 9, 0, 0, 0, time.UTC) })
	pid := h.create(t, acct, "V1")
	_, err := h.st.ChangeSettings(ctx, acct, func(property.Settings) (property.AccountSettings, error) {
		return property.AccountSettings{Brands: &[]property.Brand{{ID: 1, Name: "Aurora"}}}, nil
	})
	must(t, err)
	must(t, h.repo.SetDailyPrices(ctx, acct, pid, []property.DayPrice{{Date: day("2027-07-03"), Price: d("945.00"), MinNights: 3},
		{Date: day("2027-07-04"), Price: d("200.50")}}))
	// A price stored with trailing zeros (as an older version wrote them) keeps its text
	// through the changes of other dates.
	_, err = db.Collection(collProperties).UpdateOne(ctx, bson.D{{Key: "_id", Value: recordID(acct, pid)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "prices.2027-07-03.price", Value: "945.00"}}}})
	must(t, err)
	version := h.state(t, acct, pid).Version

	step := func(what, wantType string) contract.Property {
		t.Helper()
		version++
		p := h.state(t, acct, pid)
		if p.Version != version {
			t.Fatalf("%s: version %d, want %d (one a change)", what, p.Version, version)
		}
		if got := h.lastChange(t, acct, pid); got != wantType {
			t.Errorf("%s: published as %s, want %s", what, got, wantType)
		}
		return p
	}

	h.ratePlan(t, props, acct, `{"action":"create","internal_code":"V1","rate_plan":{"name":"Non-refundable","inclusions":"Breakfast",
		"adjustment":{"type":"percent","value":"-10"},"ranges":[{"start_date":"2027-07-01","end_date":"2027-08-31","type":"percent","value":"-5"}],
		"minimum_stay":2,"cancellation":{"policy":"non_refundable"},"sold_on":{"direct":true,"brands":[1],"channels":["AirBnB","bookingcom"]}}}`)
	p := step("create a plan", contract.RatePlansUpdated)
	same(t, "the plan published", p.RatePlans, []contract.RatePlan{{ID: 1,
		PlanTerms:   contract.PlanTerms{Name: "Non-refundable", Inclusions: "Breakfast", Cancellation: &contract.Cancellation{Policy: "non_refundable"}},
		Adjustment:  contract.Adjustment{Type: "percent", Value: "-10"},
		Ranges:      []contract.RangeAdjustment{{StartDate: "2027-07-01", EndDate: "2027-08-31", Adjustment: contract.Adjustment{Type: "percent", Value: "-5"}}},
		MinimumStay: 2, SoldOn: contract.SoldOn{Direct: true, Brands: []int64{1}, Channels: []string{"airbnb", "bookingcom"}}}})
	if p.StandardPlan != nil {
		t.Errorf("standard plan terms never set: %+v", p.StandardPlan)
	}

	h.ratePlan(t, props, acct, `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"name":"Flexible rate",
		"cancellation":{"policy":"custom","tiers":[{"days_before":30,"percent":"100.00"},{"days_before":7,"percent":50.5}]}}}`)
	p = step("the standard plan's terms", contract.RatePlansUpdated)
	same(t, "standard terms", p.StandardPlan, &contract.PlanTerms{Name: "Flexible rate", Cancellation: &contract.Cancellation{Policy: "custom",
		Tiers: []contract.CancellationTier{{DaysBefore: 30, Percent: "100"}, {DaysBefore: 7, Percent: "50.5"}}}})

	if _, err := restrictOn(t, props, acct, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-10","weekdays":"Friday,Saturday"},
		{"start_date":"2027-12-24","end_date":"2027-12-26"}],"set":{"min_stay_arrival":3,"closed_to_arrival":true}}`); err != nil {
		t.Fatal(err)
	}
	p = step("restrictions", contract.RestrictionsUpdated)
	yes, three := true, 3
	run := func(start, end string) contract.Restriction {
		return contract.Restriction{StartDate: start, EndDate: end, MinStayArrival: &three, ClosedToArrival: &yes}
	}
	same(t, "runs", p.Restrictions, []contract.Restriction{run("2027-07-02", "2027-07-03"), run("2027-07-09", "2027-07-10"), run("2027-12-24", "2027-12-26")})

	if _, err := restrictOn(t, props, acct, `{"internal_code":"V1","rate_plan_id":1,"dates":[{"start_date":"2027-07-01","end_date":"2027-07-31"}],
		"set":{"min_stay_through":2,"stop_sell":false}}`); err != nil {
		t.Fatal(err)
	}
	p = step("a plan's restrictions", contract.RestrictionsUpdated)
	two, no := 2, false
	same(t, "the plan's runs", p.RatePlans[0].Restrictions, []contract.Restriction{{StartDate: "2027-07-01", EndDate: "2027-07-31", MinStayThrough: &two, StopSell: &no}})

	// The price: the date's price written where setprices writes it; a date nobody touched
	// keeps its stored text.
	if n, err := restrictOn(t, props, acct, `{"internal_code":"V1","dates":[{"start_date":"2027-07-04","end_date":"2027-07-05"}],"set":{"price":"180"}}`); err != nil || n != 2 {
		t.Fatalf("price: %d %v", n, err)
	}
	p = step("a price", contract.PricesUpdated)
	same(t, "prices", p.Prices, map[string]contract.DayPrice{"2027-07-03": {Price: "945.00", MinNights: 3}, "2027-07-04": {Price: "180"},
		"2027-07-05": {Price: "180"}})
	if _, err := restrictOn(t, props, acct, `{"internal_code":"V1","dates":[{"start_date":"2027-07-03","end_date":"2027-07-04"}],"clear":["price"]}`); err != nil {
		t.Fatal(err)
	}
	p = step("a price cleared", contract.PricesUpdated)
	same(t, "prices after a clear", p.Prices, map[string]contract.DayPrice{"2027-07-03": {MinNights: 3}, "2027-07-05": {Price: "180"}})
	if _, ok := raw(t, acct, pid).Lookup("prices", "2027-07-04").DocumentOK(); ok {
		t.Error("a cleared date is still stored")
	}

	markupOn(t, props, acct, `{"action":"set","internal_code":"V1","markup":{"channel":"VRBO","type":"amount","value":"5.50"}}`)
	p = step("a markup", contract.MarkupsUpdated)
	same(t, "markups", p.ChannelMarkups, []contract.Markup{{Channel: "vrbo", Adjustment: contract.Adjustment{Type: "amount", Value: "5.5"}}})

	// The account's markup is in its settings.
	markupOn(t, props, acct, `{"action":"set","markup":{"channel":"airbnb","type":"percent","value":"15"}}`)
	if s := h.publishedSettings(t, acct); len(s.ChannelMarkups) != 1 || s.ChannelMarkups[0].Channel != "airbnb" || s.ChannelMarkups[0].Value != "15" {
		t.Errorf("the account's markups: %+v", s.ChannelMarkups)
	}
	if h.state(t, acct, pid).Version != version {
		t.Error("the account's markup changed the property")
	}

	// A delete keeps the id taken; a refused change writes nothing.
	h.ratePlan(t, props, acct, `{"action":"delete","internal_code":"V1","rate_plan":{"id":1}}`)
	p = step("delete the plan", contract.RatePlansUpdated)
	if len(p.RatePlans) != 0 || p.Restrictions == nil {
		t.Errorf("after the delete: plans %+v, restrictions %+v", p.RatePlans, p.Restrictions)
	}
	if _, err := restrictOn(t, props, acct, `{"internal_code":"V1","rate_plan_id":1,"dates":[{"start_date":"2027-07-01","end_date":"2027-07-31"}],"set":{"stop_sell":true}}`); err == nil {
		t.Error("restrictions of a deleted plan")
	}
	if h.state(t, acct, pid).Version != version {
		t.Error("a refused change was written")
	}
	if id := h.ratePlan(t, props, acct, `{"action":"create","internal_code":"V1","rate_plan":{"name":"Again","adjustment":{"type":"amount","value":"1"}}}`); id != 2 {
		t.Errorf("a new plan after a delete has id %d, want 2", id)
	}
	// Every other section is untouched.
	if p := h.state(t, acct, pid); p.Content.Name != "Villa Aurora on the hill" || p.Prices["2027-07-03"].MinNights != 3 {
		t.Errorf("other sections: %+v", p)
	}
}

// TestConcurrentRestrictions: 20 clients set restrictions on different dates of one
// property at once, while others create plans: every date and every plan is there at the
// end, and each change took one version.
func TestConcurrentRestrictions(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	props := h.props()
	pid := h.create(t, acct, "V1")
	const n, plans = 20, 5
	start := pricing.MustDate("2030-03-01")
	together.Run(n+plans, func(i int) {
		if i >= n {
			h.ratePlan(t, props, acct, fmt.Sprintf(`{"action":"create","internal_code":"V1","rate_plan":{"name":"Plan %d","adjustment":{"type":"amount","value":"1"}}}`, i))
			return
		}
		d := start.AddDays(2 * i).String()
		if _, err := restrictOn(t, props, acct, fmt.Sprintf(`{"internal_code":"V1","dates":[{"start_date":%q,"end_date":%q}],"set":{"max_stay":%d}}`, d, d, i+1)); err != nil {
			t.Error(err)
		}
	})
	p := h.state(t, acct, pid)
	if len(p.Restrictions) != n {
		t.Fatalf("%d runs, want %d: %+v", len(p.Restrictions), n, p.Restrictions)
	}
	for i, r := range p.Restrictions {
		if d := start.AddDays(2 * i).String(); r.StartDate != d || r.EndDate != d || r.MaxStay == nil || *r.MaxStay != i+1 {
			t.Errorf("run %d: %+v, want %s max %d", i, r, d, i+1)
		}
	}
	ids := []int64{}
	for _, rp := range p.RatePlans {
		ids = append(ids, rp.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("plan ids %v", ids)
	}
	if p.Version != 1+n+plans {
		t.Errorf("version %d, want %d", p.Version, 1+n+plans)
	}
}

// TestRevenueAccountsApart: two accounts with the same internal code change their plans at
// once; each sees its own only.
func TestRevenueAccountsApart(t *testing.T) {
	h := newHarness(t)
	props := h.props()
	accts := []string{newAccount(), newAccount()}
	for _, a := range accts {
		h.create(t, a, "V1")
	}
	const each = 6
	together.Run(2*each, func(i int) {
		a := accts[i%2]
		h.ratePlan(t, props, a, fmt.Sprintf(`{"action":"create","internal_code":"V1","rate_plan":{"name":"%s plan %d","adjustment":{"type":"amount","value":"1"}}}`, a, i))
		markupOn(t, props, a, fmt.Sprintf(`{"action":"set","internal_code":"V1","markup":{"channel":"c%d","type":"amount","value":"1"}}`, i))
	})
	for _, a := range accts {
		_, plans, err := props.RatePlans(ctx, a, "V1")
		must(t, err)
		if len(plans) != each {
			t.Errorf("account %s has %d plans, want %d", a, len(plans), each)
		}
		for _, p := range plans {
			if !strings.HasPrefix(p.Name, a+" ") {
				t.Errorf("account %s sees plan %q", a, p.Name)
			}
		}
		list, err := props.Markups(ctx, a, "V1")
		must(t, err)
		if len(list) != each {
			t.Errorf("account %s has %d markups", a, len(list))
		}
	}
}

// TestRevenueOfADeletedProperty: a deleted property's plans are as missing as the property.
func TestRevenueOfADeletedProperty(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	props := h.props()
	pid := h.create(t, acct, "V1")
	h.ratePlan(t, props, acct, `{"action":"create","internal_code":"V1","rate_plan":{"name":"A","adjustment":{"type":"amount","value":"1"}}}`)
	must(t, h.repo.Delete(ctx, acct, "V1"))
	_, err := h.st.ChangeRevenue(ctx, acct, code("V1"), func(*property.Revenue) (string, error) { return contract.RatePlansUpdated, nil })
	isNotFound(t, "ChangeRevenue of a deleted property", err)
	_, err = h.st.Revenue(ctx, acct, code("V1"))
	isNotFound(t, "Revenue of a deleted property", err)
	if plans, ok := raw(t, acct, pid).Lookup("rate_plans").ArrayOK(); !ok || len(mustValues(t, plans)) != 1 {
		t.Error("the deleted property's document lost its plans")
	}
}

func mustValues(t *testing.T, a bson.RawArray) []bson.RawValue {
	t.Helper()
	v, err := a.Values()
	must(t, err)
	return v
}
