package property

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/pricing"
)

// Flag is a restriction that a date sets to true or false, or does not set (the default
// applies: docs/rate-plans.md, "Semantics").
type Flag int8

// Flags.
const (
	FlagUnset Flag = iota
	FlagFalse
	FlagTrue
)

// FlagOf is b as a set Flag.
func FlagOf(b bool) Flag {
	if b {
		return FlagTrue
	}
	return FlagFalse
}

// Bool is the flag's value and whether it is set.
func (f Flag) Bool() (bool, bool) { return f == FlagTrue, f != FlagUnset }

// DayRules are the restrictions one date of one level sets; a zero member is not set. A
// DayRules is comparable: two dates with equal rules form one run.
type DayRules struct {
	MinStayArrival, MinStayThrough, MaxStay int // 1–365; 0: not set
	ClosedToArrival, ClosedToDeparture      Flag
	StopSell                                Flag
}

// IsZero reports whether the date sets nothing.
func (r DayRules) IsZero() bool { return r == DayRules{} }

// with is r with the members set sets replaced.
func (r DayRules) with(set DayRules) DayRules {
	for _, m := range restrictionMembers {
		if v := m.get(set); v != 0 {
			m.put(&r, v)
		}
	}
	return r
}

// without is r with the members named cleared.
func (r DayRules) without(clear map[string]bool) DayRules {
	for _, m := range restrictionMembers {
		if clear[m.name] || clear[clearAll] {
			m.put(&r, 0)
		}
	}
	return r
}

// restrictionMember is one member of DayRules by its wire name, read and written as an int.
type restrictionMember struct {
	name string
	get  func(DayRules) int
	put  func(*DayRules, int)
}

// restrictionMembers are DayRules' members in the order of the contract.
var restrictionMembers = []restrictionMember{
	{"min_stay_arrival", func(r DayRules) int { return r.MinStayArrival }, func(r *DayRules, v int) { r.MinStayArrival = v }},
	{"min_stay_through", func(r DayRules) int { return r.MinStayThrough }, func(r *DayRules, v int) { r.MinStayThrough = v }},
	{"max_stay", func(r DayRules) int { return r.MaxStay }, func(r *DayRules, v int) { r.MaxStay = v }},
	{"closed_to_arrival", func(r DayRules) int { return int(r.ClosedToArrival) }, func(r *DayRules, v int) { r.ClosedToArrival = Flag(v) }},
	{"closed_to_departure", func(r DayRules) int { return int(r.ClosedToDeparture) }, func(r *DayRules, v int) { r.ClosedToDeparture = Flag(v) }},
	{"stop_sell", func(r DayRules) int { return int(r.StopSell) }, func(r *DayRules, v int) { r.StopSell = Flag(v) }},
}

// Restrictions are one level's restrictions (the property's, or a derived plan's): the
// rules of each date that sets any. A date that sets nothing is absent.
type Restrictions map[pricing.Date]DayRules

// Run is dates Start to End (both included) that set the same rules.
type Run struct {
	Start, End pricing.Date
	Rules      DayRules
}

// Runs are r as the published snapshot carries it (contract.Restriction): sorted, not
// overlapping, and adjacent runs differ (two runs that touch with equal rules are one).
func (r Restrictions) Runs() []Run {
	dates := slices.SortedFunc(maps.Keys(r), pricing.Date.Compare)
	var out []Run
	for _, d := range dates {
		rules := r[d]
		if n := len(out); n > 0 && out[n-1].End.AddDays(1) == d && out[n-1].Rules == rules {
			out[n-1].End = d
			continue
		}
		out = append(out, Run{Start: d, End: d, Rules: rules})
	}
	return out
}

// RestrictionsOf are the restrictions of runs, date by date.
func RestrictionsOf(runs []Run) Restrictions {
	out := Restrictions{}
	for _, run := range runs {
		if run.Rules.IsZero() {
			continue
		}
		for d := run.Start; !d.After(run.End); d = d.AddDays(1) {
			out[d] = run.Rules
		}
	}
	return out
}

