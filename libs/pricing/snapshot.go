package pricing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
)

// ErrDeleted is FromEvent's answer for a deleted property: drop it from your view.
var ErrDeleted = errors.New("pricing: the property is deleted")

// The account defaults (docs/interface-a.md, /api/account-settings), in force until
// ApplySettings brings the account's own.
const (
	DefaultCurrency = "USD"
	DefaultTimeZone = "UTC"
)

// reader converts snapshot values and keeps the first error, named by its JSON path.
type reader struct{ err error }

func (r *reader) fail(path, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("pricing: snapshot %s: %s", path, fmt.Sprintf(format, args...))
	}
}

func (r *reader) money(path, s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		r.fail(path, "%q is not a decimal", s)
		return decimal.Zero
	}
	if d.Sign() < 0 {
		r.fail(path, "%s is negative", s)
	}
	return d
}

func (r *reader) optMoney(path, s string) *decimal.Decimal {
	if s == "" {
		return nil
	}
	d := r.money(path, s)
	return &d
}

func (r *reader) date(path, s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		r.fail(path, "%q: %v", s, err)
	}
	return d
}

func (r *reader) days(path, s string) Weekdays {
	w, err := ParseWeekdays(s)
	if err != nil {
		r.fail(path, "%v", err)
	}
	return w
}

func (r *reader) prices(path string, s contract.Prices) Prices {
	return Prices{Daily: r.money(path+".daily_price", s.Daily), Weekend: r.optMoney(path+".weekend_price", s.Weekend),
		Weekly: r.optMoney(path+".weekly_price", s.Weekly), Monthly: r.optMoney(path+".monthly_price", s.Monthly),
		ExtraDaily: r.optMoney(path+".extra_daily_price", s.ExtraDaily), ExtraWeekend: r.optMoney(path+".extra_weekend_price", s.ExtraWeekend),
		ExtraWeekly: r.optMoney(path+".extra_weekly_price", s.ExtraWeekly), ExtraMonthly: r.optMoney(path+".extra_monthly_price", s.ExtraMonthly)}
}

func (r *reader) charge(path string, c *contract.Charge, withAmount bool, dues ...string) *Charge {
	if c == nil {
		return nil
	}
	out := &Charge{Due: c.IsDueAt, XDay: c.XDay, AmountType: c.AmountType}
	known := false
	for _, d := range dues {
		known = known || d == c.IsDueAt
	}
	if !known {
		r.fail(path+".is_due_at", "%q is not one of %v", c.IsDueAt, dues)
	}
	if (c.IsDueAt == DueXDayPriorArrival || c.IsDueAt == DueXDayAfterBooking) && c.XDay < 1 {
		r.fail(path+".x_day", "is required for %s", c.IsDueAt)
	}
	if withAmount {
		switch c.AmountType {
		case Flat, PercentOfRent, PercentOfGrandTotal:
		default:
			r.fail(path+".amount_type", "%q is not Flat, PercentOfRent or PercentOfGrandTotal", c.AmountType)
		}
		out.Amount = r.money(path+".amount", c.Amount)
	}
	return out
}

// signed reads a signed decimal (an adjustment's value).
func (r *reader) signed(path, s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		r.fail(path, "%q is not a decimal", s)
		return decimal.Zero
	}
	return d
}

func (r *reader) adjustment(path string, a contract.Adjustment) Adjustment {
	if a.Type != AdjustPercent && a.Type != AdjustAmount {
		r.fail(path+".type", "%q is not percent or amount", a.Type)
	}
	return Adjustment{Type: a.Type, Value: r.signed(path+".value", a.Value)}
}

func (r *reader) markups(path string, ms []contract.Markup) []Markup {
	var out []Markup
	for i, m := range ms {
		at := fmt.Sprintf("%s[%d]", path, i)
		if m.Channel == "" {
			r.fail(at+".channel", "is required")
		}
		out = append(out, Markup{Channel: strings.ToLower(m.Channel), Adjustment: r.adjustment(at, m.Adjustment)})
	}
	return out
}

func (r *reader) cancellation(path string, c *contract.Cancellation) Cancellation {
	if c == nil {
		return Cancellation{Policy: CancelFlexible}.Resolved()
	}
	out := Cancellation{Policy: c.Policy}
	for i, t := range c.Tiers {
		out.Tiers = append(out.Tiers, CancellationTier{DaysBefore: t.DaysBefore, Percent: r.money(fmt.Sprintf("%s.tiers[%d].percent", path, i), t.Percent)})
	}
	if err := checkCancellation(path, out); err != nil && r.err == nil {
		r.err = errors.New("pricing: snapshot " + strings.TrimPrefix(err.Error(), "pricing: "))
	}
	return out.Resolved()
}

func (r *reader) terms(path string, t contract.PlanTerms) PlanTerms {
	return PlanTerms{Name: t.Name, Inclusions: t.Inclusions, Cancellation: r.cancellation(path+".cancellation", t.Cancellation)}
}

