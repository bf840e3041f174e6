package pricing

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

// TestCancellationExamples: the refundable amount of each policy by date, the worked
// examples of docs/pricing.md ("Cancellation policies"). Booking: grand total 1000.00 USD,
// check-in Wednesday 2027-03-31.
func TestCancellationExamples(t *testing.T) {
	t.Parallel()
	custom := Cancellation{Policy: CancelCustom, Tiers: []CancellationTier{{DaysBefore: 60, Percent: d("100")},
		{DaysBefore: 7, Percent: d("33.33")}, {DaysBefore: 0, Percent: d("10")}}}
	for _, c := range []struct {
		name        string
		policy      Cancellation
		total       string
		scale       int32
		cancelledOn string
		percent     string
		amount      string
	}{
		{"c1a flexible, 1 day before", Cancellation{Policy: CancelFlexible}, "1000.00", 2, "2027-03-30", "100", "1000.00"},
		{"c1b flexible, on the day of arrival", Cancellation{Policy: CancelFlexible}, "1000.00", 2, "2027-03-31", "0", "0.00"},
		{"c1c the zero policy is flexible", Cancellation{}, "1000.00", 2, "2027-03-30", "100", "1000.00"},
		{"c2a moderate, exactly 5 days before", Cancellation{Policy: CancelModerate}, "1000.00", 2, "2027-03-26", "100", "1000.00"},
		{"c2b moderate, 4 days before", Cancellation{Policy: CancelModerate}, "1000.00", 2, "2027-03-27", "50", "500.00"},
		{"c2c moderate, 1 day before", Cancellation{Policy: CancelModerate}, "1000.00", 2, "2027-03-30", "50", "500.00"},
		{"c2d moderate, on the day of arrival", Cancellation{Policy: CancelModerate}, "1000.00", 2, "2027-03-31", "0", "0.00"},
		{"c3a strict, exactly 30 days before", Cancellation{Policy: CancelStrict}, "1000.00", 2, "2027-03-01", "100", "1000.00"},
		{"c3b strict, 29 days before", Cancellation{Policy: CancelStrict}, "1000.00", 2, "2027-03-02", "50", "500.00"},
		{"c3c strict, exactly 14 days before", Cancellation{Policy: CancelStrict}, "1000.00", 2, "2027-03-17", "50", "500.00"},
		{"c3d strict, 13 days before", Cancellation{Policy: CancelStrict}, "1000.00", 2, "2027-03-18", "0", "0.00"},
		{"c4 non-refundable, months before", Cancellation{Policy: CancelNonRefundable}, "1000.00", 2, "2027-01-01", "0", "0.00"},
		{"c5a custom, 60 days before", custom, "1000.00", 2, "2027-01-30", "100", "1000.00"},
		{"c5b custom, 59 days before", custom, "1000.00", 2, "2027-01-31", "33.33", "333.30"},
		{"c5c custom, exactly 7 days before", custom, "1000.00", 2, "2027-03-24", "33.33", "333.30"},
		{"c5d custom, a tier of 0 days: on the day of arrival", custom, "1000.00", 2, "2027-03-31", "10", "100.00"},
		{"c5e custom, after arrival", custom, "1000.00", 2, "2027-04-01", "0", "0.00"},
		{"c5f custom, the highest percent reached applies", Cancellation{Policy: CancelCustom, Tiers: []CancellationTier{
			{DaysBefore: 30, Percent: d("50")}, {DaysBefore: 10, Percent: d("80")}}}, "1000.00", 2, "2027-02-01", "80", "800.00"},
		{"c6a JPY rounds to the yen", custom, "33147", 0, "2027-03-24", "33.33", "11048"},
		{"c6b KWD rounds to the fils, half away from zero", Cancellation{Policy: CancelModerate}, "123.457", 3, "2027-03-28", "50", "61.729"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pct, amt := c.policy.Refund(d(c.total), c.scale, MustDate("2027-03-31"), MustDate(c.cancelledOn))
			if !pct.Equal(d(c.percent)) || amt.StringFixed(c.scale) != c.amount {
				t.Errorf("refund %s %% = %s, want %s %% = %s", pct, amt.StringFixed(c.scale), c.percent, c.amount)
			}
		})
	}
}

func TestCancellationResolved(t *testing.T) {
	t.Parallel()
	for policy, want := range map[string]string{"": "flexible 1:100", CancelModerate: "moderate 5:100 1:50",
		CancelStrict: "strict 30:100 14:50", CancelNonRefundable: "non_refundable"} {
		c := Cancellation{Policy: policy}.Resolved()
		got := c.Policy
		for _, t := range c.Tiers {
			got += " " + strconv.Itoa(t.DaysBefore) + ":" + t.Percent.String()
		}
		if got != want {
			t.Errorf("%q resolved: %s, want %s", policy, got, want)
		}
	}
}

