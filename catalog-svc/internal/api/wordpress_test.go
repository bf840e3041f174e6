package api

// The answers as the public 365villas WordPress plugin reads them (bikencms/guestwisely-
// development 1.0.1; docs/compatibility.md, "The WordPress plugin"): decoded as PHP's
// json_decode decodes them (testkit/phpjson) and read through ports of the plugin's own helpers
// (Helpers365::MakeStringURLFriendly, MakePropertySlug, PHP's loose == 1).

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/testkit/phpjson"
)

var (
	phpSpaces   = regexp.MustCompile(`[\t\n\v\f\r _]+`)
	phpNotSlug  = regexp.MustCompile(`[^a-zA-Z0-9-]`)
	phpDashes   = regexp.MustCompile(`-+`)
	phpTrimSet  = " \t\n\r\x00\x0B"
	phpSlugPath = regexp.MustCompile(`^(\d+)-`)
)

// phpURLFriendly is Helpers365::MakeStringURLFriendly: PHP 8.2's strtolower (ASCII only),
// trim, runs of white space and underscores to "-", anything but ASCII letters, digits and
// "-" dropped (byte-wise in PCRE; rune-wise here, which drops the same characters), runs of
// "-" to one. A blank string is null, which PHP concatenates as "".
func phpURLFriendly(s string) string {
	if strings.Trim(s, phpTrimSet) == "" {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	s = strings.Trim(string(b), phpTrimSet)
	s = phpSpaces.ReplaceAllString(s, "-")
	s = phpNotSlug.ReplaceAllString(s, "")
	s = phpDashes.ReplaceAllString(s, "-")
	return strings.Trim(s, phpTrimSet)
}

// phpSlug is Helpers365::MakePropertySlug: null (ok false) unless the object has both id and
// base_name (property_exists), else "<id>-<url friendly base_name>".
func phpSlug(p *phpjson.Value) (string, bool) {
	if p == nil || p.Kind() != phpjson.Object || p.At("id") == nil || p.At("base_name") == nil {
		return "", false
	}
	return p.At("id").Text() + "-" + phpURLFriendly(p.At("base_name").Text()), true
}

// phpEqualsOne is PHP 8's `$v == 1` without a notice: true for the number 1 and numeric
// strings equal to 1; an object or a list would raise "could not be converted" (a failure).
func phpEqualsOne(t *testing.T, what string, v *phpjson.Value) bool {
	t.Helper()
	switch v.Kind() {
	case phpjson.Number, phpjson.String:
		return strings.TrimSpace(v.Text()) == "1" || v.Text() == "1.0"
	case phpjson.Bool:
		return v.Text() == "true"
	default:
		t.Errorf("%s: %v compared with == 1 (PHP notice: could not be converted to int)", what, v.Kind())
		return false
	}
}

// phpRead decodes an owner-token read of acc as the plugin does (json_decode).
func phpRead(t *testing.T, s *server, acc, name, body string) *phpjson.Value {
	t.Helper()
	code, out := s.call(acc, http.MethodPost, "/internal/read/"+name, body, map[string]string{HeaderPublicBase: "https://site.example"})
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", name, body, code, out)
	}
	v, err := phpjson.Decode(out)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func TestPHPURLFriendly(t *testing.T) {
	for in, want := range map[string]string{
		"Villa Aurora":            "villa-aurora",
		" Casa  Blu_Mare & Spa! ": "casa-blu-mare-spa",
		"Château d'Eau":           "chteau-deau",
		"   ":                     "",
		"A--B":                    "a-b",
	} {
		if got := phpURLFriendly(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

// TestWordPressPropertySlug: every property the plugin lists (search-rental, get-all-property-
// info, get-property-related) carries base_name, so MakePropertySlug gives "<id>-<name>"; and
// API365::GetProperty finds the property page of that slug: get-all-property-info with the
// slug's id answers one object whose own slug is the one asked for.
func TestWordPressPropertySlug(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	p := property("acc1", 12, " Casa  Blu_Mare & Spa! ", "Lucca", 2, 1, 4, "70", false)
	s.load(contract.PropertyUpdated, p)
	want := map[string]string{"3": "3-casa-blu", "7": "7-villa-aurora", "12": "12-casa-blu-mare-spa"}
	lists := map[string]*phpjson.Value{
		"search-rental":         phpRead(t, s, "acc1", "search-rental", `{"limit":"10"}`).At("properties"),
		"get-all-property-info": phpRead(t, s, "acc1", "get-all-property-info", `{}`).At("properties"),
		"get-property-related":  phpRead(t, s, "acc1", "get-property-related", `{"property_id":"3"}`).At("property_related", "properties"),
	}
	for name, list := range lists {
		if list == nil || len(list.Items()) == 0 {
			t.Fatalf("%s lists nothing", name)
		}
		for _, item := range list.Items() {
			slug, ok := phpSlug(item)
			if !ok {
				t.Errorf("%s: property %s has no base_name (MakePropertySlug is null: the card links to /property/)", name, item.At("id").Text())
				continue
			}
			if slug != want[item.At("id").Text()] {
				t.Errorf("%s: slug %q, want %q", name, slug, want[item.At("id").Text()])
			}
		}
	}
	for _, slug := range want {
		m := phpSlugPath.FindStringSubmatch(slug)
		got := phpRead(t, s, "acc1", "get-all-property-info", `{"property_id":"`+m[1]+`","lang":"en"}`).At("properties")
		if got == nil || got.Kind() != phpjson.Object || got.At("id").Text() != m[1] {
			t.Fatalf("%s: not one property object", slug)
		}
		if actual, ok := phpSlug(got); !ok || actual != slug {
			t.Errorf("GetProperty(%q): the property's own slug is %q: the page redirects to the list", slug, actual)
		}
	}
}

// TestWordPressCardPrices: the list cards show "From <rateValue>/<rateLabel>" without dates
// and "<grandTotalPerNightValue>/night - <grandTotalValue> total" from bookingprice with
// dates, the before-discount total struck through when a discount applies; a property
// without rates shows no price (rateValue ""). rateToolTip is read without a check
// (template-1), so it is always there.
func TestWordPressCardPrices(t *testing.T) {
	s := newServer(t, "https://media.example")
	filterFixture(s)
	for _, c := range []struct {
		name, body string
		want       map[string][3]string // id → rateValue, grandTotalPerNightValue, grandTotalValue
		before     map[string]string    // id → grandTotalBeforeDiscountedValue when it differs
	}{
		{"no dates", `{"limit":"10"}`, map[string][3]string{"1": {"$100.00"}, "2": {"$80.00"}, "3": {"$150.00"}, "4": {"$120.00"}, "5": {""}}, nil},
		{"dates", `{"limit":"10","checkin":"2030-02-04","checkout":"2030-02-08","includebookingprice":"true","include":["discounttexts","discountdescription","grandTotalBeforeDiscountedValue"]}`,
			map[string][3]string{"1": {"$100.00", "$100.00", "$400.00"}, "2": {"$80.00", "$80.00", "$320.00"},
				"3": {"$150.00", "$135.00", "$540.00"}, "4": {"$120.00", "$120.00", "$480.00"}},
			map[string]string{"3": "$600.00"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			list := phpRead(t, s, "f1", "search-rental", c.body).At("properties")
			if len(list.Items()) != len(c.want) {
				t.Fatalf("%d properties, want %d", len(list.Items()), len(c.want))
			}
			for _, p := range list.Items() {
				id := p.At("id").Text()
				w := c.want[id]
				for _, f := range []string{"rateValue", "rateLabel", "rateToolTip"} {
					if p.At(f) == nil {
						t.Fatalf("property %s has no %s", id, f)
					}
				}
				if got := p.At("rateValue").Text(); got != w[0] {
					t.Errorf("property %s: rateValue %q, want %q", id, got, w[0])
				}
				if w[0] != "" && p.At("rateLabel").Text() != "day" {
					t.Errorf("property %s: rateLabel %q (the cards show \"/night\" for \"day\")", id, p.At("rateLabel").Text())
				}
				bp := p.At("bookingprice")
				if w[1] == "" {
					if bp != nil {
						t.Errorf("property %s: bookingprice without dates", id)
					}
					continue
				}
				if bp == nil || bp.Kind() != phpjson.Object || bp.At("grandTotalValue") == nil || bp.At("grandTotalPerNightValue") == nil {
					t.Fatalf("property %s: bookingprice %v", id, bp)
				}
				if bp.At("grandTotalPerNightValue").Text() != w[1] || bp.At("grandTotalValue").Text() != w[2] {
					t.Errorf("property %s: %s/night - %s total, want %s - %s", id, bp.At("grandTotalPerNightValue").Text(),
						bp.At("grandTotalValue").Text(), w[1], w[2])
				}
				before := bp.At("grandTotalBeforeDiscountedValue")
				if want, ok := c.before[id]; ok {
					if before == nil || before.Text() != want {
						t.Errorf("property %s: grandTotalBeforeDiscountedValue %v, want %s", id, before, want)
					}
					if texts := p.At("discounttexts"); texts == nil || len(texts.Items()) != 1 || texts.Items()[0].Text() != "10% off stays of 3 nights or more" {
						t.Errorf("property %s: discounttexts %v", id, texts)
					}
				} else if before != nil && before.Text() != bp.At("grandTotalValue").Text() {
					t.Errorf("property %s: struck-through %s without a discount", id, before.Text())
				}
			}
		})
	}
}

// TestWordPressCategoryGallery: GetCategories copies each category's gallery and the
// category grid prints gallery[0] with esc_html as the tile's background URL: the items are
// the link strings of the main photos of the category's properties.
func TestWordPressCategoryGallery(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	list := phpRead(t, s, "acc1", "property-category", `{"include":["gallery","languages"],"property_include":"1"}`)
	want := map[string][]string{"5": {"https://site.example/media/kV4/original.jpg", "https://site.example/media/kC4/original.jpg"},
		"6": {"https://site.example/media/kC4/original.jpg"}}
	if len(list.Items()) != 2 {
		t.Fatalf("%d categories", len(list.Items()))
	}
	for _, cat := range list.Items() {
		g := cat.At("gallery")
		if g == nil || g.Kind() != phpjson.List {
			t.Fatalf("category %s: gallery %v", cat.At("id").Text(), g)
		}
		var got []string
		for _, x := range g.Items() {
			if x.Kind() != phpjson.String {
				t.Errorf("category %s: gallery item is a %v, not a URL string (esc_html of an object is a PHP fatal error)", cat.At("id").Text(), x.Kind())
				continue
			}
			got = append(got, x.Text())
		}
		if strings.Join(got, " ") != strings.Join(want[cat.At("id").Text()], " ") {
			t.Errorf("category %s: gallery %v, want %v", cat.At("id").Text(), got, want[cat.At("id").Text()])
		}
	}
}

// TestWordPressGalleryCaptions: the property banner and image scroller print each photo's
// link, link_small, link_banner and description (esc_html($banner->description), read
// without a check).
func TestWordPressGalleryCaptions(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	g := phpRead(t, s, "acc1", "property-gallery", `{"property_id":"7"}`).At("property_gallery_7")
	if g == nil || len(g.Items()) != 2 {
		t.Fatalf("gallery %v", g)
	}
	for _, ph := range g.Items() {
		for _, f := range []string{"link", "link_small", "link_banner", "description"} {
			if v := ph.At(f); v == nil || v.Kind() != phpjson.String {
				t.Errorf("photo %s: %s is %v (undefined property)", ph.At("id").Text(), f, v)
			}
		}
	}
}

// TestWordPressAmenitiesByLocation: villas-365-property-amenities.php walks
// get_object_vars($property->amenity): each key but "extra" is a location {label, amenity[]}
// (specificroomamenities, absent, is not read), "extra" is a list of amenities; each amenity
// is read for class, name, languages and qty. A property without amenities has an empty
// object (get_object_vars of a list is a PHP fatal error).
func TestWordPressAmenitiesByLocation(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	bare := property("acc1", 12, "Bare", "Lucca", 1, 1, 2, "50", false)
	bare.Amenities = nil
	s.load(contract.PropertyUpdated, bare)
	p := phpRead(t, s, "acc1", "get-all-property-info", `{"property_id":"7"}`).At("properties")
	am := p.At("amenity")
	if am == nil || am.Kind() != phpjson.Object {
		t.Fatalf("amenity is a %v, not an object keyed by location", am.Kind())
	}
	type loc struct{ label, names string }
	want := map[string]loc{"Internet": {"Internet", "Wifi"}, "Outdoor": {"Outdoor", "Pool"}, "extra": {"", "Bikes"}}
	if strings.Join(am.Keys(), ",") != "Internet,Outdoor,extra" {
		t.Errorf("locations %v", am.Keys())
	}
	for _, k := range am.Keys() {
		v := am.At(k)
		items := v
		if k != "extra" {
			if v.Kind() != phpjson.Object || v.At("label") == nil || v.At("amenity") == nil {
				t.Fatalf("location %s: %v", k, v.Keys())
			}
			if v.At("label").Text() != want[k].label {
				t.Errorf("location %s: label %q", k, v.At("label").Text())
			}
			if v.At("specificroomamenities") != nil {
				t.Errorf("location %s: specificroomamenities (an empty one hides the location)", k)
			}
			items = v.At("amenity")
		}
		if items.Kind() != phpjson.List {
			t.Fatalf("location %s: amenities are a %v", k, items.Kind())
		}
		var names []string
		for _, a := range items.Items() {
			for _, f := range []string{"class", "name", "languages", "qty"} {
				if a.At(f) == nil {
					t.Errorf("location %s: an amenity without %s", k, f)
				}
			}
			names = append(names, a.At("name").Text())
		}
		if strings.Join(names, ",") != want[k].names {
			t.Errorf("location %s: %v", k, names)
		}
	}
	if it := am.At("Internet", "amenity").Items()[0].At("languages", "it"); it == nil || it.Text() != "Wi-Fi" {
		t.Errorf("Wifi's Italian name %v", it)
	}
	empty := phpRead(t, s, "acc1", "get-all-property-info", `{"property_id":"12"}`).At("properties", "amenity")
	if empty == nil || empty.Kind() != phpjson.Object || len(empty.Keys()) != 1 || len(empty.At("extra").Items()) != 0 {
		t.Errorf("no amenities: %v %v", empty.Kind(), empty.Keys())
	}
}

// TestWordPressSearchFormFlags: API365::GetSearchSettings reads homepage_settings and
// searchpage_settings: each searchplugin value == 1 turns a field of the full search form on
// (show_checkinout_filter … show_searchterm_filter), and each searchconfig value is compared
// with == 1 against the account's searchconfig options; search.php reads the top-level
// searchplugin's show_tags_filter == "1".
func TestWordPressSearchFormFlags(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	cfg := phpRead(t, s, "acc1", "default-config", `{"lang":"en"}`)
	flags := []string{"show_checkinout_filter", "show_adults_filter", "show_children_filter", "show_bedrooms_filter",
		"show_bathrooms_filter", "show_city_filter", "show_category_filter", "show_tags_filter", "show_searchterm_filter"}
	for _, page := range []string{"homepage_settings", "searchpage_settings"} {
		sp := cfg.At(page, "searchplugin")
		for _, f := range flags {
			if v := sp.At(f); v == nil || !phpEqualsOne(t, page+".searchplugin."+f, v) {
				t.Errorf("%s: %s is not on (%v): the full search form hides the field", page, f, v)
			}
		}
		sc := cfg.At(page, "searchconfig")
		if strings.Join(sc.Keys(), ",") != strings.Join(cfg.At("searchconfig").Keys(), ",") {
			t.Errorf("%s.searchconfig keys %v", page, sc.Keys())
		}
		for _, k := range sc.Keys() {
			if !phpEqualsOne(t, page+".searchconfig."+k, sc.At(k)) {
				t.Errorf("%s.searchconfig.%s is not on", page, k)
			}
		}
	}
	if v := cfg.At("searchplugin", "show_tags_filter"); v == nil || !phpEqualsOne(t, "searchplugin.show_tags_filter", v) {
		t.Errorf("searchplugin.show_tags_filter %v", v)
	}
	// An account without tags or categories hides those two fields.
	none := phpRead(t, s, "acc2", "default-config", `{}`)
	for _, f := range []string{"show_category_filter", "show_tags_filter"} {
		if v := none.At("homepage_settings", "searchplugin", f); v == nil || v.Text() != "0" {
			t.Errorf("acc2 (no tags, no categories): %s %v", f, v)
		}
	}
}
