// Package cardpay charges payment cards: the requests, answers and errors
// of a card gateway, which the booking domain calls through its Gateway
// interface for create and update with paymentCharge 1 and for automatic
// payments; Test is a gateway that behaves like a real one for documented
// test card numbers (docs/interface-b-fields.md, "Test cards").
//
// Errors map to interface B statuses: a *DeclinedError is status 111 with
// its Reason appended to the message, ErrRequires3DS is status 112. Any
// other error (ErrInvalidRequest, a network failure of a real gateway) is
// not the card's fault and is an internal error.
package cardpay

import (
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
)

// ChargeRequest is one charge. IdempotencyKey makes retries safe: a second
// request with the same key returns the first outcome without charging
// again. Use a key derived from what is paid, such as
// "booking/<id>/payment/<n>".
type ChargeRequest struct {
	Amount         decimal.Decimal // > 0, in Currency
	Currency       string          // ISO 4217
	Card           card.Card
	Description    string
	IdempotencyKey string
	// Whose payment it is: the Router charges through the property's own payment method, or
	// the test gateway for a sandbox account.
	AccountID  string
	Sandbox    bool
	PropertyID int64
}

// Charge is a successful charge.
type Charge struct {
	ID       string
	Amount   decimal.Decimal
	Currency string
	Last4    string
	Brand    string
	At       time.Time
}

// DeclinedError says the card was refused. Reason is the gateway's text,
// to be appended to the status 111 message ("card declined",
// "insufficient funds", ...).
type DeclinedError struct {
	Reason string
}

func (e *DeclinedError) Error() string { return "card declined: " + e.Reason }

// ErrRequires3DS says the card needs 3-D Secure authentication, which
// interface B cannot complete (status 112).
var ErrRequires3DS = errors.New("the card requires 3-D Secure authentication")

// ErrInvalidRequest is wrapped by errors about the request rather than the
// card: an amount that is not positive, an unknown currency, a reused
// idempotency key with other details.
var ErrInvalidRequest = errors.New("invalid charge request")

// Declined reports whether err is a card refusal and returns its reason.
func Declined(err error) (reason string, ok bool) {
	var d *DeclinedError
	if errors.As(err, &d) {
		return d.Reason, true
	}
	return "", false
}

// IntentRequest asks a live property's card gateway (Stripe) for a PaymentIntent the guest's
// browser confirms with the card typed into the gateway's own field, so that the card number
// never reaches vros (the booking engine, docs/booking-engine.md). IdempotencyKey makes a
// retried request answer the same intent.
type IntentRequest struct {
	AccountID string
	// Sandbox is the account's mode: a sandbox account pays through the test gateway, so the
	// Router refuses its intents (ErrInvalidRequest) rather than reach Stripe.
	Sandbox        bool
	PropertyID     int64
	Amount         decimal.Decimal // > 0, in Currency
	Currency       string          // ISO 4217
	Description    string
	IdempotencyKey string
	Metadata       map[string]string
}

// Intent is a PaymentIntent as the gateway tells it. Status is the gateway's own word
// (Stripe: requires_payment_method, requires_confirmation, requires_action, processing,
// succeeded, canceled). ClientSecret and PublishableKey are what the browser needs to
// confirm it; neither is a secret of the account.
type Intent struct {
	ID             string
	Status         string
	Amount         decimal.Decimal
	Currency       string
	ClientSecret   string
	PublishableKey string
}

// IntentSucceeded is the Status of an intent whose payment went through.
const IntentSucceeded = "succeeded"

// ErrNoIntents says the property has no payment method that takes cards in the guest's
// browser (a live property without Stripe), so the engine cannot take its payment.
var ErrNoIntents = errors.New("no card payment method that confirms in the browser is set up for this property")