// ratePlanSnapshot is a property event with every rate-plan member the engine reads.
const ratePlanSnapshot = `{
 "content":{"maxguest":6},
 "rates":{"rate":{"daily_price":"100"},"minimum_stay":1,"setting":{"standard_occupants":2}},
 "standard_plan":{"name":"Flexible rate","inclusions":"","cancellation":{"policy":"moderate"}},
 "rate_plans":[
  {"id":2,"name":"OTA","inclusions":"","adjustment":{"type":"amount","value":"5"},
   "sold_on":{"direct":false,"all_brands":false,"channels":["AirBnB"]}},
  {"id":1,"name":"Non-refundable","inclusions":"Breakfast","cancellation":{"policy":"custom","tiers":[{"days_before":10,"percent":"50"}]},
   "adjustment":{"type":"percent","value":"-10"},
   "ranges":[{"start_date":"2027-07-01","end_date":"2027-08-31","type":"percent","value":"-5"}],
   "minimum_stay":2,"sold_on":{"direct":true,"all_brands":false,"brands":[1]},
   "restrictions":[{"start_date":"2027-03-05","end_date":"2027-03-05","closed_to_arrival":false,"min_stay_arrival":1}]}],
 "restrictions":[{"start_date":"2027-03-01","end_date":"2027-03-04","min_stay_through":3},
  {"start_date":"2027-03-05","end_date":"2027-03-05","closed_to_arrival":true,"stop_sell":false,"max_stay":10}],
 "channel_markups":[{"channel":"airbnb","type":"percent","value":"10"}]
}`

func TestRatePlansFromSnapshot(t *testing.T) {
	t.Parallel()
	var snap contract.Property
	if err := json.Unmarshal([]byte(ratePlanSnapshot), &snap); err != nil {
		t.Fatal(err)
	}
	st := contract.DefaultSettings("1001")
	st.ChannelMarkups = []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: "percent", Value: "50"}},
		{Channel: "VRBO", Adjustment: contract.Adjustment{Type: "amount", Value: "7.5"}}}
	p, err := Priced(snap, st)
	if err != nil {
		t.Fatal(err)
	}
	plans := p.RatePlans()
	if len(plans) != 3 || plans[0].ID != 0 || plans[0].Name != "Flexible rate" || plans[0].Cancellation.Policy != CancelModerate ||
		len(plans[0].Cancellation.Tiers) != 2 || plans[1].ID != 1 || plans[1].Inclusions != "Breakfast" || plans[1].MinimumStay != 2 ||
		plans[1].Cancellation.Tiers[0].DaysBefore != 10 || plans[2].ID != 2 || plans[2].Cancellation.Policy != CancelFlexible ||
		plans[2].SoldOn.Channels[0] != "airbnb" || len(plans[1].Ranges) != 1 || !plans[1].Adjustment.Value.Equal(d("-10")) {
		t.Errorf("plans: %+v", plans)
	}
	if len(p.AccountMarkups) != 2 || p.AccountMarkups[1].Channel != "vrbo" || len(p.Markups) != 1 {
		t.Errorf("markups: %+v / %+v", p.Markups, p.AccountMarkups)
	}
	now := time.Date(2027, 1, 10, 10, 0, 0, 0, time.UTC)
	q := func(plan int64, channel, in, out string) (Result, error) {
		return Quote(p, Request{Checkin: MustDate(in), Checkout: MustDate(out), Adults: 2, Now: now, Plan: plan, Channel: channel})
	}
	// The property's min stay through 3 on 03-01 … 03-04; 03-05 closed to arrival, max 10.
	if _, err := q(0, "", "2027-03-03", "2027-03-05"); !isRule(err, MinimumStay) {
		t.Errorf("min stay through: %v", err)
	}
	if _, err := q(0, "", "2027-03-05", "2027-03-07"); !isRule(err, ClosedToArrival) {
		t.Errorf("closed to arrival: %v", err)
	}
	if r, err := q(1, "", "2027-03-05", "2027-03-07"); err != nil || money(r, r.TotalRent) != "180.00" || r.PlanName != "Non-refundable" ||
		r.Inclusions != "Breakfast" || r.Cancellation.Policy != CancelCustom || r.MinimumStay != 2 {
		t.Errorf("plan 1 opens 03-05: %v\n%s", err, dump(r))
	}
	if _, err := q(1, "", "2027-03-05", "2027-03-16"); !isRule(err, MaximumStay) {
		t.Errorf("the property's max stay binds the plan: %v", err)
	}
	if r, err := q(1, "", "2027-07-05", "2027-07-07"); err != nil || money(r, r.TotalRent) != "190.00" {
		t.Errorf("range: %v %s", err, money(r, r.TotalRent))
	}
	// airbnb: the property's 10 % replaces the account's 50 %; vrbo: the account's 7.50.
	if r, err := q(2, "airbnb", "2027-03-10", "2027-03-12"); err != nil || money(r, r.TotalRent) != "231.00" || r.Channel != "airbnb" {
		t.Errorf("plan 2 on airbnb: %v %s", err, money(r, r.TotalRent))
	}
	if r, err := q(0, "vrbo", "2027-03-10", "2027-03-12"); err != nil || money(r, r.TotalRent) != "215.00" {
		t.Errorf("standard on vrbo: %v %s", err, money(r, r.TotalRent))
	}
	if _, err := q(2, "vrbo", "2027-03-10", "2027-03-12"); !isRule(err, NotSold) {
		t.Errorf("plan 2 on vrbo: %v", err)
	}
	// Rules and the calendar read the same day rules.
	if r := p.Rules(0, MustDate("2027-03-05")); r.CheckinAllowed || !r.ClosedToArrival || r.MaxStay != 10 || r.StopSell || r.MinStayArrival != 1 {
		t.Errorf("rules of 03-05: %+v", r)
	}
	if r := p.Rules(1, MustDate("2027-03-05")); !r.CheckinAllowed || r.ClosedToArrival || r.MaxStay != 10 {
		t.Errorf("plan 1 rules of 03-05: %+v", r)
	}
	if day, ok := NightPrice(p, MustDate("2027-03-02"), 2); !ok || day.MinStayThrough != 3 || day.MinimumStay != 1 || !day.CheckinAllowed {
		t.Errorf("calendar of 03-02: %+v", day)
	}
	if day, ok := NightPriceOn(p, 1, "", MustDate("2027-07-05"), 2); !ok || day.Price.StringFixed(2) != "95.00" || day.MinimumStay != 2 ||
		day.WeeklyPrice.StringFixed(2) != "665.00" {
		t.Errorf("plan 1 calendar of 07-05: %+v", day)
	}
	if _, ok := NightPriceOn(p, 9, "", MustDate("2027-07-05"), 2); ok {
		t.Error("unknown plan priced")
	}
	if r := p.Rules(9, MustDate("2027-03-05")); r != (DayRules{}) {
		t.Errorf("unknown plan's rules: %+v", r)
	}
}

