package api

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events/contract"
)

var detailKeys = []string{"id", "name", "address", "city", "location_id", "state", "postcode", "country", "phone", "brief", "other",
	"type", "space", "floor", "latitude", "longitude",
	"maxguest", "allowchildren", "allowpet", "allowsmoking", "bedroom", "bathroom", "isfeatured", "ispublished", "visibleOnWebsite",
	"minimumStay", "eligible_for_online_booking", "external_link", "wifi",
	"rateLabel", "rateValue", "rateToolTip", "rangeRates",
	"image_path", "image_small", "image_317_179", "image_h_179", "image_w_800",
	"local_information", "property_video", "booking_note_chk", "booking_note_spec", "policies", "languages",
	"every_stay_includes", "local_area_action",
	"amenity", "amenity_description", "instruction_subtitution_code", "custom_subtitution_code",
	"base_name"} // the WordPress plugin's field, appended

var amenityKeys = []string{"id", "property_id", "name", "value", "qty", "type", "languages", "class", "default_name"}

// TestPropertyDetail: property-detail and get-all-property-info answer one property with
// an id, every live property by id without; the object keeps the spec's field order.
func TestPropertyDetail(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	h := map[string]string{HeaderPublicBase: "https://edge.example.com"}
	for _, name := range []string{"property-detail", "get-all-property-info"} {
		t.Run(name, func(t *testing.T) {
			for _, body := range []string{`{"property_id":"7"}`, `{"property_id":7,"include":["languages"],"language_data":"1","lang":"it"}`} {
				code, out := s.call("acc1", "POST", "/internal/read/"+name, body, h)
				if code != 200 {
					t.Fatalf("%d %s", code, out)
				}
				root := decodeOrdered(t, out)
				wantKeys(t, "root", root, "properties")
				p := root.first(t)
				wantKeys(t, "detail", p, detailKeys...)
				for field, want := range map[string]string{"id": "7", "name": "Villa Aurora", "isfeatured": "1", "maxguest": "6",
					"bedroom": "3", "allowpet": "1", "allowsmoking": "0", "wifi": "1", "rateValue": "100", "minimumStay": "2",
					"image_path": "https://edge.example.com/media/kV4/original.jpg", "ispublished": "true"} {
					if got := p.get(t, field).str(); got != want {
						t.Errorf("%s = %q, want %q", field, got, want)
					}
				}
				wantKeys(t, "rangeRates", p.get(t, "rangeRates"), "day", "week", "month")
				wantKeys(t, "rangeRates.day", p.get(t, "rangeRates", "day"), "min", "max")
				wantKeys(t, "policies", p.get(t, "policies"), "payment_policies", "payment_methods", "rules")
				wantKeys(t, "languages", p.get(t, "languages"), "brief", "policies", "name")
				wantKeys(t, "languages.name", p.get(t, "languages", "name"), "en", "it")
				wantKeys(t, "languages.brief", p.get(t, "languages", "brief"), "en", "it")
				wantKeys(t, "languages.policies.it", p.get(t, "languages", "policies", "it"), "payment_policies", "payment_methods", "rules")
				wantKeys(t, "local_area_action", p.get(t, "local_area_action"), "filename", "description", "lat", "lon", "address")
				if lat := p.get(t, "local_area_action", "lat").str(); lat != "43.84" {
					t.Errorf("lat %q", lat)
				}
				wantKeys(t, "instruction_subtitution_code", p.get(t, "instruction_subtitution_code"), "name", "description")
				// By location, as the WordPress plugin reads it (wordpress_test.go).
				wantKeys(t, "amenity", p.get(t, "amenity"), "Internet", "Outdoor", "extra")
				wantKeys(t, "amenity location", p.get(t, "amenity").first(t), "label", "amenity")
				wantKeys(t, "amenity[0]", p.get(t, "amenity").first(t).get(t, "amenity").first(t), amenityKeys...)
				wantKeys(t, "amenity languages", p.get(t, "amenity").first(t).get(t, "amenity").first(t).get(t, "languages"), "it")
				if n := len(p.get(t, "custom_subtitution_code").items); n != 0 || p.get(t, "custom_subtitution_code").items == nil {
					t.Errorf("custom_subtitution_code: %d items", n)
				}
			}
			// No id: every live property of the account, by id.
			root := decodeOrdered(t, s.read(name, `{"domain":"https://site.example","lang":"en"}`))
			list := root.get(t, "properties")
			if len(list.items) != 2 || list.items[0].get(t, "id").str() != "3" || list.items[1].get(t, "id").str() != "7" {
				t.Fatalf("properties: %d", len(list.items))
			}
			wantKeys(t, "list item", list.items[0], detailKeys...)
			if f := list.items[0].get(t, "isfeatured").str(); f != "0" {
				t.Errorf("isfeatured of 3: %s", f)
			}
		})
	}
	// Another account's id is unknown; so is a deleted property, which also leaves the list.
	if code, out := s.call("acc1", "POST", "/internal/read/get-all-property-info", `{"property_id":"9"}`, nil); code != 404 {
		t.Fatalf("another account's: %d %s", code, out)
	}
	s.load(contract.PropertyDeleted, contract.Property{AccountID: "acc1", PropertyID: 3, Version: 2, Deleted: true})
	list := decodeOrdered(t, s.read("get-all-property-info", `{}`)).get(t, "properties")
	if len(list.items) != 1 || list.items[0].get(t, "id").str() != "7" {
		t.Fatalf("after deleting 3: %d", len(list.items))
	}
}

