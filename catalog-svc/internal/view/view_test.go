package view

import (
	"testing"

	"github.com/vros/vros/libs/pricing"
)

func newMem() *Store { return &Store{accounts: map[string]*account{}} }

func TestPutKeepsTheNewestVersion(t *testing.T) {
	s := newMem()
	must := func(coll, data string) {
		t.Helper()
		if err := s.put(coll, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	must(collProperties, `{"account_id":"a","property_id":7,"version":2,"content":{"name":"New"}}`)
	must(collProperties, `{"account_id":"a","property_id":7,"version":1,"content":{"name":"Old"}}`)
	if p, ok := s.Property("a", 7); !ok || p.Snap.Content.Name != "New" {
		t.Fatalf("property: %+v %v", p, ok)
	}
	if _, ok := s.Property("b", 7); ok {
		t.Fatal("another account sees the property")
	}
	// A booking moved to another property leaves the first one's nights.
	must(collBookings, `{"account_id":"a","booking_id":1,"property_id":7,"version":1,"nights":["2030-01-01","2030-01-02"]}`)
	must(collBookings, `{"account_id":"a","booking_id":1,"property_id":8,"version":2,"nights":["2030-01-05"]}`)
	must(collBookings, `{"account_id":"a","booking_id":1,"property_id":7,"version":1,"nights":["2030-01-01"]}`) // redelivered
	if h := s.Held("a", 7); len(h) != 0 {
		t.Fatalf("held on 7: %v", h)
	}
	if h := s.Held("a", 8); !h[pricing.MustDate("2030-01-05")] || len(h) != 1 {
		t.Fatalf("held on 8: %v", h)
	}
	must(collBlocks, `{"account_id":"a","block_id":3,"property_id":7,"version":1,"start_date":"2030-02-01","end_date":"2030-02-03"}`)
	if h := s.Held("a", 7); len(h) != 3 {
		t.Fatalf("block nights: %v", h)
	}
	must(collBlocks, `{"account_id":"a","block_id":3,"property_id":7,"version":2,"deleted":true,"start_date":"2030-02-01","end_date":"2030-02-03"}`)
	if h := s.Held("a", 7); len(h) != 0 || len(s.Blocks("a", 0)) != 0 {
		t.Fatalf("deleted block still holds: %v", h)
	}
	must(collProperties, `{"account_id":"a","property_id":7,"version":3,"deleted":true}`)
	if _, ok := s.Property("a", 7); ok || len(s.Properties("a")) != 0 {
		t.Fatal("deleted property still served")
	}
}

func TestSettingsReprice(t *testing.T) {
	s := newMem()
	_ = s.put(collProperties, []byte(`{"account_id":"a","property_id":1,"version":1,"rates":{"rate":{"daily_price":"100"},"minimum_stay":1,"setting":{}}}`))
	if p, _ := s.Property("a", 1); p.PricingErr != nil || p.Pricing.Currency != "USD" {
		t.Fatalf("before settings: %v %s", p.PricingErr, p.Pricing.Currency)
	}
	_ = s.put(collSettings, []byte(`{"account_id":"a","version":1,"currency":"EUR","timezone":"Europe/Rome"}`))
	if p, _ := s.Property("a", 1); p.PricingErr != nil || p.Pricing.Currency != "EUR" || p.Pricing.Location.String() != "Europe/Rome" {
		t.Fatalf("after settings: %v %s %v", p.PricingErr, p.Pricing.Currency, p.Pricing.Location)
	}
	if st := s.Settings("a"); st.Search.DefaultLimit != 10 || len(st.LeadSources) != 6 {
		t.Fatalf("settings defaults: %+v", st)
	}
}
