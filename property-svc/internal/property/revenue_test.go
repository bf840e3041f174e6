package property_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields/fieldstest"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/property-svc/internal/property"
)

// The revenue resources' rules (docs/rate-plans.md, "Interface A"): the decoders' tables,
// then the service's rules over memRepo's revenue, which keeps each property's as the
// store's ChangeRevenue does (change given a copy of the state in force, its result kept
// whole or, on an error, not at all). The store's tests run the writes on a real server.

func (m *memRepo) rev(code string) (*property.Revenue, error) {
	if _, ok := m.codes[code]; !ok {
		return nil, property.ErrNotFound
	}
	if m.revs == nil {
		m.revs = map[string]*property.Revenue{}
	}
	r, ok := m.revs[code]
	if !ok {
		r = &property.Revenue{Restrictions: property.Restrictions{}, Prices: map[pricing.Date]property.DatePrice{}}
		m.revs[code] = r
	}
	return r, nil
}

// copyRevenue is r with its own lists and maps, as a read from the store is.
func copyRevenue(r property.Revenue) property.Revenue {
	r.Plans = slices.Clone(r.Plans)
	for i := range r.Plans {
		r.Plans[i].Restrictions = maps.Clone(r.Plans[i].Restrictions)
	}
	r.Restrictions = maps.Clone(r.Restrictions)
	r.Prices = maps.Clone(r.Prices)
	r.Markups = slices.Clone(r.Markups)
	return r
}

func (m *memRepo) Revenue(_ context.Context, _ string, ref property.PropertyRef) (property.Revenue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.rev(ref.InternalCode)
	if err != nil {
		return property.Revenue{}, err
	}
	return copyRevenue(*r), nil
}

func (m *memRepo) ChangeRevenue(_ context.Context, _ string, ref property.PropertyRef, change func(*property.Revenue) (string, error)) (property.Revenue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.rev(ref.InternalCode)
	if err != nil {
		return property.Revenue{}, err
	}
	next := copyRevenue(*r)
	typ, err := change(&next)
	if err != nil {
		return property.Revenue{}, err
	}
	*r = copyRevenue(next)
	m.types = append(m.types, typ)
	return next, nil
}

func (m *memRepo) ReadSettings(context.Context, string) (property.Settings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st, nil
}

// ---------------------------------------------------------------------------------------
// /api/property-rateplan

const ratePlanCreate = `{"action":"create","internal_code":"V1","rate_plan":{"name":"Non-refundable","inclusions":"Breakfast",
	"adjustment":{"type":"percent","value":"-10"},
	"ranges":[{"start_date":"2027-07-01","end_date":"2027-08-31","type":"percent","value":"-5"}],
	"minimum_stay":2,"cancellation":{"policy":"non_refundable"},
	"sold_on":{"direct":true,"all_brands":false,"brands":[1],"channels":["airbnb","bookingcom"]}}}`

func decodeRatePlan(body []byte) error {
	_, err := property.DecodeRatePlan(body)
	return err
}

// ranges is n ranges of one day each, none overlapping.
func ranges(n int) []any {
	out := make([]any, n)
	for i := range out {
		d := pricing.MustDate("2027-01-01").AddDays(i).String()
		out[i] = map[string]any{"start_date": d, "end_date": d, "type": "amount", "value": "5"}
	}
	return out
}

// tiers is n custom tiers, each days_before once.
func tiers(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"days_before": i, "percent": "10"}
	}
	return out
}

