package booking

import (
	"strings"

	"github.com/biter777/countries"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/libs/pricing"
)

// MaxNights bounds a stay: checkout at most this many nights after checkin.
const MaxNights = 365

// ProtectionCountry is the one country the protection products are sold for.
const ProtectionCountry = "US"

// Party is the booking's contact data and bookkeeping fields.
type Party struct {
	Guest         Guest
	UserID        int64
	BrandID       int64
	LeadSourceID  int64
	CSADamage     int // csaDamageProtection, 0 or 1
	CSATravel     int // csaTravelInsurance, 0 or 1
	PromotionCode string
}

// PaymentRequest asks for a card charge at booking time.
type PaymentRequest struct {
	Charge bool       // paymentCharge: charge what the schedule makes due at booking
	Auto   bool       // paymentAuto: keep the card for the later installments
	Card   *card.Card // required with Charge or Auto
}

// Draft is a booking as a request describes it in full: what a create asks for, and what an
// update asks for once its fields are laid over the stored booking (Patch.Apply).
type Draft struct {
	Stay
	Party
	PaymentRequest
}

// Draft is the booking as the request that would make it: its stay with the services it
// was priced with and its currency, its party, and its automatic payments.
func (b Booking) Draft() Draft {
	in, _ := pricing.ParseDate(b.Checkin)
	out, _ := pricing.ParseDate(b.Checkout)
	lines := append([]pricing.ServiceLine{}, b.ServiceLines...)
	return Draft{
		Stay: Stay{PropertyID: b.PropertyID, Checkin: in, Checkout: out, Adults: b.Adults, Children: b.Children, Services: &lines,
			Currency: b.Quote.Currency, RatePlanID: b.RatePlanID, Channel: b.Channel},
		Party: Party{Guest: b.Guest, UserID: b.UserID, BrandID: b.BrandID, LeadSourceID: b.LeadSourceID, CSADamage: b.CSADamage,
			CSATravel: b.CSATravel, PromotionCode: b.PromotionCode},
		PaymentRequest: PaymentRequest{Auto: b.PaymentAuto},
	}
}

// Patch is an update request: the fields it sent, nil where not sent. A pointer to a zero
// value clears the field. PaymentCharge and Card are instructions of this one request.
type Patch struct {
	PropertyID                                     *int64
	Checkin, Checkout                              *pricing.Date
	Adults, Children                               *int
	Services                                       *[]pricing.ServiceLine // sent: replaces them (empty: none)
	Currency                                       *string
	UserID, BrandID, LeadSourceID                  *int64
	FirstName, LastName, Email, Birthday           *string
	Birthplace, Address, Phone1, Phone2            *string
	City, State, Postcode, Country                 *string
	FiscalCode, PromotionCode, Other               *string
	DamageProtection, TravelInsurance, PaymentAuto *bool
	// RatePlanID sent moves the booking to that plan (0: the standard plan); Channel sent
	// ("": direct) prices it for that channel. Not sent: the booking's.
	RatePlanID *int64
	Channel    *string

	PaymentCharge bool
	Card          *card.Card
}

// Apply returns d with the fields p sent replaced:
//
//   - service sent: it replaces the services (empty removes them);
//   - service absent and propertyId changed: the new property's default services;
//   - service absent otherwise: the booking's services are kept;
//   - csaDamageProtection/csaTravelInsurance absent: unchanged;
//   - ratePlanId and channel absent: the booking's plan and channel;
//   - paymentCharge and creditCard come from the patch only.
//
// Rules spanning fields that the patch may have left to stored values (checkout after
// checkin, city/state/postcode with protection) are checked on the result with Check.
func (p Patch) Apply(d Draft) Draft {
	stored := d.PropertyID
	set(&d.PropertyID, p.PropertyID)
	set(&d.Checkin, p.Checkin)
	set(&d.Checkout, p.Checkout)
	set(&d.Adults, p.Adults)
	set(&d.Children, p.Children)
	set(&d.Currency, p.Currency)
	set(&d.RatePlanID, p.RatePlanID)
	set(&d.Channel, p.Channel)
	set(&d.UserID, p.UserID)
	set(&d.BrandID, p.BrandID)
	set(&d.LeadSourceID, p.LeadSourceID)
	g := &d.Guest
	for _, f := range []struct{ dst, src *string }{
		{&g.FirstName, p.FirstName}, {&g.LastName, p.LastName}, {&g.Email, p.Email}, {&g.Birthday, p.Birthday},
		{&g.Birthplace, p.Birthplace}, {&g.Address, p.Address}, {&g.Phone1, p.Phone1}, {&g.Phone2, p.Phone2},
		{&g.City, p.City}, {&g.State, p.State}, {&g.Postcode, p.Postcode}, {&g.Country, p.Country},
		{&g.FiscalCode, p.FiscalCode}, {&g.Other, p.Other}, {&d.PromotionCode, p.PromotionCode},
	} {
		set(f.dst, f.src)
	}
	if p.DamageProtection != nil {
		d.CSADamage = flag(*p.DamageProtection)
	}
	if p.TravelInsurance != nil {
		d.CSATravel = flag(*p.TravelInsurance)
	}
	set(&d.Auto, p.PaymentAuto)
	switch {
	case p.Services != nil:
		lines := append([]pricing.ServiceLine{}, *p.Services...)
		d.Services = &lines
	case p.PropertyID != nil && *p.PropertyID != stored:
		d.Services = nil
	}
	d.Charge, d.Card = p.PaymentCharge, p.Card
	return d
}

// set sets *dst to *src when src was sent.
func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Check checks the rules that span fields on a whole draft: checkout after checkin and at
// most MaxNights later; city, state and postcode with either protection, which is for US
// addresses only; a card with paymentCharge. It answers Violations naming the interface's
// fields.
func (d Draft) Check() error {
	var v Violations
	switch {
	case d.Checkin.IsZero() || d.Checkout.IsZero():
	case !d.Checkout.After(d.Checkin):
		v = append(v, FieldError{Field: "checkout", Message: "must be after checkin"})
	case pricing.DaysBetween(d.Checkin, d.Checkout) > MaxNights:
		v = append(v, FieldError{Field: "checkout", Message: "must be at most 365 nights after checkin"})
	}
	if d.CSADamage == 1 || d.CSATravel == 1 {
		product := "csaDamageProtection"
		if d.CSADamage != 1 {
			product = "csaTravelInsurance"
		}
		for _, f := range []struct{ field, value string }{{"city", d.Guest.City}, {"state", d.Guest.State}, {"postcode", d.Guest.Postcode}} {
			if f.value == "" {
				v = append(v, FieldError{Field: f.field, Message: "is required when csaDamageProtection or csaTravelInsurance is 1"})
			}
		}
		if d.Guest.Country != "" && d.Guest.Country != ProtectionCountry {
			v = append(v, FieldError{Field: product, Message: "is only available for US addresses (country US)"})
		}
	}
	if d.Charge && d.Card == nil {
		v = append(v, FieldError{Field: "creditCard", Message: "is required when paymentCharge is 1"})
	}
	if len(v) > 0 {
		return v
	}
	return nil
}

// Violations are the broken rules of one request, each naming its field.
type Violations []FieldError

func (v Violations) Error() string {
	msgs := make([]string, len(v))
	for i, e := range v {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// phoneCode is the calling code of a country, "" when unknown.
func phoneCode(country string) string {
	if country == "" {
		return ""
	}
	if codes := countries.ByName(country).CallCodes(); len(codes) > 0 {
		return codes[0].String()
	}
	return ""
}
