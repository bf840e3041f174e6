package fields_test

import (
	"errors"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// read parses body as the member "p" of a request and returns what the
// getter made of it together with the violations.
func read[T any](t *testing.T, body string, get func(o *fields.Object) (T, bool)) (T, bool, fields.Violations) {
	t.Helper()
	var v fields.Violations
	o := fields.Parse([]byte(body), "", &v).Object("p", true)
	got, ok := get(o)
	return got, ok, v
}

// violation is "field: message", or "" for none.
func violation(v fields.Violations) string {
	switch len(v) {
	case 0:
		return ""
	case 1:
		return v[0].Field + ": " + v[0].Message
	}
	return (&fields.Error{Violations: v}).Error()
}

func TestString(t *testing.T) {
	t.Parallel()
	name := fields.Str{Required: true, Min: 20, Max: 80}
	typ := fields.Str{Required: true, OneOf: []string{"None", "Apartment", "Condo", "House", "Villa"}}
	digits := fields.Str{Max: 20, Pattern: regexp.MustCompile(`^[0-9]+$`), PatternMsg: "must contain digits only"}
	tests := []struct {
		name   string
		body   string
		rule   fields.Str
		want   string
		wantOK bool
		err    string
	}{
		{"20 chars", `{"p":{"v":"aaaaaaaaaaaaaaaaaaaa"}}`, name, "aaaaaaaaaaaaaaaaaaaa", true, ""},
		{"19 chars", `{"p":{"v":"aaaaaaaaaaaaaaaaaaa"}}`, name, "", false, "p.v: must be at least 20 characters"},
		{"81 chars", `{"p":{"v":"` + repeat("a", 81) + `"}}`, name, "", false, "p.v: must be at most 80 characters"},
		{"80 multibyte runes count as 80", `{"p":{"v":"` + repeat("é", 80) + `"}}`, name, repeat("é", 80), true, ""},
		{"81 multibyte runes", `{"p":{"v":"` + repeat("日", 81) + `"}}`, name, "", false, "p.v: must be at most 80 characters"},
		{"exact length", `{"p":{"v":"USA"}}`, fields.Str{Min: 2, Max: 2}, "", false, "p.v: must be exactly 2 characters"},
		{"one char minimum", `{"p":{"v":"ab"}}`, fields.Str{Min: 3}, "", false, "p.v: must be at least 3 characters"},
		{"singular character", `{"p":{"v":"ab"}}`, fields.Str{Max: 1}, "", false, "p.v: must be at most 1 character"},
		{"missing required", `{"p":{}}`, name, "", false, "p.v: is required"},
		{"null required", `{"p":{"v":null}}`, name, "", false, "p.v: is required"},
		{"blank required", `{"p":{"v":"   "}}`, name, "", false, "p.v: is required"},
		{"missing optional", `{"p":{}}`, fields.Str{Max: 5}, "", false, ""},
		{"blank optional is empty", `{"p":{"v":" "}}`, fields.Str{Min: 400}, "", true, ""},
		{"value kept as sent", `{"p":{"v":"  Villa Rosa, sea view!  "}}`, fields.Str{Required: true, Min: 20}, "  Villa Rosa, sea view!  ", true, ""},
		{"number as literal text", `{"p":{"v":12345}}`, fields.Str{Max: 20}, "12345", true, ""},
		{"bool is wrong type", `{"p":{"v":true}}`, name, "", false, "p.v: must be a string"},
		{"object is wrong type", `{"p":{"v":{}}}`, name, "", false, "p.v: must be a string"},
		{"one of", `{"p":{"v":"Condo"}}`, typ, "Condo", true, ""},
		{"not one of", `{"p":{"v":"Castle"}}`, typ, "", false, "p.v: must be one of None, Apartment, Condo, House, Villa"},
		{"one of is case sensitive", `{"p":{"v":"condo"}}`, typ, "", false, "p.v: must be one of None, Apartment, Condo, House, Villa"},
		{"ignore case gives listed spelling", `{"p":{"v":"condo"}}`, fields.Str{OneOf: typ.OneOf, IgnoreCase: true}, "Condo", true, ""},
		{"pattern", `{"p":{"v":"0123456789"}}`, digits, "0123456789", true, ""},
		{"pattern mismatch", `{"p":{"v":"+1 555"}}`, digits, "", false, "p.v: must contain digits only"},
		{"pattern default message", `{"p":{"v":"x"}}`, fields.Str{Pattern: regexp.MustCompile(`^y$`)}, "", false, "p.v: has an invalid format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, v := read(t, tt.body, func(o *fields.Object) (string, bool) { return o.String("v", tt.rule) })
			if got != tt.want || ok != tt.wantOK || violation(v) != tt.err {
				t.Fatalf("got (%q, %v, %q), want (%q, %v, %q)", got, ok, violation(v), tt.want, tt.wantOK, tt.err)
			}
		})
	}
}

