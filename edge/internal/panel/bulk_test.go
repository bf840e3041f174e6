package panel

import (
	"maps"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

// form is a url.Values of the pairs kv (a key may repeat).
func formOf(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// everyDay ticks every weekday.
func everyDay(kv ...string) []string {
	for _, w := range weekdayNames {
		kv = append(kv, "weekday", w)
	}
	return kv
}

// TestParseBulk: the bulk edit form's checks, and the request each property gets.
func TestParseBulk(t *testing.T) {
	base := []string{"property", "V1", "property", "V2", "start_date", "2027-07-01", "end_date", "2027-07-14"}
	with := func(kv ...string) url.Values {
		return formOf(everyDay(append(append([]string{}, base...), kv...)...)...)
	}
	for _, c := range []struct {
		name string
		form url.Values
		want bulkForm
		errs map[string]string // field → a part of its message
	}{
		{name: "min stay and CTA", form: with("set[min_stay_arrival]", "3", "set[closed_to_arrival]", "on"),
			want: bulkForm{Codes: []string{"V1", "V2"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "All",
				Set: map[string]any{"min_stay_arrival": 3, "closed_to_arrival": true}}},
		{name: "every member set", form: with("set[price]", "180.50", "set[min_stay_arrival]", "2", "set[min_stay_through]", "1",
			"set[max_stay]", "14", "set[closed_to_arrival]", "off", "set[closed_to_departure]", "on", "set[stop_sell]", "off"),
			want: bulkForm{Codes: []string{"V1", "V2"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "All",
				Set: map[string]any{"price": "180.5", "min_stay_arrival": 2, "min_stay_through": 1, "max_stay": 14,
					"closed_to_arrival": false, "closed_to_departure": true, "stop_sell": false}}},
		{name: "trailing zeros of a price are fine", form: with("set[price]", "99.500"),
			want: bulkForm{Codes: []string{"V1", "V2"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "All", Set: map[string]any{"price": "99.5"}}},
		{name: "clear all", form: with("clear", "all"),
			want: bulkForm{Codes: []string{"V1", "V2"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "All", Set: map[string]any{}, Clear: []string{"all"}}},
		{name: "clear members, set another", form: with("clear", "min_stay_arrival", "clear", "closed_to_arrival", "clear", "min_stay_arrival", "set[stop_sell]", "on"),
			want: bulkForm{Codes: []string{"V1", "V2"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "All",
				Set: map[string]any{"stop_sell": true}, Clear: []string{"min_stay_arrival", "closed_to_arrival"}}},
		{name: "weekdays", form: formOf(append(append([]string{}, base...), "weekday", "Saturday", "weekday", "Friday", "set[stop_sell]", "on")...),
			want: bulkForm{Codes: []string{"V1", "V2"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "Friday,Saturday", Set: map[string]any{"stop_sell": true}}},
		{name: "one day", form: formOf(everyDay("property", "V1", "start_date", "2027-07-01", "end_date", "2027-07-01", "set[max_stay]", "7")...),
			want: bulkForm{Codes: []string{"V1"}, Start: "2027-07-01", End: "2027-07-01", Weekdays: "All", Set: map[string]any{"max_stay": 7}}},
		{name: "select all takes the rows shown", form: formOf(everyDay("all", "1", "shown", "A", "shown", "B", "shown", "C", "property", "A",
			"start_date", "2027-07-01", "end_date", "2027-07-02", "set[stop_sell]", "on")...),
			want: bulkForm{Codes: []string{"A", "B", "C"}, Start: "2027-07-01", End: "2027-07-02", Weekdays: "All", Set: map[string]any{"stop_sell": true}}},
		{name: "a property ticked twice is one", form: formOf(everyDay("property", "A", "property", " A ", "start_date", "2027-07-01", "end_date", "2027-07-02", "clear", "price")...),
			want: bulkForm{Codes: []string{"A"}, Start: "2027-07-01", End: "2027-07-02", Weekdays: "All", Set: map[string]any{}, Clear: []string{"price"}}},

		{name: "no property", form: formOf(everyDay("start_date", "2027-07-01", "end_date", "2027-07-02", "set[stop_sell]", "on")...),
			errs: map[string]string{"property": "Select at least one property"}},
		{name: "nothing to do", form: with(), errs: map[string]string{"": "Choose something to set or to clear"}},
		{name: "dates missing", form: formOf(everyDay("property", "A", "set[stop_sell]", "on")...),
			errs: map[string]string{"start_date": "is required", "end_date": "is required"}},
		{name: "a date that is not one", form: formOf(everyDay("property", "A", "start_date", "2027-02-30", "end_date", "tomorrow", "set[stop_sell]", "on")...),
			errs: map[string]string{"start_date": "must be a date", "end_date": "must be a date"}},
		{name: "end before start", form: formOf(everyDay("property", "A", "start_date", "2027-07-02", "end_date", "2027-07-01", "set[stop_sell]", "on")...),
			errs: map[string]string{"end_date": "must not be before"}},
		{name: "a range too long", form: formOf(everyDay("property", "A", "start_date", "2027-01-01", "end_date", "2030-01-01", "set[stop_sell]", "on")...),
			errs: map[string]string{"end_date": "at most 1096 days"}},
		{name: "no weekday", form: formOf(append(append([]string{}, base...), "set[stop_sell]", "on")...),
			errs: map[string]string{"weekday": "at least one weekday"}},
		{name: "a weekday that is not one", form: with("weekday", "Funday", "set[stop_sell]", "on"),
			errs: map[string]string{"weekday": "from Monday to Sunday"}},
		{name: "min stay out of range", form: with("set[min_stay_arrival]", "0", "set[max_stay]", "366", "set[min_stay_through]", "2.5"),
			errs: map[string]string{"set[min_stay_arrival]": "1 to 365", "set[max_stay]": "1 to 365", "set[min_stay_through]": "1 to 365"}},
		{name: "min stay over max stay", form: with("set[min_stay_arrival]", "8", "set[max_stay]", "7"),
			errs: map[string]string{"set[min_stay_arrival]": "not be more than the maximum stay"}},
		{name: "prices", form: with("set[price]", "-1"), errs: map[string]string{"set[price]": "at least 0"}},
		{name: "price decimals", form: with("set[price]", "10.005"), errs: map[string]string{"set[price]": "at most 2 decimals"}},
		{name: "price not a number", form: with("set[price]", "ten"), errs: map[string]string{"set[price]": "must be a price"}},
		{name: "price too high", form: with("set[price]", "2147483648"), errs: map[string]string{"set[price]": "at most 2147483647"}},
		{name: "a flag neither on nor off", form: with("set[stop_sell]", "yes"), errs: map[string]string{"set[stop_sell]": "on, off or unchanged"}},
		{name: "set and cleared", form: with("set[max_stay]", "7", "clear", "max_stay"), errs: map[string]string{"set[max_stay]": "both set and cleared"}},
		{name: "clear all with a set", form: with("set[max_stay]", "7", "clear", "all"), errs: map[string]string{"clear": "cannot go with values to set"}},
		{name: "clear an unknown member", form: with("clear", "minimum"), errs: map[string]string{"clear": "from the list"}},
		{name: "too many properties", form: func() url.Values {
			f := with("set[stop_sell]", "on")
			for i := range maxBulkProperties + 1 {
				f.Add("property", "P"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26)))
			}
			return f
		}(), errs: map[string]string{"property": "at most 100"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, errs := parseBulk(c.form)
			if c.errs == nil {
				if errs != nil {
					t.Fatalf("refused: %v", errs)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("got %#v\nwant %#v", got, c.want)
				}
				return
			}
			for f, part := range c.errs {
				if !strings.Contains(errs[f], part) {
					t.Errorf("%s: %q, want it to say %q (all: %v)", f, errs[f], part, errs)
				}
			}
			if errs[""] == "" {
				t.Errorf("no message for the form: %v", errs)
			}
		})
	}
}

// TestBulkBody: the /api/property-restriction request of one property.
func TestBulkBody(t *testing.T) {
	b := bulkForm{Codes: []string{"V1"}, Start: "2027-07-01", End: "2027-07-14", Weekdays: "Friday,Saturday",
		Set: map[string]any{"min_stay_arrival": 3}, Clear: []string{"max_stay"}}
	got := b.body("V1")
	want := map[string]any{"internal_code": "V1", "dates": []map[string]string{{"start_date": "2027-07-01", "end_date": "2027-07-14", "weekdays": "Friday,Saturday"}},
		"set": map[string]any{"min_stay_arrival": 3}, "clear": []string{"max_stay"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	b.Set, b.Clear = map[string]any{}, []string{"all"}
	if got := b.body("V1"); got["set"] != nil || !reflect.DeepEqual(got["clear"], []string{"all"}) {
		t.Fatalf("clear only: %#v", got)
	}
}

// TestReadMultiQuery: the multi-property calendar's parameters, their defaults and refusals,
// and its links.
func TestReadMultiQuery(t *testing.T) {
	today := time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)
	read := func(kv ...string) (multiQuery, error) {
		v := formOf(kv...)
		return readMultiQuery(v.Get, today)
	}
	q, err := read()
	if err != nil || q != (multiQuery{From: today, Days: 14, Page: 1, Rows: 25}) {
		t.Fatalf("defaults: %+v %v", q, err)
	}
	if q.link() != "/panel/multicalendar?from=2027-03-10" {
		t.Fatalf("link of the defaults: %s", q.link())
	}
	q, err = read("from", "2027-01-31", "days", "31", "rows", "100", "page", "2", "brand", "3", "city", " Rome ")
	want := multiQuery{From: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), Days: 31, Rows: 100, Page: 2, Brand: 3, City: "Rome"}
	if err != nil || q != want {
		t.Fatalf("all set: %+v %v", q, err)
	}
	if l := q.link(); l != "/panel/multicalendar?brand=3&city=Rome&days=31&from=2027-01-31&page=2&rows=100" {
		t.Fatalf("link: %s", l)
	}
	for _, bad := range [][]string{{"from", "2027-02-30"}, {"from", "1999-12-31"}, {"days", "15"}, {"rows", "1000"}, {"page", "0"},
		{"page", "x"}, {"brand", "-1"}, {"city", strings.Repeat("a", 201)}} {
		if _, err := read(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestFilterProperties: by city ignoring case, by brand (a brand listing none shows every
// property), both.
func TestFilterProperties(t *testing.T) {
	props := []propertyItem{{PropertyID: "1", InternalCode: "A", City: "Rome"}, {PropertyID: "2", InternalCode: "B", City: "rome"},
		{PropertyID: "3", InternalCode: "C", City: "Milan"}, {PropertyID: "4", InternalCode: "D", City: ""}}
	brands := []contract.Brand{{ID: 1, Properties: []int64{2, 3}}, {ID: 2}}
	codes := func(ps []propertyItem) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.InternalCode)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		brand int64
		city  string
		want  string
	}{{0, "", "A,B,C,D"}, {0, "ROME", "A,B"}, {1, "", "B,C"}, {1, "Rome", "B"}, {2, "", "A,B,C,D"}, {9, "", ""}, {0, "Paris", ""}} {
		if got := codes(filterProperties(props, brands, c.brand, c.city)); got != c.want {
			t.Errorf("brand %d city %q: %s, want %s", c.brand, c.city, got, c.want)
		}
	}
	if got := citiesOf(props); !reflect.DeepEqual(got, []string{"Milan", "Rome"}) {
		t.Errorf("cities: %v", got)
	}
}

// TestParsePlan: the rate plan form's checks and the rate_plan object it sends.
func TestParsePlan(t *testing.T) {
	full := []string{"rate_plan[name]", "Non-refundable", "rate_plan[inclusions]", "Breakfast", "rate_plan[adjustment][type]", "percent",
		"rate_plan[adjustment][value]", "-10", "rate_plan[minimum_stay]", "2", "rate_plan[cancellation][policy]", "non_refundable",
		"rate_plan[sold_on][direct]", "1", "brand", "1", "brand", "3", "rate_plan[sold_on][channels]", "airbnb, bookingcom",
		"rate_plan[ranges][0][start_date]", "2027-07-01", "rate_plan[ranges][0][end_date]", "2027-08-31", "rate_plan[ranges][0][type]", "percent",
		"rate_plan[ranges][0][value]", "-5", "rate_plan[ranges][1][type]", "percent"}
	for _, c := range []struct {
		name   string
		prefix string
		form   url.Values
		want   map[string]any
		errs   map[string]string
	}{
		{name: "a derived plan", prefix: "rate_plan", form: formOf(full...), want: map[string]any{"name": "Non-refundable", "inclusions": "Breakfast",
			"adjustment": map[string]string{"type": "percent", "value": "-10"}, "minimum_stay": 2,
			"ranges":       []map[string]string{{"start_date": "2027-07-01", "end_date": "2027-08-31", "type": "percent", "value": "-5"}},
			"cancellation": map[string]any{"policy": "non_refundable"},
			"sold_on":      map[string]any{"direct": true, "all_brands": false, "brands": []int64{1, 3}, "channels": []string{"airbnb", "bookingcom"}}}},
		{name: "an update names its id; empty lists are sent", prefix: "rate_plan", form: formOf("rate_plan[id]", "4", "rate_plan[name]", "Weekly",
			"rate_plan[adjustment][type]", "amount", "rate_plan[adjustment][value]", "5.50", "rate_plan[cancellation][policy]", "custom",
			"rate_plan[cancellation][tiers][0][percent]", "100", "rate_plan[cancellation][tiers][0][days_before]", "30",
			"rate_plan[cancellation][tiers][2][percent]", "50", "rate_plan[cancellation][tiers][2][days_before]", "7"),
			want: map[string]any{"id": int64(4), "name": "Weekly", "inclusions": "", "adjustment": map[string]string{"type": "amount", "value": "5.50"},
				"minimum_stay": 0, "ranges": []map[string]string{},
				"cancellation": map[string]any{"policy": "custom", "tiers": []map[string]any{{"percent": "100", "days_before": 30}, {"percent": "50", "days_before": 7}}},
				"sold_on":      map[string]any{"direct": false, "all_brands": false, "brands": []int64{}, "channels": []string{}}}},
		{name: "the standard plan sends its terms only", prefix: "standard", form: formOf("standard[name]", "Flexible rate", "standard[cancellation][policy]", "moderate",
			"rate_plan[adjustment][value]", "-10", "rate_plan[name]", "not this form's"),
			want: map[string]any{"id": 0, "name": "Flexible rate", "inclusions": "", "cancellation": map[string]any{"policy": "moderate"}}},

		{name: "adjustment", prefix: "rate_plan", form: formOf("rate_plan[name]", "X", "rate_plan[adjustment][type]", "ratio",
			"rate_plan[adjustment][value]", "ten", "rate_plan[cancellation][policy]", "flexible"),
			errs: map[string]string{"rate_plan[adjustment][type]": "percent or amount", "rate_plan[adjustment][value]": "must be a number"}},
		{name: "minimum stay", prefix: "rate_plan", form: formOf("rate_plan[adjustment][type]", "percent", "rate_plan[adjustment][value]", "1",
			"rate_plan[minimum_stay]", "366", "rate_plan[cancellation][policy]", "flexible"),
			errs: map[string]string{"rate_plan[minimum_stay]": "0 to 365"}},
		{name: "the standard plan's blank name is not sent", prefix: "standard", form: formOf("standard[name]", " ", "standard[cancellation][policy]", "strict"),
			want: map[string]any{"id": 0, "inclusions": "", "cancellation": map[string]any{"policy": "strict"}}},
		{name: "policy", prefix: "standard", form: formOf("standard[cancellation][policy]", "lenient"),
			errs: map[string]string{"standard[cancellation][policy]": "must be one of flexible, moderate"}},
		{name: "custom without tiers", prefix: "standard", form: formOf("standard[cancellation][policy]", "custom"),
			errs: map[string]string{"standard[cancellation][tiers]": "at least one tier"}},
		{name: "tiers without custom", prefix: "standard", form: formOf("standard[cancellation][policy]", "strict",
			"standard[cancellation][tiers][0][percent]", "10", "standard[cancellation][tiers][0][days_before]", "3"),
			errs: map[string]string{"standard[cancellation][tiers]": "only a custom policy"}},
		{name: "tier values", prefix: "standard", form: formOf("standard[cancellation][policy]", "custom",
			"standard[cancellation][tiers][0][percent]", "101", "standard[cancellation][tiers][0][days_before]", "731"),
			errs: map[string]string{"standard[cancellation][tiers][0][percent]": "0 to 100", "standard[cancellation][tiers][0][days_before]": "0 to 730"}},
		{name: "range value", prefix: "rate_plan", form: formOf("rate_plan[adjustment][type]", "percent", "rate_plan[adjustment][value]", "1",
			"rate_plan[cancellation][policy]", "flexible", "rate_plan[ranges][0][start_date]", "2027-01-01", "rate_plan[ranges][0][value]", "x"),
			errs: map[string]string{"rate_plan[ranges][0][value]": "must be a number"}},
		{name: "a brand that is not an id", prefix: "rate_plan", form: formOf("rate_plan[adjustment][type]", "percent", "rate_plan[adjustment][value]", "1",
			"rate_plan[cancellation][policy]", "flexible", "brand", "first"),
			errs: map[string]string{"rate_plan[sold_on][brands]": "ids of your brands"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, errs := parsePlan(c.form, c.prefix)
			if c.errs == nil {
				if errs != nil {
					t.Fatalf("refused: %v", errs)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("got  %#v\nwant %#v", got, c.want)
				}
				return
			}
			for f, part := range c.errs {
				if !strings.Contains(errs[f], part) {
					t.Errorf("%s: %q, want it to say %q (all: %v)", f, errs[f], part, errs)
				}
			}
			if extra := maps.Collect(func(yield func(string, string) bool) {
				for k, v := range errs {
					if _, ok := c.errs[k]; !ok && !yield(k, v) {
						return
					}
				}
			}); len(extra) > 0 {
				t.Errorf("other violations: %v", extra)
			}
		})
	}
}

// TestFormStateRows: a sent plan form is shown again with as many rows as it had.
func TestFormStateRows(t *testing.T) {
	st := formState(formOf("rate_plan[ranges][5][value]", "1", "rate_plan[cancellation][tiers][3][percent]", "1",
		"standard[cancellation][tiers][7][percent]", "1", "brand", "2", "_csrf", "secret"))
	if st.rows["ranges"] != 6 || st.rows["tiers"] != 4 || st.rows["standard"] != 8 {
		t.Fatalf("rows %v", st.rows)
	}
	if st.values["brand:2"] != "1" || st.values["_csrf"] != "" {
		t.Fatalf("values %v", st.values)
	}
}
