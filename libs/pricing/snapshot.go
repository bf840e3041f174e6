package pricing

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// ErrDeleted is FromSnapshot's answer for a deleted property: drop it from your view.
var ErrDeleted = errors.New("pricing: the property is deleted")

// The account defaults (docs/interface-a.md, /api/account-settings), in force until
// ApplySettings brings the account's own.
const (
	DefaultCurrency = "USD"
	DefaultTimeZone = "UTC"
)

// The snapshot schema of property-svc (property-svc/internal/store/record.go), reduced to
// what pricing reads. It is restated here rather than imported, so that consumers do not
// depend on property-svc's internals; docs/events.md is the contract.
type snapshot struct {
	Deleted bool `json:"deleted"`
	Content struct {
		MaxGuest      int    `json:"maxguest"`
		AllowChildren *bool  `json:"allowchildren"`
		Timezone      string `json:"timezone"`
	} `json:"content"`
	Policy   *snapPolicy        `json:"policy"`
	Rates    *snapRates         `json:"rates"`
	Taxes    []snapTax          `json:"taxes"`
	Services []snapService      `json:"services"`
	Prices   map[string]snapDay `json:"prices"`
}

type snapCharge struct {
	IsDueAt    string `json:"is_due_at"`
	XDay       int    `json:"x_day"`
	AmountType string `json:"amount_type"`
	Amount     string `json:"amount"`
}

type snapPolicy struct {
	PaymentType      string      `json:"payment_type"`
	DamageDeposit    *snapCharge `json:"damage_deposit"`
	PaymentFull      *snapCharge `json:"payment_full"`
	FirstPayment     *snapCharge `json:"first_payment"`
	RemainingPayment *snapCharge `json:"remaining_payment"`
}

type snapPrices struct {
	Daily        string `json:"daily_price"`
	Weekend      string `json:"weekend_price"`
	Weekly       string `json:"weekly_price"`
	Monthly      string `json:"monthly_price"`
	ExtraDaily   string `json:"extra_daily_price"`
	ExtraWeekend string `json:"extra_weekend_price"`
	ExtraWeekly  string `json:"extra_weekly_price"`
	ExtraMonthly string `json:"extra_monthly_price"`
}

type snapRates struct {
	Rate        snapPrices `json:"rate"`
	MinimumStay int        `json:"minimum_stay"`
	LOS         []struct {
		Days     int    `json:"days"`
		Discount string `json:"discount"`
	} `json:"los"`
	Setting struct {
		StandardOccupants         int    `json:"standard_occupants"`
		AcceptBookingUpto         int    `json:"accept_booking_upto"`
		ApplyWeekendPrice         bool   `json:"apply_weekend_price"`
		DefaultAllowCheckin       string `json:"default_allow_checkin"`
		DefaultAllowCheckout      string `json:"default_allow_checkout"`
		ApplyExtraFeePerSeason    bool   `json:"apply_extra_fee_per_season"`
		AllowSameDayBookingUntil  string `json:"allow_same_day_booking_until"`
		AdvancedNoticeBookingFrom *int   `json:"advanced_notice_booking_from"`
		Apply6NightsWeeklyRate    bool   `json:"apply_6_nights_weekly_rate"`
		FirstDaySurcharge         string `json:"first_day_surcharge"`
		FirstDaySurchargeOneNight bool   `json:"first_day_surcharge_apply_one_night"`
	} `json:"setting"`
	Seasons []struct {
		Name          string     `json:"name"`
		MinimumStay   int        `json:"minimum_stay"`
		StartDate     string     `json:"start_date"`
		EndDate       string     `json:"end_date"`
		Prices        snapPrices `json:"prices"`
		AllowCheckin  string     `json:"allow_checkin"`
		AllowCheckout string     `json:"allow_checkout"`
	} `json:"seasons"`
}

type snapTax struct {
	Name            string `json:"name"`
	Amount          string `json:"amount"`
	Type            int    `json:"type"`
	CalculationType int    `json:"calculation_type"`
	Def             bool   `json:"def"`
}

type snapService struct {
	Name       string `json:"name"`
	Amount     string `json:"amount"`
	Type       int    `json:"type"`
	Applicable int    `json:"applicable"`
	Unit       int    `json:"unit"`
	Def        bool   `json:"def"`
	Taxes      []struct {
		Name string `json:"name"`
		Perc string `json:"perc"`
	} `json:"taxes"`
}

type snapDay struct {
	Price       string `json:"price"`
	WeeklyPrice string `json:"weekly_price"`
	MonthPrice  string `json:"monthly_price"`
	MinNights   int    `json:"min_nights"`
}

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

func (r *reader) prices(path string, s snapPrices) Prices {
	return Prices{Daily: r.money(path+".daily_price", s.Daily), Weekend: r.optMoney(path+".weekend_price", s.Weekend),
		Weekly: r.optMoney(path+".weekly_price", s.Weekly), Monthly: r.optMoney(path+".monthly_price", s.Monthly),
		ExtraDaily: r.optMoney(path+".extra_daily_price", s.ExtraDaily), ExtraWeekend: r.optMoney(path+".extra_weekend_price", s.ExtraWeekend),
		ExtraWeekly: r.optMoney(path+".extra_weekly_price", s.ExtraWeekly), ExtraMonthly: r.optMoney(path+".extra_monthly_price", s.ExtraMonthly)}
}

func (r *reader) charge(path string, c *snapCharge, withAmount bool, dues ...string) *Charge {
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

// FromSnapshot decodes the data of a vros.property.* event into a Property. The snapshot
// carries neither the currency nor, when the property has no zone of its own, the time
// zone: they are the account's, and stay at DefaultCurrency and DefaultTimeZone until
// ApplySettings is called with the account's settings. A deleted property is ErrDeleted.
func FromSnapshot(data []byte) (Property, error) {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return Property{}, fmt.Errorf("pricing: snapshot: %w", err)
	}
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
	if r.err != nil {
		return Property{}, r.err
	}
	if err := p.Prepare(); err != nil {
		return Property{}, err
	}
	return p, nil
}