func TestDecodeRatePlan(t *testing.T) {
	const cancel, sold = "rate_plan.cancellation", "rate_plan.sold_on"
	standard := []fieldstest.Edit{set("action", "update"), set("rate_plan.id", 0), set("rate_plan.adjustment", del),
		set("rate_plan.ranges", del), set("rate_plan.minimum_stay", del), set("rate_plan.sold_on", del)}
	rows := []row{
		tc("valid create", ""),
		tc("action missing", "action: is required", set("action", del)),
		tc("action unknown", "action: must be one of create, update, delete, list", set("action", "copy")),
		tc("internal_code missing", "internal_code: is required", set("internal_code", del)),
		tc("internal_code 11 chars", "internal_code: must be at most 10 characters", set("internal_code", chars(11))),
		tc("rate_plan missing", "rate_plan: is required", set("rate_plan", del)),
		tc("rate_plan not an object", "rate_plan: must be an object", set("rate_plan", "plan")),
		tc("list reads no rate_plan", "", set("action", "list"), set("rate_plan", del)),
		tc("list ignores a bad rate_plan", "", set("action", "list"), set("rate_plan.name", "")),
		tc("name missing on create", "rate_plan.name: is required", set("rate_plan.name", del)),
		tc("name blank on create", "rate_plan.name: is required", set("rate_plan.name", " ")),
		tc("name 100 chars", "", set("rate_plan.name", chars(100))),
		tc("name 101 chars", "rate_plan.name: must be at most 100 characters", set("rate_plan.name", chars(101))),
		tc("inclusions absent", "", set("rate_plan.inclusions", del)),
		tc("inclusions 1000 chars", "", set("rate_plan.inclusions", chars(1000))),
		tc("inclusions 1001 chars", "rate_plan.inclusions: must be at most 1000 characters", set("rate_plan.inclusions", chars(1001))),
		tc("adjustment missing on create", "rate_plan.adjustment: is required", set("rate_plan.adjustment", del)),
		tc("adjustment not an object", "rate_plan.adjustment: must be an object", set("rate_plan.adjustment", "-10")),
		tc("adjustment type missing", "rate_plan.adjustment.type: is required", set("rate_plan.adjustment.type", del)),
		tc("adjustment type any case", "", set("rate_plan.adjustment.type", "PERCENT")),
		tc("adjustment type unknown", "rate_plan.adjustment.type: must be one of percent, amount", set("rate_plan.adjustment.type", "fixed")),
		tc("adjustment value missing", "rate_plan.adjustment.value: is required", set("rate_plan.adjustment.value", del)),
		tc("adjustment value a number", "", set("rate_plan.adjustment.value", -12.5)),
		tc("adjustment value not a number", "rate_plan.adjustment.value: must be a number", set("rate_plan.adjustment.value", "ten")),
		tc("percent -100", "", set("rate_plan.adjustment.value", "-100")),
		tc("percent -100.01", "rate_plan.adjustment.value: must be between -100 and 1000", set("rate_plan.adjustment.value", "-100.01")),
		tc("percent 1000", "", set("rate_plan.adjustment.value", "1000")),
		tc("percent 1000.5", "rate_plan.adjustment.value: must be between -100 and 1000", set("rate_plan.adjustment.value", "1000.5")),
		tc("percent 3 decimals", "rate_plan.adjustment.value: must have at most 2 decimal places", set("rate_plan.adjustment.value", "-10.125")),
		tc("amount -2147483647", "", set("rate_plan.adjustment.type", "amount"), set("rate_plan.adjustment.value", "-2147483647")),
		tc("amount 2147483648", "rate_plan.adjustment.value: must be between -2147483647 and 2147483647",
			set("rate_plan.adjustment.type", "amount"), set("rate_plan.adjustment.value", "2147483648")),
		tc("amount 3 decimals", "rate_plan.adjustment.value: must have at most 2 decimal places",
			set("rate_plan.adjustment.type", "amount"), set("rate_plan.adjustment.value", "5.001")),
		tc("ranges absent", "", set("rate_plan.ranges", del)),
		tc("ranges empty", "", set("rate_plan.ranges", []any{})),
		tc("ranges 50", "", set("rate_plan.ranges", ranges(50))),
		tc("ranges 51", "rate_plan.ranges: must have at most 50 items", set("rate_plan.ranges", ranges(51))),
		tc("ranges not a list", "rate_plan.ranges: must be an array", set("rate_plan.ranges", "summer")),
		tc("range start missing", "rate_plan.ranges[0].start_date: is required", set("rate_plan.ranges[0].start_date", del)),
		tc("range start impossible", "rate_plan.ranges[0].start_date: must be a valid date (YYYY-MM-DD)", set("rate_plan.ranges[0].start_date", "2027-02-29")),
		tc("range end before start", "rate_plan.ranges[0].end_date: must not be before start_date", set("rate_plan.ranges[0].end_date", "2027-06-30")),
		tc("range in year 0", "rate_plan.ranges[0].start_date: must be a valid date (YYYY-MM-DD)", set("rate_plan.ranges[0].start_date", "0000-12-31")),
		tc("range one day", "", set("rate_plan.ranges[0].end_date", "2027-07-01")),
		tc("range 1096 days", "", set("rate_plan.ranges[0].start_date", "2027-01-01"), set("rate_plan.ranges[0].end_date", "2029-12-31")),
		tc("range 1097 days", "rate_plan.ranges[0].end_date: must be at most 1095 days after start_date (a range holds at most 1096 dates)",
			set("rate_plan.ranges[0].start_date", "2027-01-01"), set("rate_plan.ranges[0].end_date", "2030-01-01")),
		tc("range type missing", "rate_plan.ranges[0].type: is required", set("rate_plan.ranges[0].type", del)),
		tc("range value out of range", "rate_plan.ranges[0].value: must be between -100 and 1000", set("rate_plan.ranges[0].value", "-101")),
		tc("ranges overlap", "rate_plan.ranges[1].start_date: overlaps ranges[0]",
			set("rate_plan.ranges[1]", obj(`{"start_date":"2027-08-31","end_date":"2027-09-10","type":"amount","value":"5"}`))),
		tc("ranges touch", "", set("rate_plan.ranges[1]", obj(`{"start_date":"2027-09-01","end_date":"2027-09-10","type":"amount","value":"5"}`))),
		tc("range inside another", "rate_plan.ranges[1].start_date: overlaps ranges[0]",
			set("rate_plan.ranges[1]", obj(`{"start_date":"2027-07-10","end_date":"2027-07-12","type":"amount","value":"5"}`))),
		tc("minimum_stay 0", "", set("rate_plan.minimum_stay", 0)),
		tc("minimum_stay 365", "", set("rate_plan.minimum_stay", "365")),
		tc("minimum_stay 366", "rate_plan.minimum_stay: must be between 0 and 365", set("rate_plan.minimum_stay", 366)),
		tc("minimum_stay negative", "rate_plan.minimum_stay: must be between 0 and 365", set("rate_plan.minimum_stay", -1)),
		tc("minimum_stay fraction", "rate_plan.minimum_stay: must be a whole number", set("rate_plan.minimum_stay", 2.5)),
		tc("cancellation absent", "", set("rate_plan.cancellation", del)),
		tc("cancellation not an object", "rate_plan.cancellation: must be an object", set("rate_plan.cancellation", "strict")),
		tc("policy missing", cancel+".policy: is required", set(cancel+".policy", del)),
		tc("policy any case", "", set(cancel+".policy", "STRICT")),
		tc("policy unknown", cancel+".policy: must be one of flexible, moderate, strict, non_refundable, custom", set(cancel+".policy", "lenient")),
		tc("custom without tiers", cancel+".tiers: is required", set(cancel+".policy", "custom")),
		tc("custom with no tier", cancel+".tiers: must have at least 1 item", set(cancel+".policy", "custom"), set(cancel+".tiers", []any{})),
		tc("custom 10 tiers", "", set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(10))),
		tc("custom 11 tiers", cancel+".tiers: must have at most 10 items", set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(11))),
		tc("tiers with a named policy", cancel+".tiers: must not be sent with policy non_refundable (only with custom)", set(cancel+".tiers", tiers(1))),
		tc("no tiers with a named policy", "", set(cancel+".tiers", []any{})),
		tc("tier days 730", "", set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(1)), set(cancel+".tiers[0].days_before", 730)),
		tc("tier days 731", cancel+".tiers[0].days_before: must be between 0 and 730",
			set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(1)), set(cancel+".tiers[0].days_before", 731)),
		tc("tier days missing", cancel+".tiers[0].days_before: is required",
			set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(1)), set(cancel+".tiers[0].days_before", del)),
		tc("tier percent 100", "", set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(1)), set(cancel+".tiers[0].percent", 100)),
		tc("tier percent 100.01", cancel+".tiers[0].percent: must be between 0 and 100",
			set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(1)), set(cancel+".tiers[0].percent", "100.01")),
		tc("tier percent 3 decimals", cancel+".tiers[0].percent: must have at most 2 decimal places",
			set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(1)), set(cancel+".tiers[0].percent", "33.333")),
		tc("tier days twice", cancel+".tiers[1].days_before: duplicates "+cancel+".tiers[0]",
			set(cancel+".policy", "custom"), set(cancel+".tiers", tiers(2)), set(cancel+".tiers[1].days_before", 0)),
		tc("sold_on absent", "", set("rate_plan.sold_on", del)),
		tc("sold_on not an object", "rate_plan.sold_on: must be an object", set("rate_plan.sold_on", "direct")),
		tc("direct not a boolean", sold+".direct: must be a boolean", set(sold+".direct", "yes")),
		tc("all_brands as 1", "", set(sold+".all_brands", "1")),
		tc("brands 0", sold+".brands[0]: must be between 1 and 2147483647", set(sold+".brands[0]", 0)),
		tc("brand twice", sold+".brands: lists brand 1 twice", set(sold+".brands[1]", "1")),
		tc("brands 100", "", set(sold+".brands", distinctInts(100))),
		tc("brands 101", sold+".brands: must have at most 100 items", set(sold+".brands", distinctInts(101))),
		tc("channel any case", "", set(sold+".channels[0]", "AirBnB")),
		tc("channel with a space", sold+".channels[0]: must contain only letters a-z, digits, _ and -", set(sold+".channels[0]", "air bnb")),
		tc("channel 32 chars", "", set(sold+".channels[0]", chars(32))),
		tc("channel 33 chars", sold+".channels[0]: must be at most 32 characters", set(sold+".channels[0]", chars(33))),
		tc("channel blank", sold+".channels[0]: must not be empty", set(sold+".channels[0]", "")),
		tc("channel twice in two cases", sold+".channels: lists airbnb twice", set(sold+".channels[1]", "AIRBNB")),
		tc("channels 20", "", set(sold+".channels", distinctNames(20))),
		tc("channels 21", sold+".channels: must have at most 20 items", set(sold+".channels", distinctNames(21))),
		tc("update: members optional", "", set("action", "update"), set("rate_plan", obj(`{"id":1}`))),
		tc("update: id missing", "rate_plan.id: is required", set("action", "update")),
		tc("update: id negative", "rate_plan.id: must be between 0 and 2147483647", set("action", "update"), set("rate_plan.id", -1)),
		tc("update: id too large", "rate_plan.id: must be between 0 and 2147483647", set("action", "update"), set("rate_plan.id", "2147483648")),
		tc("update: name blank", "rate_plan.name: must not be blank", set("action", "update"), set("rate_plan.id", 1), set("rate_plan.name", "")),
		tc("update the standard plan's terms", "", standard...),
		tc("the standard plan's adjustment", "rate_plan.adjustment: the standard plan is the rates themselves",
			append(standard, set("rate_plan.adjustment", obj(`{"type":"amount","value":"5"}`)))...),
		tc("the standard plan's ranges", "rate_plan.ranges: the standard plan is the rates themselves", append(standard, set("rate_plan.ranges", []any{}))...),
		tc("the standard plan's minimum_stay", "rate_plan.minimum_stay: the standard plan is the rates themselves",
			append(standard, set("rate_plan.minimum_stay", 3))...),
		tc("the standard plan's sold_on", "rate_plan.sold_on: the standard plan is the rates themselves",
			append(standard, set("rate_plan.sold_on", obj(`{"direct":true}`)))...),
		tc("the standard plan's name blank", "rate_plan.name: must not be blank", append(standard, set("rate_plan.name", ""))...),
		tc("delete reads only the id", "", set("action", "delete"), set("rate_plan", obj(`{"id":"3","name":"","adjustment":"x"}`))),
		tc("delete without id", "rate_plan.id: is required", set("action", "delete"), set("rate_plan", obj(`{}`))),
		tc("delete the standard plan", "rate_plan.id: the standard plan (id 0) cannot be deleted", set("action", "delete"), set("rate_plan", obj(`{"id":0}`))),
	}
	check(t, ratePlanCreate, rows, decodeRatePlan)
}

