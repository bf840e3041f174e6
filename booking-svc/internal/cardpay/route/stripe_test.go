package route

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stripe/stripe-go/v85"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/testkit/stripemock"
)

func stripeReq(amount, currency string) cardpay.ChargeRequest {
	return cardpay.ChargeRequest{
		Amount: decimal.RequireFromString(amount), Currency: currency, Description: "booking 7",
		Card:           card.Card{Number: "4242424242424242", NameOnCard: "ANN SMITH", ExpMonth: 12, ExpYear: 2030, CVC: "123"},
		IdempotencyKey: "acc1/booking/7/payment/1",
	}
}

// TestStripeAgainstStripeMock sends real Stripe API requests, checked by stripe-mock
// against Stripe's OpenAPI specification, and maps what a confirmed payment answers.
func TestStripeAgainstStripeMock(t *testing.T) {
	ctx := context.Background()
	t.Run("succeeded is a charge", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "succeeded"), nil)
		ch, err := g.Charge(ctx, stripeReq("123.45", "eur"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ch.ID, "pi_") || !ch.Amount.Equal(decimal.RequireFromString("123.45")) || ch.Currency != "EUR" ||
			ch.Last4 != "4242" || ch.Brand == "" || ch.At.IsZero() {
			t.Fatalf("charge %+v", ch)
		}
	})
	t.Run("requires_action is 3-D Secure", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "requires_action"), nil)
		if _, err := g.Charge(ctx, stripeReq("10", "USD")); !errors.Is(err, cardpay.ErrRequires3DS) {
			t.Fatalf("err = %v, want cardpay.ErrRequires3DS", err)
		}
	})
	t.Run("requires_payment_method is a refusal", func(t *testing.T) {
		g := NewStripe("sk_test_123", stripemock.Start(t, "requires_payment_method"), nil)
		_, err := g.Charge(ctx, stripeReq("10", "USD"))
		if _, ok := cardpay.Declined(err); !ok {
			t.Fatalf("err = %v, want a refusal", err)
		}
	})
	t.Run("an amount the currency cannot hold is refused before Stripe", func(t *testing.T) {
		g := NewStripe("sk_test_123", "http://127.0.0.1:1", nil) // nothing listens: never called
		if _, err := g.Charge(ctx, stripeReq("100.5", "JPY")); !errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Fatalf("err = %v, want cardpay.ErrInvalidRequest", err)
		}
	})
	t.Run("Stripe unreachable is not the card's fault", func(t *testing.T) {
		g := NewStripe("sk_test_123", "http://127.0.0.1:1", nil)
		_, err := g.Charge(ctx, stripeReq("10", "USD"))
		if _, declined := cardpay.Declined(err); err == nil || declined || errors.Is(err, cardpay.ErrRequires3DS) || errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Fatalf("err = %v, want an internal error", err)
		}
	})
}

