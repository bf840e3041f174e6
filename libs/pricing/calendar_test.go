package pricing

import (
	"testing"
	"time"
)

// yearProperty has everything that changes a night's price: four seasons, weekend prices
// (Friday to Sunday nights), extra-guest prices per season, per-date prices with and
// without weekly and monthly prices, LOS tiers, a surcharge that one-night stays pay, taxes,
// services and a partial payment policy.
func yearProperty() Property {
	p := Property{MaxGuest: 8, Currency: "EUR", Location: rome, WeekendNights: FriSatSun,
		Rates: &Rates{
			Base: Prices{Daily: d("99.90"), Weekend: dp("119.90"), Weekly: dp("630"), Monthly: dp("2222.22"),
				ExtraDaily: dp("15"), ExtraWeekend: dp("17.50"), ExtraWeekly: dp("99.99"), ExtraMonthly: dp("333.33")},
			MinimumStay: 2,
			LOS:         []LOS{{Days: 1, Percent: d("1")}, {Days: 7, Percent: d("7.5")}, {Days: 28, Percent: d("15")}},
			Setting: Setting{StandardOccupants: 2, ApplyWeekendPrice: true, ApplyExtraFeePerSeason: true,
				FirstDaySurcharge: d("35"), FirstDaySurchargeOneNight: true, Apply6NightsWeeklyRate: true,
				DefaultCheckin: AllDays, DefaultCheckout: AllDays},
		},
		Taxes: []Tax{{Name: "VAT", Type: TaxPercent, Amount: d("10"), Default: true},
			{Name: "City tax", Type: TaxFixed, Amount: d("2.35"), Calculation: PerGuestNight, Default: true}},
		Services: []Service{{ServiceLine: ServiceLine{Name: "Cleaning", Type: ServiceFixed, Amount: d("60"),
			Taxes: []ServiceTax{{Name: "VAT", Perc: d("22")}}}, Default: true}},
		Policy: &Policy{PaymentType: PayPartial, First: &Charge{Due: DueBooking, AmountType: PercentOfGrandTotal, Amount: d("30")},
			Remaining:     &Charge{Due: DueXDayPriorArrival, XDay: 30},
			DamageDeposit: &Charge{Due: DueArrival, AmountType: Flat, Amount: d("300")}},
	}
	p.Rates.Seasons = []Season{
		{Name: "Easter", Start: MustDate("2027-03-26"), End: MustDate("2027-04-05"), MinimumStay: 3,
			Prices: Prices{Daily: d("140"), Weekend: dp("160.55"), Weekly: dp("910")}, AllowCheckin: DaysOf(time.Friday, time.Saturday)},
		{Name: "Summer", Start: MustDate("2027-06-15"), End: MustDate("2027-09-10"), MinimumStay: 5,
			Prices: Prices{Daily: d("180.33"), Weekend: dp("210"), Weekly: dp("1150.75"), Monthly: dp("4321"),
				ExtraDaily: dp("25.25"), ExtraWeekly: dp("150")}, AllowCheckin: DaysOf(time.Saturday)},
		{Name: "Autumn", Start: MustDate("2027-10-01"), End: MustDate("2027-10-31"),
			Prices: Prices{Daily: d("85"), Weekly: dp("500"), Monthly: dp("1700")}},
		{Name: "Christmas", Start: MustDate("2027-12-20"), End: MustDate("2028-01-06"), MinimumStay: 7,
			Prices: Prices{Daily: d("250"), Weekend: dp("275.05"), ExtraDaily: dp("40"), ExtraWeekend: dp("45")}},
	}
	p.DatePrices = map[Date]DatePrice{}
	for i, s := range []string{"2027-01-01", "2027-02-14", "2027-04-02", "2027-05-01", "2027-07-03", "2027-07-04",
		"2027-08-15", "2027-10-09", "2027-11-11", "2027-12-24", "2027-12-31"} {
		dpr := DatePrice{Price: dp([]string{"201.01", "155", "175.5", "99.99", "333.33", "299"}[i%6]), MinNights: i % 4}
		if i%3 == 0 {
			dpr.Weekly = dp("1000")
		}
		if i%4 == 0 {
			dpr.Monthly = dp("3999.99")
		}
		p.DatePrices[MustDate(s)] = dpr
	}
	p.DatePrices[MustDate("2027-03-15")] = DatePrice{MinNights: 4} // minimum nights only
	if err := p.Prepare(); err != nil {
		panic(err)
	}
	return p
}

