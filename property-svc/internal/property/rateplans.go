package property

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/pricing"
)

// CancelPolicy names a cancellation policy (docs/rate-plans.md, "Cancellation policies").
type CancelPolicy string

// Cancellation policies (contract.CancelFlexible …).
const (
	CancelFlexible      CancelPolicy = "flexible"
	CancelModerate      CancelPolicy = "moderate"
	CancelStrict        CancelPolicy = "strict"
	CancelNonRefundable CancelPolicy = "non_refundable"
	CancelCustom        CancelPolicy = "custom"
)

// Cancellation is a plan's cancellation policy: a named one, or custom tiers.
type Cancellation struct {
	Policy CancelPolicy
	Tiers  []CancelTier // with CancelCustom only, as sent
}

// CancelTier: Percent of the booking's total is refunded when it is cancelled DaysBefore
// days or more before arrival.
type CancelTier struct {
	DaysBefore int
	Percent    decimal.Decimal
}

// SoldOn says where a derived plan can be booked.
type SoldOn struct {
	Direct    bool
	AllBrands bool
	Brands    []int64  // brand ids of the account
	Channels  []string // lower case
}

// PlanTerms are what every plan, the standard one included, says besides its price.
type PlanTerms struct {
	Name         string
	Inclusions   string
	Cancellation *Cancellation // nil on the standard plan: flexible
}

// RangeAdjustment replaces a plan's adjustment for the nights from Start to End.
type RangeAdjustment struct {
	Start, End pricing.Date
	Adjustment
}

// RatePlan is a derived plan of a property: the standard plan's nightly prices with an
// adjustment, its own terms, minimum stay, where it is sold and its own restrictions.
type RatePlan struct {
	ID int64
	PlanTerms
	Adjustment   Adjustment
	Ranges       []RangeAdjustment // sorted as sent, not overlapping
	MinimumStay  int               // 0: none
	SoldOn       SoldOn
	Restrictions Restrictions
}

// StandardPlanName is the name of a standard plan whose terms name none.
const StandardPlanName = "Standard"

// Standard is the standard plan's terms in force: the stored ones, defaults filled in.
func (r Revenue) Standard() PlanTerms {
	t := PlanTerms{}
	if r.StandardPlan != nil {
		t = *r.StandardPlan
	}
	if t.Name == "" {
		t.Name = StandardPlanName
	}
	if t.Cancellation == nil {
		t.Cancellation = &Cancellation{Policy: CancelFlexible}
	}
	return t
}

// Plan returns the derived plan id and its index in r.Plans; -1 when there is none.
func (r Revenue) Plan(id int64) (RatePlan, int) {
	i := slices.IndexFunc(r.Plans, func(p RatePlan) bool { return p.ID == id })
	if i < 0 {
		return RatePlan{}, -1
	}
	return r.Plans[i], i
}

// Actions of /api/property-rateplan and /api/channel-markup besides create, update, delete.
const (
	Set Action = "set"
)

// Bounds of a property's rate plans (docs/rate-plans.md).
const (
	MaxRatePlans       = 20
	maxPlanRanges      = 50
	maxRangeDays       = 1096
	maxSoldOnBrands    = 100
	maxSoldOnChannels  = 20
	maxCancelTiers     = 10
	maxCancelDays      = 730
	maxPlanID          = 2147483647
	standardPlanIsRate = "the standard plan is the rates themselves"
)

var (
	ratePlanActionRule = fields.Str{Required: true, OneOf: []string{string(Create), string(Update), string(Delete), string(List)}}
	cancelPolicyRule   = fields.Str{Required: true, IgnoreCase: true, OneOf: []string{string(CancelFlexible), string(CancelModerate),
		string(CancelStrict), string(CancelNonRefundable), string(CancelCustom)}}
	tierPercent = fields.Dec{Required: true, Max: decimal.NewFromInt(100), MaxScale: 2}
)

// RatePlanRequest is a decoded /api/property-rateplan body. Nil members were not sent: on
// update they keep the stored value.
type RatePlanRequest struct {
	Action       Action
	InternalCode string
	ID           int64 // update and delete
	Name         *string
	Inclusions   *string
	Adjustment   *Adjustment
	Ranges       *[]RangeAdjustment
	MinimumStay  *int
	Cancellation *Cancellation
	SoldOn       *SoldOnChange
}

// SoldOnChange is a sold_on sent: nil members were not sent (an update keeps them; a
// create takes false or none).
type SoldOnChange struct {
	Direct, AllBrands *bool
	Brands            *[]int64
	Channels          *[]string
}

