package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	poll "github.com/vros/vros/testkit/eventually"
)

// eventually polls until f holds: catalog reads converge within a bound, never after a
// fixed sleep. A 429 of the polling account counts as "not yet".
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	poll.Holds(t, "catalog converged: "+what, viewsWithin, f)
}

// try sends an action and decodes data into v, reporting success.
func (acc account) try(t *testing.T, action string, fields obj, v any) bool {
	t.Helper()
	r := acc.b(t, action, fields)
	if r.Code != http.StatusOK {
		return false
	}
	a := r.b(t)
	return a.Status == 0 && json.Unmarshal(a.Data, v) == nil
}

// read sends an owner-token GET read and decodes the body into v.
func (acc account) read(t *testing.T, name, pid string, v any) response {
	t.Helper()
	path := "/vros/api/" + name + "/owner_token/" + acc.OwnerToken
	if pid != "" {
		path += "/property/" + pid
	}
	r := do(t, http.MethodGet, path, nil, "")
	if r.Code == http.StatusOK && v != nil && !bError(r.Body) {
		r.decode(t, v)
	}
	return r
}

// seasonRates: 100 a night, 150 on weekend nights, and a "High" season from day 20 to day
// 40 at 200 (260 on weekends); any day in and out, minimum stay 1.
func seasonRates(code string) (string, obj) {
	return "property-rate", obj{"internal_code": code,
		"rate": obj{"daily_price": 100, "weekend_price": 150, "minimum_stay": 1, "extra_daily_price": 15},
		"setting": obj{"standard_occupants": 4, "accept_booking_upto": 12, "advanced_notice_booking_from": "0",
			"apply_weekend_price": true, "first_day_surcharge": 25, "first_day_surcharge_apply_one_night": true},
		"season": []obj{{"name": "High", "start_date": day(20), "end_date": day(40), "daily_price": 200, "weekend_price": 260}}}
}

func withAmenities(code string) (string, obj) {
	return "property-amenity", obj{"internal_code": code, "bedoption": 2, "useicon": true, "amenities": []obj{
		{"name": "Wifi", "value": "fibre", "qty": 1, "type": 1, "class": "internet"},
		{"name": "", "default_name": "Pool", "qty": 1, "type": 2},
	}}
}

type calDay struct {
	Date         string          `json:"date"`
	Availability string          `json:"availability"`
	Currency     string          `json:"currency"`
	Price        decimal.Decimal `json:"price"`
	GuestPrice   decimal.Decimal `json:"guest_price"`
	MinimumStay  int             `json:"minimumstay"`
	CheckInOut   *int            `json:"check_in_out_type"`
}

type nonAvail struct {
	StartDate    string `json:"startDate"`
	EndDate      string `json:"endDate"`
	Availability string `json:"availability"`
}

