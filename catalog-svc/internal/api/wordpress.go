package api

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
)

// The shapes the public 365villas WordPress plugin reads (bikencms/guestwisely-development
// 1.0.1); docs/compatibility.md, "The WordPress plugin", lists every field and the plugin
// files that read it.

// rateLabelDay is the search cards' rateLabel: the plugin prints "/night" for "day" (rateValue
// is the lowest nightly price).
const rateLabelDay = "day"

// rateToolTip explains rateValue (the cards' title attribute).
const rateToolTip = "The lowest nightly price over the next 365 nights"

// moneyText is an amount as the plugin prints it: the currency's symbol, then the amount with
// scale decimals and "," between thousands (PHP's number_format(x, 2, ".", ","), which the
// plugin applies to its own per-night figure).
func moneyText(currency string, d decimal.Decimal, scale int32) string {
	s := d.StringFixed(scale)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return sign + currencySymbol(currency) + b.String()
}

// amenityLocationJSON is one location of a property's amenities as the plugin reads
// get-all-property-info's amenity: a label and its amenities. The original's optional
// specificroomamenities (amenities per room) is not written: vros keeps no rooms, and an
// empty one would hide the location.
type amenityLocationJSON struct {
	Label   string        `json:"label"`
	Amenity []amenityJSON `json:"amenity"`
}

// extraLocation is the key of the extra amenities (type 2), a plain list in the plugin's
// reading; a system class of that very name is keyed systemExtraLocation instead.
const (
	extraLocation       = "extra"
	systemExtraLocation = "extra (system)"
)

// amenityLocations is a property's amenities by location, the plugin's shape: each system
// amenity (type 1) under its class (label "General" without one), the classes in the order
// their first amenity has in the property's list, then "extra": the list of the extra
// amenities (type 2), always there, possibly empty. Without amenities it is {"extra": []}:
// always an object (the plugin calls get_object_vars on it).
func amenityLocations(p *catalog.Property, langs []string) ordered[any] {
	var out ordered[any]
	index := map[string]int{}
	var locs []*amenityLocationJSON
	var keys []string
	extra := []amenityJSON{}
	if am := p.Snap.Amenities; am != nil {
		for _, x := range am.Items {
			aj := amenityOf(p.Snap.PropertyID, x, langs)
			if x.Type == 2 {
				extra = append(extra, aj)
				continue
			}
			label := x.Class
			if strings.TrimSpace(label) == "" {
				label = "General"
			}
			key := label
			if key == extraLocation {
				key = systemExtraLocation
			}
			i, ok := index[key]
			if !ok {
				i = len(locs)
				index[key] = i
				keys = append(keys, key)
				locs = append(locs, &amenityLocationJSON{Label: label, Amenity: []amenityJSON{}})
			}
			locs[i].Amenity = append(locs[i].Amenity, aj)
		}
	}
	for i, l := range locs {
		out.add(keys[i], *l)
	}
	out.add(extraLocation, extra)
	return out
}
