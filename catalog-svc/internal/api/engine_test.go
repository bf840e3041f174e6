package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
)

// engine POSTs body to /internal/engine/<name> on behalf of acc.
func (s *server) engine(acc, name, body string) (int, string) {
	s.t.Helper()
	code, out := s.call(acc, http.MethodPost, "/internal/engine/"+name, body, nil)
	return code, string(out)
}

// TestEngineOrigins: each brand's allowed origins, in the account's order: its own, else two
// per domain; an origin two brands allow (stored before the rules) under the first only.
func TestEngineOrigins(t *testing.T) {
	s := newServer(t, "")
	st := contract.DefaultSettings("acc1")
	st.Version = 1
	st.Brands = []contract.Brand{
		{ID: 3, Name: "Listed", Domains: []string{"listed.example"}, Origins: []string{"https://book.example", "http://localhost:3000"}},
		{ID: 1, Name: "Domains", Domains: []string{"a.example", "WWW.b.example."}},
		{ID: 2, Name: "Older", Domain: "c.example"},
		{ID: 4, Name: "Nothing"},
		{ID: 5, Name: "Clash", Domains: []string{"a.example", "d.example"}},
	}
	s.load(contract.SettingsUpdated, st)
	st2 := contract.DefaultSettings("acc2")
	st2.Version = 1
	st2.Brands = []contract.Brand{{ID: 1, Name: "Other", Origins: []string{"https://other.example"}}}
	s.load(contract.SettingsUpdated, st2)

	for _, r := range []struct {
		name, acc, body string
		code            int
		want            string
	}{
		{"brands", "acc1", `{}`, 200, `{"data":{"brands":[` +
			`{"id":3,"origins":["https://book.example","http://localhost:3000"]},` +
			`{"id":1,"origins":["https://a.example","https://www.a.example","https://b.example","https://www.b.example"]},` +
			`{"id":2,"origins":["https://c.example","https://www.c.example"]},` +
			`{"id":4,"origins":[]},` +
			`{"id":5,"origins":["https://d.example","https://www.d.example"]}]}}`},
		{"an empty body", "acc1", ``, 200, ""},
		{"fields it does not read", "acc1", `{"brand_id":1,"lang":"it"}`, 200, ""},
		{"another account", "acc2", `{}`, 200, `{"data":{"brands":[{"id":1,"origins":["https://other.example"]}]}}`},
		{"an account without settings", "acc9", `{}`, 200, `{"data":{"brands":[]}}`},
		{"a body that is not JSON", "acc1", `{"brand_id":`, 400,
			`{"error":{"code":"bad_request","field":"body","message":"body: must be valid JSON"}}`},
		{"a body that is not an object", "acc1", `[1]`, 400,
			`{"error":{"code":"bad_request","field":"body","message":"body: must be a JSON object"}}`},
	} {
		t.Run(r.name, func(t *testing.T) {
			code, out := s.engine(r.acc, "origins", r.body)
			if code != r.code || (r.want != "" && out != r.want) {
				t.Errorf("%d %s\nwant %d %s", code, out, r.code, r.want)
			}
		})
	}
}

// TestEngineRoutesNeedEdgesSignature: an unsigned call never reaches the engine's routes; its
// refusal is in the public API's envelope too.
func TestEngineRoutesNeedEdgesSignature(t *testing.T) {
	s := newServer(t, "")
	for _, name := range []string{"origins", "site", "calendar"} {
		req := httptest.NewRequest(http.MethodPost, "/internal/engine/"+name, nil)
		req.Header.Set("X-Vros-Account", "acc1")
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || err != nil || out.Error.Code != "unauthorized" || out.Error.Message == "" {
			t.Errorf("%s unsigned: HTTP %d %+v %v", name, resp.StatusCode, out, err)
		}
	}
}