// Bounds of restrictions (docs/rate-plans.md, "Limits").
const (
	// MaxRestrictionDates is the most dates one level holds restrictions on (3 years).
	MaxRestrictionDates = 1100
	// MaxRestrictionRuns is the most runs all the levels of a property take together in its
	// snapshot, so that the property's event stays well under Kafka's 1 MB (a run of every
	// member is about 190 bytes).
	MaxRestrictionRuns = 2500
	// RestrictionHistory is how many days before today a level keeps: older dates are
	// pruned when the level is written.
	RestrictionHistory   = 31
	maxRestrictionRanges = 100
	maxClearNames        = 20
	clearAll             = "all"
	clearPrice           = "price"
)

// DateSelection is a range of dates and the weekdays of it selected.
type DateSelection struct {
	Start, End pricing.Date
	Days       pricing.Weekdays
}

// RestrictionRequest is a decoded /api/property-restriction body.
type RestrictionRequest struct {
	InternalCode string
	Plan         int64 // 0: the property's restrictions
	Dates        []DateSelection
	Set          DayRules
	Price        *decimal.Decimal // the per-date price (property level only)
	Clear        map[string]bool  // member names of set, price, or all
}

// onlyPrice reports whether the request changes the per-date price and no restriction.
func (r RestrictionRequest) onlyPrice() bool {
	return r.Set.IsZero() && (r.Price != nil || r.Clear[clearPrice]) && len(r.Clear) == btoi(r.Clear[clearPrice])
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

var (
	stayRule       = fields.Int{Min: 1, Max: 365}
	clearNamesRule = fields.Str{IgnoreCase: true, OneOf: []string{"min_stay_arrival", "min_stay_through", "max_stay",
		"closed_to_arrival", "closed_to_departure", "stop_sell", clearPrice, clearAll}}
)

// DecodeRestriction reads an /api/property-restriction body.
func DecodeRestriction(body []byte) (RestrictionRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var req RestrictionRequest
	req.InternalCode, _ = o.String("internal_code", internalCodeRule)
	plan, _ := o.Int("rate_plan_id", fields.Int{Min: 0, Max: maxPlanID})
	req.Plan = int64(plan)
	items, _ := o.Array("dates", fields.List{Required: true, Min: 1, Max: maxRestrictionRanges})
	for _, it := range items {
		start, end, ok := readDateRange(it)
		days := readWeekdays(it, "weekdays", pricing.AllDays)
		if ok && days != 0 {
			req.Dates = append(req.Dates, DateSelection{Start: start, End: end, Days: days})
		}
	}
	sent := false // a member of set, or clear, was sent (valid or not)
	if set := o.Object("set", false); set != nil {
		for _, m := range restrictionMembers[:3] {
			if n, ok := set.Int(m.name, stayRule); ok {
				m.put(&req.Set, n)
			}
		}
		for _, m := range restrictionMembers[3:] {
			if b, ok := set.Bool(m.name, false); ok {
				m.put(&req.Set, int(FlagOf(b)))
			}
		}
		req.Price = optional(set.Decimal("price", price))
		if req.Price != nil && req.Plan != contract.StandardPlanID {
			set.Add("price", "is the property's per-date price: send it without rate_plan_id")
		}
		if req.Set.MinStayArrival != 0 && req.Set.MaxStay != 0 && req.Set.MinStayArrival > req.Set.MaxStay {
			set.Addf("min_stay_arrival", "must not be above max_stay (%d)", req.Set.MaxStay)
		}
		sent = slices.ContainsFunc(restrictionMembers, func(m restrictionMember) bool { return set.Has(m.name) }) || set.Has("price")
	}
	req.Clear = map[string]bool{}
	if names, ok := o.Strings("clear", fields.List{Max: maxClearNames}, clearNamesRule); ok {
		for i, n := range names {
			req.Clear[n] = true
			isSet := n != clearAll && n != clearPrice && slices.ContainsFunc(restrictionMembers, func(m restrictionMember) bool {
				return m.name == n && m.get(req.Set) != 0
			})
			switch {
			case isSet || n == clearPrice && req.Price != nil:
				o.Addf(fields.Index("clear", i), "%s is both set and cleared", n)
			case n == clearPrice && req.Plan != contract.StandardPlanID:
				o.Addf(fields.Index("clear", i), "price is the property's per-date price: clear it without rate_plan_id")
			}
		}
	}
	if !sent && o.Empty("clear") {
		o.Add("set", "set or clear is required")
	}
	if err := v.Err(); err != nil {
		return RestrictionRequest{}, err
	}
	return req, nil
}

// selected are the dates the request selects, each once, in order.
func (r RestrictionRequest) selected() []pricing.Date {
	seen := map[pricing.Date]bool{}
	for _, sel := range r.Dates {
		for d := sel.Start; !d.After(sel.End); d = d.AddDays(1) {
			if sel.Days.Has(d.Weekday()) {
				seen[d] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), pricing.Date.Compare)
}

// SetRestrictions applies an /api/property-restriction request: every date selected gets the
// set members and loses the cleared ones, at the property's level or a derived plan's,
// and (property level) its per-date price; dates older than RestrictionHistory days before
// today are pruned from the level written. It returns how many dates were selected. One
// write, one event: vros.property.prices.updated when only the price changed, else
// vros.property.restrictions.updated. A derived plan the property has not is
// ErrRatePlanNotFound; a level beyond MaxRestrictionDates, or restrictions beyond
// MaxRestrictionRuns, a *fields.Error on dates.
func (s *Properties) SetRestrictions(ctx context.Context, account string, req RestrictionRequest) (int, error) {
	dates := req.selected()
	cutoff := pricing.DateOf(s.now().UTC()).AddDays(-RestrictionHistory)
	_, err := s.repo.ChangeRevenue(ctx, account, PropertyRef{InternalCode: req.InternalCode}, func(cur *Revenue) (string, error) {
		level, i := cur.Restrictions, -1
		if req.Plan != contract.StandardPlanID {
			var p RatePlan
			if p, i = cur.Plan(req.Plan); i < 0 {
				return "", fmt.Errorf("rate plan %d: %w", req.Plan, ErrRatePlanNotFound)
			}
			level = p.Restrictions
		}
		next := make(Restrictions, len(level)+len(dates))
		for d, rules := range level {
			if !d.Before(cutoff) {
				next[d] = rules
			}
		}
		for _, d := range dates {
			rules := next[d].without(req.Clear).with(req.Set)
			if rules.IsZero() || d.Before(cutoff) {
				delete(next, d)
			} else {
				next[d] = rules
			}
		}
		if len(next) > MaxRestrictionDates {
			return "", violation("dates", fmt.Sprintf("a property holds restrictions for at most %d dates (clear past dates first)", MaxRestrictionDates))
		}
		if i < 0 {
			cur.Restrictions = next
			cur.setPrices(dates, req)
		} else {
			cur.Plans = slices.Clone(cur.Plans)
			cur.Plans[i].Restrictions = next
		}
		if n := cur.runs(); n > MaxRestrictionRuns {
			return "", violation("dates", fmt.Sprintf("a property's restrictions, every level together, take at most %d runs of dates with the same rules (these would take %d)", MaxRestrictionRuns, n))
		}
		if req.onlyPrice() {
			return contract.PricesUpdated, nil
		}
		return contract.RestrictionsUpdated, nil
	})
	if err != nil {
		return 0, fmt.Errorf("restrictions of property %q: %w", req.InternalCode, err)
	}
	return len(dates), nil
}

// setPrices applies the request's price to the per-date prices of dates: set, the date's
// price (its weekly and monthly prices and minimum nights kept); cleared (price or all), the
// date's prices (its minimum nights kept), and the date is dropped when nothing is left.
func (r *Revenue) setPrices(dates []pricing.Date, req RestrictionRequest) {
	clear := req.Clear[clearPrice] || req.Clear[clearAll]
	if req.Price == nil && !clear {
		return
	}
	prices := maps.Clone(r.Prices)
	if prices == nil {
		prices = map[pricing.Date]DatePrice{}
	}
	for _, d := range dates {
		p := prices[d]
		if clear {
			p.Price, p.Weekly, p.Monthly = nil, nil, nil
		}
		if req.Price != nil {
			v := *req.Price
			p.Price = &v
		}
		if p.IsZero() {
			delete(prices, d)
		} else {
			prices[d] = p
		}
	}
	r.Prices = prices
}

// runs counts the runs of every level of r.
func (r Revenue) runs() int {
	n := len(r.Restrictions.Runs())
	for _, p := range r.Plans {
		n += len(p.Restrictions.Runs())
	}
	return n
}

// SetClock sets the clock that says what today is (the pruning of old restrictions);
// time.Now when never set. For tests.
func (s *Properties) SetClock(now func() time.Time) { s.now = now }
