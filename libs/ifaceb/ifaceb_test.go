package ifaceb_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/ifaceb"
)

func TestMoney(t *testing.T) {
	for in, want := range map[string]json.Number{"": "0", "12.50": "12.50", "abc": "0", "-3": "-3"} {
		if got := ifaceb.Money(in); got != want {
			t.Errorf("Money(%q) = %s, want %s", in, got, want)
		}
	}
	if ifaceb.OptMoney("") != nil || *ifaceb.OptMoney("7") != "7" {
		t.Error("OptMoney")
	}
}

func TestSummaryOf(t *testing.T) {
	p := contract.Property{PropertyID: 12, Content: contract.Content{Name: "Villa Blue", Address: "1 Sea Road", City: "Split",
		Postcode: "21000", State: "Dalmatia", Country: "HR", Brief: "Sea view", Bedrooms: 3, Bathrooms: 2}}
	got := ifaceb.SummaryOf("acc7", p)
	want := ifaceb.Summary{ID: "acc7_12", Name: "Villa Blue", Address: "1 Sea Road", City: "Split", Postcode: "21000",
		State: "Dalmatia", Country: "HR", Brief: "Sea view", Bedroom: 3, Bathroom: 2}
	if got != want {
		t.Fatalf("SummaryOf = %+v, want %+v", got, want)
	}
}

func TestRateTableOf(t *testing.T) {
	rates := &contract.Rates{
		Rate:        contract.Prices{Daily: "100", ExtraDaily: "10"},
		MinimumStay: 2,
		Setting: contract.Setting{StandardOccupants: 4, DefaultAllowCheckin: "Saturday", FirstDaySurcharge: "25",
			FirstDaySurchargeOneNight: true},
		Seasons: []contract.Season{
			{Name: "Summer", StartDate: "2027-06-01", EndDate: "2027-08-31", MinimumStay: 7, AllowCheckout: "Sunday",
				Prices: contract.Prices{Daily: "180", Weekend: "200", Weekly: "1100", Monthly: "4000"}},
			{Name: "Spring", StartDate: "2027-04-01", EndDate: "2027-05-31", Prices: contract.Prices{Daily: "120"}},
		},
	}
	tab := ifaceb.RateTableOf(contract.Property{Rates: rates})
	rows := []struct {
		rule      string
		got, want any
	}{
		{"limitOccupant is the standard occupants", tab.LimitOccupant, 4},
		{"extra weekend fee falls back to the extra daily", tab.ExtraOccupantFee.Weekend, json.Number("10")},
		{"first-night surcharge", tab.FirstNightSurcharge, json.Number("25")},
		{"one-night surcharge when it applies to one night", tab.OneNightStaySurcharge, json.Number("25")},
		{"the base is the first season, def 1", [2]any{tab.Seasons[0].SeasonName, tab.Seasons[0].Def}, [2]any{"Standard", 1}},
		{"weekly without its own price is 7 nights", tab.Seasons[0].Weekly, json.Number("700")},
		{"weekend without its own price is the nightly", tab.Seasons[0].Weekend, json.Number("100")},
		{"unset check-out days are All", tab.Seasons[0].AllowCheckouts, "All"},
		{"no monthly price: absent", tab.Seasons[0].Monthly == nil, true},
		{"a season's own prices", [3]json.Number{tab.Seasons[1].Nightly, tab.Seasons[1].Weekend, tab.Seasons[1].Weekly}, [3]json.Number{"180", "200", "1100"}},
		{"a season's own minimum stay and dates", [3]any{tab.Seasons[1].MinimumStay, tab.Seasons[1].StartDate, tab.Seasons[1].Def}, [3]any{7, "2027-06-01", 0}},
		{"a season without check-in days takes the base's", tab.Seasons[1].AllowCheckins, "Saturday"},
		{"a season's own check-out days", tab.Seasons[1].AllowCheckouts, "Sunday"},
		{"a season without a minimum stay takes the base's", tab.Seasons[2].MinimumStay, 2},
	}
	for _, r := range rows {
		if r.got != r.want {
			t.Errorf("%s: got %v, want %v", r.rule, r.got, r.want)
		}
	}
	if empty := ifaceb.RateTableOf(contract.Property{}); len(empty.Seasons) != 0 || empty.FirstNightSurcharge != "0" {
		t.Errorf("no rates: %+v", empty)
	}
}

