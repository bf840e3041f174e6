package property_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/property-svc/internal/property"
)

const ratesExample = `{
	"internal_code": "VR-001",
	"rate": {
		"daily_price": 120, "weekend_price": "150.50", "weekly_price": 700, "monthly_price": 2500,
		"minimum_stay": 2,
		"extra_daily_price": 20, "extra_weekend_price": 25, "extra_weekly_price": 100, "extra_monthly_price": 300
	},
	"los": [{"days": 7, "discount": 10}, {"days": 28, "discount": "25"}],
	"setting": {
		"standard_occupants": 4,
		"accept_booking_upto": 12,
		"apply_weekend_price": true,
		"default_allow_checkin": "All",
		"default_allow_checkout": "Saturday, sunday",
		"apply_extra_fee_per_season": "1",
		"allow_same_day_booking_until": "14:30",
		"apply_6_nights_weekly_rate": false,
		"first_day_surcharge": 15,
		"first_day_surcharge_apply_one_night": 0
	},
	"season": [
		{"name": "Summer", "minimum_stay": 5, "start_date": "2025-06-01", "end_date": "2025-08-31", "daily_price": 180, "allow_checkin": "Saturday", "allow_checkout": "Saturday"},
		{"name": "Christmas", "start_date": "2025-12-20", "end_date": "2026-01-06", "daily_price": "200.00", "weekly_price": 1200}
	]
}`

const maxGuest = 6

func decodeRates(body []byte) error {
	_, err := property.DecodeRates(body, maxGuest)
	return err
}

