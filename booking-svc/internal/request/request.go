// Package request decodes the bodies of interface B's booking-svc actions
// into plain input structs, listing every broken rule with the field path as
// the client sent it ("numberofadults", "service[0].amount",
// "creditCard.CCNumber", "detailInformation[2].dateOfBirth").
//
// Every Decode function returns a *fields.Error on invalid input. Dates are
// time.Time at midnight UTC, money is decimal.Decimal. Numbers and booleans
// may arrive as JSON strings (PHP forms). Rules that need the time take a
// now parameter; the package reads no clock and does no I/O.
//
// The rules, and the choices made where the spec is silent, are written up
// in docs/interface-b-fields.md.
package request

import (
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/libs/fields"
)

// maxInt32 is the spec's upper bound for ids and amounts.
const maxInt32 = 2147483647

var maxAmount = decimal.NewFromInt(maxInt32)

const (
	currencyMsg = "must be an ISO 4217 currency code"
	futureMsg   = "must not be in the future"
)

// idRule is the rule of a numeric id: 1 to 2147483647.
func idRule(required bool) fields.Int {
	return fields.Int{Required: required, Min: 1, Max: maxInt32}
}

// readCurrency reads an ISO 4217 code in any case and returns it upper
// case. A blank value reads as "", present (the main currency). XXX ("no
// currency") is refused: amounts need a currency.
func readCurrency(o *fields.Object, name string) (string, bool) {
	s, ok := o.String(name, fields.Str{})
	if !ok || s == "" {
		return s, ok
	}
	u, err := currency.ParseISO(s)
	if len(s) != 3 || err != nil || u.String() == "XXX" {
		o.Add(name, currencyMsg)
		return "", false
	}
	return u.String(), true
}

const stayDateMsg = "must be a valid date (YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)"

// readStayDate reads checkin or checkout: a date YYYY-MM-DD, or the booking object's own
// YYYY-MM-DD HH:MM:SS (so that a client can send a booking back), whose time part must be a
// valid time and is then ignored (the property's check-in and check-out times apply).
func readStayDate(o *fields.Object, name string, required bool) (time.Time, bool) {
	switch o.Kind(name) {
	case fields.KindAbsent, fields.KindNull:
		return o.Date(name, required)
	case fields.KindString:
	default:
		o.Add(name, stayDateMsg)
		return time.Time{}, false
	}
	s, ok := o.String(name, fields.Str{})
	if !ok {
		return time.Time{}, false
	}
	if s = strings.TrimSpace(s); s == "" {
		return o.Date(name, required) // blank: not sent
	}
	layout := time.DateOnly
	if len(s) > len(time.DateOnly) {
		layout = time.DateTime
	}
	t, err := time.Parse(layout, s)
	if err != nil || len(s) != len(layout) {
		o.Add(name, stayDateMsg)
		return time.Time{}, false
	}
	return today(t), true
}

// readFlag reads an "integer 0 or 1" member. PHP and JavaScript clients
// also send booleans, so true and false (as JSON booleans or strings) are
// read too. A blank string is not sent.
func readFlag(o *fields.Object, name string) (bool, bool) {
	const msg = "must be one of 0, 1"
	switch o.Kind(name) {
	case fields.KindAbsent, fields.KindNull:
		return false, false
	case fields.KindBool:
		return o.Bool(name, false)
	case fields.KindNumber:
	case fields.KindString:
		s, _ := o.String(name, fields.Str{})
		switch {
		case strings.TrimSpace(s) == "":
			return false, false
		case strings.EqualFold(s, "true") || strings.EqualFold(s, "false"):
			return o.Bool(name, false)
		case !numeric.MatchString(s):
			o.Add(name, msg)
			return false, false
		}
	default:
		o.Add(name, msg)
		return false, false
	}
	n, ok := o.Int(name, fields.Int{OneOf: []int64{0, 1}})
	return n == 1, ok
}

var numeric = regexp.MustCompile(`^\s*-?[0-9]+(\.[0-9]+)?\s*$`)

// readPastDate reads an optional date that may not be after today.
func readPastDate(o *fields.Object, name string, now time.Time) (time.Time, bool) {
	d, ok := o.Date(name, false)
	if !ok {
		return time.Time{}, false
	}
	if d.After(today(now)) {
		o.Add(name, futureMsg)
		return time.Time{}, false
	}
	return d, true
}

// today is now's calendar date at midnight UTC, comparable with
// fields.Date values.
func today(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// violated reports whether field already has a violation, so that a rule
// spanning fields does not pile a second message on a field that was sent
// wrong.
func violated(v fields.Violations, field string) bool {
	for _, x := range v {
		if x.Field == field {
			return true
		}
	}
	return false
}

// decode parses body, runs read and returns its result or the violations.
func decode[T any](body []byte, read func(o *fields.Object, v *fields.Violations) T) (T, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	out := read(o, &v)
	if err := v.Err(); err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