// engineFixture is fixture (acc1: properties 3 and 7, EUR, en and it; acc2: property 9) with
// brands: acc1's 1 sells 7, 3 and an unknown 99 in that order; 2 lists none, defaults to it
// and GBP. acc1 also has 4 (no photos), 5 (no rates) and 6 (deleted); 21 changes over on
// Saturdays only, with a booking of the nights of the 15th and 16th of January 2030 and a
// block of the 20th. acc2's brand 1 lists none.
func engineFixture(s *server) {
	s.t.Helper()
	fixture(s)
	st := s.view.Settings("acc1")
	st.Version++
	st.ExchangeRates = map[string]string{"GBP": "0.86"}
	st.Brands = []contract.Brand{{ID: 1, Name: "Aurora", Properties: []int64{7, 3, 99}},
		{ID: 2, Name: "Whole", DefaultLanguage: "it", DefaultCurrency: "GBP"}}
	s.load(contract.SettingsUpdated, st)
	st2 := contract.DefaultSettings("acc2")
	st2.Version = 1
	st2.Brands = []contract.Brand{{ID: 1, Name: "Other brand"}}
	s.load(contract.SettingsUpdated, st2)
	p4 := property("acc1", 4, "Dune", "Viareggio", 2, 1, 4, "70", false)
	p4.Photos = nil
	s.load(contract.PropertyUpdated, p4)
	p5 := property("acc1", 5, "Ruin", "Volterra", 1, 1, 2, "0", false)
	p5.Rates = nil
	s.load(contract.PropertyUpdated, p5)
	p6 := property("acc1", 6, "Gone", "Siena", 1, 1, 2, "50", false)
	p6.Deleted = true
	s.load(contract.PropertyDeleted, p6)
	p21 := property("acc1", 21, "Saturdays", "Lucca", 2, 2, 4, "80.5", false)
	p21.Rates.Setting.DefaultAllowCheckin, p21.Rates.Setting.DefaultAllowCheckout = "Saturday", "Saturday,Sunday"
	s.load(contract.PropertyUpdated, p21)
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 1, PropertyID: 21, Status: "reserved", Version: 1,
		Checkin: "2030-01-15", Checkout: "2030-01-17", Nights: []string{"2030-01-15", "2030-01-16"}, GrandTotal: "161", Currency: "EUR"})
	s.load(contract.BlockCreated, contract.Block{AccountID: "acc1", BlockID: 1, PropertyID: 21, StartDate: "2030-01-20", EndDate: "2030-01-20",
		Version: 1, FeedID: 3})
}