func TestInt(t *testing.T) {
	t.Parallel()
	maxguest := fields.Int{Required: true, Min: 1, Max: 50}
	tests := []struct {
		name   string
		body   string
		rule   fields.Int
		want   int
		wantOK bool
		err    string
	}{
		{"number", `{"p":{"v":21}}`, maxguest, 21, true, ""},
		{"numeric string", `{"p":{"v":"21"}}`, maxguest, 21, true, ""},
		{"numeric string with spaces", `{"p":{"v":" 21 "}}`, maxguest, 21, true, ""},
		{"integral float", `{"p":{"v":21.0}}`, maxguest, 21, true, ""},
		{"exponent", `{"p":{"v":2e1}}`, maxguest, 20, true, ""},
		{"lower bound", `{"p":{"v":1}}`, maxguest, 1, true, ""},
		{"upper bound", `{"p":{"v":50}}`, maxguest, 50, true, ""},
		{"below range", `{"p":{"v":0}}`, maxguest, 0, false, "p.v: must be between 1 and 50"},
		{"above range", `{"p":{"v":51}}`, maxguest, 0, false, "p.v: must be between 1 and 50"},
		{"fraction", `{"p":{"v":21.5}}`, maxguest, 0, false, "p.v: must be a whole number"},
		{"fraction string", `{"p":{"v":"21.5"}}`, maxguest, 0, false, "p.v: must be a whole number"},
		{"text", `{"p":{"v":"twenty"}}`, maxguest, 0, false, "p.v: must be a number"},
		{"hex text", `{"p":{"v":"0x10"}}`, maxguest, 0, false, "p.v: must be a number"},
		{"NaN text", `{"p":{"v":"NaN"}}`, maxguest, 0, false, "p.v: must be a number"},
		{"Inf text", `{"p":{"v":"Infinity"}}`, maxguest, 0, false, "p.v: must be a number"},
		{"bool", `{"p":{"v":true}}`, maxguest, 0, false, "p.v: must be a number"},
		{"array", `{"p":{"v":[1]}}`, maxguest, 0, false, "p.v: must be a number"},
		{"missing", `{"p":{}}`, maxguest, 0, false, "p.v: is required"},
		{"null", `{"p":{"v":null}}`, maxguest, 0, false, "p.v: is required"},
		{"blank string", `{"p":{"v":""}}`, maxguest, 0, false, "p.v: is required"},
		{"optional missing", `{"p":{}}`, fields.Int{Max: 12}, 0, false, ""},
		{"min only", `{"p":{"v":0}}`, fields.Int{Min: 1}, 0, false, "p.v: must be at least 1"},
		{"zero value rejects negative", `{"p":{"v":-1}}`, fields.Int{}, 0, false, "p.v: must be at least 0"},
		{"huge beyond range", `{"p":{"v":1e300}}`, maxguest, 0, false, "p.v: must be between 1 and 50"},
		{"beyond int64", `{"p":{"v":9223372036854775808}}`, fields.Int{}, 0, false, "p.v: is out of range"},
		{"int64 max", `{"p":{"v":9223372036854775807}}`, fields.Int{}, 9223372036854775807, true, ""},
		{"exponent overflow", `{"p":{"v":1e999999999999}}`, fields.Int{}, 0, false, "p.v: is out of range"},
		{"string exponent overflow", `{"p":{"v":"1e99999"}}`, fields.Int{}, 0, false, "p.v: is out of range"},
		{"one of", `{"p":{"v":2}}`, fields.Int{OneOf: []int64{1, 2}}, 2, true, ""},
		{"not one of", `{"p":{"v":3}}`, fields.Int{OneOf: []int64{1, 2}}, 0, false, "p.v: must be one of 1, 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, v := read(t, tt.body, func(o *fields.Object) (int, bool) { return o.Int("v", tt.rule) })
			if got != tt.want || ok != tt.wantOK || violation(v) != tt.err {
				t.Fatalf("got (%d, %v, %q), want (%d, %v, %q)", got, ok, violation(v), tt.want, tt.wantOK, tt.err)
			}
		})
	}
}

