package route

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stripe/stripe-go/v85"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/testkit/stripemock"
)

func init() {
	// Refunds are an endpoint vros calls too (the recorder's list is the charges').
	stripeEndpoints = append(stripeEndpoints, struct {
		method string
		path   *regexp.Regexp
	}{http.MethodPost, regexp.MustCompile(`^/v1/refunds$`)})
}

func refundReq(amount, currency string) cardpay.RefundRequest {
	return cardpay.RefundRequest{AccountID: "acc1", PropertyID: 1, ChargeID: "pi_123", Amount: decimal.RequireFromString(amount),
		Currency: currency, IdempotencyKey: "refund-acc1-7-12-1", Reason: "moderate policy"}
}

// TestStripeRefundAgainstStripeMock: a refund is Stripe's Refunds API on the charge's
// PaymentIntent, in the currency's minor units, under the part's idempotency key.
func TestStripeRefundAgainstStripeMock(t *testing.T) {
	ctx := context.Background()
	rec := recordStripe(t, stripemock.Start(t, "succeeded"))
	g := NewStripe("sk_test_123", rec.URL, nil)
	for _, c := range []struct{ amount, currency, minor string }{{"123.45", "EUR", "12345"}, {"5000", "JPY", "5000"}, {"1.234", "KWD", "1234"}} {
		rf, err := g.Refund(ctx, refundReq(c.amount, c.currency))
		if err != nil {
			t.Fatalf("%s %s: %v", c.amount, c.currency, err)
		}
		if !strings.HasPrefix(rf.ID, "re_") || !rf.Amount.Equal(decimal.RequireFromString(c.amount)) || rf.Currency != c.currency || rf.At.IsZero() {
			t.Fatalf("refund %+v", rf)
		}
		call := rec.Only(t)
		if call.Path != "/v1/refunds" || call.Form.Get("payment_intent") != "pi_123" || call.Form.Get("amount") != c.minor ||
			call.IdempotencyKey != "refund-acc1-7-12-1" || call.Form.Get("metadata[reason]") != "moderate policy" {
			t.Fatalf("%s %s: Stripe was asked %+v", c.amount, c.currency, call)
		}
	}
	t.Run("an amount the currency cannot hold is refused before Stripe", func(t *testing.T) {
		_, err := g.Refund(ctx, refundReq("0.5", "JPY"))
		if _, ok := cardpay.Refused(err); !ok {
			t.Fatalf("err = %v, want a refusal", err)
		}
		if calls := rec.Calls(); len(calls) != 0 {
			t.Fatalf("Stripe was asked %+v", calls)
		}
	})
	t.Run("Stripe unreachable is worth retrying", func(t *testing.T) {
		_, err := NewStripe("sk_test_123", "http://127.0.0.1:1", nil).Refund(ctx, refundReq("10", "EUR"))
		if _, refused := cardpay.Refused(err); err == nil || refused {
			t.Fatalf("err = %v, want an error to retry", err)
		}
	})
}

// TestRefundErrors: Stripe's error answers for a refund (which stripe-mock never gives) are
// refusals, failing the part at once, or errors to retry.
func TestRefundErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     *stripe.Error
		refused bool
	}{
		{"already refunded", &stripe.Error{Type: stripe.ErrorTypeInvalidRequest, Code: stripe.ErrorCodeChargeAlreadyRefunded,
			Msg: "Charge ch_1 has already been refunded.", HTTPStatusCode: 400}, true},
		{"disputed", &stripe.Error{Type: stripe.ErrorTypeInvalidRequest, Code: stripe.ErrorCodeChargeDisputed, HTTPStatusCode: 400}, true},
		{"a card error", &stripe.Error{Type: stripe.ErrorTypeCard, Code: stripe.ErrorCodeCardDeclined, HTTPStatusCode: 402}, true},
		{"a key refused", &stripe.Error{Type: stripe.ErrorTypeInvalidRequest, HTTPStatusCode: http.StatusUnauthorized}, true},
		{"an idempotency key reused", &stripe.Error{Type: stripe.ErrorTypeIdempotency, HTTPStatusCode: 400}, true},
		{"Stripe's own failure", &stripe.Error{Type: stripe.ErrorTypeAPI, HTTPStatusCode: 500}, false},
		{"a rate limit", &stripe.Error{Type: stripe.ErrorTypeInvalidRequest, Code: stripe.ErrorCodeRateLimit, HTTPStatusCode: 429}, false},
	} {
		err := (&Stripe{}).refundFail(c.err)
		if _, refused := cardpay.Refused(err); refused != c.refused {
			t.Errorf("%s: %v, refused %v, want %v", c.name, err, refused, c.refused)
		}
	}
}

