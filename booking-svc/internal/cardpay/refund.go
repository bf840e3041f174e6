package cardpay

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// RefundRequest gives back Amount of the charge ChargeID (a Charge's ID: the test gateway's
// charge, or a Stripe PaymentIntent) through the gateway that took it: the test gateway for a
// sandbox booking, the property's Stripe account otherwise (docs/money.md, "Refunds").
// IdempotencyKey makes retries safe: a second request with the same key answers the first
// refund without refunding again.
type RefundRequest struct {
	AccountID      string
	Sandbox        bool
	PropertyID     int64
	ChargeID       string
	Amount         decimal.Decimal // > 0, in Currency, at most what remains of the charge
	Currency       string          // ISO 4217, the charge's
	IdempotencyKey string
	// Reason is the refund's reason as vros records it (the policy, or the owner's override
	// reason), kept by the gateway as metadata.
	Reason string
}

// Refund is a refund the gateway made.
type Refund struct {
	ID       string
	Amount   decimal.Decimal
	Currency string
	At       time.Time
}

// RefusedError says the gateway refused the refund for good (the charge was already
// refunded, is disputed, the amount is more than remains, the account's key is refused…):
// trying again with the same request cannot succeed. Any other error of Refund (the gateway
// unreachable, its own failure) is worth retrying under the same key.
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return "refund refused: " + e.Reason }

// Refused reports whether err is a refusal of a refund and returns its reason: a
// *RefusedError, or an error about the request itself (ErrInvalidRequest), which the same
// request repeats.
func Refused(err error) (reason string, ok bool) {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Reason, true
	}
	if errors.Is(err, ErrInvalidRequest) {
		return err.Error(), true
	}
	return "", false
}

// CheckRefund checks what every gateway checks of a refund before asking: a charge and an
// amount the currency can hold; it returns the currency code upper-cased.
func CheckRefund(req RefundRequest) (string, error) {
	if req.ChargeID == "" {
		return "", fmt.Errorf("%w: a refund names the charge it refunds", ErrInvalidRequest)
	}
	return CheckAmount(req.Amount, req.Currency)
}
