// Package phpform turns a form-encoded body written with PHP's bracket notation
// (`service[0][name]=Cleaning&include[]=wifi`) into the JSON value PHP would have built,
// so that the services only ever read JSON. Every leaf stays a string; the services accept
// numbers sent as strings.
package phpform

import (
	"bytes"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The limits of a form (docs/limits.md, "Bodies"). PHP's own are max_input_vars (1000
// fields) and max_input_nesting_level (64 levels); edge's are chosen so that everything the
// original's clients send passes (the largest is a setprices_minnights push of 1000 dates
// of up to 7 fields each, some 7000 fields and 8000 values) while what one form can make
// edge build stays bounded.
const (
	// MaxDepth bounds the nesting a key may ask for: its name and at most MaxDepth-1
	// bracketed segments.
	MaxDepth = 8
	// MaxPairs bounds the fields of a form (or the parts of a multipart form).
	MaxPairs = 10000
	// MaxNodes bounds the values, lists and objects Build makes of a form, its root
	// included: without it, MaxPairs keys of MaxDepth levels of `[]` would make eight
	// maps each.
	MaxNodes = 30000
)

// LimitError is a form over one of the limits above; it names the limit.
type LimitError struct{ Message string }

func (e *LimitError) Error() string { return e.Message }

func tooManyPairs() error {
	return &LimitError{fmt.Sprintf("form has more than %d fields; edge reads at most %d", MaxPairs, MaxPairs)}
}

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

// Split decodes a URL-encoded body (or query string) into its pairs, in order. Every key
// is checked as Scan checks it.
func Split(body string) ([]Pair, error) {
	var out []Pair
	err := Scan([]byte(body), func(key string, rawVal []byte) error {
		val, err := Unescape(key, rawVal)
		if err != nil {
			return err
		}
		out = append(out, Pair{Key: key, Value: val})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Scan walks a URL-encoded body pair by pair, without building anything: each key is
// decoded and checked (valid UTF-8, the bracket grammar, at most MaxDepth levels), at most
// MaxPairs pairs are read, and fn is given the decoded key and the value as it was sent
// (Unescape decodes it). It allocates only the decoded keys, one at a time: edge reads a
// form's credentials with it before it knows the caller.
func Scan(body []byte, fn func(key string, rawVal []byte) error) error {
	n := 0
	for len(body) > 0 {
		pair := body
		if i := bytes.IndexByte(body, '&'); i >= 0 {
			pair, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if len(pair) == 0 {
			continue
		}
		if n++; n > MaxPairs {
			return tooManyPairs()
		}
		rawKey, rawVal := pair, []byte(nil)
		if i := bytes.IndexByte(pair, '='); i >= 0 {
			rawKey, rawVal = pair[:i], pair[i+1:]
		}
		key, err := url.QueryUnescape(string(rawKey))
		if err != nil {
			return fmt.Errorf("form key %q is not URL-encoded correctly", rawKey)
		}
		if err := CheckKey(key); err != nil {
			return err
		}
		if err := fn(key, rawVal); err != nil {
			return err
		}
	}
	return nil
}

// Unescape decodes the value rawVal of key as Split does.
func Unescape(key string, rawVal []byte) (string, error) {
	val, err := url.QueryUnescape(string(rawVal))
	if err != nil {
		return "", fmt.Errorf("form value of %q is not URL-encoded correctly", key)
	}
	return val, nil
}

// CheckKey refuses a key that is not valid UTF-8 or breaks the bracket grammar
// (`name[a][]…`, at most MaxDepth levels), as Build would, without building its path.
func CheckKey(key string) error {
	if !utf8.ValidString(key) {
		return fmt.Errorf("form key %q is not valid UTF-8", key)
	}
	return walkKey(key, func(string) {})
}

// Build nests pairs as PHP does with bracket notation (a later value of one key replaces
// an earlier one, as in PHP). It refuses more than MaxPairs pairs and a form that would make
// more than MaxNodes values, lists and objects.
func Build(pairs []Pair) (map[string]any, error) {
	if len(pairs) > MaxPairs {
		return nil, tooManyPairs()
	}
	root := map[string]any{}
	free := map[string]int{} // a level's next free index for `[]`, by its path
	nodes := 1
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
		if err := set(root, free, path, p.Value, p.Key, &nodes); err != nil {
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
	var path []string
	err := walkKey(key, func(seg string) { path = append(path, seg) })
	return path, err
}

// walkKey gives seg each part of key in turn (`a[b][]`: "a", "b", ""), or refuses a key that
// breaks the bracket grammar or has more than MaxDepth parts.
func walkKey(key string, seg func(string)) error {
	name, rest := key, ""
	if i := strings.IndexByte(key, '['); i >= 0 {
		name, rest = key[:i], key[i:]
	}
	if name == "" {
		return fmt.Errorf("form key %q has no name", key)
	}
	seg(name)
	for parts := 1; rest != ""; parts++ {
		if rest[0] != '[' {
			return fmt.Errorf("form key %q has text after a bracket", key)
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return fmt.Errorf("form key %q has an unclosed bracket", key)
		}
		if parts+1 > MaxDepth {
			return fmt.Errorf("form key %q is nested deeper than %d levels", key, MaxDepth)
		}
		seg(rest[1:end])
		rest = rest[end+1:]
	}
	return nil
}

// set gives path the value val in node. A `[]` segment appends at PHP's next free index of
// its level: one more than the largest integer key the level has had, 0 when none, so
// `a[1]=x&a[]=y` keeps x and puts y at 2. free holds that index by the level's path.
//
// nodes counts the values, lists and objects made so far; set refuses to make more than
// MaxNodes.
func set(node map[string]any, free map[string]int, path []string, val, key string, nodes *int) error {
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
			if _, seen := node[seg]; !seen {
				if *nodes++; *nodes > MaxNodes {
					return tooManyNodes()
				}
			}
			node[seg] = val
			return nil
		}
		child, ok := node[seg].(map[string]any)
		if !ok {
			if _, isLeaf := node[seg]; isLeaf {
				return fmt.Errorf("form key %q nests under what is also a plain value", key)
			}
			if *nodes++; *nodes > MaxNodes {
				return tooManyNodes()
			}
			child = map[string]any{}
			node[seg] = child
		}
		node = child
		level += "[" + seg + "]"
	}
	return nil
}

func tooManyNodes() error {
	return &LimitError{fmt.Sprintf("form makes more than %d values, lists and objects; edge builds at most %d", MaxNodes, MaxNodes)}
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
