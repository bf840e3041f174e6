package request

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// PaymentAction is one of the three booking-payment actions.
type PaymentAction string

// Booking-payment actions (their interface B action names).
const (
	AddPayment    PaymentAction = "addbookingpayment"
	UpdatePayment PaymentAction = "updatebookingpayment"
	RemovePayment PaymentAction = "removebookingpayment"
)

// Bounds of B3.
const (
	MaxDescription = 1000
	MaxPaymentID   = 64
	// MaxFutureTime is how far ahead of now a payment's time may be; a day
	// absorbs clients' clock and time-zone errors.
	MaxFutureTime = 24 * time.Hour
)

// Payment is a decoded booking-payment body (B3). Which fields are set
// depends on Action:
//
//	addbookingpayment     BookingID, Amount, and the optional fields
//	updatebookingpayment  PaymentID, Amount, and the optional fields
//	removebookingpayment  PaymentID
//
// A nil optional field was not sent: on add, the time is now, the currency
// the booking's and the description empty; on update, the stored value is
// kept. A pointer to "" clears the description or selects the booking's
// currency.
type Payment struct {
	Action      PaymentAction
	BookingID   int
	PaymentID   string
	Amount      decimal.Decimal // > 0, at most 2 decimal places
	Description *string
	Time        *time.Time // UTC, whole seconds
	Currency    *string
}

var (
	paymentIDText = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	digitsText    = regexp.MustCompile(`^[0-9]+$`)
	amountRule    = fields.Dec{Required: true, Positive: true, Max: maxAmount, MaxScale: 2}
)

const timeMsg = "must be a Unix timestamp in seconds, YYYY-MM-DD HH:MM:SS or YYYY-MM-DD (UTC)"

// DecodePayment reads the body of a booking-payment action. now bounds the
// payment time.
func DecodePayment(body []byte, action PaymentAction, now time.Time) (Payment, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) Payment {
		p := Payment{Action: action}
		switch action {
		case AddPayment:
			p.BookingID, _ = o.Int(FieldBookingID, idRule(true))
		case UpdatePayment, RemovePayment:
			p.PaymentID = readPaymentID(o, FieldPaymentID)
		default:
			v.Add(FieldAction, "must be one of addbookingpayment, updatebookingpayment, removebookingpayment")
			return p
		}
		if action == RemovePayment {
			return p
		}
		p.Amount, _ = o.Decimal(FieldAmount, amountRule)
		if s, ok := o.String(FieldDescription, fields.Str{Max: MaxDescription}); ok {
			p.Description = &s
		}
		if t, ok := readTime(o, FieldTime, now); ok {
			p.Time = &t
		}
		if c, ok := readCurrency(o, FieldCurrency); ok {
			p.Currency = &c
		}
		return p
	})
}

// readPaymentID reads B3's paymentId, a string. Clients that saw a numeric
// id may send it as a JSON number; then it must be a whole number.
func readPaymentID(o *fields.Object, name string) string {
	kind := o.Kind(name)
	s, ok := o.String(name, fields.Str{Required: true, Max: MaxPaymentID})
	if !ok {
		return ""
	}
	switch {
	case kind == fields.KindNumber && !digitsText.MatchString(s):
		o.Add(name, "must be a whole number or a payment id string")
	case !paymentIDText.MatchString(s):
		o.Add(name, "must contain only letters, digits, - and _")
	default:
		return s
	}
	return ""
}

// readTime reads a payment time: a Unix timestamp in seconds (a JSON number
// or a string of digits), "YYYY-MM-DD HH:MM:SS", "YYYY-MM-DD" (both UTC)
// or RFC 3339 with an offset. It may be at most MaxFutureTime after now.
func readTime(o *fields.Object, name string, now time.Time) (time.Time, bool) {
	s, ok := o.String(name, fields.Str{})
	if !ok || strings.TrimSpace(s) == "" {
		return time.Time{}, false // blank: not sent, the default applies
	}
	t, ok := parseTime(s)
	if !ok {
		o.Add(name, timeMsg)
		return time.Time{}, false
	}
	if t.After(now.Add(MaxFutureTime)) {
		o.Add(name, "must not be more than 1 day in the future")
		return time.Time{}, false
	}
	return t, true
}

func parseTime(s string) (time.Time, bool) {
	if digitsText.MatchString(s) {
		if len(s) > 12 { // beyond year 33658: milliseconds sent by mistake
			return time.Time{}, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.Unix(n, 0).UTC(), true
	}
	for _, layout := range []string{time.DateTime, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil && len(s) == len(layout) {
			return t, true
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Truncate(time.Second), true
	}
	return time.Time{}, false
}
