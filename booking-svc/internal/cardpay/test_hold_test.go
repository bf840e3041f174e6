package cardpay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/cardpay"
)

func authReq(number, amount, key string) cardpay.AuthorizeRequest {
	return cardpay.AuthorizeRequest{Amount: decimal.RequireFromString(amount), Currency: "EUR", Card: visa(number), IdempotencyKey: key}
}

// TestTestHolds: the test gateway holds, captures part (the rest released) and releases,
// refuses the test cards Charge refuses, and answers a repeated key with its first outcome.
func TestTestHolds(t *testing.T) {
	ctx := context.Background()
	g := cardpay.NewTest(clock)
	a, err := g.Authorize(ctx, authReq(cardpay.CardVisa, "300.00", "h1"))
	if err != nil || a.ID == "" || !a.Amount.Equal(decimal.RequireFromString("300")) || a.Currency != "EUR" || !a.At.Equal(now) {
		t.Fatalf("authorize: %+v, %v", a, err)
	}
	if again, err := g.Authorize(ctx, authReq(cardpay.CardVisa, "300.00", "h1")); err != nil || again.ID != a.ID {
		t.Fatalf("same key: %+v, %v; want the first hold %s", again, err, a.ID)
	}
	if _, err := g.Authorize(ctx, authReq(cardpay.CardVisa, "301.00", "h1")); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("same key, another amount: %v", err)
	}
	if n := len(g.Holds()); n != 1 {
		t.Fatalf("%d holds, want 1", n)
	}
	for _, c := range []struct{ number, reason string }{
		{cardpay.CardDeclined, cardpay.ReasonDeclined}, {cardpay.CardInsufficientFunds, cardpay.ReasonInsufficientFunds},
		{cardpay.CardExpired, cardpay.ReasonExpired},
	} {
		_, err := g.Authorize(ctx, authReq(c.number, "10", "d-"+c.number))
		if r, ok := cardpay.Declined(err); !ok || r != c.reason {
			t.Errorf("card %s: %v, want %q", c.number, err, c.reason)
		}
	}
	if _, err := g.Authorize(ctx, authReq(cardpay.Card3DSRequired, "10", "3ds")); !errors.Is(err, cardpay.ErrRequires3DS) {
		t.Errorf("3-D Secure card: %v", err)
	}
	if _, err := g.Authorize(ctx, authReq(cardpay.CardVisa, "10.001", "digits")); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Errorf("three decimals in EUR: %v", err)
	}

	capture := func(id, amount, key string) (cardpay.Captured, error) {
		return g.Capture(ctx, cardpay.CaptureRequest{ID: id, Amount: decimal.RequireFromString(amount), Currency: "EUR", IdempotencyKey: key})
	}
	if _, err := capture(a.ID, "300.01", "c0"); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("capture above the hold: %v", err)
	}
	c, err := capture(a.ID, "120.50", "c1")
	if err != nil || c.ID != a.ID || !c.Amount.Equal(decimal.RequireFromString("120.5")) {
		t.Fatalf("capture: %+v, %v", c, err)
	}
	if again, err := capture(a.ID, "120.50", "c1"); err != nil || again != c {
		t.Fatalf("capture again under its key: %+v, %v", again, err)
	}
	if _, err := capture(a.ID, "10", "c2"); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("a second capture under another key: %v", err)
	}
	if err := g.Release(ctx, cardpay.ReleaseRequest{ID: a.ID, IdempotencyKey: "r1"}); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("release of a captured hold: %v", err)
	}
	h := g.Holds()[0]
	if h.State != cardpay.HoldCaptured || !h.Captured.Equal(decimal.RequireFromString("120.50")) {
		t.Fatalf("hold after capture: %+v (the rest is released with the capture)", h)
	}

	b, err := g.Authorize(ctx, authReq(cardpay.CardMastercard, "50", "h2"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := g.Release(ctx, cardpay.ReleaseRequest{ID: b.ID, IdempotencyKey: "r2"}); err != nil {
			t.Fatalf("release (again under its key): %v", err)
		}
	}
	if h := g.Holds()[1]; h.State != cardpay.HoldReleased {
		t.Fatalf("hold after release: %+v", h)
	}
	if err := g.Release(ctx, cardpay.ReleaseRequest{ID: b.ID, IdempotencyKey: "r3"}); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("a second release under another key: %v", err)
	}
	if n := g.HoldRequests("release"); n != 4 {
		t.Fatalf("release requests %d, want 4", n)
	}
}
