package api

import (
	"time"

	"github.com/biter777/countries"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/booking-svc/internal/store"
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

// requestServices turns stored lines back into request lines, for merging an update.
func requestServices(lines []pricing.ServiceLine) []request.Service {
	out := make([]request.Service, len(lines))
	for i, l := range lines {
		s := request.Service{Name: l.Name, Applicable: request.Applicable(l.Applicable), Amount: l.Amount, Type: request.ServiceType(l.Type), Unit: l.Unit}
		for _, t := range l.Taxes {
			s.Taxes = append(s.Taxes, request.ServiceTax{Name: t.Name, Percent: t.Perc})
		}
		out[i] = s
	}
	return out
}

func stayOf(b request.Booking) booking.Stay {
	return booking.Stay{PropertyID: int64(b.PropertyID), Checkin: pricing.DateOf(b.Checkin), Checkout: pricing.DateOf(b.Checkout),
		Adults: b.Adults, Children: b.Children, Services: servicesOf(b.Services), Currency: b.Currency}
}

func partyOf(b request.Booking) booking.Party {
	g := store.GuestRec{FirstName: b.FirstName, LastName: b.LastName, Email: b.Email, Birthplace: b.Birthplace, Phone1: b.Phone1,
		Phone2: b.Phone2, Country: b.Country, Address: b.Address, City: b.City, State: b.State, Postcode: b.Postcode,
		FiscalCode: b.FiscalCode, Other: b.Other}
	if !b.Birthday.IsZero() {
		g.Birthday = b.Birthday.Format(time.DateOnly)
	}
	if g.Country != "" {
		if codes := countries.ByName(g.Country).CallCodes(); len(codes) > 0 {
			g.PhoneCountryCode = codes[0].String()
		}
	}
	return booking.Party{Guest: g, UserID: int64(b.UserID), BrandID: int64(b.BrandID), LeadSourceID: int64(b.LeadSourceID),
		CSADamage: flag(b.DamageProtection), CSATravel: flag(b.TravelInsurance), PromotionCode: b.PromotionCode}
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// storedRequest is a stored booking as the request it would take to make it, so that an
// update can be merged onto it and checked as a whole.
func storedRequest(r store.BookingRec) request.Booking {
	st := booking.StayOf(r)
	g := r.Guest
	b := request.Booking{PropertyID: int(r.PropertyID), UserID: int(r.UserID), FirstName: g.FirstName, LastName: g.LastName,
		Email: g.Email, Birthplace: g.Birthplace, Address: g.Address, Phone1: g.Phone1, Phone2: g.Phone2, City: g.City, State: g.State,
		Postcode: g.Postcode, Country: g.Country, FiscalCode: g.FiscalCode, PromotionCode: r.PromotionCode, Adults: r.Adults,
		Children: r.Children, LeadSourceID: int(r.LeadSourceID), Services: requestServices(*st.Services),
		Currency: r.Quote.Currency, DamageProtection: r.CSADamage == 1, TravelInsurance: r.CSATravel == 1, PaymentAuto: r.PaymentAuto,
		BrandID: int(r.BrandID), Other: g.Other}
	b.Checkin, _ = time.Parse(time.DateOnly, r.Checkin)
	b.Checkout, _ = time.Parse(time.DateOnly, r.Checkout)
	if g.Birthday != "" {
		b.Birthday, _ = time.Parse(time.DateOnly, g.Birthday)
	}
	return b
}

// applyArrival applies an arrival form to the stored one.
func applyArrival(rec *store.ArrivalRec, r request.Arrival) {
	cur := arrival.Arrival{ArriveBy: rec.ArriveBy, TransportNumber: rec.TransportNumber, ExpectedTime: rec.ExpectedTime, URL: rec.URL,
		IsCompleted: rec.IsCompleted}
	for _, g := range rec.Guests {
		ag := arrival.Guest{Name: g.Name, Surname: g.Surname, Nationality: g.Nationality, Email: g.Email, PhoneNumber: g.PhoneNumber,
			FrontDocument: g.FrontDocument, BackDocument: g.BackDocument, Address: g.Address, Allergies: g.Allergies}
		ag.DateOfBirth, _ = time.Parse(time.DateOnly, g.DateOfBirth)
		cur.Guests = append(cur.Guests, ag)
	}
	next := r.Form.Apply(cur)
	*rec = store.ArrivalRec{ArriveBy: next.ArriveBy, TransportNumber: next.TransportNumber, ExpectedTime: next.ExpectedTime,
		URL: next.URL, IsCompleted: next.IsCompleted, Guests: []store.ArrivalGuest{}}
	for _, g := range next.Guests {
		sg := store.ArrivalGuest{Name: g.Name, Surname: g.Surname, Nationality: g.Nationality, Email: g.Email, PhoneNumber: g.PhoneNumber,
			FrontDocument: g.FrontDocument, BackDocument: g.BackDocument, Address: g.Address, Allergies: g.Allergies}
		if !g.DateOfBirth.IsZero() {
			sg.DateOfBirth = g.DateOfBirth.Format(time.DateOnly)
		}
		rec.Guests = append(rec.Guests, sg)
	}
}
