package store

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
)

// life is one property as the store holds it after each kind of change, in the order of
// the golden files (contract.Golden): created, then every section set once, then deleted.
func life() map[string]Record {
	at := func(step int) time.Time {
		return time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).Add(time.Duration(step) * time.Hour)
	}
	no, yes := false, true
	rec := Record{ID: "1001:17", AccountID: "1001", PropertyID: 17, InternalCode: "V1", CreatedAt: at(0),
		Content: ContentRec{Name: "Villa Aurora", Type: "Villa", MaxGuest: 6, Bedrooms: 3, Bathrooms: 2, Kitchens: 1,
			SpaceValue: "120.5", SpaceUnit: "meters", Address: "Via Roma 1", City: "Lucca", Postcode: "55100", Country: "IT",
			Latitude: "43.84", Longitude: "10.5"},
		Photos: map[string]PhotoRec{}, Taxes: []TaxRec{}, Services: []ServiceRec{}}
	out := map[string]Record{}
	step := func(change string, edit func(r *Record)) {
		edit(&rec)
		rec.Version++
		rec.LastChange, rec.UpdatedAt = change, at(int(rec.Version)-1)
		out[change] = rec
	}
	step(PropertyCreated, func(*Record) {})
	step(PropertyUpdated, func(r *Record) {
		r.Content.Name, r.Content.Brief, r.Content.Floor, r.Content.Phone = "Villa Aurora on the hill", "Stone villa", "Ground", "+39 0583 1"
		r.Content.State, r.Content.AllowChildren, r.Content.AllowPet = "LU", &no, &yes
		// the iCal export link made (property-ical get): events carry its hash, never the token
		r.ICal = &ICalRec{Token: "pQ1b7wzJ3mTgB1fZl0Kc6vXyHq2sRn8dUe4aLo9iMtE", CreatedAt: at(1)}
	})
	step(PhotosUpdated, func(r *Record) {
		r.Photos = map[string]PhotoRec{
			// ordered: 5 is the main photo, though 3 is the lower id
			"3": {PhotoID: 3, Key: "k3", Width: 1600, Height: 900, Source: "https://example.com/pool.jpg", CreatedAt: at(2), Position: 2},
			"5": {PhotoID: 5, Key: "k5", Width: 1200, Height: 800, CreatedAt: at(2), Position: 1},
		}
	})
	step(PolicyUpdated, func(r *Record) {
		r.Policy = &PolicyRec{PaymentType: "Partial",
			DamageDeposit:    &ChargeRec{IsDueAt: "Arrival", AmountType: "Flat", Amount: "300"},
			FirstPayment:     &ChargeRec{IsDueAt: "Booking", AmountType: "PercentOfGrandTotal", Amount: "30"},
			RemainingPayment: &ChargeRec{IsDueAt: "XDayPriorArrival", XDay: 30}}
	})
	step(RatesUpdated, func(r *Record) {
		r.Rates = &RatesRec{Rate: PricesRec{Daily: "100", Weekend: "120", Weekly: "630", ExtraDaily: "20"}, MinimumStay: 2,
			LOS: []LOSRec{{Days: 7, Discount: "5"}},
			Setting: SettingRec{StandardOccupants: 2, AcceptBookingUpto: 12, ApplyWeekendPrice: true, DefaultAllowCheckin: "All",
				DefaultAllowCheckout: "Friday,Saturday,Sunday", AllowSameDayBookingUntil: "14:00", Apply6NightsWeeklyRate: true,
				FirstDaySurcharge: "25.5"},
			Seasons: []SeasonRec{{Name: "Summer", MinimumStay: 5, StartDate: "2027-07-01", EndDate: "2027-08-31",
				Prices: PricesRec{Daily: "150", Weekly: "945.00"}, AllowCheckin: "Saturday"}}}
	})
	step(MethodsUpdated, func(r *Record) {
		r.Methods = &MethodsRec{Gateways: []GatewayRec{
			{Provider: "stripe", Description: "cards", Public: map[string]string{"public_key": "pk_test"},
				Sealed: map[string]string{"secret_key": "SEALED-NEVER-PUBLISHED"}},
			{Provider: "cash"},
		}}
	})
	step(TaxesUpdated, func(r *Record) {
		r.Taxes = []TaxRec{{Name: "VAT", Amount: "10", Type: 1, CalculationType: 1, Def: true},
			{Name: "City tax", Amount: "1.5", Type: 2, CalculationType: 3, Def: true},
			{Name: "Green fee", Amount: "5", Type: 2, CalculationType: 1}}
	})
	step(ServicesUpdated, func(r *Record) {
		r.Services = []ServiceRec{
			{Name: "Cleaning", Amount: "50", Type: 1, Applicable: 1, Unit: 1, Def: true, Taxes: []ServiceTaxRec{{Name: "VAT", Perc: "22"}}},
			{Name: "Late check-out", Amount: "30", Type: 1, Applicable: 1, Unit: 1, Taxes: []ServiceTaxRec{}}}
	})
	step(AmenitiesUpdated, func(r *Record) {
		r.Amenities = &AmenitiesRec{BedOption: 1, UseIcon: &yes, Description: "Air conditioning in every room", Items: []AmenityRec{
			{ID: 1, Name: "Wi-Fi", DefaultName: "Wifi", Value: "yes", Qty: 1, Type: 1, Class: "wifi", Languages: map[string]string{"it": "Wi-Fi"}},
			{ID: 2, Name: "Pool", DefaultName: "Pool", Qty: 1, Type: 2, Class: "pool", Languages: map[string]string{}}}}
	})
	step(PricesUpdated, func(r *Record) {
		r.Prices = map[string]DayRec{"2027-07-03": {Price: "200", MinNights: 3}, "2027-03-10": {MinNights: 4},
			"2027-03-12": {Price: "110", WeeklyPrice: "700", MonthPrice: "2500"}}
	})
	step(RatePlansUpdated, func(r *Record) {
		// the standard plan renamed; plans 1 and 3 (2 was deleted: ids are never given again)
		r.StandardPlan = &PlanTermsRec{Name: "Flexible rate", Cancellation: &CancellationRec{Policy: "moderate"}}
		r.RatePlans = []RatePlanRec{
			{ID: 1, Terms: PlanTermsRec{Name: "Non-refundable", Inclusions: "Breakfast", Cancellation: &CancellationRec{Policy: "non_refundable"}},
				Adjustment:  AdjustmentRec{Type: "percent", Value: "-10"},
				Ranges:      []RangeRec{{StartDate: "2027-07-01", EndDate: "2027-08-31", Type: "percent", Value: "-5"}},
				MinimumStay: 2, SoldOn: SoldOnRec{Direct: true, Brands: []int64{1}, Channels: []string{"airbnb", "bookingcom"}}},
			{ID: 3, Terms: PlanTermsRec{Name: "Half board",
				Cancellation: &CancellationRec{Policy: "custom", Tiers: []TierRec{{DaysBefore: 30, Percent: "100"}, {DaysBefore: 7, Percent: "50.5"}}}},
				Adjustment: AdjustmentRec{Type: "amount", Value: "35"}, SoldOn: SoldOnRec{AllBrands: true}},
		}
		r.LastRatePlanID = 3
	})
	step(RestrictionsUpdated, func(r *Record) {
		two, fourteen := 2, 14
		r.Restrictions = []RestrictionRec{
			{StartDate: "2027-07-02", EndDate: "2027-07-03", MinStayArrival: ip(3), MaxStay: &fourteen, ClosedToArrival: &yes},
			{StartDate: "2027-07-04", EndDate: "2027-07-04", ClosedToArrival: &no, ClosedToDeparture: &yes},
			{StartDate: "2027-12-24", EndDate: "2027-12-26", StopSell: &yes},
		}
		r.RatePlans = slices.Clone(r.RatePlans) // the rate plans step keeps its own
		r.RatePlans[0].Restrictions = []RestrictionRec{{StartDate: "2027-07-01", EndDate: "2027-07-31", MinStayThrough: &two}}
	})
	step(MarkupsUpdated, func(r *Record) {
		r.ChannelMarkups = []MarkupRec{{Channel: "airbnb", Type: "percent", Value: "15"}, {Channel: "vrbo", Type: "amount", Value: "5"}}
	})
	step(PropertyDeleted, func(r *Record) { r.Deleted = true })
	return out
}

