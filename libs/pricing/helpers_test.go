package pricing

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the tests must not depend on the machine's zone files

	"github.com/shopspring/decimal"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func dp(s string) *decimal.Decimal { v := d(s); return &v }

func clock(s string) *Clock {
	c, err := ParseClock(s)
	if err != nil {
		panic(err)
	}
	return &c
}

var rome = func() *time.Location {
	l, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		panic(err)
	}
	return l
}()

// exampleNow is the booking moment of the worked examples: Sunday 2027-01-10, 10:00 in Rome.
var exampleNow = time.Date(2027, 1, 10, 10, 0, 0, 0, rome)

// villa is the property every worked example starts from (docs/pricing.md): USD,
// Europe/Rome, maxguest 6, daily price 100, minimum stay 1, two standard occupants,
// every day allowed for check-in and check-out, no other rule.
func villa() Property {
	return Property{MaxGuest: 6, Currency: "USD", Location: rome,
		Rates: &Rates{Base: Prices{Daily: d("100")}, MinimumStay: 1, Setting: Setting{StandardOccupants: 2}}}
}

func summer(daily string) Season {
	return Season{Name: "Summer", Start: MustDate("2027-07-01"), End: MustDate("2027-08-31"), Prices: Prices{Daily: d(daily)}}
}

func stay(in, out string, adults, children int) Request {
	return Request{Checkin: MustDate(in), Checkout: MustDate(out), Adults: adults, Children: children, Now: exampleNow}
}

func money(r Result, v decimal.Decimal) string { return v.StringFixed(r.Scale) }

// checkRelations verifies the relations every Result must satisfy, to the minor unit.
func checkRelations(t *testing.T, r Result) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("relation broken: "+format+"\n%s", append(args, dump(r))...)
	}
	onScale := func(what string, v decimal.Decimal) {
		t.Helper()
		if !v.Equal(v.Round(r.Scale)) {
			fail("%s %s has more than %d decimals", what, v, r.Scale)
		}
		if v.Sign() < 0 {
			fail("%s %s is negative", what, v)
		}
	}
	sum := r.Surcharge
	for _, n := range r.Nights {
		onScale("night "+n.Date.String(), n.Price)
		sum = sum.Add(n.Price)
	}
	if len(r.Nights) != r.NightCount {
		fail("%d nights listed for %d", len(r.Nights), r.NightCount)
	}
	if !sum.Equal(r.TotalRent) {
		fail("Σ nights + surcharge %s ≠ totalRent %s", sum, r.TotalRent)
	}
	tax := decimal.Zero
	for _, x := range r.Taxes {
		onScale("tax "+x.Name, x.Amount)
		tax = tax.Add(x.Amount)
	}
	if !tax.Equal(r.TaxTotal) {
		fail("Σ taxes %s ≠ taxTotal %s", tax, r.TaxTotal)
	}
	svc := decimal.Zero
	for _, s := range r.Services {
		onScale("service "+s.Name, s.Amount)
		st := decimal.Zero
		for _, x := range s.Taxes {
			onScale("service tax "+x.Name, x.Amount)
			st = st.Add(x.Amount)
		}
		if !st.Equal(s.TaxAmount) {
			fail("service %s: Σ taxes %s ≠ taxAmount %s", s.Name, st, s.TaxAmount)
		}
		svc = svc.Add(s.Amount).Add(s.TaxAmount)
	}
	if !svc.Equal(r.ServiceTotal) {
		fail("Σ services %s ≠ serviceTotal %s", svc, r.ServiceTotal)
	}
	disc := decimal.Zero
	for _, x := range r.Discounts {
		onScale("discount "+x.Name, x.Amount)
		disc = disc.Add(x.Amount)
	}
	if !disc.Equal(r.DiscountTotal) {
		fail("Σ discounts %s ≠ discountTotal %s", disc, r.DiscountTotal)
	}
	for what, v := range map[string]decimal.Decimal{"totalRent": r.TotalRent, "taxTotal": r.TaxTotal, "serviceTotal": r.ServiceTotal,
		"discountTotal": r.DiscountTotal, "grandTotal": r.GrandTotal, "damageDeposit": r.DamageDeposit, "surcharge": r.Surcharge} {
		onScale(what, v)
	}
	if g := r.TotalRent.Add(r.TaxTotal).Add(r.ServiceTotal).Sub(r.DiscountTotal); !g.Equal(r.GrandTotal) {
		fail("totalRent + taxTotal + serviceTotal − discountTotal = %s ≠ grandTotal %s", g, r.GrandTotal)
	}
	paid := decimal.Zero
	var prev Date
	for _, in := range r.Schedule {
		onScale("installment "+in.Label, in.Amount)
		if in.Amount.Sign() <= 0 {
			fail("installment %s of %s", in.Label, in.Amount)
		}
		if in.Label == LabelDeposit {
			if !in.Amount.Equal(r.DamageDeposit) || in.DueDate != r.DamageDepositDue {
				fail("deposit installment %v ≠ deposit %s due %s", in, r.DamageDeposit, r.DamageDepositDue)
			}
			continue
		}
		if in.DueDate.Before(prev) {
			fail("installment %s due %s before the previous one %s", in.Label, in.DueDate, prev)
		}
		prev = in.DueDate
		paid = paid.Add(in.Amount)
	}
	if rentInstallments(r) > 0 && !paid.Equal(r.GrandTotal) {
		fail("installments %s ≠ grandTotal %s", paid, r.GrandTotal)
	}
}

func rentInstallments(r Result) int {
	n := 0
	for _, in := range r.Schedule {
		if in.Label != LabelDeposit {
			n++
		}
	}
	return n
}

func dump(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s %s→%s nights=%d guests=%d extra=%d minstay=%d\n", r.Currency, r.Checkin, r.Checkout, r.NightCount, r.Guests, r.ExtraGuests, r.MinimumStay)
	for _, n := range r.Nights {
		fmt.Fprintf(&b, "  night %s %s %-12s %s\n", n.Date, money(r, n.Price), n.Basis, n.Season)
	}
	fmt.Fprintf(&b, "  surcharge %s rent %s tax %s service %s discount %s grand %s deposit %s due %s\n", money(r, r.Surcharge),
		money(r, r.TotalRent), money(r, r.TaxTotal), money(r, r.ServiceTotal), money(r, r.DiscountTotal), money(r, r.GrandTotal),
		money(r, r.DamageDeposit), r.DamageDepositDue)
	for _, x := range r.Taxes {
		fmt.Fprintf(&b, "  tax %s %s\n", x.Name, money(r, x.Amount))
	}
	for _, s := range r.Services {
		fmt.Fprintf(&b, "  service %s %s + %s\n", s.Name, money(r, s.Amount), money(r, s.TaxAmount))
	}
	for _, x := range r.Discounts {
		fmt.Fprintf(&b, "  discount %s %s\n", x.Name, money(r, x.Amount))
	}
	for _, in := range r.Schedule {
		fmt.Fprintf(&b, "  installment %s %s %s\n", in.Label, in.DueDate, money(r, in.Amount))
	}
	return b.String()
}
