package api

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

// brandFixture is fixture with three brands of acc1: Aurora (property 7, its own language,
// currency, lead source and search settings), Blu (property 3, its domain in an older event's
// `domain` only) and All (lists no property: shows every one).
func brandFixture(s *server) {
	s.t.Helper()
	fixture(s)
	st := s.view.Settings("acc1")
	st.Version = 2
	st.ExchangeRates = map[string]string{"USD": "1.10"}
	st.Brands = []contract.Brand{
		{ID: 1, Name: "Aurora", Domain: "aurora.example", Domains: []string{"aurora.example", "aurora-villas.example"},
			DefaultLanguage: "it", DefaultCurrency: "USD", LeadSource: 3, Search: &contract.Search{DefaultLimit: 5, RateType: "weekly"},
			Properties: []int64{7}},
		{ID: 2, Name: "Blu", Domain: "blu.example", Properties: []int64{3}},
		{ID: 3, Name: "All"},
	}
	s.load(contract.SettingsUpdated, st)
}

// TestBrandScopes: every owner-token read and getproperties show the properties of the brand
// brandId or domain names, and every property without a brand or for an unknown domain.
func TestBrandScopes(t *testing.T) {
	s := newServer(t, "")
	brandFixture(s)
	// markers of property 7 and property 3 in each read's answer
	reads := []struct {
		name      string
		body      string
		seven, tr string
	}{
		{"property-detail", `{}`, "Villa Aurora", "Casa Blu"},
		{"get-all-property-info", `{}`, "Villa Aurora", "Casa Blu"},
		{"property-gallery", `{}`, "property_gallery_7", "property_gallery_3"},
		{"property-amenity", `{}`, "property_amenity_7", "property_amenity_3"},
		{"banner-gallery", `{}`, "kV4", "kC4"},
		{"default-config", `{}`, "Lucca", "Pisa"},
		{"search-rental", `{}`, "Villa Aurora", "Casa Blu"},
		{"property-category", `{"property_include":"1"}`, "Villa Aurora", "Casa Blu"},
	}
	scopes := []struct {
		name, members string
		seven, three  bool
	}{
		{"no brand", ``, true, true},
		{"brandId 1", `"brandId":1`, true, false},
		{"brandId as a string", `"brandId":"2"`, false, true},
		{"a domain of brand 1, any case, www and port", `"domain":"https://WWW.Aurora-Villas.Example:8443/en/search?x=1"`, true, false},
		{"a bare host of brand 1", `"domain":"aurora.example"`, true, false},
		{"the domain of an older event", `"domain":"blu.example."`, false, true},
		{"a brand listing no property", `"brandId":3`, true, true},
		{"a domain of no brand: the account", `"domain":"elsewhere.example"`, true, true},
		{"a domain that is not a string: ignored", `"domain":5`, true, true},
		{"brandId wins over domain", `"brandId":2,"domain":"aurora.example"`, false, true},
	}
	for _, sc := range scopes {
		for _, r := range reads {
			t.Run(sc.name+"/"+r.name, func(t *testing.T) {
				body := r.body
				if sc.members != "" {
					body = strings.TrimSuffix(body, "}")
					if body != "{" {
						body += ","
					}
					body += sc.members + "}"
				}
				out := string(s.read(r.name, body))
				if got := strings.Contains(out, r.seven); got != sc.seven {
					t.Errorf("%s shows property 7: %v, want %v: %s", body, got, sc.seven, out)
				}
				if got := strings.Contains(out, r.tr); got != sc.three {
					t.Errorf("%s shows property 3: %v, want %v: %s", body, got, sc.three, out)
				}
			})
		}
		t.Run(sc.name+"/getproperties", func(t *testing.T) {
			out := string(s.action("getproperties", "{"+sc.members+"}"))
			if strings.Contains(out, "acc1_7") != sc.seven || strings.Contains(out, "acc1_3") != sc.three {
				t.Errorf("getproperties {%s}: %s", sc.members, out)
			}
		})
	}
}

