package property_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/together"
)

const brandCreate = `{"action":"create","brand":{"name":"Aurora Villas","domains":["Aurora.example","www.aurora.example"],
	"origins":["HTTPS://Aurora.example:443/","http://localhost:3000"],
	"default_language":"en","default_currency":"usd","lead_source":2,
	"search":{"default_limit":12,"rate_type":"weekly","price_filter_enable":true},"properties":["V1","V2"]}}`

func decodeBrand(body []byte) error {
	_, err := property.DecodeBrand(body)
	return err
}

func TestDecodeBrand(t *testing.T) {
	rows := []row{
		tc("valid create", ""),
		tc("action missing", "action: is required", set("action", del)),
		tc("action unknown", "action: must be one of create, update, delete", set("action", "rename")),
		tc("brand missing", "brand: is required", set("brand", del)),
		tc("brand not an object", "brand: must be an object", set("brand", "Aurora")),
		tc("name missing on create", "brand.name: is required", set("brand.name", del)),
		tc("name 100 chars", "", set("brand.name", chars(100))),
		tc("name 101 chars", "brand.name: must be at most 100 characters", set("brand.name", chars(101))),
		tc("domains absent", "", set("brand.domains", del)),
		tc("domains empty", "", set("brand.domains", []any{})),
		tc("domains not a list", "brand.domains: must be an array", set("brand.domains", "aurora.example")),
		tc("domain without a dot", `brand.domains: must contain host names such as example.com ("aurora" is not)`, set("brand.domains[0]", "aurora")),
		tc("domain with a scheme", `brand.domains: must contain host names such as example.com ("https://aurora.example" is not)`, set("brand.domains[0]", "https://aurora.example")),
		tc("domain twice, in another case", "brand.domains: lists www.aurora.example twice", set("brand.domains[0]", "WWW.aurora.example")),
		tc("domains 21", "brand.domains: must have at most 20 items", set("brand.domains", many(21, `"a.example"`))),
		tc("origins absent", "", set("brand.origins", del)),
		tc("origins empty", "", set("brand.origins", []any{})),
		tc("origins not a list", "brand.origins: must be an array", set("brand.origins", "https://aurora.example")),
		tc("origins 20", "", set("brand.origins", distinctOrigins(20))),
		tc("origins 21", "brand.origins: must have at most 20 items", set("brand.origins", distinctOrigins(21))),
		tc("origin not a string", "brand.origins[1]: must be a string", set("brand.origins[1]", obj(`{"host":"a.example"}`))),
		tc("origin blank", "brand.origins[1]: must not be empty", set("brand.origins[1]", " ")),
		tc("origin 301 chars", "brand.origins[1]: must be at most 300 characters", set("brand.origins[1]", "https://"+chars(293))),
		tc("origin without a scheme", `brand.origins[1]: `+originRule+`: "aurora.example" must start with http:// or https://`,
			set("brand.origins[1]", "aurora.example")),
		tc("origin ftp", `brand.origins[1]: `+originRule+`: "ftp://aurora.example" must start with http:// or https://`,
			set("brand.origins[1]", "ftp://aurora.example")),
		tc("origin with a path", `brand.origins[0]: `+originRule+`: "https://aurora.example/book" has a path`,
			set("brand.origins[0]", "https://aurora.example/book")),
		tc("origin with a query", `brand.origins[0]: `+originRule+`: "https://aurora.example/?a=1" has a query`,
			set("brand.origins[0]", "https://aurora.example/?a=1")),
		tc("origin with a fragment", `brand.origins[0]: `+originRule+`: "https://aurora.example#b" has a fragment`,
			set("brand.origins[0]", "https://aurora.example#b")),
		tc("origin with user info", `brand.origins[0]: `+originRule+`: "https://me@aurora.example" has user info`,
			set("brand.origins[0]", "https://me@aurora.example")),
		tc("origin without a host", `brand.origins[0]: `+originRule+`: "https://:8080" has no valid host (a host name, IDNs in xn-- form, an IPv4 address or an [IPv6] address)`,
			set("brand.origins[0]", "https://:8080")),
		tc("origin with port 0", `brand.origins[0]: `+originRule+`: "https://aurora.example:0" has no valid port (1-65535)`,
			set("brand.origins[0]", "https://aurora.example:0")),
		tc("origin twice once normalised", "brand.origins[1]: lists https://aurora.example twice", set("brand.origins[1]", "https://AURORA.example")),
		tc("two bad origins, each named", `brand.origins[0]: `+originRule+`: "a" must start with http:// or https://`+"\n"+
			`brand.origins[1]: `+originRule+`: "b" must start with http:// or https://`, set("brand.origins", []any{"a", "b"})),
		tc("default_language absent", "", set("brand.default_language", del)),
		tc("default_language blank clears", "", set("brand.default_language", "")),
		tc("default_language not a tag", `brand.default_language: must be a BCP 47 language tag ("english!" is not)`, set("brand.default_language", "english!")),
		tc("default_currency blank clears", "", set("brand.default_currency", "")),
		tc("default_currency unknown", "brand.default_currency: must be an ISO 4217 currency code", set("brand.default_currency", "ABC")),
		tc("default_currency 4 letters", "brand.default_currency: must be at most 3 characters", set("brand.default_currency", "EURO")),
		tc("lead_source 0 clears", "", set("brand.lead_source", 0)),
		tc("lead_source negative", "brand.lead_source: must be between 0 and 2147483647", set("brand.lead_source", -1)),
		tc("lead_source not a number", "brand.lead_source: must be a number", set("brand.lead_source", "phone")),
		tc("search default_limit 0", "brand.search.default_limit: must be between 1 and 100", set("brand.search.default_limit", 0)),
		tc("search rate_type unknown", "brand.search.rate_type: must be one of daily, weekly, monthly", set("brand.search.rate_type", "hourly")),
		tc("search price_filter_enable not a boolean", "brand.search.price_filter_enable: must be a boolean", set("brand.search.price_filter_enable", "maybe")),
		tc("search {} clears", "", set("brand.search", obj(`{}`))),
		tc("properties code twice", `brand.properties: lists "V1" twice`, set("brand.properties[1]", "V1")),
		tc("properties code 11 chars", "brand.properties[0]: must be at most 10 characters", set("brand.properties[0]", chars(11))),
		tc("update needs id", "brand.id: is required", set("action", "update")),
		tc("update id 0", "brand.id: must be between 1 and 2147483647", set("action", "update"), set("brand.id", 0)),
		tc("update name may be absent", "", set("action", "update"), set("brand.id", 3), set("brand.name", del)),
		tc("update name blank", "brand.name: must not be blank", set("action", "update"), set("brand.id", 3), set("brand.name", "")),
		tc("delete reads only the id", "", set("action", "delete"), set("brand", obj(`{"id":3,"name":""}`))),
		tc("delete without id", "brand.id: is required", set("action", "delete"), set("brand", obj(`{}`))),
	}
	check(t, brandCreate, rows, decodeBrand)
}

