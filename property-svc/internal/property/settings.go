package property

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/libs/fields"
)

// LeadSource is where a booking came from (a channel or campaign).
type LeadSource struct {
	ID   int
	Name string
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
	// DefaultLeadSource is the id, among the lead sources, of a booking created without
	// a leadsourceId.
	DefaultLeadSource *int
	// ExchangeRates replaces the account's rates whole, sorted by currency.
	ExchangeRates *[]ExchangeRate

	// Categories, Tags and Promotions are replaced whole by the resources that manage them
	// (/api/property-category, /api/property-promotion), never by an account-settings body.
	Categories *[]Group
	Tags       *[]Group
	Promotions *[]Promotion
	// ChannelMarkups is replaced whole by /api/channel-markup without internal_code.
	ChannelMarkups *[]Markup
	// LastBrandID is set by /api/account-brand's create (Settings.LastBrandID).
	LastBrandID *int
}

// ExchangeRate says how many units of Currency one unit of the account's currency buys.
type ExchangeRate struct {
	Currency string // ISO 4217, upper case, never the account's own
	Rate     decimal.Decimal
}

// DefaultLeadSources are the lead sources of an account that has set none.
var DefaultLeadSources = []LeadSource{{1, "Website"}, {2, "Phone"}, {3, "Email"}, {4, "Walk-in"}, {5, "Referral"}, {6, "Channel"}}

const (
	maxLanguages     = 50
	maxLeadSources   = 100
	maxBrands        = 100
	maxExchangeRates = 200
)

// An exchange rate is a decimal > 0 with at most 10 decimal places, at most a billion (the
// weakest currencies need rates in the tens of thousands).
var rateRule = fields.Dec{Required: true, Positive: true, Max: decimal.NewFromInt(1_000_000_000), MaxScale: 10}

// rateTypeRule reads a search's rate_type in any case, as the RateType spells it.
var rateTypeRule = fields.Str{IgnoreCase: true, OneOf: []string{string(RateDaily), string(RateWeekly), string(RateMonthly)}}

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
			b.Domains = []string{}
			if d := readHostname(it, "domain"); d != "" {
				b.Domains = []string{d}
			}
			list = append(list, b)
		}
		s.Brands = &list
	}
	s.DefaultLeadSource = optional(o.Int("default_lead_source", fields.Int{Min: 1, Max: 2147483647}))
	s.ExchangeRates = readExchangeRates(o, "exchange_rates")
	if so := o.Object("search", false); so != nil {
		s.Search = &Search{
			DefaultLimit:      optional(so.Int("default_limit", fields.Int{Min: 1, Max: 100})),
			PriceFilterEnable: optional(so.Bool("price_filter_enable", false)),
		}
		rt, ok := so.String("rate_type", rateTypeRule)
		if ok && rt != "" {
			s.Search.RateType = ptr(RateType(rt))
		}
	}
	if err := v.Err(); err != nil {
		return AccountSettings{}, err
	}
	return s, nil
}

// readExchangeRates reads {ISO 4217 code: rate}; codes in any case, stored upper case and
// sorted. [] and {} clear the rates.
func readExchangeRates(o *fields.Object, name string) *[]ExchangeRate {
	if !o.Has(name) {
		return nil
	}
	r := o.Object(name, false)
	if r == nil {
		return nil
	}
	keys := r.Keys()
	if len(keys) > maxExchangeRates {
		o.Addf(name, "must have at most %d currencies", maxExchangeRates)
		return nil
	}
	out := make([]ExchangeRate, 0, len(keys))
	seen := map[string]string{}
	for _, key := range keys {
		u, err := currency.ParseISO(key)
		if err != nil || u.String() == "XXX" || len(key) != 3 {
			r.Add(key, "must be keyed by an ISO 4217 currency code")
			continue
		}
		rate, ok := r.Decimal(key, rateRule)
		if !ok {
			continue
		}
		code := u.String()
		if first, dup := seen[code]; dup {
			r.Addf(key, "names %s twice (also as %s)", code, first)
			continue
		}
		seen[code] = key
		out = append(out, ExchangeRate{Currency: code, Rate: rate})
	}
	slices.SortFunc(out, func(a, b ExchangeRate) int { return strings.Compare(a.Currency, b.Currency) })
	return &out
}

// check applies the rules that span the body and the settings in force, cur: exchange
// rates convert from the account's currency into others, and the default lead source is
// one of the account's lead sources.
func (a AccountSettings) check(cur Settings) error {
	var v fields.Violations
	cy := cur.Currency
	if a.Currency != nil {
		cy = *a.Currency
	}
	if a.ExchangeRates != nil {
		for _, r := range *a.ExchangeRates {
			if r.Currency == cy {
				v.Add("exchange_rates."+r.Currency, "is the account's own currency ("+cy+"): only other currencies have a rate")
			}
		}
	} else if cy != cur.Currency && len(cur.ExchangeRates) > 0 {
		// The stored rates convert from the old currency: kept, every one would be wrong.
		v.Addf("exchange_rates", "are rates from %s: send the rates from %s with the new currency (or {} to clear them)", cur.Currency, cy)
	}
	sources := cur.LeadSources
	if a.LeadSources != nil {
		sources = *a.LeadSources
		if len(sources) == 0 {
			sources = DefaultLeadSources
		}
	}
	def := 0
	if cur.DefaultLeadSourceSet {
		def = cur.DefaultLeadSource
	}
	if a.DefaultLeadSource != nil {
		def = *a.DefaultLeadSource
	}
	if def != 0 && !slices.ContainsFunc(sources, func(l LeadSource) bool { return l.ID == def }) {
		if a.DefaultLeadSource != nil {
			v.Addf("default_lead_source", "must be the id of one of the account's lead sources (%s)", leadSourceIDs(sources))
		} else {
			v.Addf("lead_sources", "must keep the default lead source %d, or come with a new default_lead_source", def)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	brands := cur.Brands
	if a.Brands != nil {
		brands = *a.Brands
	}
	return checkBrands(a.inForce(cur), brands, "brands.", a.Brands != nil, 0)
}

// leadSourceIDs lists the ids of sources for a violation's message: "1, 2, 5".
func leadSourceIDs(sources []LeadSource) string {
	ids := make([]string, len(sources))
	for i, l := range sources {
		ids[i] = strconv.Itoa(l.ID)
	}
	return strings.Join(ids, ", ")
}

// DefaultLeadSourceOf is the default lead source in force: the one set, else 1 when the
// account has it, else its first.
func DefaultLeadSourceOf(set int, sources []LeadSource) int {
	if set != 0 || len(sources) == 0 {
		return set
	}
	if slices.ContainsFunc(sources, func(l LeadSource) bool { return l.ID == 1 }) {
		return 1
	}
	return sources[0].ID
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
	host, valid := hostName(s)
	if !valid {
		o.Add(name, "must be a host name such as example.com")
		return ""
	}
	return host
}

// hostName is s lower case, and whether it is a host name of at most 253 characters made
// of at least two DNS labels (IDNs in their xn-- form).
func hostName(s string) (string, bool) {
	host := strings.ToLower(s)
	labels := strings.Split(host, ".")
	valid := len(labels) >= 2 && len(host) <= 253
	for _, l := range labels {
		valid = valid && hostLabel.MatchString(l)
	}
	return host, valid
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
