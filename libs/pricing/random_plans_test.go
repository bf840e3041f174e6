package pricing

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestRandomPlanQuotes quotes thousands of random stays on random properties with random
// rate plans, restrictions (property and plan level) and channel markups, and checks that:
// every Result satisfies the relations exactly; the rent equals an independent big.Rat
// computation of the plan price rule; every night is within one minor unit of its exact
// price; the day rules (Property.Rules) and the verdict of CheckDays equal a naive
// implementation that reads the Property's own lists; Quote refuses a stay for a date rule
// exactly when the naive check does, and reports its minimum; and the calendar on a plan
// for a channel (NightPriceOn) agrees with one-night quotes.
func TestRandomPlanQuotes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20270331, 7))
	n := 3000
	if testing.Short() {
		n = 400
	}
	var quoted, refused, checks int
	codes := map[Code]int{}
	for i := range n {
		p := randomProperty(rng)
		randomPlans(rng, &p)
		if err := p.Prepare(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		// CheckDays and Property.Rules against the naive rules, on random stays of random plans.
		for range 8 {
			id := randomPlanID(rng, p)
			x := planByID(p, id)
			if x == nil && id != 0 {
				continue
			}
			in := MustDate("2027-01-01").AddDays(rng.IntN(360))
			out := in.AddDays(rng.IntN(20) + 1)
			for d := in; !d.After(out); d = d.AddDays(1) {
				if got, want := p.Rules(id, d), naiveRules(p, x, d); got != want {
					t.Fatalf("case %d: plan %d rules of %s:\n got %+v\nwant %+v", i, id, d, got, want)
				}
			}
			planMin := 0
			if x != nil {
				planMin = x.MinimumStay
			}
			wantCode, _ := naiveCheck(p, x, in, out)
			err := CheckDays(in, out, planMin, func(d Date) DayRules { return p.Rules(id, d) })
			if got := codeOf(err); got != wantCode {
				t.Fatalf("case %d: plan %d %s → %s: CheckDays %v, naive %q", i, id, in, out, err, wantCode)
			}
			codes[wantCode]++
			checks++
		}

		r := randomRequest(rng, p)
		r.Plan = randomPlanID(rng, p)
		r.Channel = []string{"", "", "airbnb", "vrbo", "bookingcom"}[rng.IntN(5)]
		r.Brand = []int64{0, 0, 0, 1, 2}[rng.IntN(5)]
		r.SkipSoldOn = rng.IntN(6) == 0
		x := planByID(p, r.Plan)
		q, err := Quote(p, r)
		wantCode, wantMin := naiveCheck(p, x, r.Checkin, r.Checkout)
		if err != nil {
			re, ok := err.(*RuleError)
			if !ok {
				t.Fatalf("case %d: %v", i, err)
			}
			switch {
			case x == nil && r.Plan != 0:
				if re.Code != UnknownPlan {
					t.Fatalf("case %d: unknown plan %d: %v", i, r.Plan, err)
				}
			case re.Code == NotSold:
				if r.IgnoreRules || r.SkipSoldOn || naiveSold(x, r) {
					t.Fatalf("case %d: plan %d not sold for brand %d channel %q: %v", i, r.Plan, r.Brand, r.Channel, err)
				}
			case dayCode(re.Code):
				if r.IgnoreRules || re.Code != wantCode {
					t.Fatalf("case %d: plan %d %s → %s: Quote %v, naive %q", i, r.Plan, r.Checkin, r.Checkout, err, wantCode)
				}
			case r.IgnoreRules && re.Code != TooManyGuests && re.Code != BadService:
				t.Fatalf("case %d: owner booking refused: %v", i, err)
			}
			refused++
			continue
		}
		quoted++
		if x == nil && r.Plan != 0 {
			t.Fatalf("case %d: unknown plan %d quoted", i, r.Plan)
		}
		if !r.IgnoreRules && (wantCode != "" || !r.SkipSoldOn && !naiveSold(x, r)) {
			t.Fatalf("case %d: plan %d %s → %s accepted, naive %q, sold %v", i, r.Plan, r.Checkin, r.Checkout, wantCode, naiveSold(x, r))
		}
		if q.MinimumStay != wantMin {
			t.Fatalf("case %d: minimum stay %d, naive %d", i, q.MinimumStay, wantMin)
		}
		if q.Plan != r.Plan || q.Channel != r.Channel || x != nil && q.PlanName != x.Name {
			t.Fatalf("case %d: plan %d %q channel %q", i, q.Plan, q.PlanName, q.Channel)
		}
		checkRelations(t, q)
		_, exactNights := reference(p, r)
		exact := new(big.Rat)
		for k, night := range exactNights {
			exactNights[k] = naiveAdjust(p, x, r.Channel, r.Checkin.AddDays(k), night)
			exact.Add(exact, exactNights[k])
		}
		if rent, want := q.TotalRent.Sub(q.Surcharge), roundRat(exact, q.Scale); !rent.Equal(want) {
			t.Fatalf("case %d: rent %s, reference %s\n%s", i, rent, want, dump(q))
		}
		unit := new(big.Rat).SetFrac64(1, pow10(q.Scale))
		for k, night := range q.Nights {
			diff := new(big.Rat).Sub(night.Price.Rat(), exactNights[k])
			if diff.Abs(diff).Cmp(unit) > 0 {
				t.Fatalf("case %d: night %s shown %s, exact %s", i, night.Date, night.Price, exactNights[k].FloatString(6))
			}
		}
		if t.Failed() {
			t.Fatalf("case %d", i)
		}
		// The calendar on the plan for the channel, and a one-night quote of the check-in night.
		one := r
		one.Checkout, one.IgnoreRules, one.Services = r.Checkin.AddDays(1), true, &[]ServiceLine{}
		q1, err := Quote(p, one)
		cal, ok := NightPriceOn(p, r.Plan, r.Channel, r.Checkin, r.Adults+r.Children)
		if err != nil || !ok || !q1.Nights[0].Price.Equal(cal.Price) {
			t.Fatalf("case %d: one-night quote %v (%v), calendar %s (%v)", i, q1.Nights, err, cal.Price, ok)
		}
		rules := naiveRules(p, x, r.Checkin)
		if cal.MinStayThrough != rules.MinStayThrough || cal.MaxStay != rules.MaxStay || cal.StopSell != rules.StopSell ||
			cal.CheckinAllowed != rules.CheckinAllowed || cal.ClosedToArrival != rules.ClosedToArrival ||
			cal.MinimumStay != max(rules.MinStayArrival, planMinOf(x)) {
			t.Fatalf("case %d: calendar %+v, rules %+v", i, cal, rules)
		}
	}
	t.Logf("%d quoted, %d refused; %d CheckDays verdicts %v", quoted, refused, checks, codes)
	if quoted < n/4 {
		t.Errorf("too few quotes succeeded to mean anything: %d of %d", quoted, n)
	}
	for _, c := range []Code{"", StopSell, ClosedToArrival, CheckinDay, ClosedToDeparture, CheckoutDay, MinimumStay, MaximumStay} {
		if codes[c] < 20 {
			t.Errorf("the random restrictions hit %q only %d times", c, codes[c])
		}
	}
}