func TestDecodeBrandValues(t *testing.T) {
	req, err := property.DecodeBrand([]byte(brandCreate))
	if err != nil {
		t.Fatal(err)
	}
	if *req.Name != "Aurora Villas" || !slices.Equal(*req.Domains, []string{"aurora.example", "www.aurora.example"}) ||
		!slices.Equal(*req.Origins, []string{"https://aurora.example", "http://localhost:3000"}) ||
		*req.DefaultLanguage != "en" || *req.DefaultCurrency != "USD" || *req.LeadSource != 2 ||
		req.Search.DefaultLimit != 12 || req.Search.RateType != property.RateWeekly || !*req.Search.PriceFilterEnable ||
		!slices.Equal(*req.Properties, []string{"V1", "V2"}) {
		t.Fatalf("decoded: %+v", req)
	}
}

// TestDecodeBrandRateTypeAnyCase: a brand's rate_type is read in any case, as the account's is.
func TestDecodeBrandRateTypeAnyCase(t *testing.T) {
	req, err := property.DecodeBrand([]byte(`{"action":"create","brand":{"name":"B","search":{"rate_type":"MONTHLY"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.Search == nil || req.Search.RateType != property.RateMonthly {
		t.Fatalf("search: %+v", req.Search)
	}
}

// originRule is the rule an invalid origin breaks, as refusals state it.
const originRule = "must be http:// or https://, a host and an optional port, nothing else"

// distinctOrigins are n different origins.
func distinctOrigins(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("http://localhost:%d", 3000+i)
	}
	return out
}

// TestDecodeBrandOriginsClear: [] clears a brand's origins; absent keeps them (nil).
func TestDecodeBrandOriginsClear(t *testing.T) {
	req, err := property.DecodeBrand([]byte(`{"action":"update","brand":{"id":1,"origins":[]}}`))
	if err != nil || req.Origins == nil || len(*req.Origins) != 0 {
		t.Fatalf("origins []: %v %v", req.Origins, err)
	}
	req, err = property.DecodeBrand([]byte(`{"action":"update","brand":{"id":1}}`))
	if err != nil || req.Origins != nil {
		t.Fatalf("origins absent: %v %v", req.Origins, err)
	}
}

func changeBrand(t *testing.T, props *property.Properties, body string) (int, error) {
	t.Helper()
	req, err := property.DecodeBrand([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.ChangeBrand(context.Background(), "1001", req)
}

// TestBrandRules: the rules between a brand and the account's settings, and between brands.
func TestBrandRules(t *testing.T) {
	for _, r := range []struct {
		name, settings, body, want string
	}{
		{"valid", "", `{"action":"create","brand":{"name":"B","domains":["b.example"],"default_language":"en","lead_source":2,"properties":["V1"]}}`, ""},
		{"a language the account lacks", "", `{"action":"create","brand":{"name":"B","default_language":"it"}}`,
			"brand.default_language: must be one of the account's languages (en)"},
		{"a language the account has", `{"languages":["en","it"]}`, `{"action":"create","brand":{"name":"B","default_language":"it"}}`, ""},
		{"the account's currency", "", `{"action":"create","brand":{"name":"B","default_currency":"USD"}}`, ""},
		{"a currency without a rate", "", `{"action":"create","brand":{"name":"B","default_currency":"EUR"}}`,
			"brand.default_currency: must be the account's currency (USD) or one it has an exchange rate for"},
		{"a currency with a rate", `{"exchange_rates":{"EUR":"0.92"}}`, `{"action":"create","brand":{"name":"B","default_currency":"EUR"}}`, ""},
		{"an unknown lead source", "", `{"action":"create","brand":{"name":"B","lead_source":9}}`,
			"brand.lead_source: must be the id of one of the account's lead sources (1, 2, 3, 4, 5, 6)"},
		{"an unknown property", "", `{"action":"create","brand":{"name":"B","properties":["V9"]}}`,
			`brand.properties: no property of this account has internal_code "V9"`},
		{"a domain of another brand", `{"brands":[{"id":4,"name":"A","domain":"a.example"}]}`,
			`{"action":"create","brand":{"name":"B","domains":["a.example"]}}`, "brand.domains: a.example is already a domain of brand 4: a domain belongs to one brand"},
		{"a domain of another brand with www.", `{"brands":[{"id":4,"name":"A","domain":"a.example"}]}`,
			`{"action":"create","brand":{"name":"B","domains":["www.a.example"]}}`, "brand.domains: www.a.example is already a domain of brand 4"},
		{"one brand with and without www.", "", `{"action":"create","brand":{"name":"B","domains":["b.example","www.b.example"]}}`, ""},
		{"update keeps its own domain", `{"brands":[{"id":4,"name":"A","domain":"a.example"}]}`,
			`{"action":"update","brand":{"id":4,"domains":["a.example","www.a.example"]}}`, ""},
		{"origins of its own", "", `{"action":"create","brand":{"name":"B","domains":["b.example"],"origins":["https://b.example","http://localhost:3000"]}}`, ""},
		{"an origin of another brand's domain", `{"brands":[{"id":4,"name":"A","domain":"a.example"}]}`,
			`{"action":"create","brand":{"name":"B","origins":["http://b.example","https://www.a.example"]}}`,
			"brand.origins[1]: https://www.a.example is an origin of brand 4: an origin belongs to one brand"},
		{"the same origin over http is another", `{"brands":[{"id":4,"name":"A","domain":"a.example"}]}`,
			`{"action":"create","brand":{"name":"B","origins":["http://a.example"]}}`, ""},
		{"update keeps its own origins", `{"brands":[{"id":4,"name":"A","domain":"a.example"}]}`,
			`{"action":"update","brand":{"id":4,"origins":["https://a.example","https://shop.a.example"]}}`, ""},
		{"update of an unknown brand", "", `{"action":"update","brand":{"id":4,"name":"A"}}`, "brand not found"},
		{"delete of an unknown brand", "", `{"action":"delete","brand":{"id":4}}`, "brand not found"},
	} {
		t.Run(r.name, func(t *testing.T) {
			props, _ := newMemProperties()
			if r.settings != "" {
				if _, err := putBody(t, props, r.settings); err != nil {
					t.Fatal(err)
				}
			}
			_, err := changeBrand(t, props, r.body)
			if got := errString(err); !containsWant(got, r.want) {
				t.Fatalf("got %q, want %q", got, r.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func containsWant(got, want string) bool {
	if want == "" {
		return got == ""
	}
	return strings.Contains(got, want)
}

// TestBrandLife: create, update and delete; ids are allocated one past the largest; an
// update keeps what it does not send; account-settings' brands list keeps what only
// account-brand sets.
func TestBrandLife(t *testing.T) {
	props, repo := newMemProperties()
	id, err := changeBrand(t, props, `{"action":"create","brand":{"name":"A","domains":["a.example"],"lead_source":2,"properties":["V1","V2"]}}`)
	if err != nil || id != 1 {
		t.Fatalf("create: %d %v", id, err)
	}
	id2, err := changeBrand(t, props, `{"action":"create","brand":{"name":"B","domains":["b.example"],"search":{"default_limit":5},"properties":["V3"]}}`)
	if err != nil || id2 != 2 {
		t.Fatalf("create: %d %v", id2, err)
	}
	if _, err := changeBrand(t, props, `{"action":"update","brand":{"id":1,"name":"A2"}}`); err != nil {
		t.Fatal(err)
	}
	a := repo.st.Brands[0]
	if a.Name != "A2" || a.LeadSource != 2 || !slices.Equal(a.Domains, []string{"a.example"}) || !slices.Equal(a.Properties, []int64{11, 12}) {
		t.Fatalf("updated: %+v", a)
	}
	// account-settings sends the list as it shows it: {id, name, domain}.
	if _, err := putBody(t, props, `{"brands":[{"id":1,"name":"A3","domain":"a.example"},{"id":2,"name":"B","domain":"c.example"},{"id":7,"name":"New"}]}`); err != nil {
		t.Fatal(err)
	}
	st := repo.st.Brands
	if len(st) != 3 || st[0].Name != "A3" || st[0].LeadSource != 2 || !slices.Equal(st[0].Properties, []int64{11, 12}) ||
		!slices.Equal(st[1].Domains, []string{"c.example"}) || st[1].Search.DefaultLimit != 5 || st[2].ID != 7 {
		t.Fatalf("after account-settings: %+v", st)
	}
	// account-settings' list: one domain in two brands is refused.
	_, err = putBody(t, props, `{"brands":[{"id":1,"name":"A3","domain":"a.example"},{"id":2,"name":"B","domain":"www.a.example"}]}`)
	if got := errString(err); !strings.Contains(got, "brands.2.domains: www.a.example is already a domain of brand 1") {
		t.Fatalf("one domain in two brands through account-settings: %v", err)
	}
	// A settings change that would orphan a brand's lead source is refused.
	_, err = putBody(t, props, `{"lead_sources":[{"id":1,"name":"Website"}]}`)
	if got := errString(err); !strings.Contains(got, "brands.1.lead_source: must be the id of one of the account's lead sources (1)") {
		t.Fatalf("orphaned lead source: %v", err)
	}
	id8, err := changeBrand(t, props, `{"action":"create","brand":{"name":"C"}}`)
	if err != nil || id8 != 8 {
		t.Fatalf("create after id 7: %d %v", id8, err)
	}
	if _, err := changeBrand(t, props, `{"action":"delete","brand":{"id":1}}`); err != nil {
		t.Fatal(err)
	}
	if len(repo.st.Brands) != 3 || repo.st.Brands[0].ID != 2 {
		t.Fatalf("after delete: %+v", repo.st.Brands)
	}
	if _, err := changeBrand(t, props, `{"action":"delete","brand":{"id":1}}`); !errors.Is(err, property.ErrBrandNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	// The largest brand deleted: its id is not given again (its bookings keep it).
	if _, err := changeBrand(t, props, `{"action":"delete","brand":{"id":8}}`); err != nil {
		t.Fatal(err)
	}
	if id, err := changeBrand(t, props, `{"action":"create","brand":{"name":"D"}}`); err != nil || id != 9 {
		t.Fatalf("create after deleting 8: %d %v", id, err)
	}
	// Nor the id of a brand account-settings made and dropped.
	if _, err := putBody(t, props, `{"brands":[{"id":2,"name":"B"},{"id":30,"name":"Thirty"}]}`); err != nil {
		t.Fatal(err)
	}
	if _, err := putBody(t, props, `{"brands":[{"id":2,"name":"B"}]}`); err != nil {
		t.Fatal(err)
	}
	if id, err := changeBrand(t, props, `{"action":"create","brand":{"name":"E"}}`); err != nil || id != 31 {
		t.Fatalf("create after account-settings dropped 30: %d %v", id, err)
	}
}

// TestBrandOrigins: an origin a brand allows (its origins, else two per domain) is allowed
// by no other brand; a clash is named on the brand changed; absent keeps a brand's origins,
// [] clears them, and account-settings' list keeps them.
func TestBrandOrigins(t *testing.T) {
	props, repo := newMemProperties()
	mustBrand := func(body string) {
		t.Helper()
		if _, err := changeBrand(t, props, body); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	refused := func(body, want string) {
		t.Helper()
		if _, err := changeBrand(t, props, body); !strings.Contains(errString(err), want) || want == "" {
			t.Fatalf("%s: %v, want %q", body, err, want)
		}
	}
	mustBrand(`{"action":"create","brand":{"name":"A","origins":["https://a.example","http://localhost:3000"]}}`)
	mustBrand(`{"action":"create","brand":{"name":"B","domains":["b.example"]}}`)
	refused(`{"action":"create","brand":{"name":"C","origins":["https://c.example","HTTP://localhost:3000"]}}`,
		"brand.origins[1]: http://localhost:3000 is an origin of brand 1: an origin belongs to one brand")
	refused(`{"action":"create","brand":{"name":"C","domains":["a.example"]}}`,
		"brand.domains: https://a.example is an origin of brand 1: a brand that lists no origins is allowed from https://<domain> and https://www.<domain>, and an origin belongs to one brand")
	// Brand 1 is first in the list, but the change is its own: the refusal names it.
	refused(`{"action":"update","brand":{"id":1,"origins":["https://www.b.example"]}}`,
		"brand.origins[0]: https://www.b.example is an origin of brand 2: an origin belongs to one brand")
	refused(`{"action":"update","brand":{"id":2,"origins":["https://b.example","https://a.example"]}}`,
		"brand.origins[1]: https://a.example is an origin of brand 1")
	// An update without origins keeps them.
	mustBrand(`{"action":"update","brand":{"id":1,"name":"A2"}}`)
	if got := repo.st.Brands[0].Origins; !slices.Equal(got, []string{"https://a.example", "http://localhost:3000"}) {
		t.Fatalf("origins after an update without them: %q", got)
	}
	// account-settings' list, sent back as it shows it, keeps them.
	if _, err := putBody(t, props, `{"brands":[{"id":1,"name":"A3"},{"id":2,"name":"B","domain":"b.example"}]}`); err != nil {
		t.Fatal(err)
	}
	if got := repo.st.Brands[0].Origins; !slices.Equal(got, []string{"https://a.example", "http://localhost:3000"}) {
		t.Fatalf("origins after account-settings: %q", got)
	}
	// account-settings giving brand 2 a domain brand 1 has an origin of is refused, named on
	// the later brand.
	_, err := putBody(t, props, `{"brands":[{"id":1,"name":"A3"},{"id":2,"name":"B","domain":"a.example"}]}`)
	if !strings.Contains(errString(err), "brands.2.domains: https://a.example is an origin of brand 1") {
		t.Fatalf("a clash through account-settings: %v", err)
	}
	// [] clears them: brand 1 then allows nothing (it has no domain), and brand 2 may take
	// a.example.
	mustBrand(`{"action":"update","brand":{"id":1,"origins":[]}}`)
	if got := repo.st.Brands[0]; len(got.Origins) != 0 || len(got.AllowedOrigins()) != 0 {
		t.Fatalf("origins after []: %+v", got)
	}
	mustBrand(`{"action":"update","brand":{"id":2,"domains":["a.example"]}}`)
	if got := repo.st.Brands[1].AllowedOrigins(); !slices.Equal(got, []string{"https://a.example", "https://www.a.example"}) {
		t.Fatalf("brand 2's origins from its domain: %q", got)
	}
	// A brand listing origins gives up its domains' defaults: another brand may list them.
	mustBrand(`{"action":"update","brand":{"id":2,"origins":["http://localhost:3000"]}}`)
	mustBrand(`{"action":"update","brand":{"id":1,"origins":["https://www.a.example"]}}`)
}

// TestConcurrentBrandCreates: brands created at once each get their own id, none lost.
func TestConcurrentBrandCreates(t *testing.T) {
	props, repo := newMemProperties()
	const n = 40
	ids := make([]int, n)
	together.Run(n, func(i int) {
		req, err := property.DecodeBrand([]byte(`{"action":"create","brand":{"name":"B"}}`))
		if err != nil {
			t.Error(err)
			return
		}
		id, err := props.ChangeBrand(context.Background(), "1001", req)
		if err != nil {
			t.Error(err)
		}
		ids[i] = id
	})
	slices.Sort(ids)
	if len(slices.Compact(ids)) != n || len(repo.st.Brands) != n {
		t.Fatalf("ids %v, %d brands", ids, len(repo.st.Brands))
	}
}

// TestOlderBrandsKeepWorking: brands stored before the domain rule (one domain in two
// brands) do not make a settings change that leaves the brands alone fail.
func TestOlderBrandsKeepWorking(t *testing.T) {
	props, repo := newMemProperties()
	repo.st.Brands = []property.Brand{{ID: 1, Name: "A", Domains: []string{"a.example"}}, {ID: 2, Name: "B", Domains: []string{"a.example"}}}
	if _, err := putBody(t, props, `{"timezone":"Europe/Rome","lead_sources":[{"id":1,"name":"Web"}]}`); err != nil {
		t.Fatalf("a settings change beside older brands: %v", err)
	}
}