// accountSettings is an account that set everything but its lead sources and default lead
// source (a tag's languages and a promotion's properties never set: published empty), with
// channel markups.
func accountSettings() SettingsRec {
	on := true
	return SettingsRec{AccountID: "1001", Version: 3, UpdatedAt: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC),
		Currency: "EUR", Timezone: "Europe/Rome", Languages: []string{"it", "en"},
		Brands: []BrandRec{{ID: 1, Name: "Aurora Villas", Domains: []string{"aurora.example", "aurora-villas.example"},
			Origins:         []string{"https://aurora.example", "http://localhost:8080"},
			DefaultLanguage: "en", DefaultCurrency: "GBP", LeadSource: 5, Search: &SearchRec{DefaultLimit: 12}, Properties: []int64{17}}, {ID: 2, Name: "Aurora Direct"}},
		Search: SearchRec{DefaultLimit: 20, PriceFilterEnable: &on, RateType: "weekly"}, WeekendNights: 3,
		ExchangeRates: []RateRec{{Currency: "GBP", Rate: "0.86"}, {Currency: "USD", Rate: "1.08"}},
		Categories:    []GroupRec{{ID: 1, Name: "Sea view", ShowSearchEngine: true, Languages: map[string]string{"it": "Vista mare"}, Properties: []int64{17, 18}}},
		Tags:          []GroupRec{{ID: 1, Name: "Family", Properties: []int64{17}}},
		Promotions: []PromotionRec{{Code: "SPRING10", Name: "Spring", Type: "percent", Amount: "10", StartDate: "2027-03-01", EndDate: "2027-05-31",
			MinNights: 3, UsageLimit: 100}},
		ChannelMarkups: []MarkupRec{{Channel: "airbnb", Type: "percent", Value: "12.5"}, {Channel: "bookingcom", Type: "amount", Value: "-3"}}}.withDefaults()
}

