package phpjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzDecode: Decode accepts exactly what encoding/json calls valid JSON, is deterministic,
// and reads what json_decode would: the same values as encoding/json (a key written twice
// keeps its last value), each number as written in the input, each object's keys once each in
// the order they first appear, Repeated naming exactly the keys written more than once (all
// checked against a parser of this file's own). Its
// value written back in order decodes to itself. Keys agrees with Decode. Every error starts
// with "phpjson: ".
//
// Seeds: testdata/fuzz/FuzzDecode (the package's table tests and answers as PHP clients read
// them).
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"status":0,"message":"Success","data":{"b":1,"a":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if valid := json.Valid(b); (err == nil) != valid {
			t.Fatalf("Decode(%q): error %v, but json.Valid says %v", b, err, valid)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "phpjson: ") {
				t.Fatalf("Decode(%q): error %q without its prefix", b, err)
			}
			if _, kerr := Keys(b); kerr == nil {
				t.Fatalf("Keys(%q) succeeded where Decode fails", b)
			}
			return
		}
		v2, _ := Decode(b)
		if !reflect.DeepEqual(v, v2) {
			t.Fatalf("Decode(%q) is not deterministic", b)
		}
		// The same values as encoding/json.
		var std any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("encoding/json refuses %q: %v", b, err)
		}
		if got := plain(v); !reflect.DeepEqual(got, std) {
			t.Fatalf("Decode(%q) = %#v, encoding/json reads %#v", b, got, std)
		}
		sameAsRef(t, b, parseRef(b), v)
		// Written back in order, it decodes to itself.
		var w bytes.Buffer
		write(&w, v)
		back, err := Decode(w.Bytes())
		if err != nil || !reflect.DeepEqual(show(back), show(v)) || !reflect.DeepEqual(repeatedAll(back), []string(nil)) {
			t.Fatalf("Decode(%q) written back as %q: %v (%v)", b, w.Bytes(), back, err)
		}
		// Keys agrees with Decode at the top.
		keys, kerr := Keys(b)
		switch {
		case v.Kind() != Object:
			if kerr == nil {
				t.Fatalf("Keys(%q) = %q for a %v", b, keys, v.Kind())
			}
		case len(v.Repeated()) > 0:
			if kerr == nil || !strings.Contains(kerr.Error(), strconv.Quote(v.Repeated()[0])) {
				t.Fatalf("Keys(%q) = %q, %v; want the repeated key %q named", b, keys, kerr, v.Repeated()[0])
			}
		default:
			if kerr != nil || !slices.Equal(keys, v.Keys()) {
				t.Fatalf("Keys(%q) = %q, %v; want %q", b, keys, kerr, v.Keys())
			}
		}
	})
}

// ref is a JSON value read by a parser of its own (for valid JSON only): an object keeps
// every key as written, in order, repeats included.
type ref struct {
	kind Kind
	text string // a scalar as written (a string still quoted)
	keys []string
	vals []*ref
}

// parseRef reads valid JSON (json.Valid) by recursive descent.
func parseRef(b []byte) *ref {
	p := &refParser{b: b}
	return p.value()
}

type refParser struct {
	b []byte
	i int
}

func (p *refParser) space() {
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n", p.b[p.i]) >= 0 {
		p.i++
	}
}

func (p *refParser) value() *ref {
	p.space()
	switch c := p.b[p.i]; {
	case c == '{':
		r := &ref{kind: Object}
		p.i++
		for {
			p.space()
			if p.b[p.i] == '}' {
				p.i++
				return r
			}
			if p.b[p.i] == ',' {
				p.i++
				p.space()
			}
			k := p.str()
			var key string
			_ = json.Unmarshal([]byte(k), &key)
			p.space()
			p.i++ // ':'
			r.keys = append(r.keys, key)
			r.vals = append(r.vals, p.value())
		}
	case c == '[':
		r := &ref{kind: List}
		p.i++
		for {
			p.space()
			if p.b[p.i] == ']' {
				p.i++
				return r
			}
			if p.b[p.i] == ',' {
				p.i++
			}
			r.vals = append(r.vals, p.value())
		}
	case c == '"':
		return &ref{kind: String, text: p.str()}
	case c == 't':
		p.i += 4
		return &ref{kind: Bool, text: "true"}
	case c == 'f':
		p.i += 5
		return &ref{kind: Bool, text: "false"}
	case c == 'n':
		p.i += 4
		return &ref{kind: Null, text: "null"}
	}
	start := p.i
	for p.i < len(p.b) && strings.IndexByte("+-.0123456789eE", p.b[p.i]) >= 0 {
		p.i++
	}
	return &ref{kind: Number, text: string(p.b[start:p.i])}
}

