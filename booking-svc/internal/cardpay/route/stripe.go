package route

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stripe/stripe-go/v85"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"golang.org/x/text/currency"
)

// StripeAPI is Stripe's API address; tests point Stripe gateways at stripe-mock instead.
const StripeAPI = "https://api.stripe.com"

// Stripe charges cards through Stripe with an account's secret key (A5's `secret_key`),
// using Stripe's official Go library: the card becomes a PaymentMethod, then a
// PaymentIntent confirmed at once, each request under its own idempotency key so that a
// retried charge is never charged twice.
type Stripe struct {
	client *stripe.Client
	key    string // only to mask it in Stripe's messages
}

// NewStripe returns a gateway charging with secretKey through the Stripe API at apiURL
// ("": StripeAPI) over httpClient (nil: the library's default).
func NewStripe(secretKey, apiURL string, httpClient *http.Client) *Stripe {
	if apiURL == "" {
		apiURL = StripeAPI
	}
	cfg := &stripe.BackendConfig{
		URL: stripe.String(apiURL),
		// The booking request is waiting: retry a network error once, not for seconds.
		MaxNetworkRetries: stripe.Int64(1),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if httpClient != nil {
		cfg.HTTPClient = httpClient
	}
	return &Stripe{client: stripe.NewClient(secretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg))), key: secretKey}
}

// Charge charges req.Card, or refuses it with a *cardpay.DeclinedError, cardpay.ErrRequires3DS or an error
// wrapping cardpay.ErrInvalidRequest; anything else (Stripe unreachable, an invalid key) is an
// internal error.
func (g *Stripe) Charge(ctx context.Context, req cardpay.ChargeRequest) (cardpay.Charge, error) {
	cur, err := cardpay.CheckAmount(req.Amount, req.Currency)
	if err != nil {
		return cardpay.Charge{}, err
	}
	minor, err := minorUnits(req.Amount, cur)
	if err != nil {
		return cardpay.Charge{}, err
	}
	pmp := &stripe.PaymentMethodCreateParams{
		Type: stripe.String(string(stripe.PaymentMethodTypeCard)),
		Card: &stripe.PaymentMethodCreateCardParams{
			Number: stripe.String(req.Card.Number), CVC: stripe.String(req.Card.CVC),
			ExpMonth: stripe.Int64(int64(req.Card.ExpMonth)), ExpYear: stripe.Int64(int64(req.Card.ExpYear)),
		},
		BillingDetails: &stripe.PaymentMethodCreateBillingDetailsParams{Name: stripe.String(req.Card.NameOnCard)},
	}
	if req.IdempotencyKey != "" {
		pmp.SetIdempotencyKey(req.IdempotencyKey + "/payment-method")
	}
	pm, err := g.client.V1PaymentMethods.Create(ctx, pmp)
	if err != nil {
		return cardpay.Charge{}, g.fail(err)
	}
	pip := &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(minor), Currency: stripe.String(strings.ToLower(cur)),
		PaymentMethod: stripe.String(pm.ID), Confirm: stripe.Bool(true),
		PaymentMethodTypes: []*string{stripe.String(string(stripe.PaymentMethodTypeCard))},
		Description:        stripe.String(req.Description),
	}
	if req.IdempotencyKey != "" {
		pip.SetIdempotencyKey(req.IdempotencyKey)
	}
	pi, err := g.client.V1PaymentIntents.Create(ctx, pip)
	if err != nil {
		return cardpay.Charge{}, g.fail(err)
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
	case stripe.PaymentIntentStatusRequiresAction:
		return cardpay.Charge{}, cardpay.ErrRequires3DS
	case stripe.PaymentIntentStatusRequiresPaymentMethod:
		reason := "card declined"
		if e := pi.LastPaymentError; e != nil && e.Msg != "" {
			reason = e.Msg
		}
		return cardpay.Charge{}, &cardpay.DeclinedError{Reason: reason}
	default:
		return cardpay.Charge{}, fmt.Errorf("stripe: payment %s is %s, not succeeded", pi.ID, pi.Status)
	}
	return cardpay.Charge{ID: pi.ID, Amount: req.Amount, Currency: cur, Last4: req.Card.Last4(), Brand: req.Card.Brand(),
		At: time.Unix(pi.Created, 0).UTC()}, nil
}

// fail is stripeError with the secret key masked wherever Stripe's message repeats it
// (Stripe masks it itself; stripe-mock repeats the Authorization header whole).
func (g *Stripe) fail(err error) error {
	var se *stripe.Error
	if g.key != "" && errors.As(err, &se) && strings.Contains(se.Msg, g.key) {
		masked := *se
		masked.Msg = strings.ReplaceAll(se.Msg, g.key, "sk_***")
		err = &masked
	}
	return stripeError(err)
}

// stripeError maps Stripe's answer to a gateway error: a card error is a refusal with
// Stripe's message as its reason (status 111), and so is a key Stripe does not accept (the
// owner must fix the payment method); an invalid request (a reused idempotency key with
// other parameters too) is cardpay.ErrInvalidRequest. Anything else — Stripe unreachable,
// Stripe's own failure, a rate limit — is none of these, and worth retrying later. The
// error's text holds Stripe's type, code and message only, never the objects Stripe's
// error may embed (a PaymentIntent's client secret).
func stripeError(err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("stripe: %w", err)
	}
	switch {
	case se.Type == stripe.ErrorTypeCard && se.Code == stripe.ErrorCodeAuthenticationRequired:
		return cardpay.ErrRequires3DS
	case se.Type == stripe.ErrorTypeCard:
		reason := se.Msg
		if reason == "" {
			reason = strings.ReplaceAll(string(se.Code), "_", " ")
		}
		return &cardpay.DeclinedError{Reason: reason}
	case se.HTTPStatusCode == http.StatusUnauthorized || se.HTTPStatusCode == http.StatusForbidden:
		// The owner's key is wrong or revoked: no card can be charged until they fix A5.
		return &cardpay.DeclinedError{Reason: "the property's Stripe account refused the request: " + se.Msg}
	case (se.Type == stripe.ErrorTypeInvalidRequest || se.Type == stripe.ErrorTypeIdempotency) &&
		se.HTTPStatusCode < http.StatusInternalServerError:
		return fmt.Errorf("%w: stripe: %s", cardpay.ErrInvalidRequest, se.Msg)
	}
	return fmt.Errorf("stripe (HTTP %d, %s %s): %s", se.HTTPStatusCode, se.Type, se.Code, se.Msg)
}

// minorUnits converts amount to the currency's smallest unit, as Stripe counts (cents).
func minorUnits(amount decimal.Decimal, code string) (int64, error) {
	u, err := currency.ParseISO(code)
	if err != nil {
		return 0, fmt.Errorf("%w: currency %q", cardpay.ErrInvalidRequest, code)
	}
	scale, _ := currency.Standard.Rounding(u)
	m := amount.Shift(int32(scale))
	if !m.IsInteger() {
		return 0, fmt.Errorf("%w: amount %s has more than %d decimal places for %s", cardpay.ErrInvalidRequest, amount, scale, code)
	}
	return m.IntPart(), nil
}
