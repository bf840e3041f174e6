package route

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/testkit/stripemock"
)

func intentReq(amount, currency string) cardpay.IntentRequest {
	return cardpay.IntentRequest{
		AccountID: "acc1", PropertyID: 1, Amount: decimal.RequireFromString(amount), Currency: currency,
		Description: "Villa 1, 2026-07-01 to 2026-07-08", IdempotencyKey: "acc1/checkout/c7/intent",
		Metadata: map[string]string{"checkout": "c7", "account": "acc1"},
	}
}

// transient reports whether err is none of the answers a caller acts on at once: neither a
// refusal, nor an invalid request, nor a property without intents — so it retries later.
func transient(err error) bool {
	_, declined := cardpay.Declined(err)
	return err != nil && !declined && !errors.Is(err, cardpay.ErrInvalidRequest) && !errors.Is(err, cardpay.ErrNoIntents)
}

// TestIntentsAgainstStripeMock: the booking engine's PaymentIntents are created, read back and
// cancelled in the property's Stripe account with real Stripe API requests, checked by
// stripe-mock against Stripe's OpenAPI document and by a recorder against the rest of
// Stripe's API reference (idempotency keys included).
func TestIntentsAgainstStripeMock(t *testing.T) {
	ctx := context.Background()
	methods := methodsOf{
		1: owner1,
		3: {SecretKey: "sk_test_owner3"}, // no publishable key
		4: {SecretKey: "sk_live_notatestkey", PublishableKey: "pk_live_owner4"},
	}
	// One stripe-mock for the subtests whose requests Stripe answers alike or never sees.
	plain := recordStripe(t, stripemock.Start(t, "succeeded"))

	t.Run("create: amount in minor units, client secret, publishable key", func(t *testing.T) {
		rec := recordStripe(t, stripemock.Start(t, "requires_payment_method"))
		r := &Router{Methods: methods, StripeURL: rec.URL}
		for _, c := range []struct {
			amount, currency string
			minor, stripeCur string
		}{
			{"123.45", "EUR", "12345", "eur"},
			{"12345", "jpy", "12345", "jpy"}, // zero-decimal
			{"1.234", "KWD", "1234", "kwd"},  // three decimals
		} {
			req := intentReq(c.amount, c.currency)
			in, err := r.CreateIntent(ctx, req)
			if err != nil {
				t.Fatalf("%s %s: %v", c.amount, c.currency, err)
			}
			if !strings.HasPrefix(in.ID, "pi_") || in.Status != "requires_payment_method" ||
				!in.Amount.Equal(req.Amount) || in.Currency != strings.ToUpper(c.currency) ||
				!strings.Contains(in.ClientSecret, "_secret_") || in.PublishableKey != "pk_test_owner1" {
				t.Errorf("%s %s: intent %+v", c.amount, c.currency, in)
			}
			call := rec.Only(t)
			f := call.Form
			if call.Method != "POST" || call.Path != "/v1/payment_intents" || call.Key != "sk_test_owner1" ||
				call.IdempotencyKey != req.IdempotencyKey || f.Get("amount") != c.minor || f.Get("currency") != c.stripeCur ||
				f.Get("payment_method_types[0]") != "card" || len(f["payment_method_types[0]"]) != 1 || f.Has("payment_method_types[1]") ||
				f.Get("description") != req.Description || f.Get("metadata[checkout]") != "c7" || f.Get("metadata[account]") != "acc1" ||
				f.Has("confirm") || f.Has("payment_method") {
				t.Errorf("%s %s: Stripe received %+v", c.amount, c.currency, call)
			}
		}
	})

	t.Run("retrieve: the intent's status and amount", func(t *testing.T) {
		for _, c := range []struct {
			minor    int64
			currency string
			amount   string
		}{{98765, "eur", "987.65"}, {120000, "JPY", "120000"}} {
			rec := recordStripe(t, stripemock.Start(t, "succeeded", stripemock.IntentAmount(c.minor, c.currency)))
			r := &Router{Methods: methods, StripeURL: rec.URL}
			in, err := r.Intent(ctx, "acc1", 1, "pi_3Checkout7")
			if err != nil {
				t.Fatal(err)
			}
			if in.ID != "pi_3Checkout7" || in.Status != cardpay.IntentSucceeded || !in.Amount.Equal(decimal.RequireFromString(c.amount)) ||
				in.Currency != strings.ToUpper(c.currency) || in.ClientSecret == "" || in.PublishableKey != "pk_test_owner1" {
				t.Errorf("%d %s: intent %+v, want pi_3Checkout7 succeeded %s", c.minor, c.currency, in, c.amount)
			}
			if call := rec.Only(t); call.Method != "GET" || call.Path != "/v1/payment_intents/pi_3Checkout7" || call.Key != "sk_test_owner1" {
				t.Errorf("Stripe received %+v", call)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		rec := recordStripe(t, stripemock.Start(t, "canceled", stripemock.IntentAmount(5000, "usd")))
		r := &Router{Methods: methods, StripeURL: rec.URL}
		in, err := r.CancelIntent(ctx, "acc1", 1, "pi_3Checkout7", "acc1/checkout/c7/cancel")
		if err != nil {
			t.Fatal(err)
		}
		if in.ID != "pi_3Checkout7" || in.Status != "canceled" || !in.Amount.Equal(decimal.NewFromInt(50)) || in.Currency != "USD" {
			t.Errorf("intent %+v", in)
		}
		call := rec.Only(t)
		if call.Method != "POST" || call.Path != "/v1/payment_intents/pi_3Checkout7/cancel" || call.Key != "sk_test_owner1" ||
			call.IdempotencyKey != "acc1/checkout/c7/cancel" || call.Form.Get("cancellation_reason") != "abandoned" {
			t.Errorf("Stripe received %+v", call)
		}
	})

	t.Run("no Stripe method: ErrNoIntents, Stripe never asked", func(t *testing.T) {
		rec := plain
		r := &Router{Methods: methods, StripeURL: rec.URL}
		req := intentReq("100", "EUR")
		req.PropertyID = 2
		if _, err := r.CreateIntent(ctx, req); !errors.Is(err, cardpay.ErrNoIntents) {
			t.Errorf("create: %v, want cardpay.ErrNoIntents", err)
		}
		if _, err := r.Intent(ctx, "acc1", 2, "pi_3Checkout7"); !errors.Is(err, cardpay.ErrNoIntents) {
			t.Errorf("retrieve: %v, want cardpay.ErrNoIntents", err)
		}
		if _, err := r.CancelIntent(ctx, "acc1", 2, "pi_3Checkout7", "k"); !errors.Is(err, cardpay.ErrNoIntents) {
			t.Errorf("cancel: %v, want cardpay.ErrNoIntents", err)
		}
		req.PropertyID = 3 // a Stripe method without its publishable key: the browser could not confirm
		if _, err := r.CreateIntent(ctx, req); !errors.Is(err, cardpay.ErrNoIntents) {
			t.Errorf("create without a publishable key: %v, want cardpay.ErrNoIntents", err)
		}
		if calls := rec.Calls(); len(calls) != 0 {
			t.Errorf("Stripe received %+v", calls)
		}
	})

	t.Run("a sandbox account never reaches Stripe", func(t *testing.T) {
		rec := plain
		r := &Router{Methods: methods, StripeURL: rec.URL}
		req := intentReq("100", "EUR")
		req.Sandbox = true
		if _, err := r.CreateIntent(ctx, req); !errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Errorf("sandbox create: %v, want cardpay.ErrInvalidRequest", err)
		}
		req.PropertyID = -1 // property-svc down: not even asked
		if _, err := r.CreateIntent(ctx, req); !errors.Is(err, cardpay.ErrInvalidRequest) {
			t.Errorf("sandbox create: %v, want cardpay.ErrInvalidRequest before property-svc is asked", err)
		}
		if calls := rec.Calls(); len(calls) != 0 {
			t.Errorf("Stripe received %+v", calls)
		}
	})

	t.Run("a key Stripe refuses: a refusal naming the property's account, the key masked", func(t *testing.T) {
		rec := plain
		r := &Router{Methods: methods, StripeURL: rec.URL}
		req := intentReq("100", "EUR")
		req.PropertyID = 4
		_, errCreate := r.CreateIntent(ctx, req)
		_, errRead := r.Intent(ctx, "acc1", 4, "pi_3Checkout7")
		_, errCancel := r.CancelIntent(ctx, "acc1", 4, "pi_3Checkout7", "acc1/checkout/c7/cancel")
		for what, err := range map[string]error{"create": errCreate, "retrieve": errRead, "cancel": errCancel} {
			reason, ok := cardpay.Declined(err)
			if !ok || !strings.HasPrefix(reason, "the property's Stripe account refused the request: ") {
				t.Errorf("%s: %v, want the refusal of the property's key", what, err)
			} else if strings.Contains(err.Error(), "sk_live_notatestkey") {
				t.Errorf("%s: %v shows the secret key", what, err)
			}
		}
		if calls := rec.Calls(); len(calls) != 3 {
			t.Errorf("Stripe received %d requests, want 3: %+v", len(calls), calls)
		}
	})

	t.Run("refused before Stripe: no idempotency key, no id, an amount the currency cannot hold", func(t *testing.T) {
		rec := plain
		r := &Router{Methods: methods, StripeURL: rec.URL}
		noKey := intentReq("100", "EUR")
		noKey.IdempotencyKey = ""
		longKey := intentReq("100", "EUR")
		longKey.IdempotencyKey = strings.Repeat("k", 256)
		for what, err := range map[string]error{
			"no idempotency key":       second(r.CreateIntent(ctx, noKey)),
			"a key over 255":           second(r.CreateIntent(ctx, longKey)),
			"half a yen":               second(r.CreateIntent(ctx, intentReq("100.5", "JPY"))),
			"no amount":                second(r.CreateIntent(ctx, intentReq("0", "EUR"))),
			"not a currency":           second(r.CreateIntent(ctx, intentReq("10", "EURO"))),
			"retrieve without an id":   second(r.Intent(ctx, "acc1", 1, "")),
			"cancel without an id":     second(r.CancelIntent(ctx, "acc1", 1, " ", "k")),
			"cancel without a key":     second(r.CancelIntent(ctx, "acc1", 1, "pi_3Checkout7", "")),
			"cancel with a key of 256": second(r.CancelIntent(ctx, "acc1", 1, "pi_3Checkout7", strings.Repeat("k", 256))),
		} {
			if !errors.Is(err, cardpay.ErrInvalidRequest) {
				t.Errorf("%s: %v, want cardpay.ErrInvalidRequest", what, err)
			}
		}
		if calls := rec.Calls(); len(calls) != 0 {
			t.Errorf("Stripe received %+v", calls)
		}
	})

	t.Run("Stripe or property-svc unreachable is transient", func(t *testing.T) {
		r := &Router{Methods: methods, StripeURL: "http://127.0.0.1:1"} // nothing listens
		down := intentReq("100", "EUR")
		down.PropertyID = -1
		for what, err := range map[string]error{
			"create":                second(r.CreateIntent(ctx, intentReq("100", "EUR"))),
			"retrieve":              second(r.Intent(ctx, "acc1", 1, "pi_3Checkout7")),
			"cancel":                second(r.CancelIntent(ctx, "acc1", 1, "pi_3Checkout7", "k")),
			"property-svc down":     second(r.CreateIntent(ctx, down)),
			"property-svc down too": second(r.Intent(ctx, "acc1", -1, "pi_3Checkout7")),
		} {
			if !transient(err) {
				t.Errorf("%s: %v, want a transient error", what, err)
			}
		}
	})
}

// TestChargeIdempotencyKeys: a charge's two Stripe requests carry the keys derived from its
// own (docs/booking.md, "Payments"), as Stripe receives them.
func TestChargeIdempotencyKeys(t *testing.T) {
	rec := recordStripe(t, stripemock.Start(t, "succeeded"))
	r := &Router{Methods: methodsOf{1: owner1}, StripeURL: rec.URL}
	req := stripeReq("50", "USD")
	req.AccountID, req.PropertyID = "acc1", 1
	if _, err := r.Charge(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	calls := rec.Calls()
	if len(calls) != 2 || calls[0].Path != "/v1/payment_methods" || calls[0].IdempotencyKey != req.IdempotencyKey+"/payment-method" ||
		calls[1].Path != "/v1/payment_intents" || calls[1].IdempotencyKey != req.IdempotencyKey ||
		calls[1].Form.Get("amount") != "5000" || calls[1].Form.Get("confirm") != "true" {
		t.Fatalf("Stripe received %+v", calls)
	}
}

func second[T any](_ T, err error) error { return err }