// DecodeRatePlan reads an /api/property-rateplan body.
func DecodeRatePlan(body []byte) (RatePlanRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", ratePlanActionRule)
	req := RatePlanRequest{Action: Action(action)}
	req.InternalCode, _ = o.String("internal_code", internalCodeRule)
	if req.Action == Create || req.Action == Update || req.Action == Delete {
		p := o.Object("rate_plan", true)
		idOK := false
		if req.Action != Create {
			var id int
			id, idOK = p.Int("id", fields.Int{Required: true, Min: 0, Max: maxPlanID})
			req.ID = int64(id)
		}
		switch {
		case req.Action == Delete && idOK && req.ID == contract.StandardPlanID:
			p.Add("id", "the standard plan (id 0) cannot be deleted")
		case req.Action != Delete:
			readRatePlan(p, &req, idOK && req.ID == contract.StandardPlanID)
		}
	}
	if err := v.Err(); err != nil {
		return RatePlanRequest{}, err
	}
	return req, nil
}

// readRatePlan reads the members of a create or update; of the standard plan (an update of
// id 0) only the terms.
func readRatePlan(p *fields.Object, req *RatePlanRequest, standard bool) {
	create := req.Action == Create
	req.Name = notBlank(p, "name", fields.Str{Required: create, Min: 1, Max: 100})
	req.Inclusions = optional(p.String("inclusions", fields.Str{Max: 1000}))
	req.Cancellation = readCancellation(p, "cancellation")
	if standard { // only the terms: the rest of the standard plan is the rates
		for _, name := range []string{"adjustment", "ranges", "minimum_stay", "sold_on"} {
			if p.Has(name) {
				p.Add(name, standardPlanIsRate)
			}
		}
		return
	}
	if a := p.Object("adjustment", create); a != nil {
		if adj, ok := readAdjustment(a); ok {
			req.Adjustment = &adj
		}
	}
	req.Ranges = readRanges(p, "ranges")
	req.MinimumStay = optional(p.Int("minimum_stay", fields.Int{Min: 0, Max: 365}))
	req.SoldOn = readSoldOn(p, "sold_on")
}

// readCancellation reads a cancellation policy: policy one of the five, tiers with custom
// only (1 to 10, each days_before once).
func readCancellation(p *fields.Object, name string) *Cancellation {
	c := p.Object(name, false)
	if c == nil {
		return nil
	}
	policy, ok := c.String("policy", cancelPolicyRule)
	out := &Cancellation{Policy: CancelPolicy(policy)}
	custom := ok && out.Policy == CancelCustom
	switch {
	case !custom && c.Empty("tiers"):
	case ok && !custom:
		c.Addf("tiers", "must not be sent with policy %s (only with custom)", policy)
	default:
		tiers, _ := c.Array("tiers", fields.List{Required: custom, Min: 1, Max: maxCancelTiers})
		seen := map[int]string{}
		for _, t := range tiers {
			var x CancelTier
			days, daysOK := t.Int("days_before", fields.Int{Required: true, Min: 0, Max: maxCancelDays})
			x.DaysBefore = days
			x.Percent, _ = t.Decimal("percent", tierPercent)
			if first, dup := seen[days]; daysOK && dup {
				t.Add("days_before", "duplicates "+first)
			} else if daysOK {
				seen[days] = t.Path()
			}
			out.Tiers = append(out.Tiers, x)
		}
	}
	if !ok {
		return nil
	}
	return out
}

// readRanges reads a plan's range adjustments: at most 50, each start_date ≤ end_date and at
// most 1096 days, none overlapping another.
func readRanges(p *fields.Object, name string) *[]RangeAdjustment {
	items, ok := p.Array(name, fields.List{Max: maxPlanRanges})
	if !ok {
		return nil
	}
	out := make([]RangeAdjustment, 0, len(items))
	paths := []string{}
	for _, it := range items {
		start, end, ok := readDateRange(it)
		adj, adjOK := readAdjustment(it)
		if !ok || !adjOK {
			continue
		}
		r := RangeAdjustment{Start: start, End: end, Adjustment: adj}
		for i, prev := range out {
			if !r.Start.After(prev.End) && !prev.Start.After(r.End) {
				it.Addf("start_date", "overlaps %s", strings.TrimPrefix(paths[i], p.Path()+"."))
				break
			}
		}
		out = append(out, r)
		paths = append(paths, it.Path())
	}
	return &out
}

