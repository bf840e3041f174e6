package bytelru

import (
	"fmt"
	"testing"
)

// TestBoundedBySize: the entries stay within the bound in bytes, the least recently used
// leaving first; an entry over an eighth of the bound is refused; replacing, removing and
// evicting all tell removed and keep the size right.
func TestBoundedBySize(t *testing.T) {
	var gone []string
	c := New[string, int](800, func(k string, _ int) { gone = append(gone, k) })
	for i := range 10 {
		if !c.Add(fmt.Sprint("k", i), i, 100) {
			t.Fatalf("k%d refused", i)
		}
		c.Get("k0") // used again and again: it stays
	}
	if c.Size() != 800 || c.Len() != 8 {
		t.Fatalf("%d entries of %d bytes, want 8 of 800", c.Len(), c.Size())
	}
	if _, ok := c.Peek("k0"); !ok {
		t.Error("the entry used again left")
	}
	if fmt.Sprint(gone) != "[k1 k2]" {
		t.Errorf("evicted %v, want the two least recently used, k1 and k2", gone)
	}
	if c.Add("big", 0, 101) {
		t.Error("an entry over an eighth of the bound kept")
	}
	gone = nil
	c.Add("k3", 33, 50) // replaces k3
	c.Remove("k4")
	c.RemoveIf(func(k string, v int) bool { return v%2 == 1 && k != "k3" })
	if fmt.Sprint(gone) != "[k3 k4 k9 k7 k5]" || c.Size() != 50+100*3 {
		t.Errorf("removed %v, size %d", gone, c.Size())
	}
	var order []string
	for k := range c.All() {
		order = append(order, k)
	}
	if fmt.Sprint(order) != "[k3 k0 k8 k6]" {
		t.Errorf("entries %v, most recently used first", order)
	}
}
