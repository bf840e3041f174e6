package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// The tests' clock is 2030-01-10 12:00 UTC, a Thursday (newServer). 2030-02-04 is a
// Monday, 2030-02-08 a Friday, 2030-02-09 a Saturday.

// searchProp is a bookable property: Lucca, Villa, 2 bedrooms, 4 guests, 100 a night,
// minimum stay 1, any day, one photo; mod changes it.
func searchProp(acc string, id int64, name string, mod func(p *contract.Property)) contract.Property {
	p := contract.Property{AccountID: acc, PropertyID: id, Version: 1,
		Content: contract.Content{Name: name, City: "Lucca", Type: "Villa", Brief: "Brief of " + name, Bedrooms: 2, Bathrooms: 1,
			MaxGuest: 4, Address: "Via Roma 1", Country: "IT"},
		Photos:    map[string]contract.Photo{"9": {PhotoID: 9, Key: fmt.Sprintf("p%d", id)}},
		Rates:     &contract.Rates{Rate: contract.Prices{Daily: "100"}, MinimumStay: 1},
		Amenities: &contract.Amenities{Items: []contract.Amenity{}},
		Taxes:     []contract.Tax{}, Services: []contract.Service{},
	}
	if mod != nil {
		mod(&p)
	}
	return p
}

// searchIDs runs a search of acc and returns the listed ids and the answer.
func searchIDs(t *testing.T, s *server, acc, body string) ([]string, searchAnswer) {
	t.Helper()
	code, out := s.call(acc, http.MethodPost, "/internal/read/search-rental", body, nil)
	if code != http.StatusOK {
		t.Fatalf("search %s: %d %s", body, code, out)
	}
	var ans searchAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("search %s: %v %s", body, err, out)
	}
	ids := []string{}
	for _, p := range ans.Properties {
		ids = append(ids, p.ID)
	}
	return ids, ans
}

// filterFixture is account f1:
//
//	1 Alpha   Lucca    Villa      2 bedrooms 100  featured, pets, Wifi (1) + Air conditioning (5), tag 1, category 10
//	2 Bravo   Pisa     Apartment  3 bedrooms  80  smoking, Parking (6), category 10
//	3 Charlie Lucca    Apartment  1 bedroom  150  Ocean view (7), 10 % off 3+ nights
//	4 Delta   Florence Villa      4 bedrooms 120  8 guests, tag 1
//	5 Echo    Rome     Villa      2 bedrooms  —   no rates
func filterFixture(s *server) {
	st := contract.DefaultSettings("f1")
	st.Version = 1
	st.Categories = []contract.Category{{ID: 10, Name: "Best", ShowSearchEngine: true, Properties: []int64{2, 1}}}
	st.Tags = []contract.Tag{{ID: 1, Name: "Family", Properties: []int64{4, 1}}}
	s.load(contract.SettingsUpdated, st)
	s.load(contract.PropertyUpdated, searchProp("f1", 1, "Alpha", func(p *contract.Property) {
		p.Content.IsFeatured, p.Content.AllowPet = true, bp(true)
		p.Amenities.Items = []contract.Amenity{{ID: 1, Name: "Wifi", Type: 1}, {ID: 5, Name: "Air conditioning", Type: 1, Class: "Cooling"}}
	}))
	s.load(contract.PropertyUpdated, searchProp("f1", 2, "Bravo", func(p *contract.Property) {
		p.Content.City, p.Content.Type, p.Content.Bedrooms, p.Content.AllowSmoking = "Pisa", "Apartment", 3, bp(true)
		p.Rates.Rate.Daily = "80"
		p.Amenities.Items = []contract.Amenity{{ID: 6, Name: "Private parking", Type: 1}}
	}))
	s.load(contract.PropertyUpdated, searchProp("f1", 3, "Charlie", func(p *contract.Property) {
		p.Content.Type, p.Content.Bedrooms, p.Content.AllowPet = "Apartment", 1, bp(false)
		p.Rates.Rate.Daily = "150"
		p.Rates.LOS = []contract.LOS{{Days: 3, Discount: "10"}}
		p.Amenities.Items = []contract.Amenity{{ID: 7, Name: "Ocean view", Type: 1}}
	}))
	s.load(contract.PropertyUpdated, searchProp("f1", 4, "Delta", func(p *contract.Property) {
		p.Content.City, p.Content.Bedrooms, p.Content.MaxGuest, p.Content.Address = "Florence", 4, 8, "Piazza Duomo 2"
		p.Rates.Rate.Daily = "120"
	}))
	s.load(contract.PropertyUpdated, searchProp("f1", 5, "Echo", func(p *contract.Property) {
		p.Content.City, p.Rates = "Rome", nil
	}))
	// Another account's property never shows.
	s.load(contract.PropertyUpdated, searchProp("other", 6, "Alpha", nil))
}

