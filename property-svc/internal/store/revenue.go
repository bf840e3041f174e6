package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/property-svc/internal/property"
)

// A property's rate plans, restrictions per date and channel markups (docs/rate-plans.md):
// stored in the property's document as the snapshot publishes them (restrictions as runs of
// dates), changed only by ChangeRevenue.

// PlanTermsRec are a plan's terms: the standard plan's (Record.StandardPlan) and each
// derived plan's.
type PlanTermsRec struct {
	Name         string           `bson:"name,omitempty" json:"name"`
	Inclusions   string           `bson:"inclusions,omitempty" json:"inclusions"`
	Cancellation *CancellationRec `bson:"cancellation,omitempty" json:"cancellation,omitempty"`
}

// CancellationRec is a cancellation policy.
type CancellationRec struct {
	Policy string    `bson:"policy" json:"policy"`
	Tiers  []TierRec `bson:"tiers,omitempty" json:"tiers,omitempty"`
}

// TierRec is a tier of a custom policy.
type TierRec struct {
	DaysBefore int    `bson:"days_before" json:"days_before"`
	Percent    string `bson:"percent" json:"percent"`
}

// AdjustmentRec is a plan's adjustment or a markup's: type percent or amount, a signed
// decimal.
type AdjustmentRec struct {
	Type  string `bson:"type" json:"type"`
	Value string `bson:"value" json:"value"`
}

// RangeRec is a plan's adjustment for the nights of a date range.
type RangeRec struct {
	StartDate string `bson:"start_date" json:"start_date"`
	EndDate   string `bson:"end_date" json:"end_date"`
	Type      string `bson:"type" json:"type"`
	Value     string `bson:"value" json:"value"`
}

// SoldOnRec says where a derived plan is sold.
type SoldOnRec struct {
	Direct    bool     `bson:"direct" json:"direct"`
	AllBrands bool     `bson:"all_brands" json:"all_brands"`
	Brands    []int64  `bson:"brands,omitempty" json:"brands,omitempty"`
	Channels  []string `bson:"channels,omitempty" json:"channels,omitempty"`
}

// RatePlanRec is a derived plan.
type RatePlanRec struct {
	ID           int64            `bson:"id" json:"id"`
	Terms        PlanTermsRec     `bson:",inline" json:"-"`
	Adjustment   AdjustmentRec    `bson:"adjustment" json:"adjustment"`
	Ranges       []RangeRec       `bson:"ranges,omitempty" json:"ranges,omitempty"`
	MinimumStay  int              `bson:"minimum_stay,omitempty" json:"minimum_stay,omitempty"`
	SoldOn       SoldOnRec        `bson:"sold_on" json:"sold_on"`
	Restrictions []RestrictionRec `bson:"restrictions,omitempty" json:"restrictions,omitempty"`
}

// RestrictionRec is a run of dates with the same restrictions, field for field the
// contract's Restriction.
type RestrictionRec struct {
	StartDate         string `bson:"start_date" json:"start_date"`
	EndDate           string `bson:"end_date" json:"end_date"`
	MinStayArrival    *int   `bson:"min_stay_arrival,omitempty" json:"min_stay_arrival,omitempty"`
	MinStayThrough    *int   `bson:"min_stay_through,omitempty" json:"min_stay_through,omitempty"`
	MaxStay           *int   `bson:"max_stay,omitempty" json:"max_stay,omitempty"`
	ClosedToArrival   *bool  `bson:"closed_to_arrival,omitempty" json:"closed_to_arrival,omitempty"`
	ClosedToDeparture *bool  `bson:"closed_to_departure,omitempty" json:"closed_to_departure,omitempty"`
	StopSell          *bool  `bson:"stop_sell,omitempty" json:"stop_sell,omitempty"`
}

// MarkupRec is a channel markup.
type MarkupRec struct {
	Channel string `bson:"channel" json:"channel"`
	Type    string `bson:"type" json:"type"`
	Value   string `bson:"value" json:"value"`
}

// Revenue reads the rate plans, restrictions, per-date prices and markups of a live
// property.
func (s *Store) Revenue(ctx context.Context, account string, ref property.PropertyRef) (property.Revenue, error) {
	rec, err := s.resolve(ctx, account, ref)
	if err != nil {
		return property.Revenue{}, err
	}
	return rec.revenue(), nil
}

