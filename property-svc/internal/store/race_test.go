package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/eventually"
	"github.com/vros/vros/property-svc/internal/property"
)

// TestConcurrentSectionWrites: rates, taxes and policy of one property written at once,
// round after round: every write lands (each round's three values are all there after
// it), and the versions count every write once: 1 + 3 per round.
func TestConcurrentSectionWrites(t *testing.T) {
	const rounds = 8
	h := newHarness(t)
	h.relay(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	for r := 1; r <= rounds; r++ {
		tag := fmt.Sprintf("%d", r)
		writes := []func() error{
			func() error { return h.repo.SetRates(ctx, acct, pid, rates(tag)) },
			func() error { return h.repo.SetTaxes(ctx, acct, pid, taxes("VAT "+tag)) },
			func() error {
				return h.repo.SetPolicy(ctx, acct, pid, property.Policy{PaymentType: property.PayFull,
					FullPayment: &property.Deadline{Due: property.DueXDayPriorArrival, XDay: r}})
			},
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, w := range writes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if err := w(); err != nil {
					t.Errorf("round %d: %v", r, err)
				}
			}()
		}
		close(start)
		wg.Wait()

		p := h.state(t, acct, pid)
		if p.Rates == nil || p.Rates.Rate.Daily != tag {
			t.Errorf("round %d: rates lost: %+v", r, p.Rates)
		}
		if len(p.Taxes) == 0 || p.Taxes[0].Name != "VAT "+tag {
			t.Errorf("round %d: taxes lost: %+v", r, p.Taxes)
		}
		if p.Policy == nil || p.Policy.PaymentFull == nil || p.Policy.PaymentFull.XDay != r {
			t.Errorf("round %d: policy lost: %+v", r, p.Policy)
		}
		if want := int64(1 + 3*r); p.Version != want {
			t.Fatalf("round %d: version %d, want %d (one per write)", r, p.Version, want)
		}
	}
	// The relay may publish an older snapshot after a newer one (consumers keep the newer,
	// mongostore.KeepNewer); what matters is that the last version is published.
	final := int64(1 + 3*rounds)
	key := events.Key(acct, fmt.Sprint(pid))
	eventually.Holds(t, "the relay publishes the last version", 10*time.Second, func() bool {
		for _, p := range h.pub.published(t, key) {
			if p.Version == final {
				return true
			}
		}
		return false
	})
	for _, p := range h.pub.published(t, key) {
		if p.Version < 1 || p.Version > final {
			t.Errorf("published version %d, written 1 to %d", p.Version, final)
		}
	}
}
