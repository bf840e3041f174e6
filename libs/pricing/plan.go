package pricing

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/shopspring/decimal"
)

// Nightly prices are computed in integers. A price is held in ticks, 10^-exp of the
// currency unit, where exp is the larger of the currency's minor digits and the most
// decimals any price of the property has (2 for every snapshot, since interface A allows
// 2). A night's exact price is held in quanta, 1/84 of a tick: weekly, monthly and
// six-night prices are divided by 7, 28 and 6, and 84 is the least common multiple, so
// every night's price — and every partial sum of a stay — is an exact integer. Rounding
// to the currency happens only when a sum is reported. Integers rather than decimals
// because a calendar prices 730 nights per request and big-number arithmetic allocates
// on every operation.
const quanta = 84

// ErrTooLarge is returned when a stay's amounts do not fit the exact integer arithmetic
// (sums of about 10^15 currency units at two decimals); no real property comes near it.
var ErrTooLarge = errors.New("pricing: amounts too large to price exactly")

const unset = -1 // a price that is not set; prices are never negative

// mode is the rate family a stay's length selects.
type mode uint8

const (
	modeDaily   mode = iota
	modeSix          // a 6-night stay charged as a week (apply_6_nights_weekly_rate)
	modeWeekly       // 7 to 27 nights
	modeMonthly      // 28 nights or more
)

func stayMode(nights int, six bool) mode {
	switch {
	case nights >= 28:
		return modeMonthly
	case nights >= 7:
		return modeWeekly
	case nights == 6 && six:
		return modeSix
	}
	return modeDaily
}

// Basis says which price a night was charged.
type Basis string

const (
	BasisDaily       Basis = "daily"        // daily_price
	BasisWeekend     Basis = "weekend"      // weekend_price
	BasisWeekly      Basis = "weekly"       // weekly_price / 7 (/ 6 in a six-night stay)
	BasisMonthly     Basis = "monthly"      // monthly_price / 28
	BasisDate        Basis = "date"         // per-date price
	BasisDateWeekly  Basis = "date-weekly"  // per-date weekly price / 7 (/ 6)
	BasisDateMonthly Basis = "date-monthly" // per-date monthly price / 28
)

type prices struct{ daily, weekend, weekly, monthly int64 } // ticks or unset

// source is the base rate or a season, with everything resolved that the rules take from
// "the season, else the base".
type source struct {
	name              string // season name; "" for the base rate
	p                 prices
	x                 prices // the extra-guest prices in force for nights of this source
	minStay           int
	checkin, checkout Weekdays
}

type seasonRange struct {
	start, end Date
	src        source
}

type dayPlan struct {
	price, weekly, monthly int64 // ticks or unset
	minNights              int
}

// plan is the compiled form of a property's rates.
type plan struct {
	// what it was built from (Property.compiled)
	rates      *Rates
	dates      unsafe.Pointer
	ndates     int
	currency   string
	weekendSet Weekdays
	built      planInputs // the slices of rate plans, restrictions and markups

	scale        int32 // currency minor digits
	exp          int32 // a tick is 10^-exp
	unit         int64 // quanta per minor unit
	applyWeekend bool
	six          bool
	standard     int
	base         source
	seasons      []seasonRange // by start date, not overlapping
	// Per-date prices, by day from daysFrom: dayIdx holds 1 + the index in days, or 0.
	// A slice rather than a map because a calendar looks up every one of its 730 nights;
	// dayMap replaces it when the dates are too far apart for a table.
	daysFrom Date
	dayIdx   []int32
	dayMap   map[Date]int32
	days     []dayPlan

	// Rate plans (rateplan.go): the standard plan, the derived ones by id, the property's
	// restrictions and the channel markups (the property's over the account's).
	std     planComp
	plans   []planComp
	props   level
	markups []markupComp

	// interns caches the calendar's amounts: a decimal allocates twice when made, a
	// calendar makes six per night, and the amounts repeat from night to night. Decimals
	// never change, so sharing them is safe. The cache is a small lossy table of atomic
	// slots, made on first use: a read touches no shared lock, a collision only costs a
	// fresh decimal, and its size is fixed.
	interns atomic.Pointer[internTable]
}

const internBits = 9

type internEntry struct {
	minor int64
	v     decimal.Decimal
}

type internTable [1 << internBits]atomic.Pointer[internEntry]