// revenueRetries bounds how often a change is computed again because the property changed
// between its read and its write (another replica's write: this process's wait for each
// other on the property's lock).
const revenueRetries = 50

// ChangeRevenue changes the rate plans, restrictions, per-date prices and markups of a live
// property in one write that bumps its version and records its event, made only if the
// property is still at the version read (else computed again on the new state). This
// process's changes of one property hold its lock from the read to the write, so they wait
// for each other rather than retry.
func (s *Store) ChangeRevenue(ctx context.Context, account string, ref property.PropertyRef, change func(cur *property.Revenue) (string, error)) (property.Revenue, error) {
	pid, err := s.Locate(ctx, account, ref)
	if err != nil {
		return property.Revenue{}, err
	}
	id := recordID(account, pid)
	unlock := s.locks.Lock(id)
	defer unlock()
	for range revenueRetries {
		rec, err := s.get(ctx, id)
		if err != nil {
			return property.Revenue{}, err
		}
		if rec.Deleted {
			return property.Revenue{}, property.ErrNotFound
		}
		next := rec.revenue()
		typ, err := change(&next)
		if err != nil {
			return property.Revenue{}, err
		}
		out, err := s.updateLocked(ctx, id, typ, bson.D{{Key: "version", Value: rec.Version}}, revenueUpdate(rec, next), false)
		if errors.Is(err, property.ErrNotFound) {
			continue // changed meanwhile by another replica, or deleted: the next read tells
		}
		if err != nil {
			return property.Revenue{}, err
		}
		return out.revenue(), nil
	}
	return property.Revenue{}, fmt.Errorf("rate plans of %s: still changing under this change after %d attempts", id, revenueRetries)
}

// revenueUpdate is the update that turns rec's revenue into r: each section replaced whole
// (removed when empty), and the per-date prices that differ set or removed one by one, so
// that a date nobody changed keeps its stored text.
func revenueUpdate(rec Record, r property.Revenue) bson.D {
	var set, unset bson.D
	put := func(key string, v any, empty bool) {
		if empty {
			unset = append(unset, bson.E{Key: key, Value: ""})
		} else {
			set = append(set, bson.E{Key: key, Value: v})
		}
	}
	var std *PlanTermsRec
	if r.StandardPlan != nil {
		t := planTermsRec(*r.StandardPlan)
		std = &t
	}
	put("standard_plan", std, std == nil)
	put("rate_plans", eachOf(r.Plans, ratePlanRec), len(r.Plans) == 0)
	put("last_rate_plan_id", r.LastPlanID, r.LastPlanID == 0)
	put("restrictions", restrictionRecs(r.Restrictions), len(r.Restrictions) == 0)
	put("channel_markups", eachOf(r.Markups, markupRec), len(r.Markups) == 0)
	old := datePrices(rec.Prices)
	for _, d := range slices.SortedFunc(maps.Keys(r.Prices), pricing.Date.Compare) {
		if p, ok := old[d]; !ok || !p.Equal(r.Prices[d]) {
			put("prices."+d.String(), dayRec(r.Prices[d]), false)
		}
	}
	for _, d := range slices.SortedFunc(maps.Keys(old), pricing.Date.Compare) {
		if _, ok := r.Prices[d]; !ok {
			put("prices."+d.String(), nil, true)
		}
	}
	upd := bson.D{{Key: "$set", Value: set}}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	return upd
}

// revenue is the domain's view of rec's rate plans, restrictions, prices and markups.
func (r Record) revenue() property.Revenue {
	out := property.Revenue{LastPlanID: r.LastRatePlanID, Restrictions: restrictions(r.Restrictions), Prices: datePrices(r.Prices),
		Plans: eachOf(r.RatePlans, ratePlan), Markups: eachOf(r.ChannelMarkups, markup)}
	if r.StandardPlan != nil {
		t := planTerms(*r.StandardPlan)
		out.StandardPlan = &t
	}
	return out
}

