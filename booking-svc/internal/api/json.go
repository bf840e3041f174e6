package api

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/ifaceb"
	"github.com/vros/vros/libs/pricing"
)

// money writes a stored decimal string as a JSON number, exactly.
func money(s string) json.Number {
	if s == "" {
		return "0"
	}
	return json.Number(s)
}

const dateTime = "2006-01-02 15:04:05"

type amountJSON struct {
	Name   string      `json:"name"`
	Amount json.Number `json:"amount"`
}

type serviceJSON struct {
	Name      string      `json:"name"`
	Amount    json.Number `json:"amount"`
	TaxAmount json.Number `json:"taxAmount"`
}

type discountJSON struct {
	Name          string      `json:"name"`
	Amount        json.Number `json:"amount"`
	PromotionCode string      `json:"promotion_code,omitempty"`
}

type installmentJSON struct {
	Label   string      `json:"label"`
	DueDate string      `json:"dueDate"`
	Amount  json.Number `json:"amount"`
}

// priceJSON are the price fields a quote and a booking share (B2).
type priceJSON struct {
	TotalRent          json.Number            `json:"totalRent"`
	TaxTotal           json.Number            `json:"taxTotal"`
	ServiceTotal       json.Number            `json:"serviceTotal"`
	DiscountTotal      json.Number            `json:"discountTotal"`
	GrandTotal         json.Number            `json:"grandTotal"`
	DamageDeposit      json.Number            `json:"damageDeposit"`
	QtyOfNights        int                    `json:"qtyofnights"`
	MinNightlyPrice    json.Number            `json:"minNightlyPrice"`
	MaxNightlyPrice    json.Number            `json:"maxNightlyPrice"`
	NightlyPriceDetail map[string]json.Number `json:"nightlyPriceDetail"`
	PropertyName       string                 `json:"propertyName"`
	PropertyID         int64                  `json:"propertyId"`
	Checkin            string                 `json:"checkin"`
	Checkout           string                 `json:"checkout"`
	NumberOfAdults     int                    `json:"numberofadults"`
	NumberOfChildren   int                    `json:"numberofchildren"`
	MinimumStay        int                    `json:"minimumStay"`
	Currency           string                 `json:"currency"`
	// ExchangeRate is an extension: the rate the amounts were converted at from the
	// account's currency (units of currency per unit of it; 1 when it is the account's).
	ExchangeRate json.Number    `json:"exchangeRate"`
	Tax          []amountJSON   `json:"tax"`
	Service      []serviceJSON  `json:"service"`
	Discount     []discountJSON `json:"discount"`
	// PaymentSchedule is an extension: what is due when, from the property's policy.
	PaymentSchedule []installmentJSON `json:"paymentSchedule"`
}

func priceOf(q booking.Quote, nights int, name string, pid int64, checkin, checkout string, adults, children int) priceJSON {
	p := priceJSON{TotalRent: money(q.TotalRent), TaxTotal: money(q.TaxTotal), ServiceTotal: money(q.ServiceTotal),
		DiscountTotal: money(q.DiscountTotal), GrandTotal: money(q.GrandTotal), DamageDeposit: money(q.DamageDeposit),
		QtyOfNights: nights, MinNightlyPrice: money(q.MinNightly), MaxNightlyPrice: money(q.MaxNightly),
		NightlyPriceDetail: map[string]json.Number{}, PropertyName: name, PropertyID: pid, Checkin: checkin, Checkout: checkout,
		NumberOfAdults: adults, NumberOfChildren: children, MinimumStay: q.MinimumStay, Currency: q.Currency, ExchangeRate: rateOf(q),
		Tax: []amountJSON{}, Service: []serviceJSON{}, Discount: []discountJSON{}, PaymentSchedule: []installmentJSON{}}
	for d, v := range q.Nightly {
		p.NightlyPriceDetail[d] = money(v)
	}
	for _, t := range q.Taxes {
		p.Tax = append(p.Tax, amountJSON{Name: t.Name, Amount: money(t.Amount)})
	}
	for _, s := range q.Services {
		p.Service = append(p.Service, serviceJSON{Name: s.Name, Amount: money(s.Amount), TaxAmount: money(s.TaxAmount)})
	}
	for _, d := range q.Discounts {
		p.Discount = append(p.Discount, discountJSON{Name: d.Name, Amount: money(d.Amount), PromotionCode: d.PromotionCode})
	}
	for _, in := range q.Schedule {
		p.PaymentSchedule = append(p.PaymentSchedule, installmentJSON{Label: in.Label, DueDate: in.Due, Amount: money(in.Amount)})
	}
	return p
}

