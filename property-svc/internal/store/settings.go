package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
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
	// DefaultLeadSource is the one the account set; 0: none (property.DefaultLeadSourceOf).
	DefaultLeadSource int            `bson:"default_lead_source,omitempty" json:"default_lead_source"`
	ExchangeRates     []RateRec      `bson:"exchange_rates,omitempty" json:"exchange_rates"`
	Categories        []GroupRec     `bson:"categories,omitempty" json:"categories"`
	Tags              []GroupRec     `bson:"tags,omitempty" json:"tags"`
	Promotions        []PromotionRec `bson:"promotions,omitempty" json:"promotions"`
	// ChannelMarkups are the account's (/api/channel-markup without internal_code).
	ChannelMarkups []MarkupRec `bson:"channel_markups,omitempty" json:"channel_markups,omitempty"`
	// LastBrandID is the largest brand id /api/account-brand gave (not published).
	LastBrandID int `bson:"last_brand_id,omitempty" json:"-"`
}

// RateRec is one exchange rate: units of Currency for one unit of the account's currency.
type RateRec struct {
	Currency string `bson:"currency" json:"currency"`
	Rate     string `bson:"rate" json:"rate"` // decimal
}

// GroupRec is a category or a tag.
type GroupRec struct {
	ID               int64             `bson:"id" json:"id"`
	Name             string            `bson:"name" json:"name"`
	ShowSearchEngine bool              `bson:"show_search_engine,omitempty" json:"show_search_engine"`
	Languages        map[string]string `bson:"languages" json:"languages"`
	Properties       []int64           `bson:"properties" json:"properties"`
}

// PromotionRec is a promotion code.
type PromotionRec struct {
	Code       string  `bson:"code" json:"code"`
	Name       string  `bson:"name" json:"name"`
	Type       string  `bson:"type" json:"type"`
	Amount     string  `bson:"amount" json:"amount"`
	StartDate  string  `bson:"start_date" json:"start_date"`
	EndDate    string  `bson:"end_date,omitempty" json:"end_date"`
	MinNights  int     `bson:"min_nights" json:"min_nights"`
	UsageLimit int     `bson:"usage_limit" json:"usage_limit"`
	Properties []int64 `bson:"properties" json:"properties"`
}

// LeadSourceRec is where a booking came from.
type LeadSourceRec struct {
	ID   int    `bson:"id" json:"id"`
	Name string `bson:"name" json:"name"`
}

// BrandRec is one website of the account (docs/brands.md). Domain is the first of Domains
// (a brand stored before brands had several domains has Domain only).
type BrandRec struct {
	ID              int        `bson:"id" json:"id"`
	Name            string     `bson:"name" json:"name"`
	Domain          string     `bson:"domain,omitempty" json:"domain,omitempty"`
	Domains         []string   `bson:"domains,omitempty" json:"domains,omitempty"`
	Origins         []string   `bson:"origins,omitempty" json:"origins,omitempty"`
	DefaultLanguage string     `bson:"default_language,omitempty" json:"default_language,omitempty"`
	DefaultCurrency string     `bson:"default_currency,omitempty" json:"default_currency,omitempty"`
	LeadSource      int        `bson:"lead_source,omitempty" json:"lead_source,omitempty"`
	Search          *SearchRec `bson:"search,omitempty" json:"search,omitempty"`
	Properties      []int64    `bson:"properties,omitempty" json:"properties,omitempty"`
}

// hostNames are the brand's domains, those of a brand stored with Domain only included.
func (b BrandRec) hostNames() []string {
	if len(b.Domains) > 0 || b.Domain == "" {
		return nonNil(b.Domains)
	}
	return []string{b.Domain}
}

func brandRec(b property.Brand) BrandRec {
	r := BrandRec{ID: b.ID, Name: b.Name, Domain: b.Domain(), Domains: slices.Clone(b.Domains), Origins: slices.Clone(b.Origins),
		DefaultLanguage: b.DefaultLanguage,
		DefaultCurrency: b.DefaultCurrency, LeadSource: b.LeadSource, Properties: slices.Clone(b.Properties)}
	if b.Search != nil {
		r.Search = &SearchRec{DefaultLimit: b.Search.DefaultLimit, PriceFilterEnable: b.Search.PriceFilterEnable, RateType: string(b.Search.RateType)}
	}
	return r
}