func planMinOf(x *Plan) int {
	if x == nil {
		return 0
	}
	return x.MinimumStay
}

func dayCode(c Code) bool {
	switch c {
	case StopSell, ClosedToArrival, CheckinDay, ClosedToDeparture, CheckoutDay, MinimumStay, MaximumStay:
		return true
	}
	return false
}

func codeOf(err *RuleError) Code {
	if err == nil {
		return ""
	}
	return err.Code
}

var randomChannels = []string{"airbnb", "vrbo", "bookingcom"}

// randomPlans gives p random derived plans, restrictions and markups.
func randomPlans(rng *rand.Rand, p *Property) {
	p.Restrictions = randomRestrictions(rng)
	if rng.IntN(3) == 0 {
		p.Standard = &PlanTerms{Name: "Flexible", Cancellation: Cancellation{Policy: CancelModerate}}
	}
	ids := rng.Perm(6)[:rng.IntN(5)]
	for _, id := range ids {
		x := Plan{ID: int64(id + 1), PlanTerms: PlanTerms{Name: fmt.Sprintf("plan %d", id+1)}, Adjustment: randomAdjustment(rng),
			MinimumStay: []int{0, 0, 0, 2, 4}[rng.IntN(5)], SoldOn: SoldOn{Direct: rng.IntN(3) > 0, AllBrands: rng.IntN(3) == 0}}
		if rng.IntN(3) == 0 {
			x.SoldOn.Brands = []int64{int64(rng.IntN(3))}
		}
		for _, c := range randomChannels {
			if rng.IntN(2) == 0 {
				x.SoldOn.Channels = append(x.SoldOn.Channels, c)
			}
		}
		start := MustDate("2027-01-01").AddDays(rng.IntN(60))
		for range rng.IntN(3) {
			start = start.AddDays(rng.IntN(60))
			end := start.AddDays(rng.IntN(40))
			x.Ranges = append(x.Ranges, RangeAdjustment{Start: start, End: end, Adjustment: randomAdjustment(rng)})
			start = end.AddDays(1)
		}
		if rng.IntN(2) == 0 {
			x.Restrictions = randomRestrictions(rng)
		}
		p.Plans = append(p.Plans, x)
	}
	markup := func() []Markup {
		var ms []Markup
		for _, c := range randomChannels {
			if rng.IntN(2) == 0 {
				ms = append(ms, Markup{Channel: c, Adjustment: randomAdjustment(rng)})
			}
		}
		return ms
	}
	p.Markups, p.AccountMarkups = markup(), markup()
}

