package compose

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/messaging-svc/internal/bookingsvc"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// views is what a message is composed from besides its template: the booking (nil for an
// owner notice about none), the account's and the property's views, and the brand.
type views struct {
	b        *bookingsvc.Booking
	account  store.AccountView
	prop     store.PropertyView
	brand    int64 // the booking's brand (0: none)
	property int64 // the booking's property
	brandV   store.BrandView
	loc      *time.Location
}

// context reads the views of the account's booking b (nil: none; property and brand then
// come from the message).
func (c *Composer) context(ctx context.Context, account string, b *bookingsvc.Booking, property, brand int64) (*views, error) {
	x := &views{b: b, property: property, brand: brand}
	if b != nil {
		if b.PropertyID > 0 {
			x.property = b.PropertyID
		}
		if b.BrandID > 0 {
			x.brand = b.BrandID
		}
	}
	acc, _, err := c.o.Views.Account(ctx, account)
	if err != nil {
		return nil, err
	}
	x.account = acc
	if x.property > 0 {
		if x.prop, _, err = c.o.Views.Property(ctx, account, x.property); err != nil {
			return nil, err
		}
	}
	// The account's name is not in any event today (the settings carry none): a template's
	// .Account.Name, and the sender's name, fall back to the property's name.
	if x.account.Name == "" {
		x.account.Name = x.prop.Name
		if x.account.Name == "" && b != nil {
			x.account.Name = b.PropertyName
		}
	}
	for _, br := range acc.Brands {
		if br.ID == x.brand && x.brand != 0 {
			x.brandV = br
		}
	}
	// The property's zone, else the account's, else UTC (as booking-svc's).
	x.loc = time.UTC
	for _, z := range []string{x.prop.Timezone, acc.Timezone} {
		if z == "" {
			continue
		}
		if loc, err := time.LoadLocation(z); err == nil {
			x.loc = loc
			break
		}
	}
	return x, nil
}

// language is the message's language by its rule (trigger.Lang): the booking's (the guest
// carries none at booking-svc today), else the brand's default, else the account's first;
// the account's first for an owner notice. A language vros does not support is passed over;
// none left is English.
func (x *views) language(rule trigger.Lang) string {
	var first string
	if len(x.account.Languages) > 0 {
		first = x.account.Languages[0]
	}
	cands := []string{first}
	if rule != trigger.LangAccount {
		cands = []string{x.brandV.Language, first}
	}
	for _, l := range cands {
		if l = strings.ToLower(strings.TrimSpace(l)); template.IsLanguage(l) {
			return l
		}
	}
	return template.Fallback
}

// senderName is the name a message is sent under when the account set none: the brand's,
// else the account's.
func (x *views) senderName() string {
	if x.brandV.Name != "" {
		return x.brandV.Name
	}
	return x.account.Name
}