func TestRatePlanSnapshotErrors(t *testing.T) {
	t.Parallel()
	one := strings.Join(strings.Fields(ratePlanSnapshot), "")
	for _, c := range []struct{ from, to, want string }{
		{`"policy":"moderate"`, `"policy":"lenient"`, "standard_plan.cancellation.policy"},
		{`"type":"amount","value":"5"`, `"type":"fixed","value":"5"`, "rate_plans[0].adjustment.type"},
		{`"type":"amount","value":"5"`, `"type":"amount","value":"5x"`, "rate_plans[0].adjustment.value"},
		{`"days_before":10`, `"days_before":800`, "rate_plans[1].cancellation.tiers[0].days_before"},
		{`"percent":"50"`, `"percent":"150"`, "rate_plans[1].cancellation.tiers[0].percent"},
		{`"start_date":"2027-07-01"`, `"start_date":"2027-09-01"`, "rate_plans[1].ranges[0]"},
		{`"end_date":"2027-08-31"`, `"end_date":"2027-08-32"`, "rate_plans[1].ranges[0].end_date"},
		{`"min_stay_arrival":1`, `"min_stay_arrival":0`, "rate_plans[1].restrictions[0].min_stay_arrival"},
		{`"min_stay_through":3`, `"min_stay_through":400`, "restrictions[0].min_stay_through"},
		{`"end_date":"2027-03-04"`, `"end_date":"2027-03-05"`, "restrictions[1] overlaps restrictions[0]"},
		{`"start_date":"2027-03-01"`, `"start_date":"2027-3-01"`, "restrictions[0].start_date"},
		{`"id":2`, `"id":1`, "plan 1 is given twice"},
		{`"id":2`, `"id":0`, "rate_plans[0].id"},
		{`"channel":"airbnb"`, `"channel":""`, "channel_markups[0].channel"},
		{`"value":"10"`, `"value":"ten"`, "channel_markups[0].value"},
	} {
		if !strings.Contains(one, c.from) {
			t.Fatalf("fixture lacks %s", c.from)
		}
		_, err := FromSnapshot([]byte(strings.Replace(one, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.to, err, c.want)
		}
	}
	var snap contract.Property
	if err := json.Unmarshal([]byte(ratePlanSnapshot), &snap); err != nil {
		t.Fatal(err)
	}
	st := contract.DefaultSettings("1001")
	st.ChannelMarkups = []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: "percent", Value: "x"}}}
	if _, err := Priced(snap, st); err == nil || !strings.Contains(err.Error(), "settings.channel_markups[0].value") {
		t.Errorf("account markup: %v", err)
	}
}

