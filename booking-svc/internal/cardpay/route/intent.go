package route

import (
	"context"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/stripe/stripe-go/v85"
	"golang.org/x/text/currency"

	"github.com/vros/vros/booking-svc/internal/cardpay"
)

// PaymentIntents for the booking engine (docs/booking-engine.md): booking-svc creates one with
// the property's Stripe secret key, the guest's browser confirms it with Stripe.js and the
// card typed into Stripe's own field, and booking-svc reads it back before booking. The card
// number never reaches vros.
//
// Errors: cardpay.ErrNoIntents when the property has no Stripe method; an error wrapping
// cardpay.ErrInvalidRequest for a request Stripe (or this check before it) refuses — an
// amount the currency cannot hold, a reused idempotency key with other parameters, an intent
// whose state forbids the change; a *cardpay.DeclinedError ("the property's Stripe account
// refused the request: …") when Stripe refuses the property's key, which only the owner can
// fix (A5). Any other error — property-svc or Stripe unreachable, Stripe's own failure — is
// transient: retry later with the same idempotency key. Nothing here logs; no error's text
// holds the secret key or a client secret.

// maxIdempotencyKey is the longest Idempotency-Key Stripe accepts.
const maxIdempotencyKey = 255

// CreateIntent creates a PaymentIntent for req.Amount in req.Currency in the Stripe account
// of req's property, for a card (the widget mounts Stripe's Card Element), under
// req.IdempotencyKey (required): a retried request answers the same intent. The key is sent
// as it is, so it must be unique across every account that may share a Stripe account (say
// "<account>/checkout/<id>"). The Intent carries the client secret and the property's
// publishable key the browser confirms it with.
//
// A property whose Stripe method has no publishable key cannot confirm in a browser:
// cardpay.ErrNoIntents, and no intent is made.
//
// A sandbox account (req.Sandbox) is refused with cardpay.ErrInvalidRequest before anything
// is read or sent: its cards go through the test gateway, confirmed with a test card (Charge),
// and it must never reach a real Stripe account, whatever its property has set up; asking for
// its intent is the caller's mistake, which should be loud rather than look like a property
// without Stripe.
func (r *Router) CreateIntent(ctx context.Context, req cardpay.IntentRequest) (cardpay.Intent, error) {
	if req.Sandbox {
		return cardpay.Intent{}, fmt.Errorf("%w: a sandbox account pays through the test gateway, never a PaymentIntent", cardpay.ErrInvalidRequest)
	}
	if err := checkIdempotencyKey(req.IdempotencyKey); err != nil {
		return cardpay.Intent{}, err
	}
	m, err := r.intentMethod(ctx, req.AccountID, req.PropertyID)
	if err != nil {
		return cardpay.Intent{}, err
	}
	if m.PublishableKey == "" {
		return cardpay.Intent{}, fmt.Errorf("%w (property %d's Stripe method has no publishable key)", cardpay.ErrNoIntents, req.PropertyID)
	}
	in, err := r.stripe(m).CreateIntent(ctx, req)
	in.PublishableKey = m.PublishableKey
	return in, err
}

// Intent reads the PaymentIntent id back from the Stripe account of the account's property.
// Ids come from CreateIntent, which refuses sandbox accounts.
func (r *Router) Intent(ctx context.Context, accountID string, propertyID int64, id string) (cardpay.Intent, error) {
	if err := checkIntentID(id); err != nil {
		return cardpay.Intent{}, err
	}
	m, err := r.intentMethod(ctx, accountID, propertyID)
	if err != nil {
		return cardpay.Intent{}, err
	}
	in, err := r.stripe(m).Intent(ctx, id)
	in.PublishableKey = m.PublishableKey
	return in, err
}

// CancelIntent cancels the PaymentIntent id (reason `abandoned`) under idempotencyKey
// (required), and answers it as Stripe then tells it. Stripe refuses to cancel an intent
// that succeeded or was canceled already (cardpay.ErrInvalidRequest, unless the same key
// was used: a retried cancel answers the first one): read it back to know which.
func (r *Router) CancelIntent(ctx context.Context, accountID string, propertyID int64, id, idempotencyKey string) (cardpay.Intent, error) {
	if err := checkIntentID(id); err != nil {
		return cardpay.Intent{}, err
	}
	if err := checkIdempotencyKey(idempotencyKey); err != nil {
		return cardpay.Intent{}, err
	}
	m, err := r.intentMethod(ctx, accountID, propertyID)
	if err != nil {
		return cardpay.Intent{}, err
	}
	in, err := r.stripe(m).CancelIntent(ctx, id, idempotencyKey)
	in.PublishableKey = m.PublishableKey
	return in, err
}

