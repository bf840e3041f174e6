package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func samplePNG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: 128, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func photoID(t *testing.T, r response) int {
	t.Helper()
	r.status(t, http.StatusOK)
	var out struct {
		Data struct {
			PhotoID int `json:"photo_id"`
		} `json:"data"`
	}
	r.decode(t, &out)
	if out.Data.PhotoID < 1 {
		t.Fatalf("no photo_id: %s", r.Body)
	}
	return out.Data.PhotoID
}

func photoKey(t *testing.T, acc account, propertyID string, id int) string {
	t.Helper()
	ph, _ := field(stored(t, acc.AccountID, propertyID), "photos", fmt.Sprint(id)).(bson.M)
	key, _ := ph["key"].(string)
	if key == "" {
		t.Fatalf("photo %d not stored", id)
	}
	return key
}

func TestPhotos(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "PH1")

	id := photoID(t, acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "PH1", "image": samplePNG(t, 800, 600)}}))
	key := photoKey(t, acc, pid, id)

	// Renditions are served through edge, public and immutable, at their promised sizes.
	for name, size := range map[string][2]int{"banner": {1600, 750}, "317_179": {317, 179}, "thumbnail": {150, 150}, "h_179": {239, 179}} {
		r := do(t, http.MethodGet, "/media/"+key+"/"+name+".jpg", nil, "")
		r.status(t, http.StatusOK)
		if r.Header.Get("Content-Type") != "image/jpeg" || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") {
			t.Fatalf("%s headers: %v", name, r.Header)
		}
		img, err := jpeg.Decode(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != size[0] || b.Dy() != size[1] {
			t.Fatalf("%s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), size[0], size[1])
		}
	}
	etag := do(t, http.MethodGet, "/media/"+key+"/small.jpg", nil, "").Header.Get("ETag")
	do(t, http.MethodGet, "/media/"+key+"/small.jpg", map[string]string{"If-None-Match": etag}, "").status(t, http.StatusNotModified)
	do(t, http.MethodGet, "/media/"+key+"/huge.jpg", nil, "").status(t, http.StatusNotFound)
	do(t, http.MethodGet, "/media/nosuchkey/banner.jpg", nil, "").status(t, http.StatusNotFound)

	// A link is downloaded and rendered like inline data.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/house.png" {
			http.NotFound(w, r)
			return
		}
		b, _ := base64.StdEncoding.DecodeString(samplePNG(t, 400, 300))
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	linked := photoID(t, acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "PH1", "image": srv.URL + "/house.png"}}))
	if linked == id {
		t.Fatal("second photo reused the first id")
	}
	acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "PH1", "image": srv.URL + "/missing.png"}}).
		wantViolation(t, "photo.image", "404")

	// Update keeps the id and changes the links; the old renditions are gone.
	if got := photoID(t, acc.a(t, "property-photo", obj{"action": "update", "photo": obj{"photo_id": id, "internal_code": "PH1", "image": samplePNG(t, 300, 300)}})); got != id {
		t.Fatalf("update answered photo_id %d, want %d", got, id)
	}
	newKey := photoKey(t, acc, pid, id)
	if newKey == key {
		t.Fatal("update kept the old links")
	}
	do(t, http.MethodGet, "/media/"+newKey+"/thumbnail.jpg", nil, "").status(t, http.StatusOK)

	// Delete, then the photo is unknown.
	acc.a(t, "property-photo", obj{"action": "delete", "photo": obj{"photo_id": id, "internal_code": "PH1"}}).status(t, http.StatusOK)
	acc.a(t, "property-photo", obj{"action": "delete", "photo": obj{"photo_id": id, "internal_code": "PH1"}}).status(t, http.StatusNotFound)
	acc.a(t, "property-photo", obj{"action": "update", "photo": obj{"photo_id": id, "internal_code": "PH1", "image": samplePNG(t, 64, 64)}}).status(t, http.StatusNotFound)

	// Another account can neither see nor delete it by id.
	other := newAccount(t)
	createProperty(t, other, "PH1")
	other.a(t, "property-photo", obj{"action": "delete", "photo": obj{"photo_id": linked, "internal_code": "PH1"}}).status(t, http.StatusNotFound)
	if _, ok := field(stored(t, acc.AccountID, pid), "photos", fmt.Sprint(linked)).(bson.M); !ok {
		t.Fatal("another account deleted the photo")
	}
}

