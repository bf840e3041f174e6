package pricing

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestRandomQuotes prices thousands of random stays at random properties and checks that
// every Result satisfies the relations exactly, that the rent equals an independent
// big.Rat computation of the documented rules, that every shown night is within one minor
// unit of its exact price, and that the calendar agrees with one-night quotes.
func TestRandomQuotes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20270110, 42))
	n := 4000
	if testing.Short() {
		n = 500
	}
	var quoted, refused int
	for i := range n {
		p := randomProperty(rng)
		r := randomRequest(rng, p)
		q, err := Quote(p, r)
		if err != nil {
			if _, ok := err.(*RuleError); !ok || r.IgnoreRules && !isRule(err, TooManyGuests) && !isRule(err, BadService) {
				t.Fatalf("case %d: %v", i, err)
			}
			refused++
			continue
		}
		quoted++
		checkRelations(t, q)
		exactRent, exactNights := reference(p, r)
		rent := q.TotalRent.Sub(q.Surcharge)
		if want := roundRat(exactRent, q.Scale); !rent.Equal(want) {
			t.Fatalf("case %d: rent %s, reference %s\n%s", i, rent, want, dump(q))
		}
		unit := new(big.Rat).SetFrac64(1, pow10(q.Scale))
		for k, night := range q.Nights {
			diff := new(big.Rat).Sub(night.Price.Rat(), exactNights[k])
			if diff.Abs(diff).Cmp(unit) > 0 {
				t.Fatalf("case %d: night %s shown %s, exact %s", i, night.Date, night.Price, exactNights[k].FloatString(6))
			}
		}
		if pol := p.Policy; pol != nil && pol.PaymentType != PayNone && q.GrandTotal.Sign() > 0 && rentInstallments(q) == 0 {
			t.Fatalf("case %d: policy %s but no installment\n%s", i, pol.PaymentType, dump(q))
		}
		for _, in := range q.Schedule {
			if in.DueDate.Before(DateOf(r.Now.In(p.location()))) {
				t.Fatalf("case %d: %s due %s before the booking", i, in.Label, in.DueDate)
			}
		}
		if t.Failed() {
			t.Fatalf("case %d", i)
		}
		// The calendar and a one-night quote of the check-in night.
		one := r
		one.Checkout, one.IgnoreRules, one.Services = r.Checkin.AddDays(1), true, &[]ServiceLine{}
		q1, err := Quote(p, one)
		cal, ok := NightPrice(p, r.Checkin, r.Adults+r.Children)
		if err != nil || !ok || !q1.Nights[0].Price.Equal(cal.Price) {
			t.Fatalf("case %d: one-night quote %v (%v), calendar %s (%v)", i, q1.Nights, err, cal.Price, ok)
		}
	}
	t.Logf("%d quoted, %d refused by a rule", quoted, refused)
	if quoted < n/2 {
		t.Errorf("too few quotes succeeded to mean anything: %d of %d", quoted, n)
	}
}

func randMoney(rng *rand.Rand, max int64, decimals int32) decimal.Decimal {
	return decimal.New(rng.Int64N(max*pow10(decimals)+1), -decimals)
}

func maybe(rng *rand.Rand, v decimal.Decimal) *decimal.Decimal {
	if rng.IntN(2) == 0 {
		return nil
	}
	return &v
}

func randomPrices(rng *rand.Rand) Prices {
	dec := int32(rng.IntN(3))
	return Prices{Daily: randMoney(rng, 900, dec), Weekend: maybe(rng, randMoney(rng, 900, dec)),
		Weekly: maybe(rng, randMoney(rng, 6000, dec)), Monthly: maybe(rng, randMoney(rng, 20000, dec)),
		ExtraDaily: maybe(rng, randMoney(rng, 90, dec)), ExtraWeekend: maybe(rng, randMoney(rng, 90, dec)),
		ExtraWeekly: maybe(rng, randMoney(rng, 600, dec)), ExtraMonthly: maybe(rng, randMoney(rng, 2000, dec))}
}

func randomDays(rng *rand.Rand) Weekdays {
	if rng.IntN(3) > 0 {
		return 0
	}
	return Weekdays(rng.IntN(127) + 1)
}

func randomCharge(rng *rand.Rand, dues ...string) *Charge {
	c := &Charge{Due: dues[rng.IntN(len(dues))], XDay: rng.IntN(120) + 1}
	switch rng.IntN(3) {
	case 0:
		c.AmountType, c.Amount = Flat, randMoney(rng, 2000, 2)
	case 1:
		c.AmountType, c.Amount = PercentOfRent, randMoney(rng, 99, 2)
	default:
		c.AmountType, c.Amount = PercentOfGrandTotal, randMoney(rng, 99, 2)
	}
	return c
}

