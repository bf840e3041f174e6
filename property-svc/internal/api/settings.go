package api

import (
	"time"

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
}

type leadSourceDTO struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type brandDTO struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Domain string `json:"domain,omitempty"`
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
		out.Brands[i] = brandDTO{ID: b.ID, Name: b.Name, Domain: b.Domain}
	}
	return out
}
