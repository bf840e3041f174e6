package route

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/testkit/stripemock"
)

func holdReq(amount, currency string) cardpay.AuthorizeRequest {
	return cardpay.AuthorizeRequest{
		Amount: decimal.RequireFromString(amount), Currency: currency, Description: "deposit of booking 7",
		Card:           card.Card{Number: "4242424242424242", NameOnCard: "ANN SMITH", ExpMonth: 12, ExpYear: 2030},
		IdempotencyKey: "deposit-acc1-7-1-hold",
	}
}

// TestStripeHoldsAgainstStripeMock sends the hold's requests (a PaymentIntent with
// capture_method=manual, its capture with amount_to_capture, its cancel) to stripe-mock, which
// checks them against Stripe's OpenAPI specification, and maps its answers.
func TestStripeHoldsAgainstStripeMock(t *testing.T) {
	ctx := context.Background()
	t.Run("requires_capture is a hold", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "requires_capture"), nil)
		a, err := g.Authorize(ctx, holdReq("300.00", "eur"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a.ID, "pi_") || !a.Amount.Equal(decimal.RequireFromString("300")) || a.Currency != "EUR" || a.At.IsZero() {
			t.Fatalf("authorization %+v", a)
		}
	})
	t.Run("succeeded is not a hold", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "succeeded"), nil)
		if _, err := g.Authorize(ctx, holdReq("300", "EUR")); err == nil {
			t.Fatal("a charged intent taken for a hold")
		}
	})
	t.Run("requires_payment_method is a refusal", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "requires_payment_method"), nil)
		if _, ok := cardpay.Declined(func() error { _, err := g.Authorize(ctx, holdReq("300", "EUR")); return err }()); !ok {
			t.Fatal("want a refusal")
		}
	})
	t.Run("capture in minor units", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "succeeded"), nil)
		c, err := g.Capture(ctx, cardpay.CaptureRequest{ID: "pi_123", Amount: decimal.RequireFromString("1200"), Currency: "JPY",
			IdempotencyKey: "deposit-acc1-7-1-capture"})
		if err != nil || c.ID != "pi_123" || !c.Amount.Equal(decimal.RequireFromString("1200")) || c.Currency != "JPY" {
			t.Fatalf("capture: %+v, %v", c, err)
		}
		if _, err := g.Capture(ctx, cardpay.CaptureRequest{ID: "pi_123", Amount: decimal.RequireFromString("1.5"), Currency: "JPY",
			IdempotencyKey: "k"}); !errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Fatalf("a fraction of a yen: %v", err)
		}
	})
	t.Run("release cancels", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "canceled"), nil)
		if err := g.Release(ctx, cardpay.ReleaseRequest{ID: "pi_123", IdempotencyKey: "deposit-acc1-7-1-release"}); err != nil {
			t.Fatal(err)
		}
		if err := g.Release(ctx, cardpay.ReleaseRequest{ID: "", IdempotencyKey: "k"}); !errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Fatalf("no id: %v", err)
		}
	})
	t.Run("Stripe unreachable is not the card's fault", func(t *testing.T) {
		g := NewStripe("sk_test_123", "http://127.0.0.1:1", nil)
		_, err := g.Authorize(ctx, holdReq("10", "USD"))
		if _, declined := cardpay.Declined(err); err == nil || declined || errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Fatalf("err = %v, want an internal error", err)
		}
	})
}

// TestRouterHolds: a sandbox account's holds reach only the test gateway; a live one's the
// property's Stripe account, refused where the property has none.
func TestRouterHolds(t *testing.T) {
	test := cardpay.NewTest(func() time.Time { return time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC) })
	r := &Router{Test: test, Methods: methodsOf{1: owner1}, StripeURL: stripemock.Start(t, "requires_capture")}
	ctx := context.Background()
	auth := func(sandbox bool, pid int64) (cardpay.Authorization, error) {
		req := holdReq("50", "USD")
		req.AccountID, req.Sandbox, req.PropertyID = "acc1", sandbox, pid
		return r.Authorize(ctx, req)
	}
	a, err := auth(true, 1)
	if err != nil || !strings.HasPrefix(a.ID, "pi_test_hold_") {
		t.Fatalf("sandbox: %+v, %v", a, err)
	}
	if err := r.Release(ctx, cardpay.ReleaseRequest{ID: a.ID, IdempotencyKey: "r", Sandbox: true, PropertyID: 1}); err != nil {
		t.Fatalf("sandbox release: %v", err)
	}
	if a, err := auth(false, 1); err != nil || strings.HasPrefix(a.ID, "pi_test_") || !strings.HasPrefix(a.ID, "pi_") {
		t.Fatalf("live with Stripe: %+v, %v", a, err)
	}
	if _, err := auth(false, 2); err == nil {
		t.Fatal("live without a method: held")
	} else if reason, ok := cardpay.Declined(err); !ok || reason != ReasonNoMethod {
		t.Fatalf("live without a method: %v", err)
	}
	if n := len(test.Holds()); n != 1 {
		t.Fatalf("the test gateway holds %d, want 1", n)
	}
}
