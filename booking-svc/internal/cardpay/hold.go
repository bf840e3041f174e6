package cardpay

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
)

// Authorizations: a damage deposit is held on the guest's card, never charged, until it is
// released or (all or part of it) captured (docs/money.md, "Damage-deposit holds"). Each
// request carries its idempotency key: the same key answers the first outcome, so a step
// repeated after a restart holds, captures or releases once. Errors are Charge's: a
// *DeclinedError or ErrRequires3DS is the card's refusal, an error wrapping
// ErrInvalidRequest the request's fault (a capture above the hold, a hold no longer held
// under another key), anything else transient.

// AuthorizeRequest holds Amount in Currency on Card. Whose hold it is (AccountID, Sandbox,
// PropertyID) picks the gateway, as for a charge.
type AuthorizeRequest struct {
	Amount         decimal.Decimal // > 0, in Currency
	Currency       string          // ISO 4217
	Card           card.Card
	Description    string
	IdempotencyKey string
	AccountID      string
	Sandbox        bool
	PropertyID     int64
}

// Authorization is a hold the gateway placed (Stripe: a PaymentIntent awaiting capture).
type Authorization struct {
	ID       string
	Amount   decimal.Decimal
	Currency string
	At       time.Time
}

// CaptureRequest captures Amount (> 0, at most what is held) of authorization ID; the rest
// of the hold is released.
type CaptureRequest struct {
	ID             string
	Amount         decimal.Decimal
	Currency       string
	IdempotencyKey string
	AccountID      string
	Sandbox        bool
	PropertyID     int64
}

// Captured is what a capture took: Amount of authorization ID, at At.
type Captured struct {
	ID       string
	Amount   decimal.Decimal
	Currency string
	At       time.Time
}

// ReleaseRequest releases authorization ID whole.
type ReleaseRequest struct {
	ID             string
	IdempotencyKey string
	AccountID      string
	Sandbox        bool
	PropertyID     int64
}