func TestCatalogActions(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "CAT1", seasonRates, withTaxesAndServices, withDefaultServices, withAmenities)
	spid := strconv.Itoa(pid)
	comp := acc.AccountID + "_" + spid

	// The catalog has the last change (the amenities) once getservice and the amenities show.
	var services []struct {
		Name   string          `json:"name"`
		Amount decimal.Decimal `json:"amount"`
		Def    int             `json:"def"`
		Type   int             `json:"type"`
		Taxes  []struct {
			Name string          `json:"name"`
			Perc decimal.Decimal `json:"perc"`
		} `json:"taxes"`
	}
	eventually(t, "getservice", func() bool { return acc.try(t, "getservice", obj{"propertyId": pid}, &services) && len(services) == 3 })
	if s := services[0]; s.Name != "Cleaning" || !s.Amount.Equal(dec("50")) || s.Def != 1 || s.Type != 1 || len(s.Taxes) != 1 || !s.Taxes[0].Perc.Equal(dec("10")) {
		t.Fatalf("getservice: %+v", services)
	}
	if services[2].Def != 0 || services[1].Type != 2 {
		t.Fatalf("getservice: %+v", services)
	}

	var taxes []struct {
		Name            string          `json:"name"`
		Amount          decimal.Decimal `json:"amount"`
		Def             int             `json:"def"`
		Type            int             `json:"type"`
		CalculationType int             `json:"calculationType"`
	}
	acc.b(t, "gettax", obj{"propertyId": pid}).ok(t, &taxes)
	if len(taxes) != 2 || taxes[0].Name != "City tax" || !taxes[0].Amount.Equal(dec("10")) || taxes[0].Def != 1 || taxes[0].Type != 1 || taxes[0].CalculationType != 1 {
		t.Fatalf("gettax: %+v", taxes)
	}

	var table struct {
		TableName        string `json:"tableName"`
		LimitOccupant    int    `json:"limitOccupant"`
		ExtraOccupantFee struct {
			Nightly decimal.Decimal `json:"nightly"`
		} `json:"extraOccupantFee"`
		FirstNightSurcharge   decimal.Decimal `json:"firstNightSurcharge"`
		OneNightStaySurcharge decimal.Decimal `json:"oneNightStaySurcharge"`
		Seasons               []struct {
			SeasonName     string          `json:"seasonName"`
			Nightly        decimal.Decimal `json:"nightly"`
			Weekly         decimal.Decimal `json:"weekly"`
			Weekend        decimal.Decimal `json:"weekend"`
			MinimumStay    int             `json:"minimumStay"`
			AllowCheckins  string          `json:"allowCheckins"`
			AllowCheckouts string          `json:"allowCheckouts"`
			Def            int             `json:"def"`
		} `json:"seasons"`
	}
	acc.b(t, "getratetable", obj{"propertyId": pid}).ok(t, &table)
	if table.LimitOccupant != 4 || !table.ExtraOccupantFee.Nightly.Equal(dec("15")) || !table.FirstNightSurcharge.Equal(dec("25")) ||
		!table.OneNightStaySurcharge.Equal(dec("25")) || len(table.Seasons) != 2 {
		t.Fatalf("getratetable: %+v", table)
	}
	if b, s := table.Seasons[0], table.Seasons[1]; b.Def != 1 || !b.Nightly.Equal(dec("100")) || !b.Weekend.Equal(dec("150")) ||
		!b.Weekly.Equal(dec("700")) || b.AllowCheckins != "All" || s.Def != 0 || s.SeasonName != "High" || !s.Nightly.Equal(dec("200")) ||
		!s.Weekend.Equal(dec("260")) || s.MinimumStay != 1 {
		t.Fatalf("getratetable seasons: %+v", table.Seasons)
	}

	var countries map[string]string
	acc.b(t, "listcountry", nil).ok(t, &countries)
	if countries["US"] != "United States" || countries["IT"] != "Italy" || len(countries) < 240 {
		t.Fatalf("listcountry: %d entries, US %q", len(countries), countries["US"])
	}

	var list []struct{ ID, Name string }
	acc.b(t, "getproperties", obj{"brandId": 1}).ok(t, &list)
	if len(list) != 1 || list[0].ID != comp || list[0].Name != "Seaside Villa with Garden" {
		t.Fatalf("getproperties: %+v", list)
	}
	var info []struct {
		ID, Name, Address, City, Postcode, State, Country, Brief string
		Bedroom, Bathroom                                        int
	}
	acc.b(t, "getpropertyinfo", obj{"propertyId": comp}).ok(t, &info)
	if len(info) != 1 || info[0].ID != comp || info[0].City != "Miami Beach" || info[0].Bedroom != 3 || info[0].Bathroom != 2 || info[0].Country != "US" {
		t.Fatalf("getpropertyinfo: %+v", info)
	}

	// Tenant isolation: another account's <user_id>_<pid> and plain ids are "no such property".
	for _, action := range []string{"getpropertyinfo", "getcalendar", "getreservations"} {
		other.b(t, action, obj{"propertyId": comp}).wantStatus(t, 16)
		acc.b(t, action, obj{"propertyId": acc.AccountID + "_999999"}).wantStatus(t, 16)
	}
	for _, action := range []string{"gettax", "getservice", "getratetable", "getnonavailabledate"} {
		other.b(t, action, obj{"propertyId": pid}).wantStatus(t, 16)
	}
	acc.b(t, "getcalendar", obj{"propertyId": "nonsense"}).wantStatus(t, 4)
	var none []struct{ ID string }
	other.b(t, "getproperties", nil).ok(t, &none)
	if len(none) != 0 {
		t.Fatalf("other account sees properties: %+v", none)
	}

	// A booking and a block make their nights unavailable.
	bk := create(t, acc, guest(pid, day(10), day(13)))
	r := acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "CAT1", "start_date": day(50), "end_date": day(52), "memo": "Owner stay"}})
	r.status(t, http.StatusOK)
	var ranges []nonAvail
	eventually(t, "getnonavailabledate", func() bool {
		return acc.try(t, "getnonavailabledate", obj{"propertyId": pid}, &ranges) && len(ranges) == 2
	})
	if ranges[0] != (nonAvail{day(10), day(12), "false"}) || ranges[1] != (nonAvail{day(50), day(52), "false"}) {
		t.Fatalf("getnonavailabledate: %+v", ranges)
	}
	acc.b(t, "getnonavailabledate", obj{"propertyId": pid, "startDate": day(11), "endDate": day(20)}).ok(t, &ranges)
	if len(ranges) != 1 || ranges[0].StartDate != day(11) || ranges[0].EndDate != day(12) {
		t.Fatalf("getnonavailabledate window: %+v", ranges)
	}
	var blocks []struct {
		ID          int    `json:"id"`
		PropertyID  int    `json:"property_id"`
		Memo        string `json:"memo"`
		StartDate   string `json:"startDate"`
		EndDate     string `json:"endDate"`
		CreatedDate string `json:"createdDate"`
	}
	acc.b(t, "getblockdates", obj{"propertyId": pid}).ok(t, &blocks)
	if len(blocks) != 1 || blocks[0].Memo != "Owner stay" || blocks[0].StartDate != day(50) || blocks[0].EndDate != day(52) ||
		blocks[0].PropertyID != pid || len(blocks[0].CreatedDate) != len("2006-01-02 15:04:05") {
		t.Fatalf("getblockdates: %+v", blocks)
	}
	acc.b(t, "getblockdates", obj{"startDate": day(53)}).ok(t, &blocks)
	if len(blocks) != 0 {
		t.Fatalf("getblockdates after the block: %+v", blocks)
	}

	var cal []calDay
	acc.b(t, "getcalendar", obj{"propertyId": comp, "startDate": day(0)}).ok(t, &cal)
	if len(cal) != 730 || cal[0].Date != day(0) || cal[729].Date != day(729) {
		t.Fatalf("getcalendar: %d days from %s", len(cal), cal[0].Date)
	}
	for i, want := range map[int]string{9: "true", 10: "false", 11: "false", 12: "false", 13: "true", 49: "true", 50: "false", 52: "false", 53: "true"} {
		if cal[i].Availability != want {
			t.Errorf("getcalendar day %d (%s): availability %s, want %s", i, cal[i].Date, cal[i].Availability, want)
		}
	}
	if cal[5].Currency != "USD" || cal[5].MinimumStay != 1 || cal[5].CheckInOut == nil || *cal[5].CheckInOut != 0 || !cal[5].GuestPrice.Equal(dec("15")) {
		t.Fatalf("getcalendar day: %+v", cal[5])
	}
	// Calendar prices are one-night quote prices: a weekday and a weekend night, in and out of the season.
	var sampled []int
	seen := map[string]bool{}
	for i := 2; i < 45 && len(sampled) < 4; i++ {
		d, _ := time.Parse(time.DateOnly, day(i))
		weekend := d.Weekday() == time.Friday || d.Weekday() == time.Saturday
		kind := fmt.Sprint(i >= 20 && i <= 40, weekend)
		if cal[i].Availability == "true" && !seen[kind] {
			seen[kind] = true
			sampled = append(sampled, i)
		}
	}
	prices := map[string]bool{}
	for _, i := range sampled {
		var q bookingData
		acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 2, "checkin": day(i), "checkout": day(i + 1)}).ok(t, &q)
		if n, ok := q.NightlyDetail[day(i)]; !ok || !n.Equal(cal[i].Price) {
			t.Errorf("day %s: calendar price %s, one-night quote %v", day(i), cal[i].Price, q.NightlyDetail)
		}
		prices[cal[i].Price.String()] = true
	}
	if len(sampled) != 4 || len(prices) < 3 {
		t.Fatalf("sampled days %v gave prices %v", sampled, prices)
	}
	acc.b(t, "getcalendar", obj{"propertyId": comp, "startDate": day(3), "endDate": day(5)}).ok(t, &cal)
	if len(cal) != 3 || cal[2].Date != day(5) {
		t.Fatalf("getcalendar with endDate: %+v", cal)
	}

	var res struct {
		Reservations []struct {
			ID, StartDate, EndDate, Currency, Status, CreatedAt string
			Amount                                              decimal.Decimal
		} `json:"reservations"`
	}
	acc.b(t, "getreservations", obj{"propertyId": comp}).ok(t, &res)
	if len(res.Reservations) != 1 {
		t.Fatalf("getreservations: %+v", res)
	}
	if x := res.Reservations[0]; x.ID != acc.AccountID+"_"+strconv.FormatInt(bk.BookingID, 10) || x.StartDate != day(10) || x.EndDate != day(13) ||
		x.Status != "reserved" || !x.Amount.Equal(bk.GrandTotal) || x.Currency != "USD" || len(x.CreatedAt) != 19 {
		t.Fatalf("getreservations: %+v", x)
	}
	for _, f := range []obj{{"createdDate": day(1)}, {"createdDate": time.Now().Add(time.Hour).Unix()}, {"startDate": day(13)}, {"endDate": day(9)}} {
		f["propertyId"] = comp
		acc.b(t, "getreservations", f).ok(t, &res)
		if len(res.Reservations) != 0 {
			t.Errorf("getreservations %v: %+v", f, res)
		}
	}
	for _, f := range []obj{{"createdDate": day(0)}, {"createdDate": strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)}, {"startDate": day(12), "endDate": day(30)}} {
		f["propertyId"] = comp
		acc.b(t, "getreservations", f).ok(t, &res)
		if len(res.Reservations) != 1 {
			t.Errorf("getreservations %v: %+v", f, res)
		}
	}
	acc.b(t, "getreservations", obj{"propertyId": comp, "createdDate": "yesterday"}).wantStatus(t, 4)
}

