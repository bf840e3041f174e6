package pricing

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
)

// Rate plans, restrictions per date, channel markups and cancellation policies
// (docs/rate-plans.md, docs/pricing.md "Rate plans and restrictions").

// StandardPlan is the id of a property's standard plan: its rates as they are.
const StandardPlan = contract.StandardPlanID

// Adjustment types of a derived plan, a range of it and a channel markup.
const (
	AdjustPercent = contract.AdjustPercent // Value percent of the price is added (negative: off)
	AdjustAmount  = contract.AdjustAmount  // Value in the property's currency is added to each night
)

// Cancellation policies.
const (
	CancelFlexible      = contract.CancelFlexible
	CancelModerate      = contract.CancelModerate
	CancelStrict        = contract.CancelStrict
	CancelNonRefundable = contract.CancelNonRefundable
	CancelCustom        = contract.CancelCustom
)

// Adjustment changes every night's price: Type AdjustPercent multiplies it by 1 + Value/100,
// AdjustAmount adds Value; a price never goes below 0. The zero Adjustment changes nothing.
type Adjustment struct {
	Type  string
	Value decimal.Decimal
}

// RangeAdjustment replaces a plan's Adjustment for the nights Start to End (both included).
type RangeAdjustment struct {
	Start, End Date
	Adjustment
}

// SoldOn says where a derived plan can be booked: direct (no brand, no channel), a brand's
// website (AllBrands or its id in Brands), a channel's quotes (its lower-case name in
// Channels).
type SoldOn struct {
	Direct    bool
	AllBrands bool
	Brands    []int64
	Channels  []string
}

// CancellationTier: Percent of the booking's grand total is refunded when it is cancelled
// DaysBefore days or more before arrival.
type CancellationTier struct {
	DaysBefore int
	Percent    decimal.Decimal
}

// Cancellation is a cancellation policy. The named policies carry their tiers (filled by
// FromEvent and in every Result); CancelCustom carries its own. The zero Cancellation is
// flexible.
type Cancellation struct {
	Policy string
	Tiers  []CancellationTier
}

// The tiers of the named policies (docs/rate-plans.md).
var namedTiers = map[string][]CancellationTier{
	CancelFlexible:      {{DaysBefore: 1, Percent: decimal.NewFromInt(100)}},
	CancelModerate:      {{DaysBefore: 5, Percent: decimal.NewFromInt(100)}, {DaysBefore: 1, Percent: decimal.NewFromInt(50)}},
	CancelStrict:        {{DaysBefore: 30, Percent: decimal.NewFromInt(100)}, {DaysBefore: 14, Percent: decimal.NewFromInt(50)}},
	CancelNonRefundable: nil,
}

// Resolved returns c with its policy named (flexible when empty) and, for a named policy,
// the policy's tiers.
func (c Cancellation) Resolved() Cancellation {
	if c.Policy == "" {
		c.Policy = CancelFlexible
	}
	if t, ok := namedTiers[c.Policy]; ok {
		c.Tiers = slices.Clone(t)
	}
	return c
}

// Refund is what a cancellation on cancelledOn (a date in the property's zone) refunds of a
// booking of grand total total checking in on checkin: the highest percent of the tiers it
// reaches (days from cancelledOn to checkin ≥ DaysBefore; after the check-in the days are
// negative and no tier is reached), and that percent of total rounded to scale decimals,
// half away from zero.
func (c Cancellation) Refund(total decimal.Decimal, scale int32, checkin, cancelledOn Date) (percent, amount decimal.Decimal) {
	tiers := c.Tiers
	if c.Policy != CancelCustom {
		tiers = namedTiers[cmp.Or(c.Policy, CancelFlexible)]
	}
	days := DaysBetween(cancelledOn, checkin)
	percent = decimal.Zero
	for _, t := range tiers {
		if days >= t.DaysBefore && t.Percent.GreaterThan(percent) {
			percent = t.Percent
		}
	}
	return percent, total.Mul(percent).Shift(-2).Round(scale)
}

// PlanTerms are what every plan, the standard one included, says besides its price.
type PlanTerms struct {
	Name         string // "" on the standard plan: "Standard"
	Inclusions   string
	Cancellation Cancellation
}

// Plan is a derived rate plan (ID ≥ 1): the standard plan's nightly prices with
// Adjustment (Ranges replace it for their nights), a floor on the length of every stay
// (MinimumStay, 0: none), where it is sold and its own restrictions, which override the
// property's member by member (stop-sell: either stops a night).
type Plan struct {
	ID int64
	PlanTerms
	Adjustment   Adjustment
	Ranges       []RangeAdjustment // not overlapping
	MinimumStay  int
	SoldOn       SoldOn
	Restrictions []Restriction
}

