package ari

import (
	"reflect"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events/contract"
)

func intp(v int) *int    { return &v }
func boolp(v bool) *bool { return &v }

// testProperty is a property in Rome: 100.00 a night, 150.00 on Friday and Saturday nights,
// arrivals on Saturdays only (the weekday rule), a minimum stay of 2; a derived plan 1 at
// -10 % with its own minimum stay of 3 and a max stay of 7 on 2027-03-17; a channex markup
// of 15 %; property restrictions: stop-sell on 2027-03-15, min stay through 3 on 2027-03-16,
// closed to departure on 2027-03-18.
func testProperty() contract.Property {
	return contract.Property{AccountID: "a1", PropertyID: 7, InternalCode: "V7", Version: 3,
		Content: contract.Content{Timezone: "Europe/Rome"},
		Rates: &contract.Rates{Rate: contract.Prices{Daily: "100.00", Weekend: "150.00"}, MinimumStay: 2,
			Setting: contract.Setting{ApplyWeekendPrice: true, DefaultAllowCheckin: "Saturday", DefaultAllowCheckout: "All"}},
		RatePlans: []contract.RatePlan{{ID: 1, PlanTerms: contract.PlanTerms{Name: "Non-refundable"},
			Adjustment: contract.Adjustment{Type: contract.AdjustPercent, Value: "-10"}, MinimumStay: 3,
			SoldOn:       contract.SoldOn{Direct: true},
			Restrictions: []contract.Restriction{{StartDate: "2027-03-17", EndDate: "2027-03-17", MaxStay: intp(7)}}}},
		Restrictions: []contract.Restriction{
			{StartDate: "2027-03-15", EndDate: "2027-03-15", StopSell: boolp(true)},
			{StartDate: "2027-03-16", EndDate: "2027-03-16", MinStayThrough: intp(3)},
			{StartDate: "2027-03-18", EndDate: "2027-03-18", ClosedToDeparture: boolp(true)},
		},
		ChannelMarkups: []contract.Markup{{Channel: "channex", Adjustment: contract.Adjustment{Type: contract.AdjustPercent, Value: "15"}}},
	}
}

func testMapping() channel.Mapping {
	return channel.Mapping{Account: "a1", ConnectionID: 1, PropertyID: 7, RemotePropertyID: "P", RoomTypeID: "R",
		RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: "STD"}, {RatePlanID: 1, RemoteRatePlanID: "NR"}}, Enabled: true}
}

// now is 23:30 UTC on 2027-03-10: already 2027-03-11 (a Thursday) in Rome.
var now = time.Date(2027, 3, 10, 23, 30, 0, 0, time.UTC)

func testState() State {
	p := testProperty()
	return State{Property: &p, Settings: contract.DefaultSettings("a1"),
		Held: map[string]bool{"2027-03-12": true, "2027-03-20": true, "2027-03-21": true}}
}

// TestComputeValues: today is the property's; a booked and a blocked night are unavailable;
// each plan's rate carries its adjustment and the channel's markup (weekend prices on
// Friday and Saturday nights); the weekday rule closes arrivals except on Saturday; stop-sell,
// min stay through, a plan's max stay and CTD come from the restrictions; a plan's minimum
// stay raises its min stay on arrival.
func TestComputeValues(t *testing.T) {
	conn := channel.Connection{Account: "a1", ID: 1, Adapter: channel.Channex, Channel: "channex", Enabled: true, Days: 12}
	v, err := Compute(testState(), conn, testMapping(), now)
	if err != nil {
		t.Fatal(err)
	}
	if v.From.String() != "2027-03-11" || v.Days != 12 || v.Currency != "USD" {
		t.Fatalf("from %s days %d currency %s", v.From, v.Days, v.Currency)
	}
	wantAvail := []int8{1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1} // 11 … 22 March
	if !reflect.DeepEqual(v.Avail, wantAvail) {
		t.Errorf("availability %v, want %v", v.Avail, wantAvail)
	}
	type row struct {
		date string
		plan string
		want RateValue
	}
	cta := func(r RateValue) RateValue { r.ClosedToArrival = true; return r }
	rows := []row{
		// Thursday: the weekday price, arrivals closed (Saturdays only).
		{"2027-03-11", "STD", cta(RateValue{Rate: "115.00", MinStayArrival: 2})},
		{"2027-03-11", "NR", cta(RateValue{Rate: "103.50", MinStayArrival: 3})},
		// Friday night: the weekend price.
		{"2027-03-12", "STD", cta(RateValue{Rate: "172.50", MinStayArrival: 2})},
		{"2027-03-12", "NR", cta(RateValue{Rate: "155.25", MinStayArrival: 3})},
		// Saturday: the weekend price, arrivals open.
		{"2027-03-13", "STD", RateValue{Rate: "172.50", MinStayArrival: 2}},
		{"2027-03-13", "NR", RateValue{Rate: "155.25", MinStayArrival: 3}},
		// Monday 15th: stopped on every plan.
		{"2027-03-15", "STD", cta(RateValue{Rate: "115.00", MinStayArrival: 2, StopSell: true})},
		{"2027-03-15", "NR", cta(RateValue{Rate: "103.50", MinStayArrival: 3, StopSell: true})},
		// Tuesday 16th: min stay through 3.
		{"2027-03-16", "STD", cta(RateValue{Rate: "115.00", MinStayArrival: 2, MinStayThrough: 3})},
		// Wednesday 17th: the plan's own max stay, not the standard plan's.
		{"2027-03-17", "STD", cta(RateValue{Rate: "115.00", MinStayArrival: 2})},
		{"2027-03-17", "NR", cta(RateValue{Rate: "103.50", MinStayArrival: 3, MaxStay: 7})},
		// Thursday 18th: closed to departure.
		{"2027-03-18", "NR", cta(RateValue{Rate: "103.50", MinStayArrival: 3, ClosedToDeparture: true})},
	}
	for _, r := range rows {
		rs := v.RatesOf(r.plan)
		d, _ := time.Parse(time.DateOnly, r.date)
		i := int(d.Sub(time.Date(2027, 3, 11, 0, 0, 0, 0, time.UTC)).Hours() / 24)
		if got := rs[i]; got != r.want {
			t.Errorf("%s %s: %+v, want %+v", r.date, r.plan, got, r.want)
		}
	}

	// Without the markup's channel, the plan's prices alone.
	conn.Channel = "airbnb"
	v, err = Compute(testState(), conn, testMapping(), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.RatesOf("NR")[0].Rate; got != "90.00" {
		t.Errorf("NR on airbnb: %s, want 90.00", got)
	}
	// An account markup applies where the property has none of its own.
	st := testState()
	st.Settings.ChannelMarkups = []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: contract.AdjustAmount, Value: "5"}}}
	if v, err = Compute(st, conn, testMapping(), now); err != nil {
		t.Fatal(err)
	}
	if got := v.RatesOf("STD")[0].Rate; got != "105.00" {
		t.Errorf("STD on airbnb with the account's markup: %s, want 105.00", got)
	}
}

