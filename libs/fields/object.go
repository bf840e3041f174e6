package fields

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Kind is the JSON type of a member as sent.
type Kind int

// Kinds of a member. KindAbsent means the member was not sent at all.
const (
	KindAbsent Kind = iota
	KindNull
	KindString
	KindNumber
	KindBool
	KindObject
	KindArray
)

// Object reads the members of one JSON object. A nil *Object stands for an
// object that was absent or invalid (the reason is already recorded): every
// method on it is a no-op returning zero values, so decoders can read nested
// objects without guarding each access.
type Object struct {
	path    string
	members map[string]json.RawMessage
	v       *Violations
}

// List bounds the number of items of an array member.
type List struct {
	Required bool
	Min, Max int // item counts; Max 0 means no upper bound
}

// Parse reads body, which must be a JSON object, recording violations in v
// under path (the empty path for a whole request body). When body is not a
// JSON object it records one violation on path, or on "body" when path is
// empty, and returns nil.
//
// An empty JSON array counts as an empty object: PHP's json_encode writes an
// empty associative array as []. A leading UTF-8 byte order mark is ignored.
func Parse(body []byte, path string, v *Violations) *Object {
	field := path
	if field == "" {
		field = "body"
	}
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		v.Add(field, "must be a JSON object")
		return nil
	}
	if !json.Valid(body) {
		v.Add(field, "must be valid JSON")
		return nil
	}
	o, ok := newObject(body, path, v)
	if !ok {
		v.Add(field, "must be a JSON object")
	}
	return o
}

// newObject builds a reader for raw, which must already be valid JSON.
func newObject(raw json.RawMessage, path string, v *Violations) (*Object, bool) {
	switch kindOf(raw) {
	case KindObject:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, false
		}
		return &Object{path: path, members: m, v: v}, true
	case KindArray:
		if isEmptyArray(raw) {
			return &Object{path: path, members: map[string]json.RawMessage{}, v: v}, true
		}
	}
	return nil, false
}

// Path is the object's own path, e.g. "season[2]".
func (o *Object) Path() string {
	if o == nil {
		return ""
	}
	return o.path
}

// Add records a violation on the member name of this object (on the object
// itself when name is empty). Decoders use it for rules that span fields.
func (o *Object) Add(name, msg string) {
	if o == nil {
		return
	}
	o.v.Add(Path(o.path, name), msg)
}

// Addf is Add with a formatted message.
func (o *Object) Addf(name, format string, args ...any) {
	if o == nil {
		return
	}
	o.v.Addf(Path(o.path, name), format, args...)
}

// Kind reports the JSON type of member name as sent.
func (o *Object) Kind(name string) Kind {
	if o == nil {
		return KindAbsent
	}
	raw, ok := o.members[name]
	if !ok {
		return KindAbsent
	}
	return kindOf(raw)
}

// Has reports whether member name was sent with a value other than null.
func (o *Object) Has(name string) bool {
	k := o.Kind(name)
	return k != KindAbsent && k != KindNull
}

// Empty reports whether member name carries nothing: absent, null, a blank
// string, [] or {}. PHP clients send these for "none".
func (o *Object) Empty(name string) bool {
	if o == nil {
		return true
	}
	raw, k := o.lookup(name)
	switch k {
	case KindAbsent:
		return true
	case KindString:
		var s string
		return json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == ""
	case KindArray:
		return isEmptyArray(raw)
	case KindObject:
		var m map[string]json.RawMessage
		return json.Unmarshal(raw, &m) == nil && len(m) == 0
	}
	return false
}

// Keys lists the member names in sorted order, so that violations found by
// walking them come out in a stable order.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	keys := make([]string, 0, len(o.members))
	for k := range o.members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Object reads member name as a nested object. It returns nil when the
// member is absent, null or not an object (the last is a violation, and so
// is absence when required).
func (o *Object) Object(name string, required bool) *Object {
	if o == nil {
		return nil
	}
	field := Path(o.path, name)
	raw, k := o.lookup(name)
	if k == KindAbsent {
		if required {
			o.v.Add(field, "is required")
		}
		return nil
	}
	obj, ok := newObject(raw, field, o.v)
	if !ok {
		o.v.Add(field, "must be an object")
		return nil
	}
	return obj
}