func TestPhotoInvalid(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "PH2")
	cases := []struct {
		name  string
		photo obj
		act   string
		field string
		msg   string
	}{
		{"image missing", obj{"internal_code": "PH2"}, "create", "photo.image", "is required"},
		{"not base64 nor link", obj{"internal_code": "PH2", "image": "%%%not-an-image%%%"}, "create", "photo.image", ""},
		{"base64 of text", obj{"internal_code": "PH2", "image": base64.StdEncoding.EncodeToString([]byte(strings.Repeat("hello", 40)))}, "create", "photo.image", "JPEG, PNG, GIF or WebP"},
		{"image too small", obj{"internal_code": "PH2", "image": samplePNG(t, 8, 8)}, "create", "photo.image", "too small"},
		{"link to a private address", obj{"internal_code": "PH2", "image": "http://10.1.2.3/x.jpg"}, "create", "photo.image", ""},
		{"photo_id missing on update", obj{"internal_code": "PH2", "image": samplePNG(t, 64, 64)}, "update", "photo.photo_id", "is required"},
		{"photo_id 0", obj{"internal_code": "PH2", "photo_id": 0}, "delete", "photo.photo_id", "between 1 and 2147483647"},
		{"photo_id too big", obj{"internal_code": "PH2", "photo_id": 2147483648}, "delete", "photo.photo_id", "between 1 and 2147483647"},
		{"internal_code missing", obj{"image": samplePNG(t, 64, 64)}, "create", "photo.internal_code", "is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acc.a(t, "property-photo", obj{"action": c.act, "photo": c.photo}).wantViolation(t, c.field, c.msg)
		})
	}
	if photos, _ := field(stored(t, acc.AccountID, pid), "photos").(bson.M); len(photos) != 0 {
		t.Fatalf("rejected photos were stored: %v", photos)
	}
	acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "NOPE", "image": samplePNG(t, 64, 64)}}).status(t, http.StatusNotFound)
}

