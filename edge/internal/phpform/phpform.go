// Package phpform turns a form-encoded body written with PHP's bracket notation
// (`service[0][name]=Cleaning&include[]=wifi`) into the JSON value PHP would have built,
// so that the services only ever read JSON. Every leaf stays a string; the services accept
// numbers sent as strings.
package phpform

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth bounds the nesting a key may ask for.
const MaxDepth = 8

// Pair is one field of a form: its key in bracket notation and its value.
type Pair struct {
	Key   string
	Value string
}

// Parse decodes body into nested maps. Levels whose keys are all 0..n-1 become arrays, as
// `[]` appends do.
func Parse(body string) (map[string]any, error) {
	pairs, err := Split(body)
	if err != nil {
		return nil, err
	}
	return Build(pairs)
}

// Split decodes a URL-encoded body (or query string) into its pairs, in order.
func Split(body string) ([]Pair, error) {
	var out []Pair
	for _, pair := range strings.Split(body, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawVal, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			return nil, fmt.Errorf("form key %q is not URL-encoded correctly", rawKey)
		}
		val, err := url.QueryUnescape(rawVal)
		if err != nil {
			return nil, fmt.Errorf("form value of %q is not URL-encoded correctly", key)
		}
		out = append(out, Pair{Key: key, Value: val})
	}
	return out, nil
}

// Build nests pairs as PHP does with bracket notation (a later value of one key replaces
// an earlier one, as in PHP).
func Build(pairs []Pair) (map[string]any, error) {
	root := map[string]any{}
	free := map[string]int{} // a level's next free index for `[]`, by its path
	for _, p := range pairs {
		if !utf8.ValidString(p.Key) {
			return nil, fmt.Errorf("form key %q is not valid UTF-8", p.Key)
		}
		if !utf8.ValidString(p.Value) {
			return nil, fmt.Errorf("form value of %q is not valid UTF-8", p.Key)
		}
		path, err := splitKey(p.Key)
		if err != nil {
			return nil, err
		}
		if err := set(root, free, path, p.Value, p.Key); err != nil {
			return nil, err
		}
	}
	// The root stays an object whatever its keys (a form `0=x` is {"0":"x"}, which the
	// services refuse with a 400 naming the field); only its members become lists.
	for k, v := range root {
		root[k] = arrays(v)
	}
	return root, nil
}

// splitKey turns `a[b][0][]` into ["a", "b", "0", ""].
func splitKey(key string) ([]string, error) {
	name, rest, found := strings.Cut(key, "[")
	if name == "" {
		return nil, fmt.Errorf("form key %q has no name", key)
	}
	path := []string{name}
	if !found {
		return path, nil
	}
	rest = "[" + rest
	for rest != "" {
		if rest[0] != '[' {
			return nil, fmt.Errorf("form key %q has text after a bracket", key)
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, fmt.Errorf("form key %q has an unclosed bracket", key)
		}
		path = append(path, rest[1:end])
		rest = rest[end+1:]
		if len(path) > MaxDepth {
			return nil, fmt.Errorf("form key %q is nested deeper than %d levels", key, MaxDepth)
		}
	}
	return path, nil
}

// set gives path the value val in node. A `[]` segment appends at PHP's next free index of
// its level: one more than the largest integer key the level has had, 0 when none, so
// `a[1]=x&a[]=y` keeps x and puts y at 2. free holds that index by the level's path.
func set(node map[string]any, free map[string]int, path []string, val, key string) error {
	level := ""
	for i, seg := range path {
		if i > 0 { // the root's members are names, never appended to
			if seg == "" {
				seg = strconv.Itoa(free[level])
			}
			if n, ok := intKey(seg); ok {
				if next, seen := free[level]; !seen || n >= next {
					free[level] = n + 1
				}
			}
		}
		if i == len(path)-1 {
			if _, isMap := node[seg].(map[string]any); isMap {
				return fmt.Errorf("form key %q gives a value to what is also a list or object", key)
			}
			node[seg] = val
			return nil
		}
		child, ok := node[seg].(map[string]any)
		if !ok {
			if _, isLeaf := node[seg]; isLeaf {
				return fmt.Errorf("form key %q nests under what is also a plain value", key)
			}
			child = map[string]any{}
			node[seg] = child
		}
		node = child
		level += "[" + seg + "]"
	}
	return nil
}

// intKey tells whether k is a key PHP stores as an integer ("7", "-2"; not "07" or "+7").
func intKey(k string) (int, bool) {
	n, err := strconv.Atoi(k)
	return n, err == nil && strconv.Itoa(n) == k && n < 1<<62
}

// arrays converts maps whose keys are exactly 0..n-1 into slices, recursively.
func arrays(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, c := range m {
		m[k] = arrays(c)
	}
	if len(m) == 0 {
		return m
	}
	idx := make([]int, 0, len(m))
	for k := range m {
		n, ok := intKey(k)
		if !ok || n < 0 {
			return m
		}
		idx = append(idx, n)
	}
	sort.Ints(idx)
	for i, n := range idx {
		if i != n {
			return m
		}
	}
	out := make([]any, len(idx))
	for _, n := range idx {
		out[n] = m[strconv.Itoa(n)]
	}
	return out
}

// URLEncode is PHP's urlencode, with which http_build_query writes a form's keys and values
// (what Split reads): letters, digits and -_. kept, space as '+', every other byte as %XX.
func URLEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