func randomAdjustment(rng *rand.Rand) Adjustment {
	switch rng.IntN(5) {
	case 0:
		return Adjustment{}
	case 1, 2:
		return Adjustment{Type: AdjustPercent, Value: decimal.New(rng.Int64N(25001)-5000, -2)} // −50 … 200 %
	case 3:
		return Adjustment{Type: AdjustPercent, Value: decimal.New(-rng.Int64N(10001), -2)} // down to −100 %
	}
	return Adjustment{Type: AdjustAmount, Value: decimal.New(rng.Int64N(40001)-30000, -2)} // −300 … 100
}

// randomRestrictions: runs over 2027 with random members, dense enough that every rule
// decides some stays.
func randomRestrictions(rng *rand.Rand) []Restriction {
	if rng.IntN(4) == 0 {
		return nil
	}
	var rs []Restriction
	d := MustDate("2027-01-01").AddDays(rng.IntN(20))
	for range rng.IntN(40) {
		d = d.AddDays(rng.IntN(12))
		end := d.AddDays(rng.IntN(8))
		r := Restriction{Start: d, End: end}
		if rng.IntN(4) == 0 {
			r.MinStayArrival = new(rng.IntN(8) + 1)
		}
		if rng.IntN(5) == 0 {
			r.MinStayThrough = new(rng.IntN(8) + 1)
		}
		if rng.IntN(5) == 0 {
			r.MaxStay = new(rng.IntN(12) + 1)
		}
		if rng.IntN(4) == 0 {
			r.ClosedToArrival = new(rng.IntN(2) == 0)
		}
		if rng.IntN(4) == 0 {
			r.ClosedToDeparture = new(rng.IntN(2) == 0)
		}
		if rng.IntN(8) == 0 {
			r.StopSell = new(rng.IntN(3) > 0)
		}
		rs = append(rs, r)
		d = end.AddDays(1)
	}
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] }) // the engine sorts them
	return rs
}

func randomPlanID(rng *rand.Rand, p Property) int64 {
	switch k := rng.IntN(len(p.Plans) + 3); {
	case k < len(p.Plans):
		return p.Plans[k].ID
	case k == len(p.Plans):
		return 99 // unknown
	}
	return 0
}

func planByID(p Property, id int64) *Plan {
	for i := range p.Plans {
		if p.Plans[i].ID == id {
			return &p.Plans[i]
		}
	}
	return nil
}

// restrictionOn is the restriction of list rs holding d, or nil.
func restrictionOn(rs []Restriction, d Date) *Restriction {
	for i := range rs {
		if !d.Before(rs[i].Start) && !d.After(rs[i].End) {
			return &rs[i]
		}
	}
	return nil
}