func TestRatePlansOf(t *testing.T) {
	tab := ifaceb.RateTableOf(contract.Property{})
	if len(tab.RatePlans) != 1 {
		t.Fatalf("no plans: %+v", tab.RatePlans)
	}
	std := tab.RatePlans[0]
	if std.ID != 0 || std.Name != "Standard" || std.Inclusions != "" || std.Adjustment != (ifaceb.Adjustment{Type: "percent", Value: "0"}) ||
		std.MinimumStay != 0 || std.CancellationPolicy.Policy != "flexible" || len(std.CancellationPolicy.Tiers) != 1 ||
		std.CancellationPolicy.Tiers[0] != (ifaceb.CancellationTier{DaysBefore: 1, Percent: "100"}) {
		t.Errorf("default standard plan: %+v", std)
	}
	p := contract.Property{
		StandardPlan: &contract.PlanTerms{Name: "Flexible rate", Inclusions: "Breakfast", Cancellation: &contract.Cancellation{Policy: "moderate"}},
		RatePlans: []contract.RatePlan{
			{ID: 1, PlanTerms: contract.PlanTerms{Name: "Non-refundable", Cancellation: &contract.Cancellation{Policy: "non_refundable"}},
				Adjustment: contract.Adjustment{Type: "percent", Value: "-10"}, MinimumStay: 3,
				Ranges: []contract.RangeAdjustment{{StartDate: "2027-07-01", EndDate: "2027-07-31", Adjustment: contract.Adjustment{Type: "percent", Value: "-5"}}}},
			{ID: 4, PlanTerms: contract.PlanTerms{Name: "Custom", Cancellation: &contract.Cancellation{Policy: "custom",
				Tiers: []contract.CancellationTier{{DaysBefore: 60, Percent: "100"}, {DaysBefore: 7, Percent: "33.33"}}}},
				Adjustment: contract.Adjustment{Type: "amount", Value: "25.50"}},
			{ID: 5, PlanTerms: contract.PlanTerms{Name: "Strict"}, Adjustment: contract.Adjustment{Type: "amount", Value: "0"}},
		},
	}
	got, err := json.Marshal(ifaceb.RatePlansOf(p))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":0,"name":"Flexible rate","inclusions":"Breakfast","adjustment":{"type":"percent","value":0},"minimumStay":0,` +
		`"cancellationPolicy":{"policy":"moderate","tiers":[{"days_before":5,"percent":100},{"days_before":1,"percent":50}]}},` +
		`{"id":1,"name":"Non-refundable","inclusions":"","adjustment":{"type":"percent","value":-10},"minimumStay":3,` +
		`"cancellationPolicy":{"policy":"non_refundable","tiers":[]}},` +
		`{"id":4,"name":"Custom","inclusions":"","adjustment":{"type":"amount","value":25.50},"minimumStay":0,` +
		`"cancellationPolicy":{"policy":"custom","tiers":[{"days_before":60,"percent":100},{"days_before":7,"percent":33.33}]}},` +
		`{"id":5,"name":"Strict","inclusions":"","adjustment":{"type":"amount","value":0},"minimumStay":0,` +
		`"cancellationPolicy":{"policy":"flexible","tiers":[{"days_before":1,"percent":100}]}}]`
	if string(got) != want {
		t.Errorf("RatePlansOf:\n got %s\nwant %s", got, want)
	}
	// The plans come after every member clients read today (they read by position too).
	b, _ := json.Marshal(ifaceb.RateTableOf(p))
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	if strings.Join(keys, ",") != "tableName,limitOccupant,extraOccupantFee,firstNightSurcharge,oneNightStaySurcharge,seasons,ratePlans" {
		t.Errorf("rate table keys: %v", keys)
	}
}