func TestDecimal(t *testing.T) {
	t.Parallel()
	price := fields.Dec{Required: true, Max: decimal.NewFromInt(2147483647), MaxScale: 2}
	lat := fields.Dec{Required: true, Min: decimal.NewFromInt(-90), Max: decimal.NewFromInt(90)}
	percent := fields.Dec{Required: true, Positive: true, Max: decimal.NewFromInt(99)}
	tests := []struct {
		name   string
		body   string
		rule   fields.Dec
		want   string
		wantOK bool
		err    string
	}{
		{"number", `{"p":{"v":99.5}}`, price, "99.5", true, ""},
		{"numeric string", `{"p":{"v":"99.50"}}`, price, "99.5", true, ""},
		{"trailing zeros do not count as places", `{"p":{"v":"99.500"}}`, price, "99.5", true, ""},
		{"too many places", `{"p":{"v":99.555}}`, price, "0", false, "p.v: must have at most 2 decimal places"},
		{"one place", `{"p":{"v":1.25}}`, fields.Dec{MaxScale: 1}, "0", false, "p.v: must have at most 1 decimal place"},
		{"default scale 18", `{"p":{"v":0.0000000000000000001}}`, fields.Dec{}, "0", false, "p.v: must have at most 18 decimal places"},
		{"upper bound", `{"p":{"v":2147483647}}`, price, "2147483647", true, ""},
		{"above range", `{"p":{"v":2147483648}}`, price, "0", false, "p.v: must be between 0 and 2147483647"},
		{"negative", `{"p":{"v":-1}}`, price, "0", false, "p.v: must be between 0 and 2147483647"},
		{"negative bound", `{"p":{"v":-90}}`, lat, "-90", true, ""},
		{"below negative bound", `{"p":{"v":-90.0001}}`, lat, "0", false, "p.v: must be between -90 and 90"},
		{"min only", `{"p":{"v":-0.01}}`, fields.Dec{}, "0", false, "p.v: must be at least 0"},
		{"positive", `{"p":{"v":0.01}}`, percent, "0.01", true, ""},
		{"positive zero", `{"p":{"v":0}}`, percent, "0", false, "p.v: must be greater than 0"},
		{"positive with max", `{"p":{"v":100}}`, percent, "0", false, "p.v: must be at most 99"},
		{"wrong type", `{"p":{"v":{"a":1}}}`, price, "0", false, "p.v: must be a number"},
		{"text", `{"p":{"v":"12,50"}}`, price, "0", false, "p.v: must be a number"},
		{"missing", `{"p":{}}`, price, "0", false, "p.v: is required"},
		{"optional missing", `{"p":{}}`, fields.Dec{}, "0", false, ""},
		{"beyond int64 without max", `{"p":{"v":1e19}}`, fields.Dec{}, "0", false, "p.v: is out of range"},
		{"too long", `{"p":{"v":"` + repeat("1", 65) + `"}}`, fields.Dec{}, "0", false, "p.v: is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, v := read(t, tt.body, func(o *fields.Object) (decimal.Decimal, bool) { return o.Decimal("v", tt.rule) })
			if !got.Equal(decimal.RequireFromString(tt.want)) || ok != tt.wantOK || violation(v) != tt.err {
				t.Fatalf("got (%s, %v, %q), want (%s, %v, %q)", got, ok, violation(v), tt.want, tt.wantOK, tt.err)
			}
		})
	}
}