// rateOf is a booking's exchange rate; bookings made before conversions existed were all in
// the account's currency.
func rateOf(q booking.Quote) json.Number {
	if q.ExchangeRate == "" {
		return "1"
	}
	return json.Number(q.ExchangeRate)
}

// quoteJSON is the getinfo answer: B2's price fields in B2's order, with the original's
// createdDate and cancellationDate (always null: a quote is not a booking) and the fields
// include[] asks for, each where the original puts it.
type quoteJSON struct {
	TotalRent                  json.Number            `json:"totalRent"`
	TaxTotal                   json.Number            `json:"taxTotal"`
	ServiceTotal               json.Number            `json:"serviceTotal"`
	DiscountTotal              json.Number            `json:"discountTotal"`
	GrandTotal                 json.Number            `json:"grandTotal"`
	GrandTotalBeforeDiscounted *json.Number           `json:"grandTotalBeforeDiscounted,omitempty"` // include[]
	DamageDeposit              json.Number            `json:"damageDeposit"`
	QtyOfNights                int                    `json:"qtyofnights"`
	MinNightlyPrice            json.Number            `json:"minNightlyPrice"`
	MaxNightlyPrice            json.Number            `json:"maxNightlyPrice"`
	NightlyPriceDetail         map[string]json.Number `json:"nightlyPriceDetail"` // dates: encoding/json's sorted keys are date order
	PropertyName               string                 `json:"propertyName"`
	PropertyID                 int64                  `json:"propertyId"`
	Checkin                    string                 `json:"checkin"`
	Checkout                   string                 `json:"checkout"`
	CreatedDate                *string                `json:"createdDate"`
	CancellationDate           *string                `json:"cancellationDate"`
	NumberOfAdults             int                    `json:"numberofadults"`
	NumberOfChildren           int                    `json:"numberofchildren"`
	MinimumStay                int                    `json:"minimumStay"`
	Currency                   string                 `json:"currency"`
	ExchangeRate               json.Number            `json:"exchangeRate"`
	Tax                        []amountJSON           `json:"tax"`
	Service                    []serviceJSON          `json:"service"`
	Discount                   []discountJSON         `json:"discount"`
	DiscountTexts              *[]string              `json:"discounttexts,omitempty"` // include[]
	PaymentSchedule            []installmentJSON      `json:"paymentSchedule"`
	// Issue 31's fields, appended by withPlans (docs/rate-plans.md): the plan quoted and its
	// terms, and when the property has derived plans every plan sold where asked that accepts
	// the stay.
	RatePlanID         *int64                     `json:"ratePlanId,omitempty"`
	RatePlanName       *string                    `json:"ratePlanName,omitempty"`
	Inclusions         *string                    `json:"inclusions,omitempty"`
	CancellationPolicy *ifaceb.CancellationPolicy `json:"cancellationPolicy,omitempty"`
	RatePlans          *[]ratePlanJSON            `json:"ratePlans,omitempty"`
}

// policyOf is a policy in interface B's one shape of it (libs/ifaceb): its name and its
// tiers written out, a named policy's too; nil is a booking's whose policy was never
// recorded (booked before rate plans, on the standard plan then: flexible).
func policyOf(c *booking.Cancellation) ifaceb.CancellationPolicy {
	if c == nil {
		return ifaceb.CancellationPolicyOf(nil)
	}
	out := &contract.Cancellation{Policy: c.Policy}
	for _, t := range c.Tiers {
		out.Tiers = append(out.Tiers, contract.CancellationTier{DaysBefore: t.DaysBefore, Percent: t.Percent})
	}
	return ifaceb.CancellationPolicyOf(out)
}

