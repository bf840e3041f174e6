package ari

import (
	"reflect"
	"testing"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/pricing"
)

// values builds Values of one plan "P" from From 2027-01-01: avail per day, and rates per
// day named by their Rate (a "" rate is unknown).
func values(avail []int8, rates []string) Values {
	v := Values{From: pricing.MustDate("2027-01-01"), Days: len(avail), Avail: avail, Plans: []string{"P"}}
	rs := make([]RateValue, len(rates))
	for i, r := range rates {
		if r != "" {
			rs[i] = RateValue{Rate: r, MinStayArrival: 1}
		}
	}
	v.Rates = [][]RateValue{rs}
	return v
}

func rate(from, to, r string) channel.Rate {
	return channel.Rate{RemoteRatePlanID: "P", From: from, To: to, Rate: r, MinStayArrival: 1}
}

// TestDiff: a full sync sends every day, coalesced; a delta only the changed days, a range
// running over unchanged days of its value that join two changed ones, never over a day of
// another value; nothing when nothing changed.
func TestDiff(t *testing.T) {
	want := values([]int8{1, 1, 0, 0, 1, 1}, []string{"10", "10", "10", "12", "12", "10"})
	a, r := Diff(want, nil)
	if !reflect.DeepEqual(a, []channel.Availability{{From: "2027-01-01", To: "2027-01-02", Available: 1},
		{From: "2027-01-03", To: "2027-01-04", Available: 0}, {From: "2027-01-05", To: "2027-01-06", Available: 1}}) {
		t.Errorf("full availability %+v", a)
	}
	if !reflect.DeepEqual(r, []channel.Rate{rate("2027-01-01", "2027-01-03", "10"), rate("2027-01-04", "2027-01-05", "12"),
		rate("2027-01-06", "2027-01-06", "10")}) {
		t.Errorf("full rates %+v", r)
	}

	sent := want
	if a, r := Diff(want, &sent); a != nil || r != nil {
		t.Errorf("no change sent %+v %+v", a, r)
	}

	// Days 1 and 3 changed to the same value, day 2 already holds it: one range 1–3. Day 6
	// changed alone.
	sent = values([]int8{1, 0, 1, 0, 1, 0}, []string{"9", "10", "9", "12", "12", "10"})
	want = values([]int8{1, 1, 1, 0, 1, 1}, []string{"10", "10", "10", "12", "12", "11"})
	a, r = Diff(want, &sent)
	if !reflect.DeepEqual(a, []channel.Availability{{From: "2027-01-02", To: "2027-01-02", Available: 1},
		{From: "2027-01-06", To: "2027-01-06", Available: 1}}) {
		t.Errorf("delta availability %+v", a)
	}
	if !reflect.DeepEqual(r, []channel.Rate{rate("2027-01-01", "2027-01-03", "10"), rate("2027-01-06", "2027-01-06", "11")}) {
		t.Errorf("delta rates %+v", r)
	}

	// An unknown day (never sent) is sent.
	sent = values([]int8{1, -1, 1}, []string{"10", "", "10"})
	want = values([]int8{1, 1, 1}, []string{"10", "10", "10"})
	a, r = Diff(want, &sent)
	if !reflect.DeepEqual(a, []channel.Availability{{From: "2027-01-02", To: "2027-01-02", Available: 1}}) ||
		!reflect.DeepEqual(r, []channel.Rate{rate("2027-01-02", "2027-01-02", "10")}) {
		t.Errorf("unknown day: %+v %+v", a, r)
	}

	// What is sent, applied to the sent state, leaves no difference.
	sent = Unknown(want.From, want.Days)
	a, r = Diff(want, &sent)
	sent.Apply(a, r)
	if a, r := Diff(want, &sent); a != nil || r != nil {
		t.Errorf("after applying what was sent: %+v %+v", a, r)
	}
}

// TestDiffFullSyncSize: a 500-day full sync of two plans is a few ranges per plan, not one
// per day.
func TestDiffFullSyncSize(t *testing.T) {
	conn := channel.Connection{Account: "a1", ID: 1, Adapter: channel.Channex, Channel: "channex", Enabled: true, Days: 500}
	v, err := Compute(testState(), conn, testMapping(), now)
	if err != nil {
		t.Fatal(err)
	}
	a, r := Diff(v, nil)
	days := func(from, to string) int {
		return pricing.DaysBetween(pricing.MustDate(from), pricing.MustDate(to)) + 1
	}
	n := 0
	for _, x := range a {
		n += days(x.From, x.To)
	}
	if n != 500 || a[0].From != "2027-03-11" || a[len(a)-1].To != "2028-07-22" {
		t.Errorf("availability covers %d days, %s … %s", n, a[0].From, a[len(a)-1].To)
	}
	perPlan := map[string]int{}
	for _, x := range r {
		perPlan[x.RemoteRatePlanID] += days(x.From, x.To)
	}
	if perPlan["STD"] != 500 || perPlan["NR"] != 500 {
		t.Errorf("rates cover %v days", perPlan)
	}
}

// BenchmarkCompute: one property's 500 days on two plans, and their diff.
func BenchmarkCompute(b *testing.B) {
	conn := channel.Connection{Account: "a1", ID: 1, Adapter: channel.Channex, Channel: "channex", Enabled: true, Days: 500}
	st := testState()
	for b.Loop() {
		v, err := Compute(st, conn, testMapping(), now)
		if err != nil {
			b.Fatal(err)
		}
		Diff(v, nil)
	}
}
