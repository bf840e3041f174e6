package api

import (
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/libs/pricing"
)

// servicesOf turns requested lines into engine lines; nil (not sent) stays nil.
func servicesOf(in []request.Service) *[]pricing.ServiceLine {
	if in == nil {
		return nil
	}
	out := make([]pricing.ServiceLine, len(in))
	for i, s := range in {
		l := pricing.ServiceLine{Name: s.Name, Applicable: int(s.Applicable), Amount: s.Amount, Type: int(s.Type), Unit: s.Unit}
		for _, t := range s.Taxes {
			l.Taxes = append(l.Taxes, pricing.ServiceTax{Name: t.Name, Perc: t.Percent})
		}
		out[i] = l
	}
	return &out
}

// newBooking is a create body as the domain's request.
func newBooking(b request.Booking) booking.NewBooking {
	g := booking.Guest{FirstName: b.FirstName, LastName: b.LastName, Email: b.Email, Birthday: dateText(b.Birthday),
		Birthplace: b.Birthplace, Phone1: b.Phone1, Phone2: b.Phone2, Country: b.Country, Address: b.Address, City: b.City,
		State: b.State, Postcode: b.Postcode, FiscalCode: b.FiscalCode, Other: b.Other}
	return booking.NewBooking{
		Stay: booking.Stay{PropertyID: int64(b.PropertyID), Checkin: pricing.DateOf(b.Checkin), Checkout: pricing.DateOf(b.Checkout),
			Adults: b.Adults, Children: b.Children, Services: servicesOf(b.Services), Currency: b.Currency,
			RatePlanID: int64(b.RatePlanID), Channel: b.Channel},
		Party: booking.Party{Guest: g, UserID: int64(b.UserID), BrandID: int64(b.BrandID), LeadSourceID: int64(b.LeadSourceID),
			CSADamage: flag(b.DamageProtection), CSATravel: flag(b.TravelInsurance), PromotionCode: b.PromotionCode},
		PaymentRequest: booking.PaymentRequest{Charge: b.PaymentCharge, Auto: b.PaymentAuto, Card: b.Card},
	}
}

// patchOf is an update body as the domain's patch: the fields it sent, nil elsewhere.
func patchOf(u request.Update) booking.Patch {
	b, sent := u.Booking, u.Sent
	p := booking.Patch{PaymentCharge: b.PaymentCharge, Card: b.Card}
	id := func(field string, v int) *int64 { return ifSent(sent, field, int64(v)) }
	text := func(field, v string) *string { return ifSent(sent, field, v) }
	p.PropertyID = id(request.FieldPropertyID, b.PropertyID)
	p.UserID = id(request.FieldUserID, b.UserID)
	p.BrandID = id(request.FieldBrandID, b.BrandID)
	p.LeadSourceID = id(request.FieldLeadSourceID, b.LeadSourceID)
	p.Checkin = ifSent(sent, request.FieldCheckin, pricing.DateOf(b.Checkin))
	p.Checkout = ifSent(sent, request.FieldCheckout, pricing.DateOf(b.Checkout))
	p.Adults = ifSent(sent, request.FieldAdults, b.Adults)
	p.Children = ifSent(sent, request.FieldChildren, b.Children)
	if sent.Has(request.FieldService) {
		p.Services = servicesOf(b.Services)
		if p.Services == nil {
			p.Services = &[]pricing.ServiceLine{}
		}
	}
	p.Currency = text(request.FieldCurrency, b.Currency)
	p.FirstName = text(request.FieldFirstName, b.FirstName)
	p.LastName = text(request.FieldLastName, b.LastName)
	p.Email = text(request.FieldEmail, b.Email)
	p.Birthday = text(request.FieldBirthday, dateText(b.Birthday))
	p.Birthplace = text(request.FieldBirthplace, b.Birthplace)
	p.Address = text(request.FieldAddress, b.Address)
	p.Phone1 = text(request.FieldPhone1, b.Phone1)
	p.Phone2 = text(request.FieldPhone2, b.Phone2)
	p.City = text(request.FieldCity, b.City)
	p.State = text(request.FieldState, b.State)
	p.Postcode = text(request.FieldPostcode, b.Postcode)
	p.Country = text(request.FieldCountry, b.Country)
	p.FiscalCode = text(request.FieldFiscalCode, b.FiscalCode)
	p.PromotionCode = text(request.FieldPromotionCode, b.PromotionCode)
	p.Other = text(request.FieldOther, b.Other)
	p.DamageProtection = ifSent(sent, request.FieldDamageProtection, b.DamageProtection)
	p.TravelInsurance = ifSent(sent, request.FieldTravelInsurance, b.TravelInsurance)
	p.PaymentAuto = ifSent(sent, request.FieldPaymentAuto, b.PaymentAuto)
	p.RatePlanID = id(request.FieldRatePlanID, b.RatePlanID)
	p.Channel = text(request.FieldChannel, b.Channel)
	return p
}

// ifSent is &v when field was sent, nil otherwise.
func ifSent[T any](sent request.Sent, field string, v T) *T {
	if !sent.Has(field) {
		return nil
	}
	return &v
}

// dateText is a date as a booking keeps it; "" for the zero time (not given).
func dateText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