func brand(r BrandRec) property.Brand {
	b := property.Brand{ID: r.ID, Name: r.Name, Domains: r.hostNames(), Origins: r.Origins, DefaultLanguage: r.DefaultLanguage,
		DefaultCurrency: r.DefaultCurrency, LeadSource: r.LeadSource, Properties: nonNil(r.Properties)}
	if r.Search != nil {
		b.Search = &property.BrandSearch{DefaultLimit: r.Search.DefaultLimit, PriceFilterEnable: r.Search.PriceFilterEnable, RateType: property.RateType(r.Search.RateType)}
	}
	return b
}

// SearchRec are the website search settings.
type SearchRec struct {
	DefaultLimit      int    `bson:"default_limit,omitempty" json:"default_limit"`
	PriceFilterEnable *bool  `bson:"price_filter_enable,omitempty" json:"price_filter_enable"`
	RateType          string `bson:"rate_type,omitempty" json:"rate_type"`
}

// DefaultLeadSources are the lead sources of an account that has not set its own.
var DefaultLeadSources = each(property.DefaultLeadSources, func(l property.LeadSource) LeadSourceRec { return LeadSourceRec(l) })

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
	if r.ExchangeRates == nil {
		r.ExchangeRates = []RateRec{}
	}
	if r.Categories == nil {
		r.Categories = []GroupRec{}
	}
	if r.Tags == nil {
		r.Tags = []GroupRec{}
	}
	if r.Promotions == nil {
		r.Promotions = []PromotionRec{}
	}
	return r
}

// defaultLeadSource is the default lead source in force.
func (r SettingsRec) defaultLeadSource() int {
	return property.DefaultLeadSourceOf(r.DefaultLeadSource,
		each(r.LeadSources, func(l LeadSourceRec) property.LeadSource { return property.LeadSource(l) }))
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

// settingsRetries bounds how often a settings change is recomputed because another one
// landed between its read and its write.
const settingsRetries = 50

// ChangeSettings reads the account's settings, lets change compute what to change from
// those in force, and replaces the settings with the result only if they are still at the
// version read (mongostore.ReplaceIf, leased, so that this holds between processes on
// FerretDB too): of two changes computed from one version only one is written, and the
// other is computed again on top of it. No change is lost (a category created while
// another is, a rate set while a promotion is added), and each bumps the version by one.
// This process's changes of one account also wait for each other (DocLocks) rather than
// for the lease.
func (s *Store) ChangeSettings(ctx context.Context, account string, change func(property.Settings) (property.AccountSettings, error)) (property.Settings, error) {
	if err := s.refuseErased(ctx, account); err != nil {
		return property.Settings{}, err
	}
	agg := account + ":" + settingsAggregate
	unlock := s.locks.Lock(agg)
	defer unlock()
	// The intent is recorded before the first write, not before a change that writes
	// nothing (a deleted property no category lists).
	var in outbox.Intent
	began := false
	defer func() {
		if began {
			s.outbox.Done(in, nil)
		}
	}()
	for range settingsRetries {
		cur, found, err := s.readSettings(ctx, account)
		if err != nil {
			return property.Settings{}, err
		}
		a, err := change(cur.withDefaults().settings())
		if errors.Is(err, property.ErrUnchanged) {
			return cur.withDefaults().settings(), nil
		}
		if err != nil {
			return property.Settings{}, err
		}
		if !began {
			if in, err = s.outbox.Begin(ctx, agg); err != nil {
				return property.Settings{}, fmt.Errorf("record %s in the outbox: %w", SettingsUpdated, err)
			}
			began = true
		}
		if !found {
			// The first change of the account: a version 0 to replace conditionally.
			_, err := s.settings.InsertOne(ctx, SettingsRec{AccountID: account})
			if err != nil && !mongostore.IsDuplicate(err) {
				return property.Settings{}, fmt.Errorf("settings of %s: %w", account, err)
			}
		}
		next := cur.apply(a, s.now())
		took, err := mongostore.ReplaceIf(ctx, s.settings, account, bson.D{{Key: "version", Value: cur.Version}}, next)
		if err != nil {
			return property.Settings{}, fmt.Errorf("settings of %s: %w", account, err)
		}
		if took {
			return next.withDefaults().settings(), s.settingsErasedSince(ctx, account)
		}
		// Another change landed first: compute this one again on top of it.
	}
	return property.Settings{}, fmt.Errorf("settings of %s: still changing under this change after %d attempts", account, settingsRetries)
}

// settingsErasedSince undoes a settings write that an erasure of the account, begun before
// it, may not have seen: the settings are deleted again and the change refused (its event,
// loaded from the marker, is a tombstone).
func (s *Store) settingsErasedSince(ctx context.Context, account string) error {
	err := s.refuseErased(ctx, account)
	if errors.Is(err, property.ErrAccountErased) {
		_, _ = s.settings.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}})
	}
	return err
}