func planTermsRec(t property.PlanTerms) PlanTermsRec {
	out := PlanTermsRec{Name: t.Name, Inclusions: t.Inclusions}
	if c := t.Cancellation; c != nil {
		out.Cancellation = &CancellationRec{Policy: string(c.Policy), Tiers: each(c.Tiers, func(x property.CancelTier) TierRec {
			return TierRec{DaysBefore: x.DaysBefore, Percent: x.Percent.String()}
		})}
	}
	return out
}

func planTerms(t PlanTermsRec) property.PlanTerms {
	out := property.PlanTerms{Name: t.Name, Inclusions: t.Inclusions}
	if c := t.Cancellation; c != nil {
		out.Cancellation = &property.Cancellation{Policy: property.CancelPolicy(c.Policy), Tiers: each(c.Tiers, func(x TierRec) property.CancelTier {
			return property.CancelTier{DaysBefore: x.DaysBefore, Percent: decimalOf(x.Percent)}
		})}
	}
	return out
}

func ratePlanRec(p property.RatePlan) RatePlanRec {
	return RatePlanRec{ID: p.ID, Terms: planTermsRec(p.PlanTerms), Adjustment: adjustmentRec(p.Adjustment),
		Ranges: each(p.Ranges, func(x property.RangeAdjustment) RangeRec {
			a := adjustmentRec(x.Adjustment)
			return RangeRec{StartDate: x.Start.String(), EndDate: x.End.String(), Type: a.Type, Value: a.Value}
		}),
		MinimumStay: p.MinimumStay,
		SoldOn: SoldOnRec{Direct: p.SoldOn.Direct, AllBrands: p.SoldOn.AllBrands, Brands: slices.Clone(p.SoldOn.Brands),
			Channels: slices.Clone(p.SoldOn.Channels)},
		Restrictions: restrictionRecs(p.Restrictions)}
}

func ratePlan(r RatePlanRec) property.RatePlan {
	return property.RatePlan{ID: r.ID, PlanTerms: planTerms(r.Terms), Adjustment: adjustment(r.Adjustment.Type, r.Adjustment.Value),
		Ranges: each(r.Ranges, func(x RangeRec) property.RangeAdjustment {
			return property.RangeAdjustment{Start: dateKey(x.StartDate), End: dateKey(x.EndDate), Adjustment: adjustment(x.Type, x.Value)}
		}),
		MinimumStay: r.MinimumStay,
		SoldOn: property.SoldOn{Direct: r.SoldOn.Direct, AllBrands: r.SoldOn.AllBrands, Brands: slices.Clone(r.SoldOn.Brands),
			Channels: slices.Clone(r.SoldOn.Channels)},
		Restrictions: restrictions(r.Restrictions)}
}

func adjustmentRec(a property.Adjustment) AdjustmentRec {
	return AdjustmentRec{Type: string(a.Type), Value: a.Value.String()}
}

func adjustment(typ, value string) property.Adjustment {
	return property.Adjustment{Type: property.AdjustType(typ), Value: decimalOf(value)}
}

func markupRec(m property.Markup) MarkupRec {
	a := adjustmentRec(m.Adjustment)
	return MarkupRec{Channel: m.Channel, Type: a.Type, Value: a.Value}
}

func markup(m MarkupRec) property.Markup {
	return property.Markup{Channel: m.Channel, Adjustment: adjustment(m.Type, m.Value)}
}

// restrictionRecs are r's runs (property.Restrictions.Runs: sorted, adjacent runs differ).
func restrictionRecs(r property.Restrictions) []RestrictionRec {
	runs := r.Runs()
	out := make([]RestrictionRec, len(runs))
	for i, run := range runs {
		x := RestrictionRec{StartDate: run.Start.String(), EndDate: run.End.String()}
		stay := func(n int) *int {
			if n == 0 {
				return nil
			}
			return &n
		}
		flag := func(f property.Flag) *bool {
			if b, ok := f.Bool(); ok {
				return &b
			}
			return nil
		}
		x.MinStayArrival, x.MinStayThrough, x.MaxStay = stay(run.Rules.MinStayArrival), stay(run.Rules.MinStayThrough), stay(run.Rules.MaxStay)
		x.ClosedToArrival, x.ClosedToDeparture, x.StopSell = flag(run.Rules.ClosedToArrival), flag(run.Rules.ClosedToDeparture), flag(run.Rules.StopSell)
		out[i] = x
	}
	return out
}