// Restriction is a run of dates, Start to End (both included), with the same
// restrictions. A nil member is not set on those dates: the level below decides (the plan's
// own › the property's › the defaults from the rates). Runs of one list do not overlap.
type Restriction struct {
	Start, End        Date
	MinStayArrival    *int // 1–365
	MinStayThrough    *int // 1–365
	MaxStay           *int // 1–365
	ClosedToArrival   *bool
	ClosedToDeparture *bool
	StopSell          *bool
}

// Markup is a channel markup: Adjustment applied to every night after the plan's, in quotes
// asked for Channel (lower case).
type Markup struct {
	Channel string
	Adjustment
}

// DayRules are the rules of one plan on one date, resolved: the plan's own restriction ›
// the property's › the defaults from the rates (setprices' minNights › the season's
// minimum stay › the base's; the season's check-in and check-out days), except StopSell,
// set when the property or the plan stops the night.
type DayRules struct {
	MinStayArrival int // for a stay arriving on the date
	MinStayThrough int // for every stay holding the night of the date; 0: none
	MaxStay        int // for a stay arriving on the date; 0: none
	// CheckinAllowed and CheckoutAllowed: may a stay start, or end, on the date (the
	// weekday rules, or a restriction's closed to arrival / departure when one is set).
	CheckinAllowed, CheckoutAllowed bool
	// ClosedToArrival and ClosedToDeparture are true when a restriction closes the date
	// (not when only the weekday rules do).
	ClosedToArrival, ClosedToDeparture bool
	StopSell                           bool // the night of the date is not sold
	// CheckinDays and CheckoutDays are the weekday rules of the date (its season's, else the
	// setting's), which the CheckinDay and CheckoutDay messages name.
	CheckinDays, CheckoutDays Weekdays
}

// CheckDays is the one check of a stay's dates on a plan, from its day rules: day(d) gives
// the rules of the plan on d (Property.Rules, or a cache of it), planMin is the plan's
// MinimumStay (0 for the standard plan). It checks, in this order: no night stopped
// (StopSell), the arrival date open (ClosedToArrival, CheckinDay), the departure date open
// (ClosedToDeparture, CheckoutDay), the length against max(min stay on arrival, min stay
// through of every night, planMin) (MinimumStay), and against the arrival's max stay
// (MaximumStay). The departure day is not a night: its stop-sell and min stay through do
// not count. Quote calls it after the booking-window rules; nil: the dates are sellable.
func CheckDays(in, out Date, planMin int, day func(Date) DayRules) *RuleError {
	_, err := checkDays(in, out, planMin, day, true)
	return err
}

// checkDays is CheckDays that also returns the minimum stay the stay had to meet. With
// nights false the nights after the arrival are not read: the caller knows that no
// restriction applies, so no night is stopped and none has a min stay through.
func checkDays(in, out Date, planMin int, day func(Date) DayRules, nights bool) (int, *RuleError) {
	n := DaysBetween(in, out)
	a := day(in)
	minStay := max(a.MinStayArrival, planMin, a.MinStayThrough)
	var stopped Date
	if a.StopSell {
		stopped = in
	}
	if nights {
		for i := 1; i < n; i++ {
			d := in.AddDays(i)
			r := day(d)
			if r.StopSell && stopped.IsZero() {
				stopped = d
			}
			minStay = max(minStay, r.MinStayThrough)
		}
	}
	if !stopped.IsZero() {
		return minStay, ruleErr(StopSell, "checkin", "the property is not sold for the night of "+stopped.String())
	}
	if !a.CheckinAllowed {
		if a.ClosedToArrival {
			return minStay, ruleErr(ClosedToArrival, "checkin", "check-in is closed on "+in.String())
		}
		return minStay, ruleErr(CheckinDay, "checkin", "check-in must be on "+dayList(a.CheckinDays)+" ("+in.String()+" is a "+
			in.Weekday().String()+")")
	}
	if b := day(out); !b.CheckoutAllowed {
		if b.ClosedToDeparture {
			return minStay, ruleErr(ClosedToDeparture, "checkout", "check-out is closed on "+out.String())
		}
		return minStay, ruleErr(CheckoutDay, "checkout", "check-out must be on "+dayList(b.CheckoutDays)+" ("+out.String()+" is a "+
			out.Weekday().String()+")")
	}
	if n < minStay {
		return minStay, ruleErr(MinimumStay, "checkout", fmt.Sprintf("the minimum stay for these dates is %d %s", minStay,
			plural(minStay, "night", "nights")))
	}
	if a.MaxStay > 0 && n > a.MaxStay {
		return minStay, ruleErr(MaximumStay, "checkout", fmt.Sprintf("the maximum stay for these dates is %d %s", a.MaxStay,
			plural(a.MaxStay, "night", "nights")))
	}
	return minStay, nil
}