func TestSearchFilters(t *testing.T) {
	s := newServer(t, "https://media.example")
	filterFixture(s)
	const stay = `"checkin":"2030-02-04","checkout":"2030-02-08"`
	for _, c := range []struct{ name, body, want string }{
		{"no filter: featured first, then by name", `{}`, "1,2,3,4,5"},
		{"keyterm in the name, any case", `{"keyterm":"ALPH"}`, "1"},
		{"keyterm in the city", `{"keyterm":"lucca"}`, "1,3"},
		{"keyterm in the address", `{"keyterm":"duomo"}`, "4"},
		{"keyterm in the type", `{"keyterm":"apartment"}`, "2,3"},
		{"keyterm not in the brief", `{"keyterm":"brief of"}`, ""},
		{"city, any case", `{"city":" LUCCA "}`, "1,3"},
		{"bedrooms at least", `{"bedrooms":"3"}`, "2,4"},
		{"bedrooms 0 is any", `{"bedrooms":"0"}`, "1,2,3,4,5"},
		{"nightly price without dates (lowest over a year)", `{"minprice":"90","maxprice":"130"}`, "1,4"},
		{"minprice alone leaves out unpriced", `{"minprice":"0"}`, "1,2,3,4"},
		{"stay's nightly average with dates", `{` + stay + `,"minprice":"130"}`, "3"},
		{"category", `{"category_id":"10"}`, "1,2"},
		{"tag", `{"tag_id":"1"}`, "1,4"},
		{"category and tag", `{"category_id":"10","tag_id":"1"}`, "1"},
		{"featured", `{"isfeatured":"1"}`, "1"},
		{"featured 0 is any", `{"isfeatured":"0"}`, "1,2,3,4,5"},
		{"pets", `{"allowpet":"1"}`, "1"},
		{"smoking", `{"allowsmoking":"true"}`, "2"},
		{"amenity by name", `{"amenity":["WIFI"]}`, "1"},
		{"amenity by id", `{"amenity":["7"]}`, "3"},
		{"every amenity listed", `{"amenity":["1","air conditioning"]}`, "1"},
		{"amenity nobody has", `{"amenity":["1","7"]}`, ""},
		{"amenity as one string", `{"amenity":"Private parking"}`, "2"},
		{"airconditioner flag", `{"airconditioner":"1"}`, "1"},
		{"parking flag", `{"parking":"1"}`, "2"},
		{"ocean flag", `{"ocean":"1"}`, "3"},
		{"one property", `{"property_id":"3"}`, "3"},
		{"guests against maxguest", `{"numberadults":"3","children":"2"}`, "4"},
		{"discounts without dates: a length-of-stay tier", `{"discountsonly":"1"}`, "3"},
		{"discounts with dates: the stay's quote has one", `{` + stay + `,"discountsonly":"1"}`, "3"},
		{"dates leave out properties without rates", `{` + stay + `}`, "1,2,3,4"},
		{"include[] and includebookingprice are accepted", `{"include":["x"],"includebookingprice":"1"}`, "1,2,3,4,5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ids, ans := searchIDs(t, s, "f1", c.body)
			if got := strings.Join(ids, ","); got != c.want {
				t.Fatalf("%s: got %q, want %q", c.body, got, c.want)
			}
			if ans.PropertyCount != len(ids) {
				t.Fatalf("property_count %d for %d listed", ans.PropertyCount, len(ids))
			}
		})
	}
}