// TestEngineSite: the brand, its currency and languages, and the properties it sells that
// can be booked, each with an absolute photo link; every refusal in the public envelope.
func TestEngineSite(t *testing.T) {
	s := newServer(t, "")
	engineFixture(s)
	base := map[string]string{HeaderPublicBase: "https://edge.example/"}
	for _, r := range []struct {
		name, acc, body string
		headers         map[string]string
		code            int
		want            string
	}{
		{"a brand listing properties", "acc1", `{"brand_id":1,"lang":"it"}`, base, 200, `{"data":{"brand":{"id":1,"name":"Aurora"},` +
			`"currency":"EUR","languages":["en","it"],"default_language":"en","properties":[` +
			`{"id":7,"name":"Villa Aurora","max_guests":6,"bedrooms":3,"bathrooms":2,"photo_url":"https://edge.example/media/kV4/w_800.jpg","city":"Lucca"},` +
			`{"id":3,"name":"Casa Blu","max_guests":2,"bedrooms":1,"bathrooms":1,"photo_url":"https://edge.example/media/kC4/w_800.jpg","city":"Pisa"}]}}`},
		{"a brand listing none sells every bookable property", "acc1", `{"brand_id":"2"}`, base, 200, `{"data":{"brand":{"id":2,"name":"Whole"},` +
			`"currency":"GBP","languages":["en","it"],"default_language":"it","properties":[` +
			`{"id":3,"name":"Casa Blu","max_guests":2,"bedrooms":1,"bathrooms":1,"photo_url":"https://edge.example/media/kC4/w_800.jpg","city":"Pisa"},` +
			`{"id":4,"name":"Dune","max_guests":4,"bedrooms":2,"bathrooms":1,"photo_url":null,"city":"Viareggio"},` +
			`{"id":7,"name":"Villa Aurora","max_guests":6,"bedrooms":3,"bathrooms":2,"photo_url":"https://edge.example/media/kV4/w_800.jpg","city":"Lucca"},` +
			`{"id":21,"name":"Saturdays","max_guests":4,"bedrooms":2,"bathrooms":2,"photo_url":"https://edge.example/media/kS4/w_800.jpg","city":"Lucca"}]}}`},
		{"without a public base the links are relative", "acc1", `{"brand_id":1}`, nil, 200, `"photo_url":"/media/kV4/w_800.jpg"`},
		{"another account's brand of the same id", "acc2", `{"brand_id":1}`, base, 200, `{"data":{"brand":{"id":1,"name":"Other brand"},` +
			`"currency":"USD","languages":["en"],"default_language":"en","properties":[` +
			`{"id":9,"name":"Other","max_guests":10,"bedrooms":5,"bathrooms":5,"photo_url":"https://edge.example/media/kO4/w_800.jpg","city":"Rome"}]}}`},
		{"a brand the account lacks", "acc1", `{"brand_id":9}`, nil, 404,
			`{"error":{"code":"not_found","field":"brand_id","message":"brand_id: is not a brand of this account"}}`},
		{"another account's brand", "acc2", `{"brand_id":2}`, nil, 404,
			`{"error":{"code":"not_found","field":"brand_id","message":"brand_id: is not a brand of this account"}}`},
		{"an account without brands", "acc9", `{"brand_id":1}`, nil, 404,
			`{"error":{"code":"not_found","field":"brand_id","message":"brand_id: is not a brand of this account"}}`},
		{"brand_id missing", "acc1", `{}`, nil, 400,
			`{"error":{"code":"bad_request","field":"brand_id","message":"brand_id: is required"}}`},
		{"brand_id 0", "acc1", `{"brand_id":0}`, nil, 400,
			`{"error":{"code":"bad_request","field":"brand_id","message":"brand_id: must be between 1 and 2147483647"}}`},
		{"brand_id not a number", "acc1", `{"brand_id":"one"}`, nil, 400,
			`{"error":{"code":"bad_request","field":"brand_id","message":"brand_id: must be a number"}}`},
		{"lang not a tag", "acc1", `{"brand_id":1,"lang":"en_GB!"}`, nil, 400,
			`{"error":{"code":"bad_request","field":"lang","message":"lang: must be a BCP 47 language tag such as it or en-GB"}}`},
		{"lang too long", "acc1", `{"brand_id":1,"lang":"` + strings.Repeat("a", 36) + `"}`, nil, 400,
			`{"error":{"code":"bad_request","field":"lang","message":"lang: must be at most 35 characters"}}`},
		{"lang blank", "acc1", `{"brand_id":1,"lang":""}`, nil, 200, `"default_language":"en"`},
		{"lang the account lacks", "acc1", `{"brand_id":1,"lang":"fr"}`, nil, 200, `"default_language":"en"`},
	} {
		t.Run(r.name, func(t *testing.T) {
			code, out := s.call(r.acc, http.MethodPost, "/internal/engine/site", r.body, r.headers)
			if code != r.code || !strings.Contains(string(out), r.want) || (strings.HasPrefix(r.want, "{") && string(out) != r.want) {
				t.Errorf("%d %s\nwant %d %s", code, out, r.code, r.want)
			}
		})
	}
}

// engineDays is the engine's calendar of acc's property for body, wanting 200.
func engineDays(t *testing.T, s *server, acc, body string) (engineCalendarJSON, map[string]engineDayJSON) {
	t.Helper()
	code, out := s.engine(acc, "calendar", body)
	var env struct {
		Data engineCalendarJSON `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &env); code != 200 || err != nil {
		t.Fatalf("calendar %s: %d %s", body, code, out)
	}
	days := map[string]engineDayJSON{}
	for _, d := range env.Data.Days {
		days[d.Date] = d
	}
	return env.Data, days
}

// TestEngineCalendarDays: each day's availability (free, priced, not past), changeover,
// minimum stay and price, over the range asked.
func TestEngineCalendarDays(t *testing.T) {
	s := newServer(t, "")
	engineFixture(s) // today is 2030-01-10, a Thursday
	cal, days := engineDays(t, s, "acc1", `{"brand_id":2,"property":"21","from":"2030-01-08","months":"1"}`)
	if cal.PropertyID != 21 || cal.Currency != "EUR" || len(cal.Days) != 24 || cal.Days[0].Date != "2030-01-08" || cal.Days[23].Date != "2030-01-31" {
		t.Fatalf("calendar: %d %s, %d days %+v", cal.PropertyID, cal.Currency, len(cal.Days), cal.Days)
	}
	price := func(d engineDayJSON) string {
		if d.Price == nil {
			return "null"
		}
		return *d.Price
	}
	for _, r := range []struct {
		date, why                     string
		available, arrival, departure bool
	}{
		{"2030-01-08", "past", false, false, false},
		{"2030-01-10", "today, a Thursday", true, false, false},
		{"2030-01-11", "a Friday", true, false, false},
		{"2030-01-12", "a Saturday", true, true, true},
		{"2030-01-13", "a Sunday", true, false, true},
		{"2030-01-15", "booked", false, false, false},
		{"2030-01-19", "a Saturday after free nights", true, true, true},
		{"2030-01-20", "a Sunday blocked by an imported feed, the night before free", false, false, true},
		{"2030-01-26", "a Saturday", true, true, true},
		{"2030-01-27", "a Sunday", true, false, true},
	} {
		d := days[r.date]
		if d.Available != r.available || d.Arrival != r.arrival || d.Departure != r.departure || d.MinStay != 2 || price(d) != "80.50" {
			t.Errorf("%s (%s): %+v price %s; want available %v arrival %v departure %v, min_stay 2, 80.50",
				r.date, r.why, d, price(d), r.available, r.arrival, r.departure)
		}
	}
	// Every day a changeover day: a stay may end on the day a booking starts, not on a day
	// whose night before is held, and may start on the booking's check-out day.
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 2, PropertyID: 3, Status: "reserved", Version: 1,
		Checkin: "2030-01-20", Checkout: "2030-01-22", Nights: []string{"2030-01-20", "2030-01-21"}, GrandTotal: "120", Currency: "EUR"})
	_, days = engineDays(t, s, "acc1", `{"brand_id":1,"property":"3","from":"2030-01-19","months":"1"}`)
	for date, want := range map[string][3]bool{"2030-01-19": {true, true, true}, "2030-01-20": {false, false, true},
		"2030-01-21": {false, false, false}, "2030-01-22": {true, true, false}, "2030-01-23": {true, true, true}} {
		if d := days[date]; [3]bool{d.Available, d.Arrival, d.Departure} != want {
			t.Errorf("%s around a booking: %+v, want available, arrival, departure %v", date, d, want)
		}
	}
	cal, _ = engineDays(t, s, "acc1", `{"brand_id":1,"property":3}`)
	if len(cal.Days) != 50 || cal.Days[0].Date != "2030-01-10" || cal.Days[49].Date != "2030-02-28" {
		t.Errorf("default range: %d days, %s … %s", len(cal.Days), cal.Days[0].Date, cal.Days[len(cal.Days)-1].Date)
	}
	if d := cal.Days[0]; !d.Available || !d.Arrival || d.Departure || price(d) != "60.00" {
		t.Errorf("today: %+v %s", d, price(d))
	}
	cal, _ = engineDays(t, s, "acc1", `{"brand_id":1,"property":3,"from":"2030-11-05","months":3}`)
	if len(cal.Days) != 88 || cal.Days[87].Date != "2031-01-31" {
		t.Errorf("over the year's end: %d days, last %s", len(cal.Days), cal.Days[len(cal.Days)-1].Date)
	}
	cal, _ = engineDays(t, s, "acc1", `{"brand_id":1,"property":3,"from":"2030-01-10","months":12}`)
	if len(cal.Days) != 356 || cal.Days[355].Date != "2030-12-31" {
		t.Errorf("12 months: %d days", len(cal.Days))
	}
	cal, _ = engineDays(t, s, "acc1", `{"brand_id":2,"property":"5","from":"2030-02-01","months":"1"}`)
	for _, d := range cal.Days {
		if d.Available || d.Arrival || d.Departure || d.MinStay != 0 || d.Price != nil {
			t.Errorf("a property without rates: %+v", d)
		}
	}
}

// TestEngineCalendarRefusals: each field's rule, and the properties a brand does not sell.
func TestEngineCalendarRefusals(t *testing.T) {
	s := newServer(t, "")
	engineFixture(s)
	bad := func(field, msg string) string {
		return fmt.Sprintf(`{"error":{"code":"bad_request","field":%q,"message":%q}}`, field, field+": "+msg)
	}
	notSold := `{"error":{"code":"not_found","field":"property","message":"property: is not a property this brand sells"}}`
	for _, r := range []struct {
		name, acc, body string
		code            int
		want            string
	}{
		{"property missing", "acc1", `{"brand_id":1}`, 400, bad("property", "is required")},
		{"property blank", "acc1", `{"brand_id":1,"property":""}`, 400, bad("property", "is required")},
		{"property not a number", "acc1", `{"brand_id":1,"property":"V1"}`, 400, bad("property", "must be a number")},
		{"property 0", "acc1", `{"brand_id":1,"property":"0"}`, 400, bad("property", "must be between 1 and 2147483647")},
		{"from not a date", "acc1", `{"brand_id":1,"property":"3","from":"2030-02-30"}`, 400, bad("from", "must be a valid date (YYYY-MM-DD)")},
		{"from not a string", "acc1", `{"brand_id":1,"property":"3","from":20300201}`, 400, bad("from", "must be a valid date (YYYY-MM-DD)")},
		{"from past the horizon", "acc1", `{"brand_id":1,"property":"3","from":"2032-01-11"}`, 400,
			bad("from", "must be at most 730 days after today (the calendar's horizon)")},
		{"from at the horizon", "acc1", `{"brand_id":1,"property":"3","from":"2032-01-10","months":"1"}`, 200, ""},
		{"from in the past", "acc1", `{"brand_id":1,"property":"3","from":"2029-12-01"}`, 200, ""},
		{"months 0", "acc1", `{"brand_id":1,"property":"3","months":"0"}`, 400, bad("months", "must be between 1 and 12")},
		{"months 13", "acc1", `{"brand_id":1,"property":"3","months":13}`, 400, bad("months", "must be between 1 and 12")},
		{"months not a number", "acc1", `{"brand_id":1,"property":"3","months":"two"}`, 400, bad("months", "must be a number")},
		{"months a fraction", "acc1", `{"brand_id":1,"property":"3","months":"1.5"}`, 400, bad("months", "must be a whole number")},
		{"months blank", "acc1", `{"brand_id":1,"property":"3","months":""}`, 200, ""},
		{"brand_id missing", "acc1", `{"property":"3"}`, 400, bad("brand_id", "is required")},
		{"the first bad field is named", "acc1", `{"property":"x","months":"0"}`, 400, bad("property", "must be a number")},
		{"a brand the account lacks", "acc1", `{"brand_id":3,"property":"3"}`, 404,
			`{"error":{"code":"not_found","field":"brand_id","message":"brand_id: is not a brand of this account"}}`},
		{"a property the brand does not list", "acc1", `{"brand_id":1,"property":"4"}`, 404, notSold},
		{"the same property through a brand listing none", "acc1", `{"brand_id":2,"property":"4"}`, 200, ""},
		{"an unknown property", "acc1", `{"brand_id":2,"property":"99"}`, 404, notSold},
		{"a deleted property", "acc1", `{"brand_id":2,"property":"6"}`, 404, notSold},
		{"another account's property", "acc1", `{"brand_id":2,"property":"9"}`, 404, notSold},
		{"its own account's", "acc2", `{"brand_id":1,"property":"9"}`, 200, ""},
		{"acc1's property from acc2", "acc2", `{"brand_id":1,"property":"3"}`, 404, notSold},
	} {
		t.Run(r.name, func(t *testing.T) {
			code, out := s.engine(r.acc, "calendar", r.body)
			if code != r.code || (r.want != "" && out != r.want) {
				t.Errorf("%d %s\nwant %d %s", code, out, r.code, r.want)
			}
		})
	}
}

// TestEngineCalendarIsGetcalendar: the engine's calendar reads the calendar's one rule: from
// today on, a day is available exactly when getcalendar says so, at its price and minimum
// stay, and arrival and departure only on its check-in and check-out days.
func TestEngineCalendarIsGetcalendar(t *testing.T) {
	s := newServer(t, "")
	engineFixture(s)
	p := property("acc1", 30, "Seasons", "Lucca", 2, 2, 4, "100", false)
	p.Rates.Rate.Weekend = "130"
	p.Rates.Setting.ApplyWeekendPrice = true
	p.Rates.Setting.DefaultAllowCheckout = "Friday,Saturday,Sunday"
	p.Rates.Seasons = []contract.Season{{Name: "Summer", MinimumStay: 7, StartDate: "2030-02-10", EndDate: "2030-03-20",
		Prices: contract.Prices{Daily: "150.25"}, AllowCheckin: "Saturday"}}
	s.load(contract.PropertyUpdated, p)
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 2, PropertyID: 30, Status: "reserved", Version: 1,
		Checkin: "2030-02-01", Checkout: "2030-02-04", Nights: []string{"2030-02-01", "2030-02-02", "2030-02-03"}, GrandTotal: "1", Currency: "EUR"})
	cal, _ := engineDays(t, s, "acc1", `{"brand_id":2,"property":30,"months":3}`)
	b := calendarDays(t, s, "acc1", 30, "2030-01-10", "2030-03-31")
	if len(cal.Days) != len(b) {
		t.Fatalf("%d days, getcalendar %d", len(cal.Days), len(b))
	}
	for i, d := range cal.Days {
		g := b[d.Date]
		in := g.CheckInOutType == CheckInOut || g.CheckInOutType == CheckInOnly
		out := g.CheckInOutType == CheckInOut || g.CheckInOutType == CheckOutOnly
		prevFree := i > 0 && cal.Days[i-1].Available
		if d.Available != (g.Availability == "true") || d.MinStay != g.MinimumStay || d.Price == nil ||
			!decimal.RequireFromString(*d.Price).Equal(decimal.RequireFromString(string(g.Price))) ||
			d.Arrival != (d.Available && in) || d.Departure != (prevFree && out) {
			t.Errorf("%s: engine %+v, getcalendar %+v", d.Date, d, g)
		}
	}
}

// TestEngineIsolatedUnderConcurrency: many clients of two accounts read the engine's routes
// at once while both accounts' properties and bookings change: every answer is the caller's,
// and a property of the other account is never found.
func TestEngineIsolatedUnderConcurrency(t *testing.T) {
	s := newServer(t, "")
	engineFixture(s)
	s.load(contract.PropertyUpdated, property("acc2", 3, "Acc2 three", "Bari", 1, 1, 2, "999", false))
	const clients, rounds = 16, 25
	var wg sync.WaitGroup
	errs := make(chan string, clients*rounds*5)
	wg.Add(1)
	go func() { // writers: new versions of properties and bookings of both accounts
		defer wg.Done()
		for v := int64(2); v < 2+rounds; v++ {
			for _, p := range []contract.Property{property("acc1", 3, "Casa Blu", "Pisa", 1, 1, 2, "60", false),
				property("acc2", 3, "Acc2 three", "Bari", 1, 1, 2, "999", false), property("acc2", 9, "Other", "Rome", 5, 5, 10, "900", false)} {
				p.Version = v
				if err := s.view.Load(contract.PropertyUpdated, mustJSON(p)); err != nil {
					errs <- err.Error()
				}
			}
			night := pricingDate(2030, 1, 10+int(v))
			for i, acc := range []string{"acc1", "acc2"} {
				b := contract.Booking{AccountID: acc, BookingID: 100 + v, PropertyID: 3, Status: "reserved", Version: 1, Checkin: night,
					Checkout: pricingDate(2030, 1, 11+int(v)), Nights: []string{night}, GrandTotal: "1", Currency: "EUR"}
				b.BookingID += int64(i) * 1000
				if err := s.view.Load(contract.BookingReserved, mustJSON(b)); err != nil {
					errs <- err.Error()
				}
			}
		}
	}()
	for i := 0; i < clients; i++ {
		acc := []string{"acc1", "acc2"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				for _, q := range []struct{ name, body string }{
					{"origins", `{}`}, {"site", `{"brand_id":1}`},
					{"calendar", `{"brand_id":1,"property":"3","from":"2030-01-10","months":"2"}`},
					{"calendar", `{"brand_id":1,"property":"9"}`},
				} {
					code, body := s.engine(acc, q.name, q.body)
					switch {
					case acc == "acc1" && q.body == `{"brand_id":1,"property":"9"}`:
						if code != 404 {
							errs <- fmt.Sprintf("acc1 reads acc2's property 9: %d %s", code, body)
						}
					case code != 200:
						errs <- fmt.Sprintf("%s %s %s: %d %s", acc, q.name, q.body, code, body)
					case acc == "acc1" && (strings.Contains(body, "Other") || strings.Contains(body, "Acc2") || strings.Contains(body, "999")):
						errs <- fmt.Sprintf("acc1 %s sees acc2: %s", q.name, body)
					case acc == "acc2" && (strings.Contains(body, "Aurora") || strings.Contains(body, "Casa Blu") || strings.Contains(body, `"60.00"`)):
						errs <- fmt.Sprintf("acc2 %s sees acc1: %s", q.name, body)
					case q.name == "calendar" && acc == "acc2" && strings.Contains(body, `"property_id":3`) && !strings.Contains(body, `"999.00"`):
						errs <- fmt.Sprintf("acc2's calendar of 3 without its price: %s", body)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func pricingDate(y, m, d int) string { return fmt.Sprintf("%04d-%02d-%02d", y, m, d) }
