package property_test

import (
	"maps"
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const amenitiesExample = `{
	"internal_code": "VR-001",
	"amenities": [
		{"name": "", "default_name": "Swimming pool", "value": "heated", "qty": 1, "type": 1, "class": "outdoor",
		 "languages": {"en": "Swimming pool", "it": "Piscina", "pt_BR": "Piscina"}},
		{"name": "Kayak", "qty": "2", "type": 2}
	],
	"bedoption": 2,
	"useicon": true,
	"description": "Everything you need for a beach holiday."
}`

func decodeAmenities(body []byte) error {
	_, err := property.DecodeAmenities(body)
	return err
}

func TestDecodeAmenities(t *testing.T) {
	const a0 = "amenities[0]."
	rows := []row{
		tc("valid example", ""),
		tc("internal_code missing", "internal_code: is required", set("internal_code", del)),
		tc("amenities missing", "amenities: is required", set("amenities", del)),
		tc("amenities 300 items", "", set("amenities", many(300, `{"type":1}`))),
		tc("amenities 301 items", "amenities: must have at most 300 items", set("amenities", many(301, `{"type":1}`))),
		tc("name 100 chars", "", set(a0+"name", chars(100))),
		tc("name 101 chars", a0+"name: must be at most 100 characters", set(a0+"name", chars(101))),
		tc("default_name 101 chars", a0+"default_name: must be at most 100 characters", set(a0+"default_name", chars(101))),
		tc("value 256 chars", a0+"value: must be at most 255 characters", set(a0+"value", chars(256))),
		tc("qty 0", "", set(a0+"qty", 0)),
		tc("qty 999", "", set(a0+"qty", 999)),
		tc("qty 1000", a0+"qty: must be between 0 and 999", set(a0+"qty", 1000)),
		tc("qty -1", a0+"qty: must be between 0 and 999", set(a0+"qty", -1)),
		tc("type missing", a0+"type: is required", set(a0+"type", del)),
		tc("type 3", a0+"type: must be one of 1, 2", set(a0+"type", 3)),
		tc("class 51 chars", a0+"class: must be at most 50 characters", set(a0+"class", chars(51))),
		tc("languages not an object", a0+"languages: must be an object", set(a0+"languages", "en")),
		tc("language key not BCP 47", a0+"languages.english: must be keyed by a BCP 47 language tag", set(a0+"languages.english", "Pool")),
		tc("language key unknown", a0+"languages.xx: must be keyed by a BCP 47 language tag", set(a0+"languages.xx", "Pool")),
		tc("language key und", a0+"languages.und: must be keyed by a BCP 47 language tag", set(a0+"languages.und", "Pool")),
		tc("language key twice (keys taken in sorted order)", a0+"languages.pt_BR: duplicates language pt-BR", set(a0+"languages.pt-br", "Piscina")),
		tc("language name 101 chars", a0+"languages.it: must be at most 100 characters", set(a0+"languages.it", chars(101))),
		tc("language name blank", a0+"languages.it: is required", set(a0+"languages.it", "")),
		tc("bedoption 3", "bedoption: must be one of 1, 2", set("bedoption", 3)),
		tc("bedoption absent", "", set("bedoption", del)),
		tc("useicon not boolean", "useicon: must be a boolean", set("useicon", "icons")),
		tc("description 5000 chars", "", set("description", chars(5000))),
		tc("description 5001 chars", "description: must be at most 5000 characters", set("description", chars(5001))),
	}
	check(t, amenitiesExample, rows, decodeAmenities)
}

func TestDecodeAmenitiesValues(t *testing.T) {
	a, err := property.DecodeAmenities([]byte(amenitiesExample))
	if err != nil {
		t.Fatal(err)
	}
	pool, kayak := a.Amenities[0], a.Amenities[1]
	wantLangs := map[string]string{"en": "Swimming pool", "it": "Piscina", "pt-BR": "Piscina"}
	if pool.Name != "" || pool.DefaultName != "Swimming pool" || pool.Value != "heated" || pool.Qty != 1 || pool.Type != property.AmenitySystem || pool.Class != "outdoor" || !maps.Equal(pool.Languages, wantLangs) {
		t.Errorf("pool: %+v", pool)
	}
	if kayak.Name != "Kayak" || kayak.Qty != 2 || kayak.Type != property.AmenityExtra || kayak.Languages != nil {
		t.Errorf("kayak: %+v", kayak)
	}
	if *a.BedOption != 2 || !*a.UseIcon || *a.Description != "Everything you need for a beach holiday." {
		t.Errorf("settings: %+v", a)
	}
	a, err = property.DecodeAmenities([]byte(`{"internal_code":"VR-001","amenities":[]}`))
	if err != nil || a.BedOption != nil || a.UseIcon != nil || a.Description != nil || len(a.Amenities) != 0 {
		t.Errorf("absent settings must stay nil: %+v, %v", a, err)
	}
}
