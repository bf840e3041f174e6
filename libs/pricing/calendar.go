package pricing

import "github.com/shopspring/decimal"

// Day is one day of a calendar (getcalendar) for a number of guests.
type Day struct {
	Date Date
	// Price is what the night of Date costs in a one-night stay for the guests: exactly
	// Nights[0].Price of a Quote for that stay. A one-night stay has no weekly or monthly
	// price, and discounts and the first-day surcharge are not nightly prices, so none of
	// them is in it.
	Price decimal.Decimal
	// WeeklyPrice and MonthlyPrice are 7 and 28 times what the night costs in a stay of
	// 7–27 nights and of 28 nights or more: the weekly and monthly price of the date's
	// rate (7 or 28 times the daily price when it has none), extra guests included.
	WeeklyPrice, MonthlyPrice decimal.Decimal
	// GuestPrice, GuestWeeklyPrice and GuestMonthlyPrice are the same for one guest above
	// the standard occupancy.
	GuestPrice, GuestWeeklyPrice, GuestMonthlyPrice decimal.Decimal
	// MinimumStay is the minimum stay of a stay arriving on Date: the resolved min stay on
	// arrival (a restriction › setprices' minNights › the season › the base), and on a
	// derived plan (NightPriceOn) at least the plan's minimum stay. MinStayThrough (0: none)
	// binds every stay holding the night; MaxStay (0: none) a stay arriving on Date.
	MinimumStay, MinStayThrough, MaxStay int
	// CheckinAllowed and CheckoutAllowed: may a stay start, or end, on Date (the weekday
	// rules, or a restriction's closed to arrival / departure). ClosedToArrival and
	// ClosedToDeparture are set when a restriction closes Date; StopSell when the night of
	// Date is not sold.
	CheckinAllowed, CheckoutAllowed              bool
	ClosedToArrival, ClosedToDeparture, StopSell bool
	Basis                                        Basis
	Season                                       string
}

// NightPrice prices the night d for a calendar, on the standard plan. It reports false when
// the property has no rates (or rates that cannot be priced, which FromEvent and Prepare
// report as errors). It reads the same night prices as Quote (plan.rate and nightRate.at),
// and the same day rules (Property.Rules), so the two cannot disagree.
func NightPrice(p Property, d Date, guests int) (Day, bool) {
	pl, err := p.compiled()
	if pl == nil || err != nil || d.IsZero() {
		return Day{}, false
	}
	extra := pl.extraGuests(guests)
	src, o := pl.sourceOf(d), pl.day(d)
	rate := pl.rateAt(d, src, o)
	daily, weekly, monthly := rate.at(modeDaily), rate.at(modeWeekly), rate.at(modeMonthly)
	price, ok1 := daily.price(extra)
	wq, ok2 := weekly.price(extra)
	mq, ok3 := monthly.price(extra)
	w7, ok4 := mul(wq, 7)
	m28, ok5 := mul(mq, 28)
	gw, ok6 := mul(weekly.extra, 7)
	gm, ok7 := mul(monthly.extra, 28)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return Day{}, false
	}
	var r DayRules
	if pl.props.empty() {
		// No restriction: the defaults from the rates, as rulesAt gives them, without the call
		// (a calendar asks 730 times).
		wd := d.Weekday()
		r = DayRules{MinStayArrival: src.minStay, CheckinAllowed: src.checkin.Has(wd), CheckoutAllowed: src.checkout.Has(wd)}
		if o != nil && o.minNights > 0 {
			r.MinStayArrival = o.minNights
		}
	} else {
		r = pl.rulesAt(&pl.std, d, src, o)
	}
	return Day{
		Date: d, Price: pl.interned(pl.minor(price)),
		WeeklyPrice: pl.interned(pl.minor(w7)), MonthlyPrice: pl.interned(pl.minor(m28)),
		GuestPrice: pl.interned(pl.minor(daily.extra)), GuestWeeklyPrice: pl.interned(pl.minor(gw)),
		GuestMonthlyPrice: pl.interned(pl.minor(gm)),
		MinimumStay:       r.MinStayArrival, MinStayThrough: r.MinStayThrough, MaxStay: r.MaxStay,
		CheckinAllowed: r.CheckinAllowed, CheckoutAllowed: r.CheckoutAllowed,
		ClosedToArrival: r.ClosedToArrival, ClosedToDeparture: r.ClosedToDeparture, StopSell: r.StopSell,
		Basis:  daily.basis,
		Season: daily.src.name,
	}, true
}

func (day *Day) setRules(r DayRules, planMin int) {
	day.MinimumStay, day.MinStayThrough, day.MaxStay = max(r.MinStayArrival, planMin), r.MinStayThrough, r.MaxStay
	day.CheckinAllowed, day.CheckoutAllowed = r.CheckinAllowed, r.CheckoutAllowed
	day.ClosedToArrival, day.ClosedToDeparture, day.StopSell = r.ClosedToArrival, r.ClosedToDeparture, r.StopSell
}