// TestEventsMatchTheContract: what property-svc publishes for each change is exactly the
// contract's golden payload of that event type, in the envelope docs/events.md describes.
// A field renamed, dropped or added on the way from the store to Kafka fails here.
func TestEventsMatchTheContract(t *testing.T) {
	for typ, rec := range life() {
		t.Run(typ, func(t *testing.T) {
			msgs, err := propertyMessages(rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 1 || msgs[0].Topic != events.TopicProperty || msgs[0].Key != "1001:17" {
				t.Fatalf("messages: %+v", msgs)
			}
			sameAsGolden(t, typ, msgs[0].Value)
		})
	}
	t.Run(contract.SettingsUpdated, func(t *testing.T) {
		m, err := settingsMessage(accountSettings())
		if err != nil {
			t.Fatal(err)
		}
		if m.Topic != events.TopicProperty || m.Key != "1001:settings" {
			t.Fatalf("message: %+v", m)
		}
		sameAsGolden(t, contract.SettingsUpdated, m.Value)
	})
	for typ := range contracttest.Types() {
		if _, ok := life()[typ]; !ok && strings.HasPrefix(typ, contract.PropertyTypePrefix) {
			t.Errorf("no test publishes %s", typ)
		}
	}
}

// sameAsGolden checks that value is a CloudEvent of type typ whose data is the golden payload.
func sameAsGolden(t *testing.T, typ string, value []byte) {
	t.Helper()
	if strings.Contains(string(value), "SEALED") {
		t.Errorf("a sealed secret was published: %s", value)
	}
	diffs, err := contracttest.DiffPublished(value, typ, eventSource)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("testdata/%s.json: %s", typ, d)
	}
}
