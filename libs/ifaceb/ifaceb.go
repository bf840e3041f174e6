// Package ifaceb builds answers of interface B from the events' snapshots
// (libs/events/contract): the shapes that two services send, catalog-svc as its read
// answers and integration-svc in its webhooks' payloads (docs/webhooks.md), so that a
// receiver gets exactly what the matching read returns. Like the contract, it is the public
// interface's shape, not any one service's domain.
package ifaceb

import (
	"encoding/json"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// CompositeID is a property's id as interface B's property reads name it: <account>_<id>.
func CompositeID(account string, id int64) string { return account + "_" + strconv.FormatInt(id, 10) }

// Money writes a decimal string as an exact JSON number ("" and a malformed one are 0).
func Money(s string) json.Number {
	if s == "" {
		return "0"
	}
	if _, err := decimal.NewFromString(s); err != nil {
		return "0"
	}
	return json.Number(s)
}

// OptMoney is Money, nil when absent.
func OptMoney(s string) *json.Number {
	if s == "" {
		return nil
	}
	n := Money(s)
	return &n
}

// Summary is a property summary, one entry of getpropertyinfo's list (B6).
type Summary struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Address  string `json:"address"`
	City     string `json:"city"`
	Postcode string `json:"postcode"`
	State    string `json:"state"`
	Country  string `json:"country"`
	Brief    string `json:"brief"`
	Bedroom  int    `json:"bedroom"`
	Bathroom int    `json:"bathroom"`
}

// SummaryOf is the account's property p as getpropertyinfo lists it.
func SummaryOf(account string, p contract.Property) Summary {
	ct := p.Content
	return Summary{ID: CompositeID(account, p.PropertyID), Name: ct.Name, Address: ct.Address, City: ct.City,
		Postcode: ct.Postcode, State: ct.State, Country: ct.Country, Brief: ct.Brief, Bedroom: ct.Bedrooms, Bathroom: ct.Bathrooms}
}

// Season is one season of a rate table (B6).
type Season struct {
	SeasonName     string       `json:"seasonName"`
	StartDate      string       `json:"startDate,omitempty"`
	EndDate        string       `json:"endDate,omitempty"`
	MinimumStay    int          `json:"minimumStay"`
	Nightly        json.Number  `json:"nightly"`
	Weekly         json.Number  `json:"weekly"`
	Monthly        *json.Number `json:"monthly,omitempty"`
	Weekend        json.Number  `json:"weekend"`
	AllowCheckins  string       `json:"allowCheckins"`
	AllowCheckouts string       `json:"allowCheckouts"`
	Def            int          `json:"def"`
}

// RateTable is getratetable's answer (B6).
type RateTable struct {
	TableName        string `json:"tableName"`
	LimitOccupant    int    `json:"limitOccupant"`
	ExtraOccupantFee struct {
		Nightly json.Number `json:"nightly"`
		Weekend json.Number `json:"weekend"`
	} `json:"extraOccupantFee"`
	FirstNightSurcharge   json.Number `json:"firstNightSurcharge"`
	OneNightStaySurcharge json.Number `json:"oneNightStaySurcharge"`
	Seasons               []Season    `json:"seasons"`
	// RatePlans are the property's plans, the standard one (id 0) first, then the derived
	// ones by id (docs/rate-plans.md): added after the members above.
	RatePlans []RatePlan `json:"ratePlans"`
}

// RatePlan is one plan of a rate table: what it changes of the standard plan's prices and
// its terms.
type RatePlan struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Inclusions string `json:"inclusions"`
	// Adjustment is the plan's change of the standard nightly prices (outside its date
	// ranges); the standard plan's is percent 0.
	Adjustment         Adjustment         `json:"adjustment"`
	MinimumStay        int                `json:"minimumStay"`
	CancellationPolicy CancellationPolicy `json:"cancellationPolicy"`
}

// Adjustment is a plan's price change: Type percent or amount, Value a signed exact number.
type Adjustment struct {
	Type  string      `json:"type"`
	Value json.Number `json:"value"`
}

// CancellationPolicy is a plan's (or a booking's) cancellation policy as interface B shows
// it: the policy's name and its tiers written out, so that a client needs no table of the
// named policies. No tier reached: nothing is refunded.
type CancellationPolicy struct {
	Policy string             `json:"policy"`
	Tiers  []CancellationTier `json:"tiers"`
}

// CancellationTier: Percent of the booking's grand total is refunded when it is cancelled
// DaysBefore days or more before arrival.
type CancellationTier struct {
	DaysBefore int         `json:"days_before"`
	Percent    json.Number `json:"percent"`
}