func TestDecodeRates(t *testing.T) {
	const st = "setting."
	rows := []row{
		tc("valid example", ""),
		tc("internal_code missing", "internal_code: is required", set("internal_code", del)),

		tc("rate missing", "rate: is required", set("rate", del)),
		tc("daily_price missing", "rate.daily_price: is required", set("rate.daily_price", del)),
		tc("daily_price 0", "", set("rate.daily_price", 0)),
		tc("daily_price 2147483647", "", set("rate.daily_price", 2147483647)),
		tc("daily_price 2147483648", "rate.daily_price: must be between 0 and 2147483647", set("rate.daily_price", 2147483648)),
		tc("daily_price negative", "rate.daily_price: must be between 0 and 2147483647", set("rate.daily_price", -1)),
		tc("daily_price 3 decimals", "rate.daily_price: must have at most 2 decimal places", set("rate.daily_price", 10.555)),
		tc("daily_price as string", "", set("rate.daily_price", "99.50")),
		tc("daily_price text", "rate.daily_price: must be a number", set("rate.daily_price", "free")),
		tc("weekend_price optional", "", set("rate.weekend_price", del)),
		tc("weekly_price negative", "rate.weekly_price: must be between 0 and 2147483647", set("rate.weekly_price", -5)),
		tc("extra_monthly_price 2147483648", "rate.extra_monthly_price: must be between 0 and 2147483647", set("rate.extra_monthly_price", 2147483648)),
		tc("rate minimum_stay missing", "rate.minimum_stay: is required", set("rate.minimum_stay", del)),
		tc("rate minimum_stay 0", "rate.minimum_stay: must be between 1 and 365", set("rate.minimum_stay", 0)),
		tc("rate minimum_stay 366", "rate.minimum_stay: must be between 1 and 365", set("rate.minimum_stay", 366)),

		tc("los absent", "", set("los", del)),
		tc("los days 0", "los[0].days: must be between 1 and 40", set("los[0].days", 0)),
		tc("los days 40", "", set("los[0].days", 40)),
		tc("los days 41", "los[0].days: must be between 1 and 40", set("los[0].days", 41)),
		tc("los days missing", "los[1].days: is required", set("los[1].days", del)),
		tc("los discount 0", "los[0].discount: must be between 1 and 99", set("los[0].discount", 0)),
		tc("los discount 99", "", set("los[0].discount", 99)),
		tc("los discount 100", "los[1].discount: must be between 1 and 99", set("los[1].discount", 100)),
		tc("los discount missing", "los[0].discount: is required", set("los[0].discount", del)),
		tc("los duplicate days", "los[1].days: duplicates los[0]", set("los[1].days", 7)),
		tc("los 41 items", "los: must have at most 40 items", set("los", many(41, `{"days":1,"discount":1}`))),
		tc("los not an array", "los: must be an array", set("los", "7:10")),

		tc("setting missing", "setting: is required", set("setting", del)),
		tc("standard_occupants missing", st+"standard_occupants: is required", set(st+"standard_occupants", del)),
		tc("standard_occupants 0", st+"standard_occupants: must be between 1 and 50", set(st+"standard_occupants", 0)),
		tc("accept_booking_upto 0", "", set(st+"accept_booking_upto", 0)),
		tc("accept_booking_upto 13", st+"accept_booking_upto: must be between 0 and 12", set(st+"accept_booking_upto", 13)),
		tc("accept_booking_upto -1", st+"accept_booking_upto: must be between 0 and 12", set(st+"accept_booking_upto", -1)),
		tc("apply_weekend_price not boolean", st+"apply_weekend_price: must be a boolean", set(st+"apply_weekend_price", "sometimes")),

		tc("checkin days", "", set(st+"default_allow_checkin", "Monday,Friday")),
		tc("checkin days any case and spaces", "", set(st+"default_allow_checkin", " monday , FRIDAY ")),
		tc("checkin absent means All", "", set(st+"default_allow_checkin", del)),
		tc("checkin unknown day", st+"default_allow_checkin: must be All or comma-separated days from Sunday to Saturday", set(st+"default_allow_checkin", "Funday")),
		tc("checkin empty item", st+"default_allow_checkin: must be All or comma-separated days from Sunday to Saturday", set(st+"default_allow_checkin", "Monday,,Friday")),
		tc("checkin abbreviation", st+"default_allow_checkin: must be All or comma-separated days from Sunday to Saturday", set(st+"default_allow_checkin", "Mon")),
		// pricing.ParseWeekdays' one rule: the union of the names (libs/pricing/weekdays_test.go).
		tc("checkin duplicate day counts once", "", set(st+"default_allow_checkin", "Monday,monday")),
		tc("checkin All combined is All", "", set(st+"default_allow_checkin", "All,Friday")),
		tc("checkout All combined is All", "", set(st+"default_allow_checkout", "Sunday, All")),
		tc("checkin trailing comma", st+"default_allow_checkin: must be All or comma-separated days from Sunday to Saturday", set(st+"default_allow_checkin", "Monday,")),
		tc("checkout blank means All", "", set(st+"default_allow_checkout", " ")),
		tc("checkin 101 chars", st+"default_allow_checkin: must be at most 100 characters", set(st+"default_allow_checkin", strings.Repeat("Monday,", 14)+"Sunday")),

		tc("same-day until 9:30", "", set(st+"allow_same_day_booking_until", "9:30")),
		tc("same-day until 23:59", "", set(st+"allow_same_day_booking_until", "23:59")),
		tc("same-day until 24:00", st+"allow_same_day_booking_until: must be a 24-hour time HH:MM", set(st+"allow_same_day_booking_until", "24:00")),
		tc("same-day until 2pm", st+"allow_same_day_booking_until: must be a 24-hour time HH:MM", set(st+"allow_same_day_booking_until", "2pm")),
		tc("same-day until 00:00", "", set(st+"allow_same_day_booking_until", "00:00")),
		tc("same-day until spaces around", "", set(st+"allow_same_day_booking_until", " 14:30 ")),
		tc("same-day until 12:5", st+"allow_same_day_booking_until: must be a 24-hour time HH:MM", set(st+"allow_same_day_booking_until", "12:5")),
		tc("same-day until signed", st+"allow_same_day_booking_until: must be a 24-hour time HH:MM", set(st+"allow_same_day_booking_until", "+9:30")),
		tc("same-day until a number", st+"allow_same_day_booking_until: must be a 24-hour time HH:MM", set(st+"allow_same_day_booking_until", 14)),
		tc("advance notice instead", "", set(st+"allow_same_day_booking_until", del), set(st+"advanced_notice_booking_from", "3")),
		tc("advance notice 0 days", "", set(st+"allow_same_day_booking_until", ""), set(st+"advanced_notice_booking_from", 0)),
		tc("advance notice 365", "", set(st+"allow_same_day_booking_until", del), set(st+"advanced_notice_booking_from", 365)),
		tc("advance notice 366", st+"advanced_notice_booking_from: must be between 0 and 365", set(st+"allow_same_day_booking_until", del), set(st+"advanced_notice_booking_from", 366)),
		tc("advance notice fraction", st+"advanced_notice_booking_from: must be a whole number", set(st+"allow_same_day_booking_until", del), set(st+"advanced_notice_booking_from", "2.5")),
		tc("both set", st+"advanced_notice_booking_from: must not be set together with allow_same_day_booking_until", set(st+"advanced_notice_booking_from", "3")),
		tc("neither set", st+"allow_same_day_booking_until: is required unless advanced_notice_booking_from is set", set(st+"allow_same_day_booking_until", del)),
		tc("first_day_surcharge negative", st+"first_day_surcharge: must be between 0 and 2147483647", set(st+"first_day_surcharge", -1)),

		tc("season absent", "", set("season", del)),
		tc("season not an object", "season[1]: must be an object", set("season[1]", "winter")),
		tc("season name 101 chars", "season[0].name: must be at most 100 characters", set("season[0].name", chars(101))),
		tc("season minimum_stay 0", "season[0].minimum_stay: must be between 1 and 365", set("season[0].minimum_stay", 0)),
		tc("season minimum_stay equals maxguest", "", set("season[0].minimum_stay", maxGuest)),
		tc("season minimum_stay above maxguest", "season[0].minimum_stay: must be at most 6 (the property's maxguest)", set("season[0].minimum_stay", maxGuest+1)),
		tc("season start_date missing", "season[0].start_date: is required", set("season[0].start_date", del)),
		tc("season end_date missing", "season[1].end_date: is required", set("season[1].end_date", del)),
		tc("season start_date not a date", "season[0].start_date: must be a valid date (YYYY-MM-DD)", set("season[0].start_date", "2025-02-30")),
		tc("season end_date other format", "season[0].end_date: must be a valid date (YYYY-MM-DD)", set("season[0].end_date", "31/08/2025")),
		tc("season one day", "", set("season[0].end_date", "2025-06-01")),
		tc("season end before start", "season[0].end_date: must not be before start_date", set("season[0].end_date", "2025-05-31")),
		tc("season daily_price missing", "season[1].daily_price: is required", set("season[1].daily_price", del)),
		tc("season weekly_price 3 decimals", "season[1].weekly_price: must have at most 2 decimal places", set("season[1].weekly_price", "1.001")),
		tc("season allow_checkin All combined is All", "", set("season[0].allow_checkin", "All,Saturday")),
		tc("season allow_checkin empty item", "season[0].allow_checkin: must be All or comma-separated days from Sunday to Saturday", set("season[0].allow_checkin", "Friday,,Saturday")),
		tc("season allow_checkout unknown day", "season[0].allow_checkout: must be All or comma-separated days from Sunday to Saturday", set("season[0].allow_checkout", "Weekend")),
		tc("seasons overlap", "season[1].start_date: overlaps season[0]", set("season[1].start_date", "2025-08-01")),
		tc("seasons share a day", "season[1].start_date: overlaps season[0]", set("season[1].start_date", "2025-08-31")),
		tc("seasons adjacent", "", set("season[1].start_date", "2025-09-01")),
		tc("later season inside an earlier one", "season[2].start_date: overlaps season[0]",
			set("season[2]", obj(`{"start_date":"2025-07-01","end_date":"2025-07-10","daily_price":1}`))),
		tc("earlier-dated season listed later", "season[2].start_date: overlaps season[1]",
			set("season[2]", obj(`{"start_date":"2025-01-01","end_date":"2025-12-31","daily_price":1}`)), set("season[0].start_date", "2026-06-01"), set("season[0].end_date", "2026-06-30")),
	}
	check(t, ratesExample, rows, decodeRates)
}

