package property

import (
	"regexp"
	"slices"
	"strings"

	"golang.org/x/text/currency"

	"github.com/vros/vros/libs/fields"
)

// LeadSource is where a booking came from (a channel or campaign).
type LeadSource struct {
	ID   int
	Name string
}

// Brand is a brand the account sells under, optionally on its own domain.
type Brand struct {
	ID     int
	Name   string
	Domain string // lower-case host name; "" for none
}

// RateType is the price period the search shows.
type RateType string

// Rate types.
const (
	RateDaily   RateType = "daily"
	RateWeekly  RateType = "weekly"
	RateMonthly RateType = "monthly"
)

// Search holds the account's catalog search preferences. Nil fields keep
// their stored values.
type Search struct {
	DefaultLimit      *int // 1 to 100 results per page
	PriceFilterEnable *bool
	RateType          *RateType
}

// AccountSettings is a decoded /api/account-settings body. Every field is
// optional: nil keeps the stored value, and a sent list replaces the stored
// list whole (an empty list clears it).
type AccountSettings struct {
	Currency    *string // ISO 4217, upper case
	Timezone    *string // IANA zone name
	Languages   *[]string
	LeadSources *[]LeadSource
	Brands      *[]Brand
	Search      *Search
	// WeekendNights is 2 (Friday and Saturday nights) or 3 (and Sunday).
	WeekendNights *int
}

const (
	maxLanguages   = 50
	maxLeadSources = 100
	maxBrands      = 100
)

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// DecodeAccountSettings reads an /api/account-settings body.
func DecodeAccountSettings(body []byte) (AccountSettings, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var s AccountSettings
	s.Currency = readCurrency(o, "currency")
	if tz := notBlank(o, "timezone", fields.Str{Max: 64}); tz != nil {
		if validTimezone(*tz) {
			s.Timezone = tz
		} else {
			o.Add("timezone", "must be an IANA time zone name such as Europe/Rome")
		}
	}
	s.Languages = readLanguages(o, "languages")
	// The spec's weekend price "applies to 2 or 3 weekend days": the nights of Friday and
	// Saturday, or of Friday, Saturday and Sunday.
	s.WeekendNights = optional(o.Int("weekend_nights", fields.Int{OneOf: []int64{2, 3}}))
	if items, ok := o.Array("lead_sources", fields.List{Max: maxLeadSources}); ok {
		list := make([]LeadSource, 0, len(items))
		ids := uniqueIDs{}
		for _, it := range items {
			var ls LeadSource
			ls.ID = ids.read(it)
			ls.Name, _ = it.String("name", fields.Str{Required: true, Min: 1, Max: 100})
			list = append(list, ls)
		}
		s.LeadSources = &list
	}
	if items, ok := o.Array("brands", fields.List{Max: maxBrands}); ok {
		list := make([]Brand, 0, len(items))
		ids := uniqueIDs{}
		for _, it := range items {
			var b Brand
			b.ID = ids.read(it)
			b.Name, _ = it.String("name", fields.Str{Required: true, Min: 1, Max: 100})
			b.Domain = readHostname(it, "domain")
			list = append(list, b)
		}
		s.Brands = &list
	}
	if so := o.Object("search", false); so != nil {
		s.Search = &Search{
			DefaultLimit:      optional(so.Int("default_limit", fields.Int{Min: 1, Max: 100})),
			PriceFilterEnable: optional(so.Bool("price_filter_enable", false)),
		}
		rt, ok := so.String("rate_type", fields.Str{IgnoreCase: true,
			OneOf: []string{string(RateDaily), string(RateWeekly), string(RateMonthly)}})
		if ok && rt != "" {
			s.Search.RateType = ptr(RateType(rt))
		}
	}
	if err := v.Err(); err != nil {
		return AccountSettings{}, err
	}
	return s, nil
}

// readCurrency reads an ISO 4217 code in any case and returns it upper case.
// XXX ("no currency") is refused: prices need a currency.
func readCurrency(o *fields.Object, name string) *string {
	s := notBlank(o, name, fields.Str{Min: 3, Max: 3})
	if s == nil {
		return nil
	}
	u, err := currency.ParseISO(*s)
	if err != nil || u.String() == "XXX" {
		o.Add(name, "must be an ISO 4217 currency code")
		return nil
	}
	return ptr(u.String())
}

// readLanguages reads a list of BCP 47 tags, stored canonical and unique.
func readLanguages(o *fields.Object, name string) *[]string {
	raw, ok := o.Strings(name, fields.List{Max: maxLanguages}, fields.Str{Max: 35})
	if !ok {
		return nil
	}
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		tag, ok := languageTag(s)
		switch {
		case !ok:
			o.Addf(name, "must contain BCP 47 language tags only (%q is not)", s)
		case slices.Contains(out, tag):
			o.Addf(name, "lists %s twice", tag)
		default:
			out = append(out, tag)
		}
	}
	return &out
}

// readHostname reads an optional host name of at most 253 characters made of
// at least two DNS labels (IDNs in their xn-- form), and returns it lower case.
func readHostname(o *fields.Object, name string) string {
	s, ok := o.String(name, fields.Str{Max: 253})
	if !ok || s == "" {
		return ""
	}
	host := strings.ToLower(s)
	labels := strings.Split(host, ".")
	valid := len(labels) >= 2
	for _, l := range labels {
		valid = valid && hostLabel.MatchString(l)
	}
	if !valid {
		o.Add(name, "must be a host name such as example.com")
		return ""
	}
	return host
}

// uniqueIDs reads the "id" member of list items and refuses repeats.
type uniqueIDs map[int]string

func (u uniqueIDs) read(it *fields.Object) int {
	id, ok := it.Int("id", fields.Int{Required: true, Min: 1, Max: 2147483647})
	if !ok {
		return 0
	}
	if first, dup := u[id]; dup {
		it.Add("id", "duplicates "+first)
		return id
	}
	u[id] = it.Path()
	return id
}
