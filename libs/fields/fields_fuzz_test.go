package fields_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// The fuzz targets of the field decoders. Each reads a member "v" of the object "p" (so a
// violation must name "p.v") sent as the fuzzer writes it: the text itself when it is one
// JSON value, else a JSON string holding the text, which is how PHP clients send most
// numbers, booleans and dates. Each getter is cross-checked against the rule written apart
// below (its doc comment in scalar.go, restated): the getter accepts exactly what the rule
// accepts, returns the value the rule computes, and refuses with exactly one violation, on
// "p.v", with the rule's message. Seeds: testdata/fuzz/<target> (the package's table tests
// and the values PHP clients send, original-clients.md).

// member is the JSON text of member v: text when it is one JSON scalar value, else text as
// a JSON string.
func member(text string) string {
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) && t != "" && t[0] != '{' && t[0] != '[' {
		return t
	}
	b, _ := json.Marshal(text)
	return string(b)
}

// readV decodes {"p":{"v":<m>}} and runs get on p.
func readV[T any](t *testing.T, m string, get func(o *fields.Object) (T, bool)) (T, bool, fields.Violations) {
	t.Helper()
	body := `{"p":{"v":` + m + `}}`
	var v fields.Violations
	p := fields.Parse([]byte(body), "", &v).Object("p", true)
	if p == nil || len(v) > 0 {
		t.Fatalf("body %s did not parse: %v", body, v)
	}
	got, ok := get(p)
	return got, ok, v
}

// sent is what a member carries once its JSON type is read: "absent" (missing or null),
// "string" with s unquoted, "number" with s its literal, or "other" (bool, object, array).
func sent(m string) (kind, s string) {
	switch m[0] {
	case 'n':
		return "absent", ""
	case '"':
		_ = json.Unmarshal([]byte(m), &s)
		return "string", s
	case 't', 'f', '{', '[':
		return "other", m
	}
	return "number", m
}

// expectOne checks the violations against the rule's verdict: none when msg is "", else
// exactly one, on p.v, with msg.
func expectOne(t *testing.T, m string, v fields.Violations, msg string) {
	t.Helper()
	switch {
	case msg == "" && len(v) > 0:
		t.Fatalf("v=%s: violations %v, the rule accepts it", m, v)
	case msg != "" && (len(v) != 1 || v[0].Field != "p.v" || v[0].Message != msg):
		t.Fatalf("v=%s: violations %v, want exactly p.v: %s", m, v, msg)
	}
}

// numberRule reads the text of a number the way scalar.go states it (a JSON number, or a
// string holding one, trimmed; a blank string is not sent): optional '-', digits, optional
// '.' and digits, optional exponent; at most 64 characters and an exponent within ±400, else
// out of range. It answers the exact value, or the violation.
func numberRule(m string, required bool) (val *big.Rat, msg string, present bool) {
	kind, s := sent(m)
	switch kind {
	case "other":
		return nil, "must be a number", true
	case "string":
		s = strings.TrimSpace(s)
		if s == "" {
			kind = "absent"
		}
	}
	if kind == "absent" {
		if required {
			return nil, "is required", false
		}
		return nil, "", false
	}
	mant, frac, exp, ok := scanNumber(s)
	if !ok {
		return nil, "must be a number", true
	}
	if len(s) > 64 || exp == nil || exp.CmpAbs(big.NewInt(400)) > 0 {
		return nil, "is out of range", true
	}
	// value = mant * 10^(exp - frac)
	r := new(big.Rat).SetInt(mant)
	e := exp.Int64() - int64(frac)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(e)), nil)
	if e >= 0 {
		r.Mul(r, new(big.Rat).SetInt(p))
	} else {
		r.Quo(r, new(big.Rat).SetInt(p))
	}
	return r, "", true
}

// scanNumber splits -?D+(.D+)?([eE][+-]?D+)? into the signed digits (fraction included),
// the count of fraction digits and the exponent (nil when it does not fit an int64).
func scanNumber(s string) (mant *big.Int, frac int, exp *big.Int, ok bool) {
	i := 0
	digits := func() string {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[start:i]
	}
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	whole := digits()
	if whole == "" {
		return nil, 0, nil, false
	}
	var fr string
	if i < len(s) && s[i] == '.' {
		i++
		if fr = digits(); fr == "" {
			return nil, 0, nil, false
		}
	}
	exp = new(big.Int)
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		sign := ""
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			sign = s[i : i+1]
			i++
		}
		ed := digits()
		if ed == "" {
			return nil, 0, nil, false
		}
		exp.SetString(sign+ed, 10)
		if !exp.IsInt64() || exp.Int64() > math.MaxInt32 || exp.Int64() < math.MinInt32 {
			exp = nil
		}
	}
	if i != len(s) {
		return nil, 0, nil, false
	}
	mant, _ = new(big.Int).SetString(whole+fr, 10)
	if neg {
		mant.Neg(mant)
	}
	return mant, len(fr), exp, true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

