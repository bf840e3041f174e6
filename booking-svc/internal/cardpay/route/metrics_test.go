package route

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/testkit/stripemock"
)

// TestRouterCountsPayments: every charge is counted in vros_payments_total by the gateway it
// went to (test, stripe; none for a live property without a method) and its outcome
// (success, declined, error), with those two labels only.
func TestRouterCountsPayments(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	test := cardpay.NewTest(func() time.Time { return time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC) })
	r := &Router{Test: test, Methods: methodsOf{1: owner1}, StripeURL: stripemock.Start(t, "succeeded"),
		Payments: cardpay.NewPayments(metrics.Meter())}
	ctx := context.Background()
	n := 0
	charge := func(sandbox bool, pid int64, number string) {
		n++
		req := stripeReq("50", "USD")
		req.AccountID, req.Sandbox, req.PropertyID = "acc1", sandbox, pid
		req.IdempotencyKey = fmt.Sprintf("acc1/booking/7/payment/%d", n)
		if number != "" {
			req.Card.Number = number
		}
		_, _ = r.Charge(ctx, req)
	}
	charge(true, 1, "")                 // test, success
	charge(true, 1, "4000000000000002") // test, declined
	charge(false, 1, "")                // stripe, success
	charge(false, 2, "")                // none, declined: no method
	charge(false, -1, "")               // stripe, error: property-svc unreachable
	const name = "vros_payments_total"
	for _, c := range []struct {
		gateway, outcome string
	}{{"test", "success"}, {"test", "declined"}, {"stripe", "success"}, {"none", "declined"}, {"stripe", "error"}} {
		if v := metrics.Value(t, name, "gateway", c.gateway, "outcome", c.outcome); v != 1 {
			t.Errorf("%s{gateway=%q,outcome=%q} = %v, want 1", name, c.gateway, c.outcome, v)
		}
	}
	if v := metrics.Value(t, name); v != 5 {
		t.Errorf("%s = %v in all, want 5", name, v)
	}
	for _, s := range metrics.Scrape(t)[name].Series {
		if len(s.Labels) != 2 {
			t.Errorf("%s labels %v, want gateway and outcome", name, s.Labels)
		}
	}

	// Without a counter nothing is counted and charges work alike.
	r.Payments = nil
	charge(true, 1, "")
}