// readSettings reads the stored settings of account, no defaults filled in.
func (s *Store) readSettings(ctx context.Context, account string) (SettingsRec, bool, error) {
	var r SettingsRec
	err := s.settings.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return SettingsRec{AccountID: account}, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read the settings of %s: %w", account, err)
	}
	return r, true, nil
}

// apply returns the stored settings r with the fields a carries changed (the others keep
// their value), one version on, changed at now.
func (r SettingsRec) apply(a property.AccountSettings, now time.Time) SettingsRec {
	r.Version++
	r.UpdatedAt = now
	if a.Currency != nil {
		r.Currency = *a.Currency
	}
	if a.Timezone != nil {
		r.Timezone = *a.Timezone
	}
	if a.Languages != nil {
		r.Languages = slices.Clone(*a.Languages)
	}
	if a.LeadSources != nil {
		r.LeadSources = eachOf(*a.LeadSources, func(l property.LeadSource) LeadSourceRec { return LeadSourceRec(l) })
	}
	if a.Brands != nil {
		r.Brands = eachOf(*a.Brands, brandRec)
	}
	if a.WeekendNights != nil {
		r.WeekendNights = *a.WeekendNights
	}
	if a.Search != nil {
		if a.Search.DefaultLimit != nil {
			r.Search.DefaultLimit = *a.Search.DefaultLimit
		}
		if a.Search.PriceFilterEnable != nil {
			r.Search.PriceFilterEnable = ptrTo(*a.Search.PriceFilterEnable)
		}
		if a.Search.RateType != nil {
			r.Search.RateType = string(*a.Search.RateType)
		}
	}
	if a.DefaultLeadSource != nil {
		r.DefaultLeadSource = *a.DefaultLeadSource
	}
	if a.ExchangeRates != nil {
		r.ExchangeRates = eachOf(*a.ExchangeRates, func(x property.ExchangeRate) RateRec {
			return RateRec{Currency: x.Currency, Rate: x.Rate.String()}
		})
	}
	if a.Categories != nil {
		r.Categories = eachOf(*a.Categories, groupRec)
	}
	if a.Tags != nil {
		r.Tags = eachOf(*a.Tags, groupRec)
	}
	if a.Promotions != nil {
		r.Promotions = eachOf(*a.Promotions, promotionRec)
	}
	if a.LastBrandID != nil {
		r.LastBrandID = *a.LastBrandID
	}
	if a.ChannelMarkups != nil {
		r.ChannelMarkups = eachOf(*a.ChannelMarkups, markupRec)
	}
	return r
}

func ptrTo[T any](v T) *T { return &v }

// eachOf is each with an empty list for an empty one (never nil: the stored document has [],
// not null).
func eachOf[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, x := range in {
		out[i] = f(x)
	}
	return out
}