// naiveRules resolves the day rules of plan x (nil: standard) on d from the Property's own
// fields, as docs/rate-plans.md states them.
func naiveRules(p Property, x *Plan, d Date) DayRules {
	rates, st := p.Rates, p.Rates.Setting
	var season *Season
	for k := range rates.Seasons {
		if s := &rates.Seasons[k]; !d.Before(s.Start) && !d.After(s.End) {
			season = s
		}
	}
	minArr := max(rates.MinimumStay, 1)
	in, out := st.DefaultCheckin, st.DefaultCheckout
	if in == 0 {
		in = AllDays
	}
	if out == 0 {
		out = AllDays
	}
	if season != nil {
		if season.MinimumStay > 0 {
			minArr = season.MinimumStay
		}
		if season.AllowCheckin != 0 {
			in = season.AllowCheckin
		}
		if season.AllowCheckout != 0 {
			out = season.AllowCheckout
		}
	}
	if dp, ok := p.DatePrices[d]; ok && dp.MinNights > 0 {
		minArr = dp.MinNights
	}
	r := DayRules{MinStayArrival: minArr, CheckinAllowed: in.Has(d.Weekday()), CheckoutAllowed: out.Has(d.Weekday()),
		CheckinDays: in, CheckoutDays: out}
	levels := []*Restriction{restrictionOn(p.Restrictions, d)} // least specific first
	if x != nil {
		levels = append(levels, restrictionOn(x.Restrictions, d))
	}
	for _, l := range levels {
		if l == nil {
			continue
		}
		if l.MinStayArrival != nil {
			r.MinStayArrival = *l.MinStayArrival
		}
		if l.MinStayThrough != nil {
			r.MinStayThrough = *l.MinStayThrough
		}
		if l.MaxStay != nil {
			r.MaxStay = *l.MaxStay
		}
		if l.ClosedToArrival != nil {
			r.ClosedToArrival, r.CheckinAllowed = *l.ClosedToArrival, !*l.ClosedToArrival
		}
		if l.ClosedToDeparture != nil {
			r.ClosedToDeparture, r.CheckoutAllowed = *l.ClosedToDeparture, !*l.ClosedToDeparture
		}
		if l.StopSell != nil && *l.StopSell {
			r.StopSell = true // the property's or the plan's
		}
	}
	return r
}

// naiveCheck is the verdict of docs/rate-plans.md's table on a stay of plan x, and the
// minimum stay it had to meet.
func naiveCheck(p Property, x *Plan, in, out Date) (Code, int) {
	nights := DaysBetween(in, out)
	var stopped bool
	minStay := planMinOf(x)
	for k := range nights {
		r := naiveRules(p, x, in.AddDays(k))
		stopped = stopped || r.StopSell
		minStay = max(minStay, r.MinStayThrough)
	}
	a, b := naiveRules(p, x, in), naiveRules(p, x, out)
	minStay = max(minStay, a.MinStayArrival)
	broken := []struct {
		c  Code
		is bool
	}{
		{StopSell, stopped},
		{ClosedToArrival, a.ClosedToArrival},
		{CheckinDay, !a.ClosedToArrival && !a.CheckinAllowed},
		{ClosedToDeparture, b.ClosedToDeparture},
		{CheckoutDay, !b.ClosedToDeparture && !b.CheckoutAllowed},
		{MinimumStay, nights < minStay},
		{MaximumStay, a.MaxStay > 0 && nights > a.MaxStay},
	}
	for _, c := range broken {
		if c.is {
			return c.c, minStay
		}
	}
	return "", minStay
}

// naiveSold: is plan x sold where r asks?
func naiveSold(x *Plan, r Request) bool {
	if x == nil {
		return true
	}
	if r.Channel != "" && !slices.Contains(x.SoldOn.Channels, strings.ToLower(r.Channel)) {
		return false
	}
	if r.Brand != 0 && !x.SoldOn.AllBrands && !slices.Contains(x.SoldOn.Brands, r.Brand) {
		return false
	}
	return r.Channel != "" || r.Brand != 0 || x.SoldOn.Direct
}

