package panel

import (
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/libs/events/contract"
)

// execute draws page with v as render does, without a request.
func execute(t *testing.T, page string, v view) string {
	t.Helper()
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Values == nil {
		v.Values = map[string]string{}
	}
	var b strings.Builder
	if err := p.pages[page].ExecuteTemplate(&b, "layout.html", v); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	return b.String()
}

// TestMultiCalendarDraws: a cell says its state, price, min stay and CTA/CTD; names are
// escaped; the results of a bulk edit are listed; the form keeps what was ticked.
func TestMultiCalendarDraws(t *testing.T) {
	sess := panelauth.Session{Email: "o@example.com", Role: panelauth.Owner, CSRF: "tok"}
	q := multiQuery{Days: 14, Rows: 25, Page: 1, City: "Rome"}
	d := multiData{Q: q, From: "2027-07-01", To: "2027-07-02", Weekdays: weekdayNames, Members: bulkMembers, DayChoices: dayChoices, RowChoices: rowChoices,
		Dates:    []dateHead{{Date: "2027-07-01", Dow: "Thu", Num: 1}, {Date: "2027-07-02", Dow: "Fri", Num: 2}},
		Brands:   []contract.Brand{{ID: 2, Name: "Sea"}},
		Cities:   []string{"Rome"},
		Selected: map[string]bool{"V1": true}, Ticked: map[string]bool{"Friday": true}, Cleared: map[string]bool{"max_stay": true},
		Results: []bulkResult{{Code: "V1", OK: true, Dates: 14}, {Code: "V2", Message: "request has 1 invalid field: set.max_stay: <b>"}},
		Rows: []multiRow{{Code: "V1", Name: "<script>x</script>", City: "Rome", Days: []Day{
			{Date: "2027-07-01", Price: "120", MinStay: 3, CTA: true, Free: true},
			{Date: "2027-07-02", Price: "130", Stopped: true, CTD: true, Free: true}}},
			{Code: "V2", Name: "Two", Problem: "no rates", Days: []Day{{Date: "2027-07-01", BlockID: "5", Free: false}, {Date: "2027-07-02", Booking: &bookingItem{}}}}}}
	html := execute(t, "multicalendar", view{Title: "Multi-property calendar", Session: sess, Nav: "multicalendar", Data: d,
		Values: map[string]string{"set[min_stay_arrival]": "3"}, Errors: map[string]string{"weekday": "Tick at least one weekday."}})
	for _, want := range []string{
		`data-date="2027-07-01" data-state="free"`, `<span class="price">120</span>`, `min 3`, `title="Closed to arrival">CTA`,
		`data-state="stopped"`, `title="Closed to departure">CTD`, `data-state="blocked"`, `data-state="booked"`,
		`&lt;script&gt;x&lt;/script&gt;`, `no rates`, `OK: 14 dates changed`, `set.max_stay: &lt;b&gt;`, `Bulk edit: 0 of 2`,
		`name="property" value="V1" id="p-V1" checked`, `name="weekday" value="Friday" checked`, `name="clear" value="max_stay" checked`,
		`name="set[min_stay_arrival]" type="number" value="3"`, `Tick at least one weekday.`, `<input type="hidden" name="city" value="Rome">`,
		`<option value="Rome" selected>`, `<option value="2" >Sea</option>`, `aria-current="page">Multi-calendar`, `name="_csrf" value="tok"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(html, "<script>x") {
		t.Error("a name is not escaped")
	}
}

// TestRatePlansDraws: the plans (standard first), their terms, the markups, and the forms
// with their values.
func TestRatePlansDraws(t *testing.T) {
	sess := panelauth.Session{Email: "o@example.com", Role: panelauth.Owner, CSRF: "tok"}
	d := ratePlansData{Code: "V1", Tab: "rateplans", Policies: policies, RangeRows: 3, TierRows: 3, StandardTierRows: 3, EditID: 1,
		Brands: []contract.Brand{{ID: 1, Name: "Sea"}},
		Plans: []contract.RatePlan{{ID: 0, PlanTerms: contract.PlanTerms{Name: "Standard"}},
			{ID: 1, PlanTerms: contract.PlanTerms{Name: "Non-refundable", Inclusions: "Breakfast",
				Cancellation: &contract.Cancellation{Policy: contract.CancelCustom, Tiers: []contract.CancellationTier{{DaysBefore: 30, Percent: "100"}}}},
				Adjustment: contract.Adjustment{Type: "percent", Value: "-10"}, MinimumStay: 2,
				SoldOn: contract.SoldOn{Direct: true, Brands: []int64{1}, Channels: []string{"airbnb"}}}},
		PropertyMarkups: []contract.Markup{{Channel: "vrbo", Adjustment: contract.Adjustment{Type: "amount", Value: "5"}}},
		AccountMarkups:  []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: "percent", Value: "15"}}}}
	values := map[string]string{}
	planValues(values, "rate_plan", d.Plans[1])
	planValues(values, "standard", d.Plans[0])
	html := execute(t, "rateplans", view{Title: "Rate plans", Session: sess, Nav: "properties", Data: d, Values: values,
		Errors: map[string]string{"rate_plan[sold_on][channels]": "lists airbnb twice"}})
	for _, want := range []string{`<td>Standard</td>`, `<td>flexible</td>`, `-10 %`, `2 nights`, `custom: 100 % until 30 days before`,
		`direct; brands 1; channels airbnb`, `Edit plan 1`, `name="rate_plan[id]" value="1"`, `value="Non-refundable"`,
		`name="brand" value="1" checked`, `name="rate_plan[sold_on][direct]" value="1" checked`, `value="airbnb"`, `lists airbnb twice`,
		`&#43;5 per night`, `&#43;15 %`, `data-level="account" data-channel="airbnb"`, `name="standard[name]" type="text" value="Standard"`,
		`aria-current="page">Rate plans`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