func (r *reader) restrictions(path string, rs []contract.Restriction) []Restriction {
	var out []Restriction
	for i, x := range rs {
		at := fmt.Sprintf("%s[%d]", path, i)
		out = append(out, Restriction{Start: r.date(at+".start_date", x.StartDate), End: r.date(at+".end_date", x.EndDate),
			MinStayArrival: x.MinStayArrival, MinStayThrough: x.MinStayThrough, MaxStay: x.MaxStay,
			ClosedToArrival: x.ClosedToArrival, ClosedToDeparture: x.ClosedToDeparture, StopSell: x.StopSell})
	}
	return out
}

func (r *reader) plan(path string, x contract.RatePlan) Plan {
	pl := Plan{ID: x.ID, PlanTerms: r.terms(path, x.PlanTerms), Adjustment: r.adjustment(path+".adjustment", x.Adjustment),
		MinimumStay: x.MinimumStay, Restrictions: r.restrictions(path+".restrictions", x.Restrictions),
		SoldOn: SoldOn{Direct: x.SoldOn.Direct, AllBrands: x.SoldOn.AllBrands, Brands: x.SoldOn.Brands}}
	for _, c := range x.SoldOn.Channels {
		pl.SoldOn.Channels = append(pl.SoldOn.Channels, strings.ToLower(c))
	}
	for i, g := range x.Ranges {
		at := fmt.Sprintf("%s.ranges[%d]", path, i)
		pl.Ranges = append(pl.Ranges, RangeAdjustment{Start: r.date(at+".start_date", g.StartDate), End: r.date(at+".end_date", g.EndDate),
			Adjustment: r.adjustment(at, g.Adjustment)})
	}
	return pl
}

// Priced is the Property of a property event under its account's settings (the latest
// vros.account.settings.updated, or contract.DefaultSettings before the first): what
// booking-svc quotes and catalog-svc shows, so that the two agree.
func Priced(s contract.Property, st contract.Settings) (Property, error) {
	p, err := FromEvent(s)
	if err != nil {
		return p, err
	}
	// Before ApplySettings, which compiles the rates: they depend on the weekend nights and
	// the account's markups.
	p.WeekendNights = WeekendOf(st.WeekendNights)
	var r reader
	p.AccountMarkups = r.markups("settings.channel_markups", st.ChannelMarkups)
	if r.err != nil {
		return Property{}, r.err
	}
	return p, p.ApplySettings(st.Currency, st.Timezone)
}

// FromSnapshot is FromEvent of the JSON data of a vros.property.* event.
func FromSnapshot(data []byte) (Property, error) {
	var s contract.Property
	if err := json.Unmarshal(data, &s); err != nil {
		return Property{}, fmt.Errorf("pricing: snapshot: %w", err)
	}
	return FromEvent(s)
}

