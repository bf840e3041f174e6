package e2e

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

func TestPropertyLifecycle(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	id := createProperty(t, acc, "LIFE1")
	doc := stored(t, acc.AccountID, id)
	if field(doc, "content", "name") != "Seaside Villa with Garden" || field(doc, "version") != int64(1) {
		t.Fatalf("stored after create: %v", doc)
	}

	// Duplicate internal_code within the account → 409.
	r := acc.a(t, "property", obj{"action": "create", "property": validProperty("LIFE1")})
	r.status(t, http.StatusConflict)
	if e := r.aError(t); e.ErrorType != "conflict" {
		t.Fatalf("duplicate: %s", r.Body)
	}

	// Update: floor and postcode may be absent and keep their values; sent fields replace.
	p := validProperty("LIFE1")
	delete(p, "floor")
	delete(p, "postcode")
	p["name"] = "Seaside Villa with Big Garden"
	r = acc.a(t, "property", obj{"action": "update", "property": p})
	r.status(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"property_id":"`+id+`"`) {
		t.Fatalf("update answer: %s", r.Body)
	}
	doc = stored(t, acc.AccountID, id)
	if field(doc, "content", "name") != "Seaside Villa with Big Garden" || field(doc, "content", "floor") != "Ground" ||
		field(doc, "content", "postcode") != "33139" || field(doc, "version") != int64(2) {
		t.Fatalf("stored after update: %v", doc["content"])
	}

	// Delete, then the code is free and the old property is gone.
	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "LIFE1"}}).status(t, http.StatusOK)
	acc.a(t, "property", obj{"action": "update", "property": validProperty("LIFE1")}).status(t, http.StatusNotFound)
	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "LIFE1"}}).status(t, http.StatusNotFound)
	if again := createProperty(t, acc, "LIFE1"); again == id {
		t.Fatalf("re-created property reused id %s", id)
	}
}

func TestPropertyUnknownCode(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	r := acc.a(t, "property", obj{"action": "update", "property": validProperty("NOPE")})
	r.status(t, http.StatusNotFound)
	if e := r.aError(t); e.ErrorType != "not_found" || !strings.Contains(e.ErrorMessage, `"NOPE"`) {
		t.Fatalf("unknown code: %s", r.Body)
	}
}

// TestPropertyInvalidFields: each row breaks one rule of A1; the answer names the field and
// the rule, and nothing is stored (the same code can then be created).
func TestPropertyInvalidFields(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	cases := []struct {
		name  string
		set   func(p obj)
		field string
		msg   string
	}{
		{"internal_code 11 chars", func(p obj) { p["internal_code"] = "ABCDEFGHIJK" }, "property.internal_code", "at most 10 characters"},
		{"internal_code missing", func(p obj) { delete(p, "internal_code") }, "property.internal_code", "is required"},
		{"name 19 chars", func(p obj) { p["name"] = strings.Repeat("n", 19) }, "property.name", "at least 20 characters"},
		{"name 81 chars", func(p obj) { p["name"] = strings.Repeat("n", 81) }, "property.name", "at most 80 characters"},
		{"name not a string", func(p obj) { p["name"] = obj{"x": 1} }, "property.name", "must be a string"},
		{"type not in list", func(p obj) { p["type"] = "Castle" }, "property.type", "must be one of None, Apartment, Condo, House, Villa"},
		{"brief 399 chars", func(p obj) { p["brief"] = strings.Repeat("b", 399) }, "property.brief", "at least 400 characters"},
		{"brief 10001 chars", func(p obj) { p["brief"] = strings.Repeat("b", 10001) }, "property.brief", "at most 10000 characters"},
		{"maxguest 0", func(p obj) { p["maxguest"] = 0 }, "property.maxguest", "between 1 and 50"},
		{"maxguest 51", func(p obj) { p["maxguest"] = 51 }, "property.maxguest", "between 1 and 50"},
		{"maxguest text", func(p obj) { p["maxguest"] = "six" }, "property.maxguest", "must be"},
		{"maxguest fraction", func(p obj) { p["maxguest"] = 2.5 }, "property.maxguest", "whole number"},
		{"bedrooms 31", func(p obj) { p["bedrooms"] = 31 }, "property.bedrooms", "between 1 and 30"},
		{"bathrooms 0", func(p obj) { p["bathrooms"] = 0 }, "property.bathrooms", "between 1 and 30"},
		{"kitchens missing", func(p obj) { delete(p, "kitchens") }, "property.kitchens", "is required"},
		{"floor 101", func(p obj) { p["floor"] = "101" }, "property.floor", "Basement, Ground or a number from 1 to 100"},
		{"floor missing on create", func(p obj) { delete(p, "floor") }, "property.floor", "is required"},
		{"space missing", func(p obj) { delete(p, "space") }, "property.space", "is required"},
		{"space unit yards", func(p obj) { p["space"] = obj{"value": 10, "unit": "yards"} }, "property.space.unit", "meters, feet"},
		{"space value missing", func(p obj) { p["space"] = obj{"unit": "feet"} }, "property.space.value", "is required"},
		{"phone with letters", func(p obj) { p["phone"] = "555-CALL" }, "property.phone", "digits"},
		{"phone 21 digits", func(p obj) { p["phone"] = strings.Repeat("1", 21) }, "property.phone", "at most 20"},
		{"city 201 chars", func(p obj) { p["city"] = strings.Repeat("c", 201) }, "property.city", "at most 200"},
		{"city empty", func(p obj) { p["city"] = "" }, "property.city", "is required"},
		{"postcode 21 chars", func(p obj) { p["postcode"] = strings.Repeat("9", 21) }, "property.postcode", "at most 20"},
		{"country 3 letters", func(p obj) { p["country"] = "USA" }, "property.country", "2"},
		{"country unknown", func(p obj) { p["country"] = "XX" }, "property.country", "country code"},
		{"latitude 91", func(p obj) { p["latitude"] = 91 }, "property.latitude", "between -90 and 90"},
		{"longitude -181", func(p obj) { p["longitude"] = -181 }, "property.longitude", "between -180 and 180"},
		{"allowpet not boolean", func(p obj) { p["allowpet"] = "maybe" }, "property.allowpet", "must be a boolean"},
		{"timezone unknown", func(p obj) { p["timezone"] = "Mars/Olympus" }, "property.timezone", "IANA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validProperty("INV1")
			c.set(p)
			acc.a(t, "property", obj{"action": "create", "property": p}).wantViolation(t, c.field, c.msg)
		})
	}
	// Nothing was stored: the code is still free.
	createProperty(t, acc, "INV1")

	t.Run("update keeps the stored property when invalid", func(t *testing.T) {
		id := createProperty(t, acc, "INV2")
		p := validProperty("INV2")
		p["name"] = "Renamed Villa That Is Valid"
		p["maxguest"] = 99
		acc.a(t, "property", obj{"action": "update", "property": p}).wantViolation(t, "property.maxguest", "between 1 and 50")
		if doc := stored(t, acc.AccountID, id); field(doc, "content", "name") != "Seaside Villa with Garden" || field(doc, "version") != int64(1) {
			t.Fatalf("rejected update changed the property: %v", doc["content"])
		}
	})
	t.Run("action unknown", func(t *testing.T) {
		acc.a(t, "property", obj{"action": "rename", "property": validProperty("X")}).wantViolation(t, "action", "create, update, delete")
	})
	t.Run("body not JSON", func(t *testing.T) {
		r := acc.a(t, "property", "{not json")
		r.status(t, http.StatusBadRequest)
		r.aError(t)
	})
}

// TestInterfaceAAuth: every resource refuses a missing or wrong credential with 401 in
// interface A's envelope, before anything is looked at.
func TestInterfaceAAuth(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	cases := []struct {
		name    string
		headers map[string]string
	}{
		{"nothing", map[string]string{}},
		{"basic only", map[string]string{"Authorization": basic(acc.BasicUser, acc.BasicPassword)}},
		{"service pair only", map[string]string{"servicekey": acc.ServiceKey, "servicepass": acc.ServicePass}},
		{"wrong basic password", map[string]string{"Authorization": basic(acc.BasicUser, "wrong"), "servicekey": acc.ServiceKey, "servicepass": acc.ServicePass}},
		{"wrong servicepass", map[string]string{"Authorization": basic(acc.BasicUser, acc.BasicPassword), "servicekey": acc.ServiceKey, "servicepass": "wrong"}},
		{"unknown basic user", map[string]string{"Authorization": basic("nobody", "x"), "servicekey": acc.ServiceKey, "servicepass": acc.ServicePass}},
		{"pairs of two accounts", map[string]string{"Authorization": basic(acc.BasicUser, acc.BasicPassword), "servicekey": other.ServiceKey, "servicepass": other.ServicePass}},
		{"bearer instead of basic", map[string]string{"Authorization": "Bearer " + acc.BasicPassword, "servicekey": acc.ServiceKey, "servicepass": acc.ServicePass}},
		// The account's own B key/pass is a valid pair while legacy_credentials is on (issue #11;
		// compat_edge_test.go switches it off): another account's is not.
		{"another account's interface B key as service pair", map[string]string{"Authorization": basic(acc.BasicUser, acc.BasicPassword), "servicekey": other.Key, "servicepass": other.Pass}},
	}
	for _, res := range []string{"property", "property-photo", "property-policy", "property-rate", "property-method",
		"property-tax", "property-service", "property-amenity", "account-settings"} {
		for _, c := range cases {
			r := do(t, http.MethodPost, "/api/"+res, c.headers, `{"action":"create","property":{}}`)
			if r.Code != http.StatusUnauthorized {
				t.Errorf("%s, %s: HTTP %d: %s", res, c.name, r.Code, r.Body)
				continue
			}
			if e := r.aError(t); e.ErrorType != "unauthorized" {
				t.Errorf("%s, %s: %s", res, c.name, r.Body)
			}
		}
	}
	t.Run("service pair in the body", func(t *testing.T) {
		h := map[string]string{"Authorization": basic(acc.BasicUser, acc.BasicPassword)}
		body := `{"servicekey":"` + acc.ServiceKey + `","servicepass":"` + acc.ServicePass + `","action":"create","property":` + string(mustJSON(validProperty("BODY1"))) + `}`
		do(t, http.MethodPost, "/api/property", h, body).status(t, http.StatusOK)
	})
	t.Run("unknown resource", func(t *testing.T) {
		acc.a(t, "property-unicorn", obj{}).status(t, http.StatusNotFound)
	})
	t.Run("body over the limit", func(t *testing.T) {
		r := acc.a(t, "property", `{"pad":"`+strings.Repeat("x", 1<<20)+`"}`)
		r.status(t, http.StatusRequestEntityTooLarge)
		r.aError(t)
	})
}

// TestPropertyTenantIsolation: two accounts may both use internal_code V1, and neither can
// read or change the other's property through any resource.
func TestPropertyTenantIsolation(t *testing.T) {
	t.Parallel()
	a, b := newAccount(t), newAccount(t)
	idA := createProperty(t, a, "V1")
	idB := createProperty(t, b, "V1")
	if idA == idB {
		t.Fatalf("two accounts got one property id %s", idA)
	}
	p := validProperty("V1")
	p["name"] = "Account B renamed its own V1"
	b.a(t, "property", obj{"action": "update", "property": p}).status(t, http.StatusOK)
	if field(stored(t, a.AccountID, idA), "content", "name") != "Seaside Villa with Garden" {
		t.Fatal("B's update of its V1 changed A's V1")
	}
	createProperty(t, a, "ONLYA")
	for _, c := range []struct {
		resource string
		body     obj
	}{
		{"property", obj{"action": "update", "property": validProperty("ONLYA")}},
		{"property", obj{"action": "delete", "property": obj{"internal_code": "ONLYA"}}},
		{"property-photo", obj{"action": "create", "photo": obj{"internal_code": "ONLYA", "image": samplePNG(t, 64, 48)}}},
		{"property-policy", obj{"internal_code": "ONLYA", "short_stay": obj{"payment_type": "None"}}},
		{"property-policy", obj{"property_id": idA, "short_stay": obj{"payment_type": "None"}}},
		{"property-rate", validRates("ONLYA")},
		{"property-method", obj{"internal_code": "ONLYA", "cash": obj{"description": "x"}}},
		{"property-tax", obj{"internal_code": "ONLYA", "taxes": []obj{}}},
		{"property-service", obj{"internal_code": "ONLYA", "services": []obj{}}},
		{"property-amenity", obj{"internal_code": "ONLYA", "amenities": []obj{}}},
	} {
		r := b.a(t, c.resource, c.body)
		if r.Code != http.StatusNotFound {
			t.Errorf("B on A's property via %s: HTTP %d %s", c.resource, r.Code, r.Body)
		}
	}
	if doc := stored(t, a.AccountID, idA); field(doc, "version") != int64(1) {
		t.Fatalf("A's property changed by B: version %v", doc["version"])
	}
}