// data is the template data of a message of trig in lang, sent at now.
func (x *views) data(trig, lang string, now time.Time) template.Data {
	d := template.Data{
		Property: template.Property{Name: x.prop.Name, Address: x.prop.Address, City: x.prop.City, Postcode: x.prop.Postcode,
			Country: x.prop.Country, CheckinTime: x.prop.CheckinTime, CheckoutTime: x.prop.CheckoutTime, Timezone: x.prop.Timezone},
		Brand:   template.Brand{Name: x.brandV.Name, Website: x.brandV.Website},
		Account: template.Account{Name: x.account.Name},
		Message: template.Message{Trigger: trig, Language: lang, SentDate: now.In(x.loc).Format(time.DateOnly)},
	}
	if x.b == nil {
		return d
	}
	b := *x.b
	d.Guest = template.Guest{FirstName: b.FirstName, LastName: b.LastName, FullName: guestName(b), Email: strings.TrimSpace(b.Email),
		Phone: b.Phone1}
	if d.Guest.Phone == "" {
		d.Guest.Phone = b.Phone2
	}
	checkin, inTime := dayAndTime(b.Checkin)
	checkout, outTime := dayAndTime(b.Checkout)
	if d.Property.CheckinTime == "" {
		d.Property.CheckinTime = inTime
	}
	if d.Property.CheckoutTime == "" {
		d.Property.CheckoutTime = outTime
	}
	scale := pricing.Scale(b.Currency)
	paid := amount(b.AmountPaid)
	balance := amount(b.GrandTotal).Sub(paid)
	if balance.IsNegative() {
		balance = decimal.Zero
	}
	bk := template.Booking{ID: b.BookingID, Status: b.Status, Checkin: checkin, Checkout: checkout, Nights: b.Nights,
		Adults: b.Adults, Children: b.Children, Currency: b.Currency, TotalRent: money(b.TotalRent, scale),
		GrandTotal: money(b.GrandTotal, scale), AmountPaid: paid.StringFixed(scale), BalanceDue: balance.StringFixed(scale)}
	for _, p := range b.Payments {
		id, _ := strconv.ParseInt(p.PaymentID, 10, 64)
		day, _ := dayAndTime(p.Time)
		bk.Payments = append(bk.Payments, template.Payment{ID: id, Amount: money(p.Amount, scale), Date: day, Method: p.Method, Kind: p.Kind})
	}
	// An installment is paid when the payments cover it and every one before it.
	due := decimal.Zero
	for _, in := range b.PaymentSchedule {
		due = due.Add(amount(in.Amount))
		bk.Schedule = append(bk.Schedule, template.Installment{DueDate: in.DueDate, Amount: money(in.Amount, scale),
			Paid: paid.GreaterThanOrEqual(due)})
	}
	if r := b.Refund; r != nil {
		bk.Refund = template.Refund{Status: r.Status, Amount: money(r.Amount, scale), Refunded: money(r.Refunded, scale),
			Policy: r.Policy, Percent: r.Percent.String()}
	}
	if dep := b.Deposit; dep != nil {
		bk.Deposit = template.Deposit{Status: dep.Status, Amount: money(dep.Amount, scale), DueDate: dep.DueDate, ReleaseOn: dep.ReleaseOn}
		if dep.CapturedAmount != nil {
			bk.Deposit.CapturedAmount = money(*dep.CapturedAmount, scale)
		}
	}
	if b.RatePlanName != nil {
		bk.RatePlan = *b.RatePlanName
	}
	if b.Channel != nil {
		bk.Channel = *b.Channel
	}
	if p := b.Policy; p != nil {
		bk.CancellationPolicy.Name = p.Policy
		for _, t := range p.Tiers {
			bk.CancellationPolicy.Tiers = append(bk.CancellationPolicy.Tiers, template.CancellationTier{DaysBefore: t.DaysBefore, Percent: t.Percent.String()})
		}
	}
	d.Booking = bk
	if d.Property.Name == "" {
		d.Property.Name = b.PropertyName
	}
	return d
}

// dayAndTime splits booking-svc's "YYYY-MM-DD HH:MM[:SS]" into the day and "HH:MM".
func dayAndTime(s string) (day, clock string) {
	day, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	if len(rest) >= 5 {
		clock = rest[:5]
	}
	return day, clock
}

// amount reads a decimal (zero when empty or broken).
func amount(n interface{ String() string }) decimal.Decimal {
	d, err := decimal.NewFromString(n.String())
	if err != nil {
		return decimal.Zero
	}
	return d
}

// money writes a decimal with the currency's minor unit ("" stays "").
func money(n interface{ String() string }, scale int32) string {
	if n.String() == "" {
		return ""
	}
	return amount(n).StringFixed(scale)
}

// firstUnpaid is the schedule's first installment not paid (zero: none).
func firstUnpaid(s []template.Installment) template.Installment {
	for _, in := range s {
		if !in.Paid {
			return in
		}
	}
	return template.Installment{}
}
