package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
)

// snapshotJSON is the data of a vros.property.prices.updated event: the contract's golden
// payload (libs/events/contract/testdata), on one line so that the error cases below can
// edit it. It holds every section pricing reads.
var snapshotJSON = func() string {
	var b bytes.Buffer
	if err := json.Compact(&b, contracttest.Golden(contract.PricesUpdated)); err != nil {
		panic(err)
	}
	return b.String()
}()

func TestFromSnapshot(t *testing.T) {
	t.Parallel()
	p, err := FromSnapshot([]byte(snapshotJSON))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Rates
	switch {
	case p.MaxGuest != 6 || !p.NoChildren || p.Currency != DefaultCurrency || p.Location != time.UTC || p.TimeZone != "":
		t.Errorf("content: %+v", p)
	case !r.Base.Daily.Equal(d("100")) || !r.Base.Weekend.Equal(d("120")) || r.Base.Monthly != nil || !r.Base.ExtraDaily.Equal(d("20")):
		t.Errorf("rate: %+v", r.Base)
	case r.MinimumStay != 2 || len(r.LOS) != 1 || r.LOS[0].Days != 7 || !r.LOS[0].Percent.Equal(d("5")):
		t.Errorf("los: %+v", r)
	case r.Setting.StandardOccupants != 2 || r.Setting.AcceptBookingUpto != 12 || !r.Setting.ApplyWeekendPrice ||
		r.Setting.DefaultCheckin != AllDays || r.Setting.DefaultCheckout != FriSatSun || *r.Setting.SameDayUntil != 14*60 ||
		r.Setting.AdvanceNoticeDays != 0 || !r.Setting.Apply6NightsWeeklyRate || !r.Setting.FirstDaySurcharge.Equal(d("25.5")):
		t.Errorf("setting: %+v", r.Setting)
	case len(r.Seasons) != 1 || r.Seasons[0].Start != MustDate("2027-07-01") || r.Seasons[0].AllowCheckin != DaysOf(time.Saturday) ||
		r.Seasons[0].AllowCheckout != 0 || r.Seasons[0].MinimumStay != 5 || !r.Seasons[0].Weekly.Equal(d("945")):
		t.Errorf("seasons: %+v", r.Seasons)
	case len(p.DatePrices) != 3 || p.DatePrices[MustDate("2027-03-10")].Price != nil || p.DatePrices[MustDate("2027-03-10")].MinNights != 4 ||
		!p.DatePrices[MustDate("2027-03-12")].Monthly.Equal(d("2500")):
		t.Errorf("prices: %+v", p.DatePrices)
	case len(p.Taxes) != 3 || p.Taxes[1].Type != TaxFixed || p.Taxes[1].Calculation != PerGuestNight || p.Taxes[2].Default:
		t.Errorf("taxes: %+v", p.Taxes)
	case len(p.Services) != 2 || !p.Services[0].Default || !p.Services[0].Taxes[0].Perc.Equal(d("22")) || p.Services[1].Default:
		t.Errorf("services: %+v", p.Services)
	case p.Policy.PaymentType != PayPartial || p.Policy.Full != nil || p.Policy.Remaining.XDay != 30 ||
		p.Policy.First.AmountType != PercentOfGrandTotal || !p.Policy.DamageDeposit.Amount.Equal(d("300")):
		t.Errorf("policy: %+v", p.Policy)
	case p.plan == nil:
		t.Error("not prepared")
	}

	if err := p.ApplySettings("eur", "Europe/Rome"); err != nil {
		t.Fatal(err)
	}
	if p.Currency != "EUR" || p.Location.String() != "Europe/Rome" {
		t.Errorf("settings: %s %s", p.Currency, p.Location)
	}
	q, err := Quote(p, Request{Checkin: MustDate("2027-03-08"), Checkout: MustDate("2027-03-12"), Adults: 3,
		Now: time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	checkRelations(t, q)
	// 4 nights Mon–Thu at 100 + 20 for the third guest, the surcharge, 10 % VAT, the city tax
	// of 1.50 per guest per night, and Cleaning with its 22 % VAT.
	if money(q, q.TotalRent) != "505.50" || money(q, q.TaxTotal) != "68.55" || money(q, q.ServiceTotal) != "61.00" ||
		money(q, q.GrandTotal) != "635.05" || money(q, q.DamageDeposit) != "300.00" || q.Currency != "EUR" || len(q.Schedule) != 3 {
		t.Errorf("quote:\n%s", dump(q))
	}
	if _, err := Quote(p, Request{Checkin: MustDate("2027-03-10"), Checkout: MustDate("2027-03-12"), Adults: 1,
		Now: time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)}); !isRule(err, MinimumStay) {
		t.Errorf("per-date minimum nights without a price: %v", err)
	}
	if _, err := Quote(p, Request{Checkin: MustDate("2027-03-08"), Checkout: MustDate("2027-03-10"), Adults: 1, Children: 1,
		Now: time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)}); !isRule(err, ChildrenNotAllowed) {
		t.Errorf("children: %v", err)
	}
}