// interned returns money(minor), shared between calls.
func (pl *plan) interned(minor int64) decimal.Decimal {
	t := pl.interns.Load()
	if t == nil {
		pl.interns.CompareAndSwap(nil, new(internTable))
		t = pl.interns.Load()
	}
	slot := &t[uint64(minor)*0x9E3779B97F4A7C15>>(64-internBits)] // Fibonacci hashing
	if e := slot.Load(); e != nil && e.minor == minor {
		return e.v
	}
	v := pl.money(minor)
	slot.Store(&internEntry{minor: minor, v: v})
	return v
}

// compile builds the plan of p; nil without rates.
func compile(p *Property) (*plan, error) {
	r := p.Rates
	if r == nil {
		return nil, nil
	}
	pl := &plan{rates: r, dates: mapID(p.DatePrices), ndates: len(p.DatePrices), currency: p.Currency,
		weekendSet: p.weekend(), built: p.planInputs(), scale: Scale(p.Currency), applyWeekend: r.Setting.ApplyWeekendPrice,
		six: r.Setting.Apply6NightsWeeklyRate, standard: r.Setting.StandardOccupants}

	// The tick must be fine enough for every price and for the currency.
	pl.exp = pl.scale
	need := func(d *decimal.Decimal) {
		if d != nil {
			pl.exp = max(pl.exp, decimals(*d))
		}
	}
	needPrices := func(x *Prices) {
		need(&x.Daily)
		for _, d := range []*decimal.Decimal{x.Weekend, x.Weekly, x.Monthly, x.ExtraDaily, x.ExtraWeekend, x.ExtraWeekly, x.ExtraMonthly} {
			need(d)
		}
	}
	needPrices(&r.Base)
	for i := range r.Seasons {
		needPrices(&r.Seasons[i].Prices)
	}
	for _, dp := range p.DatePrices {
		need(dp.Price)
		need(dp.Weekly)
		need(dp.Monthly)
	}
	if pl.exp > 12 {
		return nil, errors.New("pricing: a price has more than 12 decimals")
	}
	pl.unit = quanta * pow10(pl.exp-pl.scale)

	var err error
	tick := func(what string, d *decimal.Decimal) int64 {
		if d == nil || err != nil {
			return unset
		}
		v, e := toTicks(*d, pl.exp)
		if e != nil {
			err = fmt.Errorf("pricing: %s %s: %w", what, d.String(), e)
		}
		return v
	}
	conv := func(what string, x *Prices) (p, e prices) {
		p = prices{tick(what+" daily_price", &x.Daily), tick(what+" weekend_price", x.Weekend),
			tick(what+" weekly_price", x.Weekly), tick(what+" monthly_price", x.Monthly)}
		e = prices{tick(what+" extra_daily_price", x.ExtraDaily), tick(what+" extra_weekend_price", x.ExtraWeekend),
			tick(what+" extra_weekly_price", x.ExtraWeekly), tick(what+" extra_monthly_price", x.ExtraMonthly)}
		return p, e
	}
	st := r.Setting
	orAll := func(w Weekdays) Weekdays {
		if w&AllDays == 0 {
			return AllDays
		}
		return w
	}
	pl.base.p, pl.base.x = conv("rate", &r.Base)
	pl.base.minStay = max(r.MinimumStay, 1)
	pl.base.checkin, pl.base.checkout = orAll(st.DefaultCheckin), orAll(st.DefaultCheckout)

	pl.seasons = make([]seasonRange, 0, len(r.Seasons))
	for i := range r.Seasons {
		s := &r.Seasons[i]
		if s.Start.IsZero() || s.End.IsZero() || s.End.Before(s.Start) {
			return nil, fmt.Errorf("pricing: season %q: end_date must not be before start_date", s.Name)
		}
		sp, sx := conv("season "+s.Name, &s.Prices)
		src := source{name: s.Name, p: sp, x: pl.base.x, minStay: pl.base.minStay,
			checkin: pl.base.checkin, checkout: pl.base.checkout}
		if st.ApplyExtraFeePerSeason {
			// The season's extra prices replace the base's one by one: a season that sets only
			// extra_daily_price keeps the base's extra weekend, weekly and monthly prices.
			src.x = prices{orPrice(sx.daily, pl.base.x.daily), orPrice(sx.weekend, pl.base.x.weekend),
				orPrice(sx.weekly, pl.base.x.weekly), orPrice(sx.monthly, pl.base.x.monthly)}
		}
		if s.MinimumStay > 0 {
			src.minStay = s.MinimumStay
		}
		if s.AllowCheckin&AllDays != 0 {
			src.checkin = s.AllowCheckin
		}
		if s.AllowCheckout&AllDays != 0 {
			src.checkout = s.AllowCheckout
		}
		pl.seasons = append(pl.seasons, seasonRange{start: s.Start, end: s.End, src: src})
	}
	slices.SortStableFunc(pl.seasons, func(a, b seasonRange) int { return a.start.Compare(b.start) })
	for i := 1; i < len(pl.seasons); i++ {
		if !pl.seasons[i-1].end.Before(pl.seasons[i].start) {
			return nil, fmt.Errorf("pricing: seasons %q and %q overlap", pl.seasons[i-1].src.name, pl.seasons[i].src.name)
		}
	}
	if len(p.DatePrices) > 0 {
		dates := make([]Date, 0, len(p.DatePrices))
		for d := range p.DatePrices {
			dates = append(dates, d)
		}
		slices.SortFunc(dates, Date.Compare)
		span := DaysBetween(dates[0], dates[len(dates)-1]) + 1
		if span <= maxDaySpan {
			pl.daysFrom, pl.dayIdx = dates[0], make([]int32, span)
		} else {
			pl.dayMap = make(map[Date]int32, len(dates))
		}
		pl.days = make([]dayPlan, len(dates))
		for i, d := range dates {
			dp, what := p.DatePrices[d], "price of "+d.String()
			pl.days[i] = dayPlan{price: tick(what, dp.Price), weekly: tick("weekly "+what, dp.Weekly),
				monthly: tick("monthly "+what, dp.Monthly), minNights: dp.MinNights}
			if pl.dayMap != nil {
				pl.dayMap[d] = int32(i + 1)
			} else {
				pl.dayIdx[DaysBetween(pl.daysFrom, d)] = int32(i + 1)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := compilePlans(p, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

func orPrice(v, fallback int64) int64 {
	if v == unset {
		return fallback
	}
	return v
}

// decimals is the number of decimals d needs (trailing zeros do not count).
func decimals(d decimal.Decimal) int32 {
	e := d.Exponent()
	if e >= 0 {
		return 0
	}
	c := d.Coefficient()
	ten, r := big.NewInt(10), new(big.Int)
	for e < 0 {
		q, m := new(big.Int).QuoRem(c, ten, r)
		if m.Sign() != 0 {
			break
		}
		c = q
		e++
	}
	return -e
}

func pow10(n int32) int64 {
	v := int64(1)
	for ; n > 0; n-- {
		v *= 10
	}
	return v
}

// maxTicks keeps ticks × quanta inside int64; the arithmetic after that is checked.
const maxTicks = math.MaxInt64 / quanta

func toTicks(d decimal.Decimal, exp int32) (int64, error) {
	if d.Sign() < 0 {
		return 0, errors.New("must not be negative")
	}
	s := d.Shift(exp)
	if !s.IsInteger() {
		return 0, errors.New("has too many decimals")
	}
	b := s.BigInt()
	if !b.IsInt64() || b.Int64() > maxTicks {
		return 0, ErrTooLarge
	}
	return b.Int64(), nil
}

// maxDaySpan bounds the per-date table (about 11 years of days), so that one stray far
// date does not allocate a table for the centuries in between.
const maxDaySpan = 4096

// day returns the per-date entry of d, or nil.
func (pl *plan) day(d Date) *dayPlan {
	if pl.dayMap != nil {
		if i := pl.dayMap[d]; i > 0 {
			return &pl.days[i-1]
		}
		return nil
	}
	i := DaysBetween(pl.daysFrom, d)
	if i < 0 || i >= len(pl.dayIdx) || pl.dayIdx[i] == 0 {
		return nil
	}
	return &pl.days[pl.dayIdx[i]-1]
}

// sourceOf returns the season holding night d, else the base rate.
func (pl *plan) sourceOf(d Date) *source {
	lo, hi := 0, len(pl.seasons)
	for lo < hi { // first season starting after d
		m := int(uint(lo+hi) >> 1)
		if pl.seasons[m].start.After(d) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo > 0 && !d.After(pl.seasons[lo-1].end) {
		return &pl.seasons[lo-1].src
	}
	return &pl.base
}

// nightQ is the exact price of one night, in quanta: base at the standard occupancy,
// extra for each guest above it.
type nightQ struct {
	base, extra int64
	basis       Basis
	src         *source
}

// nightRate is what prices one night whatever the length of the stay: the night's
// prices (the per-date ones, or the season's or base's with the weekend price applied)
// and its extra-guest prices.
type nightRate struct {
	daily, weekly, monthly    int64 // ticks or unset
	xDaily, xWeekly, xMonthly int64
	basis                     [3]Basis // by kind: daily, weekly, monthly
	src                       *source
}

var dateBasis = [3]Basis{BasisDate, BasisDateWeekly, BasisDateMonthly}

// rate looks up the prices of night d. Quote and NightPrice both price nights through
// rate and at, and nowhere else, so a calendar cannot disagree with a quote.
func (pl *plan) rate(d Date) nightRate { return pl.rateAt(d, pl.sourceOf(d), pl.day(d)) }

// rateAt is rate of d whose source and per-date entry are src and o.
func (pl *plan) rateAt(d Date, src *source, o *dayPlan) nightRate {
	weekend := pl.applyWeekend && pl.weekendSet.Has(d.Weekday())
	r := nightRate{src: src, xDaily: src.x.daily, xWeekly: src.x.weekly, xMonthly: src.x.monthly}
	if o != nil && o.price != unset {
		// A per-date price replaces the season's or base's prices of that night, weekend
		// included; its own weekly and monthly prices, when set, serve longer stays.
		r.daily, r.weekly, r.monthly, r.basis = o.price, o.weekly, o.monthly, dateBasis
	} else {
		r.daily, r.weekly, r.monthly = src.p.daily, src.p.weekly, src.p.monthly
		r.basis = [3]Basis{BasisDaily, BasisWeekly, BasisMonthly}
		if weekend && src.p.weekend != unset {
			r.daily, r.basis[0] = src.p.weekend, BasisWeekend
		}
	}
	if weekend && src.x.weekend != unset {
		r.xDaily = src.x.weekend
	}
	if r.xDaily == unset {
		r.xDaily = 0
	}
	return r
}

// at prices the night in a stay whose length selected m.
func (r *nightRate) at(m mode) nightQ {
	base, kind := pick(m, r.daily, r.weekly, r.monthly)
	extra, _ := pick(m, r.xDaily, r.xWeekly, r.xMonthly)
	return nightQ{base: base, extra: extra, basis: r.basis[kind], src: r.src}
}

// pick chooses the price of a night for the stay's mode, falling back from monthly to
// weekly to the night's daily price when a price is not set, and returns it in quanta with
// its kind (0 daily, 1 weekly, 2 monthly).
func pick(m mode, daily, weekly, monthly int64) (int64, int) {
	switch m {
	case modeMonthly:
		if monthly != unset {
			return monthly * (quanta / 28), 2
		}
		if weekly != unset {
			return weekly * (quanta / 7), 1
		}
	case modeWeekly:
		if weekly != unset {
			return weekly * (quanta / 7), 1
		}
	case modeSix:
		if weekly != unset {
			return weekly * (quanta / 6), 1
		}
	}
	return daily * quanta, 0
}

// price is the night's price for extra guests above the standard occupancy.
func (n nightQ) price(extra int) (int64, bool) {
	// Prices and guest counts are never negative: the product's overflow is read from the
	// high word of a 128-bit product rather than from a division, on every night.
	hi, x := bits.Mul64(uint64(n.extra), uint64(extra))
	if hi != 0 || x > math.MaxInt64 || n.extra < 0 || extra < 0 {
		return 0, false
	}
	return add(n.base, int64(x))
}

// extraGuests is how many of guests pay the extra-guest price.
func (pl *plan) extraGuests(guests int) int {
	if pl.standard <= 0 || guests <= pl.standard {
		return 0
	}
	return guests - pl.standard
}

// minor rounds quanta to minor units of the currency, half away from zero (q ≥ 0).
func (pl *plan) minor(q int64) int64 {
	v, r := q/pl.unit, q%pl.unit
	if r >= pl.unit-r {
		v++
	}
	return v
}

func (pl *plan) money(minor int64) decimal.Decimal { return decimal.New(minor, -pl.scale) }

func add(a, b int64) (int64, bool) {
	s := a + b
	return s, (s >= a) == (b >= 0)
}

func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}
