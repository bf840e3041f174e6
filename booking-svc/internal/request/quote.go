package request

import (
	"time"

	"github.com/vros/vros/libs/fields"
)

// Quote is a decoded getinfo body: a temporary quote.
type Quote struct {
	PropertyID int
	Adults     int
	Children   int // 0 when not sent
	Checkin    time.Time
	Checkout   time.Time

	// Services nil: not sent, the property's default services apply.
	// Non-nil and empty: no services.
	Services []Service
	Currency string // "" means the main currency

	DamageProtection bool
	TravelInsurance  bool
}

// DecodeQuote reads a getinfo body.
func DecodeQuote(body []byte) (Quote, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) Quote {
		var q Quote
		q.PropertyID, _ = o.Int(FieldPropertyID, idRule(true))
		q.Adults, _ = o.Int(FieldAdults, fields.Int{Required: true, Min: 1, Max: MaxGuests})
		q.Children, _ = o.Int(FieldChildren, fields.Int{Max: MaxGuests})
		q.Checkin, _ = o.Date(FieldCheckin, true)
		q.Checkout, _ = o.Date(FieldCheckout, true)
		q.Services, _ = readServices(o, FieldService, false)
		q.Currency, _ = readCurrency(o, FieldCurrency)
		q.DamageProtection, _ = readFlag(o, FieldDamageProtection)
		q.TravelInsurance, _ = readFlag(o, FieldTravelInsurance)
		if !violated(*v, FieldCheckin) && !violated(*v, FieldCheckout) {
			checkStay(v, q.Checkin, q.Checkout)
		}
		return q
	})
}
