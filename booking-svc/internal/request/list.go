package request

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// Cancel is a decoded cancel body. RefundAmount, when sent, overrides the refund the
// booking's policy gives (docs/money.md, "Refunds"): 0 or more, with RefundReason; that it is
// at most what was paid, in the booking currency's digits, is the domain's check.
type Cancel struct {
	BookingID    int
	RefundAmount *decimal.Decimal
	RefundReason string
}

// MaxRefundReason is the longest refundReason, in characters.
const MaxRefundReason = 500

// DecodeCancel reads a cancel body.
func DecodeCancel(body []byte) (Cancel, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) Cancel {
		id, _ := o.Int(FieldBookingID, idRule(true))
		c := Cancel{BookingID: id}
		if o.Has("refundAmount") {
			if amt, ok := o.Decimal("refundAmount", fields.Dec{Max: maxAmount}); ok {
				c.RefundAmount = &amt
			}
			c.RefundReason, _ = o.String("refundReason", fields.Str{Required: true, Min: 1, Max: MaxRefundReason})
		} else if o.Has("refundReason") {
			o.Add("refundReason", "is sent only with refundAmount")
		}
		return c
	})
}

// RetryRefund is a decoded retryrefund body.
type RetryRefund struct {
	BookingID int
}

// DecodeRetryRefund reads a retryrefund body.
func DecodeRetryRefund(body []byte) (RetryRefund, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) RetryRefund {
		id, _ := o.Int(FieldBookingID, idRule(true))
		return RetryRefund{BookingID: id}
	})
}

// Paging of listbooking. The spec fixes the default limit; the maximum is
// ours.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	MaxKeyword   = 100
)

// List is a decoded listbooking body. Zero ids and zero dates are filters
// not sent.
type List struct {
	UserID     int
	BookingID  int
	PropertyID int
	BrandID    int
	Page       int // from 1
	Limit      int // 1 to MaxLimit
	Checkin    time.Time
	Checkout   time.Time
	Keyword    string // matched against the party's names and email
}

// Offset is the number of bookings before the page.
func (l List) Offset() int { return (l.Page - 1) * l.Limit }

// Overlaps reports whether a booking staying from checkin to checkout
// passes the date filter: it overlaps [l.Checkin, l.Checkout), so a stay
// that checks out on l.Checkin or checks in on l.Checkout does not match.
// A filter date not sent leaves that side open.
func (l List) Overlaps(checkin, checkout time.Time) bool {
	return (l.Checkout.IsZero() || checkin.Before(l.Checkout)) &&
		(l.Checkin.IsZero() || checkout.After(l.Checkin))
}

// DecodeList reads a listbooking body.
func DecodeList(body []byte) (List, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) List {
		var l List
		l.UserID, _ = o.Int(FieldUserID, idRule(false))
		l.BookingID, _ = o.Int(FieldBookingID, idRule(false))
		l.PropertyID, _ = o.Int(FieldPropertyID, idRule(false))
		l.BrandID, _ = o.Int(FieldBrandID, idRule(false))
		l.Page = 1
		if p, ok := o.Int("page", idRule(false)); ok {
			l.Page = p
		}
		l.Limit = DefaultLimit
		if n, ok := o.Int("limit", fields.Int{Min: 1, Max: MaxLimit}); ok {
			l.Limit = n
		}
		var inOK, outOK bool
		l.Checkin, inOK = o.Date(FieldCheckin, false)
		l.Checkout, outOK = o.Date(FieldCheckout, false)
		l.Keyword, _ = o.String("keyword", fields.Str{Max: MaxKeyword})
		if inOK && outOK && !l.Checkout.After(l.Checkin) {
			o.Add(FieldCheckout, "must be after checkin")
		}
		return l
	})
}