func randomProperty(rng *rand.Rand) Property {
	p := Property{MaxGuest: 10, Currency: []string{"USD", "EUR", "JPY", "KWD"}[rng.IntN(4)], Location: rome,
		WeekendNights: []Weekdays{0, FriSat, FriSatSun}[rng.IntN(3)]}
	r := &Rates{Base: randomPrices(rng), MinimumStay: rng.IntN(4) + 1, Setting: Setting{
		StandardOccupants: rng.IntN(4) + 1, ApplyWeekendPrice: rng.IntN(2) == 0, ApplyExtraFeePerSeason: rng.IntN(2) == 0,
		Apply6NightsWeeklyRate: rng.IntN(2) == 0, FirstDaySurchargeOneNight: rng.IntN(2) == 0,
		DefaultCheckin: randomDays(rng), DefaultCheckout: randomDays(rng), AcceptBookingUpto: rng.IntN(13),
	}}
	if rng.IntN(2) == 0 {
		r.Setting.FirstDaySurcharge = randMoney(rng, 80, int32(rng.IntN(3)))
	}
	if rng.IntN(2) == 0 {
		r.Setting.SameDayUntil = new(Clock(rng.IntN(24 * 60)))
	} else {
		r.Setting.AdvanceNoticeDays = rng.IntN(5)
	}
	for range rng.IntN(4) {
		r.LOS = append(r.LOS, LOS{Days: rng.IntN(40) + 1, Percent: randMoney(rng, 60, 2)})
	}
	start := MustDate("2027-01-01").AddDays(rng.IntN(30))
	for range rng.IntN(5) {
		start = start.AddDays(rng.IntN(40))
		end := start.AddDays(rng.IntN(60))
		r.Seasons = append(r.Seasons, Season{Name: "S" + start.String(), MinimumStay: rng.IntN(6), Start: start, End: end,
			Prices: randomPrices(rng), AllowCheckin: randomDays(rng), AllowCheckout: randomDays(rng)})
		start = end.AddDays(1)
	}
	rng.Shuffle(len(r.Seasons), func(i, j int) { r.Seasons[i], r.Seasons[j] = r.Seasons[j], r.Seasons[i] })
	p.Rates = r
	if n := rng.IntN(25); n > 0 {
		p.DatePrices = map[Date]DatePrice{}
		for range n {
			dp := DatePrice{MinNights: rng.IntN(5)}
			if rng.IntN(5) > 0 {
				v := randMoney(rng, 900, int32(rng.IntN(3)))
				dp.Price, dp.Weekly, dp.Monthly = &v, maybe(rng, randMoney(rng, 6000, 2)), maybe(rng, randMoney(rng, 20000, 2))
			}
			p.DatePrices[MustDate("2027-01-01").AddDays(rng.IntN(300))] = dp
		}
	}
	for range rng.IntN(5) {
		tx := Tax{Name: "tax", Type: rng.IntN(2) + 1, Calculation: rng.IntN(4), Default: rng.IntN(4) > 0}
		if tx.Type == TaxPercent {
			tx.Amount = randMoney(rng, 30, 4)
		} else {
			tx.Amount = randMoney(rng, 20, 2)
		}
		p.Taxes = append(p.Taxes, tx)
	}
	for range rng.IntN(4) {
		p.Services = append(p.Services, Service{ServiceLine: randomLine(rng), Default: rng.IntN(3) > 0})
	}
	switch rng.IntN(4) {
	case 0:
	case 1:
		p.Policy = &Policy{PaymentType: PayNone}
	case 2:
		p.Policy = &Policy{PaymentType: PayFull, Full: randomCharge(rng, DueBooking, DueArrival, DueCheckout, DueXDayPriorArrival, DueXDayAfterBooking)}
	default:
		p.Policy = &Policy{PaymentType: PayPartial, First: randomCharge(rng, DueBooking, DueArrival, DueXDayPriorArrival, DueXDayAfterBooking),
			Remaining: randomCharge(rng, DueCheckout, DueArrival, DueXDayPriorArrival, DueXDayAfterBooking)}
	}
	if p.Policy != nil && rng.IntN(2) == 0 {
		p.Policy.DamageDeposit = randomCharge(rng, DueBooking, DueArrival, DueCheckout, DueXDayPriorArrival)
	}
	if rng.IntN(4) > 0 { // otherwise compiled on every call
		if err := p.Prepare(); err != nil {
			panic(err)
		}
	}
	return p
}

func randomLine(rng *rand.Rand) ServiceLine {
	l := ServiceLine{Name: "service", Type: rng.IntN(2) + 1, Applicable: rng.IntN(5), Unit: rng.IntN(4)}
	if l.Type == ServiceFixed {
		l.Amount = randMoney(rng, 200, int32(rng.IntN(4))) // requests send floats: 3 decimals happen
	} else {
		l.Amount = randMoney(rng, 40, 4)
	}
	for range rng.IntN(3) {
		l.Taxes = append(l.Taxes, ServiceTax{Name: "service tax", Perc: randMoney(rng, 25, 4)})
	}
	return l
}