// TestPriced: the golden property and settings payloads, decoded as the consumers decode
// them, give the property its account's currency, zone and weekend, compiled for them.
func TestPriced(t *testing.T) {
	t.Parallel()
	decode := func(typ string, v any) {
		t.Helper()
		if err := json.Unmarshal(contracttest.Golden(typ), v); err != nil {
			t.Fatal(err)
		}
	}
	var snap contract.Property
	var st contract.Settings
	decode(contract.PricesUpdated, &snap)
	decode(contract.SettingsUpdated, &st)
	p, err := Priced(snap, st)
	if err != nil {
		t.Fatal(err)
	}
	if p.Currency != "EUR" || p.Location.String() != "Europe/Rome" || p.WeekendNights != FriSatSun || p.MaxGuest != 6 ||
		!p.NoChildren || len(p.DatePrices) != 3 || len(p.Taxes) != 3 || len(p.Services) != 2 || p.Policy == nil {
		t.Errorf("priced: %+v", p)
	}
	if p.plan == nil || p.plan.weekendSet != FriSatSun {
		t.Error("not compiled for the account's weekend")
	}
	p, err = Priced(snap, contract.DefaultSettings("1001"))
	if err != nil || p.Currency != DefaultCurrency || p.Location.String() != DefaultTimeZone || p.WeekendNights != FriSat {
		t.Errorf("before any settings event: %v %+v", err, p)
	}
	decode(contract.PropertyCreated, &snap)
	if p, err := Priced(snap, st); err != nil || p.Rates != nil || p.Policy != nil || p.MaxGuest != 6 {
		t.Errorf("a new property: %v %+v", err, p)
	}
	decode(contract.PropertyDeleted, &snap)
	if _, err := Priced(snap, st); !errors.Is(err, ErrDeleted) {
		t.Errorf("deleted: %v", err)
	}
}

func isRule(err error, c Code) bool {
	var re *RuleError
	return errors.As(err, &re) && re.Code == c
}

func TestFromSnapshotZones(t *testing.T) {
	t.Parallel()
	own := strings.Replace(snapshotJSON, `"timezone":""`, `"timezone":"America/New_York"`, 1)
	p, err := FromSnapshot([]byte(own))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ApplySettings("", "Europe/Rome"); err != nil || p.Location.String() != "America/New_York" || p.Currency != "USD" {
		t.Errorf("the property's own zone must win: %s %s %v", p.Location, p.Currency, err)
	}
	if err := p.ApplySettings("EU", ""); err == nil {
		t.Error("currency EU accepted")
	}
	if err := p.ApplySettings("", "Mars/Olympus"); err != nil {
		t.Errorf("the account zone is not used when the property has one: %v", err)
	}
	p.TimeZone = ""
	if err := p.ApplySettings("", "Mars/Olympus"); err == nil {
		t.Error("unknown zone accepted")
	}
}

