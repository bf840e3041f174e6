package api

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// TestReadsIsolatedUnderConcurrency: many clients of two accounts read at once while both
// accounts' properties and settings change; every answer holds only the caller's
// properties and categories, in id order.
func TestReadsIsolatedUnderConcurrency(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	st2 := contract.DefaultSettings("acc2")
	st2.Version = 1
	st2.Categories = []contract.Category{{ID: 1, Name: "Acc2 only", ShowSearchEngine: true, Properties: []int64{9, 3, 7}}}
	s.load(contract.SettingsUpdated, st2)

	const clients, rounds = 16, 25
	var wg sync.WaitGroup
	errs := make(chan string, clients*rounds*4)
	wg.Add(1)
	go func() { // writers: new versions of every property and of acc1's settings
		defer wg.Done()
		for v := int64(2); v < 2+rounds; v++ {
			for _, p := range []contract.Property{property("acc1", 7, "Villa Aurora", "Lucca", 3, 2, 6, "100", true),
				property("acc1", 3, "Casa Blu", "Pisa", 1, 1, 2, "60", false), property("acc2", 9, "Other", "Rome", 5, 5, 10, "900", false)} {
				p.Version = v
				b := mustJSON(p)
				if err := s.view.Load(contract.PropertyUpdated, b); err != nil {
					errs <- err.Error()
				}
			}
		}
	}()
	for i := 0; i < clients; i++ {
		acc := []string{"acc1", "acc2"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				// search-rental and get-property-related also share the search records memo
				// and the pooled hit lists between accounts.
				for _, name := range []string{"property-gallery", "get-all-property-info", "property-category", "default-config",
					"search-rental", "get-property-related"} {
					req := `{"property_include":"1"}`
					if name == "get-property-related" {
						req = map[string]string{"acc1": `{"property_id":"7"}`, "acc2": `{"property_id":"9"}`}[acc]
					}
					code, out := s.call(acc, "POST", "/internal/read/"+name, req, nil)
					body := string(out)
					switch {
					case code != 200:
						errs <- fmt.Sprintf("%s %s: %d %s", acc, name, code, body)
					case acc == "acc1" && (strings.Contains(body, "Other") || strings.Contains(body, "Acc2 only")):
						errs <- fmt.Sprintf("acc1 %s sees acc2: %s", name, body)
					case acc == "acc2" && (strings.Contains(body, "Villa Aurora") || strings.Contains(body, "Casa Blu") ||
						strings.Contains(body, "Villas") || strings.Contains(body, "Sea view")):
						errs <- fmt.Sprintf("acc2 %s sees acc1: %s", name, body)
					case name == "property-gallery" && acc == "acc1" && !strings.HasPrefix(body, `{"property_gallery_3":`):
						errs <- fmt.Sprintf("acc1 gallery order: %s", body)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
