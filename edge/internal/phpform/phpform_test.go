package phpform

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, want string
	}{
		{"flat", "key=k1&pass=p%26q&action=getinfo&propertyId=21", `{"action":"getinfo","key":"k1","pass":"p\u0026q","propertyId":"21"}`},
		{"plus is space", "firstName=Ann+Lee", `{"firstName":"Ann Lee"}`},
		{"indexed list of objects", "service[0][name]=Cleaning&service[0][amount]=50&service[1][name]=Linen",
			`{"service":[{"amount":"50","name":"Cleaning"},{"name":"Linen"}]}`},
		{"appended list", "include[]=wifi&include[]=pool", `{"include":["wifi","pool"]}`},
		{"nested taxes", "service[0][taxes][0][name]=VAT&service[0][taxes][0][perc]=10",
			`{"service":[{"taxes":[{"name":"VAT","perc":"10"}]}]}`},
		{"sparse indices stay an object", "a[0]=x&a[2]=y", `{"a":{"0":"x","2":"y"}}`},
		// `[]` takes PHP's next free index: one past the largest integer key so far.
		{"append after an index keeps it", "a[1]=x&a[]=y", `{"a":{"1":"x","2":"y"}}`},
		{"append after a lower index", "a[5]=x&a[]=y&a[2]=z&a[]=w", `{"a":{"2":"z","5":"x","6":"y","7":"w"}}`},
		{"append fills a list in order", "a[]=x&a[1]=y&a[]=z", `{"a":["x","y","z"]}`},
		{"named keys do not move the index", "a[k]=x&a[]=y&a[07]=z&a[]=w", `{"a":{"0":"y","07":"z","1":"w","k":"x"}}`},
		{"append after a negative index", "a[-3]=x&a[]=y", `{"a":{"-2":"y","-3":"x"}}`},
		{"each level its own index", "a[0][]=x&a[1][]=y&a[0][]=z", `{"a":[["x","z"],["y"]]}`},
		{"named keys", "creditCard[CCNumber]=4242&creditCard[CVC]=123", `{"creditCard":{"CCNumber":"4242","CVC":"123"}}`},
		{"empty value", "service=", `{"service":""}`},
		{"empty body", "", `{}`},
	}
	for _, c := range cases {
		got, err := Parse(c.body)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, b, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"[x]=1",                       // no name
		"a[b=1",                       // unclosed bracket
		"a[b]c=1",                     // text after bracket
		"a=1&a[b]=2",                  // value then object
		"a[b]=1&a=2",                  // object then value
		"a%zz=1",                      // bad escape
		"a[1][2][3][4][5][6][7][8]=1", // too deep
	} {
		if _, err := Parse(body); err == nil {
			t.Errorf("Parse(%q) succeeded", body)
		}
	}
}

// TestBuild: pairs (as a multipart body gives them) nest like a form; a later value of one
// key replaces an earlier one, as in PHP; text that is not UTF-8 is refused naming the key.
func TestBuild(t *testing.T) {
	t.Parallel()
	got, err := Build([]Pair{{"photo[image]", "aGk="}, {"photo[main]", "1"}, {"a", "1"}, {"a", "2"}, {"tag[]", "x"}, {"tag[]", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"a":"2","photo":{"image":"aGk=","main":"1"},"tag":["x","y"]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	for _, c := range []struct {
		pairs []Pair
		msg   string
	}{
		{[]Pair{{"name", "\xff"}}, `form value of "name" is not valid UTF-8`},
		{[]Pair{{"na\xffme", "x"}}, `is not valid UTF-8`},
		{[]Pair{{"[x]", "1"}}, `has no name`},
	} {
		if _, err := Build(c.pairs); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v, want %q", c.pairs, err, c.msg)
		}
	}
	if _, err := Parse("name=%FF"); err == nil {
		t.Error("Parse of a value escaping a byte that is not UTF-8 succeeded")
	}
}

// TestRootOfIndexesStaysAnObject: a form whose top-level names are 0..n-1 is an object
// keyed "0", "1", … (the service refuses the unknown fields by name); it was turned into a
// list and panicked, which edge answered 500, before authentication (found by FuzzParse).
func TestRootOfIndexesStaysAnObject(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]map[string]any{
		"0=x":           {"0": "x"},
		"0=x&1=y":       {"0": "x", "1": "y"},
		"0":             {"0": ""},
		"0[0]=a&0[1]=b": {"0": []any{"a", "b"}},
		"0[a]=1&a[0]=2": {"0": map[string]any{"a": "1"}, "a": []any{"2"}},
	} {
		got, err := Parse(body)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", body, got, err, want)
		}
	}
}