func TestFromSnapshotErrors(t *testing.T) {
	t.Parallel()
	if _, err := FromSnapshot([]byte(`{"deleted":true}`)); !errors.Is(err, ErrDeleted) {
		t.Errorf("deleted: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"daily_price":"100"`, `"daily_price":"abc"`, "rates.rate.daily_price"},
		{`"daily_price":"100"`, `"daily_price":"-1"`, "negative"},
		{`"start_date":"2027-07-01"`, `"start_date":"2027-02-30"`, "rates.seasons[0].start_date"},
		{`"allow_checkin":"Saturday"`, `"allow_checkin":"Caturday"`, "rates.seasons[0].allow_checkin"},
		{`"allow_same_day_booking_until":"14:00"`, `"allow_same_day_booking_until":"25:00"`, "allow_same_day_booking_until"},
		{`"payment_type":"Partial"`, `"payment_type":"Some"`, "policy.payment_type"},
		{`"is_due_at":"Arrival"`, `"is_due_at":"XDayAfterBooking"`, "policy.damage_deposit.is_due_at"},
		{`"x_day":30`, `"x_day":0`, "policy.remaining_payment.x_day"},
		{`"type":1,"calculation_type":1`, `"type":3,"calculation_type":1`, "taxes[0].type"},
		{`"2027-07-03":{"price":"200"`, `"2027-7-03":{"price":"200"`, "prices.2027-7-03"},
		{`"end_date":"2027-08-31"`, `"end_date":"2027-06-30"`, "end_date must not be before start_date"},
		{`"timezone":""`, `"timezone":"Nowhere/City"`, "Nowhere/City"},
		{`"content"`, `"content":1,"x"`, "snapshot"},
	} {
		if !strings.Contains(snapshotJSON, c.from) {
			t.Fatalf("fixture lacks %s", c.from)
		}
		_, err := FromSnapshot([]byte(strings.Replace(snapshotJSON, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.to, err, c.want)
		}
	}
	p, err := FromSnapshot([]byte(`{"content":{"maxguest":4},"rates":null,"policy":null,"taxes":[],"services":[],"prices":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Quote(p, stay("2027-03-01", "2027-03-03", 2, 0)); !isRule(err, NotBookable) {
		t.Errorf("no rates: %v", err)
	}
}

// TestPreparedPlanFollowsTheProperty: a copy whose currency, rates or per-date prices
// change is priced with its own values, not with the plan compiled for the original.
func TestPreparedPlanFollowsTheProperty(t *testing.T) {
	t.Parallel()
	p := villa()
	p.Rates.Base.Daily = d("100.50")
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	jpy := p
	jpy.Currency = "JPY"
	q, err := Quote(jpy, stay("2027-03-01", "2027-03-03", 2, 0))
	if err != nil || q.TotalRent.String() != "201" || q.Nights[0].Price.String() != "101" || q.Nights[1].Price.String() != "100" {
		t.Errorf("JPY copy: %v\n%s", err, dump(q))
	}
	other := p
	other.Rates = &Rates{Base: Prices{Daily: d("80")}, MinimumStay: 1}
	if day, _ := NightPrice(other, MustDate("2027-03-01"), 2); day.Price.String() != "80" {
		t.Errorf("new rates ignored: %s", day.Price)
	}
	other.DatePrices = map[Date]DatePrice{MustDate("2027-03-01"): {Price: dp("90")}}
	if day, _ := NightPrice(other, MustDate("2027-03-01"), 2); day.Price.String() != "90" {
		t.Errorf("new per-date prices ignored: %s", day.Price)
	}
	if day, _ := NightPrice(p, MustDate("2027-03-01"), 2); day.Price.StringFixed(2) != "100.50" {
		t.Errorf("original changed: %s", day.Price)
	}
}

func TestBadRates(t *testing.T) {
	t.Parallel()
	p := villa()
	a, b := summer("150"), summer("160")
	b.Name, b.Start = "Late summer", MustDate("2027-08-31")
	p.Rates.Seasons = []Season{a, b}
	if err := p.Prepare(); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping seasons: %v", err)
	}
	if _, err := Quote(p, stay("2027-03-01", "2027-03-03", 2, 0)); err == nil {
		t.Error("quoted with overlapping seasons")
	}
	// 10^-6 forces a fine tick; a maximal price for 50 guests and 365 nights then exceeds
	// the exact integer range, which must be an error, never a wrong total.
	p = villa()
	p.MaxGuest = 50
	p.Rates.Base.Daily = d("2147483647")
	p.Rates.Base.ExtraDaily = dp("2147483647.000001")
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	if _, err := Quote(p, ignore(stay("2027-03-01", "2028-02-29", 50, 0))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("overflow: %v", err)
	}
}

// TestPricedRevenueGoldens: the golden payloads of the rate plan, restriction and markup
// events, under the golden settings, give the engine the plans, the day rules and the
// markups they carry (docs/rate-plans.md), so a renamed member on either side fails here.
func TestPricedRevenueGoldens(t *testing.T) {
	t.Parallel()
	var st contract.Settings
	if err := json.Unmarshal(contracttest.Golden(contract.SettingsUpdated), &st); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{contract.RatePlansUpdated, contract.RestrictionsUpdated, contract.MarkupsUpdated} {
		var snap contract.Property
		if err := json.Unmarshal(contracttest.Golden(typ), &snap); err != nil {
			t.Fatal(typ, err)
		}
		p, err := Priced(snap, st)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		plans := p.RatePlans()
		if len(plans) != 3 || plans[0].Name != "Flexible rate" || plans[0].Cancellation.Policy != CancelModerate ||
			plans[1].ID != 1 || plans[1].Name != "Non-refundable" || plans[2].ID != 3 || !plans[2].SoldOn.AllBrands {
			t.Errorf("%s: plans %+v", typ, plans)
		}
		if typ == contract.RatePlansUpdated {
			continue
		}
		// The property's restrictions: 2027-07-02 min 3 on arrival, max 14, closed to arrival;
		// 2027-07-04 open to arrival, closed to departure; 2027-12-24…26 stopped. Plan 1
		// adds a minimum of 2 through July.
		day := p.Rules(StandardPlan, MustDate("2027-07-02"))
		if day.MinStayArrival != 3 || day.MaxStay != 14 || !day.ClosedToArrival || day.CheckinAllowed {
			t.Errorf("%s: 2027-07-02 %+v", typ, day)
		}
		if day := p.Rules(StandardPlan, MustDate("2027-07-04")); day.ClosedToArrival || !day.CheckinAllowed || !day.ClosedToDeparture {
			t.Errorf("%s: 2027-07-04 %+v", typ, day)
		}
		if day := p.Rules(1, MustDate("2027-12-25")); !day.StopSell {
			t.Errorf("%s: plan 1 on 2027-12-25 is not stopped: %+v", typ, day)
		}
		if day := p.Rules(1, MustDate("2027-07-15")); day.MinStayThrough != 2 {
			t.Errorf("%s: plan 1 through July: %+v", typ, day)
		}
		if day := p.Rules(StandardPlan, MustDate("2027-07-15")); day.MinStayThrough != 0 || day.StopSell {
			t.Errorf("%s: the standard plan has plan 1's rules: %+v", typ, day)
		}
	}
	// The property's markups replace the account's for airbnb; bookingcom is the account's.
	var snap contract.Property
	if err := json.Unmarshal(contracttest.Golden(contract.MarkupsUpdated), &snap); err != nil {
		t.Fatal(err)
	}
	p, err := Priced(snap, st)
	if err != nil {
		t.Fatal(err)
	}
	base, okBase := NightPriceOn(p, StandardPlan, "", MustDate("2027-03-03"), 1)
	airbnb, okA := NightPriceOn(p, StandardPlan, "airbnb", MustDate("2027-03-03"), 1)
	bcom, okB := NightPriceOn(p, StandardPlan, "bookingcom", MustDate("2027-03-03"), 1)
	if !okBase || !okA || !okB {
		t.Fatal("the golden property cannot be priced")
	}
	scale := Scale(p.Currency)
	if want := base.Price.Mul(decimal.RequireFromString("1.15")).Round(scale); !airbnb.Price.Equal(want) {
		t.Errorf("airbnb: %s, want %s (the property's 15 %%, not the account's 12.5 %%)", airbnb.Price, want)
	}
	if want := base.Price.Sub(decimal.NewFromInt(3)); !bcom.Price.Equal(want) {
		t.Errorf("bookingcom: %s, want %s (the account's -3)", bcom.Price, want)
	}
}