// Rules returns the resolved day rules of a plan on d. A property without rates, an
// unknown plan or the zero date has zero rules (nothing allowed). It does not allocate
// once the Property is prepared.
func (p Property) Rules(plan int64, d Date) DayRules {
	pl, err := p.compiled()
	if pl == nil || err != nil || d.IsZero() {
		return DayRules{}
	}
	cp := pl.planOf(plan)
	if cp == nil {
		return DayRules{}
	}
	return pl.rulesAt(cp, d, pl.sourceOf(d), pl.day(d))
}

// PlanQuote is one bookable plan of a stay and its quote.
type PlanQuote struct {
	Plan         int64
	Name         string
	Inclusions   string
	Cancellation Cancellation
	Result       Result
}

// Bookable quotes the stay of r on every plan sold where r asks (r.Brand, r.Channel; every
// plan with SkipSoldOn) and returns those Quote accepts, the standard plan first, then the
// derived plans by id. r.Plan is ignored.
func (p Property) Bookable(r Request) []PlanQuote {
	pl, err := p.compiled()
	if pl == nil || err != nil {
		return nil
	}
	var out []PlanQuote
	for i := -1; i < len(pl.plans); i++ {
		cp := &pl.std
		if i >= 0 {
			cp = &pl.plans[i]
		}
		if !r.SkipSoldOn && !r.IgnoreRules && cp.notSold(r) != "" {
			continue
		}
		rr := r
		rr.Plan = cp.id
		res, err := Quote(p, rr)
		if err != nil {
			continue
		}
		out = append(out, PlanQuote{Plan: cp.id, Name: res.PlanName, Inclusions: res.Inclusions, Cancellation: res.Cancellation, Result: res})
	}
	return out
}

// RatePlans lists the property's plans with their terms resolved (names, policies with
// their tiers): the standard plan first (ID 0, sold everywhere: direct, every brand, every
// channel), then the derived plans by id.
func (p Property) RatePlans() []Plan {
	pl, err := p.compiled()
	if pl == nil || err != nil {
		std := Plan{PlanTerms: standardTerms(p.Standard), SoldOn: SoldOn{Direct: true, AllBrands: true}}
		return []Plan{std}
	}
	out := []Plan{{PlanTerms: pl.std.terms, SoldOn: SoldOn{Direct: true, AllBrands: true}}}
	for i := range pl.plans {
		x := p.Plans[pl.plans[i].idx]
		x.PlanTerms = pl.plans[i].terms
		out = append(out, x)
	}
	return out
}

// ApplyMarkups sets the account's channel markups (the settings event's channel_markups);
// a channel the property has its own markup for ignores the account's. Priced calls it.
func (p *Property) ApplyMarkups(ms []contract.Markup) error {
	var r reader
	p.AccountMarkups = r.markups("channel_markups", ms)
	if r.err != nil {
		return r.err
	}
	return p.Prepare()
}