// intentMethod is the Stripe method of the property, or cardpay.ErrNoIntents.
func (r *Router) intentMethod(ctx context.Context, accountID string, propertyID int64) (StripeMethod, error) {
	m, ok, err := r.Methods.Stripe(ctx, accountID, propertyID)
	switch {
	case err != nil:
		return StripeMethod{}, fmt.Errorf("payment method of property %d: %w", propertyID, err)
	case !ok:
		return StripeMethod{}, fmt.Errorf("%w (property %d)", cardpay.ErrNoIntents, propertyID)
	}
	return m, nil
}

func checkIdempotencyKey(key string) error {
	switch {
	case strings.TrimSpace(key) == "":
		return fmt.Errorf("%w: an idempotency key is required", cardpay.ErrInvalidRequest)
	case len(key) > maxIdempotencyKey:
		return fmt.Errorf("%w: idempotency key longer than %d bytes", cardpay.ErrInvalidRequest, maxIdempotencyKey)
	}
	return nil
}

// checkIntentID refuses an empty id, which would name the list of every intent.
func checkIntentID(id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("%w: no PaymentIntent id", cardpay.ErrInvalidRequest)
	}
	return nil
}

// CreateIntent creates a card PaymentIntent for req (see Router.CreateIntent); the Intent's
// PublishableKey is the caller's to set.
func (g *Stripe) CreateIntent(ctx context.Context, req cardpay.IntentRequest) (cardpay.Intent, error) {
	cur, err := cardpay.CheckAmount(req.Amount, req.Currency)
	if err != nil {
		return cardpay.Intent{}, err
	}
	minor, err := minorUnits(req.Amount, cur)
	if err != nil {
		return cardpay.Intent{}, err
	}
	p := &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(minor), Currency: stripe.String(strings.ToLower(cur)),
		PaymentMethodTypes: []*string{stripe.String(string(stripe.PaymentMethodTypeCard))},
	}
	if req.Description != "" {
		p.Description = stripe.String(req.Description)
	}
	if len(req.Metadata) > 0 {
		p.Metadata = req.Metadata
	}
	p.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := g.client.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		return cardpay.Intent{}, g.fail(err)
	}
	return intentOf(pi)
}

// Intent retrieves the PaymentIntent id.
func (g *Stripe) Intent(ctx context.Context, id string) (cardpay.Intent, error) {
	pi, err := g.client.V1PaymentIntents.Retrieve(ctx, id, nil)
	if err != nil {
		return cardpay.Intent{}, g.fail(err)
	}
	return intentOf(pi)
}

// CancelIntent cancels the PaymentIntent id as abandoned, under idempotencyKey.
func (g *Stripe) CancelIntent(ctx context.Context, id, idempotencyKey string) (cardpay.Intent, error) {
	p := &stripe.PaymentIntentCancelParams{CancellationReason: stripe.String(string(stripe.PaymentIntentCancellationReasonAbandoned))}
	p.SetIdempotencyKey(idempotencyKey)
	pi, err := g.client.V1PaymentIntents.Cancel(ctx, id, p)
	if err != nil {
		return cardpay.Intent{}, g.fail(err)
	}
	return intentOf(pi)
}

// intentOf is Stripe's PaymentIntent as the booking engine reads it: its amount back in
// the currency's decimal units, its currency in ISO 4217's capitals.
func intentOf(pi *stripe.PaymentIntent) (cardpay.Intent, error) {
	amount, cur, err := fromMinorUnits(pi.Amount, string(pi.Currency))
	if err != nil {
		return cardpay.Intent{}, fmt.Errorf("stripe: payment intent %s: %w", pi.ID, err)
	}
	return cardpay.Intent{ID: pi.ID, Status: string(pi.Status), Amount: amount, Currency: cur, ClientSecret: pi.ClientSecret}, nil
}

// fromMinorUnits is minorUnits undone: Stripe's count of the currency's smallest unit as
// an amount, with the currency's ISO 4217 code.
func fromMinorUnits(minor int64, code string) (decimal.Decimal, string, error) {
	u, err := currency.ParseISO(code)
	if err != nil {
		return decimal.Decimal{}, "", fmt.Errorf("currency %q: %w", code, err)
	}
	scale, _ := currency.Standard.Rounding(u)
	return decimal.New(minor, -int32(scale)), u.String(), nil
}