var (
	maxInt64Rat = new(big.Rat).SetInt64(math.MaxInt64)
	minInt64Rat = new(big.Rat).SetInt64(math.MinInt64)
)

// FuzzNumber: Object.Int and Object.Decimal against the number rule, then Int's (whole,
// within [Min, Max] or at least Min when Max is 0, within int64) and Decimal's (greater than
// 0 and at most Max when Positive; else as Int; |v| within int64; at most MaxScale decimal
// places, 18 when 0, trailing zeros not counted). A value accepted is exactly the value sent:
// never truncated, rounded or trimmed into range.
func FuzzNumber(f *testing.F) {
	f.Add("21", int64(1), int64(50), uint8(2), false, true)
	f.Fuzz(func(t *testing.T, text string, lo, hi int64, scale uint8, positive, required bool) {
		m := member(text)
		val, msg, _ := numberRule(m, required)
		minR, maxR := new(big.Rat).SetInt64(lo), new(big.Rat).SetInt64(hi)

		// Int
		imsg := msg
		if msg == "" && val != nil {
			switch {
			case !val.IsInt():
				imsg = "must be a whole number"
			case hi != 0 && (val.Cmp(minR) < 0 || val.Cmp(maxR) > 0):
				imsg = fmt.Sprintf("must be between %d and %d", lo, hi)
			case hi == 0 && val.Cmp(minR) < 0:
				imsg = fmt.Sprintf("must be at least %d", lo)
			case val.Cmp(minInt64Rat) < 0 || val.Cmp(maxInt64Rat) > 0:
				imsg = "is out of range"
			}
		}
		n, ok, v := readV(t, m, func(o *fields.Object) (int, bool) {
			return o.Int("v", fields.Int{Required: required, Min: lo, Max: hi})
		})
		expectOne(t, m, v, imsg)
		if ok != (imsg == "" && val != nil) {
			t.Fatalf("Int(v=%s) ok=%v, rule says %q (value %v)", m, ok, imsg, val)
		}
		if ok && new(big.Rat).SetInt64(int64(n)).Cmp(val) != 0 {
			t.Fatalf("Int(v=%s) = %d, sent %s", m, n, val.RatString())
		}

		// Decimal
		maxScale := int32(scale % 24)
		s := maxScale
		if s <= 0 {
			s = 18
		}
		dmsg := msg
		if msg == "" && val != nil {
			switch {
			case positive && val.Sign() <= 0:
				dmsg = "must be greater than 0"
			case positive && hi != 0 && val.Cmp(maxR) > 0:
				dmsg = fmt.Sprintf("must be at most %d", hi)
			case positive:
			case hi != 0 && (val.Cmp(minR) < 0 || val.Cmp(maxR) > 0):
				dmsg = fmt.Sprintf("must be between %d and %d", lo, hi)
			case hi == 0 && val.Cmp(minR) < 0:
				dmsg = fmt.Sprintf("must be at least %d", lo)
			}
			if dmsg == "" && new(big.Rat).Abs(val).Cmp(maxInt64Rat) > 0 {
				dmsg = "is out of range"
			}
			scaled := new(big.Rat).Mul(val, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil)))
			if dmsg == "" && !scaled.IsInt() {
				dmsg = fmt.Sprintf("must have at most %d decimal places", s)
				if s == 1 {
					dmsg = "must have at most 1 decimal place"
				}
			}
		}
		d, ok, v := readV(t, m, func(o *fields.Object) (decimal.Decimal, bool) {
			return o.Decimal("v", fields.Dec{Required: required, Min: decimal.NewFromInt(lo), Max: decimal.NewFromInt(hi), Positive: positive, MaxScale: maxScale})
		})
		expectOne(t, m, v, dmsg)
		if ok != (dmsg == "" && val != nil) {
			t.Fatalf("Decimal(v=%s) ok=%v, rule says %q (value %v)", m, ok, dmsg, val)
		}
		if ok && d.Rat().Cmp(val) != 0 {
			t.Fatalf("Decimal(v=%s) = %s, sent %s", m, d, val.RatString())
		}
	})
}

