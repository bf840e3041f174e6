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
	MinimumStay                                     int  // for a stay starting on Date
	CheckinAllowed, CheckoutAllowed                 bool // may a stay start, or end, on Date
	Basis                                           Basis
	Season                                          string
}

// NightPrice prices the night d for a calendar. It reports false when the property has no
// rates (or rates that cannot be priced, which FromEvent and Prepare report as errors).
// It reads the same night prices as Quote (plan.rate and nightRate.at), so the two cannot disagree.
func NightPrice(p Property, d Date, guests int) (Day, bool) {
	pl, err := p.compiled()
	if pl == nil || err != nil || d.IsZero() {
		return Day{}, false
	}
	extra := pl.extraGuests(guests)
	rate := pl.rate(d)
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
	return Day{
		Date: d, Price: pl.interned(pl.minor(price)),
		WeeklyPrice: pl.interned(pl.minor(w7)), MonthlyPrice: pl.interned(pl.minor(m28)),
		GuestPrice: pl.interned(pl.minor(daily.extra)), GuestWeeklyPrice: pl.interned(pl.minor(gw)),
		GuestMonthlyPrice: pl.interned(pl.minor(gm)),
		MinimumStay:       pl.minStay(d),
		CheckinAllowed:    daily.src.checkin.Has(d.Weekday()),
		CheckoutAllowed:   daily.src.checkout.Has(d.Weekday()),
		Basis:             daily.basis,
		Season:            daily.src.name,
	}, true
}
