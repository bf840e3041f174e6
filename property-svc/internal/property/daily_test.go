package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

// pricingItems is the list of dates of setprices_minnights; the tables send it in each
// form clients use.
const pricingItems = `[{"date":"2027-03-01","recommended_price":"120.50","minNights":"3","current_price":"110","reason":"demand"},` +
	`{"date":"2027-03-02","recommended_price":99,"recommended_weekly_price":"600","recommended_monthly_price":"2000"}]`

// The three forms: the spec's string, a JSON array, and a form body's list of objects with
// string values (which PHP's bracket notation decodes as an object keyed "0", "1").
var pricingForms = []struct{ name, body string }{
	{"string", `{"propertyId":"1001_17","pricingArray":` + quote(pricingItems) + `}`},
	{"array", `{"propertyId":"1001_17","pricingArray":` + pricingItems + `}`},
	{"form list", `{"propertyId":"1001_17","pricingArray":{"0":{"date":"2027-03-01","recommended_price":"120.50","minNights":"3","current_price":"110","reason":"demand"},` +
		`"1":{"date":"2027-03-02","recommended_price":"99","recommended_weekly_price":"600","recommended_monthly_price":"2000"}}}`},
}

func quote(s string) string {
	out := []byte{'"'}
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return string(append(out, '"'))
}

func decodeDaily(body []byte) error {
	_, err := property.DecodeDailyPrices(body)
	return err
}

func TestDecodeDailyPricesForms(t *testing.T) {
	for _, f := range pricingForms {
		t.Run(f.name, func(t *testing.T) {
			req, err := property.DecodeDailyPrices([]byte(f.body))
			if err != nil {
				t.Fatal(err)
			}
			if req.AccountID != "1001" || req.PropertyID != 17 || len(req.Days) != 2 {
				t.Fatalf("request %+v", req)
			}
			d0, d1 := req.Days[0], req.Days[1]
			switch {
			case d0.Date.Format("2006-01-02") != "2027-03-01" || !d0.Price.Equal(dec("120.5")) || d0.MinNights != 3 || d0.Weekly != nil:
				t.Errorf("day 0: %+v", d0)
			case d1.Date.Format("2006-01-02") != "2027-03-02" || !d1.Price.Equal(dec("99")) || d1.MinNights != 0 ||
				!d1.Weekly.Equal(dec("600")) || !d1.Monthly.Equal(dec("2000")):
				t.Errorf("day 1: %+v", d1)
			}
		})
	}
}

// Every rule, in each form: an item that cannot be applied is an error naming it, never a
// price dropped.
func TestDecodeDailyPrices(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("propertyId missing", "propertyId: is required", set("propertyId", del)),
		tc("propertyId plain id", "propertyId: must be <user_id>_<property_id>, such as 1001_17", set("propertyId", "17")),
		tc("pricingArray missing", "pricingArray: is required", set("pricingArray", del)),
		tc("pricingArray empty list", "pricingArray: must have at least 1 item", set("pricingArray", []any{})),
		tc("pricingArray a number", "pricingArray: must be an array", set("pricingArray", 5)),
		tc("pricingArray an object", "pricingArray: must be an array", set("pricingArray", obj(`{"date":"2027-03-01"}`))),
		tc("pricingArray 1001 items", "pricingArray: must have at most 1000 items", set("pricingArray", many(1001, `{"date":"2027-03-01","recommended_price":1}`))),
		tc("item not an object", "pricingArray[1]: must be an object", set("pricingArray[1]", "2027-03-02")),
		tc("date missing", "pricingArray[1].date: is required", set("pricingArray[1].date", del)),
		tc("date impossible", "pricingArray[0].date: must be a valid date (YYYY-MM-DD)", set("pricingArray[0].date", "2027-02-30")),
		tc("date twice", "pricingArray[1].date: repeats 2027-03-01", set("pricingArray[1].date", "2027-03-01")),
		tc("price missing", "pricingArray[1].recommended_price: is required", set("pricingArray[1].recommended_price", del)),
		tc("price negative", "pricingArray[0].recommended_price: must be between 0 and 2147483647", set("pricingArray[0].recommended_price", "-1")),
		tc("price 3 decimals", "pricingArray[0].recommended_price: must have at most 2 decimal places", set("pricingArray[0].recommended_price", "1.005")),
		tc("price not a number", "pricingArray[0].recommended_price: must be a number", set("pricingArray[0].recommended_price", "cheap")),
		tc("weekly negative", "pricingArray[1].recommended_weekly_price: must be between 0 and 2147483647", set("pricingArray[1].recommended_weekly_price", -5)),
		tc("minNights 0", "pricingArray[0].minNights: must be between 1 and 365", set("pricingArray[0].minNights", "0")),
		tc("minNights fraction", "pricingArray[0].minNights: must be a whole number", set("pricingArray[0].minNights", "2.5")),
		tc("reason too long", "pricingArray[0].reason: must be at most 1000 characters", set("pricingArray[0].reason", chars(1001))),
	}
	check(t, `{"propertyId":"1001_17","pricingArray":`+pricingItems+`}`, rows, decodeDaily)

	// The same rules inside the string form, with the same paths.
	for _, r := range []struct{ name, items, want string }{
		{"valid", pricingItems, ""},
		{"not JSON", `[{"date":`, "pricingArray: must be a JSON array, or a string holding one"},
		{"blank", ` `, "pricingArray: is required"},
		{"a JSON number", `5`, "pricingArray: must be an array"},
		{"empty", `[]`, "pricingArray: must have at least 1 item"},
		{"bad date", `[{"date":"2027-02-30","recommended_price":"1"}]`, "pricingArray[0].date: must be a valid date (YYYY-MM-DD)"},
		{"price missing", `[{"date":"2027-03-01"}]`, "pricingArray[0].recommended_price: is required"},
		{"date twice", `[{"date":"2027-03-01","recommended_price":1},{"date":"2027-03-01","recommended_price":2}]`, "pricingArray[1].date: repeats 2027-03-01"},
	} {
		t.Run("string "+r.name, func(t *testing.T) {
			err := decodeDaily([]byte(`{"propertyId":"1001_17","pricingArray":` + quote(r.items) + `}`))
			if got := joined(violations(t, err)); got != r.want {
				t.Errorf("got %q, want %q", got, r.want)
			}
		})
	}
	// A form list with a gap keeps the sent index in the paths.
	err := decodeDaily([]byte(`{"propertyId":"1001_17","pricingArray":{"0":{"date":"2027-03-01","recommended_price":"1"},"3":{"date":"2027-03-02","recommended_price":"x"}}}`))
	if got := joined(violations(t, err)); got != "pricingArray[3].recommended_price: must be a number" {
		t.Errorf("form list with a gap: %q", got)
	}
}

func joined(lines []string) string {
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n"
		}
		out += l
	}
	return out
}
