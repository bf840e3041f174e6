package panel

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The multi-property calendar's bulk edit form: which properties, which dates, what to set
// and what to clear. parseBulk checks it so that the owner reads a clear message at the
// field before anything is sent; /api/property-restriction checks everything again and is
// the authority (docs/rate-plans.md).

// weekdayNames are the weekday boxes of the form, in the order shown; the API's day set
// takes the names as they are.
var weekdayNames = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// bulkMember is a restriction member the form sets or clears.
type bulkMember struct {
	Name, Label string
	// Kind: "price" (a decimal ≥ 0), "stay" (a whole number of nights 1–365), "flag" (on/off).
	Kind string
}

// bulkMembers are the members of /api/property-restriction's set, in the form's order.
var bulkMembers = []bulkMember{
	{"price", "Nightly price", "price"},
	{"min_stay_arrival", "Minimum stay (on arrival)", "stay"},
	{"min_stay_through", "Minimum stay through", "stay"},
	{"max_stay", "Maximum stay", "stay"},
	{"closed_to_arrival", "Closed to arrival (CTA)", "flag"},
	{"closed_to_departure", "Closed to departure (CTD)", "flag"},
	{"stop_sell", "Stop-sell", "flag"},
}

const (
	// maxBulkProperties: a bulk edit changes at most the rows of one page.
	maxBulkProperties = 100
	// maxRangeDays is the longest range of /api/property-restriction.
	maxRangeDays = 1096
	maxPrice     = 2147483647
)

// bulkForm is a checked bulk edit.
type bulkForm struct {
	Codes      []string
	Start, End string
	// Weekdays is the API's day set: All, or the days ticked.
	Weekdays string
	Set      map[string]any
	Clear    []string
}

// body is the /api/property-restriction request for one property.
func (b bulkForm) body(code string) map[string]any {
	out := map[string]any{"internal_code": code,
		"dates": []map[string]string{{"start_date": b.Start, "end_date": b.End, "weekdays": b.Weekdays}}}
	if len(b.Set) > 0 {
		out["set"] = b.Set
	}
	if len(b.Clear) > 0 {
		out["clear"] = b.Clear
	}
	return out
}

// parseBulk reads the bulk edit form: the properties ticked (property, or every row shown
// when all is 1), start_date and end_date, the weekdays ticked, set[<member>] and clear.
// Violations are keyed by field name; "" is a message for the whole form.
func parseBulk(f url.Values) (bulkForm, map[string]string) {
	errs := map[string]string{}
	var b bulkForm

	codes := f["property"]
	if f.Get("all") == "1" {
		codes = f["shown"]
	}
	for _, c := range codes {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(b.Codes, c) {
			b.Codes = append(b.Codes, c)
		}
	}
	switch {
	case len(b.Codes) == 0:
		errs["property"] = "Select at least one property."
	case len(b.Codes) > maxBulkProperties:
		errs["property"] = "Select at most " + strconv.Itoa(maxBulkProperties) + " properties at once."
	}

	start, okStart := bulkDate(f, "start_date", errs)
	end, okEnd := bulkDate(f, "end_date", errs)
	if okStart && okEnd {
		switch {
		case end.Before(start):
			errs["end_date"] = "must not be before the start date"
		case int(end.Sub(start).Hours()/24)+1 > maxRangeDays:
			errs["end_date"] = "a range may cover at most " + strconv.Itoa(maxRangeDays) + " days"
		}
		b.Start, b.End = start.Format(time.DateOnly), end.Format(time.DateOnly)
	}

	var days []string
	for _, w := range weekdayNames {
		if slices.Contains(f["weekday"], w) {
			days = append(days, w)
		}
	}
	for _, w := range f["weekday"] {
		if !slices.Contains(weekdayNames, w) {
			errs["weekday"] = "Tick weekdays from Monday to Sunday."
		}
	}
	switch {
	case len(days) == 0:
		errs["weekday"] = "Tick at least one weekday."
	case len(days) == len(weekdayNames):
		b.Weekdays = "All"
	default:
		b.Weekdays = strings.Join(days, ",")
	}

	b.Set = map[string]any{}
	for _, m := range bulkMembers {
		name := "set[" + m.Name + "]"
		s := strings.TrimSpace(f.Get(name))
		if s == "" {
			continue
		}
		switch m.Kind {
		case "price":
			d, err := decimal.NewFromString(s)
			switch {
			case err != nil:
				errs[name] = "must be a price, such as 120 or 99.50"
			case d.IsNegative():
				errs[name] = "must be at least 0"
			case d.Exponent() < -2 && !d.Equal(d.Round(2)):
				errs[name] = "must have at most 2 decimals"
			case d.GreaterThan(decimal.NewFromInt(maxPrice)):
				errs[name] = "must be at most 2147483647"
			default:
				b.Set[m.Name] = d.String()
			}
		case "stay":
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 365 {
				errs[name] = "must be a whole number of nights from 1 to 365"
				continue
			}
			b.Set[m.Name] = n
		case "flag":
			switch s {
			case "on":
				b.Set[m.Name] = true
			case "off":
				b.Set[m.Name] = false
			default:
				errs[name] = "must be on, off or unchanged"
			}
		}
	}
	if lo, ok := b.Set["min_stay_arrival"].(int); ok {
		if hi, ok := b.Set["max_stay"].(int); ok && lo > hi {
			errs["set[min_stay_arrival]"] = "must not be more than the maximum stay"
		}
	}

	for _, c := range f["clear"] {
		known := c == "all" || slices.ContainsFunc(bulkMembers, func(m bulkMember) bool { return m.Name == c })
		switch {
		case !known:
			errs["clear"] = "Tick members to clear from the list."
		case slices.Contains(b.Clear, c):
		case b.Set[c] != nil:
			errs["set["+c+"]"] = "is both set and cleared: choose one"
		default:
			b.Clear = append(b.Clear, c)
		}
	}
	if slices.Contains(b.Clear, "all") {
		if len(b.Set) > 0 {
			errs["clear"] = "Clearing everything cannot go with values to set: clear first, then set."
		}
		b.Clear = []string{"all"}
	}
	if len(b.Set) == 0 && len(b.Clear) == 0 && len(errs) == 0 {
		errs[""] = "Choose something to set or to clear."
	}
	if len(errs) > 0 {
		if _, ok := errs[""]; !ok {
			errs[""] = "Nothing was changed: correct the fields marked below."
		}
		return bulkForm{}, errs
	}
	return b, nil
}

// bulkDate reads a required date field.
func bulkDate(f url.Values, name string, errs map[string]string) (time.Time, bool) {
	s := strings.TrimSpace(f.Get(name))
	if s == "" {
		errs[name] = "is required"
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 2000 || t.Year() > 2100 {
		errs[name] = "must be a date YYYY-MM-DD"
		return time.Time{}, false
	}
	return t, true
}
