package guest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// row is one rule of a resource: an edit of a valid example body and the
// single violation it must produce ("" when the edited body stays valid).
type row struct {
	name  string
	want  string
	edits []edit
}

type edit struct {
	path  string // "property.name", "season[1].end_date"
	value any
}

// removed deletes the member at an edit's path.
type removed struct{}

var del = removed{}

func set(path string, value any) edit { return edit{path, value} }

func tc(name, want string, edits ...edit) row { return row{name, want, edits} }

// check applies the row's edits to base, decodes it and compares the
// violations with the row's expectation.
func check(t *testing.T, base string, rows []row, decode func([]byte) error) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			body := apply(t, base, r.edits...)
			got := strings.Join(violations(t, decode(body)), "\n")
			if got != r.want {
				t.Fatalf("violations:\n got %q\nwant %q\nbody %s", got, r.want, body)
			}
		})
	}
}

// violations lists a decoder error as "field: message" lines; the error must
// be a *fields.Error.
func violations(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var fe *fields.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *fields.Error", err)
	}
	out := make([]string, len(fe.Violations))
	for i, v := range fe.Violations {
		out[i] = v.Field + ": " + v.Message
	}
	return out
}

var indexRE = regexp.MustCompile(`\[(\d+)\]`)

// apply sets (or deletes) values at paths of the JSON document base.
func apply(t *testing.T, base string, edits ...edit) []byte {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(base))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("base body: %v", err)
	}
	for _, e := range edits {
		keys := strings.Split(indexRE.ReplaceAllString(e.path, ".$1"), ".")
		doc = setPath(t, doc, keys, e.value)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func setPath(t *testing.T, node any, keys []string, value any) any {
	if len(keys) == 0 {
		return value
	}
	k := keys[0]
	switch n := node.(type) {
	case []any:
		i, err := strconv.Atoi(k)
		if err != nil || i > len(n) {
			t.Fatalf("bad index %q", k)
		}
		if i == len(n) {
			n = append(n, map[string]any{})
		}
		if _, ok := value.(removed); ok && len(keys) == 1 {
			return append(n[:i], n[i+1:]...)
		}
		n[i] = setPath(t, n[i], keys[1:], value)
		return n
	case map[string]any:
		if _, ok := value.(removed); ok && len(keys) == 1 {
			delete(n, k)
			return n
		}
		child, ok := n[k]
		if !ok {
			child = map[string]any{}
		}
		n[k] = setPath(t, child, keys[1:], value)
		return n
	default:
		m := map[string]any{}
		m[k] = setPath(t, nil, keys[1:], value)
		return m
	}
}

// chars is a string of n characters.
func chars(n int) string { return strings.Repeat("a", n) }

// digits is a string of n digits.
func digits(n int) string { return strings.Repeat("7", n) }

// many is a JSON array of n copies of item.
func many(n int, item string) []any {
	var v any
	if err := json.Unmarshal([]byte(item), &v); err != nil {
		panic(err)
	}
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// obj parses a JSON object literal for use as an edit value.
func obj(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestHelpersApply(t *testing.T) {
	got := string(apply(t, `{"a":{"b":[{"c":1},{"c":2}]}}`,
		set("a.b[1].c", 3), set("a.b[2].c", 4), set("a.b[0]", del), set("x.y", "z")))
	want := `{"a":{"b":[{"c":3},{"c":4}]},"x":{"y":"z"}}` + "\n"
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
