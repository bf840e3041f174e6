// Package fieldstest holds the table-test helpers of every decoder built on libs/fields: a
// row edits a valid example body at a JSON path and names the single violation it must
// produce, so that tables read like the spec's bounds.
package fieldstest

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

// Row is one rule of a resource: an edit of a valid example body and the
// single violation it must produce ("" when the edited body stays valid).
type Row struct {
	name  string
	want  string
	edits []Edit
}

// Edit sets (or, with Del, removes) the value at a path.
type Edit struct {
	path  string // "property.name", "season[1].end_date"
	value any
}

// Removed deletes the member at an edit's path.
type Removed struct{}

// Del as an edit value removes the member.
var Del = Removed{}

// Set is an edit.
func Set(path string, value any) Edit { return Edit{path, value} }

// TC is a row.
func TC(name, want string, edits ...Edit) Row { return Row{name, want, edits} }

// Check applies the row's edits to base, decodes it and compares the
// violations with the row's expectation.
func Check(t *testing.T, base string, rows []Row, decode func([]byte) error) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			body := Apply(t, base, r.edits...)
			got := strings.Join(Violations(t, decode(body)), "\n")
			if got != r.want {
				t.Fatalf("violations:\n got %q\nwant %q\nbody %s", got, r.want, body)
			}
		})
	}
}

// Violations lists a decoder error as "field: message" lines; the error must
// be a *fields.Error.
func Violations(t *testing.T, err error) []string {
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

// Apply sets (or deletes) values at paths of the JSON document base.
func Apply(t *testing.T, base string, edits ...Edit) []byte {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(base))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
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
		if _, ok := value.(Removed); ok && len(keys) == 1 {
			return append(n[:i], n[i+1:]...)
		}
		n[i] = setPath(t, n[i], keys[1:], value)
		return n
	case map[string]any:
		if _, ok := value.(Removed); ok && len(keys) == 1 {
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

// Chars is a string of n characters.
func Chars(n int) string { return strings.Repeat("a", n) }

// Digits is a string of n digits.
func Digits(n int) string { return strings.Repeat("7", n) }

// Many is a JSON array of n copies of item.
func Many(n int, item string) []any {
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

// Obj parses a JSON object literal for use as an edit value.
func Obj(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

// Dec parses a decimal.
func Dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }
