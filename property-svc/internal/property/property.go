package property

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/biter777/countries"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// Type is the kind of building (A1 type).
type Type string

// Types of A1.
const (
	TypeNone      Type = "None"
	TypeApartment Type = "Apartment"
	TypeCondo     Type = "Condo"
	TypeHouse     Type = "House"
	TypeVilla     Type = "Villa"
)

// Unit measures a property's floor space.
type Unit string

// Units of A1 space.unit.
const (
	Meters Unit = "meters"
	Feet   Unit = "feet"
)

// Space is the floor space of a property.
type Space struct {
	Value decimal.Decimal // > 0
	Unit  Unit
}

// Property is an A1 property as the caller describes it.
//
// Pointer fields are optional: nil means "not sent", which on update keeps
// the stored value (the store sets only the fields sent), and a pointer to "" clears a string. Floor
// and Postcode are always set after a create.
type Property struct {
	InternalCode string
	Name         string
	Type         Type
	Brief        *string
	MaxGuest     int
	Bedrooms     int
	Bathrooms    int
	Kitchens     int
	Floor        *string // "Basement", "Ground" or "1" to "100"
	Space        Space
	Phone        *string // digits only
	Address      string
	City         string
	State        *string
	Postcode     *string
	Country      string // ISO 3166-1 alpha-2, upper case
	Latitude     decimal.Decimal
	Longitude    decimal.Decimal

	AllowChildren *bool
	AllowPet      *bool
	AllowSmoking  *bool

	// Timezone is an IANA zone name (extension); "" means the account's.
	Timezone *string
	// IsFeatured marks a property the websites show first (extension `isfeatured`); nil
	// keeps the stored value, false on create.
	IsFeatured *bool
}

// PropertyRequest is a decoded /api/property body. On delete and get only
// Property.InternalCode is set; on list only List.
type PropertyRequest struct {
	Action   Action
	Property Property
	List     ListQuery
}

// Bounds of A1 that the service chooses where the spec is silent.
const (
	maxAddress = 500
)

var (
	digitsOnly = regexp.MustCompile(`^[0-9]+$`)
	floorMsg   = "must be Basement, Ground or a number from 1 to 100"
)

// DecodeProperty reads an /api/property body. Every violation is listed in
// the returned *fields.Error, with paths such as "property.name".
func DecodeProperty(body []byte) (PropertyRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", propertyActionRule)
	req := PropertyRequest{Action: Action(action)}
	if req.Action == List { // no property: page, limit and search at the top level
		req.List = readListQuery(o)
	} else { // with an unknown action too: only action and internal_code are checked
		p := o.Object("property", true)
		req.Property.InternalCode, _ = p.String("internal_code", internalCodeRule)
		if req.Action == Create || req.Action == Update {
			readProperty(p, req.Action, &req.Property)
		}
	}
	if err := v.Err(); err != nil {
		return PropertyRequest{}, err
	}
	return req, nil
}

func readProperty(p *fields.Object, action Action, out *Property) {
	onCreate := action == Create
	out.Name, _ = p.String("name", fields.Str{Required: true, Min: 20, Max: 80})
	typ, _ := p.String("type", fields.Str{Required: true, IgnoreCase: true,
		OneOf: []string{string(TypeNone), string(TypeApartment), string(TypeCondo), string(TypeHouse), string(TypeVilla)}})
	out.Type = Type(typ)
	out.Brief = optional(p.String("brief", fields.Str{Min: 400, Max: 10000}))
	rooms := fields.Int{Required: true, Min: 1, Max: 30}
	out.MaxGuest, _ = p.Int("maxguest", fields.Int{Required: true, Min: 1, Max: 50})
	out.Bedrooms, _ = p.Int("bedrooms", rooms)
	out.Bathrooms, _ = p.Int("bathrooms", rooms)
	out.Kitchens, _ = p.Int("kitchens", rooms)
	out.Floor = readFloor(p, onCreate)
	if s := p.Object("space", true); s != nil {
		out.Space.Value, _ = s.Decimal("value", fields.Dec{Required: true, Positive: true, Max: maxInt32, MaxScale: 2})
		unit, _ := s.String("unit", fields.Str{Required: true, IgnoreCase: true, OneOf: []string{string(Meters), string(Feet)}})
		out.Space.Unit = Unit(unit)
	}
	out.Phone = optional(p.String("phone", fields.Str{Max: 20, Pattern: digitsOnly, PatternMsg: "must contain digits only"}))
	out.Address, _ = p.String("address", fields.Str{Required: true, Max: maxAddress})
	out.City, _ = p.String("city", fields.Str{Required: true, Min: 1, Max: 200})
	out.State = optional(p.String("state", fields.Str{Min: 1, Max: 200}))
	out.Postcode = notBlank(p, "postcode", fields.Str{Required: onCreate, Min: 1, Max: 20})
	out.Country = readCountry(p, "country")
	out.Latitude, _ = p.Decimal("latitude", fields.Dec{Required: true, Min: decimal.NewFromInt(-90), Max: decimal.NewFromInt(90)})
	out.Longitude, _ = p.Decimal("longitude", fields.Dec{Required: true, Min: decimal.NewFromInt(-180), Max: decimal.NewFromInt(180)})
	out.AllowChildren = optional(p.Bool("allowchildren", false))
	out.AllowPet = optional(p.Bool("allowpet", false))
	out.AllowSmoking = optional(p.Bool("allowsmoking", false))
	out.Timezone = readTimezone(p, "timezone")
	out.IsFeatured = optional(p.Bool("isfeatured", false))
}

// readFloor accepts Basement and Ground in any case (stored as written here)
// and a whole number 1 to 100 written without sign or leading zeros.
func readFloor(p *fields.Object, required bool) *string {
	s := notBlank(p, "floor", fields.Str{Required: required, Max: 10})
	if s == nil {
		return nil
	}
	switch {
	case strings.EqualFold(*s, "Basement"):
		return ptr("Basement")
	case strings.EqualFold(*s, "Ground"):
		return ptr("Ground")
	}
	n, err := strconv.Atoi(*s)
	if err != nil || !digitsOnly.MatchString(*s) || strconv.Itoa(n) != *s || n < 1 || n > 100 {
		p.Add("floor", floorMsg)
		return nil
	}
	return s
}

// countryAliases are codes in common use that ISO 3166-1 does not assign (the original's
// property example sends "UK"): the error names the code to send instead.
var countryAliases = map[string]string{"UK": "GB", "EL": "GR"}

// readCountry reads an ISO 3166-1 alpha-2 code in any case and returns it in
// upper case.
func readCountry(p *fields.Object, name string) string {
	s, ok := p.String(name, fields.Str{Required: true, Min: 2, Max: 2})
	if !ok {
		return ""
	}
	code := strings.ToUpper(s)
	c := countries.ByName(code)
	if code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' || !c.IsValid() || c.Alpha2() != code {
		msg := "must be an ISO 3166-1 alpha-2 country code"
		if iso, ok := countryAliases[code]; ok {
			msg += fmt.Sprintf(" (%s is written %s)", code, iso)
		}
		p.Add(name, msg)
		return ""
	}
	return code
}

// notBlank reads a string that may be omitted on update but, once a property
// has it, cannot be cleared.
func notBlank(p *fields.Object, name string, r fields.Str) *string {
	s, ok := p.String(name, r)
	if !ok {
		return nil
	}
	if s == "" {
		p.Add(name, "must not be blank")
		return nil
	}
	return &s
}

func optional[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}