// TestBookable: every plan sold where asked that accepts the stay, standard first.
func TestBookable(t *testing.T) {
	t.Parallel()
	p := villa()
	p.Plans = []Plan{
		{ID: 3, PlanTerms: PlanTerms{Name: "Week"}, MinimumStay: 7, SoldOn: SoldOn{Direct: true}},
		offPlan(AdjustPercent, "-10"),
		{ID: 2, PlanTerms: PlanTerms{Name: "OTA"}, SoldOn: SoldOn{Channels: []string{"airbnb"}, AllBrands: true}},
	}
	markups(&p)
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	list := func(r Request) string {
		var s []string
		for _, pq := range p.Bookable(r) {
			checkRelations(t, pq.Result)
			if pq.Plan != pq.Result.Plan || pq.Name != pq.Result.PlanName {
				t.Errorf("plan quote %d %q, result %d %q", pq.Plan, pq.Name, pq.Result.Plan, pq.Result.PlanName)
			}
			s = append(s, pq.Name+" "+money(pq.Result, pq.Result.TotalRent))
		}
		return strings.Join(s, ", ")
	}
	r := stay("2027-03-01", "2027-03-04", 2, 0)
	r.Plan = 9 // ignored
	for _, c := range []struct {
		name string
		edit func(r *Request)
		want string
	}{
		{"direct", func(r *Request) {}, "Standard 300.00, Non-refundable 270.00"},
		{"airbnb", func(r *Request) { r.Channel = "airbnb" }, "Standard 330.00, Non-refundable 297.00, OTA 330.00"},
		{"a brand", func(r *Request) { r.Brand = 5 }, "Standard 300.00, OTA 300.00"},
		{"a week", func(r *Request) { r.Checkout = MustDate("2027-03-08") }, "Standard 700.00, Non-refundable 630.00, Week 700.00"},
		{"back office", func(r *Request) { r.SkipSoldOn = true }, "Standard 300.00, Non-refundable 270.00, OTA 300.00"},
		{"a closed date", func(r *Request) {
			r.Checkin = MustDate("2027-01-09")
		}, ""},
	} {
		rr := r
		c.edit(&rr)
		if got := list(rr); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestRulesDoNotAllocate: the calendar and the search read day rules per date and per
// candidate; a prepared property answers without allocating.
func TestRulesDoNotAllocate(t *testing.T) {
	p := villa()
	planOverProperty(&p)
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	d0 := MustDate("2027-03-01")
	if n := testing.AllocsPerRun(100, func() {
		for i := range 40 {
			_ = p.Rules(int64(i%2), d0.AddDays(i))
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	if err := CheckDays(d0.AddDays(5), d0.AddDays(8), 0, func(d Date) DayRules { return p.Rules(1, d) }); err != nil {
		t.Errorf("plan 1 from 03-06: %v", err)
	}
	if err := CheckDays(d0.AddDays(4), d0.AddDays(8), 0, func(d Date) DayRules { return p.Rules(0, d) }); err == nil ||
		err.Code != ClosedToArrival {
		t.Errorf("standard from 03-05: %v", err)
	}
}

// TestRestrictionsFarApart: restrictions whose dates span more than the day table's 4096
// days are read from their sorted runs, with the same answers.
func TestRestrictionsFarApart(t *testing.T) {
	t.Parallel()
	p := villa()
	p.Restrictions = []Restriction{
		run("2040-01-01", "2040-01-03", Restriction{MinStayArrival: new(4), StopSell: new(true)}),
		run("2027-03-05", "2027-03-05", Restriction{ClosedToArrival: new(true)}),
	}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	if p.plan.props.tab != nil || len(p.plan.props.runs) != 2 {
		t.Fatalf("not read from runs: %+v", p.plan.props)
	}
	for _, c := range []struct {
		day       string
		minArr    int
		stop, cta bool
	}{{"2027-03-04", 1, false, false}, {"2027-03-05", 1, false, true}, {"2027-03-06", 1, false, false},
		{"2035-01-01", 1, false, false}, {"2039-12-31", 1, false, false}, {"2040-01-01", 4, true, false},
		{"2040-01-03", 4, true, false}, {"2040-01-04", 1, false, false}} {
		r := p.Rules(0, MustDate(c.day))
		if r.MinStayArrival != c.minArr || r.StopSell != c.stop || r.ClosedToArrival != c.cta || r.CheckinAllowed == c.cta {
			t.Errorf("%s: %+v", c.day, r)
		}
	}
}