// TestComputeWithoutPrice: a property without rates, or a plan that does not exist, is
// sent stop-sell with the rate "0"; a deleted property is unavailable and sends no rates;
// a property not projected yet is ErrNotProjected.
func TestComputeWithoutPrice(t *testing.T) {
	conn := channel.Connection{Account: "a1", ID: 1, Adapter: channel.Channex, Channel: "airbnb", Enabled: true, Days: 3}
	st := testState()
	st.Property.Rates = nil
	v, err := Compute(st, conn, testMapping(), now)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []string{"STD", "NR"} {
		for i, r := range v.RatesOf(plan) {
			if r.Rate != NoPrice || !r.StopSell {
				t.Errorf("%s day %d without rates: %+v", plan, i, r)
			}
		}
	}
	m := testMapping()
	m.RatePlans = append(m.RatePlans, channel.PlanMapping{RatePlanID: 9, RemoteRatePlanID: "GONE"})
	if v, err = Compute(testState(), conn, m, now); err != nil {
		t.Fatal(err)
	}
	if r := v.RatesOf("GONE")[0]; r.Rate != NoPrice || !r.StopSell {
		t.Errorf("an unknown plan: %+v", r)
	}
	if r := v.RatesOf("STD")[0]; r.Rate != "100.00" || r.StopSell {
		t.Errorf("the standard plan beside it: %+v", r)
	}

	st = testState()
	st.Property.Deleted = true
	if v, err = Compute(st, conn, testMapping(), now); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Avail, []int8{0, 0, 0}) || len(v.Plans) != 0 {
		t.Errorf("a deleted property: %v %v", v.Avail, v.Plans)
	}
	if _, err := Compute(State{Settings: contract.DefaultSettings("a1")}, conn, testMapping(), now); err != ErrNotProjected {
		t.Errorf("no snapshot: %v", err)
	}
}

// TestHolderOf: a reserved booking holds its nights, a cancelled one none; a block its
// dates unless deleted.
func TestHolderOf(t *testing.T) {
	h, err := HolderOf("a1", "booking", []byte(`{"booking_id":5,"property_id":7,"status":"reserved","version":2,"nights":["2027-03-12","2027-03-13"]}`))
	if err != nil || h.Key != "booking:5" || h.PropertyID != 7 || h.Version != 2 || len(h.Nights) != 2 {
		t.Fatalf("%+v %v", h, err)
	}
	h, _ = HolderOf("a1", "booking", []byte(`{"booking_id":5,"property_id":7,"status":"cancelled","version":3,"nights":[]}`))
	if len(h.Nights) != 0 {
		t.Errorf("a cancelled booking holds %v", h.Nights)
	}
	h, err = HolderOf("a1", "block", []byte(`{"block_id":4,"property_id":7,"start_date":"2027-03-30","end_date":"2027-04-01","version":1}`))
	if err != nil || !reflect.DeepEqual(h.Nights, []string{"2027-03-30", "2027-03-31", "2027-04-01"}) {
		t.Errorf("block: %+v %v", h, err)
	}
	h, _ = HolderOf("a1", "block", []byte(`{"block_id":4,"property_id":7,"start_date":"2027-03-30","end_date":"2027-04-01","deleted":true,"version":2}`))
	if len(h.Nights) != 0 {
		t.Errorf("a deleted block holds %v", h.Nights)
	}
	if _, err := HolderOf("a1", "block", []byte(`{"block_id":4,"start_date":"2027-04-02","end_date":"2027-04-01"}`)); err == nil {
		t.Error("a block ending before it starts was read")
	}
}
