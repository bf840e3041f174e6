package property_test

import (
	"strings"
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

var brief400 = strings.Repeat("b", 400)

var propertyCreate = `{
	"action": "create",
	"property": {
		"internal_code": "VR-001",
		"name": "Sunny villa with sea view",
		"type": "Villa",
		"brief": "` + brief400 + `",
		"maxguest": 6,
		"bedrooms": 3,
		"bathrooms": "2",
		"kitchens": 1,
		"floor": "Ground",
		"space": {"value": 120.5, "unit": "meters"},
		"phone": "390612345678",
		"address": "Via Roma 1",
		"city": "Rome",
		"state": "Lazio",
		"postcode": "00100",
		"country": "it",
		"latitude": 41.9028,
		"longitude": "12.4964",
		"allowchildren": true,
		"allowpet": "0",
		"allowsmoking": 0,
		"timezone": "Europe/Rome"
	}
}`

func decodeProperty(body []byte) error {
	_, err := property.DecodeProperty(body)
	return err
}

func TestDecodePropertyCreate(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("action missing", "action: is required", set("action", del)),
		tc("action unknown", "action: must be one of create, update, delete, get, list", set("action", "upsert")),
		tc("property missing", "property: is required", set("property", del)),
		tc("property not an object", "property: must be an object", set("property", "VR-001")),

		tc("internal_code missing", "property.internal_code: is required", set("property.internal_code", del)),
		tc("internal_code 10 chars", "", set("property.internal_code", chars(10))),
		tc("internal_code 11 chars", "property.internal_code: must be at most 10 characters", set("property.internal_code", chars(11))),

		tc("name missing", "property.name: is required", set("property.name", del)),
		tc("name blank", "property.name: is required", set("property.name", "    ")),
		tc("name 19 chars", "property.name: must be at least 20 characters", set("property.name", chars(19))),
		tc("name 20 chars", "", set("property.name", chars(20))),
		tc("name 80 chars", "", set("property.name", chars(80))),
		tc("name 81 chars", "property.name: must be at most 80 characters", set("property.name", chars(81))),
		tc("name 80 accented chars", "", set("property.name", strings.Repeat("é", 80))),

		tc("type missing", "property.type: is required", set("property.type", del)),
		tc("type unknown", "property.type: must be one of None, Apartment, Condo, House, Villa", set("property.type", "Castle")),
		tc("type any case", "", set("property.type", "apartment")),

		tc("brief absent", "", set("property.brief", del)),
		tc("brief 399 chars", "property.brief: must be at least 400 characters", set("property.brief", chars(399))),
		tc("brief 10000 chars", "", set("property.brief", chars(10000))),
		tc("brief 10001 chars", "property.brief: must be at most 10000 characters", set("property.brief", chars(10001))),

		tc("maxguest missing", "property.maxguest: is required", set("property.maxguest", del)),
		tc("maxguest 0", "property.maxguest: must be between 1 and 50", set("property.maxguest", 0)),
		tc("maxguest 50", "", set("property.maxguest", 50)),
		tc("maxguest 51", "property.maxguest: must be between 1 and 50", set("property.maxguest", 51)),
		tc("maxguest as string", "", set("property.maxguest", "21")),
		tc("maxguest fraction", "property.maxguest: must be a whole number", set("property.maxguest", "21.5")),
		tc("maxguest text", "property.maxguest: must be a number", set("property.maxguest", "six")),
		tc("maxguest bool", "property.maxguest: must be a number", set("property.maxguest", true)),

		tc("bedrooms 0", "property.bedrooms: must be between 1 and 30", set("property.bedrooms", 0)),
		tc("bedrooms 30", "", set("property.bedrooms", 30)),
		tc("bedrooms 31", "property.bedrooms: must be between 1 and 30", set("property.bedrooms", 31)),
		tc("bedrooms fraction", "property.bedrooms: must be a whole number", set("property.bedrooms", 2.5)),
		tc("bathrooms missing", "property.bathrooms: is required", set("property.bathrooms", del)),
		tc("bathrooms 31", "property.bathrooms: must be between 1 and 30", set("property.bathrooms", 31)),
		tc("kitchens 0", "property.kitchens: must be between 1 and 30", set("property.kitchens", 0)),
		tc("kitchens 31", "property.kitchens: must be between 1 and 30", set("property.kitchens", "31")),

		tc("floor missing on create", "property.floor: is required", set("property.floor", del)),
		tc("floor blank on create", "property.floor: is required", set("property.floor", "")),
		tc("floor Basement", "", set("property.floor", "Basement")),
		tc("floor any case", "", set("property.floor", "GROUND")),
		tc("floor 1", "", set("property.floor", "1")),
		tc("floor 100", "", set("property.floor", "100")),
		tc("floor as number", "", set("property.floor", 7)),
		tc("floor 0", "property.floor: must be Basement, Ground or a number from 1 to 100", set("property.floor", "0")),
		tc("floor 101", "property.floor: must be Basement, Ground or a number from 1 to 100", set("property.floor", "101")),
		tc("floor leading zero", "property.floor: must be Basement, Ground or a number from 1 to 100", set("property.floor", "07")),
		tc("floor word", "property.floor: must be Basement, Ground or a number from 1 to 100", set("property.floor", "Attic")),
		tc("floor 11 chars", "property.floor: must be at most 10 characters", set("property.floor", "Penthouse 1")),

		tc("space missing", "property.space: is required", set("property.space", del)),
		tc("space not an object", "property.space: must be an object", set("property.space", 120)),
		tc("space.value missing", "property.space.value: is required", set("property.space.value", del)),
		tc("space.value 0", "property.space.value: must be greater than 0", set("property.space.value", 0)),
		tc("space.value negative", "property.space.value: must be greater than 0", set("property.space.value", -3)),
		tc("space.unit missing", "property.space.unit: is required", set("property.space.unit", del)),
		tc("space.unit feet", "", set("property.space.unit", "feet")),
		tc("space.unit unknown", "property.space.unit: must be one of meters, feet", set("property.space.unit", "yards")),

		tc("phone absent", "", set("property.phone", del)),
		tc("phone empty", "", set("property.phone", "")),
		tc("phone 20 digits", "", set("property.phone", digits(20))),
		tc("phone 21 digits", "property.phone: must be at most 20 characters", set("property.phone", digits(21))),
		tc("phone not digits", "property.phone: must contain digits only", set("property.phone", "+39 06 1234")),
		tc("phone as number", "", set("property.phone", 3906123)),

		tc("address missing", "property.address: is required", set("property.address", del)),
		tc("address blank", "property.address: is required", set("property.address", " ")),
		tc("address 500 chars", "", set("property.address", chars(500))),
		tc("address 501 chars", "property.address: must be at most 500 characters", set("property.address", chars(501))),

		tc("city missing", "property.city: is required", set("property.city", del)),
		tc("city empty", "property.city: is required", set("property.city", "")),
		tc("city 200 chars", "", set("property.city", chars(200))),
		tc("city 201 chars", "property.city: must be at most 200 characters", set("property.city", chars(201))),

		tc("state absent", "", set("property.state", del)),
		tc("state 201 chars", "property.state: must be at most 200 characters", set("property.state", chars(201))),

		tc("postcode missing on create", "property.postcode: is required", set("property.postcode", del)),
		tc("postcode 20 chars", "", set("property.postcode", chars(20))),
		tc("postcode 21 chars", "property.postcode: must be at most 20 characters", set("property.postcode", chars(21))),
		tc("postcode as number", "", set("property.postcode", 10115)),

		tc("country missing", "property.country: is required", set("property.country", del)),
		tc("country 3 letters", "property.country: must be exactly 2 characters", set("property.country", "ITA")),
		tc("country unknown code", "property.country: must be an ISO 3166-1 alpha-2 country code", set("property.country", "XX")),
		tc("country alias refused", "property.country: must be an ISO 3166-1 alpha-2 country code (UK is written GB)", set("property.country", "UK")),
		tc("country digits", "property.country: must be an ISO 3166-1 alpha-2 country code", set("property.country", "12")),

		tc("latitude missing", "property.latitude: is required", set("property.latitude", del)),
		tc("latitude -90", "", set("property.latitude", -90)),
		tc("latitude 90.0001", "property.latitude: must be between -90 and 90", set("property.latitude", 90.0001)),
		tc("latitude -90.0001", "property.latitude: must be between -90 and 90", set("property.latitude", "-90.0001")),
		tc("longitude missing", "property.longitude: is required", set("property.longitude", del)),
		tc("longitude 180", "", set("property.longitude", 180)),
		tc("longitude 180.1", "property.longitude: must be between -180 and 180", set("property.longitude", 180.1)),
		tc("longitude -181", "property.longitude: must be between -180 and 180", set("property.longitude", -181)),

		tc("allowchildren not boolean", "property.allowchildren: must be a boolean", set("property.allowchildren", "maybe")),
		tc("allowpet 2", "property.allowpet: must be a boolean", set("property.allowpet", 2)),
		tc("allowsmoking \"true\"", "", set("property.allowsmoking", "true")),

		tc("timezone absent", "", set("property.timezone", del)),
		tc("timezone empty means account default", "", set("property.timezone", "")),
		tc("timezone UTC", "", set("property.timezone", "UTC")),
		tc("timezone unknown", "property.timezone: must be an IANA time zone name such as Europe/Rome", set("property.timezone", "Mars/Olympus")),
		tc("timezone Local refused", "property.timezone: must be an IANA time zone name such as Europe/Rome", set("property.timezone", "Local")),
		tc("timezone path", "property.timezone: must be an IANA time zone name such as Europe/Rome", set("property.timezone", "../../etc/passwd")),

		tc("isfeatured absent", "", set("property.isfeatured", del)),
		tc("isfeatured true", "", set("property.isfeatured", true)),
		tc("isfeatured \"1\"", "", set("property.isfeatured", "1")),
		tc("isfeatured blank means not sent", "", set("property.isfeatured", "")),
		tc("isfeatured not boolean", "property.isfeatured: must be a boolean", set("property.isfeatured", "yes")),
		tc("isfeatured 2", "property.isfeatured: must be a boolean", set("property.isfeatured", 2)),

		tc("every violation listed",
			"property.name: must be at least 20 characters\nproperty.maxguest: must be between 1 and 50\nproperty.country: must be an ISO 3166-1 alpha-2 country code",
			set("property.name", "Short"), set("property.maxguest", 99), set("property.country", "ZZ")),
		tc("unknown fields ignored", "", set("property.pool", true), set("key", "abc")),
	}
	check(t, propertyCreate, rows, decodeProperty)
}

