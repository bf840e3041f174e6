package request

import (
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// The damage-deposit actions (docs/money.md, "Damage-deposit holds"): the owner captures
// all or part of a held deposit with a reason, or releases it.

// Deposit action names and their fields.
const (
	CaptureDepositAction = "capturedeposit"
	ReleaseDepositAction = "releasedeposit"
	FieldReason          = "reason"
	MaxCaptureReason     = 500
)

// CaptureDeposit is a decoded capturedeposit body. Amount is positive with at most 3
// decimal places here; the booking's currency bounds its digits and the hold its size.
type CaptureDeposit struct {
	BookingID int
	Amount    decimal.Decimal
	Reason    string
}

// DecodeCaptureDeposit reads a capturedeposit body: bookingId, amount, reason (1–500).
func DecodeCaptureDeposit(body []byte) (CaptureDeposit, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) CaptureDeposit {
		var r CaptureDeposit
		r.BookingID, _ = o.Int(FieldBookingID, idRule(true))
		r.Amount, _ = o.Decimal(FieldAmount, fields.Dec{Required: true, Positive: true, Max: maxAmount, MaxScale: 3})
		r.Reason, _ = o.String(FieldReason, fields.Str{Required: true, Min: 1, Max: MaxCaptureReason})
		return r
	})
}

// ReleaseDeposit is a decoded releasedeposit body.
type ReleaseDeposit struct{ BookingID int }

// DecodeReleaseDeposit reads a releasedeposit body: bookingId.
func DecodeReleaseDeposit(body []byte) (ReleaseDeposit, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) ReleaseDeposit {
		var r ReleaseDeposit
		r.BookingID, _ = o.Int(FieldBookingID, idRule(true))
		return r
	})
}