// FromEvent converts the data of a vros.property.* event into a Property, and reports
// values that cannot be priced, named by their JSON path. The event carries neither the
// currency nor, when the property has no zone of its own, the time zone: they are the
// account's, and stay at DefaultCurrency and DefaultTimeZone until ApplySettings is called
// with the account's settings (Priced does both). A deleted property is ErrDeleted.
func FromEvent(s contract.Property) (Property, error) {
	if s.Deleted {
		return Property{}, ErrDeleted
	}
	p := Property{MaxGuest: s.Content.MaxGuest, NoChildren: s.Content.AllowChildren != nil && !*s.Content.AllowChildren,
		Currency: DefaultCurrency, TimeZone: s.Content.Timezone, Location: time.UTC}
	if p.TimeZone != "" {
		loc, err := loadZone(p.TimeZone)
		if err != nil {
			return Property{}, err
		}
		p.Location = loc
	}
	var r reader

	if sr := s.Rates; sr != nil {
		st := sr.Setting
		rates := &Rates{Base: r.prices("rates.rate", sr.Rate), MinimumStay: sr.MinimumStay, Setting: Setting{
			StandardOccupants: st.StandardOccupants, AcceptBookingUpto: st.AcceptBookingUpto,
			ApplyWeekendPrice: st.ApplyWeekendPrice, ApplyExtraFeePerSeason: st.ApplyExtraFeePerSeason,
			DefaultCheckin:         r.days("rates.setting.default_allow_checkin", st.DefaultAllowCheckin),
			DefaultCheckout:        r.days("rates.setting.default_allow_checkout", st.DefaultAllowCheckout),
			Apply6NightsWeeklyRate: st.Apply6NightsWeeklyRate, FirstDaySurchargeOneNight: st.FirstDaySurchargeOneNight,
		}}
		if st.FirstDaySurcharge != "" {
			rates.Setting.FirstDaySurcharge = r.money("rates.setting.first_day_surcharge", st.FirstDaySurcharge)
		}
		if st.AllowSameDayBookingUntil != "" {
			c, err := ParseClock(st.AllowSameDayBookingUntil)
			if err != nil {
				r.fail("rates.setting.allow_same_day_booking_until", "%v", err)
			}
			rates.Setting.SameDayUntil = &c
		}
		if st.AdvancedNoticeBookingFrom != nil {
			rates.Setting.AdvanceNoticeDays = *st.AdvancedNoticeBookingFrom
		}
		for i, l := range sr.LOS {
			rates.LOS = append(rates.LOS, LOS{Days: l.Days, Percent: r.money(fmt.Sprintf("rates.los[%d].discount", i), l.Discount)})
		}
		for i, se := range sr.Seasons {
			path := fmt.Sprintf("rates.seasons[%d]", i)
			rates.Seasons = append(rates.Seasons, Season{Name: se.Name, MinimumStay: se.MinimumStay,
				Start: r.date(path+".start_date", se.StartDate), End: r.date(path+".end_date", se.EndDate),
				Prices:       r.prices(path+".prices", se.Prices),
				AllowCheckin: r.days(path+".allow_checkin", se.AllowCheckin), AllowCheckout: r.days(path+".allow_checkout", se.AllowCheckout)})
		}
		p.Rates = rates
	}

	if len(s.Prices) > 0 {
		p.DatePrices = make(map[Date]DatePrice, len(s.Prices))
		for k, v := range s.Prices {
			path := "prices." + k
			p.DatePrices[r.date(path, k)] = DatePrice{Price: r.optMoney(path+".price", v.Price),
				Weekly: r.optMoney(path+".weekly_price", v.WeeklyPrice), Monthly: r.optMoney(path+".monthly_price", v.MonthPrice),
				MinNights: v.MinNights}
		}
	}

	for i, t := range s.Taxes {
		path := fmt.Sprintf("taxes[%d]", i)
		if t.Type != TaxPercent && t.Type != TaxFixed {
			r.fail(path+".type", "%d is not 1 (percent) or 2 (fixed)", t.Type)
		}
		if t.CalculationType < 0 || t.CalculationType > PerGuestNight {
			r.fail(path+".calculation_type", "%d is not 1, 2 or 3", t.CalculationType)
		}
		p.Taxes = append(p.Taxes, Tax{Name: t.Name, Type: t.Type, Amount: r.money(path+".amount", t.Amount),
			Calculation: t.CalculationType, Default: t.Def})
	}

	for i, sv := range s.Services {
		path := fmt.Sprintf("services[%d]", i)
		line := ServiceLine{Name: sv.Name, Applicable: sv.Applicable, Amount: r.money(path+".amount", sv.Amount),
			Type: sv.Type, Unit: sv.Unit}
		for j, t := range sv.Taxes {
			line.Taxes = append(line.Taxes, ServiceTax{Name: t.Name, Perc: r.money(fmt.Sprintf("%s.taxes[%d].perc", path, j), t.Perc)})
		}
		p.Services = append(p.Services, Service{ServiceLine: line, Default: sv.Def})
	}

	if sp := s.Policy; sp != nil {
		pol := &Policy{PaymentType: sp.PaymentType,
			DamageDeposit: r.charge("policy.damage_deposit", sp.DamageDeposit, true, DueBooking, DueArrival, DueCheckout, DueXDayPriorArrival),
			Full:          r.charge("policy.payment_full", sp.PaymentFull, false, DueBooking, DueArrival, DueCheckout, DueXDayPriorArrival, DueXDayAfterBooking),
			First:         r.charge("policy.first_payment", sp.FirstPayment, true, DueBooking, DueArrival, DueXDayPriorArrival, DueXDayAfterBooking),
			Remaining:     r.charge("policy.remaining_payment", sp.RemainingPayment, false, DueCheckout, DueArrival, DueXDayPriorArrival, DueXDayAfterBooking)}
		switch {
		case pol.PaymentType == PayFull && pol.Full == nil:
			r.fail("policy.payment_full", "is required when payment_type is Full")
		case pol.PaymentType == PayPartial && (pol.First == nil || pol.Remaining == nil):
			r.fail("policy.first_payment", "and remaining_payment are required when payment_type is Partial")
		case pol.PaymentType != PayFull && pol.PaymentType != PayPartial && pol.PaymentType != PayNone:
			r.fail("policy.payment_type", "%q is not Full, Partial or None", pol.PaymentType)
		}
		p.Policy = pol
	}
	if s.StandardPlan != nil {
		t := r.terms("standard_plan", *s.StandardPlan)
		p.Standard = &t
	}
	for i, x := range s.RatePlans {
		p.Plans = append(p.Plans, r.plan(fmt.Sprintf("rate_plans[%d]", i), x))
	}
	p.Restrictions = r.restrictions("restrictions", s.Restrictions)
	p.Markups = r.markups("channel_markups", s.ChannelMarkups)

	if r.err != nil {
		return Property{}, r.err
	}
	if err := p.Prepare(); err != nil {
		return Property{}, err
	}
	return p, nil
}
