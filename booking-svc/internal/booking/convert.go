package booking

import (
	"sort"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/pricing"
)

// QuoteOf keeps a price as a booking does: amounts as fixed decimal strings in the
// currency's minor units.
func QuoteOf(q pricing.Result) Quote {
	f := func(d decimal.Decimal) string { return d.StringFixed(q.Scale) }
	r := Quote{Currency: q.Currency, TotalRent: f(q.TotalRent), TaxTotal: f(q.TaxTotal), ServiceTotal: f(q.ServiceTotal),
		DiscountTotal: f(q.DiscountTotal), GrandTotal: f(q.GrandTotal), DamageDeposit: f(q.DamageDeposit),
		MinNightly: f(q.MinNightlyPrice()), MaxNightly: f(q.MaxNightlyPrice()), Nightly: map[string]string{}, MinimumStay: q.MinimumStay,
		Taxes: []Amount{}, Services: []ServiceAmount{}, Discounts: []Discount{}, Schedule: []Installment{}}
	for d, v := range q.NightlyPriceDetail() {
		r.Nightly[d.String()] = f(v)
	}
	for _, t := range q.Taxes {
		r.Taxes = append(r.Taxes, Amount{Name: t.Name, Amount: f(t.Amount)})
	}
	for _, sc := range q.Services {
		r.Services = append(r.Services, ServiceAmount{Name: sc.Name, Amount: f(sc.Amount), TaxAmount: f(sc.TaxAmount)})
	}
	for _, d := range q.Discounts {
		r.Discounts = append(r.Discounts, Discount{Name: d.Name, Amount: f(d.Amount), PromotionCode: d.PromotionCode})
	}
	for _, in := range q.Schedule {
		r.Schedule = append(r.Schedule, Installment{Label: in.Label, Due: in.DueDate.String(), Amount: f(in.Amount)})
	}
	return r
}

// resolvedLines are the service lines a stay is priced with: those requested, or the
// property's default services. A booking keeps them, so that it is priced again with the
// same services when it changes.
func resolvedLines(p pricing.Property, requested *[]pricing.ServiceLine) []pricing.ServiceLine {
	if requested != nil {
		return append([]pricing.ServiceLine{}, *requested...)
	}
	out := []pricing.ServiceLine{}
	for _, sv := range p.Services {
		if sv.Default {
			out = append(out, sv.ServiceLine)
		}
	}
	return out
}

// DatesNotIn returns the dates of a not in b, sorted. The domain's changes and the feed sync's
// moves both reckon nights this way.
func DatesNotIn(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, d := range b {
		in[d] = true
	}
	var out []string
	for _, d := range a {
		if !in[d] {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}
