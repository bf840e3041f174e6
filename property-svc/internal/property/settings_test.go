package property_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const settingsExample = `{
	"currency": "eur",
	"timezone": "Europe/Rome",
	"languages": ["en", "it", "de-CH"],
	"lead_sources": [{"id": 1, "name": "Website"}, {"id": "2", "name": "Phone"}],
	"brands": [{"id": 1, "name": "Sea Homes", "domain": "Sea-Homes.example.com"}, {"id": 2, "name": "Mountain Homes"}],
	"search": {"default_limit": 10, "price_filter_enable": "1", "rate_type": "Weekly"}
}`

func decodeSettings(body []byte) error {
	_, err := property.DecodeAccountSettings(body)
	return err
}

func TestDecodeAccountSettings(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("everything optional", "", set("currency", del), set("timezone", del), set("languages", del),
			set("lead_sources", del), set("brands", del), set("search", del)),
		tc("currency 2 letters", "currency: must be exactly 3 characters", set("currency", "EU")),
		tc("currency unknown", "currency: must be an ISO 4217 currency code", set("currency", "ABC")),
		tc("currency XXX", "currency: must be an ISO 4217 currency code", set("currency", "XXX")),
		tc("currency blank", "currency: must not be blank", set("currency", "")),
		tc("timezone unknown", "timezone: must be an IANA time zone name such as Europe/Rome", set("timezone", "Nowhere/City")),
		tc("timezone blank", "timezone: must not be blank", set("timezone", " ")),
		tc("languages unknown tag", `languages: must contain BCP 47 language tags only ("xx" is not)`, set("languages[1]", "xx")),
		tc("languages repeated in another case", "languages: lists en twice", set("languages[1]", "EN")),
		tc("languages blank item", "languages[0]: must not be empty", set("languages[0]", "")),
		tc("languages not an array", "languages: must be an array", set("languages", "en,it")),
		tc("languages 51 items", "languages: must have at most 50 items", set("languages", many(51, `"en"`))),
		tc("lead_sources id missing", "lead_sources[0].id: is required", set("lead_sources[0].id", del)),
		tc("lead_sources id 0", "lead_sources[0].id: must be between 1 and 2147483647", set("lead_sources[0].id", 0)),
		tc("lead_sources id repeated", "lead_sources[1].id: duplicates lead_sources[0]", set("lead_sources[1].id", 1)),
		tc("lead_sources name missing", "lead_sources[1].name: is required", set("lead_sources[1].name", del)),
		tc("lead_sources name 101 chars", "lead_sources[1].name: must be at most 100 characters", set("lead_sources[1].name", chars(101))),
		tc("lead_sources 101 items", "lead_sources: must have at most 100 items", set("lead_sources", many(101, `{"name":"x"}`))),
		tc("brands id repeated", "brands[1].id: duplicates brands[0]", set("brands[1].id", "1")),
		tc("brands name blank", "brands[0].name: is required", set("brands[0].name", " ")),
		tc("brands domain not a host", "brands[0].domain: must be a host name such as example.com", set("brands[0].domain", "not a host")),
		tc("brands domain single label", "brands[0].domain: must be a host name such as example.com", set("brands[0].domain", "localhost")),
		tc("brands domain label starts with dash", "brands[0].domain: must be a host name such as example.com", set("brands[0].domain", "-bad.example.com")),
		tc("brands domain with scheme", "brands[0].domain: must be a host name such as example.com", set("brands[0].domain", "https://example.com")),
		tc("brands domain 254 chars", "brands[0].domain: must be at most 253 characters", set("brands[0].domain", chars(250)+".com")),
		tc("search default_limit 0", "search.default_limit: must be between 1 and 100", set("search.default_limit", 0)),
		tc("search default_limit 101", "search.default_limit: must be between 1 and 100", set("search.default_limit", 101)),
		tc("search price_filter_enable not boolean", "search.price_filter_enable: must be a boolean", set("search.price_filter_enable", "on")),
		tc("search rate_type unknown", "search.rate_type: must be one of daily, weekly, monthly", set("search.rate_type", "yearly")),
		tc("search not an object", "search: must be an object", set("search", 10)),
		tc("default_lead_source 2", "", set("default_lead_source", "2")),
		tc("default_lead_source 0", "default_lead_source: must be between 1 and 2147483647", set("default_lead_source", 0)),
		tc("default_lead_source fraction", "default_lead_source: must be a whole number", set("default_lead_source", 1.5)),
		tc("exchange_rates valid", "", set("exchange_rates", obj(`{"GBP":"0.86","usd":1.0875,"JPY":"163.1234567891"}`))),
		tc("exchange_rates empty clears", "", set("exchange_rates", obj(`{}`))),
		tc("exchange_rates [] clears", "", set("exchange_rates", []any{})),
		tc("exchange_rates unknown code", "exchange_rates.XYZ: must be keyed by an ISO 4217 currency code", set("exchange_rates.XYZ", "1.5")),
		tc("exchange_rates XXX", "exchange_rates.XXX: must be keyed by an ISO 4217 currency code", set("exchange_rates.XXX", "1.5")),
		tc("exchange_rates a name", "exchange_rates.Dollar: must be keyed by an ISO 4217 currency code", set("exchange_rates.Dollar", "1.5")),
		tc("exchange_rates 0", "exchange_rates.GBP: must be greater than 0", set("exchange_rates.GBP", "0")),
		tc("exchange_rates negative", "exchange_rates.GBP: must be greater than 0", set("exchange_rates.GBP", -0.8)),
		tc("exchange_rates 10 decimals", "", set("exchange_rates.GBP", "0.1234567891")),
		tc("exchange_rates 11 decimals", "exchange_rates.GBP: must have at most 10 decimal places", set("exchange_rates.GBP", "0.12345678912")),
		tc("exchange_rates above a billion", "exchange_rates.GBP: must be at most 1000000000", set("exchange_rates.GBP", "1000000001")),
		tc("exchange_rates blank", "exchange_rates.GBP: is required", set("exchange_rates.GBP", "")),
		tc("exchange_rates not a number", "exchange_rates.GBP: must be a number", set("exchange_rates.GBP", "0,86")),
		tc("exchange_rates one code twice", "exchange_rates.gbp: names GBP twice (also as GBP)", set("exchange_rates", obj(`{"GBP":"0.86","gbp":"0.87"}`))),
		tc("exchange_rates not an object", "exchange_rates: must be an object", set("exchange_rates", "GBP=0.86")),
		tc("exchange_rates 201 currencies", "exchange_rates: must have at most 200 currencies", set("exchange_rates", obj(manyRates(201)))),
	}
	check(t, settingsExample, rows, decodeSettings)
}