func TestDecodePropertyUpdate(t *testing.T) {
	base := string(apply(t, propertyCreate, set("action", "update")))
	rows := []row{
		tc("floor and postcode may be absent", "", set("property.floor", del), set("property.postcode", del)),
		tc("floor blank", "property.floor: must not be blank", set("property.floor", "")),
		tc("postcode blank", "property.postcode: must not be blank", set("property.postcode", " ")),
		tc("floor still checked", "property.floor: must be Basement, Ground or a number from 1 to 100", set("property.floor", "0")),
		tc("name still required", "property.name: is required", set("property.name", del)),
		tc("space still required", "property.space: is required", set("property.space", del)),
		tc("optional fields may be absent", "",
			set("property.brief", del), set("property.phone", del), set("property.state", del),
			set("property.allowchildren", del), set("property.allowpet", del), set("property.allowsmoking", del),
			set("property.timezone", del)),
	}
	check(t, base, rows, decodeProperty)
}

func TestDecodePropertyDelete(t *testing.T) {
	base := `{"action":"delete","property":{"internal_code":"VR-001"}}`
	rows := []row{
		tc("only internal_code", ""),
		tc("internal_code missing", "property.internal_code: is required", set("property.internal_code", del)),
		tc("internal_code 11 chars", "property.internal_code: must be at most 10 characters", set("property.internal_code", chars(11))),
		tc("other fields not checked", "", set("property.name", "x")),
		tc("unknown action checks only internal_code", "action: must be one of create, update, delete, get, list", set("action", "remove")),
	}
	check(t, base, rows, decodeProperty)
	if got := violations(t, decodeProperty([]byte(`{"action":`))); len(got) != 1 || got[0] != "body: must be valid JSON" {
		t.Errorf("invalid JSON: got %q", got)
	}
	req, err := property.DecodeProperty([]byte(base))
	if err != nil || req.Action != property.Delete || req.Property.InternalCode != "VR-001" {
		t.Errorf("got %+v, %v", req, err)
	}
}

