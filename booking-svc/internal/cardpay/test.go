package cardpay

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/booking-svc/internal/card"
)

// Test card numbers. Any other Luhn-valid number is approved; see
// docs/interface-b-fields.md.
const (
	CardVisa                = "4242424242424242"
	CardMastercard          = "5555555555554444"
	CardAmex                = "378282246310005"
	CardDeclined            = "4000000000000002"
	CardInsufficientFunds   = "4000000000009995"
	CardExpired             = "4000000000000069"
	CardIncorrectCVC        = "4000000000000127"
	Card3DSRequired         = "4000000000003220"
	Card3DSRequiredAlways   = "4000002760003184"
	ReasonDeclined          = "card declined"
	ReasonInsufficientFunds = "insufficient funds"
	ReasonExpired           = "expired card"
	ReasonIncorrectCVC      = "incorrect cvc"
	ReasonInvalidNumber     = "invalid card number"
)

// declines maps the test numbers that are refused to the reason given; an
// empty reason means 3-D Secure is required.
var declines = map[string]string{
	CardDeclined:          ReasonDeclined,
	CardInsufficientFunds: ReasonInsufficientFunds,
	CardExpired:           ReasonExpired,
	CardIncorrectCVC:      ReasonIncorrectCVC,
	Card3DSRequired:       "",
	Card3DSRequiredAlways: "",
}

// Test is an in-memory gateway for development and tests. It is safe for
// concurrent use. Beyond the test numbers it checks what a real gateway
// checks: a positive amount with no more decimals than the currency has, a
// Luhn-valid number, an expiry month not yet over, and idempotency keys.
type Test struct {
	now func() time.Time

	mu      sync.Mutex
	seq     int
	charges []Charge
	byKey   map[string]keyed
}

type keyed struct {
	req    ChargeRequest
	charge Charge
	err    error
}

// NewTest returns a Test gateway reading the time from now (time.Now in a
// service, a fixed clock in tests).
func NewTest(now func() time.Time) *Test {
	if now == nil {
		panic("cardpay.NewTest: nil clock")
	}
	return &Test{now: now, byKey: map[string]keyed{}}
}

// Charge charges req.Card, or refuses it with a *DeclinedError,
// ErrRequires3DS or an error wrapping ErrInvalidRequest.
func (g *Test) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	if err := ctx.Err(); err != nil {
		return Charge{}, err
	}
	cur, err := CheckAmount(req.Amount, req.Currency)
	if err != nil {
		return Charge{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if req.IdempotencyKey != "" {
		if prev, ok := g.byKey[req.IdempotencyKey]; ok {
			if !sameRequest(prev.req, req) {
				return Charge{}, fmt.Errorf("%w: idempotency key %q was used for another charge", ErrInvalidRequest, req.IdempotencyKey)
			}
			return prev.charge, prev.err
		}
	}
	at := g.now().UTC()
	var ch Charge
	err = outcome(req.Card, at)
	if err == nil {
		g.seq++
		ch = Charge{
			ID:       fmt.Sprintf("ch_test_%06d", g.seq),
			Amount:   req.Amount,
			Currency: cur,
			Last4:    req.Card.Last4(),
			Brand:    req.Card.Brand(),
			At:       at,
		}
		g.charges = append(g.charges, ch)
	}
	if req.IdempotencyKey != "" {
		g.byKey[req.IdempotencyKey] = keyed{req: req, charge: ch, err: err}
	}
	return ch, err
}

// Charges lists the successful charges, oldest first.
func (g *Test) Charges() []Charge {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Charge(nil), g.charges...)
}

func outcome(c card.Card, at time.Time) error {
	if reason, ok := declines[c.Number]; ok {
		if reason == "" {
			return ErrRequires3DS
		}
		return &DeclinedError{Reason: reason}
	}
	switch {
	case !card.Luhn(c.Number) || len(c.Number) < card.MinDigits || len(c.Number) > card.MaxDigits:
		return &DeclinedError{Reason: ReasonInvalidNumber}
	case c.ExpMonth < 1 || c.ExpMonth > 12 || c.Expired(at):
		return &DeclinedError{Reason: ReasonExpired}
	}
	return nil
}

// CheckAmount refuses amounts that are not positive or have more decimal
// places than the currency's minor unit (2 for EUR, 0 for JPY), and
// returns the currency code upper-cased.
func CheckAmount(amount decimal.Decimal, code string) (string, error) {
	u, err := currency.ParseISO(code)
	if err != nil || u.String() == "XXX" {
		return "", fmt.Errorf("%w: currency %q is not an ISO 4217 code", ErrInvalidRequest, code)
	}
	if amount.Sign() <= 0 {
		return "", fmt.Errorf("%w: amount must be greater than 0", ErrInvalidRequest)
	}
	scale, _ := currency.Standard.Rounding(u)
	if !amount.Equal(amount.Truncate(int32(scale))) {
		return "", fmt.Errorf("%w: amount %s has more than %d decimal places for %s", ErrInvalidRequest, amount, scale, u)
	}
	return u.String(), nil
}

func sameRequest(a, b ChargeRequest) bool {
	return a.Amount.Equal(b.Amount) && strings.EqualFold(a.Currency, b.Currency) && a.Card.Number == b.Card.Number
}