// manyRates is an exchange_rates object of n distinct codes (not all real: the count is
// checked first).
func manyRates(n int) string {
	out := "{"
	for i := range n {
		if i > 0 {
			out += ","
		}
		out += `"` + string(rune('A'+i/26%26)) + string(rune('A'+i%26)) + string(rune('A'+i/676)) + `":1`
	}
	return out + "}"
}

func TestDecodeAccountSettingsValues(t *testing.T) {
	s, err := property.DecodeAccountSettings([]byte(settingsExample))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case *s.Currency != "EUR" || *s.Timezone != "Europe/Rome":
		t.Errorf("currency/timezone: %v %v", *s.Currency, *s.Timezone)
	case !slices.Equal(*s.Languages, []string{"en", "it", "de-CH"}):
		t.Errorf("languages: %v", *s.Languages)
	case !slices.Equal(*s.LeadSources, []property.LeadSource{{ID: 1, Name: "Website"}, {ID: 2, Name: "Phone"}}):
		t.Errorf("lead sources: %v", *s.LeadSources)
	case !reflect.DeepEqual(*s.Brands, []property.Brand{{ID: 1, Name: "Sea Homes", Domains: []string{"sea-homes.example.com"}}, {ID: 2, Name: "Mountain Homes", Domains: []string{}}}):
		t.Errorf("brands: %v", *s.Brands)
	case *s.Search.DefaultLimit != 10 || !*s.Search.PriceFilterEnable || *s.Search.RateType != property.RateWeekly:
		t.Errorf("search: %+v", s.Search)
	}
}
