package api

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/vros/vros/catalog-svc/internal/view"
	"github.com/vros/vros/libs/pricing"
)

// The GET reads answer their object as is, without interface B's envelope (the spec shows
// the objects themselves); errors still use the envelope.

// priceSpan is the lowest and highest nightly price (one guest) over the next 365 nights.
func (a *API) priceSpan(props []*view.Property) (lo, hi decimal.Decimal, found bool) {
	for _, p := range props {
		if p.PricingErr != nil {
			continue
		}
		start := p.Today(a.now())
		for i := 0; i < 365; i++ {
			n, ok := pricing.NightPrice(p.Pricing, start.AddDays(i), 1)
			if !ok {
				break
			}
			if !found || n.Price.LessThan(lo) {
				lo = n.Price
			}
			if !found || n.Price.GreaterThan(hi) {
				hi = n.Price
			}
			found = true
		}
	}
	return lo, hi, found
}

func (a *API) minMaxPrice(c *fiber.Ctx) error {
	props, _, err := a.readProperties(c, readInput(c))
	if err != nil {
		return err
	}
	lo, hi, _ := a.priceSpan(props)
	return c.JSON(fiber.Map{"minprice": dec(lo), "maxprice": dec(hi)})
}

// searchOptions are the website search fields the catalog offers, with their labels.
var searchOptions = []struct{ key, label string }{
	{"checkin", "Check-in"}, {"checkout", "Check-out"}, {"guests", "Guests"}, {"bedrooms", "Bedrooms"},
	{"city", "City"}, {"price", "Price"},
}

func (a *API) defaultConfig(c *fiber.Ctx) error {
	acc := account(c)
	st := a.view.Settings(acc)
	props := a.view.Properties(acc)

	langs := map[string]string{}
	labels := map[string]map[string]string{}
	for _, l := range st.Languages {
		tag, err := language.Parse(l)
		name := l
		if err == nil {
			if n := display.English.Tags().Name(tag); n != "" {
				name = n
			}
		}
		langs[l] = name
		m := map[string]string{}
		for _, o := range searchOptions {
			m[o.key] = o.label
		}
		labels[l] = m
	}
	searchconfig := map[string]fiber.Map{}
	global := map[string]int{}
	for _, o := range searchOptions {
		searchconfig[o.key] = fiber.Map{"gs": 1, "alias": o.label}
		global[o.key] = 1
	}
	minBed, maxBed := 0, 0
	cities := map[string]bool{}
	for i, p := range props {
		b := p.Snap.Content.Bedrooms
		if i == 0 || b < minBed {
			minBed = b
		}
		if i == 0 || b > maxBed {
			maxBed = b
		}
		if p.Snap.Content.City != "" {
			cities[p.Snap.Content.City] = true
		}
	}
	cityList := make([]string, 0, len(cities))
	for k := range cities {
		cityList = append(cityList, k)
	}
	sort.Strings(cityList)
	lo, hi, _ := a.priceSpan(props)
	leads := []fiber.Map{}
	for _, l := range st.LeadSources {
		leads = append(leads, fiber.Map{"id": l.ID, "name": l.Name})
	}
	enable := st.Search.PriceFilterEnable != nil && *st.Search.PriceFilterEnable
	return c.JSON(fiber.Map{
		"support_language":       langs,
		"default_limit":          st.Search.DefaultLimit,
		"searchconfig":           searchconfig,
		"global_search_config":   global,
		"global_search_language": labels,
		"searchplugin": fiber.Map{"show_checkin": 1, "show_checkout": 1, "show_guests": 1, "show_bedrooms": 1, "show_city": 1,
			"show_price": flag(enable), "background_color": "#ffffff", "button_color": "#1a73e8", "text_color": "#202124"},
		"price_filter": fiber.Map{"enable": flag(enable), "rate_type": st.Search.RateType, "minprice": dec(lo), "maxprice": dec(hi),
			"languages": labels},
		"currency_code":             st.Currency,
		"currency_symbol":           currencySymbol(st.Currency),
		"rate_type":                 st.Search.RateType,
		"use_enquire":               0,
		"availability_tab_calendar": 1,
		"lead_source_list":          leads,
		"bedroom":                   fiber.Map{"min": minBed, "max": maxBed},
		"city_list":                 cityList,
	})
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
	ID          int               `json:"id"`
	PropertyID  int64             `json:"property_id"`
	Name        string            `json:"name"`
	Value       string            `json:"value"`
	Qty         int               `json:"qty"`
	Type        int               `json:"type"`
	Languages   map[string]string `json:"languages"`
	Class       string            `json:"class"`
	DefaultName string            `json:"default_name"`
}

