package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/vros/vros/systest/apitest"
)

// TestConcurrentSectionWritesAllLand: interface A writes of different sections of one
// property at the same moment all land, and each bumps the version once: none is lost to
// another, whatever the store (the embedded FerretDB applies an update as a read and a
// whole-document write).
func TestConcurrentSectionWritesAllLand(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "LU1")
	before := field(stored(t, acc.AccountID, pid), "version").(int64)
	const rounds = 4
	writes := []struct {
		resource string
		body     obj
	}{
		{"property-tax", obj{"internal_code": "LU1", "taxes": []obj{{"name": "City tax", "amount": 10, "type": 1}}}},
		{"property-service", obj{"internal_code": "LU1", "services": []obj{{"name": "Cleaning", "amount": 50, "type": 1, "def": 1}}}},
		{"property-policy", obj{"internal_code": "LU1", "short_stay": obj{"payment_type": "Full", "payment_full": obj{"is_due_at": "Arrival"}}}},
		{"property-rate", simpleRates("LU1")},
		{"property-method", obj{"internal_code": "LU1", "paypal": obj{"email": "pay@example.com"}}},
	}
	var wg sync.WaitGroup
	errs := make(chan string, rounds*len(writes))
	for r := 0; r < rounds; r++ {
		for _, w := range writes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := sendA(acc, w.resource, w.body)
				if resp != http.StatusOK {
					errs <- fmt.Sprintf("%s: HTTP %d", w.resource, resp)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	doc := stored(t, acc.AccountID, pid)
	if got, want := field(doc, "version").(int64), before+int64(rounds*len(writes)); got != want {
		t.Errorf("version %d after %d writes from %d: updates were lost", got, rounds*len(writes), before)
	}
	for _, section := range []string{"taxes", "services", "policy", "rates", "methods"} {
		if v := field(doc, section); v == nil || fmt.Sprint(v) == "[]" {
			t.Errorf("section %s lost: %v", section, v)
		}
	}
}

// sendA sends an interface A request from any goroutine and returns its HTTP status.
func sendA(acc account, resource string, body obj) int {
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), apitest.JSON(body))
	if err != nil {
		return 0
	}
	return r.Code
}
