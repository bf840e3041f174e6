package booking

import (
	"sort"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/pricing"
)

// QuoteRec keeps a price as the booking stores it: amounts as fixed decimal strings in the
// currency's minor units.
func QuoteRec(q pricing.Result) store.QuoteRec {
	f := func(d decimal.Decimal) string { return d.StringFixed(q.Scale) }
	r := store.QuoteRec{Currency: q.Currency, TotalRent: f(q.TotalRent), TaxTotal: f(q.TaxTotal), ServiceTotal: f(q.ServiceTotal),
		DiscountTotal: f(q.DiscountTotal), GrandTotal: f(q.GrandTotal), DamageDeposit: f(q.DamageDeposit),
		MinNightly: f(q.MinNightlyPrice()), MaxNightly: f(q.MaxNightlyPrice()), Nightly: map[string]string{}, MinimumStay: q.MinimumStay,
		Taxes: []store.AmountRec{}, Services: []store.ServiceAmtRec{}, Discounts: []store.DiscountRec{}, Schedule: []store.InstallmentRec{}}
	for d, v := range q.NightlyPriceDetail() {
		r.Nightly[d.String()] = f(v)
	}
	for _, t := range q.Taxes {
		r.Taxes = append(r.Taxes, store.AmountRec{Name: t.Name, Amount: f(t.Amount)})
	}
	for _, sc := range q.Services {
		r.Services = append(r.Services, store.ServiceAmtRec{Name: sc.Name, Amount: f(sc.Amount), TaxAmount: f(sc.TaxAmount)})
	}
	for _, d := range q.Discounts {
		r.Discounts = append(r.Discounts, store.DiscountRec{Name: d.Name, Amount: f(d.Amount), PromotionCode: d.PromotionCode})
	}
	for _, in := range q.Schedule {
		r.Schedule = append(r.Schedule, store.InstallmentRec{Label: in.Label, Due: in.DueDate.String(), Amount: f(in.Amount)})
	}
	return r
}

// resolvedLines are the service lines a stay is priced with: those requested, or the
// property's default services. A booking keeps them, so that it is priced again with the
// same services when it changes.
func resolvedLines(p pricing.Property, requested *[]pricing.ServiceLine) []pricing.ServiceLine {
	if requested != nil {
		return *requested
	}
	var out []pricing.ServiceLine
	for _, sv := range p.Services {
		if sv.Default {
			out = append(out, sv.ServiceLine)
		}
	}
	return out
}

func lineRecs(lines []pricing.ServiceLine) []store.ServiceLineRec {
	out := make([]store.ServiceLineRec, 0, len(lines))
	for _, l := range lines {
		r := store.ServiceLineRec{Name: l.Name, Applicable: l.Applicable, Amount: l.Amount.String(), Type: l.Type, Unit: l.Unit,
			Taxes: []store.ServiceTaxRec{}}
		for _, t := range l.Taxes {
			r.Taxes = append(r.Taxes, store.ServiceTaxRec{Name: t.Name, Perc: t.Perc.String()})
		}
		out = append(out, r)
	}
	return out
}

// LinesOf turns stored lines back into engine input.
func LinesOf(recs []store.ServiceLineRec) []pricing.ServiceLine {
	out := make([]pricing.ServiceLine, 0, len(recs))
	for _, r := range recs {
		amt, _ := decimal.NewFromString(r.Amount)
		l := pricing.ServiceLine{Name: r.Name, Applicable: r.Applicable, Amount: amt, Type: r.Type, Unit: r.Unit}
		for _, t := range r.Taxes {
			perc, _ := decimal.NewFromString(t.Perc)
			l.Taxes = append(l.Taxes, pricing.ServiceTax{Name: t.Name, Perc: perc})
		}
		out = append(out, l)
	}
	return out
}

// diff returns the dates of a not in b (both sorted).
func diff(a, b []string) []string {
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
