package pricing

import (
	"math/rand/v2"
	"testing"
)

func TestConvert(t *testing.T) {
	t.Parallel()
	p := villa()
	p.Rates.Base.Daily = d("99.99")
	p.Rates.LOS = []LOS{{Days: 3, Percent: d("7")}}
	p.Taxes = []Tax{{Name: "city tax", Type: TaxPercent, Amount: d("3.5"), Default: true}}
	p.Policy = &Policy{PaymentType: PayPartial, First: &Charge{AmountType: PercentOfGrandTotal, Amount: d("30"), Due: DueBooking},
		Remaining:     &Charge{AmountType: PercentOfGrandTotal, Amount: d("70"), Due: DueArrival},
		DamageDeposit: &Charge{AmountType: Flat, Amount: d("200"), Due: DueArrival}}
	r := stay("2027-03-01", "2027-03-04", 2, 0)
	lines := []ServiceLine{{Name: "Cleaning", Type: ServiceFixed, Applicable: ApplyPerStay, Amount: d("45.5"), Unit: 1,
		Taxes: []ServiceTax{{Name: "VAT", Perc: d("22")}}}}
	r.Services = &lines
	base, err := Quote(p, r)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		currency, rate        string
		rent, discount, grand string
	}{
		{"EUR", "0.92", "275.97", "19.32", "317.38"},
		{"JPY", "151.37", "45405", "3179", "52217"},
		{"KWD", "0.3071", "92.121", "6.449", "105.944"},
		{"USD", "0.5", "299.97", "21.00", "344.98"}, // the result's own currency: unchanged
	}
	for _, c := range cases {
		t.Run(c.currency, func(t *testing.T) {
			t.Parallel()
			q := Convert(base, c.currency, d(c.rate))
			checkRelations(t, q)
			if q.Currency != c.currency || q.Scale != Scale(c.currency) {
				t.Fatalf("currency %s scale %d", q.Currency, q.Scale)
			}
			if got := money(q, q.TotalRent); got != c.rent {
				t.Errorf("rent %s, want %s", got, c.rent)
			}
			if got := money(q, q.DiscountTotal); got != c.discount {
				t.Errorf("discount %s, want %s", got, c.discount)
			}
			if got := money(q, q.GrandTotal); got != c.grand {
				t.Errorf("grand %s, want %s\n%s", got, c.grand, dump(q))
			}
			if c.currency != base.Currency && &q.Nights[0] == &base.Nights[0] {
				t.Error("the converted result shares the original's nights")
			}
		})
	}
	if base.Currency != "USD" || money(base, base.TotalRent) != "299.97" {
		t.Errorf("Convert changed its input: %s %s", base.Currency, base.TotalRent)
	}
}

// Random quotes converted at realistic rates keep every relation of Result.
func TestRandomConversions(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 2026))
	targets := []struct{ code, rate string }{{"EUR", "0.9213"}, {"GBP", "0.7871"}, {"JPY", "151.37"}, {"KWD", "0.30712"},
		{"CHF", "0.88"}, {"BRL", "5.0123"}}
	n := 0
	for i := range 3000 {
		p := randomProperty(rng)
		r := randomRequest(rng, p)
		if rng.IntN(2) == 0 {
			r.Promotion = &Promotion{Code: "R", Percent: true, Amount: randMoney(rng, 100, 2)}
		}
		q, err := Quote(p, r)
		if err != nil || q.Currency != "USD" {
			continue
		}
		to := targets[rng.IntN(len(targets))]
		cq := Convert(q, to.code, d(to.rate))
		n++
		checkRelations(t, cq)
		if cq.DiscountTotal.GreaterThan(cq.TotalRent) {
			t.Errorf("discounts %s above the rent %s", cq.DiscountTotal, cq.TotalRent)
		}
		if t.Failed() {
			t.Fatalf("case %d: %s at %s\nfrom\n%s\nto\n%s", i, to.code, to.rate, dump(q), dump(cq))
		}
	}
	if n < 500 {
		t.Fatalf("only %d conversions checked", n)
	}
}
