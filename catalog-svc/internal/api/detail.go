package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"weak"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/ifaceb"
)

type minMaxDecJSON struct {
	Min json.Number `json:"min"`
	Max json.Number `json:"max"`
}

type rangeRatesJSON struct {
	Day   minMaxDecJSON `json:"day"`
	Week  minMaxDecJSON `json:"week"`
	Month minMaxDecJSON `json:"month"`
}

type policiesJSON struct {
	PaymentPolicies string `json:"payment_policies"`
	PaymentMethods  string `json:"payment_methods"`
	Rules           string `json:"rules"`
}

type detailLanguagesJSON struct {
	Brief    ordered[string]       `json:"brief"`
	Policies ordered[policiesJSON] `json:"policies"`
	Name     ordered[string]       `json:"name"` // the WordPress plugin's languages.name.<lang>
}

type includeJSON struct {
	Image string `json:"image"`
	Name  string `json:"name"`
}

type localAreaJSON struct {
	Filename    string `json:"filename"`
	Description string `json:"description"`
	Lat         string `json:"lat"`
	Lon         string `json:"lon"`
	Address     string `json:"address"`
}

type substitutionJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type customSubstitutionJSON struct {
	SubtitutionCode string `json:"subtitution_code"`
	Content         string `json:"content"`
}

// detailJSON is the spec's property detail object, its fields in the spec's order (vros-spec,
// "Property detail response").
type detailJSON struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Address    string `json:"address"`
	City       string `json:"city"`
	LocationID string `json:"location_id"`
	State      string `json:"state"`
	Postcode   string `json:"postcode"`
	Country    string `json:"country"`
	Phone      string `json:"phone"`
	Brief      string `json:"brief"`
	Other      string `json:"other"`
	Type       string `json:"type"`
	Space      string `json:"space"`
	Floor      string `json:"floor"`
	Latitude   string `json:"latitude"`
	Longitude  string `json:"longitude"`

	MaxGuest                 string `json:"maxguest"`
	AllowChildren            string `json:"allowchildren"`
	AllowPet                 string `json:"allowpet"`
	AllowSmoking             string `json:"allowsmoking"`
	Bedroom                  string `json:"bedroom"`
	Bathroom                 string `json:"bathroom"`
	IsFeatured               string `json:"isfeatured"`
	IsPublished              bool   `json:"ispublished"`
	VisibleOnWebsite         int    `json:"visibleOnWebsite"`
	MinimumStay              int    `json:"minimumStay"`
	EligibleForOnlineBooking int    `json:"eligible_for_online_booking"`
	ExternalLink             string `json:"external_link"`
	Wifi                     int    `json:"wifi"`

	RateLabel   string         `json:"rateLabel"`
	RateValue   json.Number    `json:"rateValue"`
	RateToolTip string         `json:"rateToolTip"`
	RangeRates  rangeRatesJSON `json:"rangeRates"`

	ImagePath   string `json:"image_path"`
	ImageSmall  string `json:"image_small"`
	Image317179 string `json:"image_317_179"`
	ImageH179   string `json:"image_h_179"`
	ImageW800   string `json:"image_w_800"`

	LocalInformation string              `json:"local_information"`
	PropertyVideo    string              `json:"property_video"`
	BookingNoteChk   int                 `json:"booking_note_chk"`
	BookingNoteSpec  string              `json:"booking_note_spec"`
	Policies         policiesJSON        `json:"policies"`
	Languages        detailLanguagesJSON `json:"languages"`

	EveryStayIncludes ordered[includeJSON] `json:"every_stay_includes"`
	LocalAreaAction   localAreaJSON        `json:"local_area_action"`

	// Amenity is by location, as the WordPress plugin reads it (amenityLocations).
	Amenity                    ordered[any]             `json:"amenity"`
	AmenityDescription         string                   `json:"amenity_description"`
	InstructionSubtitutionCode substitutionJSON         `json:"instruction_subtitution_code"`
	CustomSubtitutionCode      []customSubstitutionJSON `json:"custom_subtitution_code"`

	// BaseName is the name the WordPress plugin builds the property's URL from.
	BaseName string `json:"base_name"`
}

// propertyDetail serves property-detail and get-all-property-info (the original's name for
// it): {"properties": {…}} for the property asked for, or {"properties": [{…}, …]} of every
// live property by id when none is. include[] and language_data are accepted and ignored:
// every field is always answered and the languages block holds every account language.
//
// The answer is kept (answers.go): one property's by its published value, every property's by
// the account's generation; both by the brand's languages and the media base, until a
// property's local date changes (its rangeRates are the next 365 nights').
func (a *API) propertyDetail(c *fiber.Ctx) error {
	acc := account(c)
	applied := a.applied()
	gen := a.catalog.Generation(acc) // before anything else of the account is read
	in := readInput(c)
	sc := a.readScope(c, in)
	pid := in.readPropertyID()
	if err := in.err(); err != nil {
		return err
	}
	now := a.now()
	base := a.mediaBase(c)
	langs := sc.st.Languages
	key := answerKey{read: readDetailAll, acc: acc, gen: gen, brand: sc.brandID(), base: base, langs: strings.Join(langs, ",")}
	days := newTurns(now)
	if pid != 0 {
		p, err := a.scopedProperty(c, sc, pid)
		if err != nil {
			return err
		}
		key.read, key.gen, key.prop = readDetail, 0, weak.Make(p)
		if a.sendKept(c, key, now, applied) {
			return nil
		}
		days.add(p)
		return a.sendAndKeep(c, key, struct {
			Properties detailJSON `json:"properties"`
		}{a.detail(base, langs, p, now)}, now, days.end(), applied)
	}
	if a.sendKept(c, key, now, applied) {
		return nil
	}
	props := sc.filter(a.catalog.Properties(acc))
	list := make([]detailJSON, 0, len(props))
	for _, p := range props {
		days.add(p)
		list = append(list, a.detail(base, langs, p, now))
	}
	return a.sendAndKeep(c, key, struct {
		Properties []detailJSON `json:"properties"`
	}{list}, now, days.end(), applied)
}

// detail is p's detail object; the fields the system has no data for are "" or 0
// (docs/catalog.md lists them).
func (a *API) detail(base string, langs []string, p *catalog.Property, now time.Time) detailJSON {
	ct := p.Snap.Content
	space := ""
	if ct.SpaceValue != "" {
		space = strings.TrimSpace(ct.SpaceValue + " " + ct.SpaceUnit)
	}
	out := detailJSON{ID: strconv.FormatInt(p.Snap.PropertyID, 10), Name: ct.Name, Address: ct.Address, City: ct.City, State: ct.State,
		Postcode: ct.Postcode, Country: ct.Country, Phone: ct.Phone, Brief: ct.Brief, Type: ct.Type, Space: space, Floor: ct.Floor,
		Latitude: ct.Latitude, Longitude: ct.Longitude, BaseName: ct.Name,
		MaxGuest: strconv.Itoa(ct.MaxGuest), AllowChildren: yesNo(ct.AllowChildren), AllowPet: yesNo(ct.AllowPet),
		AllowSmoking: yesNo(ct.AllowSmoking), Bedroom: strconv.Itoa(ct.Bedrooms), Bathroom: strconv.Itoa(ct.Bathrooms),
		IsFeatured: strconv.Itoa(flag(ct.IsFeatured)), IsPublished: true, VisibleOnWebsite: 1,
		EligibleForOnlineBooking: flag(bookable(p)), RateLabel: "Nightly", RateValue: "0",
		LocalAreaAction:            localAreaJSON{Lat: ct.Latitude, Lon: ct.Longitude, Address: ct.Address},
		InstructionSubtitutionCode: substitutionJSON{},
		CustomSubtitutionCode:      []customSubstitutionJSON{},
	}
	if r := p.Snap.Rates; r != nil {
		out.MinimumStay = r.MinimumStay
		out.RateValue = ifaceb.Money(r.Rate.Daily)
	}
	lo, hi, _ := a.priceSpanAt([]*catalog.Property{p}, now)
	out.RangeRates = rangeRatesJSON{Day: minMaxDecJSON{dec(lo), dec(hi)}, Week: spanTimes(lo, hi, 7), Month: spanTimes(lo, hi, 28)}
	if ph, ok := mainPhoto(p); ok {
		k := ph.Key
		out.ImagePath, out.ImageSmall = mediaLink(base, k, "original"), mediaLink(base, k, "small")
		out.Image317179, out.ImageH179, out.ImageW800 = mediaLink(base, k, "317_179"), mediaLink(base, k, "h_179"), mediaLink(base, k, "w_800")
	}
	if p.Snap.Policy != nil {
		out.Policies.PaymentPolicies = p.Snap.Policy.PaymentType
	}
	if p.Snap.Methods != nil {
		methods := make([]string, 0, len(p.Snap.Methods.Gateways))
		for _, g := range p.Snap.Methods.Gateways {
			methods = append(methods, g.Provider)
		}
		out.Policies.PaymentMethods = strings.Join(methods, ",")
	}
	for _, l := range langs {
		out.Languages.Brief.add(l, ct.Brief)
		out.Languages.Policies.add(l, out.Policies)
		out.Languages.Name.add(l, ct.Name)
	}
	out.Amenity = amenityLocations(p, langs)
	if p.Snap.Amenities != nil {
		out.AmenityDescription = p.Snap.Amenities.Description
	}
	if p.Snap.Amenities != nil {
		for _, x := range p.Snap.Amenities.Items {
			n := strings.ToLower(amenityName(x))
			if strings.Contains(n, "wifi") || strings.Contains(n, "wi-fi") {
				out.Wifi = 1
			}
		}
	}
	return out
}

// bookable tells whether p can be booked online: it has rates that can be priced. The
// booking engine's site lists only these (engine.go).
func bookable(p *catalog.Property) bool { return p.PricingErr == nil && p.Snap.Rates != nil }

func yesNo(b *bool) string { return strconv.Itoa(optFlag(b)) }

func spanTimes(lo, hi decimal.Decimal, n int64) minMaxDecJSON {
	return minMaxDecJSON{dec(lo.Mul(decimal.NewFromInt(n))), dec(hi.Mul(decimal.NewFromInt(n)))}
}