func TestSearchSorts(t *testing.T) {
	s := newServer(t, "")
	filterFixture(s)
	for _, c := range []struct{ body, want string }{
		{`{"sorttype":"desc"}`, "1,5,4,3,2"}, // featured stays first
		{`{"sortby":"1"}`, "1,2,3,4,5"},
		{`{"sortby":"2"}`, "1,2,3,4,5"},
		{`{"sortby":"2","sorttype":"DESC"}`, "5,4,3,2,1"},
		{`{"sortby":"3","sorttype":"asc"}`, "3,1,5,2,4"}, // equal bedrooms by id
		{`{"sortby":"3","sorttype":"desc"}`, "4,2,1,5,3"},
		{`{"sortby":"4"}`, "2,1,4,3,5"}, // unpriced last
		{`{"sortby":"4","sorttype":"desc"}`, "3,4,1,2,5"},
		{`{"sortby":"4","checkin":"2030-02-04","checkout":"2030-02-08"}`, "2,1,4,3"},
		{`{"sortby":"4","sorttype":"desc","checkin":"2030-02-04","checkout":"2030-02-08"}`, "3,4,1,2"},
	} {
		if ids, _ := searchIDs(t, s, "f1", c.body); strings.Join(ids, ",") != c.want {
			t.Errorf("%s: got %v, want %s", c.body, ids, c.want)
		}
	}
}

func TestSearchPaging(t *testing.T) {
	s := newServer(t, "")
	filterFixture(s)
	for _, c := range []struct {
		body                         string
		want                         string
		count, pages, page, off, lim int
	}{
		{`{"limit":"2"}`, "1,2", 5, 3, 1, 0, 2},
		{`{"limit":"2","page":"2"}`, "3,4", 5, 3, 2, 2, 2},
		{`{"limit":"2","page":"3"}`, "5", 5, 3, 3, 4, 2}, // the last page
		{`{"limit":"2","page":"4"}`, "", 5, 3, 4, 6, 2},  // beyond the end
		{`{}`, "1,2,3,4,5", 5, 1, 1, 0, 10},              // Settings.Search.DefaultLimit
		{`{"limit":"100","keyterm":"none"}`, "", 0, 0, 1, 0, 100},
		{`{"limit":"2","page":"2","checkin":"2030-02-04","checkout":"2030-02-08"}`, "3,4", 4, 2, 2, 2, 2},
	} {
		ids, a := searchIDs(t, s, "f1", c.body)
		if strings.Join(ids, ",") != c.want || a.PropertyCount != c.count || a.PageCount != c.pages || a.Page != c.page ||
			a.Offset != c.off || a.Limit != c.lim {
			t.Errorf("%s: %v count %d pages %d page %d offset %d limit %d", c.body, ids, a.PropertyCount, a.PageCount, a.Page, a.Offset, a.Limit)
		}
	}
}