func TestBool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		required bool
		want     bool
		wantOK   bool
		err      string
	}{
		{"true", `{"p":{"v":true}}`, true, true, true, ""},
		{"false", `{"p":{"v":false}}`, true, false, true, ""},
		{"1", `{"p":{"v":1}}`, true, true, true, ""},
		{"0", `{"p":{"v":0}}`, true, false, true, ""},
		{"string true", `{"p":{"v":"true"}}`, true, true, true, ""},
		{"string TRUE", `{"p":{"v":"TRUE"}}`, true, true, true, ""},
		{"string false", `{"p":{"v":"false"}}`, true, false, true, ""},
		{"string 1", `{"p":{"v":"1"}}`, true, true, true, ""},
		{"string 0", `{"p":{"v":"0"}}`, true, false, true, ""},
		{"2", `{"p":{"v":2}}`, true, false, false, "p.v: must be a boolean"},
		{"1.0", `{"p":{"v":1.0}}`, true, false, false, "p.v: must be a boolean"},
		{"yes", `{"p":{"v":"yes"}}`, true, false, false, "p.v: must be a boolean"},
		{"object", `{"p":{"v":{}}}`, true, false, false, "p.v: must be a boolean"},
		{"missing required", `{"p":{}}`, true, false, false, "p.v: is required"},
		{"null required", `{"p":{"v":null}}`, true, false, false, "p.v: is required"},
		{"blank optional", `{"p":{"v":""}}`, false, false, false, ""},
		{"missing optional", `{"p":{}}`, false, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, v := read(t, tt.body, func(o *fields.Object) (bool, bool) { return o.Bool("v", tt.required) })
			if got != tt.want || ok != tt.wantOK || violation(v) != tt.err {
				t.Fatalf("got (%v, %v, %q), want (%v, %v, %q)", got, ok, violation(v), tt.want, tt.wantOK, tt.err)
			}
		})
	}
}

func TestDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		want   time.Time
		wantOK bool
		err    string
	}{
		{"date", `{"p":{"v":"2024-02-29"}}`, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), true, ""},
		{"not a leap year", `{"p":{"v":"2023-02-29"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"year zero", `{"p":{"v":"0000-01-01"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"day 31 of a 30-day month", `{"p":{"v":"2024-04-31"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"month 13", `{"p":{"v":"2024-13-01"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"no zero padding", `{"p":{"v":"2024-4-1"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"with time", `{"p":{"v":"2024-04-01T00:00:00Z"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"other order", `{"p":{"v":"01/04/2024"}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"number", `{"p":{"v":20240401}}`, time.Time{}, false, "p.v: must be a valid date (YYYY-MM-DD)"},
		{"missing", `{"p":{}}`, time.Time{}, false, "p.v: is required"},
		{"blank", `{"p":{"v":" "}}`, time.Time{}, false, "p.v: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, v := read(t, tt.body, func(o *fields.Object) (time.Time, bool) { return o.Date("v", true) })
			if !got.Equal(tt.want) || ok != tt.wantOK || violation(v) != tt.err {
				t.Fatalf("got (%v, %v, %q), want (%v, %v, %q)", got, ok, violation(v), tt.want, tt.wantOK, tt.err)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		path string
		nil  bool
		err  string
	}{
		{"object", `{"a":1}`, "", false, ""},
		{"empty array is an empty object", `[]`, "", false, ""},
		{"byte order mark", "\xef\xbb\xbf{}", "", false, ""},
		{"empty body", ``, "", true, "body: must be a JSON object"},
		{"invalid JSON", `{"a":`, "", true, "body: must be valid JSON"},
		{"trailing data", `{} {}`, "", true, "body: must be valid JSON"},
		{"array", `[1]`, "", true, "body: must be a JSON object"},
		{"string", `"x"`, "", true, "body: must be a JSON object"},
		{"path names the violation", `5`, "photo", true, "photo: must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v fields.Violations
			o := fields.Parse([]byte(tt.body), tt.path, &v)
			if (o == nil) != tt.nil || violation(v) != tt.err {
				t.Fatalf("got (nil=%v, %q), want (nil=%v, %q)", o == nil, violation(v), tt.nil, tt.err)
			}
		})
	}
}

func TestNestedPaths(t *testing.T) {
	t.Parallel()
	body := `{
		"short_stay": {"damage_deposit": {"x_day": 0}, "payment_full": "soon"},
		"season": [
			{"start_date": "2024-01-01"},
			"summer",
			{"start_date": "2024-02-30"}
		],
		"los": {"0": {"days": 1}, "3": {"days": 99}},
		"languages": ["en", "", 7, null, "de-CH-x-very-long"],
		"empty": [],
		"stripe": {"secret_key": "sk"},
		"ignored": {"anything": true}
	}`
	var v fields.Violations
	o := fields.Parse([]byte(body), "", &v)

	ss := o.Object("short_stay", true)
	ss.Object("damage_deposit", false).Int("x_day", fields.Int{Min: 1, Max: 255})
	if ss.Object("payment_full", false) != nil {
		t.Error("payment_full: want nil reader for a string")
	}
	ss.Object("payment_partial", false).String("anything", fields.Str{Required: true}) // nil reader: no-op

	seasons, ok := o.Array("season", fields.List{Max: 10})
	if !ok || len(seasons) != 3 || seasons[1] != nil {
		t.Fatalf("season: got %d readers (ok=%v)", len(seasons), ok)
	}
	for _, s := range seasons {
		s.Date("start_date", true)
	}

	los, _ := o.Array("los", fields.List{})
	for _, l := range los {
		l.Int("days", fields.Int{Required: true, Min: 1, Max: 40})
	}
	if got := []string{los[0].Path(), los[1].Path()}; !slices.Equal(got, []string{"los[0]", "los[3]"}) {
		t.Errorf("PHP-keyed array paths: got %v", got)
	}

	langs, _ := o.Strings("languages", fields.List{}, fields.Str{Max: 5})
	if !slices.Equal(langs, []string{"en", "7"}) {
		t.Errorf("languages: got %q", langs)
	}
	if e, ok := o.Array("empty", fields.List{}); !ok || e == nil || len(e) != 0 {
		t.Errorf("empty array: got %v, %v", e, ok)
	}
	o.Array("missing", fields.List{Required: true})
	o.Array("stripe", fields.List{})
	o.Object("season", false).Add("x", "not reached")
	if o.Object("stripe", true).Path() != "stripe" {
		t.Error("stripe path")
	}
	if !slices.Equal(o.Keys(), []string{"empty", "ignored", "languages", "los", "season", "short_stay", "stripe"}) {
		t.Errorf("keys: %v", o.Keys())
	}
	for _, name := range []string{"empty", "nope", "blank", "null", "obj"} {
		if !fields.Parse([]byte(`{"empty":[],"blank":" ","null":null,"obj":{}}`), "", &v).Empty(name) {
			t.Errorf("Empty(%q) = false", name)
		}
	}
	if o.Empty("stripe") || o.Empty("los") {
		t.Error("Empty of a non-empty member")
	}
	if o.Kind("ignored") != fields.KindObject || o.Kind("nope") != fields.KindAbsent || !o.Has("empty") || o.Has("nope") {
		t.Error("kind/has")
	}

	want := fields.Violations{
		{"short_stay.damage_deposit.x_day", "must be between 1 and 255"},
		{"short_stay.payment_full", "must be an object"},
		{"season[1]", "must be an object"},
		{"season[2].start_date", "must be a valid date (YYYY-MM-DD)"},
		{"los[3].days", "must be between 1 and 40"},
		{"languages[1]", "must not be empty"},
		{"languages[3]", "must be a string"},
		{"languages[4]", "must be at most 5 characters"},
		{"missing", "is required"},
		{"stripe", "must be an array"},
		{"season", "must be an object"},
	}
	if !slices.Equal(v, want) {
		t.Errorf("violations:\n got %v\nwant %v", v, want)
	}
}

func TestListBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		list fields.List
		err  string
	}{
		{"within", `{"a":[{},{}]}`, fields.List{Min: 1, Max: 2}, ""},
		{"too many", `{"a":[{},{},{}]}`, fields.List{Max: 2}, "a: must have at most 2 items"},
		{"too few", `{"a":[]}`, fields.List{Min: 1}, "a: must have at least 1 item"},
		{"too few plural", `{"a":[{}]}`, fields.List{Min: 2}, "a: must have at least 2 items"},
		{"null optional", `{"a":null}`, fields.List{}, ""},
		{"null required", `{"a":null}`, fields.List{Required: true}, "a: is required"},
		{"object with word keys", `{"a":{"x":{}}}`, fields.List{}, "a: must be an array"},
		{"object with padded keys", `{"a":{"01":{}}}`, fields.List{}, "a: must be an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v fields.Violations
			fields.Parse([]byte(tt.body), "", &v).Array("a", tt.list)
			if violation(v) != tt.err {
				t.Fatalf("got %q, want %q", violation(v), tt.err)
			}
		})
	}
}

func TestErr(t *testing.T) {
	t.Parallel()
	var v fields.Violations
	if v.Err() != nil || v.Len() != 0 {
		t.Fatal("empty list must give a nil error")
	}
	v.Add("property.name", "must be at least 20 characters")
	v.Addf("property.maxguest", "must be between %d and %d", 1, 50)
	err := v.Err()
	var fe *fields.Error
	if !errors.As(err, &fe) || len(fe.Violations) != 2 || v.Len() != 2 {
		t.Fatalf("errors.As: %v", err)
	}
	want := "2 invalid fields: property.name: must be at least 20 characters; property.maxguest: must be between 1 and 50"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err.Error(), want)
	}
	v.Add("later", "does not change the returned error")
	if len(fe.Violations) != 2 {
		t.Error("Err must copy the list")
	}
	if fields.Path("", "a") != "a" || fields.Path("a", "") != "a" || fields.Path("a", "b") != "a.b" || fields.Index("s", 2) != "s[2]" {
		t.Error("Path/Index")
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestInts(t *testing.T) {
	t.Parallel()
	rule := fields.Int{Min: 1, Max: 2147483647}
	tests := []struct {
		name string
		body string
		want []int
		ok   bool
		err  string
	}{
		{"numbers and numeric strings", `{"p":{"a":[12,"7"," 9 ",3.0]}}`, []int{12, 7, 9, 3}, true, ""},
		{"empty", `{"p":{"a":[]}}`, []int{}, true, ""},
		{"absent", `{"p":{}}`, nil, false, ""},
		{"PHP object with gaps", `{"p":{"a":{"0":4,"2":5}}}`, []int{4, 5}, true, ""},
		{"not an array", `{"p":{"a":"12"}}`, nil, false, "p.a: must be an array"},
		{"out of range", `{"p":{"a":[1,0]}}`, []int{1}, true, "p.a[1]: must be between 1 and 2147483647"},
		{"fraction", `{"p":{"a":[1.5]}}`, []int{}, true, "p.a[0]: must be a whole number"},
		{"word", `{"p":{"a":[1,"x"]}}`, []int{1}, true, "p.a[1]: must be a number"},
		{"object element", `{"p":{"a":[{}]}}`, []int{}, true, "p.a[0]: must be a number"},
		{"null element", `{"p":{"a":[null]}}`, []int{}, true, "p.a[0]: is required"},
		{"blank element", `{"p":{"a":[" "]}}`, []int{}, true, "p.a[0]: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, v := read(t, tt.body, func(o *fields.Object) ([]int, bool) { return o.Ints("a", fields.List{}, rule) })
			if !slices.Equal(got, tt.want) || ok != tt.ok || violation(v) != tt.err {
				t.Fatalf("got %v %v %q, want %v %v %q", got, ok, violation(v), tt.want, tt.ok, tt.err)
			}
		})
	}
}
