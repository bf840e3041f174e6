package route

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/vros/vros/booking-svc/internal/cardpay"
)

// Refund refunds req through the gateway that took its charge: the test gateway for a
// sandbox booking, the property's Stripe account otherwise (docs/money.md, "Refunds"). A live
// property without a Stripe method refuses it (a *cardpay.RefusedError): the owner refunds
// outside vros.
func (r *Router) Refund(ctx context.Context, req cardpay.RefundRequest) (cardpay.Refund, error) {
	if req.Sandbox {
		return r.Test.Refund(ctx, req)
	}
	m, ok, err := r.Methods.Stripe(ctx, req.AccountID, req.PropertyID)
	switch {
	case err != nil:
		return cardpay.Refund{}, fmt.Errorf("payment method of property %d: %w", req.PropertyID, err)
	case !ok:
		return cardpay.Refund{}, &cardpay.RefusedError{Reason: ReasonNoMethod}
	}
	return r.stripe(m).Refund(ctx, req)
}

// Refund refunds req.Amount of the PaymentIntent req.ChargeID through Stripe's Refunds API,
// under req.IdempotencyKey, so that a retried refund is answered the refund Stripe made. A
// refusal (the charge already refunded, an invalid request, a card error, a key Stripe
// refuses, a refund Stripe answers failed or canceled) is a *cardpay.RefusedError; Stripe
// unreachable or failing is an error to retry. A refund Stripe answers pending is made: Stripe
// completes it.
func (g *Stripe) Refund(ctx context.Context, req cardpay.RefundRequest) (cardpay.Refund, error) {
	cur, err := cardpay.CheckRefund(req)
	if err != nil {
		return cardpay.Refund{}, err
	}
	minor, err := minorUnits(req.Amount, cur)
	if err != nil {
		return cardpay.Refund{}, err
	}
	p := &stripe.RefundCreateParams{
		PaymentIntent: stripe.String(req.ChargeID), Amount: stripe.Int64(minor),
		Reason: stripe.String(string(stripe.RefundReasonRequestedByCustomer)),
	}
	if req.Reason != "" {
		p.Metadata = map[string]string{"reason": truncate(req.Reason, 500)}
	}
	if req.IdempotencyKey != "" {
		p.SetIdempotencyKey(req.IdempotencyKey)
	}
	re, err := g.client.V1Refunds.Create(ctx, p)
	if err != nil {
		return cardpay.Refund{}, g.refundFail(err)
	}
	switch re.Status {
	case stripe.RefundStatusFailed, stripe.RefundStatusCanceled:
		reason := "stripe refund " + re.ID + " is " + string(re.Status)
		if re.FailureReason != "" {
			reason += ": " + strings.ReplaceAll(string(re.FailureReason), "_", " ")
		}
		return cardpay.Refund{}, &cardpay.RefusedError{Reason: reason}
	}
	return cardpay.Refund{ID: re.ID, Amount: req.Amount, Currency: cur, At: time.Unix(re.Created, 0).UTC()}, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// refundFail is fail for a refund: Stripe's rate limit is to retry, the rest as refundError.
func (g *Stripe) refundFail(err error) error {
	var se *stripe.Error
	if errors.As(err, &se) && (se.HTTPStatusCode == http.StatusTooManyRequests || se.Code == stripe.ErrorCodeRateLimit) {
		return fmt.Errorf("stripe: rate limited (HTTP %d), to retry later", se.HTTPStatusCode)
	}
	return refundError(g.fail(err))
}

// refundError is a charge's gateway error as a refund's: a card's refusal (a key Stripe
// refuses too) is the refund's refusal, and so is an invalid request (cardpay.Refused);
// anything else is to retry.
func refundError(err error) error {
	if reason, ok := cardpay.Declined(err); ok {
		return &cardpay.RefusedError{Reason: reason}
	}
	if errors.Is(err, cardpay.ErrRequires3DS) {
		return &cardpay.RefusedError{Reason: err.Error()}
	}
	return err
}
