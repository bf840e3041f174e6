package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const (
	policyFull = `{
		"internal_code": "VR-001",
		"short_stay": {
			"payment_type": "Full",
			"damage_deposit": {"is_due_at": "XDayPriorArrival", "x_day": 7, "amount": "250.00", "amount_type": "Flat"},
			"payment_full": {"is_due_at": "XDayAfterBooking", "x_day": 3}
		}
	}`
	policyPartial = `{
		"property_id": 42,
		"short_stay": {
			"payment_type": "Partial",
			"payment_partial": {
				"first_payment": {"is_due_at": "Booking", "amount_type": "PercentOfRent", "amount": 30},
				"remaining_payment": {"is_due_at": "XDayPriorArrival", "x_day": 30}
			}
		}
	}`
	policyNone = `{"internal_code": "VR-001", "short_stay": {"payment_type": "None"}}`
)

func decodePolicy(body []byte) error {
	_, err := property.DecodePolicy(body)
	return err
}

func TestDecodePolicyFull(t *testing.T) {
	const dd, pf = "short_stay.damage_deposit.", "short_stay.payment_full."
	rows := []row{
		tc("valid example", ""),
		tc("property_id in place of internal_code", "", set("internal_code", del), set("property_id", "42")),
		tc("neither internal_code nor property_id", "internal_code: is required unless property_id is sent", set("internal_code", del)),
		tc("both internal_code and property_id", "property_id: must not be sent together with internal_code", set("property_id", 42)),
		tc("property_id 0", "property_id: must be between 1 and 2147483647", set("internal_code", del), set("property_id", 0)),
		tc("internal_code 11 chars", "internal_code: must be at most 10 characters", set("internal_code", chars(11))),
		tc("short_stay missing", "short_stay: is required", set("short_stay", del)),

		tc("payment_type missing", "short_stay.payment_type: is required", set("short_stay.payment_type", del)),
		tc("payment_type unknown", "short_stay.payment_type: must be one of Full, Partial, None", set("short_stay.payment_type", "Monthly")),

		tc("damage_deposit absent", "", set("short_stay.damage_deposit", del)),
		tc("damage_deposit empty array", "", set("short_stay.damage_deposit", []any{})),
		tc("damage_deposit not an object", "short_stay.damage_deposit: must be an object", set("short_stay.damage_deposit", "250")),
		tc("deposit is_due_at missing", dd+"is_due_at: is required", set(dd+"is_due_at", del)),
		tc("deposit is_due_at XDayAfterBooking", dd+"is_due_at: must be one of Booking, Arrival, Check-out, XDayPriorArrival", set(dd+"is_due_at", "XDayAfterBooking")),
		tc("deposit is_due_at 256 chars", dd+"is_due_at: must be at most 255 characters", set(dd+"is_due_at", chars(256))),
		tc("deposit due Check-out", "", set(dd+"is_due_at", "Check-out"), set(dd+"x_day", del)),
		tc("deposit x_day ignored unless XDayPriorArrival", "", set(dd+"is_due_at", "Booking"), set(dd+"x_day", 0)),
		tc("deposit x_day missing for XDayPriorArrival", dd+"x_day: is required", set(dd+"x_day", del)),
		tc("deposit x_day 0", dd+"x_day: must be between 1 and 255", set(dd+"x_day", 0)),
		tc("deposit x_day 255", "", set(dd+"x_day", 255)),
		tc("deposit x_day 256", dd+"x_day: must be between 1 and 255", set(dd+"x_day", 256)),
		tc("deposit amount missing", dd+"amount: is required", set(dd+"amount", del)),
		tc("deposit Flat amount 2147483647", "", set(dd+"amount", 2147483647)),
		tc("deposit Flat amount 2147483648", dd+"amount: must be between 0 and 2147483647", set(dd+"amount", 2147483648)),
		tc("deposit amount negative", dd+"amount: must be between 0 and 2147483647", set(dd+"amount", -1)),
		tc("deposit amount 3 decimals", dd+"amount: must have at most 2 decimal places", set(dd+"amount", "10.005")),
		tc("deposit percent amount 99", "", set(dd+"amount_type", "PercentOfRent"), set(dd+"amount", 99)),
		tc("deposit percent amount 100", dd+"amount: must be between 0 and 99", set(dd+"amount_type", "PercentOfGrandTotal"), set(dd+"amount", 100)),
		tc("deposit amount_type missing", dd+"amount_type: is required", set(dd+"amount_type", del)),
		tc("deposit amount_type unknown", dd+"amount_type: must be one of Flat, PercentOfRent, PercentOfGrandTotal", set(dd+"amount_type", "Percent")),

		tc("payment_full missing", "short_stay.payment_full: is required when payment_type is Full", set("short_stay.payment_full", del)),
		tc("payment_full is_due_at missing", pf+"is_due_at: is required", set(pf+"is_due_at", del)),
		tc("payment_full is_due_at unknown", pf+"is_due_at: must be one of Booking, Arrival, Check-out, XDayPriorArrival, XDayAfterBooking", set(pf+"is_due_at", "Later")),
		tc("payment_full x_day missing for XDayAfterBooking", pf+"x_day: is required", set(pf+"x_day", del)),
		tc("payment_full x_day missing for XDayPriorArrival", pf+"x_day: is required", set(pf+"is_due_at", "XDayPriorArrival"), set(pf+"x_day", del)),
		tc("payment_full x_day 256", pf+"x_day: must be between 1 and 255", set(pf+"x_day", 256)),
		tc("payment_full due Arrival", "", set(pf+"is_due_at", "Arrival"), set(pf+"x_day", del)),
		tc("payment_partial with Full", "short_stay.payment_partial: must not be sent when payment_type is Full", set("short_stay.payment_partial", obj(`{"first_payment":{}}`))),
	}
	check(t, policyFull, rows, decodePolicy)
}