// TestMinMaxPrice: one property's range, or the account's without an id.
func TestMinMaxPrice(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	for _, tc := range []struct{ body, min, max string }{
		{`{"property_id":"7"}`, "100", "100"},
		{`{"propertyId":"3"}`, "60", "60"},
		{`{}`, "60", "100"},
		{`{"property_id":""}`, "60", "100"},
	} {
		n := decodeOrdered(t, s.read("get-min-max-price-property", tc.body))
		wantKeys(t, "min-max", n, "minprice", "maxprice")
		if n.get(t, "minprice").str() != tc.min || n.get(t, "maxprice").str() != tc.max {
			t.Errorf("%s: %s–%s, want %s–%s", tc.body, n.get(t, "minprice").str(), n.get(t, "maxprice").str(), tc.min, tc.max)
		}
	}
	if code, out := s.call("acc2", "POST", "/internal/read/get-min-max-price-property", `{}`, nil); code != 200 || string(out) != `{"minprice":900,"maxprice":900}` {
		t.Fatalf("acc2: %d %s", code, out)
	}
	// The spans are kept per property value and day: new rates, and a season that the
	// 365 nights from a later day reach, show at once.
	p := property("acc1", 7, "Villa Aurora", "Lucca", 3, 2, 6, "110", true)
	p.Version = 2
	s.load(contract.PropertyUpdated, p)
	want := func(step, min, max string) {
		t.Helper()
		n := decodeOrdered(t, s.read("get-min-max-price-property", `{"property_id":"7"}`))
		if n.get(t, "minprice").str() != min || n.get(t, "maxprice").str() != max {
			t.Errorf("%s: %s–%s, want %s–%s", step, n.get(t, "minprice").str(), n.get(t, "maxprice").str(), min, max)
		}
	}
	want("new rates", "110", "110")
	p.Version = 3
	p.Rates.Seasons = []contract.Season{{Name: "Next winter", StartDate: "2031-01-15", EndDate: "2031-01-20", Prices: contract.Prices{Daily: "150"}}}
	s.load(contract.PropertyUpdated, p)
	want("a season beyond the year", "110", "110")
	s.api.now = func() time.Time { return time.Date(2030, 2, 1, 12, 0, 0, 0, time.UTC) }
	want("a later day reaching it", "110", "150")
}