func validPolicy(code string) obj {
	return obj{"internal_code": code, "short_stay": obj{
		"payment_type":   "Partial",
		"damage_deposit": obj{"is_due_at": "XDayPriorArrival", "x_day": 7, "amount": 300, "amount_type": "Flat"},
		"payment_partial": obj{
			"first_payment":     obj{"is_due_at": "Booking", "amount_type": "PercentOfGrandTotal", "amount": 30},
			"remaining_payment": obj{"is_due_at": "XDayPriorArrival", "x_day": 30},
		},
	}}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "POL1")
	acc.a(t, "property-policy", validPolicy("POL1")).status(t, http.StatusOK)
	if field(stored(t, acc.AccountID, pid), "policy", "first_payment", "amount") != "30" {
		t.Fatalf("policy not stored: %v", stored(t, acc.AccountID, pid)["policy"])
	}
	// property_id in place of internal_code, as the spec's examples send it.
	acc.a(t, "property-policy", obj{"property_id": pid, "short_stay": obj{"payment_type": "Full", "payment_full": obj{"is_due_at": "Arrival"}}}).status(t, http.StatusOK)
	if field(stored(t, acc.AccountID, pid), "policy", "payment_type") != "Full" {
		t.Fatal("policy by property_id not stored")
	}
	acc.a(t, "property-policy", obj{"internal_code": "NOPE", "short_stay": obj{"payment_type": "None"}}).status(t, http.StatusNotFound)

	cases := []struct {
		name  string
		set   func(s obj)
		field string
		msg   string
	}{
		{"payment_type unknown", func(s obj) { s["payment_type"] = "Some" }, "short_stay.payment_type", "Full, Partial, None"},
		{"deposit x_day missing", func(s obj) { delete(s["damage_deposit"].(obj), "x_day") }, "short_stay.damage_deposit.x_day", "is required"},
		{"deposit x_day 256", func(s obj) { s["damage_deposit"].(obj)["x_day"] = 256 }, "short_stay.damage_deposit.x_day", "between 1 and 255"},
		{"deposit flat over max", func(s obj) { s["damage_deposit"].(obj)["amount"] = 2147483648 }, "short_stay.damage_deposit.amount", "2147483647"},
		{"deposit percent 100", func(s obj) {
			s["damage_deposit"] = obj{"is_due_at": "Booking", "amount": 100, "amount_type": "PercentOfRent"}
		}, "short_stay.damage_deposit.amount", "99"},
		{"deposit due unknown", func(s obj) { s["damage_deposit"].(obj)["is_due_at"] = "XDayAfterBooking" }, "short_stay.damage_deposit.is_due_at", "must be one of"},
		{"partial without payment_partial", func(s obj) { delete(s, "payment_partial") }, "short_stay.payment_partial", "is required"},
		{"first payment amount 0", func(s obj) { s["payment_partial"].(obj)["first_payment"].(obj)["amount"] = 0 }, "short_stay.payment_partial.first_payment.amount", "greater than 0"},
		{"remaining x_day 366", func(s obj) { s["payment_partial"].(obj)["remaining_payment"].(obj)["x_day"] = 366 }, "short_stay.payment_partial.remaining_payment.x_day", "365"},
		{"remaining due Booking", func(s obj) { s["payment_partial"].(obj)["remaining_payment"].(obj)["is_due_at"] = "Booking" }, "short_stay.payment_partial.remaining_payment.is_due_at", "must be one of"},
		{"full without payment_full", func(s obj) { s["payment_type"] = "Full"; delete(s, "payment_partial") }, "short_stay.payment_full", "is required"},
		{"full x_day missing", func(s obj) {
			s["payment_type"] = "Full"
			delete(s, "payment_partial")
			s["payment_full"] = obj{"is_due_at": "XDayAfterBooking"}
		}, "short_stay.payment_full.x_day", "is required"},
		{"none with a payment object", func(s obj) { s["payment_type"] = "None" }, "short_stay.payment_partial", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validPolicy("POL1")
			c.set(p["short_stay"].(obj))
			acc.a(t, "property-policy", p).wantViolation(t, c.field, c.msg)
		})
	}
	if field(stored(t, acc.AccountID, pid), "policy", "payment_type") != "Full" {
		t.Fatal("a rejected policy changed the stored one")
	}
}

func validRates(code string) obj {
	return obj{
		"internal_code": code,
		"rate":          obj{"daily_price": 180, "weekend_price": 220, "weekly_price": 1100, "monthly_price": 4000, "minimum_stay": 2, "extra_daily_price": 20},
		"los":           []obj{{"days": 7, "discount": 5}, {"days": 28, "discount": 15}},
		"setting": obj{"standard_occupants": 4, "accept_booking_upto": 12, "apply_weekend_price": true,
			"default_allow_checkin": "Friday,Saturday", "default_allow_checkout": "All", "allow_same_day_booking_until": "14:00",
			"first_day_surcharge": 25, "first_day_surcharge_apply_one_night": true},
		"season": []obj{
			{"name": "Summer", "minimum_stay": 5, "start_date": "2027-06-15", "end_date": "2027-09-15", "daily_price": 260, "allow_checkin": "Saturday"},
			{"name": "Winter", "start_date": "2027-12-20", "end_date": "2028-01-06", "daily_price": 240},
		},
	}
}