// str reads a string token and answers it quoted, as written.
func (p *refParser) str() string {
	start := p.i
	p.i++
	for p.b[p.i] != '"' {
		if p.b[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	p.i++
	return string(p.b[start:p.i])
}

// sameAsRef: v is what json_decode makes of r: scalars as written (a string unquoted), an
// object's keys once each in the order they first appear with the value written last, its
// Repeated the keys written again in the order of their second writing, items in order.
func sameAsRef(t *testing.T, in []byte, r *ref, v *Value) {
	t.Helper()
	if v.Kind() != r.kind {
		t.Fatalf("in %q: a %v where %q is", in, v.Kind(), r.text)
	}
	switch r.kind {
	case String:
		var s string
		_ = json.Unmarshal([]byte(r.text), &s)
		if v.Text() != s {
			t.Fatalf("in %q: string %q, written %s", in, v.Text(), r.text)
		}
	case Object:
		var keys, rep []string
		last := map[string]*ref{}
		count := map[string]int{}
		for i, k := range r.keys {
			if count[k] == 0 {
				keys = append(keys, k)
			} else if count[k] == 1 {
				rep = append(rep, k)
			}
			count[k]++
			last[k] = r.vals[i]
		}
		if !slices.Equal(v.Keys(), keys) && len(keys)+len(v.Keys()) > 0 {
			t.Fatalf("in %q: keys %q, written (first appearances) %q", in, v.Keys(), keys)
		}
		if !slices.Equal(v.Repeated(), rep) {
			t.Fatalf("in %q: Repeated %q, written again %q", in, v.Repeated(), rep)
		}
		for i, k := range keys {
			x := v.At(k)
			if x == nil {
				t.Fatalf("in %q: At(%q) is nil", in, k)
			}
			if i == 0 && v.Reset() != x {
				t.Fatalf("in %q: Reset is not the first key's value", in)
			}
			sameAsRef(t, in, last[k], x)
		}
	case List:
		if len(v.Items()) != len(r.vals) {
			t.Fatalf("in %q: %d items, written %d", in, len(v.Items()), len(r.vals))
		}
		if len(r.vals) > 0 && v.Reset() != v.Items()[0] {
			t.Fatalf("in %q: Reset is not the first item", in)
		}
		for i, x := range v.Items() {
			sameAsRef(t, in, r.vals[i], x)
		}
	default:
		if v.Text() != r.text {
			t.Fatalf("in %q: %q, written %q", in, v.Text(), r.text)
		}
	}
}

// repeatedAll is every Repeated list in v, nil when none.
func repeatedAll(v *Value) []string {
	var out []string
	out = append(out, v.Repeated()...)
	for _, x := range v.vals {
		out = append(out, repeatedAll(x)...)
	}
	return out
}

// plain is v as encoding/json (with UseNumber) gives it.
func plain(v *Value) any {
	switch v.Kind() {
	case Null:
		return nil
	case Bool:
		return v.Text() == "true"
	case Number:
		return json.Number(v.Text())
	case String:
		return v.Text()
	case Object:
		m := map[string]any{}
		for _, k := range v.Keys() {
			m[k] = plain(v.At(k))
		}
		return m
	}
	l := []any{}
	for _, x := range v.Items() {
		l = append(l, plain(x))
	}
	return l
}

// write writes v as JSON with its keys in order.
func write(w *bytes.Buffer, v *Value) {
	switch v.Kind() {
	case String:
		b, _ := json.Marshal(v.Text())
		w.Write(b)
	case Object:
		w.WriteByte('{')
		for i, k := range v.Keys() {
			if i > 0 {
				w.WriteByte(',')
			}
			b, _ := json.Marshal(k)
			w.Write(b)
			w.WriteByte(':')
			write(w, v.At(k))
		}
		w.WriteByte('}')
	case List:
		w.WriteByte('[')
		for i, x := range v.Items() {
			if i > 0 {
				w.WriteByte(',')
			}
			write(w, x)
		}
		w.WriteByte(']')
	default:
		w.WriteString(v.Text())
	}
}