// TestGalleryAndAmenityOrder: the keyed maps list the asked property's entry first (PHP's
// reset()); without an id, properties by id; an amenity entry's first value is its list.
func TestGalleryAndAmenityOrder(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	for _, tc := range []struct {
		body string
		keys []string
	}{
		{`{"property_id":"7"}`, []string{"7"}},
		{`{"propertyId":7}`, []string{"7"}},
		{`{"property_id":"3"}`, []string{"3"}},
		{`{}`, []string{"3", "7"}},
	} {
		g := decodeOrdered(t, s.read("property-gallery", tc.body))
		a := decodeOrdered(t, s.read("property-amenity", tc.body))
		var gk, ak []string
		for _, k := range tc.keys {
			gk, ak = append(gk, "property_gallery_"+k), append(ak, "property_amenity_"+k)
		}
		wantKeys(t, "gallery "+tc.body, g, gk...)
		wantKeys(t, "amenity "+tc.body, a, ak...)
		photos := g.first(t)
		if len(photos.items) != 2 || photos.items[0].get(t, "type").str() != "1" || photos.items[0].get(t, "position").str() != "1" ||
			photos.items[0].get(t, "property_id").str() != tc.keys[0] {
			t.Errorf("gallery %s: first photo %+v", tc.body, photos.items[0].keys)
		}
		entry := a.first(t)
		wantKeys(t, "amenity entry", entry, "amenity", "extra", "useicon", "bedoption", "description", "allowchildren", "allowpet",
			"allowsmoking")
		list := entry.first(t) // what the Laravel client reads: reset(reset($answer))
		if len(list.items) != 2 || list.items[0].get(t, "name").str() != "Wifi" {
			t.Errorf("amenity %s: first value has %d items", tc.body, len(list.items))
		}
		wantKeys(t, "amenity item", list.items[0], amenityKeys...)
		if x := entry.get(t, "extra"); len(x.items) != 1 || x.items[0].get(t, "name").str() != "Bikes" {
			t.Errorf("extra: %+v", x.items)
		}
	}
}

// TestAllAmenityAndBannerOrder: get-all-amenity's groups keep {label, [extra,] amenity}.
func TestAllAmenityAndBannerOrder(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	groups := decodeOrdered(t, s.read("get-all-amenity", `{}`))
	if len(groups.items) != 3 {
		t.Fatalf("%d groups", len(groups.items))
	}
	wantKeys(t, "group", groups.items[0], "label", "amenity")
	wantKeys(t, "extra group", groups.items[2], "label", "extra", "amenity")
	if groups.items[0].get(t, "label").str() != "Internet" || groups.items[1].get(t, "label").str() != "Outdoor" ||
		len(groups.items[0].get(t, "amenity").items) != 1 {
		t.Errorf("groups: %s %s", groups.items[0].get(t, "label").str(), groups.items[1].get(t, "label").str())
	}
	banner := decodeOrdered(t, s.read("banner-gallery", `{}`))
	if len(banner.items) != 2 || banner.items[0].str() != "/media/kC4/banner.jpg" {
		t.Errorf("banner: %+v", banner.items)
	}
}