// naiveAdjust applies the plan's adjustment of night d (a range's, else the plan's) and the
// channel's markup (the property's, else the account's) to the exact standard price v.
func naiveAdjust(p Property, x *Plan, channel string, d Date, v *big.Rat) *big.Rat {
	apply := func(a Adjustment) {
		switch a.Type {
		case AdjustPercent:
			v.Mul(v, new(big.Rat).Add(big.NewRat(1, 1), new(big.Rat).Quo(a.Value.Rat(), big.NewRat(100, 1))))
		case AdjustAmount:
			v.Add(v, a.Value.Rat())
		}
		if v.Sign() < 0 {
			v.SetInt64(0)
		}
	}
	v = new(big.Rat).Set(v)
	if x != nil {
		a := x.Adjustment
		for _, g := range x.Ranges {
			if !d.Before(g.Start) && !d.After(g.End) {
				a = g.Adjustment
			}
		}
		apply(a)
	}
	if channel != "" {
		for _, ms := range [][]Markup{p.Markups, p.AccountMarkups} {
			if i := slices.IndexFunc(ms, func(m Markup) bool { return m.Channel == channel }); i >= 0 {
				apply(ms[i].Adjustment)
				break
			}
		}
	}
	return v
}

// TestAdjustedPathsAgree: adjusted prices are computed in int64 fractions when they fit and in
// big.Rat otherwise; on random prices, adjustments and markups both give the same nights,
// rents and calendar figures.
func TestAdjustedPathsAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		cur := []string{"USD", "JPY", "KWD"}[rng.IntN(3)]
		p := Property{Currency: cur, Rates: &Rates{Base: Prices{Daily: randMoney(rng, 900, int32(rng.IntN(3)))}}}
		if err := p.Prepare(); err != nil {
			t.Fatal(err)
		}
		pl := p.plan
		compiled := func(a Adjustment) adjust {
			c, err := compileAdjust("x", a)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		cp := &planComp{adj: compiled(randomAdjustment(rng))}
		if rng.IntN(2) == 0 {
			cp.ranges = []rangeAdj{{start: MustDate("2027-03-03"), end: MustDate("2027-03-04"), a: compiled(randomAdjustment(rng))}}
		}
		mk := compiled(randomAdjustment(rng))
		slow := func(a adjust) *adjust { a.fits = false; return &a }
		cpSlow := &planComp{adj: *slow(cp.adj)}
		for _, r := range cp.ranges {
			cpSlow.ranges = append(cpSlow.ranges, rangeAdj{start: r.start, end: r.end, a: *slow(r.a)})
		}
		qs := make([]int64, rng.IntN(10)+1)
		fast, rat := make([]Night, len(qs)), make([]Night, len(qs))
		for k := range qs {
			qs[k] = rng.Int64N(1_000_000_000)
			fast[k].Date = MustDate("2027-03-01").AddDays(k)
			rat[k].Date = fast[k].Date
		}
		t1, ok1 := pl.adjustNights(fast, qs, cp, &mk)
		t2, ok2 := pl.adjustNights(rat, qs, cpSlow, slow(mk))
		if !ok1 || !ok2 || t1 != t2 {
			t.Fatalf("case %d: rent %d (%v), big.Rat %d (%v)", i, t1, ok1, t2, ok2)
		}
		for k := range fast {
			if !fast[k].Price.Equal(rat[k].Price) {
				t.Fatalf("case %d: night %d %s, big.Rat %s", i, k, fast[k].Price, rat[k].Price)
			}
		}
		times := []int64{1, 7, 28}[rng.IntN(3)]
		for _, diff := range []bool{false, true} {
			v1, ok1 := pl.adjustedMinor(qs[0]+qs[len(qs)-1], qs[0], diff, &cp.adj, &mk, times)
			v2, ok2 := pl.adjustedMinor(qs[0]+qs[len(qs)-1], qs[0], diff, slow(cp.adj), slow(mk), times)
			if !ok1 || !ok2 || v1 != v2 {
				t.Fatalf("case %d: calendar figure (diff %v) %d, big.Rat %d", i, diff, v1, v2)
			}
		}
	}
}
