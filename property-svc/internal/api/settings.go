package api

import (
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/property-svc/internal/property"
)

// settingsDTO is the answer of /api/account-settings: the settings in force
// (docs/interface-a.md, account settings). Its fields and their order are those of the
// vros.account.settings.updated event's data.
type settingsDTO struct {
	AccountID     string          `json:"account_id"`
	Version       int64           `json:"version"`
	UpdatedAt     time.Time       `json:"updated_at"`
	Currency      string          `json:"currency"`
	Timezone      string          `json:"timezone"`
	Languages     []string        `json:"languages"`
	LeadSources   []leadSourceDTO `json:"lead_sources"`
	Brands        []brandDTO      `json:"brands"`
	Search        searchDTO       `json:"search"`
	WeekendNights int             `json:"weekend_nights"`
	// DefaultLeadSource and ExchangeRates are set here; categories, tags and promotions by
	// their own resources, shown here as published.
	DefaultLeadSource int               `json:"default_lead_source"`
	ExchangeRates     map[string]string `json:"exchange_rates"` // currency → rate; JSON sorts the codes
	Categories        []categoryDTO     `json:"categories"`
	Tags              []tagDTO          `json:"tags"`
	Promotions        []promotionDTO    `json:"promotions"`
	// ChannelMarkups are set by /api/channel-markup; absent when none, as in the event.
	ChannelMarkups []contract.Markup `json:"channel_markups,omitempty"`
}

type categoryDTO struct {
	ID               int64             `json:"id"`
	Name             string            `json:"name"`
	ShowSearchEngine bool              `json:"show_search_engine"`
	Languages        map[string]string `json:"languages"`
	Properties       []int64           `json:"properties"`
}

type tagDTO struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Languages  map[string]string `json:"languages"`
	Properties []int64           `json:"properties"`
}

type promotionDTO struct {
	Code       string  `json:"code"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Amount     string  `json:"amount"`
	StartDate  string  `json:"start_date"`
	EndDate    string  `json:"end_date"`
	MinNights  int     `json:"min_nights"`
	UsageLimit int     `json:"usage_limit"`
	Properties []int64 `json:"properties"`
}

type leadSourceDTO struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// brandDTO is a brand as the settings event carries it: id, name and domain (the first
// domain) as before brands had more, then what /api/account-brand sets, left out when unset.
type brandDTO struct {
	ID              int             `json:"id"`
	Name            string          `json:"name"`
	Domain          string          `json:"domain,omitempty"`
	Domains         []string        `json:"domains,omitempty"`
	Origins         []string        `json:"origins,omitempty"`
	DefaultLanguage string          `json:"default_language,omitempty"`
	DefaultCurrency string          `json:"default_currency,omitempty"`
	LeadSource      int             `json:"lead_source,omitempty"`
	Search          *brandSearchDTO `json:"search,omitempty"`
	Properties      []int64         `json:"properties,omitempty"`
}

// brandSearchDTO holds what a brand overrides of the account's search settings.
type brandSearchDTO struct {
	DefaultLimit      int    `json:"default_limit"`
	PriceFilterEnable *bool  `json:"price_filter_enable"`
	RateType          string `json:"rate_type"`
}

type searchDTO struct {
	DefaultLimit      int    `json:"default_limit"`
	PriceFilterEnable bool   `json:"price_filter_enable"`
	RateType          string `json:"rate_type"`
}

func settingsAnswer(s property.Settings) settingsDTO {
	out := settingsDTO{AccountID: s.Account, Version: s.Version, UpdatedAt: s.UpdatedAt, Currency: s.Currency,
		Timezone: s.Timezone, Languages: s.Languages, LeadSources: make([]leadSourceDTO, len(s.LeadSources)),
		Brands: make([]brandDTO, len(s.Brands)), WeekendNights: s.WeekendNights,
		Search: searchDTO{DefaultLimit: s.Search.DefaultLimit, PriceFilterEnable: s.Search.PriceFilterEnable,
			RateType: string(s.Search.RateType)}}
	for i, l := range s.LeadSources {
		out.LeadSources[i] = leadSourceDTO{ID: l.ID, Name: l.Name}
	}
	for i, b := range s.Brands {
		out.Brands[i] = brandDTO{ID: b.ID, Name: b.Name, Domain: b.Domain(), Domains: b.Domains, Origins: b.Origins, DefaultLanguage: b.DefaultLanguage,
			DefaultCurrency: b.DefaultCurrency, LeadSource: b.LeadSource, Properties: b.Properties}
		if s := b.Search; s != nil {
			out.Brands[i].Search = &brandSearchDTO{DefaultLimit: s.DefaultLimit, PriceFilterEnable: s.PriceFilterEnable, RateType: string(s.RateType)}
		}
	}
	out.DefaultLeadSource = s.DefaultLeadSource
	out.ExchangeRates = make(map[string]string, len(s.ExchangeRates))
	for _, r := range s.ExchangeRates {
		out.ExchangeRates[r.Currency] = r.Rate.String()
	}
	out.Categories = make([]categoryDTO, len(s.Categories))
	for i, g := range s.Categories {
		out.Categories[i] = categoryDTO{ID: g.ID, Name: g.Name, ShowSearchEngine: g.ShowSearchEngine, Languages: g.Languages, Properties: g.Properties}
	}
	out.Tags = make([]tagDTO, len(s.Tags))
	for i, g := range s.Tags {
		out.Tags[i] = tagDTO{ID: g.ID, Name: g.Name, Languages: g.Languages, Properties: g.Properties}
	}
	for _, m := range s.ChannelMarkups {
		out.ChannelMarkups = append(out.ChannelMarkups, m.Contract())
	}
	out.Promotions = make([]promotionDTO, len(s.Promotions))
	for i, p := range s.Promotions {
		out.Promotions[i] = promotionDTO{Code: p.Code, Name: p.Name, Type: string(p.Type), Amount: p.Amount.String(),
			StartDate: p.Start.Format(time.DateOnly), EndDate: p.EndDate(), MinNights: p.MinNights, UsageLimit: p.UsageLimit, Properties: p.Properties}
	}
	return out
}
