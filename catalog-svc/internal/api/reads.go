package api

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/catalog-svc/internal/catalog"
)

// The owner-token reads answer their object as is, without interface B's envelope (the spec
// shows the objects themselves); errors still use the envelope.

// priceSpan is the lowest and highest nightly price (one guest) over the next 365 nights of
// props (all of one account), read from their search records: each is computed once a day
// per property value (searchRecord.fromPrice).
func (a *API) priceSpan(props []*catalog.Property) (lo, hi decimal.Decimal, found bool) {
	return a.priceSpanAt(props, a.now())
}

// priceSpanAt is priceSpan at now.
func (a *API) priceSpanAt(props []*catalog.Property, now time.Time) (lo, hi decimal.Decimal, found bool) {
	if len(props) == 0 {
		return lo, hi, false
	}
	for _, r := range a.recordsOf(props[0].Snap.AccountID, props) {
		f := r.fromPrice(now)
		if !f.ok {
			continue
		}
		if !found || f.price.LessThan(lo) {
			lo = f.price
		}
		if !found || f.high.GreaterThan(hi) {
			hi = f.high
		}
		found = true
	}
	return lo, hi, found
}

type minMaxJSON struct {
	MinPrice json.Number `json:"minprice"`
	MaxPrice json.Number `json:"maxprice"`
}

// minMaxPrice is the property's range, or the account's over every live property when no
// id is sent (the WordPress plugin's call).
func (a *API) minMaxPrice(c *fiber.Ctx) error {
	in := readInput(c)
	sc := a.readScope(c, in)
	props, _, err := a.readProperties(c, in, sc)
	if err != nil {
		return err
	}
	lo, hi, _ := a.priceSpan(props)
	return c.JSON(minMaxJSON{MinPrice: dec(sc.convert(lo)), MaxPrice: dec(sc.convert(hi))})
}

// currencySymbol is the currency's narrow symbol ($ for USD, € for EUR), else its code.
func currencySymbol(code string) string {
	u, err := currency.ParseISO(code)
	if err != nil {
		return code
	}
	s := strings.TrimSpace(fmt.Sprint(currency.NarrowSymbol(u)))
	if s == "" {
		return code
	}
	return s
}

type amenityJSON struct {
	ID          int             `json:"id"`
	PropertyID  int64           `json:"property_id"`
	Name        string          `json:"name"`
	Value       string          `json:"value"`
	Qty         int             `json:"qty"`
	Type        int             `json:"type"`
	Languages   ordered[string] `json:"languages"`
	Class       string          `json:"class"`
	DefaultName string          `json:"default_name"`
}

func amenityOf(pid int64, x catalog.Amenity, langs []string) amenityJSON {
	return amenityJSON{ID: x.ID, PropertyID: pid, Name: x.Name, Value: x.Value, Qty: x.Qty, Type: x.Type,
		Languages: byLanguage(x.Languages, langs, ""), Class: x.Class, DefaultName: x.DefaultName}
}

func amenityName(x catalog.Amenity) string {
	if x.Name != "" {
		return x.Name
	}
	return x.DefaultName
}

type amenityGroupJSON struct {
	Label   string        `json:"label"`
	Extra   int           `json:"extra,omitempty"`
	Amenity []amenityJSON `json:"amenity"`
}