func groupRec(g property.Group) GroupRec {
	return GroupRec{ID: g.ID, Name: g.Name, ShowSearchEngine: g.ShowSearchEngine, Languages: nonNilMap(g.Languages), Properties: nonNil(g.Properties)}
}

func promotionRec(p property.Promotion) PromotionRec {
	return PromotionRec{Code: p.Code, Name: p.Name, Type: string(p.Type), Amount: p.Amount.String(),
		StartDate: p.Start.Format(time.DateOnly), EndDate: p.EndDate(), MinNights: p.MinNights, UsageLimit: p.UsageLimit, Properties: nonNil(p.Properties)}
}

// NextGroupID allocates the id of a new category or tag.
func (s *Store) NextGroupID(ctx context.Context, kind property.GroupKind) (int64, error) {
	seq := s.categoryIDs
	if kind == property.KindTag {
		seq = s.tagIDs
	}
	return seq.Next(ctx)
}

// LocateAll returns the property ids of the live properties of account among codes, in
// one read of the internal-code claims (a claim of a create still under way, or of a
// create that stopped, names no live property: those are checked on the properties).
func (s *Store) LocateAll(ctx context.Context, account string, codes []string) (map[string]int64, error) {
	ids := make(bson.A, len(codes))
	for i, c := range codes {
		ids[i] = codeID(account, c)
	}
	cur, err := s.codes.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, fmt.Errorf("look up internal codes: %w", err)
	}
	var claims []codeDoc
	if err := cur.All(ctx, &claims); err != nil {
		return nil, fmt.Errorf("look up internal codes: %w", err)
	}
	recs := make(bson.A, len(claims))
	for i, c := range claims {
		recs[i] = recordID(account, c.PropertyID)
	}
	cur, err = s.props.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: recs}}}, {Key: "deleted", Value: bson.D{{Key: "$ne", Value: true}}}},
		options.Find().SetProjection(bson.D{{Key: "property_id", Value: 1}, {Key: "internal_code", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("look up properties: %w", err)
	}
	var live []struct {
		PropertyID   int64  `bson:"property_id"`
		InternalCode string `bson:"internal_code"`
	}
	if err := cur.All(ctx, &live); err != nil {
		return nil, fmt.Errorf("look up properties: %w", err)
	}
	out := make(map[string]int64, len(live))
	for _, p := range live {
		out[p.InternalCode] = p.PropertyID
	}
	return out, nil
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
		out.Brands[i] = brand(b)
	}
	if r.Search.PriceFilterEnable != nil {
		out.Search.PriceFilterEnable = *r.Search.PriceFilterEnable
	}
	out.DefaultLeadSource, out.DefaultLeadSourceSet = r.defaultLeadSource(), r.DefaultLeadSource != 0
	out.ExchangeRates = eachOf(r.ExchangeRates, func(x RateRec) property.ExchangeRate {
		return property.ExchangeRate{Currency: x.Currency, Rate: decimal.RequireFromString(x.Rate)}
	})
	out.Categories, out.Tags = eachOf(r.Categories, group), eachOf(r.Tags, group)
	out.ChannelMarkups = eachOf(r.ChannelMarkups, markup)
	out.LastBrandID = r.LastBrandID
	out.Promotions = eachOf(r.Promotions, func(p PromotionRec) property.Promotion {
		x := property.Promotion{Code: p.Code, Name: p.Name, Type: property.PromotionType(p.Type), Amount: decimal.RequireFromString(p.Amount),
			MinNights: p.MinNights, UsageLimit: p.UsageLimit, Properties: nonNil(p.Properties)}
		x.Start, _ = time.Parse(time.DateOnly, p.StartDate)
		if p.EndDate != "" {
			x.End, _ = time.Parse(time.DateOnly, p.EndDate)
		}
		return x
	})
	return out
}

func group(g GroupRec) property.Group {
	return property.Group{ID: g.ID, Name: g.Name, ShowSearchEngine: g.ShowSearchEngine, Languages: nonNilMap(g.Languages), Properties: nonNil(g.Properties)}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
