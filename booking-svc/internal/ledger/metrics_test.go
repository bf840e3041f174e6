package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestClaimMetrics: the nights each successful claim holds are counted in
// vros_ledger_nights_claimed_total, each claim refused for a held night once in
// vros_ledger_conflicts_total; neither carries a label (no account, property or night). Ten
// owners claim the same three nights at once: 3 nights claimed, 9 conflicts; then a block's
// two free nights are claimed.
func TestClaimMetrics(t *testing.T) {
	l := newLedger(t)
	metrics := telemetrytest.NewMetrics(t)
	l.Instrument(metrics.Meter())
	ctx := context.Background()
	stay := ledger.Stay{Account: "metrics-acc", PropertyID: 9, Dates: dates("2027-09-01", 3)}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Claim(ctx, stay, fmt.Sprintf("booking:%d", i)); err != nil && !ledger.IsTaken(err) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := l.Claim(ctx, ledger.Stay{Account: "metrics-acc", PropertyID: 9, Dates: dates("2027-09-10", 2)}, "block:1"); err != nil {
		t.Fatal(err)
	}
	if v := metrics.Value(t, "vros_ledger_nights_claimed_total"); v != 5 {
		t.Errorf("vros_ledger_nights_claimed_total = %v, want 5", v)
	}
	if v := metrics.Value(t, "vros_ledger_conflicts_total"); v != 9 {
		t.Errorf("vros_ledger_conflicts_total = %v, want 9", v)
	}
	for _, name := range []string{"vros_ledger_nights_claimed_total", "vros_ledger_conflicts_total"} {
		if got := metrics.LabelNames(t, name); len(got) != 0 {
			t.Errorf("%s has labels %v, want none", name, got)
		}
	}

	// Without Instrument (or with a nil meter) the ledger counts nothing and works alike.
	plain := newLedger(t)
	plain.Instrument(nil)
	if err := plain.Claim(ctx, ledger.Stay{Account: "metrics-acc", PropertyID: 10, Dates: dates("2027-09-01", 1)}, "booking:1"); err != nil {
		t.Fatal(err)
	}
}