// NightPriceOn is NightPrice on a plan for a channel ("": none): the night's prices with the
// plan's adjustment and the channel's markup, and the plan's day rules (MinimumStay
// includes the plan's minimum stay). False: no rates, or an unknown plan.
func NightPriceOn(p Property, plan int64, channel string, d Date, guests int) (Day, bool) {
	pl, err := p.compiled()
	if pl == nil || err != nil || d.IsZero() {
		return Day{}, false
	}
	cp := pl.planOf(plan)
	if cp == nil {
		return Day{}, false
	}
	mk := pl.markupFor(channel)
	src, o := pl.sourceOf(d), pl.day(d)
	if !cp.adjusts() && mk == nil {
		// The standard plan's prices, the plan's rules.
		day, ok := NightPrice(p, d, guests)
		day.setRules(pl.rulesAt(cp, d, src, o), cp.minStay)
		return day, ok
	}
	rate := pl.rateAt(d, src, o)
	a := cp.adjFor(d)
	extra := pl.extraGuests(guests)
	daily, weekly, monthly := rate.at(modeDaily), rate.at(modeWeekly), rate.at(modeMonthly)
	// price is times × the adjusted price of a night n for g extra guests, in minor units.
	price := func(n nightQ, g, times int64) (int64, bool) {
		q, ok := n.price(int(g))
		if !ok {
			return 0, false
		}
		return pl.adjustedMinor(q, 0, false, a, mk, times)
	}
	// guest is times × what one guest above the standard occupancy adds to the adjusted price.
	guest := func(n nightQ, times int64) (int64, bool) {
		q, ok := add(n.base, n.extra)
		if !ok {
			return 0, false
		}
		return pl.adjustedMinor(q, n.base, true, a, mk, times)
	}
	pd, ok1 := price(daily, int64(extra), 1)
	pw, ok2 := price(weekly, int64(extra), 7)
	pm, ok3 := price(monthly, int64(extra), 28)
	gd, ok4 := guest(daily, 1)
	gw, ok5 := guest(weekly, 7)
	gm, ok6 := guest(monthly, 28)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return Day{}, false
	}
	day := Day{Date: d, Price: pl.interned(pd), WeeklyPrice: pl.interned(pw), MonthlyPrice: pl.interned(pm),
		GuestPrice: pl.interned(gd), GuestWeeklyPrice: pl.interned(gw), GuestMonthlyPrice: pl.interned(gm),
		Basis: daily.basis, Season: daily.src.name}
	day.setRules(pl.rulesAt(cp, d, src, o), cp.minStay)
	return day, true
}

// --- compiled form -------------------------------------------------------------------

// restr is a restriction of one date at one level, compiled: 0 is not set.
type restr struct {
	minArr, minThr, maxStay uint16
	flags                   uint8
}

const (
	ctaSet uint8 = 1 << iota
	cta
	ctdSet
	ctd
	stopSet
	stop
)

// over returns r (a plan's own) over base (the property's): r's members where set, and a
// night stopped by either.
func (r restr) over(base restr) restr {
	if r.minArr != 0 {
		base.minArr = r.minArr
	}
	if r.minThr != 0 {
		base.minThr = r.minThr
	}
	if r.maxStay != 0 {
		base.maxStay = r.maxStay
	}
	if r.flags&ctaSet != 0 {
		base.flags = base.flags&^(ctaSet|cta) | r.flags&(ctaSet|cta)
	}
	if r.flags&ctdSet != 0 {
		base.flags = base.flags&^(ctdSet|ctd) | r.flags&(ctdSet|ctd)
	}
	base.flags |= r.flags & (stopSet | stop)
	return base
}

type restrRun struct {
	start, end Date
	r          restr
}

// level is one list of restrictions compiled: a table by day from from, or sorted runs
// when the dates are too far apart for a table. The zero level holds nothing.
type level struct {
	from Date
	tab  []restr
	runs []restrRun
}

func (l *level) empty() bool { return l.tab == nil && l.runs == nil }

func (l *level) at(d Date) restr {
	if l.tab != nil {
		if i := DaysBetween(l.from, d); i >= 0 && i < len(l.tab) {
			return l.tab[i]
		}
		return restr{}
	}
	if len(l.runs) == 0 {
		return restr{}
	}
	i, _ := slices.BinarySearchFunc(l.runs, d, func(r restrRun, d Date) int { return r.end.Compare(d) })
	if i < len(l.runs) && !d.Before(l.runs[i].start) {
		return l.runs[i].r
	}
	return restr{}
}

