package api

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events/contract"
)

// searchOptions are the website search fields the catalog offers, with their labels, in
// the order of the search form.
var searchOptions = []struct{ key, label string }{
	{"checkin", "Check-in"}, {"checkout", "Check-out"}, {"guests", "Guests"}, {"bedrooms", "Bedrooms"},
	{"city", "City"}, {"price", "Price"},
}

type searchOptionJSON struct {
	Alias     string          `json:"alias"`
	GS        int             `json:"gs"`
	Languages ordered[string] `json:"languages"` // language code → label
}

type searchPluginJSON struct {
	ShowCheckin     int    `json:"show_checkin"`
	ShowCheckout    int    `json:"show_checkout"`
	ShowGuests      int    `json:"show_guests"`
	ShowBedrooms    int    `json:"show_bedrooms"`
	ShowCity        int    `json:"show_city"`
	ShowPrice       int    `json:"show_price"`
	BackgroundColor string `json:"background_color"`
	ButtonColor     string `json:"button_color"`
	TextColor       string `json:"text_color"`

	// The WordPress plugin's full search form: a field shows when its flag == 1.
	ShowCheckinoutFilter int `json:"show_checkinout_filter"`
	ShowAdultsFilter     int `json:"show_adults_filter"`
	ShowChildrenFilter   int `json:"show_children_filter"`
	ShowBedroomsFilter   int `json:"show_bedrooms_filter"`
	ShowBathroomsFilter  int `json:"show_bathrooms_filter"`
	ShowCityFilter       int `json:"show_city_filter"`
	ShowCategoryFilter   int `json:"show_category_filter"`
	ShowTagsFilter       int `json:"show_tags_filter"`
	ShowSearchtermFilter int `json:"show_searchterm_filter"`
}

type priceFilterJSON struct {
	Enable    int                      `json:"enable"`
	RateType  string                   `json:"rate_type"`
	MinPrice  json.Number              `json:"minprice"`
	MaxPrice  json.Number              `json:"maxprice"`
	Languages ordered[ordered[string]] `json:"languages"`
}

type idNameJSON struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type rangeIntJSON struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

type tagJSON struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	Languages ordered[string] `json:"languages"`
}

// accountAmenityJSON is one entry of default-config's amenity_list.
type accountAmenityJSON struct {
	ID        string          `json:"id"` // the amenity's name: the account-wide key
	Name      string          `json:"name"`
	Type      int             `json:"type"` // 1 system, 2 extra
	Class     string          `json:"class"`
	Languages ordered[string] `json:"languages"`
}

// pageSettingsJSON is a page's search form: searchconfig maps each search option to 1
// (the WordPress plugin compares each value with == 1; the options' labels are the
// top-level searchconfig's).
type pageSettingsJSON struct {
	SearchPlugin searchPluginJSON `json:"searchplugin"`
	SearchConfig ordered[int]     `json:"searchconfig"`
}

// defaultConfigJSON is default-config: the fields the spec and websites read, in the order
// they were defined (new fields of the compatibility issue last, in the order the original's
// clients list them).
type defaultConfigJSON struct {
	SupportLanguage         ordered[string]           `json:"support_language"`
	DefaultLimit            int                       `json:"default_limit"`
	SearchConfig            ordered[searchOptionJSON] `json:"searchconfig"`
	GlobalSearchConfig      ordered[int]              `json:"global_search_config"`
	GlobalSearchLanguage    ordered[ordered[string]]  `json:"global_search_language"`
	SearchPlugin            searchPluginJSON          `json:"searchplugin"`
	PriceFilter             priceFilterJSON           `json:"price_filter"`
	CurrencyCode            string                    `json:"currency_code"`
	CurrencySymbol          string                    `json:"currency_symbol"`
	RateType                string                    `json:"rate_type"`
	UseEnquire              int                       `json:"use_enquire"`
	AvailabilityTabCalendar int                       `json:"availability_tab_calendar"`
	LeadSourceList          []idNameJSON              `json:"lead_source_list"`
	Bedroom                 rangeIntJSON              `json:"bedroom"`
	CityList                []string                  `json:"city_list"`
	TagsList                []tagJSON                 `json:"tags_list"`
	AmenityList             []accountAmenityJSON      `json:"amenity_list"`
	PropertyMaxGuest        int                       `json:"property_max_guest"`
	HomepageSettings        pageSettingsJSON          `json:"homepage_settings"`
	SearchpageSettings      pageSettingsJSON          `json:"searchpage_settings"`
	Bathroom                rangeIntJSON              `json:"bathroom"`
}

// languageName is a language code's English name, else the code.
func languageName(code string) string {
	if tag, err := language.Parse(code); err == nil {
		if n := display.English.Tags().Name(tag); n != "" {
			return n
		}
	}
	return code
}