// TestCalendarMatchesOneNightQuote: for every night of a year and every guest count, the
// calendar price of a night is the nightly price of a one-night quote. Weekly and monthly
// prices, LOS discounts and the surcharge are not part of a nightly price, so they cannot
// make the two differ; the weekly and monthly calendar prices are compared with 7- and
// 28-night quotes where those stays are priced by one rate throughout.
func TestCalendarMatchesOneNightQuote(t *testing.T) {
	t.Parallel()
	p := yearProperty()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, rome)
	start := MustDate("2027-01-01")
	for i := range 365 {
		day := start.AddDays(i)
		for guests := 1; guests <= p.MaxGuest; guests++ {
			cal, ok := NightPrice(p, day, guests)
			if !ok {
				t.Fatalf("%s: not priced", day)
			}
			q, err := Quote(p, Request{Checkin: day, Checkout: day.AddDays(1), Adults: guests, Now: now, IgnoreRules: true})
			if err != nil {
				t.Fatalf("%s: %v", day, err)
			}
			if len(q.Nights) != 1 || !q.Nights[0].Price.Equal(cal.Price) || q.Nights[0].Basis != cal.Basis || q.MinimumStay != cal.MinimumStay {
				t.Fatalf("%s, %d guests: calendar %s (%s, min %d), one-night quote %s (%s, min %d)", day, guests,
					cal.Price, cal.Basis, cal.MinimumStay, q.Nights[0].Price, q.Nights[0].Basis, q.MinimumStay)
			}
			for _, long := range []struct {
				nights int
				want   func() string
			}{{7, func() string { return cal.WeeklyPrice.StringFixed(2) }}, {28, func() string { return cal.MonthlyPrice.StringFixed(2) }}} {
				if !oneRate(p, day, long.nights) {
					continue
				}
				q, err := Quote(p, Request{Checkin: day, Checkout: day.AddDays(long.nights), Adults: guests, Now: now, IgnoreRules: true})
				if err != nil {
					t.Fatal(err)
				}
				if got := q.TotalRent.Sub(q.Surcharge).StringFixed(2); got != long.want() {
					t.Fatalf("%s, %d guests, %d nights: quote rent %s, calendar %s", day, guests, long.nights, got, long.want())
				}
			}
		}
	}
}

// oneRate reports whether the nights from day on are all priced by one season (or the
// base rate) that has weekly and monthly prices, with no per-date price among them.
func oneRate(p Property, day Date, nights int) bool {
	pl := p.plan
	src := pl.sourceOf(day)
	if src.p.weekly == unset || src.p.monthly == unset || src.x.weekly == unset || src.x.monthly == unset {
		return false
	}
	for i := range nights {
		d := day.AddDays(i)
		if _, ok := p.DatePrices[d]; ok || pl.sourceOf(d) != src {
			return false
		}
	}
	return true
}

func TestNightPriceFields(t *testing.T) {
	t.Parallel()
	p := villa()
	withWeekend(&p, "120")
	p.Rates.Base.Weekly, p.Rates.Base.ExtraDaily, p.Rates.Base.ExtraWeekly = dp("630"), dp("20"), dp("105")
	s := summer("150")
	s.MinimumStay, s.AllowCheckin = 5, DaysOf(time.Saturday)
	p.Rates.Seasons = []Season{s}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	fri, _ := NightPrice(p, MustDate("2027-03-05"), 3)
	if fri.Price.StringFixed(2) != "140.00" || fri.WeeklyPrice.StringFixed(2) != "735.00" || fri.MonthlyPrice.StringFixed(2) != "2940.00" ||
		fri.GuestPrice.StringFixed(2) != "20.00" || fri.GuestWeeklyPrice.StringFixed(2) != "105.00" || fri.Basis != BasisWeekend ||
		!fri.CheckinAllowed || fri.MinimumStay != 1 {
		t.Errorf("Friday: %+v", fri)
	}
	mon, _ := NightPrice(p, MustDate("2027-07-05"), 2)
	if mon.Price.StringFixed(2) != "150.00" || mon.Season != "Summer" || mon.CheckinAllowed || !mon.CheckoutAllowed || mon.MinimumStay != 5 ||
		mon.WeeklyPrice.StringFixed(2) != "1050.00" {
		t.Errorf("summer Monday: %+v", mon)
	}
	p.Rates = nil
	if _, ok := NightPrice(p, MustDate("2027-03-05"), 2); ok {
		t.Error("a property without rates has calendar prices")
	}
}

func TestBookingWindow(t *testing.T) {
	t.Parallel()
	p := villa()
	p.Rates.Setting.AcceptBookingUpto = 6
	p.Rates.Setting.SameDayUntil = clock("14:00")
	first, last := p.BookingWindow(time.Date(2027, 1, 10, 15, 0, 0, 0, rome))
	if first != MustDate("2027-01-11") || last != MustDate("2027-07-09") {
		t.Errorf("window %s … %s", first, last)
	}
	p.Rates.Setting.SameDayUntil, p.Rates.Setting.AdvanceNoticeDays, p.Rates.Setting.AcceptBookingUpto = nil, 2, 0
	first, last = p.BookingWindow(time.Date(2027, 1, 10, 23, 30, 0, 0, time.UTC)) // already the 11th in Rome
	if first != MustDate("2027-01-13") || !last.IsZero() {
		t.Errorf("window %s … %s", first, last)
	}
}