// TestSearchStayRules: a stay that one property cannot take, for each reason, leaves it
// out while the control property is listed; a stay that avoids the reason lists it.
func TestSearchStayRules(t *testing.T) {
	s := newServer(t, "")
	stayRulesFixture(s)
	const base = `"numberadults":"2","children":"1"`
	for _, c := range []struct {
		reason   string
		id       string
		refused  string // a stay the property cannot take
		accepted string // a stay it can
	}{
		{"booked night", "2", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-02-04","checkout":"2030-02-06"`},
		{"blocked night", "3", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-02-04","checkout":"2030-02-07"`},
		{"minimum stay", "4", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-02-04","checkout":"2030-02-09"`},
		{"season's minimum stay", "5", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-01-28","checkout":"2030-01-31"`},
		{"check-in day", "6", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-02-09","checkout":"2030-02-12"`},
		{"check-out day", "7", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-02-04","checkout":"2030-02-09"`},
		{"advance notice", "8", `"checkin":"2030-02-04","checkout":"2030-02-08"`, `"checkin":"2030-02-11","checkout":"2030-02-14"`},
		{"booking horizon", "9", `"checkin":"2030-02-11","checkout":"2030-02-14"`, `"checkin":"2030-02-04","checkout":"2030-02-08"`},
		{"past check-in", "1", `"checkin":"2030-01-09","checkout":"2030-01-12"`, `"checkin":"2030-01-10","checkout":"2030-01-12"`},
	} {
		t.Run(c.reason, func(t *testing.T) {
			ids, _ := searchIDs(t, s, "r1", `{`+base+`,`+c.refused+`}`)
			if contains(ids, c.id) || c.id != "1" && !contains(ids, "1") {
				t.Errorf("%s: refused stay lists %v (want %s out, 1 in)", c.reason, ids, c.id)
			}
			if ids, _ = searchIDs(t, s, "r1", `{`+base+`,`+c.accepted+`}`); !contains(ids, c.id) {
				t.Errorf("%s: accepted stay lists %v (want %s)", c.reason, ids, c.id)
			}
		})
	}
	t.Run("guests", func(t *testing.T) {
		if ids, _ := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-06","numberadults":"3"}`); contains(ids, "10") || !contains(ids, "1") {
			t.Errorf("3 guests: %v", ids)
		}
		if ids, _ := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-06","numberadults":"2"}`); !contains(ids, "10") {
			t.Errorf("2 guests: %v", ids)
		}
	})
	t.Run("children", func(t *testing.T) {
		if ids, _ := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-06","numberadults":"1","children":"1"}`); contains(ids, "11") {
			t.Errorf("with a child: %v", ids)
		}
		if ids, _ := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-06","numberadults":"2"}`); !contains(ids, "11") {
			t.Errorf("adults only: %v", ids)
		}
	})
	t.Run("flexible finds a shifted stay", func(t *testing.T) {
		// Booked has 02-06 taken: 02-04→02-08 moved by ±1 day is not free; moved by 2 days it is,
		// both ways (02-02→02-06 and 02-07→02-11), and the earlier shift is preferred.
		if ids, _ := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-08","flexible":"1","property_id":"2"}`); len(ids) != 0 {
			t.Errorf("±1: %v", ids)
		}
		_, a := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-08","flexible":"2","property_id":"2"}`)
		if len(a.Properties) != 1 || a.Properties[0].Checkin != "2030-02-02" || a.Properties[0].Checkout != "2030-02-06" {
			t.Errorf("±2: %+v", a.Properties)
		}
		// The stay as asked is preferred when it is free.
		_, a = searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-08","flexible":"7","property_id":"1"}`)
		if len(a.Properties) != 1 || a.Properties[0].Checkin != "2030-02-04" {
			t.Errorf("±7 control: %+v", a.Properties)
		}
	})
	t.Run("a cancelled booking and a deleted block free their nights", func(t *testing.T) {
		s.load(contract.BookingCancelled, contract.Booking{AccountID: "r1", BookingID: 1, PropertyID: 2, Status: "cancelled", Version: 2,
			Nights: []string{}})
		s.load(contract.BlockDeleted, contract.Block{AccountID: "r1", BlockID: 1, PropertyID: 3, StartDate: "2030-02-07",
			EndDate: "2030-02-10", Deleted: true, Version: 2})
		ids, _ := searchIDs(t, s, "r1", `{"checkin":"2030-02-04","checkout":"2030-02-08"}`)
		if !contains(ids, "2") || !contains(ids, "3") {
			t.Errorf("after cancel and unblock: %v", ids)
		}
	})
}

// stayRulesFixture is account r1: a control property and one that a stay of 2030-02-04 to
// 2030-02-08 for two adults and a child breaks for each reason.
func stayRulesFixture(s *server) {
	s.load(contract.PropertyUpdated, searchProp("r1", 1, "Control", nil))
	s.load(contract.PropertyUpdated, searchProp("r1", 2, "Booked", nil))
	s.load(contract.BookingReserved, contract.Booking{AccountID: "r1", BookingID: 1, PropertyID: 2, Status: "reserved", Version: 1,
		Checkin: "2030-02-06", Checkout: "2030-02-07", Nights: []string{"2030-02-06"}})
	s.load(contract.PropertyUpdated, searchProp("r1", 3, "Blocked", nil))
	s.load(contract.BlockCreated, contract.Block{AccountID: "r1", BlockID: 1, PropertyID: 3, StartDate: "2030-02-07",
		EndDate: "2030-02-10", Version: 1})
	s.load(contract.PropertyUpdated, searchProp("r1", 4, "MinStay", func(p *contract.Property) { p.Rates.MinimumStay = 5 }))
	s.load(contract.PropertyUpdated, searchProp("r1", 5, "SeasonMinStay", func(p *contract.Property) {
		p.Rates.Seasons = []contract.Season{{Name: "Winter", MinimumStay: 6, StartDate: "2030-02-01", EndDate: "2030-02-28",
			Prices: contract.Prices{Daily: "90"}}}
	}))
	s.load(contract.PropertyUpdated, searchProp("r1", 6, "CheckinDay", func(p *contract.Property) {
		p.Rates.Setting.DefaultAllowCheckin = "Saturday"
	}))
	s.load(contract.PropertyUpdated, searchProp("r1", 7, "CheckoutDay", func(p *contract.Property) {
		p.Rates.Setting.DefaultAllowCheckout = "Saturday"
	}))
	notice := 30
	s.load(contract.PropertyUpdated, searchProp("r1", 8, "Notice", func(p *contract.Property) {
		p.Rates.Setting.AdvancedNoticeBookingFrom = &notice
	}))
	s.load(contract.PropertyUpdated, searchProp("r1", 9, "Horizon", func(p *contract.Property) { p.Rates.Setting.AcceptBookingUpto = 1 }))
	s.load(contract.PropertyUpdated, searchProp("r1", 10, "Guests", func(p *contract.Property) { p.Content.MaxGuest = 2 }))
	s.load(contract.PropertyUpdated, searchProp("r1", 11, "NoChildren", func(p *contract.Property) { p.Content.AllowChildren = bp(false) }))

}

// TestStayRulesAgreeWithQuote: the search's rule check (stayRules) accepts exactly the
// stays pricing.Quote accepts, over every check-in from 2030-01-05 to 2030-03-20, stays of
// 1 to 9 nights and three parties, on every property of the rules fixture.
func TestStayRulesAgreeWithQuote(t *testing.T) {
	s := newServer(t, "")
	stayRulesFixture(s)
	now := s.api.now()
	parties := [][2]int{{2, 1}, {3, 0}, {1, 0}}
	checked := 0
	for _, p := range s.view.Properties("r1") {
		r := newRecord(p)
		for in := pricing.MustDate("2030-01-05"); in.Before(pricing.MustDate("2030-03-21")); in = in.AddDays(1) {
			for n := 1; n <= 9; n++ {
				for _, g := range parties {
					out := in.AddDays(n)
					_, err := pricing.Quote(p.Pricing, pricing.Request{Checkin: in, Checkout: out, Adults: g[0], Children: g[1], Now: now})
					if got := stayRules(r, in, out, g[0], g[1], now); got != (err == nil) {
						t.Fatalf("%s %s→%s %v: stayRules %v, Quote %v", p.Snap.Content.Name, in, out, g, got, err)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d stays checked", checked)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSearchAnswer: key order (PHP clients read positionally), the summary, and with dates
// the stay's totals from the quote getinfo gives (default taxes and services included).
func TestSearchAnswer(t *testing.T) {
	s := newServer(t, "")
	s.load(contract.PropertyUpdated, searchProp("a1", 1, "Alpha", func(p *contract.Property) {
		p.Content.IsFeatured = true
		p.Taxes = []contract.Tax{{Name: "VAT", Type: 1, Amount: "10", Def: true}}
		p.Services = []contract.Service{{Name: "Cleaning", Type: 1, Applicable: 1, Unit: 1, Amount: "50", Def: true}}
	}))
	code, out := s.call("a1", http.MethodPost, "/internal/read/search-rental", `{"checkin":"2030-02-04","checkout":"2030-02-08"}`,
		map[string]string{HeaderPublicBase: "https://site.example/"})
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, out)
	}
	n := decodeOrdered(t, out)
	wantKeys(t, "answer", n, "property_count", "page_count", "page", "offset", "limit", "image_path", "properties")
	if n.first(t).str() != "1" || n.get(t, "image_path").str() != "https://site.example/media/" {
		t.Errorf("answer: %s", out)
	}
	p := n.get(t, "properties").first(t)
	wantKeys(t, "property", p, "id", "name", "type", "brief", "address", "city", "bedroom", "bathroom", "maxguest", "isfeatured",
		"allowpet", "allowsmoking", "latitude", "longitude", "minprice", "currency", "image_path", "image_small", "image_317_179",
		"image_h_179", "image_w_800", "checkin", "checkout", "qtyofnights", "nightly", "totalRent", "grandTotal",
		// the WordPress plugin's fields, appended (wordpress_test.go)
		"base_name", "rateLabel", "rateValue", "rateToolTip", "discounttexts", "discountdescription", "bookingprice")
	for k, want := range map[string]string{"id": "1", "isfeatured": "1", "minprice": "100.00", "currency": "USD",
		"image_path": "https://site.example/media/p1/original.jpg", "qtyofnights": "4", "nightly": "100.00", "totalRent": "400.00",
		"grandTotal": "490.00"} {
		if got := p.get(t, k).str(); got != want {
			t.Errorf("%s = %q, want %q (%s)", k, got, want, out)
		}
	}
	// Without dates: no stay fields.
	_, out = s.call("a1", http.MethodPost, "/internal/read/search-rental", `{}`, nil)
	if strings.Contains(string(out), "totalRent") || !strings.Contains(string(out), `"image_path":"/media/p1/original.jpg"`) {
		t.Errorf("without dates: %s", out)
	}
	// GET with the query, as edge sent reads before.
	if code, out := s.call("a1", http.MethodGet, "/internal/read/search-rental?checkin=2030-02-04&checkout=2030-02-08", "", nil); code != 200 ||
		!strings.Contains(string(out), `"grandTotal":490.00`) {
		t.Errorf("GET: %d %s", code, out)
	}
}

func TestSearchErrors(t *testing.T) {
	s := newServer(t, "")
	filterFixture(s)
	for _, c := range []struct{ body, field string }{
		{`{"checkin":"2030-02-08","checkout":"2030-02-04"}`, "checkout"},
		{`{"checkin":"2030-02-08","checkout":"2030-02-08"}`, "checkout"},
		{`{"checkin":"2030-02-08"}`, "checkout"},
		{`{"checkout":"2030-02-08"}`, "checkin"},
		{`{"checkin":"2030-02-30","checkout":"2030-03-02"}`, "checkin"},
		{`{"checkin":"2030-01-01","checkout":"2031-06-01"}`, "checkout"},
		{`{"flexible":"8"}`, "flexible"},
		{`{"sortby":"7"}`, "sortby"},
		{`{"sorttype":"up"}`, "sorttype"},
		{`{"page":"0"}`, "page"},
		{`{"limit":"101"}`, "limit"},
		{`{"limit":"abc"}`, "limit"},
		{`{"bedrooms":"-1"}`, "bedrooms"},
		{`{"minprice":"200","maxprice":"100"}`, "maxprice"},
		{`{"minprice":"cheap"}`, "minprice"},
		{`{"category_id":"99"}`, "category_id"},
		{`{"tag_id":"99"}`, "tag_id"},
		{`{"isfeatured":"maybe"}`, "isfeatured"},
		{`{"numberadults":"-2"}`, "numberadults"},
		{`{"amenity":[{"x":1}]}`, "amenity[0]"},
		{`{"keyterm":"` + strings.Repeat("x", 201) + `"}`, "keyterm"},
		{`{"property_id":"abc"}`, "property_id"},
	} {
		code, out := s.call("f1", http.MethodPost, "/internal/read/search-rental", c.body, nil)
		if code != http.StatusBadRequest || !strings.Contains(string(out), `"`+c.field+``) {
			t.Errorf("%s: %d %s (want 400 naming %s)", c.body, code, out, c.field)
		}
	}
	if code, out := s.call("f1", http.MethodPost, "/internal/read/search-rental", `{"property_id":"6"}`, nil); code != http.StatusNotFound ||
		!strings.Contains(string(out), `"status":16`) {
		t.Errorf("another account's property: %d %s", code, out)
	}
}

// TestSearchConcurrentWithUpdates: searches running while properties, bookings and
// settings change never fail and never list another account's property.
func TestSearchConcurrentWithUpdates(t *testing.T) {
	s := newServer(t, "")
	filterFixture(s)
	stop, written := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(written)
		for v := int64(2); ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			b, _ := json.Marshal(searchProp("f1", 2, "Bravo", func(p *contract.Property) { p.Version = v }))
			_ = s.view.Load(contract.PropertyUpdated, b)
			bk, _ := json.Marshal(contract.Booking{AccountID: "f1", BookingID: v, PropertyID: 1, Version: 1, Status: "reserved",
				Nights: []string{"2030-03-01"}})
			_ = s.view.Load(contract.BookingReserved, bk)
		}
	}()
	var wg sync.WaitGroup
	var errs sync.Map
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				code, out := s.call("f1", http.MethodPost, "/internal/read/search-rental", `{"checkin":"2030-02-04","checkout":"2030-02-08"}`, nil)
				var a searchAnswer
				if code != 200 || json.Unmarshal(out, &a) != nil || a.PropertyCount != 4 {
					errs.Store(string(out), code)
				}
				for _, p := range a.Properties {
					if p.ID == "6" {
						errs.Store("other account listed", 0)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-written
	errs.Range(func(k, v any) bool { t.Errorf("%v: %v", v, k); return true })
}

// BenchmarkSearch1000: search-rental with dates over 1 000 properties through the Fiber
// app (no network), the in-process part of the bench's figure.
func BenchmarkSearch1000(b *testing.B) {
	s := newServer(&testing.T{}, "")
	for i := int64(1); i <= 1000; i++ {
		p := searchProp("b1", i, fmt.Sprintf("Villa %04d", i), func(p *contract.Property) {
			p.Content.Bedrooms = int(i % 5)
			p.Rates.Rate.Daily = fmt.Sprint(80 + i%100)
		})
		data, _ := json.Marshal(p)
		if err := s.view.Load(contract.PropertyUpdated, data); err != nil {
			b.Fatal(err)
		}
	}
	// b2: the same 1 000 properties, and a brand of 50 of them (its website's search).
	st := contract.DefaultSettings("b2")
	st.Version = 1
	st.Brands = []contract.Brand{{ID: 1, Name: "Fifty", Domains: []string{"fifty.example"}}}
	for i := int64(1); i <= 1000; i++ {
		data, _ := json.Marshal(searchProp("b2", i, fmt.Sprintf("Villa %04d", i), nil))
		if err := s.view.Load(contract.PropertyUpdated, data); err != nil {
			b.Fatal(err)
		}
		if i%20 == 0 {
			st.Brands[0].Properties = append(st.Brands[0].Properties, i)
		}
	}
	if err := s.view.Load(contract.SettingsUpdated, mustJSON(st)); err != nil {
		b.Fatal(err)
	}
	kept := s.api.answers
	for _, c := range []struct{ name, acc, body string }{
		{"dates", "b1", `{"checkin":"2030-02-04","checkout":"2030-02-11","numberadults":"2"}`},
		{"dates-by-price", "b1", `{"checkin":"2030-02-04","checkout":"2030-02-11","numberadults":"2","sortby":"4"}`},
		{"no-dates", "b1", `{"bedrooms":"2"}`},
		{"dates-brand-of-50", "b2", `{"checkin":"2030-02-04","checkout":"2030-02-11","numberadults":"2","domain":"https://www.fifty.example/"}`},
	} {
		// The search computed each time (no answer kept), then its kept answer served.
		for _, mode := range []string{"", "kept-"} {
			s.api.answers = map[string]*answers{"": newAnswers(0), "kept-": kept}[mode]
			b.Run(mode+c.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if code, out := s.call(c.acc, http.MethodPost, "/internal/read/search-rental", c.body, nil); code != 200 {
						b.Fatalf("%d %s", code, out)
					}
				}
			})
		}
	} // Another stay at each search: no search record has decided it before, no answer is kept.
	s.api.answers = newAnswers(0)
	b.Run("dates-each-new", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			in := pricing.MustDate("2030-02-04").AddDays(i % 300)
			body := fmt.Sprintf(`{"checkin":%q,"checkout":%q,"numberadults":"2"}`, in, in.AddDays(7))
			if code, out := s.call("b1", http.MethodPost, "/internal/read/search-rental", body, nil); code != 200 {
				b.Fatalf("%d %s", code, out)
			}
		}
	})
}

func TestPropertyRelated(t *testing.T) {
	s := newServer(t, "")
	add := func(id int64, name, city, typ string, guests int, daily string) {
		s.load(contract.PropertyUpdated, searchProp("g1", id, name, func(p *contract.Property) {
			p.Content.City, p.Content.Type, p.Content.MaxGuest, p.Rates.Rate.Daily = city, typ, guests, daily
		}))
	}
	add(1, "Base", "Lucca", "Villa", 4, "100")
	add(2, "City and type", "Lucca", "Villa", 5, "110")
	add(3, "City", "lucca", "Apartment", 4, "100")
	add(4, "Type", "Siena", "Villa", 4, "95")
	add(5, "Too big", "Lucca", "Villa", 7, "100")
	add(6, "Too dear", "Lucca", "Villa", 4, "140")
	add(7, "Neither", "Siena", "Apartment", 4, "100")
	add(8, "Type, closer price", "Siena", "villa", 4, "100")
	for _, c := range []struct{ body, want string }{
		{`{"property_id":"1"}`, "2,3,8,4"},
		{`{"propertyId":"1","limit":"2"}`, "2,3"},
		// Siena Apartment: same city as 8 and 4 (8's price is closer), same type as 3.
		{`{"property_id":"7"}`, "8,4,3"},
	} {
		code, out := s.call("g1", http.MethodPost, "/internal/read/get-property-related", c.body, nil)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.body, code, out)
		}
		n := decodeOrdered(t, out)
		wantKeys(t, "answer", n, "property_related", "properties")
		var a relatedAnswer
		_ = json.Unmarshal(out, &a)
		var ids, ids2 []string
		for i := range a.Properties {
			ids, ids2 = append(ids, a.Properties[i].ID), append(ids2, a.PropertyRelated.Properties[i].ID)
		}
		if strings.Join(ids, ",") != c.want || strings.Join(ids2, ",") != c.want {
			t.Errorf("%s: properties %v, property_related %v, want %s", c.body, ids, ids2, c.want)
		}
	}
	for body, want := range map[string]int{`{}`: 400, `{"property_id":"x"}`: 400, `{"property_id":"99"}`: 404, `{"property_id":"1","limit":"0"}`: 400} {
		if code, out := s.call("g1", http.MethodPost, "/internal/read/get-property-related", body, nil); code != want {
			t.Errorf("%s: %d %s, want %d", body, code, out, want)
		}
	}
}

