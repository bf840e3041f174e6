package cardpay

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The gateways a payment is counted under (vros.payments' label gateway): the test gateway
// of sandbox accounts, Stripe, none (a live property without a card payment method: refused
// before any provider is asked), and manual, a payment recorded by the owner
// (addbookingpayment).
const (
	NameTest   = "test"
	NameStripe = "stripe"
	NameNone   = "none"
	NameManual = "manual"
)

// The outcomes of a payment (vros.payments' label outcome).
const (
	OutcomeSuccess  = "success"
	OutcomeDeclined = "declined" // the card refused, or one needing 3-D Secure
	OutcomeError    = "error"    // the gateway failed or could not be asked
)

// Payments counts card charges and recorded payments in vros.payments by gateway and
// outcome. A nil *Payments counts nothing.
type Payments struct {
	counter metric.Int64Counter
	sets    map[[2]string]metric.MeasurementOption // gateway, outcome: built once
}

// NewPayments returns the counter of meter; nil for a nil meter.
func NewPayments(meter metric.Meter) *Payments {
	if meter == nil {
		return nil
	}
	c, _ := meter.Int64Counter("vros.payments", metric.WithUnit("{payment}"),
		metric.WithDescription("Card charges and recorded payments, by gateway and outcome."))
	p := &Payments{counter: c, sets: map[[2]string]metric.MeasurementOption{}}
	for _, g := range []string{NameTest, NameStripe, NameNone, NameManual} {
		for _, o := range []string{OutcomeSuccess, OutcomeDeclined, OutcomeError} {
			set := metric.WithAttributeSet(attribute.NewSet(attribute.String("gateway", g), attribute.String("outcome", o)))
			p.sets[[2]string{g, o}] = set
			if c != nil {
				c.Add(context.Background(), 0, set) // exported at 0 from the start
			}
		}
	}
	return p
}

// Count counts one payment through gateway with outcome (gateway and outcome are one of the
// names above; any other is not counted).
func (p *Payments) Count(ctx context.Context, gateway, outcome string) {
	if p == nil {
		return
	}
	if set, ok := p.sets[[2]string{gateway, outcome}]; ok {
		p.counter.Add(ctx, 1, set)
	}
}

// Charged counts a charge through gateway that ended with err.
func (p *Payments) Charged(ctx context.Context, gateway string, err error) {
	p.Count(ctx, gateway, Outcome(err))
}

// Outcome is the outcome of a charge that returned err.
func Outcome(err error) string {
	var d *DeclinedError
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.As(err, &d), errors.Is(err, ErrRequires3DS):
		return OutcomeDeclined
	}
	return OutcomeError
}
