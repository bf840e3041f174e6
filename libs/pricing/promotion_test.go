package pricing

import (
	"math/rand/v2"
	"testing"
)

// A promotion is one more discount line on the rent, after the length-of-stay discount,
// and never takes the rent below zero.
func TestPromotionDiscount(t *testing.T) {
	t.Parallel()
	weekOff := func(p *Property) { p.Rates.LOS = []LOS{{Days: 7, Percent: d("10")}} }
	cases := []struct {
		name      string
		prepare   func(*Property)
		promo     Promotion
		in, out   string
		wantLines []string // amount of each discount line
		wantText  []string
		wantGrand string
	}{
		{"10% of a 3-night rent", nil, Promotion{Code: "SPRING10", Percent: true, Amount: d("10")}, "2027-03-01", "2027-03-04",
			[]string{"30.00"}, []string{"Promotion SPRING10: 10% off"}, "270.00"},
		{"flat 25", nil, Promotion{Code: "FLAT25", Amount: d("25")}, "2027-03-01", "2027-03-04",
			[]string{"25.00"}, []string{"Promotion FLAT25: 25.00 USD off"}, "275.00"},
		{"flat above the rent stops at the rent", nil, Promotion{Code: "BIG", Amount: d("1000")}, "2027-03-01", "2027-03-04",
			[]string{"300.00"}, []string{"Promotion BIG: 300.00 USD off"}, "0.00"},
		{"after a length-of-stay discount, on the rent before discounts", weekOff, Promotion{Code: "P5", Percent: true, Amount: d("5")},
			"2027-03-01", "2027-03-08", []string{"70.00", "35.00"},
			[]string{"10% off stays of 7 nights or more", "Promotion P5: 5% off"}, "595.00"},
		{"flat after a length-of-stay discount leaves no negative rent", weekOff, Promotion{Code: "ALL", Amount: d("700")},
			"2027-03-01", "2027-03-08", []string{"70.00", "630.00"}, nil, "0.00"},
		{"100% off", nil, Promotion{Code: "FREE", Percent: true, Amount: d("100")}, "2027-03-01", "2027-03-02",
			[]string{"100.00"}, nil, "0.00"},
		{"named line", nil, Promotion{Code: "X", Name: "Spring sale", Percent: true, Amount: d("12.5")}, "2027-03-01", "2027-03-03",
			[]string{"25.00"}, []string{"Promotion X: 12.5% off"}, "175.00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := villa()
			if c.prepare != nil {
				c.prepare(&p)
			}
			r := stay(c.in, c.out, 2, 0)
			promo := c.promo
			r.Promotion = &promo
			q, err := Quote(p, r)
			if err != nil {
				t.Fatal(err)
			}
			checkRelations(t, q)
			if len(q.Discounts) != len(c.wantLines) {
				t.Fatalf("discounts %+v, want %v", q.Discounts, c.wantLines)
			}
			for i, want := range c.wantLines {
				if got := money(q, q.Discounts[i].Amount); got != want {
					t.Errorf("line %d: %s, want %s", i, got, want)
				}
			}
			last := q.Discounts[len(q.Discounts)-1]
			if last.PromotionCode != c.promo.Code {
				t.Errorf("promotion_code %q, want %q", last.PromotionCode, c.promo.Code)
			}
			if c.promo.Name != "" && last.Name != c.promo.Name || c.promo.Name == "" && last.Name != "Promotion "+c.promo.Code {
				t.Errorf("line name %q", last.Name)
			}
			for i, want := range c.wantText {
				if got := DiscountText(q.Discounts[i], q.Currency, q.Scale); got != want {
					t.Errorf("text %d: %q, want %q", i, got, want)
				}
			}
			if got := money(q, q.GrandTotal); got != c.wantGrand {
				t.Errorf("grandTotal %s, want %s", got, c.wantGrand)
			}
		})
	}
}

// Random stays with a random promotion keep every relation of Result.
func TestRandomPromotions(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 2027))
	for i := range 1500 {
		p := randomProperty(rng)
		r := randomRequest(rng, p)
		pr := Promotion{Code: "R", Percent: rng.IntN(2) == 0, Amount: randMoney(rng, 100, 2)}
		if !pr.Percent {
			pr.Amount = randMoney(rng, 5000, 2)
		}
		r.Promotion = &pr
		q, err := Quote(p, r)
		if err != nil {
			continue
		}
		checkRelations(t, q)
		if q.DiscountTotal.GreaterThan(q.TotalRent) {
			t.Fatalf("case %d: discounts %s above the rent %s", i, q.DiscountTotal, q.TotalRent)
		}
		if t.Failed() {
			t.Fatalf("case %d\n%s", i, dump(q))
		}
	}
}