// readDateRange reads start_date and end_date of o: both required, start ≤ end, at most
// maxRangeDays dates.
func readDateRange(o *fields.Object) (start, end pricing.Date, ok bool) {
	s, sOK := o.Date("start_date", true)
	e, eOK := o.Date("end_date", true)
	if !sOK || !eOK {
		return start, end, false
	}
	start, end = dateOf(s), dateOf(e)
	switch {
	case end.Before(start):
		o.Add("end_date", "must not be before start_date")
		return start, end, false
	case pricing.DaysBetween(start, end) >= maxRangeDays:
		o.Addf("end_date", "must be at most %d days after start_date (a range holds at most %d dates)", maxRangeDays-1, maxRangeDays)
		return start, end, false
	}
	return start, end, true
}

// readSoldOn reads where a plan is sold.
func readSoldOn(p *fields.Object, name string) *SoldOnChange {
	s := p.Object(name, false)
	if s == nil {
		return nil
	}
	out := &SoldOnChange{Direct: optional(s.Bool("direct", false)), AllBrands: optional(s.Bool("all_brands", false))}
	if ids, ok := s.Ints("brands", fields.List{Max: maxSoldOnBrands}, fields.Int{Min: 1, Max: maxBrandID}); ok {
		list := make([]int64, 0, len(ids))
		for _, id := range ids {
			if slices.Contains(list, int64(id)) {
				s.Addf("brands", "lists brand %d twice", id)
				continue
			}
			list = append(list, int64(id))
		}
		out.Brands = &list
	}
	if names, ok := s.Strings("channels", fields.List{Max: maxSoldOnChannels}, channelName); ok {
		list := make([]string, 0, len(names))
		for _, n := range names {
			c := strings.ToLower(n)
			if slices.Contains(list, c) {
				s.Addf("channels", "lists %s twice", c)
				continue
			}
			list = append(list, c)
		}
		out.Channels = &list
	}
	return out
}

// ChangeRatePlan applies a create, update or delete of /api/property-rateplan and returns the
// plan's id. Names are unique in the property ignoring case, the standard plan's included
// (ErrPlanNameTaken); an update or delete of an id the property has no plan with is
// ErrRatePlanNotFound; brands must be the account's (a *fields.Error naming the unknown).
func (s *Properties) ChangeRatePlan(ctx context.Context, account string, req RatePlanRequest) (int64, error) {
	if req.SoldOn != nil && req.SoldOn.Brands != nil && len(*req.SoldOn.Brands) > 0 {
		st, err := s.repo.ReadSettings(ctx, account)
		if err != nil {
			return 0, fmt.Errorf("rate plan of property %q: %w", req.InternalCode, err)
		}
		if err := checkBrandIDs(st, *req.SoldOn.Brands, "rate_plan.sold_on.brands"); err != nil {
			return 0, err
		}
	}
	id := req.ID
	_, err := s.repo.ChangeRevenue(ctx, account, PropertyRef{InternalCode: req.InternalCode}, func(cur *Revenue) (string, error) {
		switch {
		case req.Action == Create:
			if len(cur.Plans) >= MaxRatePlans {
				return "", violation("rate_plan", fmt.Sprintf("the property already has %d rate plans, the most it may have", MaxRatePlans))
			}
			id = max(cur.LastPlanID, lastPlanID(cur.Plans)) + 1
			if err := s.uniqueName(*cur, id, *req.Name); err != nil {
				return "", err
			}
			p := RatePlan{ID: id, PlanTerms: PlanTerms{Name: *req.Name, Cancellation: &Cancellation{Policy: CancelFlexible}},
				SoldOn: SoldOn{Direct: true}, Restrictions: Restrictions{}}
			if req.SoldOn != nil {
				p.SoldOn = SoldOn{}
			}
			req.apply(&p)
			cur.Plans = append(cur.Plans, p)
			cur.LastPlanID = id
		case id == contract.StandardPlanID: // update: the standard plan's terms only
			t := cur.Standard()
			if req.Name != nil {
				if err := s.uniqueName(*cur, id, *req.Name); err != nil {
					return "", err
				}
			}
			req.applyTerms(&t)
			cur.StandardPlan = &t
		default:
			p, i := cur.Plan(id)
			if i < 0 {
				return "", fmt.Errorf("rate plan %d: %w", id, ErrRatePlanNotFound)
			}
			if req.Action == Delete {
				cur.Plans = slices.Delete(slices.Clone(cur.Plans), i, i+1)
				cur.LastPlanID = max(cur.LastPlanID, id)
				break
			}
			if req.Name != nil {
				if err := s.uniqueName(*cur, id, *req.Name); err != nil {
					return "", err
				}
			}
			req.apply(&p)
			cur.Plans = slices.Clone(cur.Plans)
			cur.Plans[i] = p
		}
		return contract.RatePlansUpdated, nil
	})
	if err != nil {
		return 0, fmt.Errorf("rate plan of property %q: %w", req.InternalCode, err)
	}
	return id, nil
}

