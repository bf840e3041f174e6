package route

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/vros/vros/booking-svc/internal/cardpay"
)

// Damage-deposit holds (docs/money.md, "Damage-deposit holds"): a sandbox account's reach
// only the test gateway; a live account's are PaymentIntents of the property's Stripe
// account with capture_method=manual, confirmed at once, captured with amount_to_capture
// (Stripe releases the rest) and cancelled to release. A live property without a Stripe
// method refuses the hold as it refuses a charge (ReasonNoMethod).

// Authorize holds req.Amount on req.Card through the gateway of its account and property.
func (r *Router) Authorize(ctx context.Context, req cardpay.AuthorizeRequest) (cardpay.Authorization, error) {
	if req.Sandbox {
		return r.Test.Authorize(ctx, req)
	}
	g, err := r.holdGateway(ctx, req.AccountID, req.PropertyID)
	if err != nil {
		return cardpay.Authorization{}, err
	}
	return g.Authorize(ctx, req)
}

// Capture captures req.Amount of authorization req.ID; the rest is released.
func (r *Router) Capture(ctx context.Context, req cardpay.CaptureRequest) (cardpay.Captured, error) {
	if req.Sandbox {
		return r.Test.Capture(ctx, req)
	}
	g, err := r.holdGateway(ctx, req.AccountID, req.PropertyID)
	if err != nil {
		return cardpay.Captured{}, err
	}
	return g.Capture(ctx, req)
}

// Release releases authorization req.ID whole.
func (r *Router) Release(ctx context.Context, req cardpay.ReleaseRequest) error {
	if req.Sandbox {
		return r.Test.Release(ctx, req)
	}
	g, err := r.holdGateway(ctx, req.AccountID, req.PropertyID)
	if err != nil {
		return err
	}
	return g.Release(ctx, req)
}

// holdGateway is the Stripe gateway of a live property, or ReasonNoMethod's refusal.
func (r *Router) holdGateway(ctx context.Context, account string, pid int64) (*Stripe, error) {
	m, ok, err := r.Methods.Stripe(ctx, account, pid)
	switch {
	case err != nil:
		return nil, fmt.Errorf("payment method of property %d: %w", pid, err)
	case !ok:
		return nil, &cardpay.DeclinedError{Reason: ReasonNoMethod}
	}
	return r.stripe(m), nil
}

// Authorize places a hold: the card becomes a PaymentMethod, then a PaymentIntent with
// capture_method=manual is confirmed at once; requires_capture is the hold.
func (g *Stripe) Authorize(ctx context.Context, req cardpay.AuthorizeRequest) (cardpay.Authorization, error) {
	cur, err := cardpay.CheckAmount(req.Amount, req.Currency)
	if err != nil {
		return cardpay.Authorization{}, err
	}
	if err := checkIdempotencyKey(req.IdempotencyKey); err != nil {
		return cardpay.Authorization{}, err
	}
	minor, err := minorUnits(req.Amount, cur)
	if err != nil {
		return cardpay.Authorization{}, err
	}
	pmp := &stripe.PaymentMethodCreateParams{
		Type: stripe.String(string(stripe.PaymentMethodTypeCard)),
		Card: &stripe.PaymentMethodCreateCardParams{
			Number:   stripe.String(req.Card.Number),
			ExpMonth: stripe.Int64(int64(req.Card.ExpMonth)), ExpYear: stripe.Int64(int64(req.Card.ExpYear)),
		},
		BillingDetails: &stripe.PaymentMethodCreateBillingDetailsParams{Name: stripe.String(req.Card.NameOnCard)},
	}
	if req.Card.CVC != "" { // a kept card has none
		pmp.Card.CVC = stripe.String(req.Card.CVC)
	}
	pmp.SetIdempotencyKey(req.IdempotencyKey + "/payment-method")
	pm, err := g.client.V1PaymentMethods.Create(ctx, pmp)
	if err != nil {
		return cardpay.Authorization{}, g.fail(err)
	}
	pip := &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(minor), Currency: stripe.String(strings.ToLower(cur)),
		PaymentMethod: stripe.String(pm.ID), Confirm: stripe.Bool(true),
		CaptureMethod:      stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
		PaymentMethodTypes: []*string{stripe.String(string(stripe.PaymentMethodTypeCard))},
	}
	if req.Description != "" {
		pip.Description = stripe.String(req.Description)
	}
	pip.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := g.client.V1PaymentIntents.Create(ctx, pip)
	if err != nil {
		return cardpay.Authorization{}, g.fail(err)
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusRequiresCapture:
	case stripe.PaymentIntentStatusRequiresAction:
		return cardpay.Authorization{}, cardpay.ErrRequires3DS
	case stripe.PaymentIntentStatusRequiresPaymentMethod:
		reason := "card declined"
		if e := pi.LastPaymentError; e != nil && e.Msg != "" {
			reason = e.Msg
		}
		return cardpay.Authorization{}, &cardpay.DeclinedError{Reason: reason}
	default:
		return cardpay.Authorization{}, fmt.Errorf("stripe: hold %s is %s, not requires_capture", pi.ID, pi.Status)
	}
	return cardpay.Authorization{ID: pi.ID, Amount: req.Amount, Currency: cur, At: time.Unix(pi.Created, 0).UTC()}, nil
}

// Capture captures req.Amount of PaymentIntent req.ID (amount_to_capture); Stripe releases
// the rest of the hold.
func (g *Stripe) Capture(ctx context.Context, req cardpay.CaptureRequest) (cardpay.Captured, error) {
	if err := checkIntentID(req.ID); err != nil {
		return cardpay.Captured{}, err
	}
	if err := checkIdempotencyKey(req.IdempotencyKey); err != nil {
		return cardpay.Captured{}, err
	}
	cur, err := cardpay.CheckAmount(req.Amount, req.Currency)
	if err != nil {
		return cardpay.Captured{}, err
	}
	minor, err := minorUnits(req.Amount, cur)
	if err != nil {
		return cardpay.Captured{}, err
	}
	p := &stripe.PaymentIntentCaptureParams{AmountToCapture: stripe.Int64(minor)}
	p.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := g.client.V1PaymentIntents.Capture(ctx, req.ID, p)
	if err != nil {
		return cardpay.Captured{}, g.fail(err)
	}
	if pi.Status != stripe.PaymentIntentStatusSucceeded {
		return cardpay.Captured{}, fmt.Errorf("stripe: capture of %s left it %s, not succeeded", pi.ID, pi.Status)
	}
	return cardpay.Captured{ID: pi.ID, Amount: req.Amount, Currency: cur, At: time.Now().UTC()}, nil
}

// Release cancels PaymentIntent req.ID, which releases its hold.
func (g *Stripe) Release(ctx context.Context, req cardpay.ReleaseRequest) error {
	if err := checkIntentID(req.ID); err != nil {
		return err
	}
	if err := checkIdempotencyKey(req.IdempotencyKey); err != nil {
		return err
	}
	p := &stripe.PaymentIntentCancelParams{}
	p.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := g.client.V1PaymentIntents.Cancel(ctx, req.ID, p)
	if err != nil {
		return g.fail(err)
	}
	if pi.Status != stripe.PaymentIntentStatusCanceled {
		return fmt.Errorf("stripe: release of %s left it %s, not canceled", pi.ID, pi.Status)
	}
	return nil
}