// TestRouterRefunds: a sandbox booking's refund reaches the test gateway only; a live one the
// property's Stripe account; a live property without a method refuses it.
func TestRouterRefunds(t *testing.T) {
	test := cardpay.NewTest(func() time.Time { return time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC) })
	r := &Router{Test: test, Methods: methodsOf{1: owner1}, StripeURL: stripemock.Start(t, "succeeded")}
	ctx := context.Background()
	ch, err := test.Charge(ctx, cardpay.ChargeRequest{Amount: decimal.NewFromInt(80), Currency: "EUR", IdempotencyKey: "c1",
		Card: card.Card{Number: cardpay.CardVisa, ExpMonth: 12, ExpYear: 2030, CVC: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	req := refundReq("30", "EUR")
	req.Sandbox, req.ChargeID = true, ch.ID
	if rf, err := r.Refund(ctx, req); err != nil || !strings.HasPrefix(rf.ID, "re_test_") {
		t.Fatalf("sandbox: %+v, %v", rf, err)
	}
	live := refundReq("30", "EUR")
	if rf, err := r.Refund(ctx, live); err != nil || !strings.HasPrefix(rf.ID, "re_") || strings.HasPrefix(rf.ID, "re_test_") {
		t.Fatalf("live: %+v, %v; want a Stripe refund", rf, err)
	}
	live.PropertyID = 2
	if _, err := r.Refund(ctx, live); err == nil {
		t.Fatal("live without a method: refunded")
	} else if reason, ok := cardpay.Refused(err); !ok || reason != ReasonNoMethod {
		t.Fatalf("live without a method: %v", err)
	}
	live.PropertyID = -1
	if _, err := r.Refund(ctx, live); err == nil {
		t.Fatal("property-svc down: refunded")
	} else if _, refused := cardpay.Refused(err); refused {
		t.Fatalf("property-svc down: %v is a refusal", err)
	}
	if n := len(test.Refunds()); n != 1 {
		t.Fatalf("the test gateway refunded %d times, want once", n)
	}
}

// TestTestGatewayRefunds: the test gateway refunds like a real one: its own charges only,
// never more than remains, in the charge's currency, once per idempotency key.
func TestTestGatewayRefunds(t *testing.T) {
	g := cardpay.NewTest(func() time.Time { return time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC) })
	ctx := context.Background()
	ch, err := g.Charge(ctx, cardpay.ChargeRequest{Amount: decimal.RequireFromString("100.00"), Currency: "EUR", IdempotencyKey: "c1",
		Card: card.Card{Number: cardpay.CardVisa, ExpMonth: 12, ExpYear: 2030, CVC: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	req := func(amount, cur, key string) cardpay.RefundRequest {
		return cardpay.RefundRequest{ChargeID: ch.ID, Amount: decimal.RequireFromString(amount), Currency: cur, IdempotencyKey: key}
	}
	first, err := g.Refund(ctx, req("60", "EUR", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		req     cardpay.RefundRequest
		refused bool
		same    bool // answers the first refund
	}{
		{"the same key again", req("60", "EUR", "k1"), false, true},
		{"the same key, another amount", req("10", "EUR", "k1"), true, false},
		{"more than remains", req("40.01", "EUR", "k2"), true, false},
		{"another currency", req("10", "USD", "k3"), true, false},
		{"an unknown charge", cardpay.RefundRequest{ChargeID: "pi_x", Amount: decimal.NewFromInt(1), Currency: "EUR", IdempotencyKey: "k4"}, true, false},
		{"three decimals in EUR", req("1.001", "EUR", "k5"), true, false},
		{"the rest", req("40", "EUR", "k6"), false, false},
		{"nothing left", req("0.01", "EUR", "k7"), true, false},
	} {
		rf, err := g.Refund(ctx, c.req)
		_, refused := cardpay.Refused(err)
		if refused != c.refused || (!c.refused && err != nil) || (c.same && rf != first) {
			t.Errorf("%s: %+v, %v", c.name, rf, err)
		}
	}
	if n := len(g.Refunds()); n != 2 {
		t.Fatalf("%d refunds, want 2", n)
	}
	outage := errors.New("gateway down")
	g.FailRefunds(func(cardpay.RefundRequest) error { return outage })
	if _, err := g.Refund(ctx, req("1", "EUR", "k8")); !errors.Is(err, outage) {
		t.Fatalf("err = %v, want the outage", err)
	}
	g.FailRefunds(nil)
}