func TestDecodeRatesMaxGuestSkipped(t *testing.T) {
	body := apply(t, ratesExample, set("season[0].minimum_stay", 30))
	if _, err := property.DecodeRates(body, 0); err != nil {
		t.Errorf("maxGuest 0 must skip the season rule: %v", err)
	}
}

func TestDecodeRatesValues(t *testing.T) {
	r, err := property.DecodeRates([]byte(ratesExample), maxGuest)
	if err != nil {
		t.Fatal(err)
	}
	if r.InternalCode != "VR-001" || !r.Rate.Daily.Equal(dec("120")) || !r.Rate.Weekend.Equal(dec("150.5")) || r.Rate.MinimumStay != 2 || !r.Rate.ExtraMonthly.Equal(dec("300")) {
		t.Errorf("rate: %+v", r.Rate)
	}
	if len(r.LOS) != 2 || r.LOS[1].Days != 28 || !r.LOS[1].Discount.Equal(dec("25")) {
		t.Errorf("los: %+v", r.LOS)
	}
	s := r.Setting
	weekend := pricing.DaysOf(time.Saturday, time.Sunday)
	switch {
	case s.StandardOccupants != 4 || s.AcceptBookingUpto != 12 || !s.ApplyWeekendPrice || !s.ApplyExtraFeePerSeason || s.Apply6NightsWeeklyRate || s.FirstDaySurchargeOneNight:
		t.Errorf("setting: %+v", s)
	case s.DefaultCheckin != pricing.AllDays || s.DefaultCheckout != weekend || s.DefaultCheckout.String() != "Sunday,Saturday":
		t.Errorf("check-in/out days: %v %v", s.DefaultCheckin, s.DefaultCheckout)
	case s.SameDayBookingUntil == nil || *s.SameDayBookingUntil != 14*60+30 || s.SameDayBookingUntil.String() != "14:30" || s.AdvanceNoticeDays != nil:
		t.Errorf("same-day: %v", s.SameDayBookingUntil)
	case !s.FirstDaySurcharge.Equal(dec("15")):
		t.Errorf("surcharge: %v", s.FirstDaySurcharge)
	}
	if len(r.Seasons) != 2 {
		t.Fatalf("seasons: %d", len(r.Seasons))
	}
	summer, xmas := r.Seasons[0], r.Seasons[1]
	if summer.Name != "Summer" || summer.MinimumStay != 5 || !summer.Start.Equal(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)) ||
		!summer.End.Equal(time.Date(2025, 8, 31, 0, 0, 0, 0, time.UTC)) || summer.AllowCheckin != 1<<time.Saturday || !summer.Daily.Equal(dec("180")) {
		t.Errorf("summer: %+v", summer)
	}
	if xmas.MinimumStay != 0 || xmas.AllowCheckin != 0 || xmas.AllowCheckout != 0 || !xmas.Weekly.Equal(dec("1200")) || xmas.Weekend != nil {
		t.Errorf("christmas: unset fields must stay zero: %+v", xmas)
	}

	r, err = property.DecodeRates(apply(t, ratesExample, set("setting.allow_same_day_booking_until", del), set("setting.advanced_notice_booking_from", "2")), maxGuest)
	if err != nil || r.Setting.AdvanceNoticeDays == nil || *r.Setting.AdvanceNoticeDays != 2 || r.Setting.SameDayBookingUntil != nil {
		t.Errorf("advance notice: %+v, %v", r.Setting, err)
	}

	r, err = property.DecodeRates(apply(t, ratesExample, set("setting.default_allow_checkin", "All,Friday"), set("setting.default_allow_checkout", "monday, Monday")), maxGuest)
	if err != nil || r.Setting.DefaultCheckin != pricing.AllDays || r.Setting.DefaultCheckout != pricing.DaysOf(time.Monday) {
		t.Errorf("day sets are the union of their names: %v %v, %v", r.Setting.DefaultCheckin, r.Setting.DefaultCheckout, err)
	}
}