func TestDecodePropertyValues(t *testing.T) {
	req, err := property.DecodeProperty([]byte(propertyCreate))
	if err != nil {
		t.Fatal(err)
	}
	p := req.Property
	switch {
	case req.Action != property.Create:
		t.Errorf("action %q", req.Action)
	case p.InternalCode != "VR-001" || p.Name != "Sunny villa with sea view" || p.Type != property.TypeVilla:
		t.Errorf("code/name/type: %+v", p)
	case p.Brief == nil || *p.Brief != brief400:
		t.Error("brief")
	case p.MaxGuest != 6 || p.Bedrooms != 3 || p.Bathrooms != 2 || p.Kitchens != 1:
		t.Errorf("rooms: %+v", p)
	case p.Floor == nil || *p.Floor != "Ground":
		t.Error("floor")
	case !p.Space.Value.Equal(dec("120.5")) || p.Space.Unit != property.Meters:
		t.Errorf("space: %+v", p.Space)
	case *p.Phone != "390612345678" || p.Address != "Via Roma 1" || p.City != "Rome" || *p.State != "Lazio" || *p.Postcode != "00100":
		t.Error("address fields")
	case p.Country != "IT":
		t.Errorf("country %q, want upper case IT", p.Country)
	case !p.Latitude.Equal(dec("41.9028")) || !p.Longitude.Equal(dec("12.4964")):
		t.Error("coordinates")
	case !*p.AllowChildren || *p.AllowPet || *p.AllowSmoking:
		t.Error("allow flags")
	case *p.Timezone != "Europe/Rome":
		t.Error("timezone")
	}

	if p.IsFeatured != nil {
		t.Errorf("isfeatured absent: %v, want nil (kept on update, false on create)", *p.IsFeatured)
	}
	for _, tc := range []struct {
		sent any
		want bool
	}{{true, true}, {"true", true}, {1, true}, {false, false}, {"0", false}} {
		req, err := property.DecodeProperty(apply(t, propertyCreate, set("property.isfeatured", tc.sent)))
		if err != nil || req.Property.IsFeatured == nil || *req.Property.IsFeatured != tc.want {
			t.Errorf("isfeatured %v: %+v, %v", tc.sent, req.Property.IsFeatured, err)
		}
	}

	req, err = property.DecodeProperty(apply(t, propertyCreate, set("property.type", "condo"), set("property.floor", "basement"), set("property.space.unit", "Feet")))
	if err != nil || req.Property.Type != property.TypeCondo || *req.Property.Floor != "Basement" || req.Property.Space.Unit != property.Feet {
		t.Errorf("canonical spelling: %+v, %v", req.Property, err)
	}
}
