package catalog

import (
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// TestGenerationChangesWithEveryChange: each kind of change applied to an account — by an
// event, a tombstone or an erasure — gives it a new generation, and only its own; a
// redelivered or older event changes none.
func TestGenerationChangesWithEveryChange(t *testing.T) {
	s := NewMemory()
	load := func(typ, data string) {
		t.Helper()
		if err := s.Load(typ, []byte(data)); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	load(contract.PropertyUpdated, `{"account_id":"b","property_id":1,"version":1}`)
	other := s.Generation("b")
	if s.Generation("a") != 0 || other == 0 {
		t.Fatalf("generations before: a %d, b %d", s.Generation("a"), other)
	}
	steps := []struct {
		what   string
		apply  func()
		change bool
	}{
		{"property created", func() { load(contract.PropertyCreated, `{"account_id":"a","property_id":7,"version":1}`) }, true},
		{"property updated", func() {
			load(contract.PropertyUpdated, `{"account_id":"a","property_id":7,"version":2,"content":{"name":"New"}}`)
		}, true},
		{"rates, plans and restrictions", func() {
			load(contract.PropertyUpdated, `{"account_id":"a","property_id":7,"version":3,"rates":{"rate":{"daily_price":"100"},"minimum_stay":1,"setting":{}}}`)
		}, true},
		{"property redelivered", func() { load(contract.PropertyUpdated, `{"account_id":"a","property_id":7,"version":3}`) }, false},
		{"property older", func() { load(contract.PropertyUpdated, `{"account_id":"a","property_id":7,"version":1}`) }, false},
		{"booking reserved", func() {
			load(contract.BookingReserved, `{"account_id":"a","booking_id":1,"property_id":7,"version":1,"nights":["2030-01-01"]}`)
		}, true},
		{"booking moved", func() {
			load(contract.BookingReserved, `{"account_id":"a","booking_id":1,"property_id":8,"version":2,"nights":["2030-01-02"]}`)
		}, true},
		{"booking cancelled", func() {
			load(contract.BookingReserved, `{"account_id":"a","booking_id":1,"property_id":8,"version":3,"status":"cancelled"}`)
		}, true},
		{"booking redelivered", func() {
			load(contract.BookingReserved, `{"account_id":"a","booking_id":1,"property_id":8,"version":3}`)
		}, false},
		{"block created", func() {
			load(contract.BlockCreated, `{"account_id":"a","block_id":4,"property_id":7,"version":1,"start_date":"2030-02-01","end_date":"2030-02-03"}`)
		}, true},
		{"block deleted", func() {
			load(contract.BlockCreated, `{"account_id":"a","block_id":4,"property_id":7,"version":2,"deleted":true}`)
		}, true},
		{"settings", func() { load(contract.SettingsUpdated, `{"account_id":"a","version":1,"currency":"EUR"}`) }, true},
		{"brands", func() {
			load(contract.SettingsUpdated, `{"account_id":"a","version":2,"brands":[{"id":1,"name":"B","properties":[7]}]}`)
		}, true},
		{"settings older", func() { load(contract.SettingsUpdated, `{"account_id":"a","version":1}`) }, false},
		{"settings tombstone", func() { s.drop(aggregateKey{account: "a", kind: KindSettings}) }, true},
		{"booking tombstone", func() { s.drop(aggregateKey{account: "a", kind: KindBooking, id: 1}) }, true},
		{"block tombstone", func() { s.drop(aggregateKey{account: "a", kind: KindBlock, id: 4}) }, true},
		{"tombstone of nothing held", func() { s.drop(aggregateKey{account: "a", kind: KindBlock, id: 99}) }, false},
		{"property deleted", func() {
			load(contract.PropertyDeleted, `{"account_id":"a","property_id":7,"version":4,"deleted":true}`)
		}, true},
		{"property tombstone", func() { s.drop(aggregateKey{account: "a", kind: KindProperty, id: 7}) }, true},
	}
	seen := map[uint64]bool{other: true}
	for _, st := range steps {
		before := s.Generation("a")
		st.apply()
		after := s.Generation("a")
		switch {
		case st.change && (after == before || seen[after]):
			t.Errorf("%s: generation %d → %d, want a new one", st.what, before, after)
		case !st.change && after != before:
			t.Errorf("%s: generation %d → %d, want it unchanged", st.what, before, after)
		}
		seen[after] = true
		if g := s.Generation("b"); g != other {
			t.Errorf("%s: the other account's generation %d → %d", st.what, other, g)
		}
	}
	load(contract.AccountErased, `{"account_id":"a"}`)
	if g := s.Generation("a"); g != 0 {
		t.Errorf("erased account's generation %d, want 0", g)
	}
	load(contract.PropertyUpdated, `{"account_id":"a","property_id":7,"version":9}`) // a late event
	if g := s.Generation("a"); g != 0 {
		t.Errorf("erased account's generation after a late event %d, want 0", g)
	}
}