// BenchmarkSearchHits1000: the search's own work (filters, night and rule checks, order)
// over 1 000 properties, without HTTP, JSON or quotes.
func BenchmarkSearchHits1000(b *testing.B) {
	s := newServer(&testing.T{}, "")
	for i := int64(1); i <= 1000; i++ {
		data, _ := json.Marshal(searchProp("h1", i, fmt.Sprintf("Villa %04d", i), nil))
		if err := s.view.Load(contract.PropertyUpdated, data); err != nil {
			b.Fatal(err)
		}
	}
	q := &searchQuery{now: s.api.now(), in: pricing.MustDate("2030-02-04"), out: pricing.MustDate("2030-02-11"), nights: 7,
		adults: 2, sortBy: sortDefault, page: 1, limit: 10, shifts: []int{0}, ins: []string{"2030-02-04"}, outs: []string{"2030-02-11"}}
	var buf []hit
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = s.api.searchHits("h1", q, buf[:0])
		if len(buf) != 1000 {
			b.Fatal(len(buf))
		}
	}
}

// BenchmarkStayRules1000: the search's stay check of a 7-night stay on 1 000 properties, the
// arrival moving at each round (no record has decided the stay before).
func BenchmarkStayRules1000(b *testing.B) {
	s := newServer(&testing.T{}, "")
	var records []*searchRecord
	for i := int64(1); i <= 1000; i++ {
		if err := s.view.Load(contract.PropertyUpdated, mustJSON(searchProp("b1", i, fmt.Sprint("Villa ", i), nil))); err != nil {
			b.Fatal(err)
		}
		p, _ := s.view.Property("b1", i)
		records = append(records, newRecord(p))
	}
	now := s.api.now()
	first := pricing.MustDate("2030-02-04")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := first.AddDays(i % 300)
		for _, r := range records {
			if !stayRules(r, in, in.AddDays(7), 2, 0, now) {
				b.Fatal("refused")
			}
		}
	}
}
