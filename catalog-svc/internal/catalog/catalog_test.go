package catalog

import (
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
	"github.com/vros/vros/libs/pricing"
)

func newMem() *Catalog { return NewMemory() }

func TestPutKeepsTheNewestVersion(t *testing.T) {
	s := newMem()
	must := func(kind Kind, data string) {
		t.Helper()
		if err := s.put(kind, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	must(KindProperty, `{"account_id":"a","property_id":7,"version":2,"content":{"name":"New"}}`)
	must(KindProperty, `{"account_id":"a","property_id":7,"version":1,"content":{"name":"Old"}}`)
	if p, ok := s.Property("a", 7); !ok || p.Snap.Content.Name != "New" {
		t.Fatalf("property: %+v %v", p, ok)
	}
	if _, ok := s.Property("b", 7); ok {
		t.Fatal("another account sees the property")
	}
	// A booking moved to another property leaves the first one's nights.
	must(KindBooking, `{"account_id":"a","booking_id":1,"property_id":7,"version":1,"nights":["2030-01-01","2030-01-02"]}`)
	must(KindBooking, `{"account_id":"a","booking_id":1,"property_id":8,"version":2,"nights":["2030-01-05"]}`)
	must(KindBooking, `{"account_id":"a","booking_id":1,"property_id":7,"version":1,"nights":["2030-01-01"]}`) // redelivered
	if h := s.Held("a", 7); len(h) != 0 {
		t.Fatalf("held on 7: %v", h)
	}
	if h := s.Held("a", 8); !h[pricing.MustDate("2030-01-05")] || len(h) != 1 {
		t.Fatalf("held on 8: %v", h)
	}
	must(KindBlock, `{"account_id":"a","block_id":3,"property_id":7,"version":1,"start_date":"2030-02-01","end_date":"2030-02-03"}`)
	if h := s.Held("a", 7); len(h) != 3 {
		t.Fatalf("block nights: %v", h)
	}
	must(KindBlock, `{"account_id":"a","block_id":3,"property_id":7,"version":2,"deleted":true,"start_date":"2030-02-01","end_date":"2030-02-03"}`)
	if h := s.Held("a", 7); len(h) != 0 || len(s.Blocks("a", 0)) != 0 {
		t.Fatalf("deleted block still holds: %v", h)
	}
	must(KindProperty, `{"account_id":"a","property_id":7,"version":3,"deleted":true}`)
	if _, ok := s.Property("a", 7); ok || len(s.Properties("a")) != 0 {
		t.Fatal("deleted property still served")
	}
}

func TestSettingsReprice(t *testing.T) {
	s := newMem()
	_ = s.put(KindProperty, []byte(`{"account_id":"a","property_id":1,"version":1,"rates":{"rate":{"daily_price":"100"},"minimum_stay":1,"setting":{}}}`))
	if p, _ := s.Property("a", 1); p.PricingErr != nil || p.Pricing.Currency != "USD" {
		t.Fatalf("before settings: %v %s", p.PricingErr, p.Pricing.Currency)
	}
	_ = s.put(KindSettings, []byte(`{"account_id":"a","version":1,"currency":"EUR","timezone":"Europe/Rome"}`))
	if p, _ := s.Property("a", 1); p.PricingErr != nil || p.Pricing.Currency != "EUR" || p.Pricing.Location.String() != "Europe/Rome" {
		t.Fatalf("after settings: %v %s %v", p.PricingErr, p.Pricing.Currency, p.Pricing.Location)
	}
	if st := s.Settings("a"); st.Search.DefaultLimit != 10 || len(st.LeadSources) != 6 {
		t.Fatalf("settings defaults: %+v", st)
	}
}

// TestGoldenEvents: the contract's golden payloads, as property-svc and booking-svc publish
// them, give the catalog what its reads serve.
func TestGoldenEvents(t *testing.T) {
	s := newMem()
	put := func(kind Kind, typ string) {
		t.Helper()
		if err := check(kind, contracttest.Golden(typ)); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if err := s.put(kind, contracttest.Golden(typ)); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	put(KindProperty, contract.PricesUpdated)
	put(KindSettings, contract.SettingsUpdated)
	p, ok := s.Property("1001", 17)
	if !ok {
		t.Fatal("property not served")
	}
	sn := p.Snap
	switch {
	case sn.InternalCode != "V1" || sn.Version != 10 || sn.Content.Name != "Villa Aurora on the hill" || sn.Content.City != "Lucca" ||
		sn.Content.Bedrooms != 3 || sn.Content.MaxGuest != 6:
		t.Errorf("content: %+v", sn)
	case len(sn.Photos) != 2 || sn.Photos["3"].Key != "k3" || sn.Photos["5"].Width != 1200:
		t.Errorf("photos: %+v", sn.Photos)
	case sn.Policy == nil || sn.Policy.PaymentType != "Partial":
		t.Errorf("policy: %+v", sn.Policy)
	case sn.Rates == nil || sn.Rates.Rate.Weekend != "120" || sn.Rates.Setting.StandardOccupants != 2 ||
		len(sn.Rates.Seasons) != 1 || sn.Rates.Seasons[0].Prices.Weekly != "945.00" || sn.Rates.Seasons[0].AllowCheckin != "Saturday":
		t.Errorf("rates: %+v", sn.Rates)
	case sn.Methods == nil || len(sn.Methods.Gateways) != 2 || sn.Methods.Gateways[0].Provider != "stripe":
		t.Errorf("methods: %+v", sn.Methods)
	case len(sn.Taxes) != 3 || sn.Taxes[1].CalculationType != 3 || len(sn.Services) != 2 || sn.Services[0].Taxes[0].Perc != "22":
		t.Errorf("taxes and services: %+v %+v", sn.Taxes, sn.Services)
	case sn.Amenities == nil || len(sn.Amenities.Items) != 2 || sn.Amenities.Items[0].Languages["it"] != "Wi-Fi":
		t.Errorf("amenities: %+v", sn.Amenities)
	case p.PricingErr != nil || p.Pricing.Currency != "EUR" || p.Pricing.Location.String() != "Europe/Rome" ||
		p.Pricing.WeekendNights != pricing.FriSatSun:
		t.Errorf("pricing: %v %+v", p.PricingErr, p.Pricing)
	}
	if st := s.Settings("1001"); st.Search.RateType != "weekly" || st.Languages[0] != "it" || len(st.LeadSources) != 6 {
		t.Errorf("settings: %+v", st)
	}

	put(KindBooking, contract.BookingReserved)
	put(KindBlock, contract.BlockCreated)
	if h := s.Held("1001", 17); len(h) != 6 || !h[pricing.MustDate("2027-03-10")] || !h[pricing.MustDate("2027-04-03")] ||
		h[pricing.MustDate("2027-03-11")] {
		t.Errorf("held: %v", h)
	}
	if b := s.Bookings("1001", 17); len(b) != 1 || b[0].GrandTotal != "413.50" || b[0].CreatedAt.IsZero() {
		t.Errorf("bookings: %+v", b)
	}
	if b := s.Blocks("1001", 17); len(b) != 1 || b[0].Memo != "painting" || b[0].CreatedAt != "2026-11-22 02:45:10" {
		t.Errorf("blocks: %+v", b)
	}
	put(KindBooking, contract.BookingUpdated)
	put(KindBooking, contract.BookingCancelled)
	put(KindBlock, contract.BlockDeleted)
	if h := s.Held("1001", 17); len(h) != 0 {
		t.Errorf("held after the cancellation and the block's deletion: %v", h)
	}
	if b := s.Bookings("1001", 17); len(b) != 1 || b[0].Status != "cancelled" || b[0].CancelledAt == nil {
		t.Errorf("cancelled booking: %+v", b)
	}
	put(KindProperty, contract.PropertyDeleted)
	if _, ok := s.Property("1001", 17); ok {
		t.Error("deleted property still served")
	}
}
