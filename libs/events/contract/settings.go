package contract

import "time"

// SettingsUpdated is the type of account settings events on vros.property.v1, keyed
// `<accountId>:settings`.
const SettingsUpdated = "vros.account.settings.updated"

// Settings is the data of a vros.account.settings.updated event: an account's settings, with
// the defaults (DefaultSettings) filled in for what the account has not set.
type Settings struct {
	AccountID string `json:"account_id"`
	// Version increases by one with every change of the account's settings.
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
	Currency  string    `json:"currency"` // ISO 4217 code of every price of the account
	// Timezone is the IANA zone of the account's properties that have none of their own.
	Timezone    string       `json:"timezone"`
	Languages   []string     `json:"languages"` // language codes, the first the default
	LeadSources []LeadSource `json:"lead_sources"`
	Brands      []Brand      `json:"brands"`
	Search      Search       `json:"search"`
	// WeekendNights is how many nights cost the weekend price: 2 (Friday and Saturday) or 3
	// (and Sunday). Consumers that price apply it with pricing.WeekendOf.
	WeekendNights int `json:"weekend_nights"`
	// DefaultLeadSource is the id (in LeadSources) of a booking created without a
	// leadsourceId.
	DefaultLeadSource int `json:"default_lead_source"`
	// ExchangeRates convert the account's Currency into others: code → how many units of
	// that currency one unit of Currency buys (decimal string). A quote or booking may ask
	// for any currency listed here.
	ExchangeRates map[string]string `json:"exchange_rates"`
	// Categories and Tags group the account's properties for its websites
	// (/api/property-category).
	Categories []Category `json:"categories"`
	Tags       []Tag      `json:"tags"`
	// Promotions are the account's promotion codes (/api/property-promotion).
	Promotions []Promotion `json:"promotions"`
	// ChannelMarkups are the account's markups per channel (/api/channel-markup); a
	// property's own markup for a channel replaces the account's.
	ChannelMarkups []Markup `json:"channel_markups,omitempty"`
}

// Category is a group of properties shown by the websites (property-category, the search's
// category_id).
type Category struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// ShowSearchEngine false hides the category from the websites' search forms.
	ShowSearchEngine bool              `json:"show_search_engine"`
	Languages        map[string]string `json:"languages"`  // name by language code
	Properties       []int64           `json:"properties"` // property ids, in the owner's order
}

// Tag labels properties (default-config's tags_list, the search's tag_id).
type Tag struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Languages  map[string]string `json:"languages"`  // name by language code
	Properties []int64           `json:"properties"` // property ids
}

// MaxUsageLimit is the largest usage limit of a promotion code: booking-svc counts every use
// exactly, one ledger entry per use, and a booking's change lists the uses it may take.
const MaxUsageLimit = 10000

// Promotion is a promotion code: a discount on the rent of stays whose check-in falls in
// [StartDate, EndDate] and that last at least MinNights nights.
type Promotion struct {
	Code string `json:"code"` // unique in the account, compared case-insensitively
	Name string `json:"name"`
	// Type is "percent" (Amount percent off the rent) or "flat" (Amount off, in Currency).
	Type      string `json:"type"`
	Amount    string `json:"amount"`     // decimal string
	StartDate string `json:"start_date"` // YYYY-MM-DD, first check-in day it applies to
	EndDate   string `json:"end_date"`   // YYYY-MM-DD, last check-in day; "" open-ended
	MinNights int    `json:"min_nights"` // 0: any stay
	// UsageLimit is how many bookings may use the code (cancelled ones give their use
	// back); 0: no limit; at most MaxUsageLimit.
	UsageLimit int `json:"usage_limit"`
	// Properties limits the code to these property ids; empty: every property.
	Properties []int64 `json:"properties"`
}

