// Package route charges each card through the gateway of its account and property: the
// test gateway for a sandbox account, the property's own Stripe account for a live one
// (docs/booking.md, "Payments"). Package cardpay holds what every gateway shares; this
// one the providers and their credentials, so the booking domain never depends on them.
package route

import (
	"context"
	"fmt"
	"net/http"

	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/libs/config"
)

// ReasonNoMethod is the refusal of a live account's charge on a property with no card
// payment method this service can charge through.
const ReasonNoMethod = "no card payment method is set up for this property"

// Methods tells which card payment method a property has (A5, kept by property-svc).
type Methods interface {
	// Stripe returns the property's Stripe method; ok is false when the property has none
	// (or one without a secret key).
	Stripe(ctx context.Context, account string, propertyID int64) (m StripeMethod, ok bool, err error)
}

// StripeMethod is a property's Stripe method (A5 `stripe`).
type StripeMethod struct {
	// SecretKey (A5 `secret_key`) makes every Stripe request; it never leaves booking-svc and
	// never prints (config.Secret).
	SecretKey config.Secret
	// PublishableKey (A5 `public_key`, getpayment's `publishable_key`) is what the guest's
	// browser loads Stripe.js with to confirm a PaymentIntent; it is public by design.
	PublishableKey string
}

// Router is the Gateway booking-svc charges through. It picks the gateway of each charge:
// a sandbox account's charges reach only the test gateway, never a real provider; a live
// account's go to the property's own Stripe account. A live property without a Stripe
// method refuses the charge (status 111, ReasonNoMethod): live accounts never reach the test
// gateway, so a booking cannot be paid with a test card number.
type Router struct {
	Test      *cardpay.Test // for sandbox accounts
	Methods   Methods
	StripeURL string       // StripeAPI in production
	HTTP      *http.Client // for the Stripe requests; nil: the library's default
	// Payments counts every charge by the gateway it went to and its outcome (nil: none).
	Payments *cardpay.Payments
}

// Charge charges req through the gateway of its account and property.
func (r *Router) Charge(ctx context.Context, req cardpay.ChargeRequest) (cardpay.Charge, error) {
	name, ch, err := r.charge(ctx, req)
	r.Payments.Charged(ctx, name, err)
	return ch, err
}

// charge is Charge, telling the gateway it went to.
func (r *Router) charge(ctx context.Context, req cardpay.ChargeRequest) (string, cardpay.Charge, error) {
	if req.Sandbox {
		ch, err := r.Test.Charge(ctx, req)
		return cardpay.NameTest, ch, err
	}
	m, ok, err := r.Methods.Stripe(ctx, req.AccountID, req.PropertyID)
	switch {
	case err != nil:
		return cardpay.NameStripe, cardpay.Charge{}, fmt.Errorf("payment method of property %d: %w", req.PropertyID, err)
	case !ok:
		return cardpay.NameNone, cardpay.Charge{}, &cardpay.DeclinedError{Reason: ReasonNoMethod}
	}
	ch, err := r.stripe(m).Charge(ctx, req)
	return cardpay.NameStripe, ch, err
}

// stripe is the Stripe gateway of the property whose method is m.
func (r *Router) stripe(m StripeMethod) *Stripe {
	return NewStripe(m.SecretKey.Reveal(), r.StripeURL, r.HTTP)
}
