package fields

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Str states the rules of a string member.
//
// A blank value (empty or only white space) of a required member is a
// violation ("is required"); of an optional member it reads as the empty
// string, present, with no other rule applied: PHP clients send "" for
// "no value". Any other value is returned exactly as sent. A JSON number is
// accepted as its literal text (postcode 12345, floor 3).
type Str struct {
	Required bool
	// Min and Max bound the length in characters (runes), not bytes; 0 means
	// no bound.
	Min, Max int
	// OneOf lists the allowed values; IgnoreCase matches them regardless of
	// case and returns the spelling listed here.
	OneOf      []string
	IgnoreCase bool
	// Pattern must match the value; PatternMsg is the violation message
	// when it does not (default "has an invalid format").
	Pattern    *regexp.Regexp
	PatternMsg string
}

// Int states the rules of a whole-number member.
type Int struct {
	Required bool
	// Min always applies, so the zero value rejects negative numbers.
	// Max 0 means no upper bound.
	Min, Max int64
	// OneOf, when set, lists the allowed values instead of a range.
	OneOf []int64
}

// Dec states the rules of a decimal member.
type Dec struct {
	Required bool
	// Min always applies, so the zero value rejects negative numbers.
	// A zero Max means no upper bound.
	Min, Max decimal.Decimal
	// Positive requires a value strictly greater than zero.
	Positive bool
	// MaxScale is the most decimal places accepted; 0 means 18. Trailing
	// zeros do not count: 99.50 has 1 decimal place.
	MaxScale int32
}

const (
	maxNumberText = 64  // longer numeric text is out of any range we accept
	maxExponent   = 400 // keeps big-number arithmetic cheap
	defaultScale  = 18
	dateMsg       = "must be a valid date (YYYY-MM-DD)"
)

var (
	numberSyntax = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	maxInt64     = decimal.NewFromInt(math.MaxInt64)
	minInt64     = decimal.NewFromInt(math.MinInt64)
)

// String reads member name as a string checked against r. The boolean is
// true when a valid value was sent.
func (o *Object) String(name string, r Str) (string, bool) {
	if o == nil {
		return "", false
	}
	raw, k := o.lookup(name)
	return readString(o.v, Path(o.path, name), raw, k, r)
}

func readString(v *Violations, field string, raw json.RawMessage, k Kind, r Str) (string, bool) {
	var s string
	switch k {
	case KindAbsent:
		if r.Required {
			v.Add(field, "is required")
		}
		return "", false
	case KindString:
		if err := json.Unmarshal(raw, &s); err != nil {
			v.Add(field, "must be a string")
			return "", false
		}
	case KindNumber:
		s = string(raw)
	default:
		v.Add(field, "must be a string")
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		if r.Required {
			v.Add(field, "is required")
			return "", false
		}
		return "", true
	}
	n := utf8.RuneCountInString(s)
	switch {
	case r.Min > 0 && r.Min == r.Max && n != r.Min:
		v.Addf(field, "must be exactly %s", characters(r.Min))
		return "", false
	case n < r.Min:
		v.Addf(field, "must be at least %s", characters(r.Min))
		return "", false
	case r.Max > 0 && n > r.Max:
		v.Addf(field, "must be at most %s", characters(r.Max))
		return "", false
	}
	if len(r.OneOf) > 0 {
		i := slices.IndexFunc(r.OneOf, func(want string) bool {
			return want == s || r.IgnoreCase && strings.EqualFold(want, s)
		})
		if i < 0 {
			v.Add(field, "must be one of "+strings.Join(r.OneOf, ", "))
			return "", false
		}
		s = r.OneOf[i]
	}
	if r.Pattern != nil && !r.Pattern.MatchString(s) {
		msg := r.PatternMsg
		if msg == "" {
			msg = "has an invalid format"
		}
		v.Add(field, msg)
		return "", false
	}
	return s, true
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.Itoa(n) + " characters"
}

// Int reads member name as a whole number checked against r. "21" and 21.0
// are 21; "21.5" is a violation, never truncated.
func (o *Object) Int(name string, r Int) (int, bool) {
	if o == nil {
		return 0, false
	}
	field := Path(o.path, name)
	d, ok := o.number(name, field, r.Required)
	if !ok {
		return 0, false
	}
	if !d.IsInteger() {
		o.v.Add(field, "must be a whole number")
		return 0, false
	}
	if len(r.OneOf) > 0 {
		if !slices.ContainsFunc(r.OneOf, func(x int64) bool { return d.Equal(decimal.NewFromInt(x)) }) {
			list := make([]string, len(r.OneOf))
			for i, x := range r.OneOf {
				list[i] = strconv.FormatInt(x, 10)
			}
			o.v.Add(field, "must be one of "+strings.Join(list, ", "))
			return 0, false
		}
	} else if !inRange(o.v, field, d, decimal.NewFromInt(r.Min), decimal.NewFromInt(r.Max), false) {
		return 0, false
	}
	if d.LessThan(minInt64) || d.GreaterThan(maxInt64) {
		o.v.Add(field, "is out of range")
		return 0, false
	}
	n := d.IntPart()
	if n < math.MinInt || n > math.MaxInt {
		o.v.Add(field, "is out of range")
		return 0, false
	}
	return int(n), true
}

