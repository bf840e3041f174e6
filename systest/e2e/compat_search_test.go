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

	"github.com/vros/vros/testkit/phpjson"
)

// srchDecode decodes an answer, which must be a JSON object, keeping its key order as PHP's
// json_decode does (enough of it for positional reads).
func srchDecode(t *testing.T, b []byte) *phpjson.Value {
	t.Helper()
	o, err := phpjson.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	srchObject(t, o, b)
	return o
}

// srchObject fails unless o is an object that writes each key once; in is what o came from.
func srchObject(t *testing.T, o *phpjson.Value, in []byte) {
	t.Helper()
	if o.Kind() != phpjson.Object || o.Repeated() != nil {
		t.Fatalf("not an object (or keys %v repeated): %s", o.Repeated(), in)
	}
}

// srchFirst is PHP's reset(): the object's first value, as srchJSON writes it.
func srchFirst(t *testing.T, o *phpjson.Value) string {
	t.Helper()
	v := o.Reset()
	if v == nil {
		t.Fatal("reset() of an empty object")
	}
	return srchJSON(v)
}

// srchJSON is a scalar as the answer writes it: a number as written, a string quoted ("" for
// a missing value).
func srchJSON(v *phpjson.Value) string {
	switch {
	case v == nil:
		return ""
	case v.Kind() == phpjson.String:
		return strconv.Quote(v.Text())
	}
	return v.Text()
}

// srchPost sends a search-rental read as a PHP website does: POST, form body.
func srchPost(t *testing.T, acc account, name string, form url.Values) response {
	t.Helper()
	return do(t, http.MethodPost, "/vros/api/"+name+"/owner_token/"+acc.OwnerToken,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
}

func TestCompatSearchRental(t *testing.T) {
	t.Parallel()
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
	// The catalog is fed by events: wait until it has both properties (both listed on dates
	// nobody booked), then until it lists SR1 for the stay and no longer SR2. Without the
	// first wait, "SR1 only" could be SR2 not in the catalog yet rather than SR2 booked.
	free := url.Values{}
	for k, v := range form {
		free[k] = v
	}
	free.Set("checkin", day(40))
	free.Set("checkout", day(42))
	eventually(t, "search-rental lists SR1 and SR2 on free dates", func() bool {
		r := srchPost(t, acc, "search-rental", free)
		return r.Code == http.StatusOK && srchFirst(t, srchDecode(t, r.Body)) == "2"
	})
	var ans *phpjson.Value
	var ansBody []byte
	eventually(t, "search-rental lists SR1 only", func() bool {
		r := srchPost(t, acc, "search-rental", form)
		if r.Code != http.StatusOK {
			return false
		}
		ans, ansBody = srchDecode(t, r.Body), r.Body
		return srchFirst(t, ans) == "1"
	})
	want := []string{"property_count", "page_count", "page", "offset", "limit", "image_path", "properties"}
	if len(ans.Keys()) != len(want) {
		t.Fatalf("answer keys %v, want %v", ans.Keys(), want)
	}
	for i := range want {
		if ans.Keys()[i] != want[i] {
			t.Fatalf("answer keys %v, want %v", ans.Keys(), want)
		}
	}
	props := ans.At("properties")
	if props == nil || len(props.Items()) != 1 {
		t.Fatalf("properties: %s", ansBody)
	}
	first := props.Items()[0]
	srchObject(t, first, ansBody)
	if id := srchFirst(t, first); id != strconv.Quote(strconv.Itoa(sr1)) { // reset($property): the id
		t.Fatalf("first property %s, want SR1 (%d): %s", id, sr1, ansBody)
	}
	total, grand := srchJSON(first.At("totalRent")), srchJSON(first.At("grandTotal"))
	if total != "700.00" || grand == "" || srchJSON(first.At("qtyofnights")) != "7" {
		t.Errorf("stay totals: totalRent %s grandTotal %s: %s", total, grand, ansBody)
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
	if r.Code != http.StatusOK || srchFirst(t, srchDecode(t, r.Body)) != "1" {
		t.Errorf("amenity[]=wifi: %d %s", r.Code, r.Body)
	}
	form["amenity[]"] = []string{"wifi", "sauna"}
	if r := srchPost(t, acc, "search-rental", form); r.Code != http.StatusOK || srchFirst(t, srchDecode(t, r.Body)) != "0" {
		t.Errorf("amenity[]=wifi&amenity[]=sauna: %d %s", r.Code, r.Body)
	}
	delete(form, "amenity[]")
	if r := srchPost(t, acc, "search-rental", form); r.Code != http.StatusOK || srchFirst(t, srchDecode(t, r.Body)) != "2" {
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
