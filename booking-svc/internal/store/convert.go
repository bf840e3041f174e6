package store

import (
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/pricing"
)

// The converters between the domain's types and the documents of vros_booking. A document
// always converts to the same domain value, and back to the same document: Update finds
// what a change did by comparing documents.

func bookingOf(r BookingRec) booking.Booking {
	b := booking.Booking{AccountID: r.AccountID, BookingID: r.BookingID, PropertyID: r.PropertyID, Status: r.Status, Version: r.Version,
		PropertyName: r.PropertyName, UserID: r.UserID, BrandID: r.BrandID, LeadSourceID: r.LeadSourceID, OwnerBook: r.OwnerBook,
		Guest: booking.Guest(r.Guest), Checkin: r.Checkin, Checkout: r.Checkout, CheckinTime: r.CheckinTime,
		CheckoutTime: r.CheckoutTime, Nights: slices.Clone(r.Nights), Adults: r.Adults, Children: r.Children,
		Quote: quoteOf(r.Quote), ServiceLines: linesOf(r.ServiceLines), CSADamage: r.CSADamage, CSATravel: r.CSATravel,
		PromotionCode: r.PromotionCode, Payments: make(map[int64]booking.Payment, len(r.Payments)), PaymentAuto: r.PaymentAuto, Sandbox: r.Sandbox,
		AutopayError: r.AutopayError, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CancelledAt: r.CancelledAt}
	for _, f := range r.ChargeFailures {
		b.ChargeFailures = append(b.ChargeFailures, booking.ChargeFailure(f))
	}
	for k, p := range r.Payments {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			id = p.PaymentID
		}
		b.Payments[id] = booking.Payment(p)
	}
	if r.Card != nil {
		c := booking.SealedCard(*r.Card)
		b.Card = &c
	}
	if p := r.Promotion; p != nil {
		amt, _ := decimal.NewFromString(p.Amount)
		b.Promotion = &booking.Promotion{Code: p.Code, Name: p.Name, Percent: p.Percent, Amount: amt, StartDate: p.StartDate,
			EndDate: p.EndDate, MinNights: p.MinNights, UsageLimit: p.UsageLimit, Properties: slices.Clone(p.Properties), Slot: p.Slot}
	}
	if r.Arrival != nil {
		a := arrivalOf(*r.Arrival)
		b.Arrival = &a
	}
	if r.Engine != nil {
		c := booking.Checkout(*r.Engine)
		b.Engine = &c
	}
	b.RatePlanID, b.RatePlanName, b.Channel = r.RatePlanID, r.RatePlanName, r.Channel
	if c := r.ChannelRes; c != nil {
		b.ChannelRes = &booking.ChannelReservation{ConnectionID: c.ConnectionID, ReservationID: c.ReservationID,
			Revisions: slices.Clone(c.Revisions), Order: c.Order}
	}
	if c := r.Cancellation; c != nil {
		b.Cancellation = &booking.Cancellation{Policy: c.Policy, Tiers: make([]booking.CancellationTier, len(c.Tiers))}
		for i, t := range c.Tiers {
			b.Cancellation.Tiers[i] = booking.CancellationTier(t)
		}
	}
	b.ChannelCommission = r.ChannelCommission
	if f := r.Refund; f != nil {
		out := booking.Refund{Status: f.Status, Policy: f.Policy, Percent: f.Percent, PolicyAmount: f.PolicyAmount, NetPaid: f.NetPaid,
			Amount: f.Amount, Override: f.Override, Reason: f.Reason, DecidedAt: f.DecidedAt}
		for _, p := range f.Parts {
			out.Parts = append(out.Parts, booking.RefundPart(p))
		}
		b.Refund = &out
	}
	if d := r.Deposit; d != nil {
		h := booking.DepositHold(*d)
		b.Deposit = &h
	}
	return b
}