// uniqueName refuses name when another plan of the property than id has it, ignoring case.
func (s *Properties) uniqueName(r Revenue, id int64, name string) error {
	taken := id != contract.StandardPlanID && strings.EqualFold(r.Standard().Name, name)
	for _, p := range r.Plans {
		taken = taken || p.ID != id && strings.EqualFold(p.Name, name)
	}
	if taken {
		return fmt.Errorf("rate plan name %q: %w", name, ErrPlanNameTaken)
	}
	return nil
}

// lastPlanID is the largest id of plans.
func lastPlanID(plans []RatePlan) int64 {
	var n int64
	for _, p := range plans {
		n = max(n, p.ID)
	}
	return n
}

// applyTerms sets the terms req carries.
func (req RatePlanRequest) applyTerms(t *PlanTerms) {
	if req.Name != nil {
		t.Name = *req.Name
	}
	if req.Inclusions != nil {
		t.Inclusions = *req.Inclusions
	}
	if req.Cancellation != nil {
		c := *req.Cancellation
		t.Cancellation = &c
	}
}

// apply sets the members req carries on the derived plan p.
func (req RatePlanRequest) apply(p *RatePlan) {
	req.applyTerms(&p.PlanTerms)
	if req.Adjustment != nil {
		p.Adjustment = *req.Adjustment
	}
	if req.Ranges != nil {
		p.Ranges = slices.Clone(*req.Ranges)
	}
	if req.MinimumStay != nil {
		p.MinimumStay = *req.MinimumStay
	}
	if so := req.SoldOn; so != nil {
		if so.Direct != nil {
			p.SoldOn.Direct = *so.Direct
		}
		if so.AllBrands != nil {
			p.SoldOn.AllBrands = *so.AllBrands
		}
		if so.Brands != nil {
			p.SoldOn.Brands = slices.Clone(*so.Brands)
		}
		if so.Channels != nil {
			p.SoldOn.Channels = slices.Clone(*so.Channels)
		}
	}
}

// checkBrandIDs refuses ids that are none of the account's brands, naming each.
func checkBrandIDs(st Settings, ids []int64, field string) error {
	var v fields.Violations
	for _, id := range ids {
		if !slices.ContainsFunc(st.Brands, func(b Brand) bool { return int64(b.ID) == id }) {
			v.Addf(field, "no brand of this account has id %d", id)
		}
	}
	return v.Err()
}

// RatePlans returns the standard plan's terms in force and the derived plans of the live
// property with internal code code.
func (s *Properties) RatePlans(ctx context.Context, account, code string) (PlanTerms, []RatePlan, error) {
	r, err := s.repo.Revenue(ctx, account, PropertyRef{InternalCode: code})
	if err != nil {
		return PlanTerms{}, nil, fmt.Errorf("rate plans of property %q: %w", code, err)
	}
	return r.Standard(), r.Plans, nil
}

// Contract is the plan as the property's event carries it (contract.RatePlan), its
// restrictions left out: the answer of a list reads them per date.
func (p RatePlan) Contract() contract.RatePlan {
	out := contract.RatePlan{ID: p.ID, PlanTerms: p.PlanTerms.Contract(), Adjustment: p.Adjustment.Contract(), MinimumStay: p.MinimumStay,
		SoldOn: contract.SoldOn{Direct: p.SoldOn.Direct, AllBrands: p.SoldOn.AllBrands, Brands: p.SoldOn.Brands, Channels: p.SoldOn.Channels}}
	for _, r := range p.Ranges {
		out.Ranges = append(out.Ranges, contract.RangeAdjustment{StartDate: r.Start.String(), EndDate: r.End.String(), Adjustment: r.Adjustment.Contract()})
	}
	return out
}

// Contract is the terms as the events carry them, a missing policy shown as flexible.
func (t PlanTerms) Contract() contract.PlanTerms {
	c := Cancellation{Policy: CancelFlexible}
	if t.Cancellation != nil {
		c = *t.Cancellation
	}
	out := contract.PlanTerms{Name: t.Name, Inclusions: t.Inclusions, Cancellation: &contract.Cancellation{Policy: string(c.Policy)}}
	for _, x := range c.Tiers {
		out.Cancellation.Tiers = append(out.Cancellation.Tiers, contract.CancellationTier{DaysBefore: x.DaysBefore, Percent: x.Percent.String()})
	}
	return out
}

// Contract is the adjustment as the events carry it.
func (a Adjustment) Contract() contract.Adjustment {
	return contract.Adjustment{Type: string(a.Type), Value: a.Value.String()}
}
