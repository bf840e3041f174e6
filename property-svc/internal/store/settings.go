package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/property-svc/internal/property"
)

// SettingsRec is an account's settings (vros_property.settings, `_id` = account id) and the
// data of vros.account.settings.updated events.
type SettingsRec struct {
	AccountID   string          `bson:"_id" json:"account_id"`
	Version     int64           `bson:"version" json:"version"`
	UpdatedAt   time.Time       `bson:"updated_at" json:"updated_at"`
	Currency    string          `bson:"currency,omitempty" json:"currency"`
	Timezone    string          `bson:"timezone,omitempty" json:"timezone"`
	Languages   []string        `bson:"languages,omitempty" json:"languages"`
	LeadSources []LeadSourceRec `bson:"lead_sources,omitempty" json:"lead_sources"`
	Brands      []BrandRec      `bson:"brands,omitempty" json:"brands"`
	Search      SearchRec       `bson:"search" json:"search"`
	// WeekendNights is how many nights get the weekend price: 2 (Fri, Sat) or 3 (and Sun).
	WeekendNights int `bson:"weekend_nights,omitempty" json:"weekend_nights"`
}

// LeadSourceRec is where a booking came from.
type LeadSourceRec struct {
	ID   int    `bson:"id" json:"id"`
	Name string `bson:"name" json:"name"`
}

// BrandRec is one website of the account.
type BrandRec struct {
	ID     int    `bson:"id" json:"id"`
	Name   string `bson:"name" json:"name"`
	Domain string `bson:"domain,omitempty" json:"domain,omitempty"`
}

// SearchRec are the website search settings.
type SearchRec struct {
	DefaultLimit      int    `bson:"default_limit,omitempty" json:"default_limit"`
	PriceFilterEnable *bool  `bson:"price_filter_enable,omitempty" json:"price_filter_enable"`
	RateType          string `bson:"rate_type,omitempty" json:"rate_type"`
}

// DefaultLeadSources are the lead sources of an account that has not set its own.
var DefaultLeadSources = []LeadSourceRec{
	{1, "Website"}, {2, "Phone"}, {3, "Email"}, {4, "Walk-in"}, {5, "Referral"}, {6, "Channel"},
}

// withDefaults fills what the account has not set (docs/interface-a.md, account settings).
func (r SettingsRec) withDefaults() SettingsRec {
	if r.Currency == "" {
		r.Currency = "USD"
	}
	if r.Timezone == "" {
		r.Timezone = "UTC"
	}
	if len(r.Languages) == 0 {
		r.Languages = []string{"en"}
	}
	if len(r.LeadSources) == 0 {
		r.LeadSources = DefaultLeadSources
	}
	if r.Brands == nil {
		r.Brands = []BrandRec{}
	}
	if r.WeekendNights == 0 {
		r.WeekendNights = 2
	}
	if r.Search.DefaultLimit == 0 {
		r.Search.DefaultLimit = 10
	}
	if r.Search.RateType == "" {
		r.Search.RateType = "daily"
	}
	if r.Search.PriceFilterEnable == nil {
		f := false
		r.Search.PriceFilterEnable = &f
	}
	return r
}

// Settings returns an account's settings, defaults filled in.
func (s *Store) Settings(ctx context.Context, account string) (SettingsRec, error) {
	var r SettingsRec
	err := s.settings.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		r = SettingsRec{AccountID: account}
		err = nil
	}
	return r.withDefaults(), err
}

// PutSettings changes the settings a carries (the others keep their value) and returns
// those in force.
func (s *Store) PutSettings(ctx context.Context, account string, a property.AccountSettings) (property.Settings, error) {
	set := bson.D{{Key: "updated_at", Value: s.now()}}
	if a.Currency != nil {
		set = append(set, bson.E{Key: "currency", Value: *a.Currency})
	}
	if a.Timezone != nil {
		set = append(set, bson.E{Key: "timezone", Value: *a.Timezone})
	}
	if a.Languages != nil {
		set = append(set, bson.E{Key: "languages", Value: *a.Languages})
	}
	if a.LeadSources != nil {
		ls := make([]LeadSourceRec, len(*a.LeadSources))
		for i, l := range *a.LeadSources {
			ls[i] = LeadSourceRec{ID: l.ID, Name: l.Name}
		}
		set = append(set, bson.E{Key: "lead_sources", Value: ls})
	}
	if a.Brands != nil {
		bs := make([]BrandRec, len(*a.Brands))
		for i, b := range *a.Brands {
			bs[i] = BrandRec{ID: b.ID, Name: b.Name, Domain: b.Domain}
		}
		set = append(set, bson.E{Key: "brands", Value: bs})
	}
	if a.WeekendNights != nil {
		set = append(set, bson.E{Key: "weekend_nights", Value: *a.WeekendNights})
	}
	if a.Search != nil {
		if a.Search.DefaultLimit != nil {
			set = append(set, bson.E{Key: "search.default_limit", Value: *a.Search.DefaultLimit})
		}
		if a.Search.PriceFilterEnable != nil {
			set = append(set, bson.E{Key: "search.price_filter_enable", Value: *a.Search.PriceFilterEnable})
		}
		if a.Search.RateType != nil {
			set = append(set, bson.E{Key: "search.rate_type", Value: string(*a.Search.RateType)})
		}
	}
	agg := account + ":" + settingsAggregate
	in, err := s.outbox.Begin(ctx, agg)
	if err != nil {
		return property.Settings{}, fmt.Errorf("record %s in the outbox: %w", SettingsUpdated, err)
	}
	var r SettingsRec
	unlock := s.locks.Lock(agg)
	err = s.settings.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: account}},
		bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&r)
	unlock()
	s.outbox.Done(in, nil)
	if err != nil {
		return property.Settings{}, fmt.Errorf("settings of %s: %w", account, err)
	}
	return r.withDefaults().settings(), nil
}

// settings converts settings in force (defaults filled in) to the domain's.
func (r SettingsRec) settings() property.Settings {
	out := property.Settings{Account: r.AccountID, Version: r.Version, UpdatedAt: r.UpdatedAt, Currency: r.Currency,
		Timezone: r.Timezone, Languages: r.Languages, LeadSources: make([]property.LeadSource, len(r.LeadSources)),
		Brands: make([]property.Brand, len(r.Brands)), WeekendNights: r.WeekendNights,
		Search: property.SearchSettings{DefaultLimit: r.Search.DefaultLimit, RateType: property.RateType(r.Search.RateType)}}
	for i, l := range r.LeadSources {
		out.LeadSources[i] = property.LeadSource{ID: l.ID, Name: l.Name}
	}
	for i, b := range r.Brands {
		out.Brands[i] = property.Brand{ID: b.ID, Name: b.Name, Domain: b.Domain}
	}
	if r.Search.PriceFilterEnable != nil {
		out.Search.PriceFilterEnable = *r.Search.PriceFilterEnable
	}
	return out
}
