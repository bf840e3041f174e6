package pricing

import (
	"slices"

	"github.com/shopspring/decimal"
)

// Convert returns r in another currency, at rate units of currency per unit of r.Currency.
// Every amount is converted and rounded once, to the minor units of currency; every total is
// then the sum of its converted parts, so the relations of Result hold exactly on the
// converted figures (a total is never converted on its own, which could miss the sum of its
// lines by a cent):
//
//   - each night and the surcharge are converted, and TotalRent is their sum;
//   - each tax, service line (and each of its taxes) and discount line likewise;
//   - GrandTotal = TotalRent + TaxTotal + ServiceTotal − DiscountTotal;
//   - the rent installments add up to GrandTotal: all but the last are converted, the last
//     is what remains (an installment left with nothing is merged into the one before, as
//     the engine never lists an empty one); the deposit is the converted DamageDeposit.
//
// Discounts never exceed the converted rent (the last lines give way first). The same
// currency returns r unchanged; the caller checks that rate is positive.
func Convert(r Result, currency string, rate decimal.Decimal) Result {
	if currency == r.Currency {
		return r
	}
	scale := Scale(currency)
	conv := func(d decimal.Decimal) decimal.Decimal { return d.Mul(rate).Round(scale) }
	out := r
	out.Currency, out.Scale = currency, scale

	out.Nights = slices.Clone(r.Nights)
	rent := decimal.Zero
	for i := range out.Nights {
		out.Nights[i].Price = conv(out.Nights[i].Price)
		rent = rent.Add(out.Nights[i].Price)
	}
	out.Surcharge = conv(r.Surcharge)
	out.TotalRent = rent.Add(out.Surcharge)

	out.Taxes, out.TaxTotal = convertLines(r.Taxes, conv)

	out.Services = slices.Clone(r.Services)
	out.ServiceTotal = decimal.Zero
	for i := range out.Services {
		sc := &out.Services[i]
		if sc.Type == ServiceFixed {
			sc.Rate = sc.Rate.Mul(rate) // the unit price as given; shown nowhere, never summed
		}
		sc.Amount = conv(sc.Amount)
		if len(sc.Taxes) > 0 {
			sc.Taxes, sc.TaxAmount = convertLines(sc.Taxes, conv)
		} else {
			sc.TaxAmount = conv(sc.TaxAmount)
		}
		out.ServiceTotal = out.ServiceTotal.Add(sc.Amount).Add(sc.TaxAmount)
	}

	out.Discounts = slices.Clone(r.Discounts)
	out.DiscountTotal = decimal.Zero
	for i := range out.Discounts {
		out.Discounts[i].Amount = conv(out.Discounts[i].Amount)
		out.DiscountTotal = out.DiscountTotal.Add(out.Discounts[i].Amount)
	}
	for i := len(out.Discounts) - 1; i >= 0 && out.DiscountTotal.GreaterThan(out.TotalRent); i-- {
		cut := decimal.Min(out.DiscountTotal.Sub(out.TotalRent), out.Discounts[i].Amount)
		out.Discounts[i].Amount = out.Discounts[i].Amount.Sub(cut)
		out.DiscountTotal = out.DiscountTotal.Sub(cut)
	}

	out.GrandTotal = out.TotalRent.Add(out.TaxTotal).Add(out.ServiceTotal).Sub(out.DiscountTotal)
	out.DamageDeposit = conv(r.DamageDeposit)
	if out.DamageDeposit.Sign() == 0 {
		out.DamageDepositDue = Date{}
	}

	out.Schedule = convertSchedule(r.Schedule, out.GrandTotal, out.DamageDeposit, conv)
	return out
}

// convertLines converts each line and returns them with their sum.
func convertLines(lines []TaxLine, conv func(decimal.Decimal) decimal.Decimal) ([]TaxLine, decimal.Decimal) {
	out := slices.Clone(lines)
	sum := decimal.Zero
	for i := range out {
		out[i].Amount = conv(out[i].Amount)
		sum = sum.Add(out[i].Amount)
	}
	return out, sum
}

// convertSchedule converts the installments so that the rent ones add up to grand.
func convertSchedule(in []Installment, grand, deposit decimal.Decimal, conv func(decimal.Decimal) decimal.Decimal) []Installment {
	var rent []Installment
	var dep *Installment
	paid := decimal.Zero
	for _, x := range in {
		if x.Label == LabelDeposit {
			x.Amount = deposit
			dep = &x
			continue
		}
		x.Amount = conv(x.Amount)
		paid = paid.Add(x.Amount)
		rent = append(rent, x)
	}
	if n := len(rent); n > 0 {
		rent[n-1].Amount = grand.Sub(paid.Sub(rent[n-1].Amount))
		for n > 1 && rent[n-1].Amount.Sign() <= 0 {
			rent[n-2].Amount = rent[n-2].Amount.Add(rent[n-1].Amount)
			rent, n = rent[:n-1], n-1
		}
		if rent[0].Amount.Sign() <= 0 {
			rent = nil
		}
	}
	out := make([]Installment, 0, len(in))
	out = append(out, rent...)
	if dep != nil && dep.Amount.Sign() > 0 {
		out = append(out, *dep)
	}
	return out
}