// TestBrandRefusals: another brand's property is status 16 like an unknown one; an unknown
// or invalid brandId is status 4 naming it.
func TestBrandRefusals(t *testing.T) {
	s := newServer(t, "")
	brandFixture(s)
	for _, r := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/internal/read/property-detail", `{"property_id":3,"brandId":1}`, 404, `"status":16`},
		{"/internal/read/property-gallery", `{"property_id":"3","domain":"aurora.example"}`, 404, `"status":16`},
		{"/internal/read/get-min-max-price-property", `{"property_id":3,"brandId":1}`, 404, `"status":16`},
		{"/internal/read/get-property-related", `{"property_id":3,"brandId":1}`, 404, `"status":16`},
		{"/internal/read/search-rental", `{"property_id":3,"brandId":1}`, 404, `"status":16`},
		{"/internal/read/property-detail", `{"property_id":3,"brandId":9}`, 400, `brandId is not a brand of this account`},
		{"/internal/read/default-config", `{"brandId":9}`, 400, `brandId is not a brand of this account`},
		{"/internal/read/search-rental", `{"brandId":0}`, 400, `brandId must be between 1 and 2147483647`},
		{"/internal/b/getproperties", `{"brandId":9}`, 400, `brandId is not a brand of this account`},
		{"/internal/b/getproperties", `{"brandId":"x"}`, 400, `brandId`},
	} {
		code, out := s.call("acc1", http.MethodPost, r.path, r.body, nil)
		if code != r.code || !strings.Contains(string(out), r.want) || (r.code == 400 && !strings.Contains(string(out), `"status":4`)) {
			t.Errorf("%s %s: %d %s, want %d %s", r.path, r.body, code, out, r.code, r.want)
		}
	}
	// An account with no brands behaves as before brands: getproperties checks that brandId is
	// an id and filters nothing; reads ignore brandId and domain.
	for _, body := range []string{`{"brandId":1}`, `{"domain":"aurora.example"}`} {
		if out := string(s.actionOf("acc2", "getproperties", body)); !strings.Contains(out, "acc2_9") {
			t.Errorf("acc2 %s: %s", body, out)
		}
		if out := s.call2xx("acc2", "/internal/read/get-all-property-info", body); !strings.Contains(out, "Other") {
			t.Errorf("acc2 read %s: %s", body, out)
		}
	}
	if code, out := s.call("acc2", http.MethodPost, "/internal/b/getproperties", `{"brandId":0}`, nil); code != 400 || !strings.Contains(string(out), "brandId must be between 1 and 2147483647") {
		t.Errorf("acc2 brandId 0: %d %s", code, out)
	}
	if out := s.call2xx("acc2", "/internal/read/default-config", `{"brandId":"x"}`); out == "" {
		t.Error("acc2 read with brandId x: refused")
	}
}

