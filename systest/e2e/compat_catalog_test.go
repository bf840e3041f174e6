package e2e

// Catalog reads as the original's PHP website clients call them, through edge: GET and POST
// owner-token reads with the property id in the path, the query or the body (JSON, form,
// multipart), answers decoded with their key order and read positionally (PHP's reset()),
// get-all-property-info, the account-wide price range, property-category, default-config's
// website fields, getnonavailabledate ranges and getdiscounts.

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/testkit/phpjson"
)

// catNode is an answer decoded by phpjson (key order kept, as PHP's json_decode keeps it),
// with its keys and list items at hand. An object that repeats a key fails the test.
type catNode struct {
	v     *phpjson.Value
	keys  []string
	items []*catNode // nil unless a list
}

func catWrap(t *testing.T, v *phpjson.Value) *catNode {
	t.Helper()
	if r := v.Repeated(); r != nil {
		t.Fatalf("keys %v written more than once among %v", r, v.Keys())
	}
	n := &catNode{v: v, keys: v.Keys()}
	if v.Kind() == phpjson.List {
		n.items = []*catNode{}
		for _, x := range v.Items() {
			n.items = append(n.items, catWrap(t, x))
		}
	}
	for _, k := range n.keys {
		catWrap(t, v.At(k)) // checks the members for repeated keys
	}
	return n
}

func catDecode(t *testing.T, b []byte) *catNode {
	t.Helper()
	v, err := phpjson.Decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return catWrap(t, v)
}

// reset is PHP's reset(): the first value of an object or a list.
func (n *catNode) reset(t *testing.T) *catNode {
	t.Helper()
	r := n.v.Reset()
	if r == nil {
		t.Fatalf("reset() of an empty or scalar value")
	}
	return catWrap(t, r)
}

func (n *catNode) at(t *testing.T, path ...string) *catNode {
	t.Helper()
	cur := n.v
	for _, k := range path {
		next := cur.At(k)
		if next == nil {
			t.Fatalf("no %q among %v (path %v)", k, cur.Keys(), path)
		}
		cur = next
	}
	return catWrap(t, cur)
}

func (n *catNode) text() string { return n.v.Text() }

func catKeys(t *testing.T, what string, n *catNode, want ...string) {
	t.Helper()
	if strings.Join(n.keys, ",") != strings.Join(want, ",") {
		t.Errorf("%s keys:\n got  %v\n want %v", what, n.keys, want)
	}
}

