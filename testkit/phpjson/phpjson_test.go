package phpjson

import (
	"strings"
	"testing"
)

// show writes v compactly with its keys in order: {a:1,b:[x,true,null]} (strings bare).
func show(v *Value) string {
	switch v.Kind() {
	case Object:
		parts := make([]string, 0, len(v.Keys()))
		for _, k := range v.Keys() {
			parts = append(parts, k+":"+show(v.At(k)))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case List:
		parts := make([]string, 0, len(v.Items()))
		for _, x := range v.Items() {
			parts = append(parts, show(x))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return v.Text()
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		kind           Kind
		reset          string // show(v.Reset()), "" when nil
		repeated       string // v.Repeated(), joined by ","
	}{
		{"key order kept", `{"z":1,"a":2,"m":3}`, "{z:1,a:2,m:3}", Object, "1", ""},
		{"nested objects and lists", ` {"b":{"y":[1,{"q":"s","p":[]}],"x":{}},"a":[[true],null]} `,
			"{b:{y:[1,{q:s,p:[]}],x:{}},a:[[true],null]}", Object, "{y:[1,{q:s,p:[]}],x:{}}", ""},
		{"duplicate key: first position, last value", `{"a":1,"b":2,"a":{"c":3},"b":4,"a":5}`, "{a:5,b:4}", Object, "5", "a,b"},
		{"duplicate key nested", `{"o":{"k":"x","k":"y"}}`, "{o:{k:y}}", Object, "{k:y}", ""},
		{"list", `["b","a"]`, "[b,a]", List, "b", ""},
		{"empty object", `{}`, "{}", Object, "", ""},
		{"empty list", `[]`, "[]", List, "", ""},
		{"numbers as written", `[700.00,1e3,-0,12345678901234567890]`, "[700.00,1e3,-0,12345678901234567890]", List, "700.00", ""},
		{"string", `"x\u00e9\n"`, "xé\n", String, "", ""},
		{"number", `7`, "7", Number, "", ""},
		{"bool", `false`, "false", Bool, "", ""},
		{"null", `null`, "null", Null, "", ""},
		{"empty key", `{"":1}`, "{:1}", Object, "1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Decode([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := show(v); got != c.want || v.Kind() != c.kind {
				t.Errorf("got %s (kind %d), want %s (kind %d)", got, v.Kind(), c.want, c.kind)
			}
			reset := ""
			if r := v.Reset(); r != nil {
				reset = show(r)
			}
			if reset != c.reset {
				t.Errorf("Reset() = %q, want %q", reset, c.reset)
			}
			if r := strings.Join(v.Repeated(), ","); r != c.repeated {
				t.Errorf("Repeated() = %q, want %q", r, c.repeated)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a":1`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `{"a":}`, `[1 2]`, `nul`, `"abc`, `{"a":1]`, `01`,
		// trailing data
		`{} {}`, `1 2`, `[] x`, `{}]`, `"a""b"`,
	} {
		if v, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) = %s, want an error", in, show(v))
		} else if !strings.HasPrefix(err.Error(), "phpjson: ") {
			t.Errorf("Decode(%q): %v", in, err)
		}
	}
}

func TestAccessors(t *testing.T) {
	v, err := Decode([]byte(`{"a":{"b":{"c":"deep"},"l":[1]},"s":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path []string
		want string // show, "" when nil
	}{
		{nil, `{a:{b:{c:deep},l:[1]},s:x}`},
		{[]string{"a", "b", "c"}, "deep"},
		{[]string{"a", "l"}, "[1]"},
		{[]string{"a", "x"}, ""},
		{[]string{"s", "t"}, ""},      // through a scalar
		{[]string{"a", "l", "0"}, ""}, // At reads objects only
	} {
		got := ""
		if x := v.At(c.path...); x != nil {
			got = show(x)
		}
		if got != c.want {
			t.Errorf("At(%v) = %q, want %q", c.path, got, c.want)
		}
	}
	if v.Keys() == nil || v.At("s").Keys() != nil || v.At("a", "l").Keys() != nil || v.Items() != nil || len(v.At("a", "l").Items()) != 1 {
		t.Error("Keys is for objects and Items for lists only")
	}
	if d, _ := Decode([]byte(`{"o":{"k":1,"k":2}}`)); d.Repeated() != nil || strings.Join(d.At("o").Repeated(), ",") != "k" {
		t.Error("Repeated is per object")
	}
	if v.Text() != "<object>" || v.At("a", "l").Text() != "<list>" || v.At("s").Reset() != nil {
		t.Errorf("Text of composites %s %s, Reset of a scalar", v.Text(), v.At("a", "l").Text())
	}
}

func TestKeys(t *testing.T) {
	for _, c := range []struct {
		in   string
		path []string
		want string // keys joined by ",", or "error: …" with the error's text
	}{
		{`{"status":0,"message":"Success","data":{"b":1,"a":2}}`, nil, "status,message,data"},
		{`{"status":0,"data":{"b":1,"a":2}}`, []string{"data"}, "b,a"},
		{`{"status":0,"status":1,"data":{"b":1,"a":2}}`, []string{"data"}, "b,a"}, // only the object at path is checked
		{`{"data":{"b":1,"a":2,"b":3}}`, []string{"data"}, `error: phpjson: key "b" written more than once at data`},
		{`{"data":{"x":{"z":1,"y":2}}}`, []string{"data", "x"}, "z,y"},
		{`{"data":{}}`, []string{"data"}, ""},
		{`{"data":[1]}`, []string{"data"}, "error: phpjson: not an object at data"},
		{`[1]`, nil, "error: phpjson: not an object at the top"},
		{`{"data":{}}`, []string{"data", "x"}, "error: phpjson: no member data.x"},
		{`{"data":1}`, []string{"data", "x"}, "error: phpjson: no member data.x"},
		{`{"a":1}x`, nil, "error: phpjson: at offset 7: invalid character 'x' looking for beginning of value"},
	} {
		got, err := Keys([]byte(c.in), c.path...)
		s := strings.Join(got, ",")
		if err != nil {
			s = "error: " + err.Error()
		}
		if s != c.want {
			t.Errorf("Keys(%s, %v) = %q, want %q", c.in, c.path, s, c.want)
		}
	}
}