// ratePlanJSON is one bookable plan of a quote, its totals in the quote's currency.
type ratePlanJSON struct {
	RatePlanID         int64                     `json:"ratePlanId"`
	RatePlanName       string                    `json:"ratePlanName"`
	Inclusions         string                    `json:"inclusions"`
	CancellationPolicy ifaceb.CancellationPolicy `json:"cancellationPolicy"`
	TotalRent          json.Number               `json:"totalRent"`
	GrandTotal         json.Number               `json:"grandTotal"`
}

// withPlans appends the plan quoted and the bookable plans (nil: the property has no
// derived plans, and the answer lists none).
func withPlans(q quoteJSON, t booking.Terms, offers []booking.PlanOffer) quoteJSON {
	pol := policyOf(&t.Cancellation)
	q.RatePlanID, q.RatePlanName, q.Inclusions, q.CancellationPolicy = &t.ID, &t.Name, &t.Inclusions, &pol
	if offers != nil {
		plans := make([]ratePlanJSON, len(offers))
		for i, o := range offers {
			plans[i] = ratePlanJSON{RatePlanID: o.ID, RatePlanName: o.Name, Inclusions: o.Inclusions,
				CancellationPolicy: policyOf(&o.Cancellation), TotalRent: money(o.TotalRent), GrandTotal: money(o.GrandTotal)}
		}
		q.RatePlans = &plans
	}
	return q
}

// quoteOf is the getinfo answer of p, with the optional fields include asks for.
func quoteOf(p priceJSON, include []string, texts []string) quoteJSON {
	q := quoteJSON{TotalRent: p.TotalRent, TaxTotal: p.TaxTotal, ServiceTotal: p.ServiceTotal, DiscountTotal: p.DiscountTotal,
		GrandTotal: p.GrandTotal, DamageDeposit: p.DamageDeposit, QtyOfNights: p.QtyOfNights, MinNightlyPrice: p.MinNightlyPrice,
		MaxNightlyPrice: p.MaxNightlyPrice, NightlyPriceDetail: p.NightlyPriceDetail, PropertyName: p.PropertyName,
		PropertyID: p.PropertyID, Checkin: p.Checkin, Checkout: p.Checkout, NumberOfAdults: p.NumberOfAdults,
		NumberOfChildren: p.NumberOfChildren, MinimumStay: p.MinimumStay, Currency: p.Currency, ExchangeRate: p.ExchangeRate,
		Tax: p.Tax, Service: p.Service, Discount: p.Discount, PaymentSchedule: p.PaymentSchedule}
	for _, inc := range include {
		switch inc {
		case request.IncludeGrandTotalBeforeDisc:
			g, _ := decimal.NewFromString(string(p.GrandTotal))
			d, _ := decimal.NewFromString(string(p.DiscountTotal))
			n := json.Number(g.Add(d).StringFixed(pricing.Scale(p.Currency)))
			q.GrandTotalBeforeDiscounted = &n
		case request.IncludeDiscountTexts:
			t := append([]string{}, texts...)
			q.DiscountTexts = &t
		}
	}
	return q
}

// insertedJSON is the insertservice answer (B2: bookingId, totals, quantities, property and
// date fields, tax and the full service list), in B2's order.
type insertedJSON struct {
	BookingID        int64         `json:"bookingId"`
	TotalRent        json.Number   `json:"totalRent"`
	TaxTotal         json.Number   `json:"taxTotal"`
	ServiceTotal     json.Number   `json:"serviceTotal"`
	DiscountTotal    json.Number   `json:"discountTotal"`
	GrandTotal       json.Number   `json:"grandTotal"`
	DamageDeposit    json.Number   `json:"damageDeposit"`
	QtyOfNights      int           `json:"qtyofnights"`
	PropertyName     string        `json:"propertyName"`
	PropertyID       int64         `json:"propertyId"`
	Checkin          string        `json:"checkin"`
	Checkout         string        `json:"checkout"`
	NumberOfAdults   int           `json:"numberofadults"`
	NumberOfChildren int           `json:"numberofchildren"`
	Currency         string        `json:"currency"`
	ExchangeRate     json.Number   `json:"exchangeRate"`
	Tax              []amountJSON  `json:"tax"`
	Service          []serviceJSON `json:"service"`
}

