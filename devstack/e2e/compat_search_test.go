package e2e

// The website search (search-rental) and get-property-related through edge, as a PHP
// website calls them: a POST form body built by http_build_query (dates, numberadults,
// amenity[]), the answer read by name for the counts and positionally (reset()) for the
// first property, and an error read from the body.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// srchOrdered is a JSON object's keys in order and its values, as PHP's json_decode keeps
// them (enough of it for positional reads).
type srchOrdered struct {
	keys []string
	vals map[string]json.RawMessage
}

func srchDecode(t *testing.T, b []byte) srchOrdered {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	o := srchOrdered{vals: map[string]json.RawMessage{}}
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", b)
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		o.keys = append(o.keys, k.(string))
		o.vals[k.(string)] = v
	}
	return o
}

// first is PHP's reset(): the object's first value.
func (o srchOrdered) first(t *testing.T) json.RawMessage {
	t.Helper()
	if len(o.keys) == 0 {
		t.Fatal("reset() of an empty object")
	}
	return o.vals[o.keys[0]]
}

// srchPost sends a search-rental read as a PHP website does: POST, form body.
func srchPost(t *testing.T, acc account, name string, form url.Values) response {
	t.Helper()
	return do(t, http.MethodPost, "/vros/api/"+name+"/owner_token/"+acc.OwnerToken,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
}

func TestCompatSearchRental(t *testing.T) {
	acc := newAccount(t)
	// SR1 and SR2: 100 a night, any day; SR1 has Wifi. SR2's nights of the stay are booked.
	sr1 := bookable(t, acc, "SR1", withAmenities)
	sr2 := bookable(t, acc, "SR2")
	checkin, checkout := day(30), day(37)
	var booked struct {
		BookingID json.Number `json:"bookingId"`
	}
	acc.b(t, "create", guest(sr2, day(33), day(34))).ok(t, &booked)

	form := url.Values{"checkin": {checkin}, "checkout": {checkout}, "numberadults": {"2"}, "children": {"0"},
		"page": {"1"}, "limit": {"10"}, "domain": {"https://villas.example"}, "lang": {"en"}}
	// The catalog is fed by events: wait until it lists SR1 for the stay and no longer SR2.
	var ans srchOrdered
	eventually(t, "search-rental lists SR1 only", func() bool {
		r := srchPost(t, acc, "search-rental", form)
		if r.Code != http.StatusOK {
			return false
		}
		ans = srchDecode(t, r.Body)
		return string(ans.first(t)) == "1"
	})
	want := []string{"property_count", "page_count", "page", "offset", "limit", "image_path", "properties"}
	if len(ans.keys) != len(want) {
		t.Fatalf("answer keys %v, want %v", ans.keys, want)
	}
	for i := range want {
		if ans.keys[i] != want[i] {
			t.Fatalf("answer keys %v, want %v", ans.keys, want)
		}
	}
	var props []json.RawMessage
	if err := json.Unmarshal(ans.vals["properties"], &props); err != nil || len(props) != 1 {
		t.Fatalf("properties: %s", ans.vals["properties"])
	}
	first := srchDecode(t, props[0])
	var id, total, grand string
	_ = json.Unmarshal(first.first(t), &id) // reset($property): the id
	if id != strconv.Itoa(sr1) {
		t.Fatalf("first property %s, want SR1 (%d): %s", id, sr1, props[0])
	}
	total, grand = string(first.vals["totalRent"]), string(first.vals["grandTotal"])
	if total != "700.00" || grand == "" || string(first.vals["qtyofnights"]) != "7" {
		t.Errorf("stay totals: totalRent %s grandTotal %s: %s", total, grand, props[0])
	}

	// The same total as getinfo quotes for the stay.
	var quote struct {
		TotalRent  json.Number `json:"totalRent"`
		GrandTotal json.Number `json:"grandTotal"`
	}
	acc.b(t, "getinfo", obj{"propertyId": sr1, "numberofadults": 2, "checkin": checkin, "checkout": checkout}).ok(t, &quote)
	if gq, err1 := strconv.ParseFloat(quote.GrandTotal.String(), 64); err1 != nil || strconv.FormatFloat(gq, 'f', 2, 64) != grand {
		t.Errorf("grandTotal %s, getinfo's %s", grand, quote.GrandTotal)
	}

	// amenity[] as PHP sends a list: Wifi keeps SR1, an amenity nobody has lists nothing.
	form.Set("checkin", day(40))
	form.Set("checkout", day(42))
	form["amenity[]"] = []string{"wifi"}
	r := srchPost(t, acc, "search-rental", form)
	if r.Code != http.StatusOK || string(srchDecode(t, r.Body).first(t)) != "1" {
		t.Errorf("amenity[]=wifi: %d %s", r.Code, r.Body)
	}
	form["amenity[]"] = []string{"wifi", "sauna"}
	if r := srchPost(t, acc, "search-rental", form); r.Code != http.StatusOK || string(srchDecode(t, r.Body).first(t)) != "0" {
		t.Errorf("amenity[]=wifi&amenity[]=sauna: %d %s", r.Code, r.Body)
	}
	delete(form, "amenity[]")
	if r := srchPost(t, acc, "search-rental", form); r.Code != http.StatusOK || string(srchDecode(t, r.Body).first(t)) != "2" {
		t.Errorf("both free on other dates: %d %s", r.Code, r.Body)
	}

	// A bad value is an error the website can show, naming the field, on HTTP 200 (the
	// plugin reads only a 200's body).
	form.Set("checkout", day(39))
	r = srchPost(t, acc, "search-rental", form)
	var e struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Body, &e) != nil || e.Status == 0 || !bytes.Contains([]byte(e.Message), []byte("checkout")) {
		t.Errorf("checkout before checkin: HTTP %d %s", r.Code, r.Body)
	}

	// get-property-related: SR2 is like SR1 (same city and type, capacity and price); both
	// keys the clients read carry it.
	r = do(t, http.MethodGet, "/vros/api/get-property-related/owner_token/"+acc.OwnerToken+"?propertyId="+strconv.Itoa(sr1), nil, "")
	var rel struct {
		PropertyRelated struct {
			Properties []struct {
				ID string `json:"id"`
			} `json:"properties"`
		} `json:"property_related"`
		Properties []struct {
			ID string `json:"id"`
		} `json:"properties"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Body, &rel) != nil || len(rel.Properties) != 1 ||
		rel.Properties[0].ID != strconv.Itoa(sr2) || len(rel.PropertyRelated.Properties) != 1 {
		t.Errorf("get-property-related: %d %s", r.Code, r.Body)
	}
}
