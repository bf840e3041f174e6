package telemetry

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestAttrSets: a key's set is built once, and past max keys sets are built but not kept.
func TestAttrSets(t *testing.T) {
	a := NewAttrSets[string](2)
	built := 0
	attrs := func(v string) func() []attribute.KeyValue {
		return func() []attribute.KeyValue { built++; return []attribute.KeyValue{attribute.String("k", v)} }
	}
	for range 3 {
		a.Get("x", attrs("x"))
	}
	if built != 1 {
		t.Fatalf("the set of one key built %d times, want once", built)
	}
	a.Get("y", attrs("y"))
	a.Get("z", attrs("z"))
	a.Get("z", attrs("z"))
	if built != 4 || len(a.sets) != 2 {
		t.Fatalf("past the bound: built %d (want 4), kept %d (want 2)", built, len(a.sets))
	}
	if n := testing.AllocsPerRun(100, func() { a.Get("x", attrs("x")) }); n > 1 {
		t.Errorf("a kept set costs %v allocations", n)
	}
}
