package property

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/pricing"
)

// Prices are nightly prices. The extra_* prices are charged per guest above
// the standard occupancy. Optional prices are nil when not given.
type Prices struct {
	Daily                                               decimal.Decimal
	Weekend, Weekly, Monthly                            *decimal.Decimal
	ExtraDaily, ExtraWeekend, ExtraWeekly, ExtraMonthly *decimal.Decimal
}

// Rate is the A4 base rate.
type Rate struct {
	Prices
	MinimumStay int // nights
}

// LOSDiscount is a length-of-stay discount: Discount percent off for stays
// of at least Days nights.
type LOSDiscount struct {
	Days     int
	Discount decimal.Decimal
}

// Setting is the A4 booking setting.
type Setting struct {
	StandardOccupants int
	// AcceptBookingUpto is how many months ahead bookings are taken; 0 means
	// the calendar is open for all dates.
	AcceptBookingUpto         int
	ApplyWeekendPrice         bool
	DefaultCheckin            pricing.Weekdays // pricing.AllDays when not given
	DefaultCheckout           pricing.Weekdays // pricing.AllDays when not given
	ApplyExtraFeePerSeason    bool
	Apply6NightsWeeklyRate    bool
	FirstDaySurcharge         decimal.Decimal
	FirstDaySurchargeOneNight bool // first_day_surcharge_apply_one_night
	// Exactly one of SameDayBookingUntil and AdvanceNoticeDays is set.
	SameDayBookingUntil *pricing.Clock
	AdvanceNoticeDays   *int
}

// Season overrides the rate between two dates, both included.
type Season struct {
	Name        string
	MinimumStay int // 0: the rate's minimum stay applies
	Start, End  time.Time
	Prices
	AllowCheckin, AllowCheckout pricing.Weekdays // zero: the setting's defaults apply
}

// Rates is a decoded /api/property-rate body; it replaces the property's
// rates, length-of-stay discounts, setting and seasons as a whole.
type Rates struct {
	InternalCode string
	Rate         Rate
	LOS          []LOSDiscount
	Setting      Setting
	Seasons      []Season
}

const (
	maxSeasons  = 200
	maxStayDays = 365
)

// DecodeRates reads an /api/property-rate body. maxGuest is the property's
// maxguest, which no season's minimum_stay may exceed (the spec's rule); a
// maxGuest of 0 or less skips that rule, so a handler may decode once to
// learn internal_code and again once it has loaded the property.
func DecodeRates(body []byte, maxGuest int) (Rates, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var r Rates
	r.InternalCode, _ = o.String("internal_code", internalCodeRule)
	if rate := o.Object("rate", true); rate != nil {
		r.Rate.Prices = readPrices(rate)
		r.Rate.MinimumStay, _ = rate.Int("minimum_stay", fields.Int{Required: true, Min: 1, Max: maxStayDays})
	}
	r.LOS = readLOS(o)
	r.Setting = readSetting(o.Object("setting", true))
	r.Seasons = readSeasons(o, maxGuest)
	if err := v.Err(); err != nil {
		return Rates{}, err
	}
	return r, nil
}

func readPrices(o *fields.Object) Prices {
	opt := func(name string) *decimal.Decimal { return optional(o.Decimal(name, price)) }
	p := Prices{
		Weekend: opt("weekend_price"), Weekly: opt("weekly_price"), Monthly: opt("monthly_price"),
		ExtraDaily: opt("extra_daily_price"), ExtraWeekend: opt("extra_weekend_price"),
		ExtraWeekly: opt("extra_weekly_price"), ExtraMonthly: opt("extra_monthly_price"),
	}
	p.Daily, _ = o.Decimal("daily_price", requiredPrice)
	return p
}

func readLOS(o *fields.Object) []LOSDiscount {
	items, _ := o.Array("los", fields.List{Max: 40})
	var out []LOSDiscount
	seen := map[int]string{}
	for _, it := range items {
		var l LOSDiscount
		days, ok := it.Int("days", fields.Int{Required: true, Min: 1, Max: 40})
		l.Days = days
		l.Discount, _ = it.Decimal("discount", fields.Dec{Required: true, Min: decimal.NewFromInt(1), Max: decimal.NewFromInt(99), MaxScale: 2})
		if ok {
			if first, dup := seen[days]; dup {
				it.Add("days", "duplicates "+first)
			} else {
				seen[days] = it.Path()
			}
		}
		out = append(out, l)
	}
	return out
}