func TestCatalogReadEndpoints(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "CATR", seasonRates, withAmenities)
	spid := strconv.Itoa(pid)
	acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "CATR", "image": samplePNG(t, 400, 300)}}).status(t, http.StatusOK)
	waitVersion(t, acc, pid)

	var gallery map[string][]struct {
		ID            int    `json:"id"`
		PropertyID    int    `json:"property_id"`
		Type          int    `json:"type"`
		Position      int    `json:"position"`
		PropertyName  string `json:"property_name"`
		Link          string `json:"link"`
		LinkBanner    string `json:"link_banner"`
		LinkThumbnail string `json:"link_thumbnail"`
	}
	key := "property_gallery_" + spid
	eventually(t, "property-gallery", func() bool {
		r := acc.read(t, "property-gallery", "", &gallery)
		return r.Code == http.StatusOK && !bError(r.Body) && len(gallery[key]) == 1
	})
	ph := gallery[key][0]
	if ph.Type != 1 || ph.Position != 1 || ph.PropertyID != pid || !strings.HasPrefix(ph.Link, st.EdgeURL+"/media/") || !strings.HasSuffix(ph.LinkThumbnail, "/thumbnail.jpg") {
		t.Fatalf("property-gallery: %+v", ph)
	}
	if r := do(t, http.MethodGet, strings.TrimPrefix(ph.LinkThumbnail, st.EdgeURL), nil, ""); r.Code != http.StatusOK || r.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("thumbnail link %s: HTTP %d %s", ph.LinkThumbnail, r.Code, r.Header.Get("Content-Type"))
	}
	acc.read(t, "property-gallery", spid, &gallery).status(t, http.StatusOK)
	if len(gallery) != 1 {
		t.Fatalf("property-gallery of one property: %v", gallery)
	}
	var banners []string
	acc.read(t, "banner-gallery", "", &banners).status(t, http.StatusOK)
	if len(banners) != 1 || banners[0] != ph.LinkBanner || !strings.HasSuffix(banners[0], "/banner.jpg") {
		t.Fatalf("banner-gallery: %v", banners)
	}

	var cfg struct {
		SupportLanguage map[string]string `json:"support_language"`
		DefaultLimit    int               `json:"default_limit"`
		CurrencyCode    string            `json:"currency_code"`
		CurrencySymbol  string            `json:"currency_symbol"`
		LeadSources     []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"lead_source_list"`
		Bedroom struct{ Min, Max int } `json:"bedroom"`
		Cities  []string               `json:"city_list"`
		Price   struct {
			MinPrice decimal.Decimal `json:"minprice"`
			MaxPrice decimal.Decimal `json:"maxprice"`
		} `json:"price_filter"`
	}
	acc.read(t, "default-config", "", &cfg).status(t, http.StatusOK)
	if cfg.SupportLanguage["en"] != "English" || cfg.DefaultLimit != 10 || cfg.CurrencyCode != "USD" || cfg.CurrencySymbol != "$" ||
		len(cfg.LeadSources) != 6 || cfg.Bedroom.Min != 3 || cfg.Bedroom.Max != 3 || len(cfg.Cities) != 1 || cfg.Cities[0] != "Miami Beach" ||
		!cfg.Price.MinPrice.Equal(dec("100")) || !cfg.Price.MaxPrice.Equal(dec("260")) {
		t.Fatalf("default-config: %+v", cfg)
	}

	var span struct {
		MinPrice decimal.Decimal `json:"minprice"`
		MaxPrice decimal.Decimal `json:"maxprice"`
	}
	acc.read(t, "get-min-max-price-property", spid, &span).status(t, http.StatusOK)
	if !span.MinPrice.Equal(dec("100")) || !span.MaxPrice.Equal(dec("260")) {
		t.Fatalf("get-min-max-price-property: %+v", span)
	}
	if r := other.read(t, "get-min-max-price-property", spid, nil); r.Code != http.StatusOK || r.b(t).Status != 16 {
		t.Fatalf("another account's property: HTTP %d %s", r.Code, r.Body)
	}

	var amen map[string]struct {
		Amenity []struct {
			Name  string `json:"name"`
			Class string `json:"class"`
		} `json:"amenity"`
		Extra []struct {
			DefaultName string `json:"default_name"`
		} `json:"extra"`
		BedOption     int `json:"bedoption"`
		UseIcon       int `json:"useicon"`
		AllowChildren int `json:"allowchildren"`
	}
	acc.read(t, "property-amenity", spid, &amen).status(t, http.StatusOK)
	if a := amen["property_amenity_"+spid]; len(a.Amenity) != 1 || a.Amenity[0].Name != "Wifi" || len(a.Extra) != 1 || a.Extra[0].DefaultName != "Pool" ||
		a.BedOption != 2 || a.UseIcon != 1 || a.AllowChildren != 1 {
		t.Fatalf("property-amenity: %+v", amen)
	}
	var groups []struct {
		Label   string `json:"label"`
		Extra   int    `json:"extra"`
		Amenity []struct {
			Name string `json:"name"`
		} `json:"amenity"`
	}
	acc.read(t, "get-all-amenity", "", &groups).status(t, http.StatusOK)
	if len(groups) != 2 || groups[0].Label != "internet" || groups[0].Amenity[0].Name != "Wifi" || groups[1].Extra != 1 || len(groups[1].Amenity) != 1 {
		t.Fatalf("get-all-amenity: %+v", groups)
	}

	var detail struct {
		Properties map[string]any `json:"properties"`
	}
	acc.read(t, "property-detail", spid, &detail).status(t, http.StatusOK)
	p := detail.Properties
	if p["id"] != spid || p["name"] != "Seaside Villa with Garden" || p["city"] != "Miami Beach" || p["bedroom"] != "3" || p["maxguest"] != "6" ||
		p["ispublished"] != true || p["minimumStay"] != float64(1) || p["wifi"] != float64(1) || p["image_small"] != strings.Replace(ph.Link, "original", "small", 1) {
		t.Fatalf("property-detail: %v", p)
	}
	for _, f := range []string{"address", "state", "postcode", "country", "latitude", "longitude", "type", "space", "rangeRates", "policies", "languages", "amenity"} {
		if _, ok := p[f]; !ok {
			t.Errorf("property-detail has no %s", f)
		}
	}
	var all struct {
		Properties []map[string]any `json:"properties"`
	}
	if acc.read(t, "property-detail", "", &all).status(t, http.StatusOK); len(all.Properties) != 1 || all.Properties[0]["id"] != spid {
		t.Fatalf("property-detail without a property (every property): %+v", all)
	}

	// A deleted property leaves the catalog.
	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "CATR"}}).status(t, http.StatusOK)
	eventually(t, "deleted property", func() bool {
		r := acc.read(t, "property-detail", spid, nil)
		return r.Code == http.StatusOK && r.b(t).Status == 16
	})
	gallery = nil
	acc.read(t, "property-gallery", "", &gallery).status(t, http.StatusOK)
	if len(gallery) != 0 {
		t.Fatalf("gallery after delete: %v", gallery)
	}
}

// TestCatalogFreshness measures how long a write takes to show in the catalog's reads:
// a rate change in getcalendar and a booking in getnonavailabledate, from the write's
// answer to the first read that shows it (docs/benchmarks.md).
func TestCatalogFreshness(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	const samples = 20
	accRate, accBook := newAccount(t), newAccount(t)
	// The reads poll every 2 ms, so their number grows with how long the catalog takes: on a
	// loaded machine the suite's per-account budget (1000 calls, a token back every 2 s, for
	// TestRateLimit) ran out, and the next write was refused. These accounts' plans allow
	// what a measurement asks, so that its verdict does not depend on the machine's speed.
	for _, acc := range []account{accRate, accBook} {
		setPlan(t, acc, obj{"rate_rps": 1000, "rate_burst": 100000})
	}
	pidRate := bookable(t, accRate, "FRR")
	pidBook := bookable(t, accBook, "FRB")
	compRate := accRate.AccountID + "_" + strconv.Itoa(pidRate)
	var cal []calDay
	eventually(t, "first calendar", func() bool {
		return accRate.try(t, "getcalendar", obj{"propertyId": compRate, "startDate": day(30), "endDate": day(30)}, &cal)
	})

	// measure writes each sample and waits until a read shows it. A sample not shown within
	// viewsWithin (a stall: a sample takes tens of milliseconds) fails the test with where
	// its change stands: still in the writer's outbox (parked or not), stored by catalog-svc
	// or not, parked by its consumer, and what the last read answered.
	measure := func(name string, acc account, write func(i int), visible func(i int) (bool, string)) []time.Duration {
		var out []time.Duration
		for i := 0; i < samples; i++ {
			write(i)
			start := time.Now()
			deadline := start.Add(viewsWithin)
			for {
				ok, last := visible(i)
				if ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: sample %d never became visible within %v; the last read: %s; %s", name, i, viewsWithin, last, pipeline(t, acc))
				}
				time.Sleep(2 * time.Millisecond)
			}
			out = append(out, time.Since(start))
		}
		return out
	}
	rate := measure("rate change", accRate, func(i int) {
		r := simpleRates("FRR")
		r["rate"].(obj)["daily_price"] = 101 + i
		accRate.a(t, "property-rate", r).status(t, http.StatusOK)
	}, func(i int) (bool, string) {
		r := accRate.b(t, "getcalendar", obj{"propertyId": compRate, "startDate": day(30), "endDate": day(30)})
		cal = nil
		if r.Code != http.StatusOK || r.b(t).Status != 0 || json.Unmarshal(r.b(t).Data, &cal) != nil || len(cal) != 1 {
			return false, fmt.Sprintf("HTTP %d %.300s", r.Code, r.Body)
		}
		return cal[0].Price.Equal(decimal.NewFromInt(int64(101 + i))), "price " + cal[0].Price.String()
	})
	book := measure("booking", accBook, func(i int) {
		create(t, accBook, guest(pidBook, day(60+2*i), day(61+2*i)))
	}, func(i int) (bool, string) {
		var ranges []nonAvail
		r := accBook.b(t, "getnonavailabledate", obj{"propertyId": pidBook, "startDate": day(60 + 2*i), "endDate": day(60 + 2*i)})
		if r.Code != http.StatusOK || r.b(t).Status != 0 || json.Unmarshal(r.b(t).Data, &ranges) != nil {
			return false, fmt.Sprintf("HTTP %d %.300s", r.Code, r.Body)
		}
		return len(ranges) == 1, fmt.Sprintf("%d ranges", len(ranges))
	})
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"rate change -> getcalendar", rate}, {"booking -> getnonavailabledate", book}} {
		sort.Slice(m.d, func(i, j int) bool { return m.d[i] < m.d[j] })
		t.Logf("freshness %s: n=%d p50=%v p99=%v max=%v", m.name, len(m.d), m.d[len(m.d)/2].Round(time.Millisecond),
			m.d[(len(m.d)*99+99)/100-1].Round(time.Millisecond), m.d[len(m.d)-1].Round(time.Millisecond))
	}
}

// pipeline says where acc's changes stand between its writers and catalog-svc: the intents
// property-svc's and booking-svc's outboxes still hold for it (published ones are deleted;
// a parked one says why), the versions catalog-svc stored of its properties and how many of
// its bookings, and the events of it catalog-svc's consumer parked.
func pipeline(t *testing.T, acc account) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mine := bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(acc.AccountID) + ":"}}
	docs := func(db, coll string, filter bson.D) string {
		cur, err := mongoDB.Database(db).Collection(coll).Find(ctx, filter)
		if err != nil {
			return err.Error()
		}
		var all []bson.M
		if err := cur.All(ctx, &all); err != nil {
			return err.Error()
		}
		var out []string
		for _, d := range all {
			delete(d, "data")
			delete(d, "value")
			out = append(out, fmt.Sprint(d))
		}
		return fmt.Sprintf("%d %v", len(all), out)
	}
	return fmt.Sprintf("outbox intents of property-svc: %s; of booking-svc: %s; catalog-svc's properties: %s; its bookings: %s; its parked events: %s",
		docs("vros_property", "outbox", bson.D{{Key: "aggregate", Value: mine}}),
		docs("vros_booking", "outbox", bson.D{{Key: "aggregate", Value: mine}}),
		docs("vros_catalog", "properties", bson.D{{Key: "_id", Value: mine}}),
		strings.SplitN(docs("vros_catalog", "bookings", bson.D{{Key: "_id", Value: mine}}), " ", 2)[0],
		docs("vros_catalog", "parked_events", bson.D{{Key: "key", Value: mine}}))
}
