package property

import (
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// PaymentType is how the rent of a short stay is collected (A3).
type PaymentType string

// Payment types of A3.
const (
	PayFull    PaymentType = "Full"
	PayPartial PaymentType = "Partial"
	PayNone    PaymentType = "None"
)

// Due is the moment a payment falls due (A3 is_due_at).
type Due string

// Moments of A3. Each payment accepts a subset, listed in its decoder.
const (
	DueBooking          Due = "Booking"
	DueArrival          Due = "Arrival"
	DueCheckout         Due = "Check-out"
	DueXDayPriorArrival Due = "XDayPriorArrival"
	DueXDayAfterBooking Due = "XDayAfterBooking"
)

// AmountType says how a payment's amount is read (A3 amount_type).
type AmountType string

// Amount types of A3.
const (
	Flat                AmountType = "Flat"
	PercentOfRent       AmountType = "PercentOfRent"
	PercentOfGrandTotal AmountType = "PercentOfGrandTotal"
)

// PropertyRef names a property either by the caller's internal code or by
// the service's numeric id; exactly one is set.
type PropertyRef struct {
	InternalCode string
	ID           int
}

// Deadline is when a payment falls due. XDay counts the days of the
// XDayPriorArrival and XDayAfterBooking moments and is 0 for the others.
type Deadline struct {
	Due  Due
	XDay int
}

// Charge is a payment of an amount at a deadline. Amount is money when
// AmountType is Flat and a percentage otherwise.
type Charge struct {
	Deadline
	AmountType AmountType
	Amount     decimal.Decimal
}

// Policy is the A3 short-stay payment policy of a property.
type Policy struct {
	Property    PropertyRef
	PaymentType PaymentType
	// DamageDeposit is nil when the property takes no deposit.
	DamageDeposit *Charge
	// FullPayment is set when PaymentType is Full.
	FullPayment *Deadline
	// FirstPayment and RemainingPayment are set when PaymentType is Partial.
	FirstPayment     *Charge
	RemainingPayment *Deadline
}

var (
	depositDues   = []Due{DueBooking, DueArrival, DueCheckout, DueXDayPriorArrival}
	fullDues      = []Due{DueBooking, DueArrival, DueCheckout, DueXDayPriorArrival, DueXDayAfterBooking}
	firstDues     = []Due{DueBooking, DueArrival, DueXDayPriorArrival, DueXDayAfterBooking}
	remainingDues = []Due{DueCheckout, DueArrival, DueXDayPriorArrival, DueXDayAfterBooking}
)

// DecodePolicy reads an /api/property-policy body.
//
// Choices where the spec is silent: the damage deposit is optional (absent,
// null, [] or {} mean no deposit) and is allowed with every payment type; an
// x_day sent for a moment that does not count days is ignored; a payment
// object that does not belong to the payment type is a violation.
func DecodePolicy(body []byte) (Policy, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	p := Policy{Property: readPropertyRef(o)}
	ss := o.Object("short_stay", true)
	pt, ptOK := ss.String("payment_type", fields.Str{Required: true, IgnoreCase: true,
		OneOf: []string{string(PayFull), string(PayPartial), string(PayNone)}})
	p.PaymentType = PaymentType(pt)

	if !ss.Empty("damage_deposit") {
		if dd := ss.Object("damage_deposit", true); dd != nil {
			p.DamageDeposit = ptr(readCharge(dd, depositDues, 255, false))
		}
	}
	if allowed(ss, "payment_full", p.PaymentType, PayFull, ptOK) {
		if pf := ss.Object("payment_full", true); pf != nil {
			p.FullPayment = ptr(readDeadline(pf, fullDues, 255))
		}
	}
	if allowed(ss, "payment_partial", p.PaymentType, PayPartial, ptOK) {
		if pp := ss.Object("payment_partial", true); pp != nil {
			if fp := pp.Object("first_payment", true); fp != nil {
				p.FirstPayment = ptr(readCharge(fp, firstDues, 365, true))
			}
			if rp := pp.Object("remaining_payment", true); rp != nil {
				p.RemainingPayment = ptr(readDeadline(rp, remainingDues, 365))
			}
		}
	}
	if err := v.Err(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// allowed reports whether the payment object name should be read: it is
// required when the payment type is want and forbidden for any other valid
// payment type. With an invalid payment type whatever was sent is checked.
func allowed(ss *fields.Object, name string, pt, want PaymentType, ptOK bool) bool {
	sent := !ss.Empty(name)
	switch {
	case !ptOK:
		return sent
	case pt == want && !sent:
		ss.Addf(name, "is required when payment_type is %s", want)
	case pt != want && sent:
		ss.Addf(name, "must not be sent when payment_type is %s", pt)
	}
	return pt == want && sent
}

// readPropertyRef reads internal_code or, in its place, property_id.
func readPropertyRef(o *fields.Object) PropertyRef {
	var ref PropertyRef
	hasCode, hasID := !o.Empty("internal_code"), !o.Empty("property_id")
	switch {
	case hasCode && hasID:
		o.Add("property_id", "must not be sent together with internal_code")
	case hasID:
		ref.ID, _ = o.Int("property_id", fields.Int{Required: true, Min: 1, Max: 2147483647})
	case hasCode:
		ref.InternalCode, _ = o.String("internal_code", internalCodeRule)
	default:
		o.Add("internal_code", "is required unless property_id is sent")
	}
	return ref
}

func readDeadline(o *fields.Object, dues []Due, maxXDay int64) Deadline {
	names := make([]string, len(dues))
	for i, d := range dues {
		names[i] = string(d)
	}
	due, ok := o.String("is_due_at", fields.Str{Required: true, Max: 255, OneOf: names, IgnoreCase: true})
	d := Deadline{Due: Due(due)}
	if ok && (d.Due == DueXDayPriorArrival || d.Due == DueXDayAfterBooking) {
		d.XDay, _ = o.Int("x_day", fields.Int{Required: true, Min: 1, Max: maxXDay})
	}
	return d
}

// readCharge reads a deadline plus an amount: at most 2147483647 when Flat,
// at most 99 for a percent type, 2 decimal places; positive requires > 0.
func readCharge(o *fields.Object, dues []Due, maxXDay int64, positive bool) Charge {
	c := Charge{Deadline: readDeadline(o, dues, maxXDay)}
	at, ok := o.String("amount_type", fields.Str{Required: true, IgnoreCase: true,
		OneOf: []string{string(Flat), string(PercentOfRent), string(PercentOfGrandTotal)}})
	c.AmountType = AmountType(at)
	rule := fields.Dec{Required: true, Positive: positive, Max: maxInt32, MaxScale: 2}
	if ok && c.AmountType != Flat {
		rule.Max = decimal.NewFromInt(99)
	}
	c.Amount, _ = o.Decimal("amount", rule)
	return c
}