// FuzzString: Object.String against its rule: absent or null is "is required" when
// required; a number is its literal text; any other non-string is "must be a string"; a
// blank string is "is required" when required, else "" accepted; else the length in runes
// must be exactly Min when Min == Max > 0, at least Min, at most Max (0: none); then one of
// OneOf (case-insensitively with IgnoreCase, answering the listed spelling); then the
// pattern. An accepted value is the text exactly as sent (not trimmed).
func FuzzString(f *testing.F) {
	f.Add("Villa Rosa, sea view!", uint8(20), uint8(80), "", false, false, true)
	f.Fuzz(func(t *testing.T, text string, lo, hi uint8, oneOf string, ignoreCase, digits, required bool) {
		m := member(text)
		rule := fields.Str{Required: required, Min: int(lo), Max: int(hi), IgnoreCase: ignoreCase}
		if oneOf != "" {
			rule.OneOf = strings.Split(oneOf, ",")
		}
		if digits {
			rule.Pattern, rule.PatternMsg = regexp.MustCompile(`^[0-9]+$`), "must contain digits only"
		}
		kind, s := sent(m)
		want, msg := s, ""
		switch {
		case kind == "absent":
			want = ""
			if required {
				msg = "is required"
			}
		case kind == "other":
			msg = "must be a string"
		case strings.TrimSpace(s) == "":
			want = ""
			if required {
				msg = "is required"
			}
		default:
			n := utf8.RuneCountInString(s)
			switch {
			case lo > 0 && lo == hi && n != int(lo):
				msg = "must be exactly " + chars(int(lo))
			case n < int(lo):
				msg = "must be at least " + chars(int(lo))
			case hi > 0 && n > int(hi):
				msg = "must be at most " + chars(int(hi))
			}
			if msg == "" && rule.OneOf != nil {
				i := slices.IndexFunc(rule.OneOf, func(x string) bool { return x == s || ignoreCase && strings.EqualFold(x, s) })
				if i < 0 {
					msg = "must be one of " + strings.Join(rule.OneOf, ", ")
				} else {
					want = rule.OneOf[i]
				}
			}
			if msg == "" && digits && strings.Trim(want, "0123456789") != "" {
				msg = "must contain digits only"
			}
		}
		got, ok, v := readV(t, m, func(o *fields.Object) (string, bool) { return o.String("v", rule) })
		expectOne(t, m, v, msg)
		wantOK := msg == "" && kind != "absent"
		if ok != wantOK || ok && got != want {
			t.Fatalf("String(v=%s, %+v) = %q, %v; want %q, %v", m, rule, got, ok, want, wantOK)
		}
	})
}

func chars(n int) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.Itoa(n) + " characters"
}

// FuzzBool: Object.Bool accepts true/false, the numbers 1/0 and the strings "true"/"false"
// (any case) and "1"/"0" (surrounding white space ignored); a blank string or null is not
// sent; anything else is "must be a boolean".
func FuzzBool(f *testing.F) {
	f.Add(" TRUE ", true)
	f.Fuzz(func(t *testing.T, text string, required bool) {
		m := member(text)
		kind, s := sent(m)
		var want, present bool
		msg := ""
		switch kind {
		case "string":
			s = strings.TrimSpace(s)
			if s == "" {
				kind = "absent"
			}
		case "other":
			if s != "true" && s != "false" {
				msg = "must be a boolean"
			}
		}
		if kind == "absent" {
			if required {
				msg = "is required"
			}
		} else if msg == "" {
			if kind == "string" {
				s = asciiLower(s)
			}
			switch s {
			case "1", "true":
				want, present = true, true
			case "0", "false":
				want, present = false, true
			default:
				msg = "must be a boolean"
			}
		}
		got, ok, v := readV(t, m, func(o *fields.Object) (bool, bool) { return o.Bool("v", required) })
		expectOne(t, m, v, msg)
		if ok != present || ok && got != want {
			t.Fatalf("Bool(v=%s) = %v, %v; want %v, %v", m, got, ok, want, present)
		}
	})
}