// compileLevel checks and compiles a list of restrictions; path names it in errors.
func compileLevel(path string, rs []Restriction) (level, error) {
	if len(rs) == 0 {
		return level{}, nil
	}
	runs := make([]restrRun, len(rs))
	order := make([]int, len(rs))
	for i := range rs {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rs[a].Start.Compare(rs[b].Start) })
	for k, i := range order {
		x := &rs[i]
		at := fmt.Sprintf("%s[%d]", path, i)
		if x.Start.IsZero() || x.End.IsZero() || x.End.Before(x.Start) {
			return level{}, fmt.Errorf("pricing: %s: end_date must not be before start_date", at)
		}
		if k > 0 && !runs[k-1].end.Before(x.Start) {
			return level{}, fmt.Errorf("pricing: %s overlaps %s[%d]", at, path, order[k-1])
		}
		var r restr
		for _, m := range []struct {
			name string
			v    *int
			to   *uint16
		}{{"min_stay_arrival", x.MinStayArrival, &r.minArr}, {"min_stay_through", x.MinStayThrough, &r.minThr}, {"max_stay", x.MaxStay, &r.maxStay}} {
			if m.v == nil {
				continue
			}
			if *m.v < 1 || *m.v > MaxNights {
				return level{}, fmt.Errorf("pricing: %s.%s: %d is not 1–%d", at, m.name, *m.v, MaxNights)
			}
			*m.to = uint16(*m.v)
		}
		flag := func(b *bool, set, on uint8) {
			if b != nil {
				r.flags |= set
				if *b {
					r.flags |= on
				}
			}
		}
		flag(x.ClosedToArrival, ctaSet, cta)
		flag(x.ClosedToDeparture, ctdSet, ctd)
		flag(x.StopSell, stopSet, stop)
		runs[k] = restrRun{start: x.Start, end: x.End, r: r}
	}
	from, to := runs[0].start, runs[len(runs)-1].end
	if span := DaysBetween(from, to) + 1; span <= maxDaySpan {
		l := level{from: from, tab: make([]restr, span)}
		for _, run := range runs {
			for d := run.start; !d.After(run.end); d = d.AddDays(1) {
				l.tab[DaysBetween(from, d)] = run.r
			}
		}
		return l, nil
	}
	return level{runs: runs}, nil
}

// adjust is an Adjustment compiled: percent holds the factor 1 + v/100, amount v; n/d is v
// in int64s when it fits (fits).
type adjust struct {
	kind uint8 // adjNone, adjPercent, adjAmount
	v    *big.Rat
	n, d int64
	fits bool
}

const (
	adjNone uint8 = iota
	adjPercent
	adjAmount
)

func compileAdjust(path string, a Adjustment) (adjust, error) {
	withInts := func(x adjust) adjust {
		if x.v.Num().IsInt64() && x.v.Denom().IsInt64() {
			x.n, x.d, x.fits = x.v.Num().Int64(), x.v.Denom().Int64(), true
		}
		return x
	}
	switch a.Type {
	case AdjustPercent:
		f := new(big.Rat).Quo(a.Value.Rat(), big.NewRat(100, 1))
		return withInts(adjust{kind: adjPercent, v: f.Add(f, big.NewRat(1, 1))}), nil
	case AdjustAmount:
		return withInts(adjust{kind: adjAmount, v: a.Value.Rat()}), nil
	case "":
		if !a.Value.IsZero() {
			return adjust{}, fmt.Errorf("pricing: %s.type: a value needs a type (percent or amount)", path)
		}
		return adjust{}, nil
	}
	return adjust{}, fmt.Errorf("pricing: %s.type: %q is not percent or amount", path, a.Type)
}

// apply adjusts x in place, never below 0; a nil or empty adjust changes nothing.
func (a *adjust) apply(x *big.Rat) {
	if a == nil {
		return
	}
	switch a.kind {
	case adjPercent:
		x.Mul(x, a.v)
	case adjAmount:
		x.Add(x, a.v)
	}
	if x.Sign() < 0 {
		x.SetInt64(0)
	}
}

type rangeAdj struct {
	start, end Date
	a          adjust
}

// planComp is a plan compiled: the standard one (id 0) or a derived one.
type planComp struct {
	id      int64
	idx     int // index in Property.Plans; -1 for the standard plan
	terms   PlanTerms
	minStay int
	sold    SoldOn
	own     level
	adj     adjust
	ranges  []rangeAdj // by start
}

// adjusts reports whether the plan changes any price.
func (cp *planComp) adjusts() bool { return cp.adj.kind != adjNone || len(cp.ranges) > 0 }

// adjFor is the adjustment of the night d.
func (cp *planComp) adjFor(d Date) *adjust {
	for i := range cp.ranges {
		if r := &cp.ranges[i]; !d.Before(r.start) && !d.After(r.end) {
			return &r.a
		}
	}
	return &cp.adj
}

// notSold is why the plan is not sold where r asks ("" when it is): a channel must be in
// the plan's channels, a brand among its brands, and without either the plan must be sold
// direct. The standard plan is sold everywhere.
func (cp *planComp) notSold(r Request) string {
	if cp.id == StandardPlan {
		return ""
	}
	s := &cp.sold
	if r.Channel != "" && !slices.ContainsFunc(s.Channels, func(c string) bool { return strings.EqualFold(c, r.Channel) }) {
		return "on " + r.Channel
	}
	if r.Brand != 0 && !s.AllBrands && !slices.Contains(s.Brands, r.Brand) {
		return "on brand " + strconv.FormatInt(r.Brand, 10)
	}
	if r.Channel == "" && r.Brand == 0 && !s.Direct {
		return "direct"
	}
	return ""
}

