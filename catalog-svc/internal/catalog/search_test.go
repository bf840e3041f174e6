package catalog

import (
	"fmt"
	"testing"
)

// TestNightsFree: Free agrees with Held for every range over a month around a booking and
// blocks (a deleted block frees its nights; the day a stay ends is not one of its nights).
func TestNightsFree(t *testing.T) {
	s := NewMemory()
	load := func(typ, data string) {
		t.Helper()
		if err := s.Load(typ, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	load("vros.property.created", `{"account_id":"a","property_id":7,"version":1}`)
	load("vros.property.created", `{"account_id":"a","property_id":8,"version":1}`)
	load("vros.booking.reserved", `{"account_id":"a","booking_id":1,"property_id":7,"version":1,"nights":["2030-01-10","2030-01-11"]}`)
	load("vros.block.created", `{"account_id":"a","block_id":2,"property_id":7,"version":1,"start_date":"2030-01-20","end_date":"2030-01-22"}`)
	load("vros.block.created", `{"account_id":"a","block_id":3,"property_id":7,"version":1,"start_date":"2030-01-05","end_date":"2030-01-05"}`)
	load("vros.block.deleted", `{"account_id":"a","block_id":3,"property_id":7,"version":2,"deleted":true,"start_date":"2030-01-05","end_date":"2030-01-05"}`)
	load("vros.booking.reserved", `{"account_id":"a","booking_id":4,"property_id":8,"version":1,"nights":["2030-01-15"]}`)

	held := s.Held("a", 7)
	day := func(d int) string { return fmt.Sprintf("2030-01-%02d", d) }
	checked := 0
	s.Scan("a", func(p *Property, n Nights) {
		if p.Snap.PropertyID != 7 {
			return
		}
		for from := 1; from <= 30; from++ {
			for to := from + 1; to <= 31; to++ {
				want := true
				for d := from; d < to; d++ {
					for h := range held {
						if h.String() == day(d) {
							want = false
						}
					}
				}
				if got := n.Free(day(from), day(to)); got != want {
					t.Errorf("Free(%s, %s) = %v, Held says %v", day(from), day(to), got, want)
				}
				checked++
			}
		}
	})
	if checked != 465 {
		t.Fatalf("checked %d ranges", checked)
	}
}

func TestScanSkipsDeletedAndOtherAccounts(t *testing.T) {
	s := NewMemory()
	for _, d := range []string{
		`{"account_id":"a","property_id":1,"version":1}`,
		`{"account_id":"a","property_id":2,"version":1}`,
		`{"account_id":"a","property_id":2,"version":2,"deleted":true}`,
		`{"account_id":"b","property_id":3,"version":1}`,
	} {
		if err := s.Load("vros.property.updated", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int64
	s.Scan("a", func(p *Property, _ Nights) { seen = append(seen, p.Snap.PropertyID) })
	if len(seen) != 1 || seen[0] != 1 {
		t.Fatalf("scan of a: %v", seen)
	}
	s.Scan("nobody", func(*Property, Nights) { t.Fatal("scan of an unknown account") })
}

// TestMemoFollowsTheView: a value is built per published property value; values of
// replaced properties are swept once the memo has grown past twice what it kept.
func TestMemoFollowsTheView(t *testing.T) {
	s := NewMemory()
	var m Memo[int64]
	put := func(v int64) *Property {
		t.Helper()
		if err := s.Load("vros.property.updated", []byte(fmt.Sprintf(`{"account_id":"a","property_id":1,"version":%d}`, v))); err != nil {
			t.Fatal(err)
		}
		p, _ := s.Property("a", 1)
		return p
	}
	first := put(1)
	m.Add("a", map[*Property]int64{first: 1}, s.Live)
	if v, ok := m.Snapshot("a")[first]; !ok || v != 1 || len(m.Snapshot("b")) != 0 {
		t.Fatalf("snapshot: %v", m.Snapshot("a"))
	}
	var last *Property
	for v := int64(2); v <= 200; v++ {
		last = put(v)
		m.Add("a", map[*Property]int64{last: v}, s.Live)
	}
	snap := m.Snapshot("a")
	if _, ok := snap[first]; ok || snap[last] != 200 || len(snap) > 2*1+64+1 {
		t.Fatalf("after 200 versions the memo holds %d values (first kept: %v)", len(snap), snap[first] != 0)
	}
	if !s.Live(last) || s.Live(first) {
		t.Fatal("Live")
	}
}

// TestMemoForgetsAnErasedAccount: Forget drops the account's values, and values built from
// the account's properties before its erasure are not kept by a later Add, which keeps no
// entry for the account at all.
func TestMemoForgetsAnErasedAccount(t *testing.T) {
	s := NewMemory()
	var m Memo[int]
	for _, d := range []string{`{"account_id":"a","property_id":1,"version":1}`, `{"account_id":"b","property_id":1,"version":1}`} {
		if err := s.Load("vros.property.updated", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	pa, _ := s.Property("a", 1)
	pb, _ := s.Property("b", 1)
	m.Add("a", map[*Property]int{pa: 1}, s.Live)
	m.Add("b", map[*Property]int{pb: 2}, s.Live)
	if err := s.Load("vros.account.erased", []byte(`{"account_id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	m.Forget("a")
	if len(m.Snapshot("a")) != 0 || m.Snapshot("b")[pb] != 2 {
		t.Fatalf("after Forget: %v %v", m.Snapshot("a"), m.Snapshot("b"))
	}
	m.Add("a", map[*Property]int{pa: 1}, s.Live) // a search that read the account before its erasure
	if _, ok := m.accounts.Load("a"); ok {
		t.Fatal("the memo keeps an entry for the erased account")
	}
}
