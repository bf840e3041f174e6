package route

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/testkit/stripemock"
)

// methodsOf is a property's payment methods as property-svc would answer.
type methodsOf map[int64]StripeMethod // property → its Stripe method

func (m methodsOf) Stripe(_ context.Context, _ string, pid int64) (StripeMethod, bool, error) {
	if pid < 0 {
		return StripeMethod{}, false, errors.New("property-svc unreachable")
	}
	k, ok := m[pid]
	return k, ok, nil
}

// owner1 is property 1's Stripe method in the tests.
var owner1 = StripeMethod{SecretKey: "sk_test_owner1", PublishableKey: "pk_test_owner1"}

// TestRouterChoosesPerAccountAndProperty: sandbox accounts reach only the test gateway; a
// live account's charge goes to its property's Stripe account, and is refused when the
// property has none; property-svc's failure is not the card's fault.
func TestRouterChoosesPerAccountAndProperty(t *testing.T) {
	test := cardpay.NewTest(func() time.Time { return time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC) })
	r := &Router{Test: test, Methods: methodsOf{1: owner1}, StripeURL: stripemock.Start(t, "succeeded")}
	ctx := context.Background()
	charge := func(sandbox bool, pid int64) (cardpay.Charge, error) {
		req := stripeReq("50", "USD")
		req.AccountID, req.Sandbox, req.PropertyID = "acc1", sandbox, pid
		return r.Charge(ctx, req)
	}

	if ch, err := charge(true, 1); err != nil || !strings.HasPrefix(ch.ID, "ch_test_") {
		t.Fatalf("sandbox: %+v, %v; want a test-gateway charge even where Stripe is set up", ch, err)
	}
	if ch, err := charge(false, 1); err != nil || !strings.HasPrefix(ch.ID, "pi_") {
		t.Fatalf("live with Stripe: %+v, %v; want a Stripe payment", ch, err)
	}
	if _, err := charge(false, 2); err == nil {
		t.Fatal("live without a method: charged")
	} else if reason, ok := cardpay.Declined(err); !ok || reason != ReasonNoMethod {
		t.Fatalf("live without a method: %v, want the refusal %q", err, ReasonNoMethod)
	}
	if _, err := charge(false, -1); err == nil || errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("property-svc down: %v, want an internal error", err)
	} else if _, declined := cardpay.Declined(err); declined {
		t.Fatalf("property-svc down: %v is a refusal", err)
	}
	if n := len(test.Charges()); n != 1 {
		t.Fatalf("the test gateway charged %d times, want once (the sandbox charge only)", n)
	}
}