type markupComp struct {
	channel string
	a       adjust
}

func standardTerms(s *PlanTerms) PlanTerms {
	var t PlanTerms
	if s != nil {
		t = *s
	}
	if t.Name == "" {
		t.Name = "Standard"
	}
	t.Cancellation = t.Cancellation.Resolved()
	return t
}

func checkCancellation(path string, c Cancellation) error {
	switch c.Policy {
	case "", CancelFlexible, CancelModerate, CancelStrict, CancelNonRefundable:
		// A named policy's tiers are its own: Resolved fills them, anything else is an error.
		if len(c.Tiers) > 0 && !slices.EqualFunc(c.Tiers, namedTiers[cmp.Or(c.Policy, CancelFlexible)], func(a, b CancellationTier) bool {
			return a.DaysBefore == b.DaysBefore && a.Percent.Equal(b.Percent)
		}) {
			return fmt.Errorf("pricing: %s.tiers: only a custom policy has tiers of its own", path)
		}
		return nil
	case CancelCustom:
		if len(c.Tiers) < 1 || len(c.Tiers) > 10 {
			return fmt.Errorf("pricing: %s.tiers: a custom policy has 1 to 10 tiers", path)
		}
		seen := map[int]bool{}
		for i, t := range c.Tiers {
			at := fmt.Sprintf("%s.tiers[%d]", path, i)
			if t.DaysBefore < 0 || t.DaysBefore > 730 {
				return fmt.Errorf("pricing: %s.days_before: %d is not 0–730", at, t.DaysBefore)
			}
			if seen[t.DaysBefore] {
				return fmt.Errorf("pricing: %s.days_before: %d is given twice", at, t.DaysBefore)
			}
			seen[t.DaysBefore] = true
			if t.Percent.Sign() < 0 || t.Percent.GreaterThan(decimal.NewFromInt(100)) {
				return fmt.Errorf("pricing: %s.percent: %s is not 0–100", at, t.Percent)
			}
		}
		return nil
	}
	return fmt.Errorf("pricing: %s.policy: %q is not flexible, moderate, strict, non_refundable or custom", path, c.Policy)
}

