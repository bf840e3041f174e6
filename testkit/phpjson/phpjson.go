// Package phpjson decodes JSON as PHP's json_decode sees it, for tests of answers that PHP
// clients read: an object keeps its members in the order they were written (PHP arrays are
// ordered), so a test can check an answer's field order and read it positionally, as
// reset() and pos() do. A key written twice keeps its first position and its last value,
// as in json_decode; Repeated tells which, since an answer whose order is tested should
// not repeat a key. Numbers are kept as written (json.Number), so 700.00 stays "700.00".
//
// Decode gives the whole value; Keys is the shortcut for an object's key order.
package phpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Kind is what a Value is.
type Kind int

// The kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Object
	List
)

// Value is a decoded JSON value.
type Value struct {
	kind  Kind
	text  string         // a scalar's text
	keys  []string       // an object's keys, in order
	index map[string]int // an object's key → position in keys and vals
	dups  []string       // an object's keys written more than once
	vals  []*Value       // an object's values (as keys) or a list's items
}

// Decode decodes b, which must hold exactly one JSON value (surrounding white space
// allowed).
func Decode(b []byte) (*Value, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decode(d)
	if err != nil {
		return nil, fmt.Errorf("phpjson: %w", err)
	}
	if tok, err := d.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("data after the value: %v", tok)
		}
		return nil, fmt.Errorf("phpjson: at offset %d: %w", d.InputOffset(), err)
	}
	return v, nil
}

func decode(d *json.Decoder) (*Value, error) {
	tok, err := d.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			v := &Value{kind: Object, index: map[string]int{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				x, err := decode(d)
				if err != nil {
					return nil, err
				}
				if i, dup := v.index[k]; dup {
					v.vals[i] = x
					if !slices.Contains(v.dups, k) {
						v.dups = append(v.dups, k)
					}
					continue
				}
				v.index[k] = len(v.keys)
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, x)
			}
			return v, end(d)
		}
		v := &Value{kind: List}
		for d.More() {
			x, err := decode(d)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, x)
		}
		return v, end(d)
	case string:
		return &Value{kind: String, text: t}, nil
	case json.Number:
		return &Value{kind: Number, text: t.String()}, nil
	case bool:
		if t {
			return &Value{kind: Bool, text: "true"}, nil
		}
		return &Value{kind: Bool, text: "false"}, nil
	case nil:
		return &Value{kind: Null, text: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// end reads the closing delimiter of an object or a list.
func end(d *json.Decoder) error {
	_, err := d.Token()
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Kind tells what v is.
func (v *Value) Kind() Kind { return v.kind }

// Keys is an object's keys in order (nil for anything else).
func (v *Value) Keys() []string {
	if v.kind != Object {
		return nil
	}
	return v.keys
}

// Repeated is the keys an object's JSON wrote more than once (Keys has each once), nil when
// none.
func (v *Value) Repeated() []string { return v.dups }

// Items is a list's values in order (nil for anything else).
func (v *Value) Items() []*Value {
	if v.kind != List {
		return nil
	}
	return v.vals
}

// Reset is PHP's reset(): the first value of an object or a list, or nil when v is empty or
// a scalar.
func (v *Value) Reset() *Value {
	if (v.kind != Object && v.kind != List) || len(v.vals) == 0 {
		return nil
	}
	return v.vals[0]
}

// At follows path through objects' members: At("a", "b") is PHP's $v['a']['b']. It is nil
// when a member is missing or a value on the way is not an object.
func (v *Value) At(path ...string) *Value {
	for _, k := range path {
		i, ok := v.index[k]
		if v.kind != Object || !ok {
			return nil
		}
		v = v.vals[i]
	}
	return v
}

// Text is a scalar as text: a string's value, a number as written, true, false or null.
// An object is "<object>" and a list "<list>".
func (v *Value) Text() string {
	switch v.kind {
	case Object:
		return "<object>"
	case List:
		return "<list>"
	}
	return v.text
}

// Keys decodes b and answers the keys, in order, of the object at path (members followed
// from the top, as At); it fails when b is not JSON, no object is there or the object repeats
// a key.
func Keys(b []byte, path ...string) ([]string, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	for i, k := range path {
		if v = v.At(k); v == nil {
			return nil, fmt.Errorf("phpjson: no member %s", strings.Join(path[:i+1], "."))
		}
	}
	if v.kind != Object {
		return nil, errors.New("phpjson: not an object at " + pathName(path))
	}
	if len(v.dups) > 0 {
		return nil, fmt.Errorf("phpjson: key %q written more than once at %s", v.dups[0], pathName(path))
	}
	return v.keys, nil
}

func pathName(path []string) string {
	if len(path) == 0 {
		return "the top"
	}
	return strings.Join(path, ".")
}