func TestRates(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "RATE1") // maxguest 6
	acc.a(t, "property-rate", validRates("RATE1")).status(t, http.StatusOK)
	doc := stored(t, acc.AccountID, pid)
	if field(doc, "rates", "rate", "daily_price") != "180" || field(doc, "rates", "setting", "default_allow_checkin") != "Friday,Saturday" {
		t.Fatalf("rates not stored: %v", doc["rates"])
	}
	acc.a(t, "property-rate", validRates("NOPE")).status(t, http.StatusNotFound)

	cases := []struct {
		name  string
		set   func(r obj)
		field string
		msg   string
	}{
		{"daily_price missing", func(r obj) { delete(r["rate"].(obj), "daily_price") }, "rate.daily_price", "is required"},
		{"daily_price negative", func(r obj) { r["rate"].(obj)["daily_price"] = -1 }, "rate.daily_price", "between 0 and 2147483647"},
		{"daily_price over max", func(r obj) { r["rate"].(obj)["daily_price"] = 2147483648 }, "rate.daily_price", "between 0 and 2147483647"},
		{"minimum_stay missing", func(r obj) { delete(r["rate"].(obj), "minimum_stay") }, "rate.minimum_stay", "is required"},
		{"los days 41", func(r obj) { r["los"] = []obj{{"days": 41, "discount": 5}} }, "los[0].days", "between 1 and 40"},
		{"los discount 100", func(r obj) { r["los"] = []obj{{"days": 3, "discount": 100}} }, "los[0].discount", "between 1 and 99"},
		{"standard_occupants 0", func(r obj) { r["setting"].(obj)["standard_occupants"] = 0 }, "setting.standard_occupants", ""},
		{"accept_booking_upto 13", func(r obj) { r["setting"].(obj)["accept_booking_upto"] = 13 }, "setting.accept_booking_upto", "between 0 and 12"},
		{"checkin day unknown", func(r obj) { r["setting"].(obj)["default_allow_checkin"] = "Funday" }, "setting.default_allow_checkin", ""},
		{"both same-day and notice", func(r obj) { r["setting"].(obj)["advanced_notice_booking_from"] = "2" }, "setting.advanced_notice_booking_from", "must not be set together with allow_same_day_booking_until"},
		{"neither same-day nor notice", func(r obj) { delete(r["setting"].(obj), "allow_same_day_booking_until") }, "setting.allow_same_day_booking_until", "is required unless advanced_notice_booking_from is set"},
		{"same-day time 25:00", func(r obj) { r["setting"].(obj)["allow_same_day_booking_until"] = "25:00" }, "setting.allow_same_day_booking_until", ""},
		{"season end before start", func(r obj) { r["season"].([]obj)[0]["end_date"] = "2027-06-01" }, "season[0].end_date", ""},
		{"season date not a date", func(r obj) { r["season"].([]obj)[0]["start_date"] = "2027-02-30" }, "season[0].start_date", ""},
		{"season minimum_stay above maxguest", func(r obj) { r["season"].([]obj)[0]["minimum_stay"] = 7 }, "season[0].minimum_stay", "6"},
		{"seasons overlap", func(r obj) { r["season"].([]obj)[1]["start_date"] = "2027-09-01" }, "season[1].start_date", "overlap"},
		{"season daily_price missing", func(r obj) { delete(r["season"].([]obj)[1], "daily_price") }, "season[1].daily_price", "is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := validRates("RATE1")
			c.set(r)
			acc.a(t, "property-rate", r).wantViolation(t, c.field, c.msg)
		})
	}
	if v := field(stored(t, acc.AccountID, pid), "version"); v != int64(2) {
		t.Fatalf("rejected rates changed the property: version %v", v)
	}
}

