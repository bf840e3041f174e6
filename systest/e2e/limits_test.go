package e2e

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vros/vros/systest/apitest"
)

// TestRateLimit: an account that sends more than its burst at once gets 429 in each
// interface's envelope; another account is not slowed down by it. The burst is spent on a
// cheap read (the bucket counts every request of the account, whatever it asks).
func TestRateLimit(t *testing.T) {
	busy, quiet := newAccount(t), newAccount(t)
	createProperty(t, busy, "RL1")
	createProperty(t, quiet, "RL1")
	body := busy.BBody("listcountry", nil)
	var limited, ok atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Send until the bucket runs dry: the burst plus what refills meanwhile.
			for i := 0; i < rateLimitBurst && limited.Load() < 50; i++ {
				code, status, err := sendB(body)
				switch {
				case err != nil:
					t.Error(err)
					return
				case code == http.StatusOK:
					ok.Add(1)
				case code == http.StatusTooManyRequests && status == 56:
					limited.Add(1)
				default:
					t.Errorf("HTTP %d status %d", code, status)
					return
				}
			}
		}()
	}
	wg.Wait()
	if limited.Load() == 0 || ok.Load() < rateLimitBurst/2 {
		t.Fatalf("%d answered, %d limited: want the burst answered and the rest limited", ok.Load(), limited.Load())
	}
	r := busy.a(t, "property-tax", obj{"internal_code": "RL1", "taxes": []obj{}})
	if e := r.aError(t); r.Code != http.StatusTooManyRequests || e.ErrorType != "rate_limited" {
		t.Fatalf("interface A while limited: HTTP %d %s", r.Code, r.Body)
	}
	quiet.a(t, "property-tax", obj{"internal_code": "RL1", "taxes": []obj{}}).status(t, http.StatusOK)
}

// sendB posts an interface B body from any goroutine and returns the HTTP code and status.
func sendB(body string) (int, int, error) {
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, body)
	if err != nil {
		return 0, 0, err
	}
	var a bAnswer
	if err := json.Unmarshal(r.Body, &a); err != nil {
		return r.Code, 0, err
	}
	return r.Code, a.Status, nil
}