func insertedOf(b bookingJSON) insertedJSON {
	return insertedJSON{BookingID: b.BookingID, TotalRent: b.TotalRent, TaxTotal: b.TaxTotal, ServiceTotal: b.ServiceTotal,
		DiscountTotal: b.DiscountTotal, GrandTotal: b.GrandTotal, DamageDeposit: b.DamageDeposit, QtyOfNights: b.QtyOfNights,
		PropertyName: b.PropertyName, PropertyID: b.PropertyID, Checkin: b.Checkin, Checkout: b.Checkout,
		NumberOfAdults: b.NumberOfAdults, NumberOfChildren: b.NumberOfChildren, Currency: b.Currency, ExchangeRate: b.ExchangeRate,
		Tax: b.Tax, Service: b.Service}
}

type paymentJSON struct {
	PaymentID   string      `json:"paymentId"`
	Amount      json.Number `json:"amount"`
	Currency    string      `json:"currency"`
	Description string      `json:"description"`
	Time        string      `json:"time"`
	Method      string      `json:"method"`
	// Kind and RefundOf are set on a refund ("refund", the payment it gives back) or a captured
	// damage deposit ("deposit_capture"); a payment received has neither (docs/money.md).
	Kind     string `json:"kind,omitempty"`
	RefundOf string `json:"refundOf,omitempty"`
}

// refundJSON is a cancellation's refund (docs/money.md, "Refunds"): the policy's figures, the
// amount decided, what was refunded so far, and its parts.
type refundJSON struct {
	Status       string           `json:"status"`
	Policy       string           `json:"policy"`
	Percent      json.Number      `json:"percent"`
	PolicyAmount json.Number      `json:"policyAmount"`
	NetPaid      json.Number      `json:"netPaid"`
	Amount       json.Number      `json:"amount"`
	Override     bool             `json:"override"`
	Reason       string           `json:"reason"`
	DecidedAt    string           `json:"decidedAt"`
	Refunded     json.Number      `json:"refunded"`
	Parts        []refundPartJSON `json:"parts"`
}

type refundPartJSON struct {
	PaymentID     string      `json:"paymentId"`
	RefundOf      string      `json:"refundOf"`
	Amount        json.Number `json:"amount"`
	Method        string      `json:"method"`
	Status        string      `json:"status"`
	Attempts      int         `json:"attempts"`
	LastError     string      `json:"lastError"`
	NextAttemptAt *string     `json:"nextAttemptAt"`
	RefundID      string      `json:"refundId"`
}

// refundOf is the refund of b as answered, its times in loc; nil for none.
func refundOf(b booking.Booking, loc *time.Location) *refundJSON {
	r := b.Refund
	if r == nil {
		return nil
	}
	scale := pricing.Scale(b.Quote.Currency)
	out := &refundJSON{Status: r.Status, Policy: r.Policy, Percent: money(r.Percent), PolicyAmount: money(r.PolicyAmount),
		NetPaid: money(r.NetPaid), Amount: money(r.Amount), Override: r.Override, Reason: r.Reason,
		DecidedAt: r.DecidedAt.In(loc).Format(dateTime), Parts: []refundPartJSON{}}
	done := decimal.Zero
	for _, p := range r.Parts {
		part := refundPartJSON{PaymentID: strconv.FormatInt(p.PaymentID, 10), RefundOf: strconv.FormatInt(p.Of, 10), Amount: money(p.Amount),
			Method: p.Method, Status: p.Status, Attempts: p.Attempts, LastError: p.LastError, RefundID: p.RefundID}
		if p.Status == booking.RefundPending && !p.NextAttemptAt.IsZero() {
			at := p.NextAttemptAt.In(loc).Format(dateTime)
			part.NextAttemptAt = &at
		}
		if p.Status == booking.RefundSucceeded {
			amt, _ := decimal.NewFromString(p.Amount)
			done = done.Add(amt)
		}
		out.Parts = append(out.Parts, part)
	}
	out.Refunded = json.Number(done.StringFixed(scale))
	return out
}

type cardJSON struct {
	Number string `json:"number"` // masked
	Brand  string `json:"brand"`
	Expiry string `json:"expiration"`
}

