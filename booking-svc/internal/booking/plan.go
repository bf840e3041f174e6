package booking

import (
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/pricing"
)

// Rate plans as a booking sees them (docs/rate-plans.md): the plan a stay is priced on, the
// terms a quote shows, and what a booking records of them.

// Terms are what a quote says of the plan it priced: its id (0: the standard plan), name,
// inclusions and cancellation policy.
type Terms struct {
	ID           int64
	Name         string
	Inclusions   string
	Cancellation Cancellation
}

// PlanOffer is one bookable plan of a quote (getinfo's ratePlans): its terms and totals, in
// the quote's currency with its minor digits.
type PlanOffer struct {
	Terms
	TotalRent  string
	GrandTotal string
}

// termsOf are the terms of the plan the engine priced r on.
func termsOf(r pricing.Result) Terms {
	return Terms{ID: r.Plan, Name: r.PlanName, Inclusions: r.Inclusions, Cancellation: cancellationOf(r.Cancellation)}
}

// cancellationOf is a policy as a booking keeps it: its name and its tiers as the engine
// resolved them (a named policy's too; interface B and the event show a named policy's
// tiers from its name, docs/rate-plans.md).
func cancellationOf(c pricing.Cancellation) Cancellation {
	out := Cancellation{Policy: c.Policy}
	for _, t := range c.Tiers {
		out.Tiers = append(out.Tiers, CancellationTier{DaysBefore: t.DaysBefore, Percent: t.Percent.String()})
	}
	return out
}

// offers are the plans of p sold where req asks that accept its stay (the standard plan
// first), each priced as req and converted as the stay asks.
func (s *Service) offers(p Property, st Stay, rate decimal.Decimal, req pricing.Request) []PlanOffer {
	out := []PlanOffer{}
	for _, pq := range p.Pricing.Bookable(req) {
		r := s.convert(st, rate, pq.Result)
		out = append(out, PlanOffer{Terms: termsOf(r), TotalRent: r.TotalRent.StringFixed(r.Scale), GrandTotal: r.GrandTotal.StringFixed(r.Scale)})
	}
	return out
}

// hasPlan tells whether p has rate plan id (0, the standard plan, always).
func hasPlan(p Property, id int64) bool {
	if id == 0 {
		return true
	}
	for _, pl := range p.Pricing.Plans {
		if pl.ID == id {
			return true
		}
	}
	return false
}