// catCall is an owner-token read as a website sends it: method, the path's tail after the
// token ("" or "/property/<id>"), the query, and a body of the given kind ("json", "form",
// "multipart" or "" for none) built from fields. It answers the HTTP response.
func catCall(t *testing.T, acc account, method, name, tail, query, kind string, fields map[string]string) response {
	t.Helper()
	path := "/vros/api/" + name + "/owner_token/" + acc.OwnerToken + tail
	if query != "" {
		path += "?" + query
	}
	var body string
	h := map[string]string{}
	switch kind {
	case "json":
		body = jsonText(fields)
	case "form":
		v := url.Values{}
		for k, x := range fields {
			v.Add(k, x)
		}
		body = v.Encode()
		h["Content-Type"] = "application/x-www-form-urlencoded"
	case "multipart":
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for k, x := range fields {
			if err := w.WriteField(k, x); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		body = buf.String()
		h["Content-Type"] = w.FormDataContentType()
	}
	return do(t, method, path, h, body)
}

// catRead is catCall wanting HTTP 200, decoded with key order.
func catRead(t *testing.T, acc account, method, name, tail, query, kind string, fields map[string]string) *catNode {
	t.Helper()
	r := catCall(t, acc, method, name, tail, query, kind, fields)
	if r.Code != http.StatusOK {
		t.Fatalf("%s %s%s?%s (%s %v): HTTP %d %s", method, name, tail, query, kind, fields, r.Code, r.Body)
	}
	return catDecode(t, r.Body)
}

func TestCompatCatalogReads(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	acc.a(t, "account-settings", obj{"languages": []string{"en", "it"}, "timezone": "Europe/Rome"}).status(t, http.StatusOK)

	// Two properties: CC1 (featured, 100 a night, 10% off 7+ nights, amenities, a photo) and
	// CC2 (150 a night).
	p1 := validProperty("CC1")
	p1["isfeatured"] = true
	r := acc.a(t, "property", obj{"action": "create", "property": p1})
	r.status(t, http.StatusOK)
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	r.decode(t, &created)
	pid1 := created.Data.PropertyID
	rates1 := simpleRates("CC1")
	rates1["los"] = []obj{{"days": 7, "discount": 10}}
	acc.a(t, "property-rate", rates1).status(t, http.StatusOK)
	res, body := withAmenities("CC1")
	acc.a(t, res, body).status(t, http.StatusOK)
	acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "CC1", "image": samplePNG(t, 400, 300)}}).status(t, http.StatusOK)
	pid2 := createProperty(t, acc, "CC2")
	rates2 := simpleRates("CC2")
	rates2["rate"] = obj{"daily_price": 150, "minimum_stay": 1}
	acc.a(t, "property-rate", rates2).status(t, http.StatusOK)
	n1, _ := strconv.Atoi(pid1)
	n2, _ := strconv.Atoi(pid2)
	if n1 >= n2 {
		t.Fatalf("property ids %d, %d not increasing", n1, n2)
	}

	// Categories, a tag and a promotion (interface A, property-svc), published in the
	// account's settings event.
	acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": "Villas", "show_search_engine": true,
		"languages": obj{"it": "Ville"}, "properties": []string{"CC1"}}}).status(t, http.StatusOK)
	acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": "Hidden", "show_search_engine": false,
		"properties": []string{"CC1"}}}).status(t, http.StatusOK)
	acc.a(t, "property-category", obj{"action": "create", "tag": obj{"name": "Sea view", "languages": obj{"it": "Vista mare"},
		"properties": []string{"CC1"}}}).status(t, http.StatusOK)
	acc.a(t, "property-promotion", obj{"action": "create", "promotion": obj{"code": "SPRING", "name": "Spring", "type": "percent",
		"amount": 10, "start_date": day(10), "end_date": day(40)}}).status(t, http.StatusOK)
	waitVersion(t, acc, n1)
	create(t, acc, guest(n1, day(10), day(13)))

	eventually(t, "catalog has both properties, the settings and the booking", func() bool {
		r := catCall(t, acc, http.MethodGet, "default-config", "", "", "", nil)
		if r.Code != http.StatusOK || !strings.Contains(string(r.Body), "Sea view") {
			return false
		}
		var ranges []nonAvail
		if !acc.try(t, "getnonavailabledate", obj{"propertyId": n1}, &ranges) || len(ranges) != 1 {
			return false
		}
		// Both properties with their last change: CC1's photo, CC2's rate.
		var info struct {
			Properties []struct {
				Image     string      `json:"image_path"`
				RateValue json.Number `json:"rateValue"`
			} `json:"properties"`
		}
		r = catCall(t, acc, http.MethodGet, "get-all-property-info", "", "", "", nil)
		return r.Code == http.StatusOK && json.Unmarshal(r.Body, &info) == nil && len(info.Properties) == 2 &&
			info.Properties[0].Image != "" && info.Properties[1].RateValue == "150"
	})

	t.Run("gallery and amenity by every id form", func(t *testing.T) {
		for _, tc := range []struct {
			name, method, tail, query, kind string
			fields                          map[string]string
		}{
			{"GET path", "GET", "/property/" + pid1, "", "", nil},
			{"GET query property_id", "GET", "", "property_id=" + pid1, "", nil},
			{"GET query propertyId (Laravel)", "GET", "", "propertyId=" + pid1, "", nil},
			{"POST JSON body", "POST", "", "", "json", map[string]string{"property_id": pid1, "domain": "https://site.example", "lang": "en"}},
			{"POST form body (plugin)", "POST", "", "", "form", map[string]string{"property_id": pid1, "domain": "https://site.example", "lang": "it"}},
			{"POST multipart body", "POST", "", "", "multipart", map[string]string{"propertyId": pid1}},
			{"POST path and form", "POST", "/property/" + pid1, "", "form", map[string]string{"lang": "en"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				g := catRead(t, acc, tc.method, "property-gallery", tc.tail, tc.query, tc.kind, tc.fields)
				catKeys(t, "gallery", g, "property_gallery_"+pid1)
				photo := g.reset(t).reset(t) // $photos = reset($answer); reset($photos)
				if photo.at(t, "type").text() != "1" || photo.at(t, "property_id").text() != pid1 ||
					!strings.HasPrefix(photo.at(t, "link").text(), "http") {
					t.Fatalf("first photo: link %s", photo.at(t, "link").text())
				}
				a := catRead(t, acc, tc.method, "property-amenity", tc.tail, tc.query, tc.kind, tc.fields)
				catKeys(t, "amenity", a, "property_amenity_"+pid1)
				list := a.reset(t).reset(t) // the Laravel client: reset(reset($answer)) is the amenity list
				if len(list.items) != 1 || list.items[0].at(t, "name").text() != "Wifi" {
					t.Fatalf("first value of the amenity entry: %d items", len(list.items))
				}
				catKeys(t, "amenity entry", a.reset(t), "amenity", "extra", "useicon", "bedoption", "description", "allowchildren",
					"allowpet", "allowsmoking")
			})
		}
		// Without an id: every property, by id.
		g := catRead(t, acc, "POST", "property-gallery", "", "", "form", map[string]string{"lang": "en"})
		catKeys(t, "gallery of all", g, "property_gallery_"+pid1, "property_gallery_"+pid2)
		a := catRead(t, acc, "GET", "property-amenity", "", "", "", nil)
		catKeys(t, "amenity of all", a, "property_amenity_"+pid1, "property_amenity_"+pid2)
		// The absolute link is served (edge's own base URL: no public URL is configured).
		link := g.reset(t).reset(t).at(t, "link_thumbnail").text()
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("GET %s: %d %s", link, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// A bad id: an error in interface B's envelope, HTTP 200 (edge's rule), naming the field.
		r := catCall(t, acc, "POST", "property-gallery", "", "", "form", map[string]string{"property_id": "abc"})
		if e := r.b(t); e.Status != 4 || !strings.Contains(string(r.Body), "property_id") {
			t.Fatalf("bad id: HTTP %d %s", r.Code, r.Body)
		}
	})

	t.Run("get-all-property-info", func(t *testing.T) {
		all := catRead(t, acc, "GET", "get-all-property-info", "", "", "", nil)
		list := all.at(t, "properties")
		if len(list.items) != 2 || list.items[0].at(t, "id").text() != pid1 || list.items[1].at(t, "id").text() != pid2 {
			t.Fatalf("properties: %d", len(list.items))
		}
		first := list.items[0]
		if first.keys[0] != "id" || first.keys[1] != "name" || first.keys[2] != "address" {
			t.Errorf("detail keys start %v", first.keys[:3])
		}
		for f, want := range map[string]string{"isfeatured": "1", "maxguest": "6", "bedroom": "3", "bathroom": "2"} {
			if got := first.at(t, f).text(); got != want {
				t.Errorf("%s = %s, want %s", f, got, want)
			}
		}
		if list.items[1].at(t, "isfeatured").text() != "0" {
			t.Errorf("CC2 featured")
		}
		if lat := first.at(t, "local_area_action", "lat").text(); lat != "25.79" {
			t.Errorf("local_area_action.lat %s", lat)
		}
		catKeys(t, "languages.brief", first.at(t, "languages", "brief"), "en", "it")
		if !strings.HasPrefix(first.at(t, "image_path").text(), "http") || first.at(t, "custom_subtitution_code").items == nil {
			t.Errorf("image_path %s", first.at(t, "image_path").text())
		}
		// The plugin's POST with property_id, include[] and language_data: one property.
		one := catRead(t, acc, "POST", "get-all-property-info", "", "", "form",
			map[string]string{"property_id": pid2, "include[]": "languages", "language_data": "1"})
		if p := one.reset(t); p.at(t, "id").text() != pid2 || p.at(t, "name").text() != "Seaside Villa with Garden" {
			t.Fatalf("one property: %v", p.keys)
		}
		one = catRead(t, acc, "GET", "property-detail", "/property/"+pid1, "", "", nil)
		if one.reset(t).at(t, "id").text() != pid1 {
			t.Fatal("property-detail by path")
		}
	})

	t.Run("min-max account-wide", func(t *testing.T) {
		for _, tc := range []struct {
			method, tail, query, kind string
			fields                    map[string]string
			min, max                  string
		}{
			{"GET", "", "", "", nil, "100", "150"},
			{"POST", "", "", "form", map[string]string{"lang": "en"}, "100", "150"},
			{"GET", "", "propertyId=" + pid1, "", nil, "100", "100"},
			{"POST", "", "", "json", map[string]string{"property_id": pid2}, "150", "150"},
		} {
			n := catRead(t, acc, tc.method, "get-min-max-price-property", tc.tail, tc.query, tc.kind, tc.fields)
			catKeys(t, "min-max", n, "minprice", "maxprice")
			if n.at(t, "minprice").text() != tc.min || n.at(t, "maxprice").text() != tc.max {
				t.Errorf("%s %s %v: %s–%s, want %s–%s", tc.method, tc.query, tc.fields, n.at(t, "minprice").text(), n.at(t, "maxprice").text(), tc.min, tc.max)
			}
		}
	})

	t.Run("property-category", func(t *testing.T) {
		for _, tc := range []struct {
			method, kind string
			fields       map[string]string
			ids          []string
		}{
			{"GET", "", nil, []string{"", ""}},
			{"POST", "form", map[string]string{"property_include": "1"}, []string{"", "", "p" + pid2}},
			{"POST", "json", map[string]string{"property_include": "true"}, []string{"", "", "p" + pid2}},
		} {
			list := catRead(t, acc, tc.method, "property-category", "", "", tc.kind, tc.fields)
			if len(list.items) != len(tc.ids) {
				t.Fatalf("%v: %d entries", tc.fields, len(list.items))
			}
			villas, hidden := list.items[0], list.items[1]
			catKeys(t, "category", villas, "id", "name", "show_search_engine", "properties", "gallery", "languages")
			if villas.at(t, "name").text() != "Villas" || villas.at(t, "show_search_engine").text() != "1" ||
				hidden.at(t, "show_search_engine").text() != "0" || villas.at(t, "languages", "it").text() != "Ville" {
				t.Errorf("categories: %s %s", villas.at(t, "name").text(), hidden.at(t, "show_search_engine").text())
			}
			if ps := villas.at(t, "properties"); len(ps.items) != 1 || ps.reset(t).at(t, "id").text() != pid1 ||
				len(villas.at(t, "gallery").items) != 1 {
				t.Errorf("Villas' properties and gallery")
			}
			if len(tc.ids) == 3 {
				bare := list.items[2]
				if bare.reset(t).text() != "p"+pid2 || bare.at(t, "properties").reset(t).at(t, "id").text() != pid2 {
					t.Errorf("bare property: %s", bare.reset(t).text())
				}
			}
		}
	})

	t.Run("default-config", func(t *testing.T) {
		cfg := catRead(t, acc, "GET", "default-config", "", "lang=en&domain=https%3A%2F%2Fsite.example", "", nil)
		catKeys(t, "default-config", cfg, "support_language", "default_limit", "searchconfig", "global_search_config",
			"global_search_language", "searchplugin", "price_filter", "currency_code", "currency_symbol", "rate_type", "use_enquire",
			"availability_tab_calendar", "lead_source_list", "bedroom", "city_list",
			"tags_list", "amenity_list", "property_max_guest", "homepage_settings", "searchpage_settings", "bathroom")
		tag := cfg.at(t, "tags_list").reset(t)
		catKeys(t, "tag", tag, "id", "name", "languages")
		if tag.at(t, "name").text() != "Sea view" || tag.at(t, "languages", "it").text() != "Vista mare" {
			t.Errorf("tag %s", tag.at(t, "name").text())
		}
		var amenities []string
		for _, x := range cfg.at(t, "amenity_list").items {
			amenities = append(amenities, x.at(t, "name").text())
		}
		if strings.Join(amenities, ",") != "Wifi,Pool" {
			t.Errorf("amenity_list %v", amenities)
		}
		if cfg.at(t, "property_max_guest").text() != "6" || cfg.at(t, "bathroom", "min").text() != "2" || cfg.at(t, "bathroom", "max").text() != "2" {
			t.Errorf("property_max_guest %s, bathroom %s", cfg.at(t, "property_max_guest").text(), cfg.at(t, "bathroom", "max").text())
		}
		catKeys(t, "searchconfig.checkin", cfg.at(t, "searchconfig", "checkin"), "alias", "gs", "languages")
		catKeys(t, "searchconfig.checkin.languages", cfg.at(t, "searchconfig", "checkin", "languages"), "en", "it")
		catKeys(t, "homepage_settings", cfg.at(t, "homepage_settings"), "searchplugin", "searchconfig")
		catKeys(t, "searchpage_settings", cfg.at(t, "searchpage_settings"), "searchplugin", "searchconfig")
	})

	t.Run("getnonavailabledate ends on the last night", func(t *testing.T) {
		var ranges []nonAvail
		acc.b(t, "getnonavailabledate", obj{"propertyId": pid1}).ok(t, &ranges)
		if len(ranges) != 1 || ranges[0] != (nonAvail{day(10), day(12), "false"}) {
			t.Fatalf("ranges %+v, want the nights %s…%s", ranges, day(10), day(12))
		}
	})

	t.Run("getdiscounts", func(t *testing.T) {
		var list []struct {
			StartDate string `json:"startDate"`
			EndDate   string `json:"endDate"`
			Type      string `json:"type"`
			Name      string `json:"name"`
		}
		r := acc.b(t, "getdiscounts", obj{"propertyId": pid1})
		r.ok(t, &list)
		if len(list) != 2 || list[0].StartDate != day(10) || list[0].EndDate != day(40) || list[0].Type != "promotion" || list[0].Name != "Spring" ||
			list[1].Type != "los" || list[1].EndDate != "" || (list[1].StartDate != day(0) && list[1].StartDate != day(1)) {
			t.Fatalf("getdiscounts: %+v", list)
		}
		// PHP reads the first range's startDate first.
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		r.decode(t, &env)
		catKeys(t, "discount", catDecode(t, env.Data).reset(t), "startDate", "endDate", "type", "name")
		acc.b(t, "getdiscounts", obj{"propertyId": pid2}).ok(t, &list)
		if len(list) != 1 || list[0].Type != "promotion" {
			t.Fatalf("getdiscounts of CC2: %+v", list)
		}
	})
}