func TestDecodePolicyPartial(t *testing.T) {
	const fp, rp = "short_stay.payment_partial.first_payment.", "short_stay.payment_partial.remaining_payment."
	rows := []row{
		tc("valid example", ""),
		tc("payment_partial missing", "short_stay.payment_partial: is required when payment_type is Partial", set("short_stay.payment_partial", del)),
		tc("first_payment missing", "short_stay.payment_partial.first_payment: is required", set("short_stay.payment_partial.first_payment", del)),
		tc("remaining_payment missing", "short_stay.payment_partial.remaining_payment: is required", set("short_stay.payment_partial.remaining_payment", del)),
		tc("payment_full with Partial", "short_stay.payment_full: must not be sent when payment_type is Partial", set("short_stay.payment_full", obj(`{"is_due_at":"Booking"}`))),

		tc("first is_due_at Check-out", fp+"is_due_at: must be one of Booking, Arrival, XDayPriorArrival, XDayAfterBooking", set(fp+"is_due_at", "Check-out")),
		tc("first x_day missing for XDayAfterBooking", fp+"x_day: is required", set(fp+"is_due_at", "XDayAfterBooking")),
		tc("first x_day 365", "", set(fp+"is_due_at", "XDayAfterBooking"), set(fp+"x_day", 365)),
		tc("first x_day 366", fp+"x_day: must be between 1 and 365", set(fp+"is_due_at", "XDayPriorArrival"), set(fp+"x_day", 366)),
		tc("first amount 0", fp+"amount: must be greater than 0", set(fp+"amount", 0)),
		tc("first amount missing", fp+"amount: is required", set(fp+"amount", del)),
		tc("first percent amount 99", "", set(fp+"amount", "99")),
		tc("first percent amount 99.01", fp+"amount: must be at most 99", set(fp+"amount", 99.01)),
		tc("first Flat amount 2147483647", "", set(fp+"amount_type", "Flat"), set(fp+"amount", 2147483647)),
		tc("first Flat amount 2147483648", fp+"amount: must be at most 2147483647", set(fp+"amount_type", "Flat"), set(fp+"amount", 2147483648)),
		tc("first amount_type missing", fp+"amount_type: is required", set(fp+"amount_type", del)),

		tc("remaining is_due_at Booking", rp+"is_due_at: must be one of Check-out, Arrival, XDayPriorArrival, XDayAfterBooking", set(rp+"is_due_at", "Booking")),
		tc("remaining is_due_at missing", rp+"is_due_at: is required", set(rp+"is_due_at", del)),
		tc("remaining x_day missing for XDayPriorArrival", rp+"x_day: is required", set(rp+"x_day", del)),
		tc("remaining x_day 366", rp+"x_day: must be between 1 and 365", set(rp+"x_day", 366)),
		tc("remaining due Check-out", "", set(rp+"is_due_at", "Check-out"), set(rp+"x_day", del)),
	}
	check(t, policyPartial, rows, decodePolicy)
}