// TestBrandDefaultConfig: a brand's default-config has its language first, its currency
// (prices converted at the account's rate), its search settings and its lead source first.
func TestBrandDefaultConfig(t *testing.T) {
	s := newServer(t, "")
	brandFixture(s)
	n := decodeOrdered(t, s.read("default-config", `{"domain":"aurora.example"}`))
	if k := n.get(t, "support_language").keys; strings.Join(k, ",") != "it,en" {
		t.Errorf("support_language %v", k)
	}
	for path, want := range map[string]string{"currency_code": "USD", "currency_symbol": "$", "default_limit": "5", "rate_type": "weekly",
		"price_filter.minprice": "110", "price_filter.maxprice": "110", "price_filter.rate_type": "weekly", "price_filter.enable": "0"} {
		if got := n.get(t, strings.Split(path, ".")...).str(); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if first := n.get(t, "lead_source_list").items[0].get(t, "id").str(); first != "3" {
		t.Errorf("first lead source %s, want 3", first)
	}
	mm := decodeOrdered(t, s.read("get-min-max-price-property", `{"brandId":1}`))
	if mm.get(t, "minprice").str() != "110" || mm.get(t, "maxprice").str() != "110" {
		t.Errorf("brand 1 min-max: %s", mm.v.Text())
	}
	// Without a brand: the account's, unchanged.
	n = decodeOrdered(t, s.read("default-config", `{}`))
	if n.get(t, "currency_code").str() != "EUR" || n.get(t, "default_limit").str() != "10" || strings.Join(n.get(t, "support_language").keys, ",") != "en,it" {
		t.Errorf("account default-config: %s", n.v.Text())
	}
	// Related properties stay within the brand: brand 2 lists property 3 only.
	if out := string(s.read("get-property-related", `{"property_id":3,"brandId":2}`)); strings.Contains(out, "Villa Aurora") {
		t.Errorf("related within brand 2: %s", out)
	}
}

// TestReservationsCarryBrand: getreservations items carry the booking's brandId, left out
// without one.
func TestReservationsCarryBrand(t *testing.T) {
	s := newServer(t, "")
	brandFixture(s)
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 1, PropertyID: 7, Status: "reserved", Version: 1,
		Checkin: "2030-02-01", Checkout: "2030-02-03", BrandID: 1, CreatedAt: time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)})
	s.load(contract.BookingReserved, contract.Booking{AccountID: "acc1", BookingID: 2, PropertyID: 7, Status: "reserved", Version: 1,
		Checkin: "2030-03-01", Checkout: "2030-03-03", CreatedAt: time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)})
	out := string(s.action("getreservations", `{"propertyId":"acc1_7"}`))
	if !strings.Contains(out, `"id":"acc1_1"`) || strings.Count(out, `"brandId":1`) != 1 || strings.Count(out, "brandId") != 1 {
		t.Errorf("reservations: %s", out)
	}
}

// TestBrandReadsUnderConcurrency: two brands' websites (one by brandId, one by domain) and
// the account's own read at once while the settings and properties change; each sees only its
// own properties.
func TestBrandReadsUnderConcurrency(t *testing.T) {
	s := newServer(t, "")
	brandFixture(s)
	const clients, rounds = 12, 20
	var wg sync.WaitGroup
	errs := make(chan string, clients*rounds*4)
	wg.Add(1)
	go func() { // writers: new versions of acc1's settings and properties
		defer wg.Done()
		for v := int64(3); v < 3+rounds; v++ {
			st := s.view.Settings("acc1")
			st.Version = v
			if err := s.view.Load(contract.SettingsUpdated, mustJSON(st)); err != nil {
				errs <- err.Error()
			}
			p := property("acc1", 7, "Villa Aurora", "Lucca", 3, 2, 6, "100", true)
			p.Version = v
			if err := s.view.Load(contract.PropertyUpdated, mustJSON(p)); err != nil {
				errs <- err.Error()
			}
		}
	}()
	for i := 0; i < clients; i++ {
		who := []string{`"brandId":1`, `"domain":"https://blu.example/"`, `"domain":"none.example"`}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				for _, name := range []string{"get-all-property-info", "search-rental", "property-category", "default-config"} {
					code, out := s.call("acc1", http.MethodPost, "/internal/read/"+name, `{"property_include":"1",`+who+`}`, nil)
					body := string(out)
					aurora, blu := strings.Contains(body, "Villa Aurora") || strings.Contains(body, "Lucca"),
						strings.Contains(body, "Casa Blu") || strings.Contains(body, "Pisa")
					switch {
					case code != 200:
						errs <- fmt.Sprintf("%s %s: %d %s", who, name, code, body)
					case i%3 == 0 && (!aurora || blu), i%3 == 1 && (aurora || !blu), i%3 == 2 && (!aurora || !blu):
						errs <- fmt.Sprintf("%s %s sees aurora %v blu %v: %s", who, name, aurora, blu, body)
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

// call2xx POSTs body to path as acc and answers the body, "" unless HTTP 200.
func (s *server) call2xx(acc, path, body string) string {
	s.t.Helper()
	code, out := s.call(acc, http.MethodPost, path, body, nil)
	if code != http.StatusOK {
		return ""
	}
	return string(out)
}