// LeadSource is where a booking can come from.
type LeadSource struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Brand is one website of the account (docs/brands.md).
type Brand struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	// Domain is the first of Domains, kept for consumers of events written before a brand
	// had several domains (and written by them: a consumer reads Domains, else Domain).
	Domain string `json:"domain,omitempty"`
	// Domains are the brand's websites' host names, lower case, unique across the account.
	Domains []string `json:"domains,omitempty"`
	// Origins are the web origins the brand's booking engine is allowed from, in
	// ParseOrigin's form, each in one brand of the account; empty: AllowedOrigins takes them
	// from Domains.
	Origins []string `json:"origins,omitempty"`
	// DefaultLanguage, DefaultCurrency: the brand's website defaults; "" the account's.
	DefaultLanguage string `json:"default_language,omitempty"`
	DefaultCurrency string `json:"default_currency,omitempty"`
	// LeadSource is the lead source (an id of the account's) of a booking made through the
	// brand without a leadsourceId; 0: the account's default.
	LeadSource int `json:"lead_source,omitempty"`
	// Search overrides the account's search settings; its zero fields (nil, 0, "") take the
	// account's. Nil: the account's.
	Search *Search `json:"search,omitempty"`
	// Properties are the ids of the brand's properties; empty: the brand lists none, and
	// its websites show every property of the account.
	Properties []int64 `json:"properties,omitempty"`
}

// HostNames are the brand's domains: Domains, else Domain of an older event.
func (b Brand) HostNames() []string {
	if len(b.Domains) > 0 || b.Domain == "" {
		return b.Domains
	}
	return []string{b.Domain}
}

// Search are the website search settings.
type Search struct {
	DefaultLimit      int    `json:"default_limit"`
	PriceFilterEnable *bool  `json:"price_filter_enable"`
	RateType          string `json:"rate_type"` // "daily", "weekly" or "monthly"
}

// DefaultSettings are the settings of an account that has set none (docs/interface-a.md,
// account settings): what a consumer assumes until the account's first settings event.
func DefaultSettings(account string) Settings {
	off := false
	return Settings{AccountID: account, Currency: "USD", Timezone: "UTC", Languages: []string{"en"},
		LeadSources: []LeadSource{{1, "Website"}, {2, "Phone"}, {3, "Email"}, {4, "Walk-in"}, {5, "Referral"}, {6, "Channel"}},
		Brands:      []Brand{}, WeekendNights: 2, DefaultLeadSource: 1, ExchangeRates: map[string]string{},
		Categories: []Category{}, Tags: []Tag{}, Promotions: []Promotion{}, Search: Search{DefaultLimit: 10, PriceFilterEnable: &off, RateType: "daily"}}
}

// WithDefaults fills what s leaves unset with DefaultSettings. A producer publishes settings
// this way; a consumer may apply it to events written before a setting existed.
func (s Settings) WithDefaults() Settings {
	d := DefaultSettings(s.AccountID)
	s.Currency = or(s.Currency, d.Currency)
	s.Timezone = or(s.Timezone, d.Timezone)
	s.Search.RateType = or(s.Search.RateType, d.Search.RateType)
	if len(s.Languages) == 0 {
		s.Languages = d.Languages
	}
	if len(s.LeadSources) == 0 {
		s.LeadSources = d.LeadSources
	}
	if s.Brands == nil {
		s.Brands = d.Brands
	}
	if s.DefaultLeadSource == 0 {
		s.DefaultLeadSource = d.DefaultLeadSource
	}
	if s.ExchangeRates == nil {
		s.ExchangeRates = d.ExchangeRates
	}
	if s.Categories == nil {
		s.Categories = d.Categories
	}
	if s.Tags == nil {
		s.Tags = d.Tags
	}
	if s.Promotions == nil {
		s.Promotions = d.Promotions
	}
	if s.WeekendNights == 0 {
		s.WeekendNights = d.WeekendNights
	}
	if s.Search.DefaultLimit == 0 {
		s.Search.DefaultLimit = d.Search.DefaultLimit
	}
	if s.Search.PriceFilterEnable == nil {
		s.Search.PriceFilterEnable = d.Search.PriceFilterEnable
	}
	return s
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
