package store

import (
	"strconv"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// What property-svc publishes: its records mapped to the event contract
// (libs/events/contract), never the stored documents themselves, so that the store may change
// its schema without changing what consumers read. Sealed secrets have no place in the
// contract, so they cannot leak into an event.

// Event types, one per kind of change: the contract's (docs/events.md).
const (
	PropertyCreated  = contract.PropertyCreated
	PropertyUpdated  = contract.PropertyUpdated
	PropertyDeleted  = contract.PropertyDeleted
	PhotosUpdated    = contract.PhotosUpdated
	PolicyUpdated    = contract.PolicyUpdated
	RatesUpdated     = contract.RatesUpdated
	MethodsUpdated   = contract.MethodsUpdated
	TaxesUpdated     = contract.TaxesUpdated
	ServicesUpdated  = contract.ServicesUpdated
	AmenitiesUpdated = contract.AmenitiesUpdated
	PricesUpdated    = contract.PricesUpdated
	SettingsUpdated  = contract.SettingsUpdated
	// The revenue controls' (revenue.go): ChangeRevenue records the type its change names.
	RatePlansUpdated    = contract.RatePlansUpdated
	RestrictionsUpdated = contract.RestrictionsUpdated
	MarkupsUpdated      = contract.MarkupsUpdated
)

// propertyMessages is the event of a property's current state.
func propertyMessages(rec Record) ([]events.Message, error) {
	v, err := events.Encode(eventSource, rec.LastChange, rec.ID, rec.UpdatedAt, propertyPayload(rec))
	if err != nil {
		return nil, err
	}
	return []events.Message{{Topic: events.TopicProperty, Key: events.Key(rec.AccountID, strconv.FormatInt(rec.PropertyID, 10)), Value: v}}, nil
}

// settingsMessage is the event of an account's current settings (defaults filled in).
func settingsMessage(st SettingsRec) (events.Message, error) {
	key := events.Key(st.AccountID, settingsAggregate)
	v, err := events.Encode(eventSource, SettingsUpdated, key, st.UpdatedAt, settingsPayload(st))
	if err != nil {
		return events.Message{}, err
	}
	return events.Message{Topic: events.TopicProperty, Key: key, Value: v}, nil
}

func propertyPayload(r Record) contract.Property {
	return contract.Property{AccountID: r.AccountID, PropertyID: r.PropertyID, InternalCode: r.InternalCode, Version: r.Version,
		Deleted: r.Deleted, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		// The flat sections have the contract's fields one for one: converting them keeps
		// them so (a field added to one and not the other stops the build).
		Content:   contract.Content(r.Content),
		Photos:    mapValues(r.Photos, func(p PhotoRec) contract.Photo { return contract.Photo(p) }),
		Policy:    policyPayload(r.Policy),
		Rates:     ratesPayload(r.Rates),
		Methods:   methodsPayload(r.Methods),
		Taxes:     each(r.Taxes, func(t TaxRec) contract.Tax { return contract.Tax(t) }),
		Services:  each(r.Services, servicePayload),
		Amenities: amenitiesPayload(r.Amenities),
		Prices:    mapValues(r.Prices, func(d DayRec) contract.DayPrice { return contract.DayPrice(d) }),
		// The link's token stays here; catalog-svc finds the property by its hash.
		ICalTokenSHA256: r.liveICalHash(),
		StandardPlan:    standardPlanPayload(r.StandardPlan),
		RatePlans:       each(r.RatePlans, ratePlanPayload),
		Restrictions:    each(r.Restrictions, restrictionPayload),
		ChannelMarkups:  each(r.ChannelMarkups, markupPayload),
	}
}

func policyPayload(p *PolicyRec) *contract.Policy {
	if p == nil {
		return nil
	}
	charge := func(c *ChargeRec) *contract.Charge {
		if c == nil {
			return nil
		}
		out := contract.Charge(*c)
		return &out
	}
	return &contract.Policy{PaymentType: p.PaymentType, DamageDeposit: charge(p.DamageDeposit), PaymentFull: charge(p.PaymentFull),
		FirstPayment: charge(p.FirstPayment), RemainingPayment: charge(p.RemainingPayment)}
}

func ratesPayload(r *RatesRec) *contract.Rates {
	if r == nil {
		return nil
	}
	return &contract.Rates{Rate: contract.Prices(r.Rate), MinimumStay: r.MinimumStay,
		LOS:     each(r.LOS, func(l LOSRec) contract.LOS { return contract.LOS(l) }),
		Setting: contract.Setting(r.Setting),
		Seasons: each(r.Seasons, func(s SeasonRec) contract.Season {
			return contract.Season{Name: s.Name, MinimumStay: s.MinimumStay, StartDate: s.StartDate, EndDate: s.EndDate,
				Prices: contract.Prices(s.Prices), AllowCheckin: s.AllowCheckin, AllowCheckout: s.AllowCheckout}
		})}
}

// methodsPayload keeps what may be shown of each payment method; its sealed secrets stay.
func methodsPayload(m *MethodsRec) *contract.Methods {
	if m == nil {
		return nil
	}
	return &contract.Methods{Gateways: each(m.Gateways, func(g GatewayRec) contract.Gateway {
		return contract.Gateway{Provider: g.Provider, Description: g.Description, Public: g.Public}
	})}
}

func servicePayload(s ServiceRec) contract.Service {
	return contract.Service{Name: s.Name, Amount: s.Amount, Type: s.Type, Applicable: s.Applicable, Unit: s.Unit, Def: s.Def,
		Taxes: each(s.Taxes, func(t ServiceTaxRec) contract.ServiceTax { return contract.ServiceTax(t) })}
}

func amenitiesPayload(a *AmenitiesRec) *contract.Amenities {
	if a == nil {
		return nil
	}
	return &contract.Amenities{BedOption: a.BedOption, UseIcon: a.UseIcon, Description: a.Description,
		Items: each(a.Items, func(x AmenityRec) contract.Amenity { return contract.Amenity(x) })}
}

func settingsPayload(s SettingsRec) contract.Settings {
	return contract.Settings{AccountID: s.AccountID, Version: s.Version, UpdatedAt: s.UpdatedAt, Currency: s.Currency,
		Timezone: s.Timezone, Languages: s.Languages,
		LeadSources:   each(s.LeadSources, func(l LeadSourceRec) contract.LeadSource { return contract.LeadSource(l) }),
		Brands:        each(s.Brands, brandPayload),
		Search:        contract.Search(s.Search),
		WeekendNights: s.WeekendNights, DefaultLeadSource: s.defaultLeadSource(),
		ExchangeRates: exchangeRates(s.ExchangeRates),
		Categories: each(s.Categories, func(g GroupRec) contract.Category {
			return contract.Category{ID: g.ID, Name: g.Name, ShowSearchEngine: g.ShowSearchEngine, Languages: nonNilMap(g.Languages), Properties: nonNil(g.Properties)}
		}),
		Tags: each(s.Tags, func(g GroupRec) contract.Tag {
			return contract.Tag{ID: g.ID, Name: g.Name, Languages: nonNilMap(g.Languages), Properties: nonNil(g.Properties)}
		}),
		Promotions: each(s.Promotions, func(p PromotionRec) contract.Promotion {
			return contract.Promotion{Code: p.Code, Name: p.Name, Type: p.Type, Amount: p.Amount, StartDate: p.StartDate, EndDate: p.EndDate,
				MinNights: p.MinNights, UsageLimit: p.UsageLimit, Properties: nonNil(p.Properties)}
		}),
		ChannelMarkups: each(s.ChannelMarkups, markupPayload)}
}

// exchangeRates is the contract's map of the rates (currency → decimal).
func exchangeRates(rates []RateRec) map[string]string {
	out := make(map[string]string, len(rates))
	for _, r := range rates {
		out[r.Currency] = r.Rate
	}
	return out
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// each maps a list, keeping nil apart from empty: the two read differently on the wire
// (null and []).
func each[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, x := range in {
		out[i] = f(x)
	}
	return out
}

// mapValues maps the values of a map, keeping nil apart from empty as each does.
func mapValues[T, U any](in map[string]T, f func(T) U) map[string]U {
	if in == nil {
		return nil
	}
	out := make(map[string]U, len(in))
	for k, x := range in {
		out[k] = f(x)
	}
	return out
}

// brandPayload is the contract's brand: Domain the first domain, for consumers of older
// events.
func brandPayload(b BrandRec) contract.Brand {
	hosts := b.hostNames()
	out := contract.Brand{ID: b.ID, Name: b.Name, Domains: hosts, Origins: b.Origins, DefaultLanguage: b.DefaultLanguage, DefaultCurrency: b.DefaultCurrency,
		LeadSource: b.LeadSource, Properties: b.Properties}
	if len(hosts) > 0 {
		out.Domain = hosts[0]
	}
	if b.Search != nil {
		sc := contract.Search(*b.Search)
		out.Search = &sc
	}
	return out
}