// TestLimits: a form is refused past MaxPairs fields, MaxDepth levels or MaxNodes values,
// lists and objects, with an error naming the limit; the largest form the original's clients
// send (a setprices_minnights push of 1000 dates, every item field set) is within them.
func TestLimits(t *testing.T) {
	t.Parallel()
	repeat := func(pair string, n int) string { return strings.TrimSuffix(strings.Repeat(pair+"&", n), "&") }
	var push strings.Builder
	push.WriteString("key=k&pass=p&action=setprices_minnights&propertyId=1_2")
	for i := range 1000 {
		for _, f := range []string{"date", "recommended_price", "recommended_weekly_price", "recommended_monthly_price", "minNights", "current_price", "reason"} {
			fmt.Fprintf(&push, "&pricingArray%%5B%d%%5D%%5B%s%%5D=1", i, f)
		}
	}
	for _, c := range []struct {
		name, body string
		limit      string // the limit named in the refusal; "" when accepted
	}{
		{"a year of prices", push.String(), ""},
		{"MaxPairs flat fields", repeat("a=1", MaxPairs), ""},
		{"one field over MaxPairs", repeat("a=1", MaxPairs+1), "more than 10000 fields"},
		{"MaxPairs fields in a list", repeat("a[]=1", MaxPairs), ""},
		{"MaxPairs items of one field", repeat("a[][x]=1", MaxPairs), ""},
		{"MaxPairs keys of MaxDepth levels", repeat("a[][][][][][][]=", MaxPairs), "more than 30000 values, lists and objects"},
		{"MaxDepth levels", "a[1][2][3][4][5][6][7]=1", ""},
		{"one level over MaxDepth", "a[1][2][3][4][5][6][7][8]=1", "nested deeper than 8 levels"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(c.body)
			if c.limit == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.limit) {
				t.Fatalf("error %v, want one naming %q", err, c.limit)
			}
		})
	}
	pairs := make([]Pair, MaxPairs+1)
	for i := range pairs {
		pairs[i] = Pair{Key: "a", Value: "1"}
	}
	var limit *LimitError
	if _, err := Build(pairs); !errors.As(err, &limit) {
		t.Errorf("Build of %d pairs: %v, want a LimitError", len(pairs), err)
	}
}

// TestScanBuildsNothing: Scan reads a form of MaxPairs keys with one allocation a key (the
// decoded key), whatever the form would nest into, and stops at the first field over
// MaxPairs.
func TestScanBuildsNothing(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	body := []byte(strings.Repeat("a[][][][][][][]=&", MaxPairs))
	seen := 0
	allocs := testing.AllocsPerRun(5, func() {
		seen = 0
		if err := Scan(body, func(string, []byte) error { seen++; return nil }); err != nil {
			t.Fatal(err)
		}
	})
	if seen != MaxPairs || allocs > MaxPairs+8 {
		t.Errorf("Scan saw %d pairs with %v allocations, want %d with at most one a pair", seen, allocs, MaxPairs)
	}
	over := append(body, "b=1&c=2"...)
	seen = 0
	if err := Scan(over, func(string, []byte) error { seen++; return nil }); err == nil || seen != MaxPairs {
		t.Errorf("Scan of %d+2 pairs: %v after %d pairs, want a refusal after %d", MaxPairs, err, seen, MaxPairs)
	}
}