// TestDefaultConfig: the existing fields in their order, then tags_list, amenity_list,
// property_max_guest, homepage_settings, searchpage_settings and bathroom; languages in
// each searchconfig option.
func TestDefaultConfig(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	cfg := decodeOrdered(t, s.read("default-config", `{"lang":"en","domain":"https://site.example"}`))
	wantKeys(t, "default-config", cfg, "support_language", "default_limit", "searchconfig", "global_search_config",
		"global_search_language", "searchplugin", "price_filter", "currency_code", "currency_symbol", "rate_type", "use_enquire",
		"availability_tab_calendar", "lead_source_list", "bedroom", "city_list",
		"tags_list", "amenity_list", "property_max_guest", "homepage_settings", "searchpage_settings", "bathroom")
	wantKeys(t, "support_language", cfg.get(t, "support_language"), "en", "it")
	if cfg.get(t, "support_language", "it").str() != "Italian" || cfg.get(t, "currency_symbol").str() != "€" {
		t.Errorf("languages or currency: %s %s", cfg.get(t, "support_language", "it").str(), cfg.get(t, "currency_symbol").str())
	}
	options := []string{"checkin", "checkout", "guests", "bedrooms", "city", "price"}
	wantKeys(t, "searchconfig", cfg.get(t, "searchconfig"), options...)
	wantKeys(t, "global_search_config", cfg.get(t, "global_search_config"), options...)
	wantKeys(t, "searchconfig option", cfg.get(t, "searchconfig", "checkin"), "alias", "gs", "languages")
	wantKeys(t, "option languages", cfg.get(t, "searchconfig", "checkin", "languages"), "en", "it")
	if l := cfg.get(t, "searchconfig", "city", "languages", "it").str(); l != "City" {
		t.Errorf("city label in it: %q", l)
	}
	wantKeys(t, "searchplugin", cfg.get(t, "searchplugin"), "show_checkin", "show_checkout", "show_guests", "show_bedrooms",
		"show_city", "show_price", "background_color", "button_color", "text_color",
		// the WordPress plugin's flags, appended
		"show_checkinout_filter", "show_adults_filter", "show_children_filter", "show_bedrooms_filter", "show_bathrooms_filter",
		"show_city_filter", "show_category_filter", "show_tags_filter", "show_searchterm_filter")
	wantKeys(t, "price_filter", cfg.get(t, "price_filter"), "enable", "rate_type", "minprice", "maxprice", "languages")
	wantKeys(t, "lead source", cfg.get(t, "lead_source_list").first(t), "id", "name")
	wantKeys(t, "bedroom", cfg.get(t, "bedroom"), "min", "max")
	wantKeys(t, "bathroom", cfg.get(t, "bathroom"), "min", "max")
	for path, want := range map[string]string{"bedroom.min": "1", "bedroom.max": "3", "bathroom.min": "1", "bathroom.max": "2",
		"property_max_guest": "6", "price_filter.minprice": "60", "price_filter.maxprice": "100"} {
		var n *node
		switch path {
		case "property_max_guest":
			n = cfg.get(t, path)
		default:
			a, b, _ := cut(path)
			n = cfg.get(t, a, b)
		}
		if n.str() != want {
			t.Errorf("%s = %s, want %s", path, n.str(), want)
		}
	}
	cities := cfg.get(t, "city_list")
	if len(cities.items) != 2 || cities.items[0].str() != "Lucca" || cities.items[1].str() != "Pisa" {
		t.Errorf("city_list: %+v", cities.items)
	}
	tags := cfg.get(t, "tags_list")
	if len(tags.items) != 2 || tags.items[0].get(t, "id").str() != "2" || tags.items[0].get(t, "name").str() != "Sea view" {
		t.Fatalf("tags_list: %d", len(tags.items))
	}
	wantKeys(t, "tag", tags.items[0], "id", "name", "languages")
	wantKeys(t, "tag languages", tags.items[0].get(t, "languages"), "en", "it")
	if tags.items[0].get(t, "languages", "it").str() != "Vista mare" || tags.items[1].get(t, "languages", "it").str() != "Family" {
		t.Errorf("tag languages")
	}
	// amenity_list: distinct (Wifi, Pool and Bikes on both properties), system before extra.
	am := cfg.get(t, "amenity_list")
	var names []string
	for _, x := range am.items {
		names = append(names, x.get(t, "name").str())
	}
	if len(names) != 3 || names[0] != "Pool" || names[1] != "Wifi" || names[2] != "Bikes" {
		t.Errorf("amenity_list: %v", names)
	}
	wantKeys(t, "amenity_list item", am.items[0], "id", "name", "type", "class", "languages")
	for _, page := range []string{"homepage_settings", "searchpage_settings"} {
		wantKeys(t, page, cfg.get(t, page), "searchplugin", "searchconfig")
		wantKeys(t, page+".searchconfig", cfg.get(t, page, "searchconfig"), options...)
	}
	// An account with no properties and default settings.
	code, out := s.call("acc3", "POST", "/internal/read/default-config", `{}`, nil)
	if code != 200 {
		t.Fatalf("empty account: %d %s", code, out)
	}
	var empty struct {
		Tags     []any          `json:"tags_list"`
		Amen     []any          `json:"amenity_list"`
		Max      int            `json:"property_max_guest"`
		Bathroom map[string]int `json:"bathroom"`
		Cities   []string       `json:"city_list"`
	}
	if err := json.Unmarshal(out, &empty); err != nil || empty.Tags == nil || empty.Amen == nil || empty.Cities == nil ||
		empty.Max != 0 || empty.Bathroom["max"] != 0 {
		t.Fatalf("empty account: %v %s", err, out)
	}
}

func cut(path string) (string, string, bool) {
	for i := range path {
		if path[i] == '.' {
			return path[:i], path[i+1:], true
		}
	}
	return path, "", false
}