// Decimal reads member name as an exact decimal checked against r; "99.50"
// and 99.5 are the same value.
func (o *Object) Decimal(name string, r Dec) (decimal.Decimal, bool) {
	if o == nil {
		return decimal.Decimal{}, false
	}
	field := Path(o.path, name)
	d, ok := o.number(name, field, r.Required)
	if !ok {
		return decimal.Decimal{}, false
	}
	if !inRange(o.v, field, d, r.Min, r.Max, r.Positive) {
		return decimal.Decimal{}, false
	}
	if d.Abs().GreaterThan(maxInt64) {
		o.v.Add(field, "is out of range")
		return decimal.Decimal{}, false
	}
	scale := r.MaxScale
	if scale <= 0 {
		scale = defaultScale
	}
	if !d.Equal(d.Truncate(scale)) {
		if scale == 1 {
			o.v.Add(field, "must have at most 1 decimal place")
		} else {
			o.v.Addf(field, "must have at most %d decimal places", scale)
		}
		return decimal.Decimal{}, false
	}
	return d, true
}

// inRange checks min <= d (or 0 < d when positive) and, when max is not
// zero, d <= max, stating the whole range in the message.
func inRange(v *Violations, field string, d, min, max decimal.Decimal, positive bool) bool {
	hasMax := !max.IsZero()
	switch {
	case positive && d.Sign() <= 0:
		v.Add(field, "must be greater than 0")
	case positive && hasMax && d.GreaterThan(max):
		v.Add(field, "must be at most "+max.String())
	case positive:
		return true
	case hasMax && (d.LessThan(min) || d.GreaterThan(max)):
		v.Addf(field, "must be between %s and %s", min, max)
	case !hasMax && d.LessThan(min):
		v.Add(field, "must be at least "+min.String())
	default:
		return true
	}
	return false
}

// number reads a JSON number, or a string holding one, as an exact decimal.
// A blank string counts as not sent.
func (o *Object) number(name, field string, required bool) (decimal.Decimal, bool) {
	raw, k := o.lookup(name)
	var text string
	switch k {
	case KindNumber:
		text = string(raw)
	case KindString:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			o.v.Add(field, "must be a number")
			return decimal.Decimal{}, false
		}
		text = strings.TrimSpace(s)
		if text == "" {
			k = KindAbsent
		}
	case KindAbsent:
	default:
		o.v.Add(field, "must be a number")
		return decimal.Decimal{}, false
	}
	if k == KindAbsent {
		if required {
			o.v.Add(field, "is required")
		}
		return decimal.Decimal{}, false
	}
	if !numberSyntax.MatchString(text) {
		o.v.Add(field, "must be a number")
		return decimal.Decimal{}, false
	}
	if len(text) > maxNumberText || !smallExponent(text) {
		o.v.Add(field, "is out of range")
		return decimal.Decimal{}, false
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		o.v.Add(field, "is out of range")
		return decimal.Decimal{}, false
	}
	return d, true
}

func smallExponent(text string) bool {
	i := strings.IndexAny(text, "eE")
	if i < 0 {
		return true
	}
	e, err := strconv.Atoi(text[i+1:])
	return err == nil && e >= -maxExponent && e <= maxExponent
}

// Bool reads member name as a boolean: true/false, 1/0, "true"/"false" (any
// case) or "1"/"0". A blank string counts as not sent.
func (o *Object) Bool(name string, required bool) (bool, bool) {
	if o == nil {
		return false, false
	}
	field := Path(o.path, name)
	raw, k := o.lookup(name)
	var text string
	switch k {
	case KindBool, KindNumber:
		text = string(raw)
	case KindString:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			o.v.Add(field, "must be a boolean")
			return false, false
		}
		text = strings.ToLower(strings.TrimSpace(s))
		if text == "" {
			k = KindAbsent
		}
	case KindAbsent:
	default:
		o.v.Add(field, "must be a boolean")
		return false, false
	}
	if k == KindAbsent {
		if required {
			o.v.Add(field, "is required")
		}
		return false, false
	}
	switch text {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	o.v.Add(field, "must be a boolean")
	return false, false
}

// Date reads member name as a calendar date written YYYY-MM-DD and returns
// it as midnight UTC. Impossible dates such as 2023-02-30 are violations. A
// blank string counts as not sent.
func (o *Object) Date(name string, required bool) (time.Time, bool) {
	if o == nil {
		return time.Time{}, false
	}
	field := Path(o.path, name)
	raw, k := o.lookup(name)
	var s string
	switch k {
	case KindString:
		if err := json.Unmarshal(raw, &s); err != nil {
			o.v.Add(field, dateMsg)
			return time.Time{}, false
		}
		s = strings.TrimSpace(s)
		if s == "" {
			k = KindAbsent
		}
	case KindAbsent:
	default:
		o.v.Add(field, dateMsg)
		return time.Time{}, false
	}
	if k == KindAbsent {
		if required {
			o.v.Add(field, "is required")
		}
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, s)
	// Year 0000 parses, but no calendar of ours (libs/pricing's dates) has it: a date
	// stored from it could never be priced.
	if err != nil || len(s) != len(time.DateOnly) || t.Year() < 1 {
		o.v.Add(field, dateMsg)
		return time.Time{}, false
	}
	return t, true
}