// TestStripeErrors: how Stripe's error answers (which stripe-mock never gives) map.
func TestStripeErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      *stripe.Error
		declined string // the refusal reason, if a refusal
		is       error  // else the error it wraps, if any
	}{
		{"declined with Stripe's message", &stripe.Error{Type: stripe.ErrorTypeCard, Code: stripe.ErrorCodeCardDeclined,
			Msg: "Your card has insufficient funds.", HTTPStatusCode: 402}, "Your card has insufficient funds.", nil},
		{"declined without a message", &stripe.Error{Type: stripe.ErrorTypeCard, Code: stripe.ErrorCodeExpiredCard, HTTPStatusCode: 402},
			"expired card", nil},
		{"authentication required", &stripe.Error{Type: stripe.ErrorTypeCard, Code: stripe.ErrorCodeAuthenticationRequired,
			HTTPStatusCode: 402}, "", cardpay.ErrRequires3DS},
		{"invalid request", &stripe.Error{Type: stripe.ErrorTypeInvalidRequest, Msg: "Invalid currency", HTTPStatusCode: 400},
			"", cardpay.ErrInvalidRequest},
		{"an idempotency key reused with other parameters", &stripe.Error{Type: stripe.ErrorTypeIdempotency, HTTPStatusCode: 400,
			Msg: "Keys for idempotent requests can only be used with the same parameters they were first used with."}, "", cardpay.ErrInvalidRequest},
		{"Stripe's own failure", &stripe.Error{Type: stripe.ErrorTypeAPI, HTTPStatusCode: 500}, "", nil},
		{"a bad secret key", &stripe.Error{Type: stripe.ErrorTypeInvalidRequest, HTTPStatusCode: http.StatusUnauthorized,
			Msg: "Invalid API Key provided"}, "the property's Stripe account refused the request: Invalid API Key provided", nil},
	} {
		got := stripeError(c.err)
		reason, declined := cardpay.Declined(got)
		switch {
		case c.declined != "" && reason != c.declined:
			t.Errorf("%s: %v, want the refusal %q", c.name, got, c.declined)
		case c.declined == "" && declined:
			t.Errorf("%s: %v is a refusal", c.name, got)
		case c.is != nil && !errors.Is(got, c.is):
			t.Errorf("%s: %v, want %v", c.name, got, c.is)
		case c.is == nil && c.declined == "" && (errors.Is(got, cardpay.ErrInvalidRequest) || errors.Is(got, cardpay.ErrRequires3DS)):
			t.Errorf("%s: %v, want an internal error", c.name, got)
		}
	}
}

// TestStripeErrorsKeepSecretsOut: an error's text never holds the objects Stripe's error
// embeds (a PaymentIntent's client secret), nor the secret key Stripe's message repeats.
func TestStripeErrorsKeepSecretsOut(t *testing.T) {
	for _, se := range []*stripe.Error{
		{Type: stripe.ErrorTypeInvalidRequest, Code: stripe.ErrorCodePaymentIntentUnexpectedState, HTTPStatusCode: 400,
			Msg: "This PaymentIntent's status is succeeded.", PaymentIntent: &stripe.PaymentIntent{ID: "pi_1", ClientSecret: "pi_1_secret_XYZ"}},
		{Type: stripe.ErrorTypeAPI, HTTPStatusCode: 500, Msg: "An unknown error occurred",
			PaymentIntent: &stripe.PaymentIntent{ID: "pi_1", ClientSecret: "pi_1_secret_XYZ"}},
		{Type: stripe.ErrorTypeInvalidRequest, HTTPStatusCode: http.StatusUnauthorized,
			Msg: "Authorization was 'Bearer sk_live_abc123'."},
	} {
		err := (&Stripe{key: "sk_live_abc123"}).fail(se)
		if text := err.Error(); strings.Contains(text, "_secret_") || strings.Contains(text, "sk_live_abc123") {
			t.Errorf("%s", text)
		}
		if reason, _ := cardpay.Declined(err); strings.Contains(reason, "sk_live_abc123") {
			t.Errorf("reason %q", reason)
		}
	}
}

// TestMinorUnits: Stripe counts in the currency's smallest unit; an intent's amount is read
// back from it.
func TestMinorUnits(t *testing.T) {
	for _, c := range []struct {
		amount, currency string
		want             int64
		ok               bool
	}{
		{"123.45", "EUR", 12345, true},
		{"100", "JPY", 100, true},
		{"1.234", "KWD", 1234, true},
		{"0.5", "JPY", 0, false},
		{"1.001", "USD", 0, false},
	} {
		got, err := minorUnits(decimal.RequireFromString(c.amount), c.currency)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s %s: %d, %v; want %d (ok %v)", c.amount, c.currency, got, err, c.want, c.ok)
		}
		if !c.ok {
			continue
		}
		back, cur, err := fromMinorUnits(got, strings.ToLower(c.currency))
		if err != nil || !back.Equal(decimal.RequireFromString(c.amount)) || cur != c.currency {
			t.Errorf("%d %s back: %s %s, %v; want %s %s", got, c.currency, back, cur, err, c.amount, c.currency)
		}
	}
}