func TestPaymentMethods(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "PM1")
	methods := obj{
		"internal_code": "PM1",
		"stripe":        obj{"secret_key": "sk_live_TOPSECRET1", "public_key": "pk_live_1", "description": "Cards"},
		"authorizenet":  obj{"login_id": "login1", "transaction_key": "TOPSECRET2"},
		"paypal":        obj{"email": "owner@example.com"},
		"openpay":       obj{"secret_key": "TOPSECRET3", "open_key": "open1"},
		"firstdata":     obj{"gateway_id": "gw1", "encryption_key": "TOPSECRET4"},
		"nexi":          obj{"secure_3d": true, "merchant_id": "m1", "password": "TOPSECRET5"},
	}
	acc.a(t, "property-method", methods).status(t, http.StatusOK)
	raw := string(mustJSON(stored(t, acc.AccountID, pid)["methods"]))
	if strings.Contains(raw, "TOPSECRET") {
		t.Fatalf("gateway secrets stored in clear: %s", raw)
	}
	for _, p := range []string{"stripe", "authorizenet", "paypal", "openpay", "firstdata", "nexi"} {
		if !strings.Contains(raw, `"`+p+`"`) {
			t.Fatalf("%s not stored: %s", p, raw)
		}
	}
	cases := []struct {
		name  string
		body  obj
		field string
		msg   string
	}{
		{"stripe without secret_key", obj{"internal_code": "PM1", "stripe": obj{"public_key": "pk"}}, "stripe.secret_key", "is required"},
		{"secret over 255", obj{"internal_code": "PM1", "openpay": obj{"secret_key": strings.Repeat("s", 256), "open_key": "o"}}, "openpay.secret_key", "at most 255"},
		{"description over 1000", obj{"internal_code": "PM1", "paypal": obj{"email": "a@b.co", "description": strings.Repeat("d", 1001)}}, "paypal.description", "at most 1000"},
		{"nexi without secure_3d", obj{"internal_code": "PM1", "nexi": obj{"merchant_id": "m", "password": "p"}}, "nexi.secure_3d", "is required"},
		{"paypal email invalid", obj{"internal_code": "PM1", "paypal": obj{"email": "not-an-email"}}, "paypal.email", ""},
		{"unknown gateway", obj{"internal_code": "PM1", "bitpay": obj{"key": "k"}}, "bitpay", "must be one of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { acc.a(t, "property-method", c.body).wantViolation(t, c.field, c.msg) })
	}
	acc.a(t, "property-method", obj{"internal_code": "NOPE", "cash": obj{}}).status(t, http.StatusNotFound)
	// An empty set clears the methods.
	acc.a(t, "property-method", obj{"internal_code": "PM1"}).status(t, http.StatusOK)
	if gw, _ := field(stored(t, acc.AccountID, pid), "methods", "gateways").(bson.A); len(gw) != 0 {
		t.Fatalf("empty set left %d gateways", len(gw))
	}
}

func TestTaxesServicesAmenities(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "EXT1")
	acc.a(t, "property-tax", obj{"internal_code": "EXT1", "taxes": []obj{
		{"name": "City tax", "amount": 10, "type": 1, "calculationType": 1, "def": 1},
		{"name": "VAT", "amount": "14", "type": 1, "def": 1},
	}}).status(t, http.StatusOK)
	acc.a(t, "property-service", obj{"internal_code": "EXT1", "services": []obj{
		{"name": "Cleaning", "amount": 80, "type": 1, "applicable": 1, "def": 1, "taxes": []obj{{"name": "VAT", "perc": "10"}}},
		{"name": "Concierge", "amount": 30, "type": 2, "def": 0},
	}}).status(t, http.StatusOK)
	acc.a(t, "property-amenity", obj{"internal_code": "EXT1", "bedoption": 2, "useicon": true, "amenities": []obj{
		{"name": "Wifi", "value": "fibre", "qty": 1, "type": 1, "class": "internet", "languages": obj{"it": "Wifi"}},
		{"name": "", "default_name": "Pool", "qty": 1, "type": 2},
	}}).status(t, http.StatusOK)
	doc := stored(t, acc.AccountID, pid)
	if taxes, _ := doc["taxes"].(bson.A); len(taxes) != 2 {
		t.Fatalf("taxes: %v", doc["taxes"])
	}
	if svcs, _ := doc["services"].(bson.A); len(svcs) != 2 {
		t.Fatalf("services: %v", doc["services"])
	}
	if field(doc, "amenities", "bedoption") != int32(2) {
		t.Fatalf("amenities: %v", doc["amenities"])
	}
	cases := []struct {
		resource, name string
		body           obj
		field, msg     string
	}{
		{"property-tax", "tax percent over 100", obj{"internal_code": "EXT1", "taxes": []obj{{"name": "X", "amount": 101, "type": 1}}}, "taxes[0].amount", "100"},
		{"property-tax", "tax type 3", obj{"internal_code": "EXT1", "taxes": []obj{{"name": "X", "amount": 1, "type": 3}}}, "taxes[0].type", ""},
		{"property-tax", "tax name missing", obj{"internal_code": "EXT1", "taxes": []obj{{"amount": 1, "type": 2}}}, "taxes[0].name", "is required"},
		{"property-service", "applicable 5", obj{"internal_code": "EXT1", "services": []obj{{"name": "X", "amount": 1, "type": 1, "applicable": 5}}}, "services[0].applicable", ""},
		{"property-service", "service tax perc 101", obj{"internal_code": "EXT1", "services": []obj{{"name": "X", "amount": 1, "type": 1, "taxes": []obj{{"name": "T", "perc": "101"}}}}}, "services[0].taxes[0].perc", ""},
		{"property-amenity", "amenity type 3", obj{"internal_code": "EXT1", "amenities": []obj{{"name": "X", "type": 3}}}, "amenities[0].type", ""},
		{"property-amenity", "bedoption 3", obj{"internal_code": "EXT1", "bedoption": 3, "amenities": []obj{}}, "bedoption", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { acc.a(t, c.resource, c.body).wantViolation(t, c.field, c.msg) })
	}
	if v := field(stored(t, acc.AccountID, pid), "version"); v != int64(4) {
		t.Fatalf("rejected requests changed the property: version %v", v)
	}
}