func distinctInts(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func distinctNames(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("channel-%d", i)
	}
	return out
}

func TestDecodeRatePlanValues(t *testing.T) {
	req, err := property.DecodeRatePlan([]byte(strings.Replace(ratePlanCreate, `"AIRBNB"`, `"airbnb"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case req.Action != property.Create || req.InternalCode != "V1" || *req.Name != "Non-refundable" || *req.Inclusions != "Breakfast":
		t.Errorf("request %+v", req)
	case req.Adjustment.Type != property.AdjustPercent || !req.Adjustment.Value.Equal(dec("-10")):
		t.Errorf("adjustment %+v", req.Adjustment)
	case len(*req.Ranges) != 1 || (*req.Ranges)[0].Start != pricing.MustDate("2027-07-01") || (*req.Ranges)[0].End != pricing.MustDate("2027-08-31") ||
		!(*req.Ranges)[0].Value.Equal(dec("-5")):
		t.Errorf("ranges %+v", *req.Ranges)
	case *req.MinimumStay != 2 || req.Cancellation.Policy != property.CancelNonRefundable:
		t.Errorf("minimum stay and cancellation %+v %+v", *req.MinimumStay, req.Cancellation)
	case !*req.SoldOn.Direct || *req.SoldOn.AllBrands || !slices.Equal(*req.SoldOn.Brands, []int64{1}) ||
		!slices.Equal(*req.SoldOn.Channels, []string{"airbnb", "bookingcom"}):
		t.Errorf("sold on %+v", req.SoldOn)
	}
	req, err = property.DecodeRatePlan([]byte(`{"action":"create","internal_code":"V1","rate_plan":{"name":"X","adjustment":{"type":"Amount","value":"-7.5"},
		"cancellation":{"policy":"Custom","tiers":[{"days_before":"30","percent":"100"},{"days_before":7,"percent":50.5}]},"sold_on":{"channels":["VRBO"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.Adjustment.Type != property.AdjustAmount || req.Cancellation.Policy != property.CancelCustom || len(req.Cancellation.Tiers) != 2 ||
		req.Cancellation.Tiers[1].DaysBefore != 7 || !req.Cancellation.Tiers[1].Percent.Equal(dec("50.5")) ||
		req.SoldOn.Direct != nil || req.SoldOn.Brands != nil || !slices.Equal(*req.SoldOn.Channels, []string{"vrbo"}) ||
		req.Ranges != nil || req.MinimumStay != nil {
		t.Errorf("custom policy, amount, channels in lower case: %+v %+v %+v", req.Adjustment, req.Cancellation, req.SoldOn)
	}
}

// ratePlan sends a body through the decoder and the domain.
func ratePlan(t *testing.T, props *property.Properties, body string) (int64, error) {
	t.Helper()
	req, err := property.DecodeRatePlan([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.ChangeRatePlan(context.Background(), "1001", req)
}

func mustPlan(t *testing.T, props *property.Properties, body string, want int64) {
	t.Helper()
	if id, err := ratePlan(t, props, body); err != nil || id != want {
		t.Fatalf("%s: %d %v, want plan %d", body, id, err, want)
	}
}

const planBody = `{"action":"create","internal_code":"V1","rate_plan":{"name":%q,"adjustment":{"type":"percent","value":"-10"}}}`

// TestRatePlanRules: the rules of a property's plans that need its stored state.
func TestRatePlanRules(t *testing.T) {
	for _, r := range []struct {
		name, body, want string
	}{
		{"a name of another plan, in another case", fmt.Sprintf(planBody, "NON-REFUNDABLE"), "rate plan name already used"},
		{"the standard plan's name", fmt.Sprintf(planBody, "standard"), "rate plan name already used"},
		{"another name", fmt.Sprintf(planBody, "Weekly"), ""},
		{"rename a plan to its own name in another case", `{"action":"update","internal_code":"V1","rate_plan":{"id":1,"name":"NON-refundable"}}`, ""},
		{"rename a plan to another's", `{"action":"update","internal_code":"V1","rate_plan":{"id":1,"name":"Standard"}}`, "rate plan name already used"},
		{"rename the standard plan to a derived plan's", `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"name":"non-refundable"}}`,
			"rate plan name already used"},
		{"rename the standard plan", `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"name":"Flexible"}}`, ""},
		{"update an unknown plan", `{"action":"update","internal_code":"V1","rate_plan":{"id":9,"name":"X"}}`, "rate plan not found"},
		{"delete an unknown plan", `{"action":"delete","internal_code":"V1","rate_plan":{"id":9}}`, "rate plan not found"},
		{"an unknown property", strings.Replace(fmt.Sprintf(planBody, "X"), `"V1"`, `"V9"`, 1), "property not found"},
		{"a brand of the account", `{"action":"create","internal_code":"V1","rate_plan":{"name":"B","adjustment":{"type":"amount","value":"1"},"sold_on":{"brands":[4]}}}`, ""},
		{"brands the account has not", `{"action":"create","internal_code":"V1","rate_plan":{"name":"B","adjustment":{"type":"amount","value":"1"},"sold_on":{"brands":[5,4,6]}}}`,
			"rate_plan.sold_on.brands: no brand of this account has id 5; rate_plan.sold_on.brands: no brand of this account has id 6"},
	} {
		t.Run(r.name, func(t *testing.T) {
			props, repo := newMemProperties()
			repo.st.Brands = []property.Brand{{ID: 1, Name: "A"}, {ID: 4, Name: "D"}}
			mustPlan(t, props, ratePlanCreate, 1)
			_, err := ratePlan(t, props, r.body)
			if got := errString(err); !containsWant(got, r.want) {
				t.Fatalf("got %q, want %q", got, r.want)
			}
			if err != nil && len(repo.types) != 1 {
				t.Errorf("a refused change was written: %v", repo.types)
			}
		})
	}
}

// TestRatePlanLife: create, update, list and delete, ids never given again, and the terms
// of the standard plan.
func TestRatePlanLife(t *testing.T) {
	props, repo := newMemProperties()
	repo.st.Brands = []property.Brand{{ID: 1, Name: "A"}}
	ctx := context.Background()
	std, plans, err := props.RatePlans(ctx, "1001", "V1")
	if err != nil || std.Name != "Standard" || std.Cancellation.Policy != property.CancelFlexible || std.Inclusions != "" || len(plans) != 0 {
		t.Fatalf("a new property's plans: %+v %+v %v", std, plans, err)
	}
	mustPlan(t, props, ratePlanCreate, 1)
	mustPlan(t, props, fmt.Sprintf(planBody, "Two"), 2)
	mustPlan(t, props, fmt.Sprintf(planBody, "Three"), 3)
	mustPlan(t, props, `{"action":"delete","internal_code":"V1","rate_plan":{"id":3}}`, 3)
	mustPlan(t, props, `{"action":"delete","internal_code":"V1","rate_plan":{"id":2}}`, 2)
	// A deleted plan's id, the last one's too, is never given again.
	mustPlan(t, props, fmt.Sprintf(planBody, "Four"), 4)
	// A plan created without cancellation or sold_on: flexible, sold direct only.
	_, plans, _ = props.RatePlans(ctx, "1001", "V1")
	if ids := []int64{plans[0].ID, plans[1].ID}; len(plans) != 2 || !slices.Equal(ids, []int64{1, 4}) {
		t.Fatalf("plans %+v", plans)
	}
	if p := plans[1]; p.Cancellation.Policy != property.CancelFlexible || !p.SoldOn.Direct || p.SoldOn.AllBrands || p.MinimumStay != 0 || p.Inclusions != "" {
		t.Errorf("defaults of a new plan: %+v", p)
	}
	// A sold_on sent on create is all of it: direct not sent is false.
	mustPlan(t, props, `{"action":"create","internal_code":"V1","rate_plan":{"name":"Airbnb only","adjustment":{"type":"amount","value":"3"},"sold_on":{"channels":["airbnb"]}}}`, 5)
	_, plans, _ = props.RatePlans(ctx, "1001", "V1")
	if p := plans[2]; p.SoldOn.Direct || !slices.Equal(p.SoldOn.Channels, []string{"airbnb"}) {
		t.Errorf("sold_on sent on create: %+v", p.SoldOn)
	}

	// Update changes the members sent and keeps the others; lists sent replace.
	mustPlan(t, props, `{"action":"update","internal_code":"V1","rate_plan":{"id":1,"inclusions":"","minimum_stay":5,
		"sold_on":{"channels":["vrbo"]},"ranges":[]}}`, 1)
	_, plans, _ = props.RatePlans(ctx, "1001", "V1")
	p := plans[0]
	switch {
	case p.Name != "Non-refundable" || p.Inclusions != "" || p.MinimumStay != 5 || p.Cancellation.Policy != property.CancelNonRefundable:
		t.Errorf("terms after the update: %+v", p)
	case !p.Adjustment.Value.Equal(dec("-10")) || len(p.Ranges) != 0:
		t.Errorf("adjustment after the update: %+v %+v", p.Adjustment, p.Ranges)
	case !p.SoldOn.Direct || !slices.Equal(p.SoldOn.Brands, []int64{1}) || !slices.Equal(p.SoldOn.Channels, []string{"vrbo"}):
		t.Errorf("sold_on after the update: %+v", p.SoldOn)
	}

	// The standard plan's terms.
	mustPlan(t, props, `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"name":"Flexible rate","inclusions":"Nothing",
		"cancellation":{"policy":"custom","tiers":[{"days_before":14,"percent":"100"}]}}}`, 0)
	mustPlan(t, props, `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"cancellation":{"policy":"moderate"}}}`, 0)
	std, _, _ = props.RatePlans(ctx, "1001", "V1")
	if std.Name != "Flexible rate" || std.Inclusions != "Nothing" || std.Cancellation.Policy != property.CancelModerate || len(std.Cancellation.Tiers) != 0 {
		t.Errorf("standard terms: %+v %+v", std, std.Cancellation)
	}
	// The old standard name is free again.
	mustPlan(t, props, fmt.Sprintf(planBody, "Standard"), 6)
	for _, typ := range repo.types {
		if typ != contract.RatePlansUpdated {
			t.Errorf("event type %s", typ)
		}
	}
}

// TestRatePlanLimit: at most 20 derived plans; a deleted one makes room.
func TestRatePlanLimit(t *testing.T) {
	props, _ := newMemProperties()
	for i := 1; i <= property.MaxRatePlans; i++ {
		mustPlan(t, props, fmt.Sprintf(planBody, fmt.Sprintf("P%d", i)), int64(i))
	}
	_, err := ratePlan(t, props, fmt.Sprintf(planBody, "P21"))
	if got := errString(err); !containsWant(got, "rate_plan: the property already has 20 rate plans, the most it may have") {
		t.Errorf("21st plan: %q", got)
	}
	mustPlan(t, props, `{"action":"delete","internal_code":"V1","rate_plan":{"id":7}}`, 7)
	mustPlan(t, props, fmt.Sprintf(planBody, "P21"), 21)
}

// ---------------------------------------------------------------------------------------
// /api/property-restriction

const restrictionSet = `{"internal_code":"V1","rate_plan_id":1,
	"dates":[{"start_date":"2027-07-01","end_date":"2027-07-31","weekdays":"Friday,Saturday"}],
	"set":{"min_stay_arrival":3,"min_stay_through":2,"max_stay":14,"closed_to_arrival":true,"closed_to_departure":false,"stop_sell":false},
	"clear":["stop_sell"]}`

func decodeRestriction(body []byte) error {
	_, err := property.DecodeRestriction(body)
	return err
}

func TestDecodeRestriction(t *testing.T) {
	propertyLevel := set("rate_plan_id", del)
	rows := []row{
		tc("valid", "", set("clear", del)),
		tc("a member both set and cleared", "clear[0]: stop_sell is both set and cleared"),
		tc("internal_code missing", "internal_code: is required", set("clear", del), set("internal_code", del)),
		tc("internal_code 11 chars", "internal_code: must be at most 10 characters", set("clear", del), set("internal_code", chars(11))),
		tc("rate_plan_id absent", "", set("clear", del), propertyLevel),
		tc("rate_plan_id 0", "", set("clear", del), set("rate_plan_id", 0)),
		tc("rate_plan_id as a string", "", set("clear", del), set("rate_plan_id", "2")),
		tc("rate_plan_id negative", "rate_plan_id: must be between 0 and 2147483647", set("clear", del), set("rate_plan_id", -1)),
		tc("rate_plan_id fraction", "rate_plan_id: must be a whole number", set("clear", del), set("rate_plan_id", 1.5)),
		tc("dates missing", "dates: is required", set("clear", del), set("dates", del)),
		tc("dates empty", "dates: must have at least 1 item", set("clear", del), set("dates", []any{})),
		tc("dates 100", "", set("clear", del), set("dates", ranges(100))),
		tc("dates 101", "dates: must have at most 100 items", set("clear", del), set("dates", ranges(101))),
		tc("dates not a list", "dates: must be an array", set("clear", del), set("dates", "2027-07-01")),
		tc("start_date missing", "dates[0].start_date: is required", set("clear", del), set("dates[0].start_date", del)),
		tc("start_date impossible", "dates[0].start_date: must be a valid date (YYYY-MM-DD)", set("clear", del), set("dates[0].start_date", "2027-06-31")),
		tc("end_date before start_date", "dates[0].end_date: must not be before start_date", set("clear", del), set("dates[0].end_date", "2027-06-30")),
		tc("end_date in year 0", "dates[0].start_date: must be a valid date (YYYY-MM-DD)\ndates[0].end_date: must be a valid date (YYYY-MM-DD)", set("clear", del),
			set("dates[0].start_date", "0000-01-01"), set("dates[0].end_date", "0000-01-02")),
		tc("one date", "", set("clear", del), set("dates[0].end_date", "2027-07-01")),
		tc("1096 dates", "", set("clear", del), set("dates[0].start_date", "2027-01-01"), set("dates[0].end_date", "2029-12-31")),
		tc("1097 dates", "dates[0].end_date: must be at most 1095 days after start_date (a range holds at most 1096 dates)",
			set("clear", del), set("dates[0].start_date", "2027-01-01"), set("dates[0].end_date", "2030-01-01")),
		tc("weekdays absent: All", "", set("clear", del), set("dates[0].weekdays", del)),
		tc("weekdays blank: All", "", set("clear", del), set("dates[0].weekdays", " ")),
		tc("weekdays any case", "", set("clear", del), set("dates[0].weekdays", "all")),
		tc("weekdays abbreviated", "dates[0].weekdays: must be All or comma-separated days from Sunday to Saturday",
			set("clear", del), set("dates[0].weekdays", "Fri,Sat")),
		tc("min_stay_arrival 0", "set.min_stay_arrival: must be between 1 and 365", set("clear", del), set("set.min_stay_arrival", 0)),
		tc("min_stay_arrival 365", "", set("clear", del), set("set.min_stay_arrival", 365), set("set.max_stay", del)),
		tc("min_stay_through 366", "set.min_stay_through: must be between 1 and 365", set("clear", del), set("set.min_stay_through", 366)),
		tc("max_stay fraction", "set.max_stay: must be a whole number", set("clear", del), set("set.max_stay", "7.5")),
		tc("max_stay as a string", "", set("clear", del), set("set.max_stay", "21")),
		tc("min_stay_arrival above max_stay", "set.min_stay_arrival: must not be above max_stay (14)", set("clear", del), set("set.min_stay_arrival", 15)),
		tc("min_stay_arrival = max_stay", "", set("clear", del), set("set.min_stay_arrival", 14)),
		tc("closed_to_arrival as 0", "", set("clear", del), set("set.closed_to_arrival", "0")),
		tc("closed_to_departure not a boolean", "set.closed_to_departure: must be a boolean", set("clear", del), set("set.closed_to_departure", "no")),
		tc("stop_sell not a boolean", "set.stop_sell: must be a boolean", set("clear", del), set("set.stop_sell", 2)),
		tc("set not an object", "set: must be an object", set("set", "stop")),
		tc("price at property level", "", set("clear", del), propertyLevel, set("set.price", "180.00")),
		tc("price with rate_plan_id", "set.price: is the property's per-date price: send it without rate_plan_id",
			set("clear", del), set("set.price", "180.00")),
		tc("price 3 decimals", "set.price: must have at most 2 decimal places", set("clear", del), propertyLevel, set("set.price", "1.001")),
		tc("price negative", "set.price: must be between 0 and 2147483647", set("clear", del), propertyLevel, set("set.price", -1)),
		tc("price alone", "", set("clear", del), propertyLevel, set("set", obj(`{"price":99}`))),
		tc("clear alone", "", set("set", del)),
		tc("clear any case", "", set("clear[0]", "MAX_STAY"), set("set.max_stay", del)),
		tc("clear all", "", set("set", del), set("clear[0]", "all")),
		tc("clear an unknown member", "clear[0]: must be one of min_stay_arrival, min_stay_through, max_stay, closed_to_arrival, closed_to_departure, stop_sell, price, all",
			set("clear[0]", "minimum_stay")),
		tc("clear not a list", "clear: must be an array", set("clear", "max_stay")),
		tc("clear 21 names", "clear: must have at most 20 items", set("set", del), set("clear", many(21, `"all"`))),
		tc("clear price at property level", "", propertyLevel, set("clear[0]", "price")),
		tc("clear price with rate_plan_id", "clear[0]: price is the property's per-date price: clear it without rate_plan_id", set("clear[0]", "price")),
		tc("clear price while setting it", "clear[0]: price is both set and cleared", propertyLevel, set("set.price", 5), set("clear[0]", "price")),
		tc("neither set nor clear", "set: set or clear is required", set("set", del), set("clear", del)),
		tc("set and clear empty", "set: set or clear is required", set("set", obj(`{}`)), set("clear", []any{})),
		tc("set with unknown members only", "set: set or clear is required", set("set", obj(`{"minimum_stay":3}`)), set("clear", del)),
		tc("set null", "set: set or clear is required", set("set", nil), set("clear", del)),
	}
	check(t, restrictionSet, rows, decodeRestriction)
}

// restrict sends a body through the decoder and the domain; it returns the dates selected.
func restrict(t *testing.T, props *property.Properties, body string) (int, error) {
	t.Helper()
	req, err := property.DecodeRestriction([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.SetRestrictions(context.Background(), "1001", req)
}

func mustRestrict(t *testing.T, props *property.Properties, body string, dates int) {
	t.Helper()
	if n, err := restrict(t, props, body); err != nil || n != dates {
		t.Fatalf("%s: %d %v, want %d dates", body, n, err, dates)
	}
}

// runsOf writes a level's runs as "start..end member=value …", in order.
func runsOf(r property.Restrictions) []string {
	var out []string
	for _, run := range r.Runs() {
		s := run.Start.String() + ".." + run.End.String()
		for _, m := range []struct {
			name string
			v    int
		}{{"msa", run.Rules.MinStayArrival}, {"mst", run.Rules.MinStayThrough}, {"max", run.Rules.MaxStay}} {
			if m.v != 0 {
				s += fmt.Sprintf(" %s=%d", m.name, m.v)
			}
		}
		for _, f := range []struct {
			name string
			v    property.Flag
		}{{"cta", run.Rules.ClosedToArrival}, {"ctd", run.Rules.ClosedToDeparture}, {"stop", run.Rules.StopSell}} {
			if b, ok := f.v.Bool(); ok {
				s += fmt.Sprintf(" %s=%v", f.name, b)
			}
		}
		out = append(out, s)
	}
	return out
}

func onClock(props *property.Properties, today string) {
	at, _ := time.Parse(time.DateOnly, today)
	props.SetClock(func() time.Time { return at.Add(15 * time.Hour) })
}

func wantRuns(t *testing.T, what string, got property.Restrictions, want ...string) {
	t.Helper()
	if g := runsOf(got); !slices.Equal(g, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, g, want)
	}
}

// TestRestrictionSemantics: the dates a request selects (ranges × weekdays) get the members
// set and lose those cleared, other dates and members untouched; a cleared date reverts to
// the default (absent); the snapshot's runs merge equal neighbours only.
func TestRestrictionSemantics(t *testing.T) {
	props, repo := newMemProperties()
	onClock(props, "2027-06-01")
	ctx := context.Background()
	level := func() property.Restrictions {
		r, err := repo.Revenue(ctx, "1001", property.PropertyRef{InternalCode: "V1"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Restrictions
	}
	// July 2027: the 1st is a Thursday. Fridays and Saturdays: 2-3, 9-10, 16-17, 23-24, 30-31.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-31","weekdays":"Friday,Saturday"}],
		"set":{"min_stay_arrival":3,"closed_to_arrival":true}}`, 10)
	wantRuns(t, "weekends", level(), "2027-07-02..2027-07-03 msa=3 cta=true", "2027-07-09..2027-07-10 msa=3 cta=true",
		"2027-07-16..2027-07-17 msa=3 cta=true", "2027-07-23..2027-07-24 msa=3 cta=true", "2027-07-30..2027-07-31 msa=3 cta=true")
	// Another member on some of them and on other dates; two ranges, overlapping, count each date once.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-03","end_date":"2027-07-05"},{"start_date":"2027-07-05","end_date":"2027-07-09"}],
		"set":{"max_stay":14,"closed_to_arrival":false}}`, 7)
	wantRuns(t, "a second member", level(), "2027-07-02..2027-07-02 msa=3 cta=true", "2027-07-03..2027-07-03 msa=3 max=14 cta=false",
		"2027-07-04..2027-07-08 max=14 cta=false", "2027-07-09..2027-07-09 msa=3 max=14 cta=false", "2027-07-10..2027-07-10 msa=3 cta=true",
		"2027-07-16..2027-07-17 msa=3 cta=true", "2027-07-23..2027-07-24 msa=3 cta=true", "2027-07-30..2027-07-31 msa=3 cta=true")
	// Clearing one member keeps the others; a date left with nothing reverts to the default.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-10"}],"clear":["max_stay","closed_to_arrival"]}`, 10)
	wantRuns(t, "cleared", level(), "2027-07-02..2027-07-03 msa=3", "2027-07-09..2027-07-10 msa=3",
		"2027-07-16..2027-07-17 msa=3 cta=true", "2027-07-23..2027-07-24 msa=3 cta=true", "2027-07-30..2027-07-31 msa=3 cta=true")
	// Set and clear in one request, on Saturdays only.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-15","end_date":"2027-07-31","weekdays":"saturday"}],
		"set":{"stop_sell":true},"clear":["closed_to_arrival"]}`, 3)
	wantRuns(t, "set and clear", level(), "2027-07-02..2027-07-03 msa=3", "2027-07-09..2027-07-10 msa=3",
		"2027-07-16..2027-07-16 msa=3 cta=true", "2027-07-17..2027-07-17 msa=3 stop=true", "2027-07-23..2027-07-23 msa=3 cta=true",
		"2027-07-24..2027-07-24 msa=3 stop=true", "2027-07-30..2027-07-30 msa=3 cta=true", "2027-07-31..2027-07-31 msa=3 stop=true")
	// clear all: every restriction of the level on those dates.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-20"}],"clear":["all"]}`, 20)
	wantRuns(t, "clear all", level(), "2027-07-23..2027-07-23 msa=3 cta=true", "2027-07-24..2027-07-24 msa=3 stop=true",
		"2027-07-30..2027-07-30 msa=3 cta=true", "2027-07-31..2027-07-31 msa=3 stop=true")
	// A range whose weekdays select no date changes nothing and says so.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-05","end_date":"2027-07-06","weekdays":"Sunday"}],"set":{"stop_sell":true}}`, 0)
	wantRuns(t, "no date selected", level(), "2027-07-23..2027-07-23 msa=3 cta=true", "2027-07-24..2027-07-24 msa=3 stop=true",
		"2027-07-30..2027-07-30 msa=3 cta=true", "2027-07-31..2027-07-31 msa=3 stop=true")
	for _, typ := range repo.types {
		if typ != contract.RestrictionsUpdated {
			t.Errorf("event type %s", typ)
		}
	}
}

// TestRestrictionLevels: a plan's restrictions are its own; an unknown plan is refused; the
// per-date price is the property's, written to the per-date prices setprices writes.
func TestRestrictionLevels(t *testing.T) {
	props, repo := newMemProperties()
	repo.st.Brands = []property.Brand{{ID: 1, Name: "A"}}
	onClock(props, "2027-06-01")
	mustPlan(t, props, ratePlanCreate, 1)
	mustRestrict(t, props, `{"internal_code":"V1","rate_plan_id":1,"dates":[{"start_date":"2027-07-01","end_date":"2027-07-03"}],"set":{"min_stay_through":2}}`, 3)
	mustRestrict(t, props, `{"internal_code":"V1","rate_plan_id":0,"dates":[{"start_date":"2027-07-02","end_date":"2027-07-02"}],"set":{"stop_sell":true}}`, 1)
	r, _ := repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	wantRuns(t, "the plan's", r.Plans[0].Restrictions, "2027-07-01..2027-07-03 mst=2")
	wantRuns(t, "the property's", r.Restrictions, "2027-07-02..2027-07-02 stop=true")
	if _, err := restrict(t, props, `{"internal_code":"V1","rate_plan_id":2,"dates":[{"start_date":"2027-07-01","end_date":"2027-07-03"}],"set":{"stop_sell":true}}`); errString(err) != `restrictions of property "V1": rate plan 2: rate plan not found` {
		t.Errorf("an unknown plan: %v", err)
	}
	if _, err := restrict(t, props, `{"internal_code":"V9","dates":[{"start_date":"2027-07-01","end_date":"2027-07-03"}],"set":{"stop_sell":true}}`); !containsWant(errString(err), "property not found") {
		t.Errorf("an unknown property: %v", err)
	}
	// clear all at a plan's level leaves the property's and the prices alone.
	repo.types = nil
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-01"}],"set":{"price":"180.00"}}`, 1)
	mustRestrict(t, props, `{"internal_code":"V1","rate_plan_id":1,"dates":[{"start_date":"2027-07-01","end_date":"2027-07-05"}],"clear":["all"]}`, 5)
	r, _ = repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	wantRuns(t, "the plan's, cleared", r.Plans[0].Restrictions)
	wantRuns(t, "the property's, kept", r.Restrictions, "2027-07-02..2027-07-02 stop=true")
	if p := r.Prices[pricing.MustDate("2027-07-01")]; p.Price == nil || !p.Price.Equal(dec("180")) {
		t.Errorf("price kept: %+v", p)
	}
	if !slices.Equal(repo.types, []string{contract.PricesUpdated, contract.RestrictionsUpdated}) {
		t.Errorf("event types %v", repo.types)
	}
}

// TestRestrictionPrices: set price writes each date's price and keeps what setprices set
// beside it; clearing it (price or all) removes the date's prices and keeps its minimum
// nights. A request that changes only the price is a prices event.
func TestRestrictionPrices(t *testing.T) {
	props, repo := newMemProperties()
	onClock(props, "2027-06-01")
	r, _ := repo.rev("V1")
	d := pricing.MustDate
	r.Prices[d("2027-07-01")] = property.DatePrice{Price: ptrDec("100"), Weekly: ptrDec("600"), MinNights: 3}
	r.Prices[d("2027-07-02")] = property.DatePrice{Price: ptrDec("110")}
	r.Prices[d("2027-08-01")] = property.DatePrice{Price: ptrDec("90")}
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-03"}],"set":{"price":"180.50"}}`, 3)
	got, _ := repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	want := map[pricing.Date]string{d("2027-07-01"): "180.5 600 <nil> 3", d("2027-07-02"): "180.5 <nil> <nil> 0", d("2027-07-03"): "180.5 <nil> <nil> 0",
		d("2027-08-01"): "90 <nil> <nil> 0"}
	wantPrices(t, "set", got.Prices, want)
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-02"}],"clear":["price"]}`, 2)
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-03","end_date":"2027-07-03"}],"clear":["all"]}`, 1)
	got, _ = repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	wantPrices(t, "cleared", got.Prices, map[pricing.Date]string{d("2027-07-01"): "<nil> <nil> <nil> 3", d("2027-08-01"): "90 <nil> <nil> 0"})
	if !slices.Equal(repo.types, []string{contract.PricesUpdated, contract.PricesUpdated, contract.RestrictionsUpdated}) {
		t.Errorf("event types %v", repo.types)
	}
	// A price with a restriction is a restrictions event.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-01"}],"set":{"price":"1","stop_sell":false}}`, 1)
	if repo.types[len(repo.types)-1] != contract.RestrictionsUpdated {
		t.Errorf("price and a restriction: %v", repo.types)
	}
}

func ptrDec(s string) *decimal.Decimal { v := dec(s); return &v }

func wantPrices(t *testing.T, what string, got map[pricing.Date]property.DatePrice, want map[pricing.Date]string) {
	t.Helper()
	str := func(p *decimal.Decimal) string {
		if p == nil {
			return "<nil>"
		}
		return p.String()
	}
	g := map[pricing.Date]string{}
	for d, p := range got {
		g[d] = fmt.Sprintf("%s %s %s %d", str(p.Price), str(p.Weekly), str(p.Monthly), p.MinNights)
	}
	if !maps.Equal(g, want) {
		t.Errorf("%s prices:\n got %v\nwant %v", what, g, want)
	}
}

// TestRestrictionLimits: a level holds at most 1100 dates; dates before today − 31 days are
// pruned from the level written (by the service's clock), which makes room; every level
// together takes at most 2500 runs.
func TestRestrictionLimits(t *testing.T) {
	props, repo := newMemProperties()
	onClock(props, "2027-01-01")
	// 2027-01-01 .. 2029-12-31 is 1096 dates; four more reach 1100.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-01-01","end_date":"2029-12-31"},{"start_date":"2030-01-01","end_date":"2030-01-04"}],"set":{"stop_sell":true}}`, 1100)
	_, err := restrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2030-01-05","end_date":"2030-01-05"}],"set":{"stop_sell":true}}`)
	if got := errString(err); !containsWant(got, "dates: a property holds restrictions for at most 1100 dates (clear past dates first)") {
		t.Errorf("1101 dates: %q", got)
	}
	// Clearing makes room; a plan's level is its own.
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-01-01","end_date":"2027-01-01"}],"clear":["stop_sell"]}`, 1)
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2030-01-05","end_date":"2030-01-05"}],"set":{"stop_sell":true}}`, 1)
	// Months later: the dates before today − 31 days are pruned when the level is written.
	onClock(props, "2027-03-01") // pruned: before 2027-01-29
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2030-01-06","end_date":"2030-01-06"}],"set":{"stop_sell":true}}`, 1)
	r, _ := repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	if runs := r.Restrictions.Runs(); len(runs) != 1 || runs[0].Start != pricing.MustDate("2027-01-29") || runs[0].End != pricing.MustDate("2030-01-06") {
		t.Errorf("after pruning: %v", runsOf(r.Restrictions))
	}
	// A date before the cut-off set now is pruned at once (selected, never stored).
	mustRestrict(t, props, `{"internal_code":"V1","dates":[{"start_date":"2027-01-10","end_date":"2027-01-28"}],"set":{"max_stay":9}}`, 19)
	r, _ = repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	if runs := runsOf(r.Restrictions); len(runs) != 1 || !strings.HasPrefix(runs[0], "2027-01-29..") {
		t.Errorf("a past date stored: %v", runs)
	}

	// Runs: 1100 dates alternating two values on weekdays are 943 runs a level (Saturday and
	// Sunday share one); the third level of them passes 2500 in all, and is refused whole.
	props, repo = newMemProperties()
	onClock(props, "2027-01-01")
	mustPlan(t, props, fmt.Sprintf(planBody, "A"), 1)
	mustPlan(t, props, fmt.Sprintf(planBody, "B"), 2)
	alternate := func(plan int, half int) error {
		t.Helper()
		w := []struct{ days, v string }{{"Sunday,Tuesday,Thursday,Saturday", "2"}, {"Monday,Wednesday,Friday", "3"}}[half]
		body := fmt.Sprintf(`{"internal_code":"V1","rate_plan_id":%d,"dates":[{"start_date":"2027-01-01","end_date":"2029-12-31","weekdays":%q},
			{"start_date":"2030-01-01","end_date":"2030-01-04","weekdays":%q}],"set":{"max_stay":%s}}`, plan, w.days, w.days, w.v)
		_, err := restrict(t, props, body)
		return err
	}
	for _, step := range []struct{ plan, half int }{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}} {
		if err := alternate(step.plan, step.half); err != nil {
			t.Fatalf("level %d: %v", step.plan, err)
		}
	}
	r, _ = repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	if n := len(r.Restrictions.Runs()); n != 943 {
		t.Errorf("runs of a level: %d", n)
	}
	before := len(r.Plans[1].Restrictions.Runs())
	err = alternate(2, 1)
	if got := errString(err); !containsWant(got, "dates: a property's restrictions, every level together, take at most 2500 runs of dates with the same rules (these would take 2829)") {
		t.Errorf("runs beyond 2500: %q", got)
	}
	r, _ = repo.Revenue(context.Background(), "1001", property.PropertyRef{InternalCode: "V1"})
	if n := len(r.Plans[1].Restrictions.Runs()); n != before {
		t.Errorf("a refused change was written: %d runs, had %d", n, before)
	}
}

// ---------------------------------------------------------------------------------------
// /api/channel-markup

const markupSet = `{"action":"set","internal_code":"V1","markup":{"channel":"AirBnB","type":"percent","value":"15"}}`

func decodeMarkup(body []byte) error {
	_, err := property.DecodeMarkup(body)
	return err
}

func TestDecodeMarkup(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("account level", "", set("internal_code", del)),
		tc("internal_code blank: account level", "", set("internal_code", "")),
		tc("internal_code 11 chars", "internal_code: must be at most 10 characters", set("internal_code", chars(11))),
		tc("action missing", "action: is required", set("action", del)),
		tc("action unknown", "action: must be one of set, delete, list", set("action", "create")),
		tc("markup missing", "markup: is required", set("markup", del)),
		tc("markup not an object", "markup: must be an object", set("markup", "airbnb")),
		tc("channel missing", "markup.channel: is required", set("markup.channel", del)),
		tc("channel with a dot", "markup.channel: must contain only letters a-z, digits, _ and -", set("markup.channel", "booking.com")),
		tc("channel 33 chars", "markup.channel: must be at most 32 characters", set("markup.channel", chars(33))),
		tc("type missing", "markup.type: is required", set("markup.type", del)),
		tc("type unknown", "markup.type: must be one of percent, amount", set("markup.type", "flat")),
		tc("percent -100", "", set("markup.value", -100)),
		tc("percent 1000.01", "markup.value: must be between -100 and 1000", set("markup.value", "1000.01")),
		tc("amount 2147483647", "", set("markup.type", "amount"), set("markup.value", "2147483647")),
		tc("amount 3 decimals", "markup.value: must have at most 2 decimal places", set("markup.type", "amount"), set("markup.value", "0.001")),
		tc("value missing", "markup.value: is required", set("markup.value", del)),
		tc("delete reads the channel only", "", set("action", "delete"), set("markup", obj(`{"channel":"vrbo","type":"x"}`))),
		tc("delete without channel", "markup.channel: is required", set("action", "delete"), set("markup", obj(`{}`))),
		tc("list reads no markup", "", set("action", "list"), set("markup", del)),
	}
	check(t, markupSet, rows, decodeMarkup)
}

func markupOf(t *testing.T, props *property.Properties, body string) error {
	t.Helper()
	req, err := property.DecodeMarkup([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.ChangeMarkup(context.Background(), "1001", req)
}

func markups(t *testing.T, props *property.Properties, code string) []string {
	t.Helper()
	list, err := props.Markups(context.Background(), "1001", code)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range list {
		out = append(out, m.Channel+" "+string(m.Type)+" "+m.Value.String())
	}
	return out
}

// TestMarkupRules: both levels, a set replaces the channel's markup, lower case, sorted;
// delete of a channel without one; at most 50 a level; the event of each level.
func TestMarkupRules(t *testing.T) {
	props, repo := newMemProperties()
	for _, body := range []string{
		`{"action":"set","markup":{"channel":"vrbo","type":"amount","value":"5"}}`,
		`{"action":"set","markup":{"channel":"AirBnB","type":"percent","value":"15"}}`,
		`{"action":"set","markup":{"channel":"airbnb","type":"percent","value":"12.50"}}`,
		`{"action":"set","internal_code":"V1","markup":{"channel":"Airbnb","type":"amount","value":"-3"}}`,
	} {
		if err := markupOf(t, props, body); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	if got := markups(t, props, ""); !slices.Equal(got, []string{"airbnb percent 12.5", "vrbo amount 5"}) {
		t.Errorf("the account's: %q", got)
	}
	if got := markups(t, props, "V1"); !slices.Equal(got, []string{"airbnb amount -3"}) {
		t.Errorf("the property's: %q", got)
	}
	if got := markups(t, props, "V2"); len(got) != 0 {
		t.Errorf("another property's: %q", got)
	}
	if !slices.Equal(repo.types, []string{contract.MarkupsUpdated}) || repo.st.Version != 3 {
		t.Errorf("events: property %v, settings version %d", repo.types, repo.st.Version)
	}
	if err := markupOf(t, props, `{"action":"delete","internal_code":"V1","markup":{"channel":"vrbo"}}`); !containsWant(errString(err), "channel markup not found") {
		t.Errorf("delete of a channel the property has none for: %v", err)
	}
	if err := markupOf(t, props, `{"action":"delete","markup":{"channel":"VRBO"}}`); err != nil {
		t.Errorf("delete: %v", err)
	}
	if got := markups(t, props, ""); !slices.Equal(got, []string{"airbnb percent 12.5"}) {
		t.Errorf("after the delete: %q", got)
	}
	if err := markupOf(t, props, `{"action":"set","internal_code":"V9","markup":{"channel":"vrbo","type":"amount","value":"1"}}`); !containsWant(errString(err), "property not found") {
		t.Errorf("an unknown property: %v", err)
	}
	for i := range property.MaxMarkups {
		if err := markupOf(t, props, fmt.Sprintf(`{"action":"set","internal_code":"V2","markup":{"channel":"c%02d","type":"amount","value":"1"}}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	err := markupOf(t, props, `{"action":"set","internal_code":"V2","markup":{"channel":"one-more","type":"amount","value":"1"}}`)
	if got := errString(err); !containsWant(got, "markup: the property already has 50 channel markups, the most it may have") {
		t.Errorf("51st markup: %q", got)
	}
	if err := markupOf(t, props, `{"action":"set","internal_code":"V2","markup":{"channel":"C07","type":"amount","value":"2"}}`); err != nil {
		t.Errorf("a set of a channel it has, at the limit: %v", err)
	}
}