func (a *API) defaultConfig(c *fiber.Ctx) error {
	acc := account(c)
	in := readInput(c)
	sc := a.readScope(c, in)
	if err := in.err(); err != nil {
		return err
	}
	st := sc.st
	props := sc.filter(a.catalog.Properties(acc))

	out := defaultConfigJSON{DefaultLimit: st.Search.DefaultLimit, CurrencyCode: st.Currency, CurrencySymbol: currencySymbol(st.Currency),
		RateType: st.Search.RateType, UseEnquire: 0, AvailabilityTabCalendar: 1, LeadSourceList: []idNameJSON{}, CityList: []string{},
		TagsList: []tagJSON{}, AmenityList: accountAmenities(props, st.Languages)}
	var labels ordered[string] // the same labels in every language
	for _, o := range searchOptions {
		labels.add(o.key, o.label)
	}
	for _, l := range st.Languages {
		out.SupportLanguage.add(l, languageName(l))
		out.GlobalSearchLanguage.add(l, labels)
	}
	for _, o := range searchOptions {
		var langs ordered[string]
		for _, l := range st.Languages {
			langs.add(l, o.label)
		}
		out.SearchConfig.add(o.key, searchOptionJSON{Alias: o.label, GS: 1, Languages: langs})
		out.GlobalSearchConfig.add(o.key, 1)
	}
	enable := st.Search.PriceFilterEnable != nil && *st.Search.PriceFilterEnable
	out.SearchPlugin = searchPluginJSON{ShowCheckin: 1, ShowCheckout: 1, ShowGuests: 1, ShowBedrooms: 1, ShowCity: 1, ShowPrice: flag(enable),
		BackgroundColor: "#ffffff", ButtonColor: "#1a73e8", TextColor: "#202124",
		ShowCheckinoutFilter: 1, ShowAdultsFilter: 1, ShowChildrenFilter: 1, ShowBedroomsFilter: 1, ShowBathroomsFilter: 1,
		ShowCityFilter: 1, ShowCategoryFilter: flag(slices.ContainsFunc(st.Categories, func(c contract.Category) bool { return c.ShowSearchEngine })),
		ShowTagsFilter: flag(len(st.Tags) > 0), ShowSearchtermFilter: 1}
	lo, hi, _ := a.priceSpan(props)
	lo, hi = sc.convert(lo), sc.convert(hi)
	out.PriceFilter = priceFilterJSON{Enable: flag(enable), RateType: st.Search.RateType, MinPrice: dec(lo), MaxPrice: dec(hi),
		Languages: out.GlobalSearchLanguage}
	for _, l := range st.LeadSources {
		out.LeadSourceList = append(out.LeadSourceList, idNameJSON{ID: l.ID, Name: l.Name})
	}
	cities := map[string]bool{}
	for i, p := range props {
		ct := p.Snap.Content
		if i == 0 || ct.Bedrooms < out.Bedroom.Min {
			out.Bedroom.Min = ct.Bedrooms
		}
		if i == 0 || ct.Bedrooms > out.Bedroom.Max {
			out.Bedroom.Max = ct.Bedrooms
		}
		if i == 0 || ct.Bathrooms < out.Bathroom.Min {
			out.Bathroom.Min = ct.Bathrooms
		}
		if i == 0 || ct.Bathrooms > out.Bathroom.Max {
			out.Bathroom.Max = ct.Bathrooms
		}
		if ct.MaxGuest > out.PropertyMaxGuest {
			out.PropertyMaxGuest = ct.MaxGuest
		}
		if ct.City != "" && !cities[ct.City] {
			cities[ct.City] = true
			out.CityList = append(out.CityList, ct.City)
		}
	}
	sort.Strings(out.CityList)
	for _, t := range st.Tags {
		out.TagsList = append(out.TagsList, tagJSON{ID: t.ID, Name: t.Name, Languages: byLanguage(t.Languages, st.Languages, t.Name)})
	}
	page := pageSettingsJSON{SearchPlugin: out.SearchPlugin, SearchConfig: out.GlobalSearchConfig}
	out.HomepageSettings, out.SearchpageSettings = page, page
	return c.JSON(out)
}

// amenityKey identifies an amenity across the account's properties: its type and name,
// whatever the case (B6 ids are positions within one property's list).
func amenityKey(x catalog.Amenity) string {
	return strconv.Itoa(x.Type) + "|" + strings.ToLower(strings.TrimSpace(amenityName(x)))
}

// accountAmenities are the distinct amenities of the live properties (by amenityKey; the
// first property by id that has one gives its class and languages), system amenities
// (type 1) before extra ones, each group by name.
func accountAmenities(props []*catalog.Property, langs []string) []accountAmenityJSON {
	seen := map[string]bool{}
	var list []catalog.Amenity
	for _, p := range props {
		if p.Snap.Amenities == nil {
			continue
		}
		for _, x := range p.Snap.Amenities.Items {
			if k := amenityKey(x); !seen[k] && strings.TrimSpace(amenityName(x)) != "" {
				seen[k] = true
				list = append(list, x)
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Type != list[j].Type {
			return list[i].Type < list[j].Type
		}
		return strings.ToLower(amenityName(list[i])) < strings.ToLower(amenityName(list[j]))
	})
	out := make([]accountAmenityJSON, 0, len(list))
	for _, x := range list {
		n := amenityName(x)
		out = append(out, accountAmenityJSON{ID: n, Name: n, Type: x.Type, Class: x.Class, Languages: byLanguage(x.Languages, langs, n)})
	}
	return out
}