func TestAccountSettings(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	r := acc.a(t, "account-settings", obj{"currency": "EUR", "timezone": "Europe/Rome", "languages": []string{"it", "en"},
		"lead_sources": []obj{{"id": 1, "name": "Website"}, {"id": 9, "name": "Agency"}},
		"brands":       []obj{{"id": 1, "name": "Lake Homes", "domain": "lakehomes.example"}}})
	r.status(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"currency":"EUR"`) || !strings.Contains(string(r.Body), `"Agency"`) {
		t.Fatalf("settings answer: %s", r.Body)
	}
	// Absent fields keep their value.
	r = acc.a(t, "account-settings", obj{"timezone": "Europe/Paris"})
	if !strings.Contains(string(r.Body), `"currency":"EUR"`) || !strings.Contains(string(r.Body), `"Europe/Paris"`) {
		t.Fatalf("partial settings update: %s", r.Body)
	}
	// Another account still has the defaults.
	if r := other.a(t, "account-settings", obj{}); !strings.Contains(string(r.Body), `"currency":"USD"`) {
		t.Fatalf("other account's settings: %s", r.Body)
	}
	for _, c := range []struct {
		name       string
		body       obj
		field, msg string
	}{
		{"currency unknown", obj{"currency": "ABC"}, "currency", ""},
		{"timezone unknown", obj{"timezone": "Nowhere/City"}, "timezone", ""},
		{"lead source ids repeat", obj{"lead_sources": []obj{{"id": 1, "name": "A"}, {"id": 1, "name": "B"}}}, "lead_sources[1].id", ""},
		{"brand name missing", obj{"brands": []obj{{"id": 2}}}, "brands[0].name", "is required"},
	} {
		t.Run(c.name, func(t *testing.T) { acc.a(t, "account-settings", c.body).wantViolation(t, c.field, c.msg) })
	}
}

// TestAmenityOptionsMerge: a later amenity request without bedoption, useicon or
// description replaces the list and keeps those options.
func TestAmenityOptionsMerge(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "AM1")
	acc.a(t, "property-amenity", obj{"internal_code": "AM1", "bedoption": 2, "useicon": true, "description": "Sea view",
		"amenities": []obj{{"name": "Wifi", "type": 1}}}).status(t, http.StatusOK)
	acc.a(t, "property-amenity", obj{"internal_code": "AM1", "amenities": []obj{{"name": "Pool", "type": 2}, {"name": "Sauna", "type": 2}}}).status(t, http.StatusOK)
	am, _ := field(stored(t, acc.AccountID, pid), "amenities").(bson.M)
	items, _ := am["items"].(bson.A)
	if len(items) != 2 || am["bedoption"] != int32(2) || am["useicon"] != true || am["description"] != "Sea view" {
		t.Fatalf("amenities after a list-only update: %v", am)
	}
}
