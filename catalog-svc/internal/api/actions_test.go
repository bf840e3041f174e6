package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

// TestNonAvailableEndsOnLastNight: a range's endDate is its last held night (as
// getblockdates writes blocks), so the check-out day stays free as an arrival.
func TestNonAvailableEndsOnLastNight(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	// Booking 10th–13th (nights 10, 11, 12); a block of the nights 20–21; a booking whose
	// nights touch the block (22, 23); a one-night booking on the 1st of February.
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 1, PropertyID: 7, Status: "reserved", Version: 1,
		Checkin: "2030-01-10", Checkout: "2030-01-13", Nights: []string{"2030-01-10", "2030-01-11", "2030-01-12"}})
	s.load(contract.BlockCreated, contract.Block{AccountID: "acc1", BlockID: 1, PropertyID: 7, StartDate: "2030-01-20", EndDate: "2030-01-21",
		Version: 1, CreatedAt: "2030-01-05 23:30:00"})
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 2, PropertyID: 7, Status: "reserved", Version: 1,
		Checkin: "2030-01-22", Checkout: "2030-01-24", Nights: []string{"2030-01-22", "2030-01-23"}})
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 3, PropertyID: 7, Status: "reserved", Version: 1,
		Checkin: "2030-02-01", Checkout: "2030-02-02", Nights: []string{"2030-02-01"}})
	type r struct{ StartDate, EndDate, Availability string }
	for _, tc := range []struct {
		name, body string
		want       []r
	}{
		{"default window from today", `{"propertyId":"7"}`, []r{{"2030-01-10", "2030-01-12", "false"}, {"2030-01-20", "2030-01-23", "false"},
			{"2030-02-01", "2030-02-01", "false"}}},
		{"window cuts a range", `{"propertyId":7,"startDate":"2030-01-11","endDate":"2030-01-21"}`,
			[]r{{"2030-01-11", "2030-01-12", "false"}, {"2030-01-20", "2030-01-21", "false"}}},
		{"one night", `{"propertyId":7,"startDate":"2030-01-25"}`, []r{{"2030-02-01", "2030-02-01", "false"}}},
		{"nothing held", `{"propertyId":3}`, []r{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []r
			if err := json.Unmarshal(s.action("getnonavailabledate", tc.body), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestGetDiscounts: the property's promotions not ended before today (by start date; an
// open-ended one with endDate ""), then one open "los" range from today when it has
// length-of-stay discounts; nothing else is a discount range.
func TestGetDiscounts(t *testing.T) {
	s := newServer(t, "") // today is 2030-01-10
	fixture(s)
	type d struct{ StartDate, EndDate, Type, Name string }
	for _, tc := range []struct {
		name, body string
		want       []d
	}{
		{"promotions and los", `{"propertyId":"7"}`, []d{{"2029-06-01", "", "promotion", "Always"},
			{"2030-03-01", "2030-04-30", "promotion", "Spring"}, {"2030-01-10", "", "los", "7+ nights 10%"}}},
		{"a promotion of its own, no los", `{"propertyId":3}`, []d{{"2029-06-01", "", "promotion", "Always"},
			{"2030-02-01", "2030-02-10", "promotion", "Only three"}, {"2030-03-01", "2030-04-30", "promotion", "Spring"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := s.action("getdiscounts", tc.body)
			wantKeys(t, "discount", decodeOrdered(t, raw).first(t), "startDate", "endDate", "type", "name")
			var got []d
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
	// An account without promotions and a property without LOS: an empty list.
	if got := string(s.actionOf("acc2", "getdiscounts", `{"propertyId":9}`)); got != "[]" {
		t.Fatalf("acc2: %s", got)
	}
	for _, tc := range []struct{ body, field string }{
		{`{}`, "propertyId"}, {`{"propertyId":"x"}`, "propertyId"}, {`{"propertyId":0}`, "propertyId"},
	} {
		code, out := s.call("acc1", "POST", "/internal/b/getdiscounts", tc.body, nil)
		if code != 400 || !strings.Contains(string(out), tc.field) || !strings.Contains(string(out), `"status":4`) {
			t.Errorf("%s: %d %s", tc.body, code, out)
		}
	}
	for _, body := range []string{`{"propertyId":9}`, `{"propertyId":8}`} {
		if code, out := s.call("acc1", "POST", "/internal/b/getdiscounts", body, nil); code != 404 || !strings.Contains(string(out), `"status":16`) {
			t.Errorf("%s: %d %s", body, code, out)
		}
	}
}

// TestTimestampsInPropertyZone: createdDate of getblockdates and createdAt of
// getreservations are "YYYY-MM-DD HH:MM:SS" in the property's zone (its own, else the
// account's).
func TestTimestampsInPropertyZone(t *testing.T) {
	s := newServer(t, "")
	fixture(s) // the account's zone is Europe/Rome (UTC+1 in winter)
	own := property("acc1", 12, "Tokyo flat", "Tokyo", 1, 1, 2, "50", false)
	own.Content.Timezone = "Asia/Tokyo"
	s.load(contract.PropertyCreated, own)
	s.load(contract.BlockCreated, contract.Block{AccountID: "acc1", BlockID: 1, PropertyID: 7, StartDate: "2030-01-20", EndDate: "2030-01-21",
		Version: 1, CreatedAt: "2030-01-05 23:30:00"})
	s.load(contract.BlockCreated, contract.Block{AccountID: "acc1", BlockID: 2, PropertyID: 12, StartDate: "2030-01-20", EndDate: "2030-01-21",
		Version: 1, CreatedAt: "2030-01-05 23:30:00"})
	created := time.Date(2030, 1, 5, 23, 30, 0, 0, time.UTC)
	for _, pid := range []int64{7, 12} {
		s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: pid, PropertyID: pid, Status: "reserved", Version: 1,
			Checkin: "2030-02-10", Checkout: "2030-02-12", Nights: []string{"2030-02-10", "2030-02-11"}, CreatedAt: created, GrandTotal: "10"})
	}
	var blocks []struct {
		PropertyID  int64  `json:"property_id"`
		CreatedDate string `json:"createdDate"`
	}
	if err := json.Unmarshal(s.action("getblockdates", `{}`), &blocks); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{7: "2030-01-06 00:30:00", 12: "2030-01-06 08:30:00"}
	if len(blocks) != 2 || blocks[0].CreatedDate != want[blocks[0].PropertyID] || blocks[1].CreatedDate != want[blocks[1].PropertyID] {
		t.Fatalf("blocks: %+v", blocks)
	}
	for pid, w := range want {
		var res struct {
			Reservations []struct {
				CreatedAt string `json:"createdAt"`
			} `json:"reservations"`
		}
		body := `{"propertyId":"acc1_` + strconv.FormatInt(pid, 10) + `"}`
		if err := json.Unmarshal(s.action("getreservations", body), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Reservations) != 1 || res.Reservations[0].CreatedAt != w {
			t.Fatalf("%d: %+v, want %s", pid, res, w)
		}
	}
}

// TestActionKeyOrder: every catalog action's objects keep their documented key order.
func TestActionKeyOrder(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	p := property("acc1", 20, "Keys", "Lucca", 1, 1, 2, "80", false)
	p.Taxes = []contract.Tax{{Name: "City tax", Amount: "2", Type: 2, CalculationType: 3}}
	p.Services = []contract.Service{{Name: "Cleaning", Amount: "50", Type: 1, Applicable: 1, Taxes: []contract.ServiceTax{{Name: "VAT", Perc: "22"}}}}
	p.Rates.Seasons = []contract.Season{{Name: "High", StartDate: "2030-07-01", EndDate: "2030-08-31", Prices: contract.Prices{Daily: "120", Monthly: "3000"}}}
	s.load(contract.PropertyUpdated, p)
	s.load(contract.BlockCreated, contract.Block{AccountID: "acc1", BlockID: 1, PropertyID: 20, StartDate: "2030-02-01", EndDate: "2030-02-02",
		Version: 1, CreatedAt: "2030-01-05 10:00:00"})
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 1, PropertyID: 20, Status: "reserved", Version: 1,
		Checkin: "2030-03-01", Checkout: "2030-03-02", Nights: []string{"2030-03-01"}, GrandTotal: "80", Currency: "EUR",
		CreatedAt: time.Date(2030, 1, 5, 10, 0, 0, 0, time.UTC)})
	first := func(action, body string) *node {
		t.Helper()
		return decodeOrdered(t, s.action(action, body))
	}
	wantKeys(t, "gettax", first("gettax", `{"propertyId":20}`).first(t), "name", "amount", "def", "type", "calculationType")
	wantKeys(t, "getservice", first("getservice", `{"propertyId":20}`).first(t), "name", "amount", "def", "type", "taxes")
	wantKeys(t, "getblockdates", first("getblockdates", `{"propertyId":20}`).first(t), "id", "property_id", "memo", "startDate", "endDate",
		"createdDate")
	wantKeys(t, "getnonavailabledate", first("getnonavailabledate", `{"propertyId":20}`).first(t), "startDate", "endDate", "availability")
	rt := first("getratetable", `{"propertyId":20}`)
	wantKeys(t, "getratetable", rt, "tableName", "limitOccupant", "extraOccupantFee", "firstNightSurcharge", "oneNightStaySurcharge", "seasons",
		"ratePlans")
	wantKeys(t, "getratetable plan", rt.get(t, "ratePlans").items[0], "id", "name", "inclusions", "adjustment", "minimumStay", "cancellationPolicy")
	wantKeys(t, "getratetable season", rt.get(t, "seasons").items[1], "seasonName", "startDate", "endDate", "minimumStay", "nightly", "weekly",
		"monthly", "weekend", "allowCheckins", "allowCheckouts", "def")
	wantKeys(t, "getproperties", first("getproperties", `{}`).first(t), "id", "name")
	wantKeys(t, "getpropertyinfo", first("getpropertyinfo", `{"propertyId":"acc1_20"}`).first(t), "id", "name", "address", "city", "postcode",
		"state", "country", "brief", "bedroom", "bathroom")
	wantKeys(t, "getcalendar", first("getcalendar", `{"propertyId":"acc1_20","startDate":"2030-02-01","endDate":"2030-02-01"}`).first(t),
		"date", "availability", "currency", "price", "weekly_price", "monthly_price", "guest_price", "guest_weekly_price", "guest_monthly_price",
		"minimumstay", "check_in_out_type", "minimumstay_through", "maximumstay", "closed_to_arrival", "closed_to_departure", "stop_sell")
	res := first("getreservations", `{"propertyId":"acc1_20"}`)
	wantKeys(t, "getreservations", res, "reservations")
	wantKeys(t, "reservation", res.first(t).first(t), "id", "startDate", "endDate", "amount", "currency", "status", "createdAt")
}
