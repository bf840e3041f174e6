package phpform

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse reads any body as a form and checks what a PHP client would notice:
//   - Parse never panics and is deterministic;
//   - what it builds is JSON the services can read: a JSON object whose leaves are all
//     strings, nested at most MaxDepth levels, never more than a fixed factor of the
//     body's size (edge measures a form's JSON against the body limit only after building
//     it, so the building must not blow up);
//   - a plain name (no bracket) ends up with the last value the body gives it, as in PHP;
//   - re-encoding the result the way PHP's http_build_query does and parsing that gives the
//     same value back (so a client's array reaches the service as it built it);
//   - a key that breaks the bracket grammar (checked here with a rule of its own) is
//     refused, and every refusal names the key (or value) at fault, or the limit (pairs,
//     values) the form is over.
//
// Seeds: testdata/fuzz/FuzzParse (the package's table tests and the bodies of
// original-clients.md).
func FuzzParse(f *testing.F) {
	f.Add("key=k1&pass=p%26q&action=getinfo&propertyId=21")
	f.Fuzz(func(t *testing.T, body string) {
		got, err := Parse(body)
		again, err2 := Parse(body)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(got, again) {
			t.Fatalf("Parse(%q) is not deterministic: %v, %v / %v, %v", body, got, err, again, err2)
		}
		pairs, splitErr := Split(body)
		if err != nil {
			var limit *LimitError
			if !namesAKey(err.Error(), body) && !errors.As(err, &limit) {
				t.Fatalf("Parse(%q): error %q names no key of the body", body, err)
			}
			if splitErr == nil && keysWellFormed(pairs) && !strings.Contains(err.Error(), "UTF-8") &&
				!strings.Contains(err.Error(), "also") {
				t.Fatalf("Parse(%q) refused well-formed keys: %v", body, err)
			}
			return
		}
		if splitErr != nil {
			t.Fatalf("Parse(%q) succeeded where Split fails: %v", body, splitErr)
		}
		if !keysWellFormed(pairs) {
			t.Fatalf("Parse(%q) accepted a key the bracket grammar refuses: %v", body, got)
		}
		out, jerr := json.Marshal(got)
		if jerr != nil || !json.Valid(out) {
			t.Fatalf("Parse(%q) gave what is not JSON: %v", body, jerr)
		}
		if bound := maxJSON(len(body)); len(out) > bound {
			t.Fatalf("Parse(%q): JSON of %d bytes from a body of %d (bound %d)", body, len(out), len(body), bound)
		}
		if d := depth(got); d > MaxDepth {
			t.Fatalf("Parse(%q): nested %d levels", body, d)
		}
		if err := leavesAreStrings(got); err != nil {
			t.Fatalf("Parse(%q): %v", body, err)
		}
		// A plain name keeps its last value.
		last := map[string]string{}
		for _, p := range pairs {
			if !strings.Contains(p.Key, "[") {
				last[p.Key] = p.Value
			}
		}
		for k, v := range last {
			if got[k] != v {
				t.Fatalf("Parse(%q)[%q] = %#v, want the last value %q", body, k, got[k], v)
			}
		}
		// Encoded as PHP encodes it, the value decodes back to itself.
		enc := httpBuildQuery(got)
		back, err := Parse(enc)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; its http_build_query %q is refused: %v", body, got, enc, err)
		}
		if !reflect.DeepEqual(back, got) {
			t.Fatalf("Parse(%q) = %v; its http_build_query %q parses to %v", body, got, enc, back)
		}
	})
}

// keysWellFormed is the bracket grammar, written apart from splitKey: a non-empty name
// without '[', then zero or more `[segment]` with no ']' in a segment, and at most MaxDepth
// parts in all; keys and values valid UTF-8.
func keysWellFormed(pairs []Pair) bool {
	for _, p := range pairs {
		if !utf8.ValidString(p.Key) || !utf8.ValidString(p.Value) {
			return false
		}
		k := p.Key
		i := strings.IndexByte(k, '[')
		if k == "" || i == 0 {
			return false
		}
		if i < 0 {
			continue
		}
		parts := 1
		for j := i; j < len(k); {
			if k[j] != '[' {
				return false
			}
			close := strings.IndexByte(k[j:], ']')
			if close < 0 {
				return false
			}
			parts++
			j += close + 1
		}
		if parts > MaxDepth {
			return false
		}
	}
	return true
}

// namesAKey: msg quotes (as %q does) a key of body, raw or decoded.
func namesAKey(msg, body string) bool {
	for _, pair := range strings.Split(body, "&") {
		raw, _, _ := strings.Cut(pair, "=")
		if raw == "" && pair == "" {
			continue
		}
		if strings.Contains(msg, strconv.Quote(raw)) {
			return true
		}
		if key, err := url.QueryUnescape(raw); err == nil && strings.Contains(msg, strconv.Quote(key)) {
			return true
		}
	}
	return false
}

// maxJSON bounds the JSON of a body of n bytes: a byte becomes at most 6 in JSON (\u003c),
// and a pair (at least 2 bytes with its '&') adds at most 2 quotes, ':' and ','.
func maxJSON(n int) int { return 8*n + 16 }

func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			d = max(d, depth(c))
		}
	case []any:
		for _, c := range v {
			d = max(d, depth(c))
		}
	default:
		return 0
	}
	return d + 1
}

func leavesAreStrings(v any) error {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			return nil
		}
		for _, c := range v {
			if err := leavesAreStrings(c); err != nil {
				return err
			}
		}
	case []any:
		if len(v) == 0 {
			return fmt.Errorf("an empty list")
		}
		for _, c := range v {
			if err := leavesAreStrings(c); err != nil {
				return err
			}
		}
	case string:
	default:
		return fmt.Errorf("a leaf %#v of type %T", v, v)
	}
	return nil
}

// httpBuildQuery encodes a value as PHP's http_build_query does (PHP_QUERY_RFC1738): nested
// keys as name%5Bkey%5D, lists by index, names and values through urlencode.
func httpBuildQuery(m map[string]any) string {
	var parts []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(prefix+"%5B"+URLEncode(k)+"%5D", v[k])
			}
		case []any:
			for i, c := range v {
				walk(prefix+"%5B"+strconv.Itoa(i)+"%5D", c)
			}
		case string:
			parts = append(parts, prefix+"="+URLEncode(v))
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		walk(URLEncode(k), m[k])
	}
	return strings.Join(parts, "&")
}