func amenityOf(pid int64, x view.Amenity) amenityJSON {
	l := x.Languages
	if l == nil {
		l = map[string]string{}
	}
	return amenityJSON{ID: x.ID, PropertyID: pid, Name: x.Name, Value: x.Value, Qty: x.Qty, Type: x.Type, Languages: l, Class: x.Class,
		DefaultName: x.DefaultName}
}

func amenityName(x view.Amenity) string {
	if x.Name != "" {
		return x.Name
	}
	return x.DefaultName
}

// allAmenity groups the distinct amenities of the account's properties: system amenities
// (type 1) by class (label "General" without one), then one group with "extra": 1 for the
// extra amenities (type 2).
func (a *API) allAmenity(c *fiber.Ctx) error {
	groups := map[string][]amenityJSON{}
	var extra []amenityJSON
	seen := map[string]bool{}
	for _, p := range a.view.Properties(account(c)) {
		if p.Snap.Amenities == nil {
			continue
		}
		for _, x := range p.Snap.Amenities.Items {
			key := strconv.Itoa(x.Type) + "|" + x.Class + "|" + amenityName(x)
			if seen[key] {
				continue
			}
			seen[key] = true
			aj := amenityOf(0, x)
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
	out := []fiber.Map{}
	for _, l := range labels {
		out = append(out, fiber.Map{"label": l, "amenity": groups[l]})
	}
	if extra == nil {
		extra = []amenityJSON{}
	}
	out = append(out, fiber.Map{"label": "Extra", "extra": 1, "amenity": extra})
	return c.JSON(out)
}

// photos are a property's photos in id order; the first is the main photo.
func photos(p *view.Property) []view.Photo {
	out := make([]view.Photo, 0, len(p.Snap.Photos))
	for _, ph := range p.Snap.Photos {
		out = append(out, ph)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PhotoID < out[j].PhotoID })
	return out
}

// bannerGallery lists the banner rendition of each live property's main photo.
func (a *API) bannerGallery(c *fiber.Ctx) error {
	base := a.mediaBase(c)
	out := []string{}
	for _, p := range a.view.Properties(account(c)) {
		if ph := photos(p); len(ph) > 0 {
			out = append(out, mediaLink(base, ph[0].Key, "banner"))
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
}

func (a *API) propertyGallery(c *fiber.Ctx) error {
	props, _, err := a.readProperties(c, readInput(c))
	if err != nil {
		return err
	}
	base := a.mediaBase(c)
	out := map[string][]photoJSON{}
	for _, p := range props {
		list := []photoJSON{}
		for i, ph := range photos(p) {
			typ := 2
			if i == 0 {
				typ = 1
			}
			list = append(list, photoJSON{ID: ph.PhotoID, PropertyID: p.Snap.PropertyID, Type: typ, Position: i + 1,
				PropertyName: p.Snap.Content.Name, Link: mediaLink(base, ph.Key, "original"), LinkBanner: mediaLink(base, ph.Key, "banner"),
				LinkSmall: mediaLink(base, ph.Key, "small"), Link317x179: mediaLink(base, ph.Key, "317_179"), LinkH179: mediaLink(base, ph.Key, "h_179"),
				LinkThumbnail: mediaLink(base, ph.Key, "thumbnail")})
		}
		out["property_gallery_"+strconv.FormatInt(p.Snap.PropertyID, 10)] = list
	}
	return c.JSON(out)
}

// amenityBlock is property-amenity's entry of one property.
func amenityBlock(p *view.Property) fiber.Map {
	list, extra := []amenityJSON{}, []amenityJSON{}
	m := fiber.Map{}
	if am := p.Snap.Amenities; am != nil {
		for _, x := range am.Items {
			if x.Type == 2 {
				extra = append(extra, amenityOf(p.Snap.PropertyID, x))
			} else {
				list = append(list, amenityOf(p.Snap.PropertyID, x))
			}
		}
		m["useicon"] = optFlag(am.UseIcon)
		m["bedoption"] = am.BedOption
		m["description"] = am.Description
	} else {
		m["useicon"], m["bedoption"], m["description"] = 0, 0, ""
	}
	ct := p.Snap.Content
	m["amenity"], m["extra"] = list, extra
	m["allowchildren"], m["allowpet"], m["allowsmoking"] = optFlag(ct.AllowChildren), optFlag(ct.AllowPet), optFlag(ct.AllowSmoking)
	return m
}

func (a *API) propertyAmenity(c *fiber.Ctx) error {
	props, _, err := a.readProperties(c, readInput(c))
	if err != nil {
		return err
	}
	out := map[string]fiber.Map{}
	for _, p := range props {
		out["property_amenity_"+strconv.FormatInt(p.Snap.PropertyID, 10)] = amenityBlock(p)
	}
	return c.JSON(out)
}

func yesNo(b *bool) string { return strconv.Itoa(optFlag(b)) }

// propertyDetail answers {"properties": {…}} with the spec's fields; those the system has
// no data for are "" or 0 (docs/catalog.md lists them).
func (a *API) propertyDetail(c *fiber.Ctx) error {
	p, err := a.readProperty(c, readInput(c))
	if err != nil {
		return err
	}
	base := a.mediaBase(c)
	ct := p.Snap.Content
	space := ""
	if ct.SpaceValue != "" {
		space = strings.TrimSpace(ct.SpaceValue + " " + ct.SpaceUnit)
	}
	min, rateValue := 0, "0"
	if r := p.Snap.Rates; r != nil {
		min = r.MinimumStay
		rateValue = string(money(r.Rate.Daily))
	}
	lo, hi, _ := a.priceSpan([]*view.Property{p})
	img := map[string]string{"image_path": "", "image_small": "", "image_317_179": "", "image_h_179": "", "image_w_800": ""}
	if ph := photos(p); len(ph) > 0 {
		k := ph[0].Key
		img = map[string]string{"image_path": mediaLink(base, k, "original"), "image_small": mediaLink(base, k, "small"),
			"image_317_179": mediaLink(base, k, "317_179"), "image_h_179": mediaLink(base, k, "h_179"), "image_w_800": mediaLink(base, k, "w_800")}
	}
	payment := ""
	if p.Snap.Policy != nil {
		payment = p.Snap.Policy.PaymentType
	}
	var methods []string
	if p.Snap.Methods != nil {
		for _, g := range p.Snap.Methods.Gateways {
			methods = append(methods, g.Provider)
		}
	}
	policies := fiber.Map{"payment_policies": payment, "payment_methods": strings.Join(methods, ","), "rules": ""}
	langs := a.view.Settings(account(c)).Languages
	briefs, langPolicies := map[string]string{}, map[string]fiber.Map{}
	for _, l := range langs {
		briefs[l] = ct.Brief
		langPolicies[l] = policies
	}
	amen := amenityBlock(p)
	span := fiber.Map{"min": dec(lo), "max": dec(hi)}
	var wifi int
	if p.Snap.Amenities != nil {
		for _, x := range p.Snap.Amenities.Items {
			if strings.Contains(strings.ToLower(amenityName(x)), "wifi") || strings.Contains(strings.ToLower(amenityName(x)), "wi-fi") {
				wifi = 1
			}
		}
	}
	props := fiber.Map{
		"id": strconv.FormatInt(p.Snap.PropertyID, 10), "name": ct.Name, "address": ct.Address, "city": ct.City, "location_id": "",
		"state": ct.State, "postcode": ct.Postcode, "country": ct.Country, "phone": ct.Phone, "brief": ct.Brief, "other": "",
		"type": ct.Type, "space": space, "floor": ct.Floor, "latitude": ct.Latitude, "longitude": ct.Longitude,
		"maxguest": strconv.Itoa(ct.MaxGuest), "allowchildren": yesNo(ct.AllowChildren), "allowpet": yesNo(ct.AllowPet),
		"allowsmoking": yesNo(ct.AllowSmoking), "bedroom": strconv.Itoa(ct.Bedrooms), "bathroom": strconv.Itoa(ct.Bathrooms),
		"isfeatured": "0", "ispublished": true, "visibleOnWebsite": 1, "minimumStay": min,
		"eligible_for_online_booking": flag(p.PricingErr == nil && p.Snap.Rates != nil), "external_link": "", "wifi": wifi,
		"rateLabel": "Nightly", "rateValue": rateValue, "rateToolTip": "",
		"rangeRates":        fiber.Map{"day": span, "week": spanTimes(lo, hi, 7), "month": spanTimes(lo, hi, 28)},
		"local_information": "", "property_video": "", "booking_note_chk": 0, "booking_note_spec": "",
		"policies":            policies,
		"languages":           fiber.Map{"brief": briefs, "policies": langPolicies},
		"every_stay_includes": map[string]fiber.Map{},
		"local_area_action":   fiber.Map{"filename": "", "description": "", "lat": ct.Latitude, "lon": ct.Longitude, "address": ct.Address},
		"amenity":             amen["amenity"], "amenity_description": amen["description"],
		"instruction_subtitution_code": fiber.Map{"name": "", "description": ""},
		"custom_subtitution_code":      []fiber.Map{},
	}
	for k, v := range img {
		props[k] = v
	}
	return c.JSON(fiber.Map{"properties": props})
}

func spanTimes(lo, hi decimal.Decimal, n int64) fiber.Map {
	return fiber.Map{"min": dec(lo.Mul(decimal.NewFromInt(n))), "max": dec(hi.Mul(decimal.NewFromInt(n)))}
}