// bookingJSON is the booking object B2, plus documented extensions (status, userId, brandId,
// the protection flags, payments, the masked card, the arrival form).
type bookingJSON struct {
	BookingID        int64   `json:"bookingId"`
	Status           string  `json:"status"`
	FirstName        string  `json:"firstName"`
	LastName         string  `json:"lastName"`
	FullName         string  `json:"fullName"`
	Email            string  `json:"email"`
	Birthday         string  `json:"birthday"`
	Birthplace       string  `json:"birthplace"`
	Phone1           string  `json:"phone1"`
	Phone2           string  `json:"phone2"`
	Country          string  `json:"country"`
	PhoneCountryCode string  `json:"phone_country_code"`
	Address          string  `json:"address"`
	City             string  `json:"city"`
	State            string  `json:"state"`
	Postcode         string  `json:"postcode"`
	FiscalCode       string  `json:"fiscal_code"`
	Other            string  `json:"other"`
	AgreeTermNote    string  `json:"agreeTermNote"`
	ManagerNote      string  `json:"managerNote"`
	OwnerBook        int     `json:"ownerBook"`
	LeadSourceID     int64   `json:"leadsourceId"`
	UserID           int64   `json:"userId"`
	BrandID          int64   `json:"brandId"`
	CreatedDate      string  `json:"createdDate"`
	CancellationDate *string `json:"cancellationDate"`
	CSADamage        int     `json:"csaDamageProtection"`
	CSATravel        int     `json:"csaTravelInsurance"`
	PromotionCode    string  `json:"promotionCode"`
	priceJSON
	Payments    []paymentJSON `json:"payments"`
	AmountPaid  json.Number   `json:"amountPaid"`
	PaymentAuto int           `json:"paymentAuto"`
	CreditCard  *cardJSON     `json:"creditCard"`
	ArrivalForm *arrivalJSON  `json:"arrivalForm"`
	// Issue 31's fields, appended: the plan booked, its name and policy as booked, the
	// channel ("": direct). Always written; pointers so that an answer stored before them
	// (an idempotent replay rewritten by an erasure) reads and writes back without them.
	RatePlanID         *int64                     `json:"ratePlanId,omitempty"`
	RatePlanName       *string                    `json:"ratePlanName,omitempty"`
	CancellationPolicy *ifaceb.CancellationPolicy `json:"cancellationPolicy,omitempty"`
	Channel            *string                    `json:"channel,omitempty"`
	// Issue 33's: the refund its cancellation decided (docs/money.md); absent on a booking
	// never cancelled (or cancelled before refunds).
	Refund *refundJSON `json:"refund,omitempty"`
	// DepositHold is the damage-deposit hold (docs/money.md); absent without a deposit.
	DepositHold *depositJSON `json:"depositHold,omitempty"`
}