// restrictions are the stored runs date by date.
func restrictions(recs []RestrictionRec) property.Restrictions {
	runs := make([]property.Run, 0, len(recs))
	for _, x := range recs {
		stay := func(n *int) int {
			if n == nil {
				return 0
			}
			return *n
		}
		flag := func(b *bool) property.Flag {
			if b == nil {
				return property.FlagUnset
			}
			return property.FlagOf(*b)
		}
		start, end := dateKey(x.StartDate), dateKey(x.EndDate)
		if start.IsZero() || end.IsZero() {
			continue
		}
		runs = append(runs, property.Run{Start: start, End: end, Rules: property.DayRules{
			MinStayArrival: stay(x.MinStayArrival), MinStayThrough: stay(x.MinStayThrough), MaxStay: stay(x.MaxStay),
			ClosedToArrival: flag(x.ClosedToArrival), ClosedToDeparture: flag(x.ClosedToDeparture), StopSell: flag(x.StopSell)}})
	}
	return property.RestrictionsOf(runs)
}

// datePrices are the stored per-date prices in the domain's terms ("" is not set).
func datePrices(m map[string]DayRec) map[pricing.Date]property.DatePrice {
	out := make(map[pricing.Date]property.DatePrice, len(m))
	for k, d := range m {
		date := dateKey(k)
		if date.IsZero() {
			continue
		}
		out[date] = property.DatePrice{Price: optDecimal(d.Price), Weekly: optDecimal(d.WeeklyPrice), Monthly: optDecimal(d.MonthPrice),
			MinNights: d.MinNights}
	}
	return out
}

func dayRec(p property.DatePrice) DayRec {
	return DayRec{Price: optMoney(p.Price), WeeklyPrice: optMoney(p.Weekly), MonthPrice: optMoney(p.Monthly), MinNights: p.MinNights}
}

func dateKey(s string) pricing.Date {
	d, err := pricing.ParseDate(s)
	if err != nil {
		return pricing.Date{}
	}
	return d
}

func decimalOf(s string) decimal.Decimal {
	d, _ := decimal.NewFromString(s)
	return d
}

func optDecimal(s string) *decimal.Decimal {
	if s == "" {
		return nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return nil
	}
	return &d
}

// ReadSettings returns the account's settings in force.
func (s *Store) ReadSettings(ctx context.Context, account string) (property.Settings, error) {
	st, err := s.Settings(ctx, account)
	if err != nil {
		return property.Settings{}, err
	}
	return st.settings(), nil
}

// Payloads of the contract (event.go).

func planTermsPayload(t PlanTermsRec) contract.PlanTerms {
	out := contract.PlanTerms{Name: t.Name, Inclusions: t.Inclusions}
	if c := t.Cancellation; c != nil {
		out.Cancellation = &contract.Cancellation{Policy: c.Policy,
			Tiers: each(c.Tiers, func(x TierRec) contract.CancellationTier { return contract.CancellationTier(x) })}
	}
	return out
}

func standardPlanPayload(t *PlanTermsRec) *contract.PlanTerms {
	if t == nil {
		return nil
	}
	out := planTermsPayload(*t)
	return &out
}

func ratePlanPayload(p RatePlanRec) contract.RatePlan {
	return contract.RatePlan{ID: p.ID, PlanTerms: planTermsPayload(p.Terms), Adjustment: contract.Adjustment(p.Adjustment),
		Ranges: each(p.Ranges, func(x RangeRec) contract.RangeAdjustment {
			return contract.RangeAdjustment{StartDate: x.StartDate, EndDate: x.EndDate, Adjustment: contract.Adjustment{Type: x.Type, Value: x.Value}}
		}),
		MinimumStay: p.MinimumStay,
		SoldOn: contract.SoldOn{Direct: p.SoldOn.Direct, AllBrands: p.SoldOn.AllBrands, Brands: p.SoldOn.Brands,
			Channels: p.SoldOn.Channels},
		Restrictions: each(p.Restrictions, restrictionPayload)}
}

func restrictionPayload(r RestrictionRec) contract.Restriction { return contract.Restriction(r) }

func markupPayload(m MarkupRec) contract.Markup {
	return contract.Markup{Channel: m.Channel, Adjustment: contract.Adjustment{Type: m.Type, Value: m.Value}}
}
