package e2e

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRateLimit: an account that sends more than its burst at once gets 429 in each
// interface's envelope; another account is not slowed down by it.
func TestRateLimit(t *testing.T) {
	busy, quiet := newAccount(t), newAccount(t)
	createProperty(t, busy, "RL1")
	createProperty(t, quiet, "RL1")
	var limited, ok atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Send until the bucket runs dry: the burst plus what refills meanwhile.
			for i := 0; i < rateLimitBurst && limited.Load() < 50; i++ {
				r := busy.a(t, "property-tax", obj{"internal_code": "RL1", "taxes": []obj{}})
				switch r.Code {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					if e := r.aError(t); e.ErrorType != "rate_limited" {
						t.Errorf("429 envelope: %s", r.Body)
					}
					limited.Add(1)
				default:
					t.Errorf("HTTP %d: %s", r.Code, r.Body)
				}
			}
		}()
	}
	wg.Wait()
	if limited.Load() == 0 || ok.Load() < rateLimitBurst/2 {
		t.Fatalf("%d answered, %d limited: want the burst answered and the rest limited", ok.Load(), limited.Load())
	}
	r := do(t, http.MethodPost, "/vros/external-booking", nil, `{"key":"`+busy.Key+`","pass":"`+busy.Pass+`","action":"listcountry"}`)
	if a := r.b(t); r.Code != http.StatusTooManyRequests || a.Status != 56 {
		t.Fatalf("interface B while limited: HTTP %d %s", r.Code, r.Body)
	}
	quiet.a(t, "property-tax", obj{"internal_code": "RL1", "taxes": []obj{}}).status(t, http.StatusOK)
}
