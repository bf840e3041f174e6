package store

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
)

// eventRefund is a cancellation's refund as booking events carry it (docs/money.md):
// status, amounts and the policy it was computed with, never its parts' gateway ids and
// keys nor the owner's reason (free text that may name the guest). Refunded sums the parts
// that succeeded, with the refund amount's digits (its currency's).
func eventRefund(f *RefundRec, currency string) *contract.BookingRefund {
	if f == nil {
		return nil
	}
	done := decimal.Zero
	for _, p := range f.Parts {
		if p.Status == contract.RefundSucceeded {
			if a, err := decimal.NewFromString(p.Amount); err == nil {
				done = done.Add(a)
			}
		}
	}
	digits := int32(0)
	if _, frac, ok := strings.Cut(f.Amount, "."); ok {
		digits = int32(len(frac))
	}
	return &contract.BookingRefund{Status: f.Status, Amount: f.Amount, Refunded: done.StringFixed(digits), Currency: currency,
		Policy: f.Policy, Percent: f.Percent, Override: f.Override}
}

// eventDeposit is a damage-deposit hold as booking events carry it: never the gateway's
// authorization id, its step keys nor the owner's capture reason.
func eventDeposit(d *DepositRec) *contract.BookingDeposit {
	if d == nil {
		return nil
	}
	return &contract.BookingDeposit{Status: d.Status, Amount: d.Amount, Currency: d.Currency, DueDate: d.DueDate,
		CapturedAmount: d.CapturedAmount, HeldAt: d.HeldAt, ReleaseOn: d.ReleaseOn, ReleasedAt: d.ReleasedAt,
		CapturedAt: d.CapturedAt, Reauthorizations: d.Reauthorizations, LastError: d.LastError}
}

// eventChargeFailures are the automatic charges the card refused as events carry them:
// never the gateway's ids or idempotency keys.
func eventChargeFailures(fs []ChargeFailureRec) []contract.BookingChargeFailure {
	var out []contract.BookingChargeFailure
	for _, f := range fs {
		out = append(out, contract.BookingChargeFailure{ID: f.ID, Amount: f.Amount, Currency: f.Currency, At: f.At.UTC(), Reason: f.Reason})
	}
	return out
}
