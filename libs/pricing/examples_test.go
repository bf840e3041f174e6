package pricing

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The worked examples of docs/pricing.md, one row each, with the same numbers. Each starts
// from villa() (USD, Europe/Rome, daily 100, minimum stay 1, two standard occupants) and
// the booking moment exampleNow (Sunday 2027-01-10 10:00 Rome); set only changes it.
type example struct {
	name string
	set  func(p *Property)
	req  Request
	want want
}

// want holds what an example shows; empty fields are not checked. Amounts are written
// with the currency's decimals.
type want struct {
	err       Code
	msg       string // the error's message contains this
	nights    string // "100.00 150.00 …"
	basis     string // "daily weekend …"
	surcharge string
	rent      string
	tax       string
	service   string
	discount  string
	grand     string
	deposit   string
	taxes     []string // "name amount"
	services  []string // "name amount+tax"
	discounts []string // "name amount"
	schedule  []string // "label due amount"
	minStay   int
	plan      string // Result.PlanName
}

func withWeekend(p *Property, weekend string) {
	p.Rates.Base.Weekend = dp(weekend)
	p.Rates.Setting.ApplyWeekendPrice = true
}

var examples = []example{
	// 12. The must-show example: every line of a quote.
	{name: "must-show: 7 nights, two rent taxes, a taxed fixed service and a percent service",
		set: func(p *Property) {
			p.Rates.Base.Daily = d("95.50")
			p.Rates.LOS = []LOS{{Days: 7, Percent: d("5")}}
			p.Taxes = []Tax{{Name: "VAT", Type: TaxPercent, Amount: d("10"), Default: true},
				{Name: "Tourism levy", Type: TaxPercent, Amount: d("14"), Default: true}}
			p.Services = []Service{
				{ServiceLine: ServiceLine{Name: "Cleaning", Type: ServiceFixed, Applicable: ApplyPerStay, Amount: d("40"), Unit: 1,
					Taxes: []ServiceTax{{Name: "VAT", Perc: d("10")}}}, Default: true},
				{ServiceLine: ServiceLine{Name: "Concierge", Type: ServicePercent, Amount: d("30")}, Default: true}}
			p.Policy = &Policy{PaymentType: PayFull, Full: &Charge{Due: DueXDayPriorArrival, XDay: 30}}
		},
		req: stay("2027-03-01", "2027-03-08", 2, 0),
		want: want{nights: "95.50 95.50 95.50 95.50 95.50 95.50 95.50", rent: "668.50",
			taxes: []string{"VAT 66.85", "Tourism levy 93.59"}, tax: "160.44",
			services: []string{"Cleaning 40.00+4.00", "Concierge 200.55+0.00"}, service: "244.55",
			discounts: []string{"length of stay discount (7+ nights) 33.43"}, discount: "33.43",
			grand: "1040.06", schedule: []string{"full 2027-01-30 1040.06"}}},

	// 1. Nightly base price.
	{name: "1a per-date > season > base, weekend price",
		set: func(p *Property) {
			withWeekend(p, "120")
			s := summer("150")
			s.Weekend = dp("180")
			p.Rates.Seasons = []Season{s}
			p.DatePrices = map[Date]DatePrice{MustDate("2027-07-03"): {Price: dp("200")}}
		},
		req:  stay("2027-06-30", "2027-07-04", 2, 0),
		want: want{nights: "100.00 150.00 180.00 200.00", basis: "daily daily weekend date", rent: "630.00", grand: "630.00"}},
	{name: "1b apply_weekend_price off",
		set: func(p *Property) {
			withWeekend(p, "120")
			p.Rates.Setting.ApplyWeekendPrice = false
			s := summer("150")
			s.Weekend = dp("180")
			p.Rates.Seasons = []Season{s}
			p.DatePrices = map[Date]DatePrice{MustDate("2027-07-03"): {Price: dp("200")}}
		},
		req:  stay("2027-06-30", "2027-07-04", 2, 0),
		want: want{nights: "100.00 150.00 150.00 200.00", rent: "600.00"}},
	{name: "1c weekend nights Friday and Saturday",
		set:  func(p *Property) { withWeekend(p, "120") },
		req:  stay("2027-06-25", "2027-06-28", 2, 0),
		want: want{nights: "120.00 120.00 100.00", basis: "weekend weekend daily", rent: "340.00"}},
	{name: "1d weekend nights Friday, Saturday and Sunday",
		set:  func(p *Property) { withWeekend(p, "120"); p.WeekendNights = FriSatSun },
		req:  stay("2027-06-25", "2027-06-28", 2, 0),
		want: want{nights: "120.00 120.00 120.00", rent: "360.00"}},

	// 2. Weekly, monthly and six-night stays.
	{name: "2a weekly price for 7 nights, weekend price not applied",
		set:  func(p *Property) { withWeekend(p, "120"); p.Rates.Base.Weekly = dp("630") },
		req:  stay("2027-03-01", "2027-03-08", 2, 0),
		want: want{nights: "90.00 90.00 90.00 90.00 90.00 90.00 90.00", basis: "weekly weekly weekly weekly weekly weekly weekly", rent: "630.00"}},
	{name: "2b weekly price that does not divide by 7",
		set:  func(p *Property) { p.Rates.Base.Weekly = dp("1000") },
		req:  stay("2027-03-01", "2027-03-08", 2, 0),
		want: want{nights: "142.86 142.85 142.86 142.86 142.86 142.85 142.86", rent: "1000.00"}},
	{name: "2c 10 nights across the base rate and a season, each at its own weekly price",
		set: func(p *Property) {
			p.Rates.Base.Weekly = dp("630")
			s := summer("120")
			s.Weekly = dp("700")
			p.Rates.Seasons = []Season{s}
		},
		req:  stay("2027-06-26", "2027-07-06", 2, 0),
		want: want{nights: "90.00 90.00 90.00 90.00 90.00 100.00 100.00 100.00 100.00 100.00", rent: "950.00"}},
	{name: "2d monthly price for 30 nights",
		set:  func(p *Property) { p.Rates.Base.Weekly = dp("630"); p.Rates.Base.Monthly = dp("2240") },
		req:  stay("2027-03-01", "2027-03-31", 2, 0),
		want: want{rent: "2400.00", basis: strings.TrimSpace(strings.Repeat("monthly ", 30))}},
	{name: "2e apply_6_nights_weekly_rate: 6 nights cost a week",
		set: func(p *Property) {
			p.Rates.Base.Daily = d("120")
			p.Rates.Base.Weekly = dp("630")
			p.Rates.Setting.Apply6NightsWeeklyRate = true
		},
		req:  stay("2027-03-01", "2027-03-07", 2, 0),
		want: want{nights: "105.00 105.00 105.00 105.00 105.00 105.00", basis: "weekly weekly weekly weekly weekly weekly", rent: "630.00"}},
	{name: "2f without apply_6_nights_weekly_rate 6 nights are daily",
		set: func(p *Property) {
			p.Rates.Base.Daily = d("120")
			p.Rates.Base.Weekly = dp("630")
		},
		req:  stay("2027-03-01", "2027-03-07", 2, 0),
		want: want{rent: "720.00"}},
	{name: "2g per-date prices in a weekly stay",
		set: func(p *Property) {
			p.Rates.Base.Weekly = dp("630")
			p.DatePrices = map[Date]DatePrice{MustDate("2027-03-03"): {Price: dp("150")},
				MustDate("2027-03-04"): {Price: dp("150"), Weekly: dp("700")}}
		},
		req: stay("2027-03-01", "2027-03-08", 2, 0),
		want: want{nights: "90.00 90.00 150.00 100.00 90.00 90.00 90.00", basis: "weekly weekly date date-weekly weekly weekly weekly",
			rent: "700.00"}},

	// 3. Extra occupants.
	{name: "3a two guests above the standard occupancy, weekend extra price",
		set: func(p *Property) {
			withWeekend(p, "120")
			p.Rates.Base.ExtraDaily, p.Rates.Base.ExtraWeekend = dp("20"), dp("25")
		},
		req:  stay("2027-03-04", "2027-03-07", 3, 1),
		want: want{nights: "140.00 170.00 170.00", rent: "480.00"}},
	{name: "3b extra weekly price in a weekly stay",
		set: func(p *Property) {
			p.Rates.Base.Weekly = dp("630")
			p.Rates.Base.ExtraDaily, p.Rates.Base.ExtraWeekly = dp("20"), dp("105")
		},
		req:  stay("2027-03-01", "2027-03-08", 3, 0),
		want: want{nights: "105.00 105.00 105.00 105.00 105.00 105.00 105.00", rent: "735.00"}},
	{name: "3c apply_extra_fee_per_season on",
		set: func(p *Property) {
			p.Rates.Base.ExtraDaily = dp("20")
			s := summer("150")
			s.ExtraDaily = dp("30")
			p.Rates.Seasons = []Season{s}
			p.Rates.Setting.ApplyExtraFeePerSeason = true
		},
		req:  stay("2027-06-30", "2027-07-02", 3, 0),
		want: want{nights: "120.00 180.00", rent: "300.00"}},
	{name: "3d apply_extra_fee_per_season off",
		set: func(p *Property) {
			p.Rates.Base.ExtraDaily = dp("20")
			s := summer("150")
			s.ExtraDaily = dp("30")
			p.Rates.Seasons = []Season{s}
		},
		req:  stay("2027-06-30", "2027-07-02", 3, 0),
		want: want{nights: "120.00 170.00", rent: "290.00"}},

	// 4. Length-of-stay discounts.
	{name: "4a the best tier the stay reaches",
		set: func(p *Property) {
			p.Rates.LOS = []LOS{{Days: 3, Percent: d("5")}, {Days: 7, Percent: d("10")}, {Days: 14, Percent: d("8")}}
		},
		req:  stay("2027-03-01", "2027-03-15", 2, 0),
		want: want{rent: "1400.00", discounts: []string{"length of stay discount (7+ nights) 140.00"}, discount: "140.00", grand: "1260.00"}},
	{name: "4b too short for any tier",
		set:  func(p *Property) { p.Rates.LOS = []LOS{{Days: 3, Percent: d("5")}} },
		req:  stay("2027-03-01", "2027-03-03", 2, 0),
		want: want{rent: "200.00", discount: "0.00", grand: "200.00"}},

	// 5. First-day surcharge.
	{name: "5a surcharge on a two-night stay",
		set:  func(p *Property) { p.Rates.Setting.FirstDaySurcharge = d("25") },
		req:  stay("2027-03-01", "2027-03-03", 2, 0),
		want: want{nights: "100.00 100.00", surcharge: "25.00", rent: "225.00"}},
	{name: "5b no surcharge on a one-night stay by default",
		set:  func(p *Property) { p.Rates.Setting.FirstDaySurcharge = d("25") },
		req:  stay("2027-03-01", "2027-03-02", 2, 0),
		want: want{nights: "100.00", surcharge: "0.00", rent: "100.00"}},
	{name: "5c first_day_surcharge_apply_one_night: one-night stays pay it too",
		set: func(p *Property) {
			p.Rates.Setting.FirstDaySurcharge = d("25")
			p.Rates.Setting.FirstDaySurchargeOneNight = true
		},
		req:  stay("2027-03-01", "2027-03-02", 2, 0),
		want: want{nights: "100.00", surcharge: "25.00", rent: "125.00"}},

	// 6. Rent taxes.
	{name: "6 percent and fixed taxes, on the rent before the discount",
		set: func(p *Property) {
			p.Rates.LOS = []LOS{{Days: 3, Percent: d("10")}}
			p.Taxes = []Tax{
				{Name: "VAT", Type: TaxPercent, Amount: d("10"), Default: true},
				{Name: "Cleaning levy", Type: TaxFixed, Amount: d("15"), Calculation: PerStay, Default: true},
				{Name: "Tourist tax", Type: TaxFixed, Amount: d("2.50"), Calculation: PerNight, Default: true},
				{Name: "City tax", Type: TaxFixed, Amount: d("1.50"), Calculation: PerGuestNight, Default: true},
				{Name: "Optional tax", Type: TaxPercent, Amount: d("5")},
			}
		},
		req: stay("2027-03-01", "2027-03-04", 2, 1),
		want: want{rent: "300.00", taxes: []string{"VAT 30.00", "Cleaning levy 15.00", "Tourist tax 7.50", "City tax 13.50"},
			tax: "66.00", discount: "30.00", grand: "336.00"}},

	// 7. Services.
	{name: "7a every kind of service line",
		req: func() Request {
			r := stay("2027-03-01", "2027-03-05", 2, 1)
			r.Services = &[]ServiceLine{
				{Name: "Cleaning", Type: ServiceFixed, Applicable: ApplyPerStay, Amount: d("50"), Unit: 1, Taxes: []ServiceTax{{Name: "VAT", Perc: d("22")}}},
				{Name: "Breakfast", Type: ServiceFixed, Applicable: ApplyPerGuestNight, Amount: d("12.50"), Unit: 1, Taxes: []ServiceTax{{Name: "VAT", Perc: d("10")}}},
				{Name: "Towels", Type: ServiceFixed, Applicable: ApplyPerGuest, Amount: d("5"), Unit: 2},
				{Name: "Linen", Type: ServiceFixed, Applicable: ApplyPerNight, Amount: d("8")},
				{Name: "Booking fee", Type: ServicePercent, Amount: d("3.5"), Unit: 2, Taxes: []ServiceTax{{Name: "VAT", Perc: d("20")}}},
			}
			return r
		}(),
		want: want{rent: "400.00", services: []string{"Cleaning 50.00+11.00", "Breakfast 150.00+15.00", "Towels 30.00+0.00",
			"Linen 32.00+0.00", "Booking fee 14.00+2.80"}, service: "304.80", grand: "704.80"}},
	{name: "7b no service field: the property's default services",
		set:  setServices,
		req:  stay("2027-03-01", "2027-03-03", 2, 0),
		want: want{services: []string{"Cleaning 50.00+0.00"}, service: "50.00", grand: "250.00"}},
	{name: "7c an empty service field: no services",
		set:  setServices,
		req:  func() Request { r := stay("2027-03-01", "2027-03-03", 2, 0); r.Services = &[]ServiceLine{}; return r }(),
		want: want{service: "0.00", grand: "200.00"}},
	{name: "7d a service line of an unknown type",
		req: func() Request {
			r := stay("2027-03-01", "2027-03-03", 2, 0)
			r.Services = &[]ServiceLine{{Name: "Cleaning", Type: 3, Amount: d("50")}}
			return r
		}(),
		want: want{err: BadService, msg: "type must be 1 (fixed price) or 2 (percent)"}},

	// 8. Rounding.
	{name: "8 JPY has no minor unit",
		set: func(p *Property) {
			p.Currency = "JPY"
			p.Rates.Base.Daily = d("9999")
			p.Taxes = []Tax{{Name: "Consumption tax", Type: TaxPercent, Amount: d("8"), Default: true}}
			p.Services = []Service{{ServiceLine: ServiceLine{Name: "Service charge", Type: ServicePercent, Amount: d("2.5")}, Default: true}}
		},
		req:  stay("2027-03-01", "2027-03-04", 2, 0),
		want: want{rent: "29997", tax: "2400", service: "750", grand: "33147"}},

	// 9. Damage deposit.
	{name: "9a flat deposit due at arrival",
		set:  func(p *Property) { deposit(p, Flat, "200", DueArrival, 0) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{grand: "550.00", deposit: "200.00", schedule: []string{"deposit 2027-03-01 200.00"}}},
	{name: "9b deposit percent of rent, 7 days before arrival",
		set:  func(p *Property) { deposit(p, PercentOfRent, "20", DueXDayPriorArrival, 7) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{deposit: "100.00", schedule: []string{"deposit 2027-02-22 100.00"}}},
	{name: "9c deposit percent of grand total, 90 days before arrival but not before booking",
		set:  func(p *Property) { deposit(p, PercentOfGrandTotal, "20", DueXDayPriorArrival, 90) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{deposit: "110.00", schedule: []string{"deposit 2027-01-10 110.00"}}},

	// 10. Payment schedule.
	{name: "10a full at booking",
		set:  func(p *Property) { pay(p, PayFull, &Charge{Due: DueBooking}, nil, nil) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"full 2027-01-10 550.00"}}},
	{name: "10b full 14 days before arrival",
		set:  func(p *Property) { pay(p, PayFull, &Charge{Due: DueXDayPriorArrival, XDay: 14}, nil, nil) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"full 2027-02-15 550.00"}}},
	{name: "10c full 90 days after booking but not after arrival",
		set:  func(p *Property) { pay(p, PayFull, &Charge{Due: DueXDayAfterBooking, XDay: 90}, nil, nil) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"full 2027-03-01 550.00"}}},
	{name: "10d full at check-out",
		set:  func(p *Property) { pay(p, PayFull, &Charge{Due: DueCheckout}, nil, nil) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"full 2027-03-06 550.00"}}},
	{name: "10e partial: 30 % of the grand total at booking, the rest 30 days before arrival",
		set: func(p *Property) {
			pay(p, PayPartial, nil, &Charge{Due: DueBooking, AmountType: PercentOfGrandTotal, Amount: d("30")},
				&Charge{Due: DueXDayPriorArrival, XDay: 30})
		},
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"first 2027-01-10 165.00", "remaining 2027-01-30 385.00"}}},
	{name: "10f partial: 25 % of the rent 7 days after booking, the rest at arrival",
		set: func(p *Property) {
			pay(p, PayPartial, nil, &Charge{Due: DueXDayAfterBooking, XDay: 7, AmountType: PercentOfRent, Amount: d("25")},
				&Charge{Due: DueArrival})
		},
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"first 2027-01-17 125.00", "remaining 2027-03-01 425.00"}}},
	{name: "10g partial: a flat first payment above the grand total",
		set: func(p *Property) {
			pay(p, PayPartial, nil, &Charge{Due: DueBooking, AmountType: Flat, Amount: d("600")}, &Charge{Due: DueArrival})
		},
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"first 2027-01-10 550.00"}}},
	{name: "10h partial: the rest never falls due before the first payment",
		set: func(p *Property) {
			pay(p, PayPartial, nil, &Charge{Due: DueXDayAfterBooking, XDay: 30, AmountType: Flat, Amount: d("100")},
				&Charge{Due: DueXDayPriorArrival, XDay: 60})
		},
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{schedule: []string{"first 2027-02-09 100.00", "remaining 2027-02-09 450.00"}}},
	{name: "10i payment type None",
		set:  func(p *Property) { pay(p, PayNone, nil, nil, nil) },
		req:  stay("2027-03-01", "2027-03-06", 2, 0),
		want: want{grand: "550.00", schedule: []string{}}},

	// 11. Stay rules.
	{name: "11a base minimum stay",
		set:  stayRules,
		req:  stay("2027-03-01", "2027-03-02", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 2 nights"}},
	{name: "11b season minimum stay",
		set:  stayRules,
		req:  stay("2027-07-03", "2027-07-04", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 5 nights"}},
	{name: "11c per-date minimum nights",
		set:  stayRules,
		req:  stay("2027-07-10", "2027-07-11", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 7 nights"}},
	{name: "11d the check-in date's minimum stay decides",
		set:  stayRules,
		req:  stay("2027-06-28", "2027-07-03", 2, 0),
		want: want{rent: "550.00", minStay: 2}},
	{name: "11e check-in day of the season",
		set:  stayRules,
		req:  stay("2027-07-05", "2027-07-11", 2, 0),
		want: want{err: CheckinDay, msg: "check-in must be on Saturday (2027-07-05 is a Monday)"}},
	{name: "11f check-out day of the season holding the check-out date",
		set:  stayRules,
		req:  stay("2027-06-26", "2027-07-02", 2, 0),
		want: want{err: CheckoutDay, msg: "check-out must be on Saturday or Sunday (2027-07-02 is a Friday)"}},
	{name: "11g default check-in days",
		set: func(p *Property) {
			stayRules(p)
			p.Rates.Setting.DefaultCheckin = DaysOf(time.Friday, time.Saturday, time.Sunday)
		},
		req:  stay("2027-03-01", "2027-03-05", 2, 0),
		want: want{err: CheckinDay, msg: "check-in must be on Friday, Saturday or Sunday (2027-03-01 is a Monday)"}},
	{name: "11h accept_booking_upto 6 months: the last day",
		set:  func(p *Property) { p.Rates.Setting.AcceptBookingUpto = 6 },
		req:  stay("2027-07-09", "2027-07-10", 2, 0),
		want: want{rent: "100.00"}},
	{name: "11i accept_booking_upto 6 months: one day too far",
		set:  func(p *Property) { p.Rates.Setting.AcceptBookingUpto = 6 },
		req:  stay("2027-07-10", "2027-07-11", 2, 0),
		want: want{err: TooFarAhead, msg: "bookings are taken up to 6 months ahead: check-in must be before 2027-07-10"}},
	{name: "11j advance notice 3 days: too soon",
		set:  func(p *Property) { p.Rates.Setting.AdvanceNoticeDays = 3 },
		req:  stay("2027-01-12", "2027-01-14", 2, 0),
		want: want{err: TooSoon, msg: "bookings need 3 days' advance notice: the earliest check-in is 2027-01-13"}},
	{name: "11k advance notice 3 days: the earliest check-in",
		set:  func(p *Property) { p.Rates.Setting.AdvanceNoticeDays = 3 },
		req:  stay("2027-01-13", "2027-01-15", 2, 0),
		want: want{rent: "200.00"}},
	{name: "11l same-day booking before the cut-off",
		set:  func(p *Property) { p.Rates.Setting.SameDayUntil = clock("14:00") },
		req:  at(stay("2027-01-10", "2027-01-11", 2, 0), time.Date(2027, 1, 10, 13, 59, 0, 0, rome)),
		want: want{rent: "100.00"}},
	{name: "11m same-day booking at the cut-off, property time",
		set:  func(p *Property) { p.Rates.Setting.SameDayUntil = clock("14:00") },
		req:  at(stay("2027-01-10", "2027-01-11", 2, 0), time.Date(2027, 1, 10, 13, 0, 0, 0, time.UTC)),
		want: want{err: TooSoon, msg: "same-day bookings close at 14:00 property time: the earliest check-in is 2027-01-11"}},
	{name: "11n past check-in",
		req:  stay("2027-01-09", "2027-01-11", 2, 0),
		want: want{err: PastDate, msg: "check-in 2027-01-09 is in the past"}},
	{name: "11o too many guests",
		req:  stay("2027-03-01", "2027-03-03", 5, 2),
		want: want{err: TooManyGuests, msg: "the property accepts at most 6 guests (adults and children)"}},
	{name: "11p no adult",
		req:  stay("2027-03-01", "2027-03-03", 0, 2),
		want: want{err: BadGuests, msg: "at least one adult is required"}},
	{name: "11q check-out not after check-in",
		req:  stay("2027-03-01", "2027-03-01", 2, 0),
		want: want{err: BadRange, msg: "checkout must be after checkin"}},
	{name: "11r more than 365 nights",
		req:  stay("2027-03-01", "2028-03-01", 2, 0),
		want: want{err: BadRange, msg: "a stay may last at most 365 nights"}},
	{name: "11s no rates",
		set:  func(p *Property) { p.Rates = nil },
		req:  stay("2027-03-01", "2027-03-03", 2, 0),
		want: want{err: NotBookable, msg: "the property cannot be booked: it has no rates"}},
	{name: "11t owner booking: stay rules skipped",
		set:  stayRules,
		req:  ignore(stay("2027-01-09", "2027-01-10", 2, 0)),
		want: want{rent: "100.00", minStay: 2}},
	{name: "11u owner booking: maxguest still applies",
		req:  ignore(stay("2027-03-01", "2027-03-03", 7, 0)),
		want: want{err: TooManyGuests, msg: "at most 6 guests"}},
	{name: "11v children not allowed",
		set:  func(p *Property) { p.NoChildren = true },
		req:  stay("2027-03-01", "2027-03-03", 2, 1),
		want: want{err: ChildrenNotAllowed, msg: "the property does not accept children"}},

	// Rate plans and restrictions (docs/pricing.md "Rate plans and restrictions"). The
	// restrictions are the property's unless a row says "plan".
	{name: "r1a min stay on arrival binds a stay arriving on the date",
		set:  restrict(run("2027-03-05", "2027-03-07", Restriction{MinStayArrival: new(3)})),
		req:  stay("2027-03-05", "2027-03-07", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 3 nights"}},
	{name: "r1b min stay on arrival does not bind a stay arriving the day before",
		set:  restrict(run("2027-03-05", "2027-03-07", Restriction{MinStayArrival: new(3)})),
		req:  stay("2027-03-04", "2027-03-06", 2, 0),
		want: want{rent: "200.00", minStay: 1}},
	{name: "r1c min stay on arrival met",
		set:  restrict(run("2027-03-05", "2027-03-07", Restriction{MinStayArrival: new(3)})),
		req:  stay("2027-03-07", "2027-03-10", 2, 0),
		want: want{rent: "300.00", minStay: 3}},
	{name: "r2a min stay through binds a stay arriving before the date",
		set:  restrict(run("2027-03-10", "2027-03-12", Restriction{MinStayThrough: new(4)})),
		req:  stay("2027-03-08", "2027-03-11", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 4 nights"}},
	{name: "r2b min stay through: a stay ending the day the rule begins is not affected",
		set:  restrict(run("2027-03-10", "2027-03-12", Restriction{MinStayThrough: new(4)})),
		req:  stay("2027-03-07", "2027-03-10", 2, 0),
		want: want{rent: "300.00", minStay: 1}},
	{name: "r2c min stay through met",
		set:  restrict(run("2027-03-10", "2027-03-12", Restriction{MinStayThrough: new(4)})),
		req:  stay("2027-03-08", "2027-03-12", 2, 0),
		want: want{rent: "400.00", minStay: 4}},
	{name: "r2d min stay through binds a stay arriving on its last date",
		set:  restrict(run("2027-03-10", "2027-03-12", Restriction{MinStayThrough: new(4)})),
		req:  stay("2027-03-12", "2027-03-14", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 4 nights"}},
	{name: "r3a min stay through across a season boundary: met",
		set:  both(stayRules, restrict(run("2027-07-01", "2027-08-31", Restriction{MinStayThrough: new(5)}))),
		req:  stay("2027-06-28", "2027-07-03", 2, 0),
		want: want{rent: "550.00", minStay: 5}},
	{name: "r3b min stay through across a season boundary: one night short",
		set:  both(stayRules, restrict(run("2027-07-01", "2027-08-31", Restriction{MinStayThrough: new(5)}))),
		req:  stay("2027-06-29", "2027-07-03", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 5 nights"}},
	{name: "r4a closed to arrival on the arrival date",
		set:  restrict(run("2027-03-05", "2027-03-05", Restriction{ClosedToArrival: new(true)})),
		req:  stay("2027-03-05", "2027-03-08", 2, 0),
		want: want{err: ClosedToArrival, msg: "check-in is closed on 2027-03-05"}},
	{name: "r4b closed to arrival on a middle night does not matter",
		set:  restrict(run("2027-03-05", "2027-03-05", Restriction{ClosedToArrival: new(true)})),
		req:  stay("2027-03-04", "2027-03-08", 2, 0),
		want: want{rent: "400.00"}},
	{name: "r4c closed to arrival on the departure date does not matter",
		set:  restrict(run("2027-03-05", "2027-03-05", Restriction{ClosedToArrival: new(true)})),
		req:  stay("2027-03-01", "2027-03-05", 2, 0),
		want: want{rent: "400.00"}},
	{name: "r5a closed to departure on the departure date",
		set:  restrict(run("2027-03-08", "2027-03-08", Restriction{ClosedToDeparture: new(true)})),
		req:  stay("2027-03-05", "2027-03-08", 2, 0),
		want: want{err: ClosedToDeparture, msg: "check-out is closed on 2027-03-08"}},
	{name: "r5b closed to departure on the arrival date does not matter",
		set:  restrict(run("2027-03-08", "2027-03-08", Restriction{ClosedToDeparture: new(true)})),
		req:  stay("2027-03-08", "2027-03-10", 2, 0),
		want: want{rent: "200.00"}},
	{name: "r5c closed to departure on a middle night does not matter",
		set:  restrict(run("2027-03-08", "2027-03-08", Restriction{ClosedToDeparture: new(true)})),
		req:  stay("2027-03-07", "2027-03-09", 2, 0),
		want: want{rent: "200.00"}},
	{name: "r6a stop-sell on a middle night",
		set:  restrict(run("2027-03-03", "2027-03-03", Restriction{StopSell: new(true)})),
		req:  stay("2027-03-01", "2027-03-05", 2, 0),
		want: want{err: StopSell, msg: "the property is not sold for the night of 2027-03-03"}},
	{name: "r6b stop-sell on the departure day does not matter",
		set:  restrict(run("2027-03-03", "2027-03-03", Restriction{StopSell: new(true)})),
		req:  stay("2027-03-01", "2027-03-03", 2, 0),
		want: want{rent: "200.00"}},
	{name: "r6c stop-sell on the arrival night",
		set:  restrict(run("2027-03-03", "2027-03-03", Restriction{StopSell: new(true)})),
		req:  stay("2027-03-03", "2027-03-04", 2, 0),
		want: want{err: StopSell, msg: "the property is not sold for the night of 2027-03-03"}},
	{name: "r6d stop-sell is checked before the arrival rules",
		set:  restrict(run("2027-03-03", "2027-03-03", Restriction{StopSell: new(true), ClosedToArrival: new(true)})),
		req:  stay("2027-03-03", "2027-03-04", 2, 0),
		want: want{err: StopSell, msg: "the night of 2027-03-03"}},
	{name: "r7a max stay on the arrival date",
		set:  restrict(run("2027-03-01", "2027-03-01", Restriction{MaxStay: new(14)})),
		req:  stay("2027-03-01", "2027-03-16", 2, 0),
		want: want{err: MaximumStay, msg: "the maximum stay for these dates is 14 nights"}},
	{name: "r7b max stay met",
		set:  restrict(run("2027-03-01", "2027-03-01", Restriction{MaxStay: new(14)})),
		req:  stay("2027-03-01", "2027-03-15", 2, 0),
		want: want{rent: "1400.00"}},
	{name: "r7c max stay binds arrivals on its date only",
		set:  restrict(run("2027-03-01", "2027-03-01", Restriction{MaxStay: new(14)})),
		req:  stay("2027-02-28", "2027-03-16", 2, 0),
		want: want{rent: "1600.00"}},
	{name: "r8a plan over property: the standard plan keeps the property's minimum",
		set:  planOverProperty,
		req:  stay("2027-03-02", "2027-03-04", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 3 nights"}},
	{name: "r8b plan over property: the plan's own minimum",
		set:  planOverProperty,
		req:  onPlan(stay("2027-03-02", "2027-03-04", 2, 0), 1),
		want: want{rent: "200.00", minStay: 2, plan: "Member rate"}},
	{name: "r8c plan over property: closed_to_arrival false on the plan opens the date",
		set:  planOverProperty,
		req:  onPlan(stay("2027-03-05", "2027-03-08", 2, 0), 1),
		want: want{rent: "300.00"}},
	{name: "r8d plan over property: the standard plan stays closed",
		set:  planOverProperty,
		req:  stay("2027-03-05", "2027-03-08", 2, 0),
		want: want{err: ClosedToArrival, msg: "check-in is closed on 2027-03-05"}},
	{name: "r8e plan over property: a property stop-sell stops every plan",
		set:  planOverProperty,
		req:  onPlan(stay("2027-03-19", "2027-03-22", 2, 0), 1),
		want: want{err: StopSell, msg: "the property is not sold for the night of 2027-03-20"}},
	{name: "r8f plan over property: a plan's stop-sell stops the plan only",
		set:  planOverProperty,
		req:  onPlan(stay("2027-03-24", "2027-03-27", 2, 0), 1),
		want: want{err: StopSell, msg: "the property is not sold for the night of 2027-03-25"}},
	{name: "r8g plan over property: the standard plan sells the plan's stopped night",
		set:  planOverProperty,
		req:  stay("2027-03-24", "2027-03-27", 2, 0),
		want: want{rent: "300.00", plan: "Standard"}},
	{name: "r9a a plan's minimum stay is a floor on every stay",
		set:  withPlan(Plan{ID: 1, PlanTerms: PlanTerms{Name: "Long stay"}, MinimumStay: 4, SoldOn: SoldOn{Direct: true}}),
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 4 nights"}},
	{name: "r9b the standard plan has no such floor",
		set:  withPlan(Plan{ID: 1, PlanTerms: PlanTerms{Name: "Long stay"}, MinimumStay: 4, SoldOn: SoldOn{Direct: true}}),
		req:  stay("2027-03-01", "2027-03-04", 2, 0),
		want: want{rent: "300.00", minStay: 1}},
	{name: "r10a a restriction on the date overrides the season",
		set:  both(stayRules, restrict(run("2027-07-03", "2027-07-03", Restriction{MinStayArrival: new(1)}))),
		req:  stay("2027-07-03", "2027-07-04", 2, 0),
		want: want{rent: "125.00", minStay: 1}},
	{name: "r10b a cleared restriction reverts to the season",
		set:  both(stayRules, restrict(run("2027-07-03", "2027-07-03", Restriction{}))),
		req:  stay("2027-07-03", "2027-07-04", 2, 0),
		want: want{err: MinimumStay, msg: "the minimum stay for these dates is 5 nights"}},
	{name: "r11a closed_to_arrival false opens a weekday the season closes",
		set:  both(stayRules, restrict(run("2027-07-05", "2027-07-05", Restriction{ClosedToArrival: new(false)}))),
		req:  stay("2027-07-05", "2027-07-11", 2, 0),
		want: want{rent: "750.00", minStay: 5}},
	{name: "r11b closed_to_departure false opens a weekday the season closes",
		set:  both(stayRules, restrict(run("2027-07-02", "2027-07-02", Restriction{ClosedToDeparture: new(false)}))),
		req:  stay("2027-06-26", "2027-07-02", 2, 0),
		want: want{rent: "625.00"}},
	{name: "r12 a restriction's min stay on arrival overrides setprices' minNights",
		set:  both(stayRules, restrict(run("2027-07-10", "2027-07-10", Restriction{MinStayArrival: new(1)}))),
		req:  stay("2027-07-10", "2027-07-11", 2, 0),
		want: want{rent: "125.00", minStay: 1}},
	{name: "r13 owner booking: restrictions skipped, the minimum still reported",
		set: restrict(run("2027-03-03", "2027-03-03", Restriction{StopSell: new(true)}),
			run("2027-03-01", "2027-03-01", Restriction{MinStayArrival: new(6), ClosedToArrival: new(true)})),
		req:  ignore(stay("2027-03-01", "2027-03-05", 2, 0)),
		want: want{rent: "400.00", minStay: 6}},

	// Plan prices and channel markups.
	{name: "p1a percent off",
		set:  withPlan(offPlan(AdjustPercent, "-10")),
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1),
		want: want{nights: "90.00 90.00 90.00", rent: "270.00", plan: "Non-refundable"}},
	{name: "p1b amount off",
		set:  withPlan(offPlan(AdjustAmount, "-15.50")),
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1),
		want: want{nights: "84.50 84.50 84.50", rent: "253.50"}},
	{name: "p1c a range replaces the plan's adjustment for its nights",
		set: withPlan(func() Plan {
			x := offPlan(AdjustPercent, "-10")
			x.Ranges = []RangeAdjustment{{Start: MustDate("2027-03-02"), End: MustDate("2027-03-02"),
				Adjustment: Adjustment{Type: AdjustAmount, Value: d("20")}}}
			return x
		}()),
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1),
		want: want{nights: "90.00 120.00 90.00", rent: "300.00"}},
	{name: "p1d a channel markup on the standard plan",
		set:  markups,
		req:  onChannel(stay("2027-03-01", "2027-03-04", 2, 0), "airbnb"),
		want: want{nights: "110.00 110.00 110.00", rent: "330.00"}},
	{name: "p1e the plan's adjustment, then the channel's markup",
		set:  both(markups, withPlan(offPlan(AdjustPercent, "-10"))),
		req:  onChannel(onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1), "airbnb"),
		want: want{nights: "99.00 99.00 99.00", rent: "297.00"}},
	{name: "p1f the account's markup where the property has none for the channel",
		set:  markups,
		req:  onChannel(stay("2027-03-01", "2027-03-04", 2, 0), "vrbo"),
		want: want{nights: "105.00 105.00 105.00", rent: "315.00"}},
	{name: "p1g no markup for another channel",
		set:  markups,
		req:  onChannel(stay("2027-03-01", "2027-03-04", 2, 0), "expedia"),
		want: want{nights: "100.00 100.00 100.00", rent: "300.00"}},
	{name: "p1h a price never goes below 0, then the markup applies",
		set:  both(markups, withPlan(offPlan(AdjustAmount, "-150"))),
		req:  onChannel(onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1), "vrbo"),
		want: want{nights: "5.00 5.00 5.00", rent: "15.00"}},
	{name: "p1i exact to the cent: a weekly price 10 % off",
		set:  both(func(p *Property) { p.Rates.Base.Weekly = dp("1000") }, withPlan(offPlan(AdjustPercent, "-10"))),
		req:  onPlan(stay("2027-03-01", "2027-03-08", 2, 0), 1),
		want: want{nights: "128.57 128.57 128.57 128.58 128.57 128.57 128.57", rent: "900.00"}},
	{name: "p1j taxes, discounts and the surcharge on the adjusted rent",
		set: both(withPlan(offPlan(AdjustPercent, "-10")), func(p *Property) {
			p.Rates.Setting.FirstDaySurcharge = d("25")
			p.Rates.LOS = []LOS{{Days: 3, Percent: d("5")}}
			p.Taxes = []Tax{{Name: "VAT", Type: TaxPercent, Amount: d("10"), Default: true}}
		}),
		req: onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1),
		want: want{nights: "90.00 90.00 90.00", surcharge: "25.00", rent: "295.00", tax: "29.50",
			discounts: []string{"length of stay discount (3+ nights) 14.75"}, grand: "309.75"}},
	{name: "p1k JPY: 3.33 % off 9999",
		set: both(func(p *Property) { p.Currency = "JPY"; p.Rates.Base.Daily = d("9999") },
			withPlan(offPlan(AdjustPercent, "-3.33"))),
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 1),
		want: want{nights: "9666 9666 9666", rent: "28998"}},
	{name: "p2a an unknown plan",
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 7),
		want: want{err: UnknownPlan, msg: "rate plan 7 does not exist"}},
	{name: "p2b an unknown plan, owner booking",
		req:  ignore(onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 7)),
		want: want{err: UnknownPlan, msg: "rate plan 7 does not exist"}},
	{name: "p2c a plan sold direct, asked for a channel",
		set:  withPlan(Plan{ID: 2, PlanTerms: PlanTerms{Name: "Direct"}, SoldOn: SoldOn{Direct: true}}),
		req:  onChannel(onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 2), "airbnb"),
		want: want{err: NotSold, msg: "rate plan 2 is not sold on airbnb"}},
	{name: "p2d a plan sold on a channel only, asked direct",
		set:  withPlan(Plan{ID: 2, PlanTerms: PlanTerms{Name: "OTA"}, SoldOn: SoldOn{Channels: []string{"airbnb"}}}),
		req:  onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 2),
		want: want{err: NotSold, msg: "rate plan 2 is not sold direct"}},
	{name: "p2e a plan sold on other brands",
		set:  withPlan(Plan{ID: 2, PlanTerms: PlanTerms{Name: "Brand 3"}, SoldOn: SoldOn{Brands: []int64{3}}}),
		req:  func() Request { r := onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 2); r.Brand = 4; return r }(),
		want: want{err: NotSold, msg: "rate plan 2 is not sold on brand 4"}},
	{name: "p2f a back-office booking of a plan not sold direct",
		set:  withPlan(Plan{ID: 2, PlanTerms: PlanTerms{Name: "OTA"}, SoldOn: SoldOn{Channels: []string{"airbnb"}}}),
		req:  func() Request { r := onPlan(stay("2027-03-01", "2027-03-04", 2, 0), 2); r.SkipSoldOn = true; return r }(),
		want: want{rent: "300.00", plan: "OTA"}},
}

func setServices(p *Property) {
	p.Services = []Service{
		{ServiceLine: ServiceLine{Name: "Cleaning", Type: ServiceFixed, Amount: d("50")}, Default: true},
		{ServiceLine: ServiceLine{Name: "Late check-out", Type: ServiceFixed, Amount: d("30")}},
	}
}

// deposit and pay set the policy of the examples of rules 9 and 10, whose stay costs
// 550.00: five nights at 100 and a 10 % tax.
func deposit(p *Property, typ, amount, due string, xday int) {
	p.Taxes = []Tax{{Name: "VAT", Type: TaxPercent, Amount: d("10"), Default: true}}
	p.Policy = &Policy{PaymentType: PayNone, DamageDeposit: &Charge{Due: due, XDay: xday, AmountType: typ, Amount: d(amount)}}
}

func pay(p *Property, typ string, full, first, rest *Charge) {
	p.Taxes = []Tax{{Name: "VAT", Type: TaxPercent, Amount: d("10"), Default: true}}
	p.Policy = &Policy{PaymentType: typ, Full: full, First: first, Remaining: rest}
}

// stayRules: base minimum stay 2; Summer (2027-07-01 to 08-31, daily 125) has minimum
// stay 5, check-in on Saturday, check-out on Saturday or Sunday; 2027-07-10 has a
// per-date minimum of 7 nights.
func stayRules(p *Property) {
	p.Rates.MinimumStay = 2
	s := summer("125")
	s.MinimumStay = 5
	s.AllowCheckin = DaysOf(time.Saturday)
	s.AllowCheckout = DaysOf(time.Saturday, time.Sunday)
	p.Rates.Seasons = []Season{s}
	p.DatePrices = map[Date]DatePrice{MustDate("2027-07-10"): {MinNights: 7}}
}

// restrict adds property restrictions; run is a restriction of the dates from … to.
func restrict(rs ...Restriction) func(p *Property) {
	return func(p *Property) { p.Restrictions = append(p.Restrictions, rs...) }
}

func run(from, to string, r Restriction) Restriction {
	r.Start, r.End = MustDate(from), MustDate(to)
	return r
}

func both(fs ...func(p *Property)) func(p *Property) {
	return func(p *Property) {
		for _, f := range fs {
			f(p)
		}
	}
}

func withPlan(x Plan) func(p *Property) { return func(p *Property) { p.Plans = append(p.Plans, x) } }

// offPlan is plan 1, "Non-refundable", sold direct, on airbnb and on vrbo, with an
// adjustment.
func offPlan(typ, value string) Plan {
	return Plan{ID: 1, PlanTerms: PlanTerms{Name: "Non-refundable", Cancellation: Cancellation{Policy: CancelNonRefundable}},
		Adjustment: Adjustment{Type: typ, Value: d(value)}, SoldOn: SoldOn{Direct: true, Channels: []string{"airbnb", "vrbo"}}}
}

// markups: the account marks airbnb up 20 % and vrbo 5.00 a night; the property's own
// airbnb markup, 10 %, replaces the account's.
func markups(p *Property) {
	p.AccountMarkups = []Markup{{Channel: "airbnb", Adjustment: Adjustment{Type: AdjustPercent, Value: d("20")}},
		{Channel: "vrbo", Adjustment: Adjustment{Type: AdjustAmount, Value: d("5")}}}
	p.Markups = []Markup{{Channel: "airbnb", Adjustment: Adjustment{Type: AdjustPercent, Value: d("10")}}}
}

// planOverProperty: the property's restrictions are a minimum stay on arrival of 3 in March,
// closed to arrival on 03-05 and stop-sell on 03-20; plan 1 "Member rate" (sold direct, no
// adjustment) sets its own minimum of 2 from 03-01 to 03-10, opens 03-05 to arrivals,
// tries to sell 03-20 and stops 03-25.
func planOverProperty(p *Property) {
	p.Restrictions = []Restriction{
		run("2027-03-01", "2027-03-04", Restriction{MinStayArrival: new(3)}),
		run("2027-03-05", "2027-03-05", Restriction{MinStayArrival: new(3), ClosedToArrival: new(true)}),
		run("2027-03-06", "2027-03-19", Restriction{MinStayArrival: new(3)}),
		run("2027-03-20", "2027-03-20", Restriction{MinStayArrival: new(3), StopSell: new(true)}),
		run("2027-03-21", "2027-03-31", Restriction{MinStayArrival: new(3)}),
	}
	p.Plans = []Plan{{ID: 1, PlanTerms: PlanTerms{Name: "Member rate"}, SoldOn: SoldOn{Direct: true}, Restrictions: []Restriction{
		run("2027-03-01", "2027-03-04", Restriction{MinStayArrival: new(2)}),
		run("2027-03-05", "2027-03-05", Restriction{MinStayArrival: new(2), ClosedToArrival: new(false)}),
		run("2027-03-06", "2027-03-10", Restriction{MinStayArrival: new(2)}),
		run("2027-03-20", "2027-03-20", Restriction{StopSell: new(false)}),
		run("2027-03-25", "2027-03-25", Restriction{StopSell: new(true)}),
	}}}
}

func onPlan(r Request, plan int64) Request { r.Plan = plan; return r }

func onChannel(r Request, channel string) Request { r.Channel = channel; return r }

func at(r Request, now time.Time) Request { r.Now = now; return r }

func ignore(r Request) Request { r.IgnoreRules = true; return r }

func TestWorkedExamples(t *testing.T) {
	t.Parallel()
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			p := villa()
			if ex.set != nil {
				ex.set(&p)
			}
			if err := p.Prepare(); err != nil {
				t.Fatal(err)
			}
			got, err := Quote(p, ex.req)
			w := ex.want
			if w.err != "" {
				var re *RuleError
				if !errors.As(err, &re) || re.Code != w.err || !strings.Contains(re.Message, w.msg) {
					t.Fatalf("error %v, want %s containing %q", err, w.err, w.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkRelations(t, got)
			m := func(v interface{ StringFixed(int32) string }) string { return v.StringFixed(got.Scale) }
			var nights, basis []string
			for _, n := range got.Nights {
				nights = append(nights, m(n.Price))
				basis = append(basis, string(n.Basis))
			}
			var taxes, services, discounts, schedule []string
			for _, x := range got.Taxes {
				taxes = append(taxes, x.Name+" "+m(x.Amount))
			}
			for _, s := range got.Services {
				services = append(services, fmt.Sprintf("%s %s+%s", s.Name, m(s.Amount), m(s.TaxAmount)))
			}
			for _, x := range got.Discounts {
				discounts = append(discounts, x.Name+" "+m(x.Amount))
			}
			for _, in := range got.Schedule {
				schedule = append(schedule, fmt.Sprintf("%s %s %s", in.Label, in.DueDate, m(in.Amount)))
			}
			for _, c := range []struct {
				what, want, got string
			}{
				{"nights", w.nights, strings.Join(nights, " ")}, {"basis", w.basis, strings.Join(basis, " ")},
				{"surcharge", w.surcharge, m(got.Surcharge)}, {"totalRent", w.rent, m(got.TotalRent)},
				{"taxTotal", w.tax, m(got.TaxTotal)}, {"serviceTotal", w.service, m(got.ServiceTotal)},
				{"discountTotal", w.discount, m(got.DiscountTotal)}, {"grandTotal", w.grand, m(got.GrandTotal)},
				{"damageDeposit", w.deposit, m(got.DamageDeposit)},
			} {
				if c.want != "" && c.want != c.got {
					t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
				}
			}
			for _, c := range []struct {
				what      string
				want, got []string
			}{{"taxes", w.taxes, taxes}, {"services", w.services, services}, {"discounts", w.discounts, discounts}, {"schedule", w.schedule, schedule}} {
				if c.want != nil && !slices.Equal(c.want, c.got) && (len(c.want) > 0 || len(c.got) > 0) {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			if w.minStay != 0 && got.MinimumStay != w.minStay {
				t.Errorf("minimumStay = %d, want %d", got.MinimumStay, w.minStay)
			}
			if w.plan != "" && got.PlanName != w.plan {
				t.Errorf("planName = %q, want %q", got.PlanName, w.plan)
			}
			if t.Failed() {
				t.Log("\n" + dump(got))
			}
		})
	}
}

// TestMustShowExample is the first worked example of docs/pricing.md, line by line.
func TestMustShowExample(t *testing.T) {
	t.Parallel()
	ex := examples[0]
	p := villa()
	ex.set(&p)
	r, err := Quote(p, ex.req)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + dump(r))
	checkRelations(t, r)
	want := map[string]string{"totalRent": "668.50", "taxTotal": "160.44", "serviceTotal": "244.55", "discountTotal": "33.43",
		"grandTotal": "1040.06"}
	got := map[string]string{"totalRent": money(r, r.TotalRent), "taxTotal": money(r, r.TaxTotal),
		"serviceTotal": money(r, r.ServiceTotal), "discountTotal": money(r, r.DiscountTotal), "grandTotal": money(r, r.GrandTotal)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	// 668.50 + 160.44 + 244.55 − 33.43 = 1040.06, exactly.
	if !r.TotalRent.Add(r.TaxTotal).Add(r.ServiceTotal).Sub(r.DiscountTotal).Equal(r.GrandTotal) {
		t.Error("grandTotal ≠ totalRent + taxTotal + serviceTotal − discountTotal")
	}
	if r.MinNightlyPrice().StringFixed(2) != "95.50" || r.MaxNightlyPrice().StringFixed(2) != "95.50" || len(r.NightlyPriceDetail()) != 7 {
		t.Errorf("nightly detail: min %s max %s", r.MinNightlyPrice(), r.MaxNightlyPrice())
	}
}