func TestDecodePolicyNone(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("payment_full with None", "short_stay.payment_full: must not be sent when payment_type is None", set("short_stay.payment_full", obj(`{"is_due_at":"Booking"}`))),
		tc("payment_partial with None", "short_stay.payment_partial: must not be sent when payment_type is None", set("short_stay.payment_partial", obj(`{"first_payment":{}}`))),
		tc("empty payment objects are not sent", "", set("short_stay.payment_full", []any{}), set("short_stay.payment_partial", obj(`{}`))),
		tc("damage deposit allowed with None", "", set("short_stay.damage_deposit", obj(`{"is_due_at":"Arrival","amount":100,"amount_type":"Flat"}`))),
		tc("invalid payment_type still checks sent objects",
			"short_stay.payment_type: must be one of Full, Partial, None\nshort_stay.payment_full.is_due_at: is required",
			set("short_stay.payment_type", "Some"), set("short_stay.payment_full", obj(`{"x_day":3}`))),
	}
	check(t, policyNone, rows, decodePolicy)
}

func TestDecodePolicyValues(t *testing.T) {
	p, err := property.DecodePolicy([]byte(policyFull))
	if err != nil {
		t.Fatal(err)
	}
	wantDeposit := property.Charge{Deadline: property.Deadline{Due: property.DueXDayPriorArrival, XDay: 7}, AmountType: property.Flat, Amount: dec("250")}
	switch {
	case p.Property != property.PropertyRef{InternalCode: "VR-001"} || p.PaymentType != property.PayFull:
		t.Errorf("ref/type: %+v", p)
	case p.DamageDeposit == nil || p.DamageDeposit.Deadline != wantDeposit.Deadline || p.DamageDeposit.AmountType != property.Flat || !p.DamageDeposit.Amount.Equal(wantDeposit.Amount):
		t.Errorf("deposit: %+v", p.DamageDeposit)
	case p.FullPayment == nil || *p.FullPayment != property.Deadline{Due: property.DueXDayAfterBooking, XDay: 3}:
		t.Errorf("full: %+v", p.FullPayment)
	case p.FirstPayment != nil || p.RemainingPayment != nil:
		t.Error("partial payments set for Full")
	}

	p, err = property.DecodePolicy([]byte(policyPartial))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case p.Property != property.PropertyRef{ID: 42} || p.PaymentType != property.PayPartial || p.DamageDeposit != nil || p.FullPayment != nil:
		t.Errorf("ref/type: %+v", p)
	case p.FirstPayment == nil || p.FirstPayment.Due != property.DueBooking || p.FirstPayment.XDay != 0 || p.FirstPayment.AmountType != property.PercentOfRent || !p.FirstPayment.Amount.Equal(dec("30")):
		t.Errorf("first: %+v", p.FirstPayment)
	case p.RemainingPayment == nil || *p.RemainingPayment != property.Deadline{Due: property.DueXDayPriorArrival, XDay: 30}:
		t.Errorf("remaining: %+v", p.RemainingPayment)
	}

	p, err = property.DecodePolicy(apply(t, policyFull, set("short_stay.damage_deposit.is_due_at", "Booking")))
	if err != nil || p.DamageDeposit.XDay != 0 {
		t.Errorf("x_day must be 0 when the moment does not count days: %+v, %v", p.DamageDeposit, err)
	}
}