// bookingOf is the booking object; its timestamps are shown in loc, the property's time zone
// (docs/booking.md, "Timestamps").
func bookingOf(b booking.Booking, loc *time.Location) bookingJSON {
	g := b.Guest
	out := bookingJSON{BookingID: b.BookingID, Status: b.Status, FirstName: g.FirstName, LastName: g.LastName,
		FullName: g.FirstName + " " + g.LastName, Email: g.Email, Birthday: g.Birthday, Birthplace: g.Birthplace, Phone1: g.Phone1,
		Phone2: g.Phone2, Country: g.Country, PhoneCountryCode: g.PhoneCountryCode, Address: g.Address, City: g.City, State: g.State,
		Postcode: g.Postcode, FiscalCode: g.FiscalCode, Other: g.Other, OwnerBook: b.OwnerBook, LeadSourceID: b.LeadSourceID,
		UserID: b.UserID, BrandID: b.BrandID, CreatedDate: b.CreatedAt.In(loc).Format(dateTime), CSADamage: b.CSADamage,
		CSATravel: b.CSATravel, PromotionCode: b.PromotionCode, PaymentAuto: flag(b.PaymentAuto), Payments: []paymentJSON{},
		priceJSON: priceOf(b.Quote, len(b.Nights), b.PropertyName, b.PropertyID, b.Checkin+" "+b.CheckinTime,
			b.Checkout+" "+b.CheckoutTime, b.Adults, b.Children)}
	if b.CancelledAt != nil {
		s := b.CancelledAt.In(loc).Format(dateTime)
		out.CancellationDate = &s
	}
	paid := decimal.Zero
	ids := make([]int64, 0, len(b.Payments))
	for id := range b.Payments {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p := b.Payments[id]
		pj := paymentJSON{PaymentID: strconv.FormatInt(id, 10), Amount: money(p.Amount), Currency: p.Currency,
			Description: p.Description, Time: p.Time.In(loc).Format(dateTime), Method: p.Method, Kind: p.Kind}
		if p.RefundOf != 0 {
			pj.RefundOf = strconv.FormatInt(p.RefundOf, 10)
		}
		out.Payments = append(out.Payments, pj)
		if p.Kind != booking.KindDepositCapture { // a captured deposit pays for damage, not the stay
			amt, _ := decimal.NewFromString(p.Amount)
			paid = paid.Add(amt)
		}
	}
	out.AmountPaid = json.Number(paid.StringFixed(2))
	if b.Card != nil {
		out.CreditCard = &cardJSON{Number: b.Card.Masked, Brand: b.Card.Brand, Expiry: b.Card.Expiry}
	}
	if b.Arrival != nil {
		a := arrivalOf(*b.Arrival)
		out.ArrivalForm = &a
	}
	// A booking made before rate plans recorded no plan: the standard plan as it then was,
	// named Standard, flexible.
	id, name := b.RatePlanID, b.RatePlanName
	if name == "" && id == contract.StandardPlanID {
		name = ifaceb.StandardPlanName
	}
	pol, channel := policyOf(b.Cancellation), b.Channel
	out.RatePlanID, out.RatePlanName, out.CancellationPolicy, out.Channel = &id, &name, &pol, &channel
	out.Refund = refundOf(b, loc)
	out.DepositHold = depositOf(b.Deposit, loc)
	return out
}

type arrivalJSON struct {
	ArriveBy          string             `json:"arriveBy"`
	TransportNumber   string             `json:"transportNumber"`
	ExpectedTime      string             `json:"expectedTime"`
	URL               string             `json:"url"`
	IsCompleted       string             `json:"isCompleted"`
	DetailInformation []arrivalGuestJSON `json:"detailInformation"`
}

type arrivalGuestJSON struct {
	Name          string `json:"name"`
	Surname       string `json:"surname"`
	DateOfBirth   string `json:"dateOfBirth"`
	Nationality   string `json:"nationality"`
	Email         string `json:"email"`
	PhoneNumber   string `json:"phoneNumber"`
	FrontDocument string `json:"frontDocument"`
	BackDocument  string `json:"backDocument"`
	Address       string `json:"address"`
	Allergies     string `json:"allergies"`
}

func arrivalOf(a arrival.Arrival) arrivalJSON {
	out := arrivalJSON{ArriveBy: a.ArriveBy, TransportNumber: a.TransportNumber, ExpectedTime: a.ExpectedTime, URL: a.URL,
		IsCompleted: "False", DetailInformation: []arrivalGuestJSON{}}
	if a.IsCompleted {
		out.IsCompleted = "True"
	}
	for _, g := range a.Guests {
		out.DetailInformation = append(out.DetailInformation, arrivalGuestJSON{Name: g.Name, Surname: g.Surname,
			DateOfBirth: dateText(g.DateOfBirth), Nationality: g.Nationality, Email: g.Email, PhoneNumber: g.PhoneNumber,
			FrontDocument: g.FrontDocument, BackDocument: g.BackDocument, Address: g.Address, Allergies: g.Allergies})
	}
	return out
}

// userJSON is the user object B4.
type userJSON struct {
	UserID  int    `json:"userId"`
	Email   string `json:"email"`
	Name    string `json:"name"`
	Company string `json:"company"`
	Address string `json:"address"`
	Country string `json:"country"`
	Phone1  string `json:"phone1"`
	Phone2  string `json:"phone2"`
}

func userOf(u guest.User) userJSON {
	return userJSON{UserID: u.UserID, Email: u.Email, Name: u.Name, Company: u.Company, Address: u.Address, Country: u.Country,
		Phone1: u.Phone1, Phone2: u.Phone2}
}