// allAmenity groups the distinct amenities of the account's properties: system amenities
// (type 1) by class (label "General" without one), then one group with "extra": 1 for the
// extra amenities (type 2).
func (a *API) allAmenity(c *fiber.Ctx) error {
	acc := account(c)
	in := readInput(c)
	sc := a.readScope(c, in)
	if err := in.err(); err != nil {
		return err
	}
	langs := sc.st.Languages
	groups := map[string][]amenityJSON{}
	extra := []amenityJSON{}
	seen := map[string]bool{}
	for _, p := range sc.filter(a.catalog.Properties(acc)) {
		if p.Snap.Amenities == nil {
			continue
		}
		for _, x := range p.Snap.Amenities.Items {
			key := strconv.Itoa(x.Type) + "|" + x.Class + "|" + amenityName(x)
			if seen[key] {
				continue
			}
			seen[key] = true
			aj := amenityOf(0, x, langs)
			if x.Type == 2 {
				extra = append(extra, aj)
				continue
			}
			label := x.Class
			if label == "" {
				label = "General"
			}
			groups[label] = append(groups[label], aj)
		}
	}
	labels := make([]string, 0, len(groups))
	for l := range groups {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	out := []amenityGroupJSON{}
	for _, l := range labels {
		out = append(out, amenityGroupJSON{Label: l, Amenity: groups[l]})
	}
	out = append(out, amenityGroupJSON{Label: "Extra", Extra: 1, Amenity: extra})
	return c.JSON(out)
}

// mainPhoto is a property's main photo, the first in the order its owner chose (A2 order;
// by photo id in snapshots from before positions): contract.Property.MainPhoto, the rule
// every reader follows, found without copying and sorting them all.
func mainPhoto(p *catalog.Property) (catalog.Photo, bool) { return p.Snap.MainPhoto() }

// photos are a property's photos in their order (contract.Property.OrderedPhotos); the
// first is the main photo.
func photos(p *catalog.Property) []catalog.Photo { return p.Snap.OrderedPhotos() }

// bannerGallery lists the banner rendition of each live property's main photo.
func (a *API) bannerGallery(c *fiber.Ctx) error {
	in := readInput(c)
	sc := a.readScope(c, in)
	if err := in.err(); err != nil {
		return err
	}
	base := a.mediaBase(c)
	out := []string{}
	for _, p := range sc.filter(a.catalog.Properties(account(c))) {
		if ph, ok := mainPhoto(p); ok {
			out = append(out, mediaLink(base, ph.Key, "banner"))
		}
	}
	return c.JSON(out)
}

type photoJSON struct {
	ID            int64  `json:"id"`
	PropertyID    int64  `json:"property_id"`
	Type          int    `json:"type"`
	Position      int    `json:"position"`
	PropertyName  string `json:"property_name"`
	Link          string `json:"link"`
	LinkBanner    string `json:"link_banner"`
	LinkSmall     string `json:"link_small"`
	Link317x179   string `json:"link_317_179"`
	LinkH179      string `json:"link_h_179"`
	LinkThumbnail string `json:"link_thumbnail"`
	// Description is the photo's caption, which the WordPress plugin's banner and image
	// scroller print; vros keeps none: always "".
	Description string `json:"description"`
}

// photoOf is the i-th photo (from 0) of p; the first is the main photo (type 1).
func photoOf(base string, p *catalog.Property, i int, ph catalog.Photo) photoJSON {
	typ := 2
	if i == 0 {
		typ = 1
	}
	return photoJSON{ID: ph.PhotoID, PropertyID: p.Snap.PropertyID, Type: typ, Position: i + 1, PropertyName: p.Snap.Content.Name,
		Link: mediaLink(base, ph.Key, "original"), LinkBanner: mediaLink(base, ph.Key, "banner"), LinkSmall: mediaLink(base, ph.Key, "small"),
		Link317x179: mediaLink(base, ph.Key, "317_179"), LinkH179: mediaLink(base, ph.Key, "h_179"),
		LinkThumbnail: mediaLink(base, ph.Key, "thumbnail")}
}

// propertyGallery answers {"property_gallery_<id>": [photos]}: the property asked for, or
// every live property by id (the first key is what PHP clients read with reset()).
func (a *API) propertyGallery(c *fiber.Ctx) error {
	in := readInput(c)
	props, _, err := a.readProperties(c, in, a.readScope(c, in))
	if err != nil {
		return err
	}
	base := a.mediaBase(c)
	var out ordered[[]photoJSON]
	for _, p := range props {
		list := []photoJSON{}
		for i, ph := range photos(p) {
			list = append(list, photoOf(base, p, i, ph))
		}
		out.add("property_gallery_"+strconv.FormatInt(p.Snap.PropertyID, 10), list)
	}
	return c.JSON(out)
}

// amenityBlockJSON is property-amenity's entry of one property: the amenity list first (the
// Laravel client reads it as the entry's first value).
type amenityBlockJSON struct {
	Amenity       []amenityJSON `json:"amenity"`
	Extra         []amenityJSON `json:"extra"`
	UseIcon       int           `json:"useicon"`
	BedOption     int           `json:"bedoption"`
	Description   string        `json:"description"`
	AllowChildren int           `json:"allowchildren"`
	AllowPet      int           `json:"allowpet"`
	AllowSmoking  int           `json:"allowsmoking"`
}

func amenityBlock(p *catalog.Property, langs []string) amenityBlockJSON {
	ct := p.Snap.Content
	out := amenityBlockJSON{Amenity: []amenityJSON{}, Extra: []amenityJSON{}, AllowChildren: optFlag(ct.AllowChildren),
		AllowPet: optFlag(ct.AllowPet), AllowSmoking: optFlag(ct.AllowSmoking)}
	if am := p.Snap.Amenities; am != nil {
		for _, x := range am.Items {
			if x.Type == 2 {
				out.Extra = append(out.Extra, amenityOf(p.Snap.PropertyID, x, langs))
			} else {
				out.Amenity = append(out.Amenity, amenityOf(p.Snap.PropertyID, x, langs))
			}
		}
		out.UseIcon, out.BedOption, out.Description = optFlag(am.UseIcon), am.BedOption, am.Description
	}
	return out
}

// propertyAmenity answers {"property_amenity_<id>": {…}} like propertyGallery.
func (a *API) propertyAmenity(c *fiber.Ctx) error {
	in := readInput(c)
	sc := a.readScope(c, in)
	props, _, err := a.readProperties(c, in, sc)
	if err != nil {
		return err
	}
	langs := sc.st.Languages
	var out ordered[amenityBlockJSON]
	for _, p := range props {
		out.add("property_amenity_"+strconv.FormatInt(p.Snap.PropertyID, 10), amenityBlock(p, langs))
	}
	return c.JSON(out)
}