func recOf(b booking.Booking) BookingRec {
	r := BookingRec{ID: docID(b.AccountID, b.BookingID), AccountID: b.AccountID, BookingID: b.BookingID, PropertyID: b.PropertyID,
		Status: b.Status, Version: b.Version, PropertyName: b.PropertyName, UserID: b.UserID, BrandID: b.BrandID,
		LeadSourceID: b.LeadSourceID, OwnerBook: b.OwnerBook, Guest: GuestRec(b.Guest), Checkin: b.Checkin, Checkout: b.Checkout,
		CheckinTime: b.CheckinTime, CheckoutTime: b.CheckoutTime, Nights: b.Nights, Adults: b.Adults, Children: b.Children,
		Quote: quoteRec(b.Quote), ServiceLines: lineRecs(b.ServiceLines), CSADamage: b.CSADamage, CSATravel: b.CSATravel,
		PromotionCode: b.PromotionCode, Payments: make(map[string]PaymentRec, len(b.Payments)), PaymentAuto: b.PaymentAuto, Sandbox: b.Sandbox,
		AutopayError: b.AutopayError, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, CancelledAt: b.CancelledAt}
	for _, f := range b.ChargeFailures {
		r.ChargeFailures = append(r.ChargeFailures, ChargeFailureRec(f))
	}
	if r.Nights == nil {
		r.Nights = []string{}
	}
	for id, p := range b.Payments {
		r.Payments[strconv.FormatInt(id, 10)] = PaymentRec(p)
	}
	if b.Card != nil {
		c := CardRec(*b.Card)
		r.Card = &c
	}
	if p := b.Promotion; p != nil {
		r.Promotion = &PromotionRec{Code: p.Code, Name: p.Name, Percent: p.Percent, Amount: p.Amount.String(), StartDate: p.StartDate,
			EndDate: p.EndDate, MinNights: p.MinNights, UsageLimit: p.UsageLimit, Properties: slices.Clone(p.Properties), Slot: p.Slot}
	}
	if b.Arrival != nil {
		a := arrivalRec(*b.Arrival)
		r.Arrival = &a
	}
	if b.Engine != nil {
		c := CheckoutRec(*b.Engine)
		r.Engine = &c
	}
	r.RatePlanID, r.RatePlanName, r.Channel = b.RatePlanID, b.RatePlanName, b.Channel
	if c := b.ChannelRes; c != nil {
		r.ChannelRes = &ChannelResRec{ConnectionID: c.ConnectionID, ReservationID: c.ReservationID, Revisions: slices.Clone(c.Revisions),
			Order: c.Order}
	}
	if c := b.Cancellation; c != nil {
		r.Cancellation = &CancellationRec{Policy: c.Policy, Tiers: make([]CancellationTierRec, len(c.Tiers))}
		for i, t := range c.Tiers {
			r.Cancellation.Tiers[i] = CancellationTierRec(t)
		}
	}
	r.ChannelCommission = b.ChannelCommission
	if f := b.Refund; f != nil {
		out := RefundRec{Status: f.Status, Policy: f.Policy, Percent: f.Percent, PolicyAmount: f.PolicyAmount, NetPaid: f.NetPaid,
			Amount: f.Amount, Override: f.Override, Reason: f.Reason, DecidedAt: f.DecidedAt, Parts: []RefundPartRec{}}
		for _, p := range f.Parts {
			out.Parts = append(out.Parts, RefundPartRec(p))
		}
		r.Refund = &out
	}
	if d := b.Deposit; d != nil {
		h := DepositRec(*d)
		r.Deposit = &h
	}
	return r
}

func quoteOf(q QuoteRec) booking.Quote {
	out := booking.Quote{Currency: q.Currency, ExchangeRate: q.ExchangeRate, TotalRent: q.TotalRent, TaxTotal: q.TaxTotal, ServiceTotal: q.ServiceTotal,
		DiscountTotal: q.DiscountTotal, GrandTotal: q.GrandTotal, DamageDeposit: q.DamageDeposit, MinNightly: q.MinNightly,
		MaxNightly: q.MaxNightly, Nightly: map[string]string{}, MinimumStay: q.MinimumStay, Taxes: []booking.Amount{},
		Services: []booking.ServiceAmount{}, Discounts: []booking.Discount{}, Schedule: []booking.Installment{}}
	for d, v := range q.Nightly {
		out.Nightly[d] = v
	}
	for _, t := range q.Taxes {
		out.Taxes = append(out.Taxes, booking.Amount(t))
	}
	for _, s := range q.Services {
		out.Services = append(out.Services, booking.ServiceAmount(s))
	}
	for _, d := range q.Discounts {
		out.Discounts = append(out.Discounts, booking.Discount(d))
	}
	for _, in := range q.Schedule {
		out.Schedule = append(out.Schedule, booking.Installment(in))
	}
	return out
}

func quoteRec(q booking.Quote) QuoteRec {
	out := QuoteRec{Currency: q.Currency, ExchangeRate: q.ExchangeRate, TotalRent: q.TotalRent, TaxTotal: q.TaxTotal, ServiceTotal: q.ServiceTotal,
		DiscountTotal: q.DiscountTotal, GrandTotal: q.GrandTotal, DamageDeposit: q.DamageDeposit, MinNightly: q.MinNightly,
		MaxNightly: q.MaxNightly, Nightly: map[string]string{}, MinimumStay: q.MinimumStay, Taxes: []AmountRec{},
		Services: []ServiceAmtRec{}, Discounts: []DiscountRec{}, Schedule: []InstallmentRec{}}
	for d, v := range q.Nightly {
		out.Nightly[d] = v
	}
	for _, t := range q.Taxes {
		out.Taxes = append(out.Taxes, AmountRec(t))
	}
	for _, s := range q.Services {
		out.Services = append(out.Services, ServiceAmtRec(s))
	}
	for _, d := range q.Discounts {
		out.Discounts = append(out.Discounts, DiscountRec(d))
	}
	for _, in := range q.Schedule {
		out.Schedule = append(out.Schedule, InstallmentRec(in))
	}
	return out
}