func randomRequest(rng *rand.Rand, p Property) Request {
	nights := rng.IntN(35) + 1
	if rng.IntN(20) == 0 {
		nights = rng.IntN(MaxNights) + 1
	}
	in := MustDate("2027-01-01").AddDays(rng.IntN(330))
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, rome).Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
	r := Request{Checkin: in, Checkout: in.AddDays(nights), Adults: rng.IntN(6) + 1, Children: rng.IntN(4),
		Now: now, IgnoreRules: rng.IntN(3) > 0}
	if rng.IntN(3) == 0 {
		lines := make([]ServiceLine, rng.IntN(4))
		for i := range lines {
			lines[i] = randomLine(rng)
		}
		r.Services = &lines
	}
	return r
}

// reference prices the nights of a stay from the rules of docs/pricing.md with exact
// rationals, from the Property's own fields rather than the compiled plan.
func reference(p Property, r Request) (*big.Rat, []*big.Rat) {
	rates, st := p.Rates, p.Rates.Setting
	nights := DaysBetween(r.Checkin, r.Checkout)
	guests := r.Adults + r.Children
	extra := 0
	if st.StandardOccupants > 0 && guests > st.StandardOccupants {
		extra = guests - st.StandardOccupants
	}
	rat := func(d *decimal.Decimal) *big.Rat {
		if d == nil {
			return nil
		}
		return d.Rat()
	}
	div := func(d *decimal.Decimal, n int64) *big.Rat { return new(big.Rat).Quo(d.Rat(), big.NewRat(n, 1)) }
	choose := func(daily *big.Rat, weekly, monthly *decimal.Decimal) *big.Rat {
		switch {
		case nights >= 28 && monthly != nil:
			return div(monthly, 28)
		case nights >= 7 && weekly != nil:
			return div(weekly, 7)
		case nights == 6 && st.Apply6NightsWeeklyRate && weekly != nil:
			return div(weekly, 6)
		}
		return daily
	}
	weekendSet := p.WeekendNights
	if weekendSet == 0 {
		weekendSet = FriSat
	}
	total := new(big.Rat)
	var each []*big.Rat
	for i := range nights {
		d := r.Checkin.AddDays(i)
		var season *Season
		for k := range rates.Seasons {
			if s := &rates.Seasons[k]; !d.Before(s.Start) && !d.After(s.End) {
				season = s
			}
		}
		pr := &rates.Base
		if season != nil {
			pr = &season.Prices
		}
		weekend := st.ApplyWeekendPrice && weekendSet.Has(d.Weekday())
		var price *big.Rat
		if dp, ok := p.DatePrices[d]; ok && dp.Price != nil {
			price = choose(rat(dp.Price), dp.Weekly, dp.Monthly)
		} else {
			daily := pr.Daily.Rat()
			if weekend && pr.Weekend != nil {
				daily = pr.Weekend.Rat()
			}
			price = choose(daily, pr.Weekly, pr.Monthly)
		}
		x := rates.Base
		if st.ApplyExtraFeePerSeason && season != nil {
			pick := func(s, b *decimal.Decimal) *decimal.Decimal {
				if s != nil {
					return s
				}
				return b
			}
			x.ExtraDaily, x.ExtraWeekend = pick(season.ExtraDaily, x.ExtraDaily), pick(season.ExtraWeekend, x.ExtraWeekend)
			x.ExtraWeekly, x.ExtraMonthly = pick(season.ExtraWeekly, x.ExtraWeekly), pick(season.ExtraMonthly, x.ExtraMonthly)
		}
		xd := new(big.Rat)
		if x.ExtraDaily != nil {
			xd = x.ExtraDaily.Rat()
		}
		if weekend && x.ExtraWeekend != nil {
			xd = x.ExtraWeekend.Rat()
		}
		perGuest := choose(xd, x.ExtraWeekly, x.ExtraMonthly)
		night := new(big.Rat).Add(price, new(big.Rat).Mul(perGuest, big.NewRat(int64(extra), 1)))
		each = append(each, night)
		total.Add(total, night)
	}
	return total, each
}

// roundRat rounds half away from zero (x ≥ 0) to scale decimals.
func roundRat(x *big.Rat, scale int32) decimal.Decimal {
	m := new(big.Rat).Mul(x, new(big.Rat).SetInt64(pow10(scale)))
	q, r := new(big.Int).QuoRem(m.Num(), m.Denom(), new(big.Int))
	if new(big.Int).Mul(r, big.NewInt(2)).Cmp(m.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return decimal.NewFromBigInt(q, -scale)
}