// asciiLower lowers A-Z only, as PHP's strtolower does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// FuzzDate: Object.Date accepts a string YYYY-MM-DD (surrounding white space ignored) that
// is a day of the Gregorian calendar from year 0001 (month 01-12, day 01 to the month's length, 29 February
// in leap years) and answers its midnight UTC; a blank string or null is not sent; anything
// else, numbers included, is "must be a valid date (YYYY-MM-DD)".
func FuzzDate(f *testing.F) {
	f.Add("2024-02-29", true)
	f.Fuzz(func(t *testing.T, text string, required bool) {
		m := member(text)
		const bad = "must be a valid date (YYYY-MM-DD)"
		kind, s := sent(m)
		s = strings.TrimSpace(s)
		msg := ""
		var want time.Time
		valid := false
		switch {
		case kind == "absent" || kind == "string" && s == "":
			if required {
				msg = "is required"
			}
		case kind != "string":
			msg = bad
		default:
			y, mo, d, ok := civilDate(s)
			if !ok {
				msg = bad
			} else {
				want, valid = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC), true
			}
		}
		got, ok, v := readV(t, m, func(o *fields.Object) (time.Time, bool) { return o.Date("v", required) })
		expectOne(t, m, v, msg)
		wantOK := msg == "" && valid
		if ok != wantOK || ok && !got.Equal(want) || ok && got.Location() != time.UTC {
			t.Fatalf("Date(v=%s) = %v, %v; want %v, %v", m, got, ok, want, wantOK)
		}
	})
}

// civilDate reads DDDD-DD-DD as a day of the proleptic Gregorian calendar.
func civilDate(s string) (y, m, d int, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	num := func(p string) (int, bool) {
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return 0, false
			}
			n = n*10 + int(p[i]-'0')
		}
		return n, true
	}
	var oy, om, od bool
	y, oy = num(s[:4])
	m, om = num(s[5:7])
	d, od = num(s[8:])
	if !oy || !om || !od || y < 1 || m < 1 || m > 12 || d < 1 {
		return 0, 0, 0, false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return y, m, d, d <= days
}