// Array reads member name as an array of objects and returns one reader per
// element, with paths like "season[2]". An element that is not an object is
// a violation and yields a nil reader at its position. The boolean is true
// when the member was sent as an array within the bounds of l; a sent empty
// array gives an empty, non-nil slice.
func (o *Object) Array(name string, l List) ([]*Object, bool) {
	field := Path(o.Path(), name)
	items, ok := o.items(name, field, l)
	if !ok {
		return nil, false
	}
	out := make([]*Object, len(items))
	for i, it := range items {
		p := Index(field, it.index)
		obj, ok := newObject(it.raw, p, o.v)
		if !ok {
			o.v.Add(p, "must be an object")
		}
		out[i] = obj
	}
	return out, true
}

// Strings reads member name as an array of strings, each checked against
// each; element violations name the element, e.g. "languages[1]". Elements
// that break a rule are left out of the result.
func (o *Object) Strings(name string, l List, each Str) ([]string, bool) {
	field := Path(o.Path(), name)
	items, ok := o.items(name, field, l)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		p, k := Index(field, it.index), kindOf(it.raw)
		var s string
		if k == KindString && json.Unmarshal(it.raw, &s) == nil && strings.TrimSpace(s) == "" {
			o.v.Add(p, "must not be empty")
			continue
		}
		if k == KindNull {
			o.v.Add(p, "must be a string")
			continue
		}
		if s, ok := readString(o.v, p, it.raw, k, each); ok {
			out = append(out, s)
		}
	}
	return out, true
}

// Ints reads member name as an array of whole numbers (JSON numbers or numeric strings),
// each checked against each, which is required of every element: a null or blank element is
// "is required". Element violations name the element, e.g. "order[1]"; elements that break
// a rule are left out of the result.
func (o *Object) Ints(name string, l List, each Int) ([]int, bool) {
	field := Path(o.Path(), name)
	items, ok := o.items(name, field, l)
	if !ok {
		return nil, false
	}
	each.Required = true
	out := make([]int, 0, len(items))
	for _, it := range items {
		el := &Object{path: Index(field, it.index), members: map[string]json.RawMessage{"": it.raw}, v: o.v}
		if n, ok := el.Int("", each); ok {
			out = append(out, n)
		}
	}
	return out, true
}

type item struct {
	index int
	raw   json.RawMessage
}

// items returns the elements of an array member. PHP encodes an array with
// gaps in its keys as an object keyed "0", "2", ...; such an object is read
// as an array and its keys are used as the indexes in paths.
func (o *Object) items(name, field string, l List) ([]item, bool) {
	if o == nil {
		return nil, false
	}
	raw, k := o.lookup(name)
	var items []item
	switch k {
	case KindAbsent:
		if l.Required {
			o.v.Add(field, "is required")
		}
		return nil, false
	case KindArray:
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			o.v.Add(field, "must be an array")
			return nil, false
		}
		items = make([]item, len(elems))
		for i, e := range elems {
			items[i] = item{index: i, raw: e}
		}
	case KindObject:
		var ok bool
		if items, ok = numericKeyed(raw); !ok {
			o.v.Add(field, "must be an array")
			return nil, false
		}
	default:
		o.v.Add(field, "must be an array")
		return nil, false
	}
	switch {
	case len(items) < l.Min && l.Min == 1:
		o.v.Add(field, "must have at least 1 item")
		return nil, false
	case len(items) < l.Min:
		o.v.Addf(field, "must have at least %d items", l.Min)
		return nil, false
	case l.Max > 0 && len(items) > l.Max:
		o.v.Addf(field, "must have at most %d items", l.Max)
		return nil, false
	}
	return items, true
}

func numericKeyed(raw json.RawMessage) ([]item, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false
	}
	items := make([]item, 0, len(m))
	for k, e := range m {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 || n > 1<<20 || strconv.Itoa(n) != k {
			return nil, false
		}
		items = append(items, item{index: n, raw: e})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].index < items[j].index })
	return items, true
}

// lookup returns the raw member, with null reported as absent: a client that
// sends null has not sent a value.
func (o *Object) lookup(name string) (json.RawMessage, Kind) {
	raw, ok := o.members[name]
	if !ok {
		return nil, KindAbsent
	}
	k := kindOf(raw)
	if k == KindNull {
		return nil, KindAbsent
	}
	return raw, k
}

func kindOf(raw json.RawMessage) Kind {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return KindAbsent
	}
	switch raw[0] {
	case '{':
		return KindObject
	case '[':
		return KindArray
	case '"':
		return KindString
	case 't', 'f':
		return KindBool
	case 'n':
		return KindNull
	}
	return KindNumber
}

func isEmptyArray(raw json.RawMessage) bool {
	var elems []json.RawMessage
	return json.Unmarshal(raw, &elems) == nil && len(elems) == 0
}