func readSetting(st *fields.Object) Setting {
	var s Setting
	if st == nil {
		return s
	}
	s.StandardOccupants, _ = st.Int("standard_occupants", fields.Int{Required: true, Min: 1, Max: 50})
	s.AcceptBookingUpto, _ = st.Int("accept_booking_upto", fields.Int{Max: 12})
	s.ApplyWeekendPrice, _ = st.Bool("apply_weekend_price", false)
	s.DefaultCheckin = readWeekdays(st, "default_allow_checkin", pricing.AllDays)
	s.DefaultCheckout = readWeekdays(st, "default_allow_checkout", pricing.AllDays)
	s.ApplyExtraFeePerSeason, _ = st.Bool("apply_extra_fee_per_season", false)
	s.Apply6NightsWeeklyRate, _ = st.Bool("apply_6_nights_weekly_rate", false)
	s.FirstDaySurcharge, _ = st.Decimal("first_day_surcharge", price)
	s.FirstDaySurchargeOneNight, _ = st.Bool("first_day_surcharge_apply_one_night", false)

	const until, notice = "allow_same_day_booking_until", "advanced_notice_booking_from"
	hasUntil, hasNotice := !st.Empty(until), !st.Empty(notice)
	switch {
	case hasUntil && hasNotice:
		st.Add(notice, "must not be set together with "+until)
	case hasUntil:
		s.SameDayBookingUntil = readClock(st, until)
	case hasNotice:
		s.AdvanceNoticeDays = optional(st.Int(notice, fields.Int{Required: true, Max: maxStayDays}))
	default:
		st.Add(until, "is required unless "+notice+" is set")
	}
	return s
}

// readClock reads a 24-hour time by pricing's one rule (pricing.ParseClock).
func readClock(o *fields.Object, name string) *pricing.Clock {
	s, ok := o.String(name, fields.Str{Required: true})
	if !ok {
		return nil
	}
	c, err := pricing.ParseClock(s)
	if err != nil {
		o.Add(name, pricing.ClockRule)
		return nil
	}
	return &c
}

// readWeekdays reads a day set by pricing's one rule (pricing.ParseWeekdays: names from
// All and Sunday to Saturday, comma-separated, their union). A blank or absent value
// gives def.
func readWeekdays(o *fields.Object, name string, def pricing.Weekdays) pricing.Weekdays {
	s, ok := o.String(name, fields.Str{Max: 100})
	if !ok {
		return def
	}
	w, err := pricing.ParseWeekdays(s)
	switch {
	case err != nil:
		o.Add(name, pricing.WeekdaysRule)
		return 0
	case w == 0:
		return def
	}
	return w
}

// readSeasons reads the seasons and refuses any that overlaps an earlier one
// in the list (dates inclusive).
func readSeasons(o *fields.Object, maxGuest int) []Season {
	items, _ := o.Array("season", fields.List{Max: maxSeasons})
	var out []Season
	var valid []int // indexes into out of seasons with good dates
	for _, it := range items {
		var s Season
		s.Name, _ = it.String("name", fields.Str{Max: 100})
		ms, ok := it.Int("minimum_stay", fields.Int{Min: 1, Max: maxStayDays})
		if ok && maxGuest > 0 && ms > maxGuest {
			it.Addf("minimum_stay", "must be at most %d (the property's maxguest)", maxGuest)
		}
		s.MinimumStay = ms
		start, okStart := it.Date("start_date", true)
		end, okEnd := it.Date("end_date", true)
		s.Start, s.End = start, end
		datesOK := okStart && okEnd
		if datesOK && end.Before(start) {
			it.Add("end_date", "must not be before start_date")
			datesOK = false
		}
		s.Prices = readPrices(it)
		s.AllowCheckin = readWeekdays(it, "allow_checkin", 0)
		s.AllowCheckout = readWeekdays(it, "allow_checkout", 0)
		if datesOK {
			for _, i := range valid {
				if !start.After(out[i].End) && !out[i].Start.After(end) {
					it.Add("start_date", "overlaps "+items[i].Path())
					datesOK = false
					break
				}
			}
		}
		if datesOK {
			valid = append(valid, len(out))
		}
		out = append(out, s)
	}
	return out
}
