package e2e

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// brandID creates a brand through /api/account-brand and returns its id.
func brandID(t *testing.T, acc account, brand obj) int {
	t.Helper()
	r := acc.a(t, "account-brand", obj{"action": "create", "brand": brand})
	r.status(t, http.StatusOK)
	var out struct {
		Data struct {
			BrandID string `json:"brand_id"`
		} `json:"data"`
	}
	r.decode(t, &out)
	id, err := strconv.Atoi(out.Data.BrandID)
	if err != nil {
		t.Fatalf("brand_id in %s", r.Body)
	}
	return id
}

// brandRead sends an owner-token read as a website does (POST, form body) and answers its
// body, or "" when it failed.
func brandRead(t *testing.T, acc account, name string, form url.Values) string {
	t.Helper()
	r := do(t, http.MethodPost, "/vros/api/"+name+"/owner_token/"+acc.OwnerToken,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
	if r.Code != http.StatusOK || bError(r.Body) {
		return ""
	}
	return string(r.Body)
}

// TestBrands: two brands of one account with different properties, through edge. Each
// brand's reads (by brandId and by domain), search-rental and getproperties show only its
// own properties; a booking made through one brand carries its brandId and the brand's lead
// source; listbooking filters by brandId; catalog's reservations carry the brandId.
func TestBrands(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	north := bookable(t, acc, "NORTH")
	south := bookable(t, acc, "SOUTH")
	// Validation through edge: an unknown property code names the field, nothing is created.
	acc.a(t, "account-brand", obj{"action": "create", "brand": obj{"name": "X", "properties": []string{"NOPE"}}}).
		wantViolation(t, "brand.properties", `no property of this account has internal_code "NOPE"`)
	nb := brandID(t, acc, obj{"name": "North Villas", "domains": []string{"north.example"}, "lead_source": 4, "properties": []string{"NORTH"}})
	sb := brandID(t, acc, obj{"name": "South Villas", "domains": []string{"south.example", "www.south-villas.example"},
		"lead_source": 5, "properties": []string{"SOUTH"}})
	if nb != 1 || sb != 2 {
		t.Fatalf("brand ids %d %d, want 1 2", nb, sb)
	}
	acc.a(t, "account-brand", obj{"action": "update", "brand": obj{"id": sb, "domains": []string{"north.example"}}}).
		wantViolation(t, "brand.domains", "north.example is already a domain of brand 1")

	names := map[int]string{north: "NORTH", south: "SOUTH"}
	type scope struct {
		name   string
		form   url.Values
		b      obj
		own    int
		others int
	}
	scopes := []scope{
		{"north by brandId", url.Values{"brandId": {strconv.Itoa(nb)}}, obj{"brandId": nb}, north, south},
		{"south by brandId", url.Values{"brandId": {strconv.Itoa(sb)}}, obj{"brandId": sb}, south, north},
		{"north by domain", url.Values{"domain": {"https://www.North.example/en/"}}, nil, north, south},
		{"south by its second domain", url.Values{"domain": {"south-villas.example:443"}}, nil, south, north},
	}
	// The catalog is fed by events: wait until it knows both brands (the settings of the
	// second one's create) and their properties.
	eventually(t, "getproperties of each brand lists its property only", func() bool {
		for b, pid := range map[int]int{nb: north, sb: south} {
			var list []struct {
				ID string `json:"id"`
			}
			if !acc.try(t, "getproperties", obj{"brandId": b}, &list) || len(list) != 1 || list[0].ID != acc.AccountID+"_"+strconv.Itoa(pid) {
				return false
			}
		}
		return true
	})
	has := func(body string, pid int) bool {
		return strings.Contains(body, `"property_gallery_`+strconv.Itoa(pid)+`"`) ||
			strings.Contains(body, `"id":"`+strconv.Itoa(pid)+`"`) || strings.Contains(body, `"id":`+strconv.Itoa(pid)+`,`)
	}
	for _, sc := range scopes {
		t.Run(sc.name, func(t *testing.T) {
			for _, read := range []string{"property-gallery", "get-all-property-info", "search-rental"} {
				body := brandRead(t, acc, read, sc.form)
				if body == "" || !has(body, sc.own) || has(body, sc.others) {
					t.Errorf("%s %v: want %s only: %s", read, sc.form, names[sc.own], body)
				}
			}
			form := url.Values{"property_id": {strconv.Itoa(sc.others)}}
			for k, v := range sc.form {
				form[k] = v
			}
			r := do(t, http.MethodPost, "/vros/api/property-detail/owner_token/"+acc.OwnerToken,
				map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
			if a := r.b(t); a.Status != 16 {
				t.Errorf("the other brand's property through %v: %d %s", sc.form, r.Code, r.Body)
			}
			if sc.b != nil {
				var list []struct {
					ID string `json:"id"`
				}
				acc.b(t, "getproperties", sc.b).ok(t, &list)
				if len(list) != 1 || list[0].ID != acc.AccountID+"_"+strconv.Itoa(sc.own) {
					t.Errorf("getproperties %v: %+v", sc.b, list)
				}
			}
		})
	}
	// The account as a whole: no brand, or a domain of no brand.
	for _, form := range []url.Values{{}, {"domain": {"elsewhere.example"}}} {
		if body := brandRead(t, acc, "get-all-property-info", form); !has(body, north) || !has(body, south) {
			t.Errorf("account read %v: %s", form, body)
		}
	}
	acc.b(t, "getproperties", obj{"brandId": 99}).wantStatus(t, 4)

	// Bookings: through the south brand, no leadsourceId → the brand's lead source 5.
	g := guest(south, day(30), day(32))
	delete(g, "leadsourceId")
	g["brandId"] = sb
	// booking-svc's view of the settings is fed by events too: until it knows the brand, the
	// create is refused and leaves nothing behind.
	var d bookingData
	eventually(t, "booking-svc knows the south brand", func() bool {
		return acc.try(t, "create", g, &d) && d.BookingID != 0
	})
	var info struct {
		List []struct {
			BrandID      int `json:"brandId"`
			LeadSourceID int `json:"leadsourceId"`
		} `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": d.BookingID}).ok(t, &info)
	if len(info.List) != 1 || info.List[0].BrandID != sb || info.List[0].LeadSourceID != 5 {
		t.Fatalf("booking through brand %d: %+v, want brandId %d leadsourceId 5", sb, info.List, sb)
	}
	// A property the brand does not sell.
	bad := guest(north, day(40), day(41))
	bad["brandId"] = sb
	r := acc.b(t, "create", bad)
	if a := r.wantStatus(t, 4); !strings.Contains(string(r.Body), "brand 2 does not sell property") {
		t.Fatalf("north through the south brand: %s %s", a.Message, r.Body)
	}
	create(t, acc, guest(north, day(30), day(31))) // no brand
	var l struct {
		Total int `json:"totalRecords"`
		List  []struct {
			BookingID int64 `json:"bookingId"`
			BrandID   int   `json:"brandId"`
		} `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"brandId": sb}).ok(t, &l)
	if l.Total != 1 || len(l.List) != 1 || l.List[0].BookingID != d.BookingID || l.List[0].BrandID != sb {
		t.Fatalf("listbooking by brandId %d: %+v", sb, l)
	}
	// The catalog's reservations carry the brandId.
	eventually(t, "getreservations carries the brandId", func() bool {
		r := acc.b(t, "getreservations", obj{"propertyId": acc.AccountID + "_" + strconv.Itoa(south)})
		return r.Code == http.StatusOK && strings.Contains(string(r.Body), `"brandId":`+strconv.Itoa(sb))
	})
}
