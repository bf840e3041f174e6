package property

import (
	"golang.org/x/text/language"

	"github.com/vros/vros/libs/fields"
)

// AmenityType tells the service's own amenities from the owner's extras.
type AmenityType int

// Amenity types.
const (
	AmenitySystem AmenityType = 1
	AmenityExtra  AmenityType = 2
)

// Amenity is one amenity of a property (extension /api/property-amenity).
type Amenity struct {
	Name        string
	DefaultName string
	Value       string
	Qty         int
	Type        AmenityType
	Class       string
	// Languages maps a canonical BCP 47 tag ("en-US") to the amenity's name
	// in that language.
	Languages map[string]string
}

// Amenities is a decoded /api/property-amenity body. The list replaces the
// property's amenities; the other settings keep their stored value when nil.
type Amenities struct {
	InternalCode string
	Amenities    []Amenity
	BedOption    *int // 1 or 2
	UseIcon      *bool
	Description  *string
}

const maxAmenities = 300

// DecodeAmenities reads an /api/property-amenity body.
func DecodeAmenities(body []byte) (Amenities, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var a Amenities
	a.InternalCode, _ = o.String("internal_code", internalCodeRule)
	items, _ := o.Array("amenities", fields.List{Required: true, Max: maxAmenities})
	a.Amenities = make([]Amenity, 0, len(items))
	for _, it := range items {
		var x Amenity
		x.Name, _ = it.String("name", fields.Str{Max: 100})
		x.DefaultName, _ = it.String("default_name", fields.Str{Max: 100})
		x.Value, _ = it.String("value", fields.Str{Max: 255})
		x.Qty, _ = it.Int("qty", fields.Int{Max: 999})
		typ, _ := it.Int("type", fields.Int{Required: true, OneOf: []int64{int64(AmenitySystem), int64(AmenityExtra)}})
		x.Type = AmenityType(typ)
		x.Class, _ = it.String("class", fields.Str{Max: 50})
		x.Languages = readLanguageNames(it.Object("languages", false))
		a.Amenities = append(a.Amenities, x)
	}
	a.BedOption = optional(o.Int("bedoption", fields.Int{OneOf: []int64{1, 2}}))
	a.UseIcon = optional(o.Bool("useicon", false))
	a.Description = optional(o.String("description", fields.Str{Max: 5000}))
	if err := v.Err(); err != nil {
		return Amenities{}, err
	}
	return a, nil
}

// readLanguageNames reads an object keyed by BCP 47 language tags. Keys are
// stored in canonical form, so "EN_us" and "en-US" name the same language.
func readLanguageNames(o *fields.Object) map[string]string {
	if o == nil {
		return nil
	}
	out := map[string]string{}
	for _, key := range o.Keys() {
		tag, ok := languageTag(key)
		if !ok {
			o.Add(key, "must be keyed by a BCP 47 language tag")
			continue
		}
		name, ok := o.String(key, fields.Str{Required: true, Max: 100})
		if !ok {
			continue
		}
		if _, dup := out[tag]; dup {
			o.Add(key, "duplicates language "+tag)
			continue
		}
		out[tag] = name
	}
	return out
}

// languageTag returns the canonical form of a well-formed, known BCP 47
// tag; "und" (undetermined) is refused.
func languageTag(s string) (string, bool) {
	tag, err := language.Parse(s)
	if err != nil || tag == language.Und {
		return "", false
	}
	return tag.String(), true
}
