package property

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// MaxPricingDays bounds one setprices_minnights request (two years and some).
const MaxPricingDays = 1000

// DayPrice is a per-date price and minimum stay from a dynamic-pricing tool.
type DayPrice struct {
	Date      time.Time // midnight UTC
	Price     decimal.Decimal
	Weekly    *decimal.Decimal
	Monthly   *decimal.Decimal
	MinNights int // 0: not set
}

// DailyPrices is a setprices_minnights request.
type DailyPrices struct {
	AccountID  string // the <user_id> half of propertyId
	PropertyID int
	Days       []DayPrice
}

// ParseAccountProperty reads an id of the form "<user_id>_<property_id>".
func ParseAccountProperty(s string) (string, int, bool) {
	acc, pid, ok := strings.Cut(s, "_")
	n, err := strconv.Atoi(pid)
	if !ok || acc == "" || err != nil || n < 1 || strconv.Itoa(n) != pid {
		return "", 0, false
	}
	return acc, n, true
}

// DecodeDailyPrices reads setprices_minnights: propertyId "<user_id>_<property_id>" and
// pricingArray, the list of dates. The spec sends pricingArray as a string holding a JSON
// array; clients also send the array itself, and PHP form bodies arrive as a list of
// objects whose values are strings (an object keyed "0", "1", … is that list too). Every
// form is read with the same rules, violations named pricingArray[i].field: an item that
// cannot be applied fails the whole request, so no price is ever dropped silently.
func DecodeDailyPrices(body []byte) (DailyPrices, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var out DailyPrices
	if id, ok := o.String("propertyId", fields.Str{Required: true, Max: 50}); ok {
		acc, pid, ok := ParseAccountProperty(id)
		if !ok {
			v.Add("propertyId", "must be <user_id>_<property_id>, such as 1001_17")
		}
		out.AccountID, out.PropertyID = acc, pid
	}
	if list := pricingList(o, &v); list != nil {
		items, _ := list.Array("pricingArray", fields.List{Required: true, Min: 1, Max: MaxPricingDays})
		seen := map[string]bool{}
		for _, it := range items {
			var d DayPrice
			d.Date, _ = it.Date("date", true)
			d.Price, _ = it.Decimal("recommended_price", requiredPrice)
			d.Weekly = optional(it.Decimal("recommended_weekly_price", price))
			d.Monthly = optional(it.Decimal("recommended_monthly_price", price))
			d.MinNights, _ = it.Int("minNights", fields.Int{Min: 1, Max: 365})
			_, _ = it.Decimal("current_price", fields.Dec{Max: maxInt32})
			_, _ = it.String("reason", fields.Str{Max: 1000})
			if !d.Date.IsZero() {
				key := d.Date.Format(time.DateOnly)
				if seen[key] {
					it.Add("date", fmt.Sprintf("repeats %s", key))
				}
				seen[key] = true
			}
			out.Days = append(out.Days, d)
		}
	}
	if err := v.Err(); err != nil {
		return DailyPrices{}, err
	}
	return out, nil
}

// pricingList returns an object whose member pricingArray is the list of dates: the body
// itself when the list was sent as JSON, else the list parsed out of the string that holds
// it (its paths still under pricingArray). nil when there is nothing to read (recorded).
func pricingList(o *fields.Object, v *fields.Violations) *fields.Object {
	if o.Kind("pricingArray") != fields.KindString {
		return o // an array, a numeric-keyed object, absent or wrong: Array says which
	}
	raw, ok := o.String("pricingArray", fields.Str{Required: true, Max: 1 << 20})
	if !ok {
		return nil
	}
	if !json.Valid([]byte(raw)) {
		v.Add("pricingArray", "must be a JSON array, or a string holding one")
		return nil
	}
	return fields.Parse([]byte(`{"pricingArray":`+raw+`}`), "", v)
}

// DecodePaymentQuery reads getpayment's propertyId.
func DecodePaymentQuery(body []byte) (int, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	pid, _ := o.Int("propertyId", fields.Int{Required: true, Min: 1, Max: 1 << 53})
	return pid, v.Err()
}