// TestMainPhotoIsTheFirstPhoto: mainPhoto is photos' first: the first position when the
// photos have positions, the lowest id in a snapshot from before positions; none without
// photos.
func TestMainPhotoIsTheFirstPhoto(t *testing.T) {
	p := &catalog.Property{}
	if _, ok := mainPhoto(p); ok {
		t.Fatal("a main photo without photos")
	}
	p.Snap.Photos = map[string]catalog.Photo{}
	for _, id := range []int64{12, 3, 40, 7, 25} {
		p.Snap.Photos[strconv.FormatInt(id, 10)] = catalog.Photo{PhotoID: id, Key: "k" + strconv.FormatInt(id, 10)}
	}
	check := func(what string, main int64, order ...int64) {
		t.Helper()
		for range 20 { // map order varies from run to run
			var got []int64
			for _, ph := range photos(p) {
				got = append(got, ph.PhotoID)
			}
			if ph, ok := mainPhoto(p); !ok || ph != photos(p)[0] || ph.PhotoID != main || !slices.Equal(got, order) {
				t.Fatalf("%s: main photo %+v, photos %v; want %d first of %v", what, ph, got, main, order)
			}
		}
	}
	check("without positions", 3, 3, 7, 12, 25, 40)
	for i, id := range []int64{40, 7, 25, 3, 12} {
		ph := p.Snap.Photos[strconv.FormatInt(id, 10)]
		ph.Position = i + 1
		p.Snap.Photos[strconv.FormatInt(id, 10)] = ph
	}
	check("ordered", 40, 40, 7, 25, 3, 12)
}

// TestPhotoOrderReachesTheReads: once a property's snapshot orders its photos (12, 30, 4:
// neither id order nor map order), property-gallery lists them so, the first of type 1 at
// position 1, and the main photo of banner-gallery, property-category's gallery,
// property-detail and search-rental is 12. The fixture's snapshots, without positions,
// keep id order (4 first).
func TestPhotoOrderReachesTheReads(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	gallery := func() (ids, types, positions []string) {
		t.Helper()
		for _, ph := range decodeOrdered(t, s.read("property-gallery", `{"property_id":"7"}`)).first(t).items {
			ids = append(ids, ph.get(t, "id").str())
			types = append(types, ph.get(t, "type").str())
			positions = append(positions, ph.get(t, "position").str())
		}
		return ids, types, positions
	}
	if ids, _, _ := gallery(); !slices.Equal(ids, []string{"4", "12"}) {
		t.Fatalf("gallery without positions: %v, want id order", ids)
	}

	p := property("acc1", 7, "Villa Aurora", "Lucca", 3, 2, 6, "100", true)
	p.Version = 2
	p.Photos = map[string]contract.Photo{
		"4":  {PhotoID: 4, Key: "kV4", Position: 3},
		"12": {PhotoID: 12, Key: "kV12", Position: 1},
		"30": {PhotoID: 30, Key: "kV30", Position: 2},
	}
	s.load(contract.PhotosUpdated, p)
	ids, types, positions := gallery()
	if !slices.Equal(ids, []string{"12", "30", "4"}) || !slices.Equal(types, []string{"1", "2", "2"}) ||
		!slices.Equal(positions, []string{"1", "2", "3"}) {
		t.Errorf("property-gallery: ids %v types %v positions %v, want 12 30 4, 1 2 2, 1 2 3", ids, types, positions)
	}
	banner := decodeOrdered(t, s.read("banner-gallery", `{}`))
	var links []string
	for _, b := range banner.items {
		links = append(links, b.str())
	}
	if !slices.Contains(links, "/media/kV12/banner.jpg") || slices.Contains(links, "/media/kV4/banner.jpg") {
		t.Errorf("banner-gallery: %v, want property 7's main photo kV12", links)
	}
	for _, read := range []struct{ name, body, want string }{
		{"property-detail", `{"property_id":"7"}`, `"image_path":"/media/kV12/original.jpg"`},
		{"search-rental", `{}`, `"image_path":"/media/kV12/original.jpg"`},
		{"property-category", `{}`, `"gallery":["/media/kV12/original.jpg"`},
	} {
		out := string(s.read(read.name, read.body))
		if !strings.Contains(out, read.want) || strings.Contains(out, "kV4/original") {
			t.Errorf("%s: %s, want %s and not kV4's", read.name, out, read.want)
		}
	}
}