// compilePlans compiles the standard plan, the derived plans, the property's restrictions
// and the channel markups into pl.
func compilePlans(p *Property, pl *plan) error {
	var err error
	if pl.props, err = compileLevel("restrictions", p.Restrictions); err != nil {
		return err
	}
	if p.Standard != nil {
		if err := checkCancellation("standard_plan.cancellation", p.Standard.Cancellation); err != nil {
			return err
		}
	}
	pl.std = planComp{id: StandardPlan, idx: -1, terms: standardTerms(p.Standard)}
	pl.plans = make([]planComp, 0, len(p.Plans))
	for i := range p.Plans {
		x := &p.Plans[i]
		path := fmt.Sprintf("rate_plans[%d]", i)
		if x.ID < 1 {
			return fmt.Errorf("pricing: %s.id: %d is not a derived plan's id (1 or more)", path, x.ID)
		}
		if x.MinimumStay < 0 || x.MinimumStay > MaxNights {
			return fmt.Errorf("pricing: %s.minimum_stay: %d is not 0–%d", path, x.MinimumStay, MaxNights)
		}
		if err := checkCancellation(path+".cancellation", x.Cancellation); err != nil {
			return err
		}
		cp := planComp{id: x.ID, idx: i, terms: x.PlanTerms, minStay: x.MinimumStay, sold: x.SoldOn}
		cp.terms.Cancellation = x.Cancellation.Resolved()
		if cp.adj, err = compileAdjust(path+".adjustment", x.Adjustment); err != nil {
			return err
		}
		for j, r := range x.Ranges {
			at := fmt.Sprintf("%s.ranges[%d]", path, j)
			if r.Start.IsZero() || r.End.IsZero() || r.End.Before(r.Start) {
				return fmt.Errorf("pricing: %s: end_date must not be before start_date", at)
			}
			a, err := compileAdjust(at, r.Adjustment)
			if err != nil {
				return err
			}
			cp.ranges = append(cp.ranges, rangeAdj{start: r.Start, end: r.End, a: a})
		}
		slices.SortFunc(cp.ranges, func(a, b rangeAdj) int { return a.start.Compare(b.start) })
		for j := 1; j < len(cp.ranges); j++ {
			if !cp.ranges[j-1].end.Before(cp.ranges[j].start) {
				return fmt.Errorf("pricing: %s.ranges: %s … %s overlaps %s … %s", path, cp.ranges[j-1].start, cp.ranges[j-1].end,
					cp.ranges[j].start, cp.ranges[j].end)
			}
		}
		if cp.own, err = compileLevel(path+".restrictions", x.Restrictions); err != nil {
			return err
		}
		pl.plans = append(pl.plans, cp)
	}
	slices.SortStableFunc(pl.plans, func(a, b planComp) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(pl.plans); i++ {
		if pl.plans[i].id == pl.plans[i-1].id {
			return fmt.Errorf("pricing: rate_plans[%d].id: plan %d is given twice", pl.plans[i].idx, pl.plans[i].id)
		}
	}
	pl.markups = nil
	for _, l := range []struct {
		path string
		ms   []Markup
	}{{"channel_markups", p.Markups}, {"account channel_markups", p.AccountMarkups}} {
		for i, m := range l.ms {
			at := fmt.Sprintf("%s[%d]", l.path, i)
			if m.Channel == "" {
				return fmt.Errorf("pricing: %s.channel: is required", at)
			}
			if slices.ContainsFunc(pl.markups, func(c markupComp) bool { return strings.EqualFold(c.channel, m.Channel) }) {
				continue // the property's own, or a channel given twice: the first wins
			}
			a, err := compileAdjust(at, m.Adjustment)
			if err != nil {
				return err
			}
			pl.markups = append(pl.markups, markupComp{channel: m.Channel, a: a})
		}
	}
	return nil
}

// planOf returns the compiled plan id, or nil.
func (pl *plan) planOf(id int64) *planComp {
	if id == StandardPlan {
		return &pl.std
	}
	for i := range pl.plans {
		if pl.plans[i].id == id {
			return &pl.plans[i]
		}
	}
	return nil
}

// markupFor returns the markup of a channel, or nil (no channel, or none for it).
func (pl *plan) markupFor(channel string) *adjust {
	if channel == "" {
		return nil
	}
	for i := range pl.markups {
		if strings.EqualFold(pl.markups[i].channel, channel) {
			if pl.markups[i].a.kind == adjNone {
				return nil
			}
			return &pl.markups[i].a
		}
	}
	return nil
}

// restricted reports whether any restriction can apply to the plan.
func (pl *plan) restricted(cp *planComp) bool { return !pl.props.empty() || !cp.own.empty() }

// rulesAt resolves the day rules of cp on d; src and o are d's source and per-date entry.
func (pl *plan) rulesAt(cp *planComp, d Date, src *source, o *dayPlan) DayRules {
	wd := d.Weekday()
	r := DayRules{MinStayArrival: src.minStay, CheckinAllowed: src.checkin.Has(wd), CheckoutAllowed: src.checkout.Has(wd),
		CheckinDays: src.checkin, CheckoutDays: src.checkout}
	if o != nil && o.minNights > 0 {
		r.MinStayArrival = o.minNights
	}
	if pl.props.empty() && cp.own.empty() {
		return r
	}
	x := pl.props.at(d)
	if !cp.own.empty() {
		x = cp.own.at(d).over(x)
	}
	if x == (restr{}) {
		return r
	}
	if x.minArr != 0 {
		r.MinStayArrival = int(x.minArr)
	}
	r.MinStayThrough, r.MaxStay = int(x.minThr), int(x.maxStay)
	if x.flags&ctaSet != 0 {
		r.ClosedToArrival = x.flags&cta != 0
		r.CheckinAllowed = !r.ClosedToArrival
	}
	if x.flags&ctdSet != 0 {
		r.ClosedToDeparture = x.flags&ctd != 0
		r.CheckoutAllowed = !r.ClosedToDeparture
	}
	r.StopSell = x.flags&stop != 0
	return r
}

// Adjusted prices are exact fractions. They are computed in int64s, as n/d currency units
// with d fixed by the adjustments (so the nights of a stay add up over one denominator),
// and in big.Rat when a value does not fit.

// fixed returns the exact price of a night of q quanta with the plan's adjustment a and the
// channel's markup m applied, each never below 0, as n/d; false when it does not fit.
func (pl *plan) fixed(q int64, a, m *adjust) (n, d int64, ok bool) {
	n, d = q, quanta*pow10(pl.exp)
	if n, d, ok = a.applyFixed(n, d); ok {
		n, d, ok = m.applyFixed(n, d)
	}
	return n, d, ok
}

func (a *adjust) applyFixed(n, d int64) (int64, int64, bool) {
	if a == nil || a.kind == adjNone {
		return n, d, true
	}
	if !a.fits {
		return 0, 0, false
	}
	ok1, ok2, ok3 := true, true, true
	switch a.kind {
	case adjPercent:
		n, ok1 = mul(n, a.n)
	case adjAmount:
		var x, y int64
		x, ok1 = mul(n, a.d)
		y, ok2 = mul(a.n, d)
		n, ok3 = add(x, y)
	}
	d, ok := mul(d, a.d)
	if n < 0 {
		n = 0
	}
	return n, d, ok && ok1 && ok2 && ok3
}

// roundFixed is times × n/d in minor units of scale decimals, rounded half away from zero.
func roundFixed(n, d, times int64, scale int32) (int64, bool) {
	x, ok1 := mul(n, times)
	x, ok2 := mul(x, pow10(scale))
	if !ok1 || !ok2 || x == math.MinInt64 {
		return 0, false
	}
	neg := x < 0
	if neg {
		x = -x
	}
	v, r := x/d, x%d
	if r >= d-r {
		v++
	}
	if neg {
		v = -v
	}
	return v, true
}

// adjusted sets x to the exact price of a night of q quanta with the plan's adjustment a
// and the channel's markup m applied, each never below 0.
func (pl *plan) adjusted(q int64, a, m *adjust, x *big.Rat) *big.Rat {
	x.SetFrac64(q, quanta*pow10(pl.exp))
	a.apply(x)
	m.apply(x)
	return x
}

// adjustNights prices the nights of a stay on plan cp for markup mk from their exact
// standard prices qs (quanta): each night adjusted exactly, the exact sum rounded once,
// each night shown as the step of the rounded running total. It returns the rent in minor
// units; false: too large.
func (pl *plan) adjustNights(nights []Night, qs []int64, cp *planComp, mk *adjust) (int64, bool) {
	var sum, den, shown int64
	fits := true
	for i, q := range qs {
		n, d, ok := pl.fixed(q, cp.adjFor(nights[i].Date), mk)
		if ok && i > 0 && d != den {
			ok = false // nights of ranges with other denominators: big.Rat
		}
		if ok {
			den = d
			sum, ok = add(sum, n)
		}
		var upto int64
		if ok {
			upto, ok = roundFixed(sum, den, 1, pl.scale)
		}
		if !ok {
			fits = false
			break
		}
		nights[i].Price = pl.money(upto - shown)
		shown = upto
	}
	if fits {
		return shown, true
	}
	xsum, x := new(big.Rat), new(big.Rat)
	shown = 0
	for i, q := range qs {
		xsum.Add(xsum, pl.adjusted(q, cp.adjFor(nights[i].Date), mk, x))
		upto, ok := ratMinor(xsum, pl.scale)
		if !ok {
			return 0, false
		}
		nights[i].Price = pl.money(upto - shown)
		shown = upto
	}
	return shown, true
}

// adjustedMinor is times × the adjusted price of a night of q quanta, minus that of base
// quanta when diff (what guests add), in minor units.
func (pl *plan) adjustedMinor(q, base int64, diff bool, a, m *adjust, times int64) (int64, bool) {
	n, d, ok := pl.fixed(q, a, m)
	if ok && diff {
		var nb int64
		if nb, _, ok = pl.fixed(base, a, m); ok {
			n, ok = add(n, -nb)
		}
	}
	if ok {
		if v, ok := roundFixed(n, d, times, pl.scale); ok {
			return v, true
		}
	}
	x := pl.adjusted(q, a, m, new(big.Rat))
	if diff {
		x.Sub(x, pl.adjusted(base, a, m, new(big.Rat)))
	}
	return ratMinor(x.Mul(x, new(big.Rat).SetInt64(times)), pl.scale)
}

// ratMinor rounds x to minor units of scale decimals, half away from zero.
func ratMinor(x *big.Rat, scale int32) (int64, bool) {
	n := new(big.Int).Mul(x.Num(), big.NewInt(pow10(scale)))
	q, r := n.QuoRem(n, x.Denom(), new(big.Int))
	if r.Lsh(r, 1).CmpAbs(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(x.Sign())))
	}
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}