// FuzzObject: Parse accepts a body (a leading UTF-8 byte order mark and surrounding white
// space ignored) that is a JSON object or an empty list, refusing anything else with one
// violation on "body" ("must be valid JSON", else "must be a JSON object"). Then Array and
// Strings read member "a" as a list (or PHP's object keyed "0", "2", …, its keys the
// indexes): bounds counted in items, every violation naming "a" or one of its own indexes,
// an element that is not an object (or []) refused, Strings keeping the valid strings in
// order. Kind, Has and Empty agree with the member as sent.
func FuzzObject(f *testing.F) {
	f.Add([]byte(`{"a":[{},"x",{"k":1}]}`), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, lo, hi uint8) {
		var v fields.Violations
		o := fields.Parse(body, "", &v)
		trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
		var top any
		msg := ""
		switch {
		case len(trimmed) == 0:
			msg = "must be a JSON object"
		case !json.Valid(trimmed):
			msg = "must be valid JSON"
		default:
			_ = json.Unmarshal(trimmed, &top)
			if l, isList := top.([]any); isList && len(l) == 0 {
				top = map[string]any{}
			}
			if _, isObj := top.(map[string]any); !isObj {
				msg = "must be a JSON object"
			}
		}
		if msg != "" {
			if o != nil || len(v) != 1 || v[0] != (fields.Violation{Field: "body", Message: msg}) {
				t.Fatalf("Parse(%q) = %v, %v; want nil and body: %s", body, o != nil, v, msg)
			}
			return
		}
		if o == nil || len(v) != 0 {
			t.Fatalf("Parse(%q) refused a JSON object: %v", body, v)
		}
		members := top.(map[string]any)
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(trimmed, &raw)
		keys := make([]string, 0, len(members))
		for k := range members {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(o.Keys(), keys) {
			t.Fatalf("Parse(%q).Keys() = %q, want %q", body, o.Keys(), keys)
		}
		for _, k := range keys {
			x := members[k]
			empty := x == nil
			switch x := x.(type) {
			case string:
				empty = strings.TrimSpace(x) == ""
			case []any:
				empty = len(x) == 0
			case map[string]any:
				empty = len(x) == 0
			}
			if o.Has(k) != (x != nil) || o.Empty(k) != empty || (o.Kind(k) == fields.KindNull) != (x == nil) {
				t.Fatalf("Parse(%q): member %q: Has %v, Empty %v, Kind %v", body, k, o.Has(k), o.Empty(k), o.Kind(k))
			}
		}

		// The list at "a", as the rule reads it.
		l := fields.List{Min: int(lo % 8), Max: int(hi % 8)}
		type elem struct {
			index int
			raw   json.RawMessage
		}
		var elems []elem
		listMsg := ""
		switch a := members["a"].(type) {
		case nil:
			listMsg = "absent"
		case []any:
			var items []json.RawMessage
			_ = json.Unmarshal(raw["a"], &items)
			for i, it := range items {
				elems = append(elems, elem{i, it})
			}
		case map[string]any:
			var items map[string]json.RawMessage
			_ = json.Unmarshal(raw["a"], &items)
			for k, it := range items {
				n, err := strconv.Atoi(k)
				if err != nil || n < 0 || n > 1<<20 || strconv.Itoa(n) != k {
					listMsg = "must be an array"
					break
				}
				elems = append(elems, elem{n, it})
			}
			slices.SortFunc(elems, func(x, y elem) int { return x.index - y.index })
			_ = a
		default:
			listMsg = "must be an array"
		}
		if listMsg == "" {
			switch {
			case len(elems) < l.Min && l.Min == 1:
				listMsg = "must have at least 1 item"
			case len(elems) < l.Min:
				listMsg = fmt.Sprintf("must have at least %d items", l.Min)
			case l.Max > 0 && len(elems) > l.Max:
				listMsg = fmt.Sprintf("must have at most %d items", l.Max)
			}
		}
		name := func(i int) string { return fmt.Sprintf("a[%d]", i) }

		// Array
		var av fields.Violations
		readers, ok := fields.Parse(body, "", &av).Array("a", l)
		var want fields.Violations
		if listMsg != "" && listMsg != "absent" {
			want = append(want, fields.Violation{Field: "a", Message: listMsg})
		}
		if listMsg == "" {
			if !ok || len(readers) != len(elems) {
				t.Fatalf("Array(a) of %q: %d readers, ok %v; want %d", body, len(readers), ok, len(elems))
			}
			for i, e := range elems {
				isObj := bytes.HasPrefix(e.raw, []byte("{")) || isEmptyList(e.raw)
				if !isObj {
					want = append(want, fields.Violation{Field: name(e.index), Message: "must be an object"})
				}
				if (readers[i] != nil) != isObj || isObj && readers[i].Path() != name(e.index) {
					t.Fatalf("Array(a) of %q: reader %d is %v", body, i, readers[i])
				}
			}
		} else if ok {
			t.Fatalf("Array(a) of %q: ok, want %q", body, listMsg)
		}
		if !slices.Equal(av, want) {
			t.Fatalf("Array(a) of %q: violations %v, want %v", body, av, want)
		}

		// Strings (at most 5 characters each)
		var sv fields.Violations
		strs, ok := fields.Parse(body, "", &sv).Strings("a", l, fields.Str{Max: 5})
		want = nil
		var wantStrs []string
		if listMsg != "" && listMsg != "absent" {
			want = append(want, fields.Violation{Field: "a", Message: listMsg})
		}
		if listMsg == "" {
			if !ok {
				t.Fatalf("Strings(a) of %q: not ok", body)
			}
			for _, e := range elems {
				kind, s := sent(string(e.raw))
				switch {
				case kind == "string" && strings.TrimSpace(s) == "":
					want = append(want, fields.Violation{Field: name(e.index), Message: "must not be empty"})
				case kind == "absent" || kind == "other":
					want = append(want, fields.Violation{Field: name(e.index), Message: "must be a string"})
				case utf8.RuneCountInString(s) > 5:
					want = append(want, fields.Violation{Field: name(e.index), Message: "must be at most 5 characters"})
				default:
					wantStrs = append(wantStrs, s)
				}
			}
		}
		if !slices.Equal(sv, want) || !slices.Equal(strs, wantStrs) && len(strs)+len(wantStrs) > 0 {
			t.Fatalf("Strings(a) of %q = %q, %v; want %q, %v", body, strs, sv, wantStrs, want)
		}
	})
}

func isEmptyList(raw json.RawMessage) bool {
	var l []json.RawMessage
	return bytes.HasPrefix(raw, []byte("[")) && json.Unmarshal(raw, &l) == nil && len(l) == 0
}
