package api

import (
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// TestErasedAccountForgotten: once an account's erasure is applied, every read of the
// account answers as for an account that never had anything, its search records and kept
// answers are gone (also those of searches running while it was erased), its later events
// are ignored, and the other account's reads go on unchanged.
func TestErasedAccountForgotten(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	searched := func(acc string) string {
		code, out := s.call(acc, "POST", "/internal/read/search-rental", `{}`, nil)
		if code != 200 {
			t.Fatalf("%s search: %d %s", acc, code, out)
		}
		return string(out)
	}
	if !strings.Contains(searched("acc1"), "Villa Aurora") || len(s.api.records.Snapshot("acc1")) == 0 {
		t.Fatal("acc1 not searchable before its erasure")
	}
	before := searched("acc2")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 { // searches of both accounts while acc1 is erased
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, acc := range []string{"acc1", "acc2"} {
					if code, out := s.call(acc, "POST", "/internal/read/search-rental", `{}`, nil); code != 200 {
						t.Errorf("%s search during the erasure: %d %s", acc, code, out)
						return
					}
				}
			}
		}()
	}
	s.load(contract.AccountErased, contract.AccountErasure{AccountID: "acc1"})
	close(stop)
	wg.Wait()

	if n := len(s.api.records.Snapshot("acc1")); n != 0 {
		t.Fatalf("%d search records of the erased account are kept", n)
	}
	s.load(contract.PropertyUpdated, property("acc1", 7, "Villa Aurora", "Lucca", 3, 2, 6, "100", true)) // a late event
	for _, name := range []string{"search-rental", "property-gallery", "get-all-property-info", "property-category", "banner-gallery"} {
		code, out := s.call("acc1", "POST", "/internal/read/"+name, `{}`, nil)
		if code != 200 || strings.Contains(string(out), "Villa Aurora") || strings.Contains(string(out), "Casa Blu") {
			t.Errorf("%s after the erasure: %d %s", name, code, out)
		}
	}
	if code, out := s.call("acc1", "POST", "/internal/read/property-detail", `{"property_id":"7"}`, nil); code == 200 {
		t.Errorf("property-detail of an erased property: %d %s", code, out)
	}
	if n := len(s.api.records.Snapshot("acc1")); n != 0 {
		t.Fatalf("searches after the erasure kept %d records", n)
	}
	if n := keptBy(s.api, "acc1"); n != 0 {
		t.Fatalf("%d answers of the erased account are kept", n)
	}
	if after := searched("acc2"); after != before {
		t.Fatalf("acc2's search changed:\n%s\n%s", before, after)
	}
}