// linesOf turns stored service lines back into the engine's.
func linesOf(recs []ServiceLineRec) []pricing.ServiceLine {
	out := make([]pricing.ServiceLine, 0, len(recs))
	for _, r := range recs {
		amt, _ := decimal.NewFromString(r.Amount)
		l := pricing.ServiceLine{Name: r.Name, Applicable: r.Applicable, Amount: amt, Type: r.Type, Unit: r.Unit}
		for _, t := range r.Taxes {
			perc, _ := decimal.NewFromString(t.Perc)
			l.Taxes = append(l.Taxes, pricing.ServiceTax{Name: t.Name, Perc: perc})
		}
		out = append(out, l)
	}
	return out
}

func lineRecs(lines []pricing.ServiceLine) []ServiceLineRec {
	out := make([]ServiceLineRec, 0, len(lines))
	for _, l := range lines {
		r := ServiceLineRec{Name: l.Name, Applicable: l.Applicable, Amount: l.Amount.String(), Type: l.Type, Unit: l.Unit,
			Taxes: []ServiceTaxRec{}}
		for _, t := range l.Taxes {
			r.Taxes = append(r.Taxes, ServiceTaxRec{Name: t.Name, Perc: t.Perc.String()})
		}
		out = append(out, r)
	}
	return out
}

func arrivalOf(r ArrivalRec) arrival.Arrival {
	a := arrival.Arrival{ArriveBy: r.ArriveBy, TransportNumber: r.TransportNumber, ExpectedTime: r.ExpectedTime, URL: r.URL,
		IsCompleted: r.IsCompleted}
	for _, g := range r.Guests {
		ag := arrival.Guest{Name: g.Name, Surname: g.Surname, Nationality: g.Nationality, Email: g.Email, PhoneNumber: g.PhoneNumber,
			FrontDocument: g.FrontDocument, BackDocument: g.BackDocument, Address: g.Address, Allergies: g.Allergies}
		ag.DateOfBirth, _ = time.Parse(time.DateOnly, g.DateOfBirth)
		a.Guests = append(a.Guests, ag)
	}
	return a
}

func arrivalRec(a arrival.Arrival) ArrivalRec {
	r := ArrivalRec{ArriveBy: a.ArriveBy, TransportNumber: a.TransportNumber, ExpectedTime: a.ExpectedTime, URL: a.URL,
		IsCompleted: a.IsCompleted, Guests: []ArrivalGuest{}}
	for _, g := range a.Guests {
		sg := ArrivalGuest{Name: g.Name, Surname: g.Surname, Nationality: g.Nationality, Email: g.Email, PhoneNumber: g.PhoneNumber,
			FrontDocument: g.FrontDocument, BackDocument: g.BackDocument, Address: g.Address, Allergies: g.Allergies}
		if !g.DateOfBirth.IsZero() {
			sg.DateOfBirth = g.DateOfBirth.Format(time.DateOnly)
		}
		r.Guests = append(r.Guests, sg)
	}
	return r
}

func blockOf(r BlockRec) booking.Block {
	return booking.Block{AccountID: r.AccountID, BlockID: r.BlockID, PropertyID: r.PropertyID, StartDate: r.StartDate,
		EndDate: r.EndDate, Memo: r.Memo, FeedID: r.FeedID, UID: r.UID, Deleted: r.Deleted, Version: r.Version, CreatedAt: r.CreatedAt}
}

func blockRec(b booking.Block) BlockRec {
	return BlockRec{ID: docID(b.AccountID, b.BlockID), AccountID: b.AccountID, BlockID: b.BlockID, PropertyID: b.PropertyID,
		StartDate: b.StartDate, EndDate: b.EndDate, Memo: b.Memo, FeedID: b.FeedID, UID: b.UID, Deleted: b.Deleted, Version: b.Version,
		CreatedAt: b.CreatedAt}
}

func userOf(r UserRec) guest.User {
	return guest.User{UserID: int(r.UserID), Email: r.Email, Name: r.Name, Company: r.Company, Address: r.Address, Country: r.Country,
		Phone1: r.Phone1, Phone2: r.Phone2, PasswordHash: r.PasswordHash}
}

func userRec(account string, u guest.User, social bool) UserRec {
	return UserRec{AccountID: account, UserID: int64(u.UserID), Email: u.Email, Name: u.Name, Company: u.Company, Address: u.Address,
		Country: u.Country, Phone1: u.Phone1, Phone2: u.Phone2, PasswordHash: u.PasswordHash, Social: social}
}