func BenchmarkQuote7Nights(b *testing.B) {
	p := yearProperty()
	r := Request{Checkin: MustDate("2027-07-03"), Checkout: MustDate("2027-07-10"), Adults: 3, Children: 1,
		Now: time.Date(2027, 1, 10, 10, 0, 0, 0, rome)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Quote(p, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalendar730(b *testing.B) {
	p := yearProperty()
	start := MustDate("2027-01-01")
	b.ReportAllocs()
	for b.Loop() {
		for i := range 730 {
			if _, ok := NightPrice(p, start.AddDays(i), 3); !ok {
				b.Fatal("not priced")
			}
		}
	}
}

// TestNightPriceConcurrent: calendars of one property are served in parallel and share its
// interned amounts; they must all see the same prices (run with -race).
func TestNightPriceConcurrent(t *testing.T) {
	t.Parallel()
	p := yearProperty()
	start := MustDate("2027-01-01")
	want := make([]string, 730)
	for i := range want {
		day, _ := NightPrice(p, start.AddDays(i), 4)
		want[i] = day.Price.String() + " " + day.WeeklyPrice.String() + " " + day.GuestMonthlyPrice.String()
	}
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			bad := ""
			for i := range want {
				j := (i + g*97) % len(want)
				day, _ := NightPrice(p, start.AddDays(j), 4)
				if got := day.Price.String() + " " + day.WeeklyPrice.String() + " " + day.GuestMonthlyPrice.String(); got != want[j] && bad == "" {
					bad = start.AddDays(j).String() + ": " + got + ", want " + want[j]
				}
			}
			errs <- bad
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// yearPlans gives yearProperty a derived plan (10 % off, 5 % off in a July range, its own
// restrictions), property restrictions every weekend of the year (min stay through 2 on
// Friday and Saturday, Sunday closed to departure) and an airbnb markup.
func yearPlans(p *Property) {
	start := MustDate("2027-01-01")
	for i := range 52 {
		fri := start.AddDays(i * 7) // 2027-01-01 is a Friday
		p.Restrictions = append(p.Restrictions, Restriction{Start: fri, End: fri.AddDays(1), MinStayThrough: new(2)},
			Restriction{Start: fri.AddDays(2), End: fri.AddDays(2), ClosedToDeparture: new(true)})
	}
	p.Plans = []Plan{{ID: 1, PlanTerms: PlanTerms{Name: "Non-refundable", Cancellation: Cancellation{Policy: CancelNonRefundable}},
		Adjustment: Adjustment{Type: AdjustPercent, Value: d("-10")},
		Ranges: []RangeAdjustment{{Start: MustDate("2027-07-01"), End: MustDate("2027-07-31"),
			Adjustment: Adjustment{Type: AdjustPercent, Value: d("-5")}}},
		MinimumStay: 3, SoldOn: SoldOn{Direct: true, Channels: []string{"airbnb"}},
		Restrictions: []Restriction{{Start: MustDate("2027-07-01"), End: MustDate("2027-08-31"), MinStayArrival: new(7)}}}}
	p.Markups = []Markup{{Channel: "airbnb", Adjustment: Adjustment{Type: AdjustPercent, Value: d("15")}}}
	if err := p.Prepare(); err != nil {
		panic(err)
	}
}

// BenchmarkQuote7NightsPlan is BenchmarkQuote7Nights on a derived plan for a channel: the
// exact (big.Rat) path of adjusted nights, and restrictions read for every night.
func BenchmarkQuote7NightsPlan(b *testing.B) {
	p := yearProperty()
	yearPlans(&p)
	r := Request{Checkin: MustDate("2027-07-03"), Checkout: MustDate("2027-07-10"), Adults: 3, Children: 1,
		Now: time.Date(2027, 1, 10, 10, 0, 0, 0, rome), Plan: 1, Channel: "airbnb"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Quote(p, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCalendar730Plan is BenchmarkCalendar730 on a derived plan for a channel.
func BenchmarkCalendar730Plan(b *testing.B) {
	p := yearProperty()
	yearPlans(&p)
	start := MustDate("2027-01-01")
	b.ReportAllocs()
	for b.Loop() {
		for i := range 730 {
			if _, ok := NightPriceOn(p, 1, "airbnb", start.AddDays(i), 3); !ok {
				b.Fatal("not priced")
			}
		}
	}
}

// BenchmarkRules730 reads a plan's day rules for 730 days, as search-rental's day cache does.
func BenchmarkRules730(b *testing.B) {
	p := yearProperty()
	yearPlans(&p)
	start := MustDate("2027-01-01")
	b.ReportAllocs()
	for b.Loop() {
		for i := range 730 {
			_ = p.Rules(1, start.AddDays(i))
		}
	}
}