// CancellationPolicyOf shows a policy of the contract; nil (or no policy named) is the
// standard plan's default, flexible. A named policy's tiers are the rule engine's
// (pricing.Cancellation.Resolved, the tiers its Refund applies); a custom policy's are shown as
// set.
func CancellationPolicyOf(c *contract.Cancellation) CancellationPolicy {
	if c == nil {
		c = &contract.Cancellation{}
	}
	r := pricing.Cancellation{Policy: c.Policy}.Resolved()
	out := CancellationPolicy{Policy: r.Policy, Tiers: []CancellationTier{}}
	if r.Policy != contract.CancelCustom {
		for _, t := range r.Tiers {
			out.Tiers = append(out.Tiers, CancellationTier{DaysBefore: t.DaysBefore, Percent: json.Number(t.Percent.String())})
		}
		return out
	}
	for _, t := range c.Tiers {
		out.Tiers = append(out.Tiers, CancellationTier{DaysBefore: t.DaysBefore, Percent: Money(t.Percent)})
	}
	return out
}

// StandardPlanName is the standard plan's name when its terms set none.
const StandardPlanName = "Standard"

// RatePlansOf lists the property's plans as getratetable shows them: the standard plan
// (its terms, else Standard, nothing included, flexible), then each derived plan.
func RatePlansOf(p contract.Property) []RatePlan {
	std := RatePlan{ID: contract.StandardPlanID, Name: StandardPlanName, Adjustment: Adjustment{Type: contract.AdjustPercent, Value: "0"},
		CancellationPolicy: CancellationPolicyOf(nil)}
	if t := p.StandardPlan; t != nil {
		if t.Name != "" {
			std.Name = t.Name
		}
		std.Inclusions, std.CancellationPolicy = t.Inclusions, CancellationPolicyOf(t.Cancellation)
	}
	out := []RatePlan{std}
	for _, rp := range p.RatePlans {
		out = append(out, RatePlan{ID: rp.ID, Name: rp.Name, Inclusions: rp.Inclusions,
			Adjustment:  Adjustment{Type: rp.Adjustment.Type, Value: Money(rp.Adjustment.Value)},
			MinimumStay: rp.MinimumStay, CancellationPolicy: CancellationPolicyOf(rp.Cancellation)})
	}
	return out
}

// RateTableOf shows the property's A4 rates: the base rate is the season with def 1, each
// season after it takes the base's minimum stay and check-in/out days where it sets none;
// then its rate plans (RatePlansOf).
func RateTableOf(p contract.Property) RateTable {
	out := RateTable{TableName: "Standard", FirstNightSurcharge: "0", OneNightStaySurcharge: "0", Seasons: []Season{},
		RatePlans: RatePlansOf(p)}
	out.ExtraOccupantFee.Nightly, out.ExtraOccupantFee.Weekend = "0", "0"
	r := p.Rates
	if r == nil {
		return out
	}
	out.LimitOccupant = r.Setting.StandardOccupants
	out.ExtraOccupantFee.Nightly = Money(r.Rate.ExtraDaily)
	out.ExtraOccupantFee.Weekend = Money(r.Rate.ExtraDaily)
	if r.Rate.ExtraWeekend != "" {
		out.ExtraOccupantFee.Weekend = Money(r.Rate.ExtraWeekend)
	}
	out.FirstNightSurcharge = Money(r.Setting.FirstDaySurcharge)
	if r.Setting.FirstDaySurchargeOneNight {
		out.OneNightStaySurcharge = Money(r.Setting.FirstDaySurcharge)
	}
	season := func(name string, min int, pr contract.Prices, in, outd string, def int) Season {
		s := Season{SeasonName: name, MinimumStay: min, Nightly: Money(pr.Daily), Weekly: weekly(pr), Monthly: OptMoney(pr.Monthly),
			Weekend: Money(pr.Daily), AllowCheckins: orAll(in), AllowCheckouts: orAll(outd), Def: def}
		if pr.Weekend != "" {
			s.Weekend = Money(pr.Weekend)
		}
		return s
	}
	out.Seasons = append(out.Seasons, season("Standard", r.MinimumStay, r.Rate, r.Setting.DefaultAllowCheckin, r.Setting.DefaultAllowCheckout, 1))
	for _, se := range r.Seasons {
		min := se.MinimumStay
		if min == 0 {
			min = r.MinimumStay
		}
		in, o := se.AllowCheckin, se.AllowCheckout
		if in == "" {
			in = r.Setting.DefaultAllowCheckin
		}
		if o == "" {
			o = r.Setting.DefaultAllowCheckout
		}
		s := season(se.Name, min, se.Prices, in, o, 0)
		s.StartDate, s.EndDate = se.StartDate, se.EndDate
		out.Seasons = append(out.Seasons, s)
	}
	return out
}

// weekly is the weekly price of a rate: its own, else 7 nights at the daily price.
func weekly(p contract.Prices) json.Number {
	if p.Weekly != "" {
		return Money(p.Weekly)
	}
	if d, err := decimal.NewFromString(p.Daily); err == nil {
		return json.Number(d.Mul(decimal.NewFromInt(7)).String())
	}
	return "0"
}

func orAll(s string) string {
	if s == "" {
		return "All"
	}
	return s
}
