package property_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// memRepo keeps one account's settings in memory, as the store's ChangeSettings does
// (change called on the settings in force, its result merged), and knows properties V1
// (id 11), V2 (12) and V3 (13). The store's own contract tests run the same on a real
// server; these test the domain's rules.
type memRepo struct {
	property.Repository
	mu      sync.Mutex
	st      property.Settings
	nextID  int64
	codes   map[string]int64
	deleted []string
	// revs are the properties' rate plans, restrictions, prices and markups by internal
	// code, and types the event types of their changes, in order (revenue_test.go).
	revs  map[string]*property.Revenue
	types []string
}

func newMemRepo() *memRepo {
	return &memRepo{st: property.Settings{Account: "1001", Currency: "USD", Languages: []string{"en"}, LeadSources: property.DefaultLeadSources,
		DefaultLeadSource: 1, ExchangeRates: []property.ExchangeRate{}, Categories: []property.Group{}, Tags: []property.Group{},
		Promotions: []property.Promotion{}}, codes: map[string]int64{"V1": 11, "V2": 12, "V3": 13}}
}

func (m *memRepo) ChangeSettings(_ context.Context, _ string, change func(property.Settings) (property.AccountSettings, error)) (property.Settings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := change(m.st)
	if errors.Is(err, property.ErrUnchanged) {
		return m.st, nil
	}
	if err != nil {
		return property.Settings{}, err
	}
	st := m.st
	st.Version++
	if a.Currency != nil {
		st.Currency = *a.Currency
	}
	if a.LeadSources != nil {
		st.LeadSources = *a.LeadSources
		if len(st.LeadSources) == 0 {
			st.LeadSources = property.DefaultLeadSources
		}
	}
	if a.DefaultLeadSource != nil {
		st.DefaultLeadSource, st.DefaultLeadSourceSet = *a.DefaultLeadSource, true
	}
	if !st.DefaultLeadSourceSet {
		st.DefaultLeadSource = property.DefaultLeadSourceOf(0, st.LeadSources)
	}
	for _, f := range []struct {
		to   *[]property.Group
		from *[]property.Group
	}{{&st.Categories, a.Categories}, {&st.Tags, a.Tags}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	if a.ExchangeRates != nil {
		st.ExchangeRates = *a.ExchangeRates
	}
	if a.Promotions != nil {
		st.Promotions = *a.Promotions
	}
	if a.Languages != nil {
		st.Languages = *a.Languages
	}
	if a.Brands != nil {
		st.Brands = *a.Brands
	}
	if a.LastBrandID != nil {
		st.LastBrandID = *a.LastBrandID
	}
	if a.ChannelMarkups != nil {
		st.ChannelMarkups = *a.ChannelMarkups
	}
	m.st = st
	return st, nil
}

func (m *memRepo) NextGroupID(context.Context, property.GroupKind) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	return m.nextID, nil
}

func (m *memRepo) LocateAll(_ context.Context, _ string, codes []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, c := range codes {
		if id, ok := m.codes[c]; ok {
			out[c] = id
		}
	}
	return out, nil
}

func (m *memRepo) Locate(_ context.Context, _ string, ref property.PropertyRef) (int64, error) {
	if id, ok := m.codes[ref.InternalCode]; ok {
		return id, nil
	}
	return 0, property.ErrNotFound
}

func (m *memRepo) Delete(_ context.Context, _ string, code string) error {
	delete(m.codes, code)
	m.deleted = append(m.deleted, code)
	return nil
}

func newMemProperties() (*property.Properties, *memRepo) {
	repo := newMemRepo()
	return property.NewProperties(repo, photo.NewFetcher(photo.Config{})), repo
}

// putBody sends an account-settings body through the decoder and the domain.
func putBody(t *testing.T, props *property.Properties, body string) (property.Settings, error) {
	t.Helper()
	a, err := property.DecodeAccountSettings([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.PutSettings(context.Background(), "1001", a)
}

func TestSettingsRulesAgainstTheSettingsInForce(t *testing.T) {
	for _, r := range []struct {
		name, before, body, want string
	}{
		{"a rate", "", `{"exchange_rates":{"EUR":"0.92"}}`, ""},
		{"a rate for the account's currency", "", `{"exchange_rates":{"EUR":"0.92","usd":"1"}}`,
			"exchange_rates.USD: is the account's own currency (USD): only other currencies have a rate"},
		{"a rate for the currency sent with it", "", `{"currency":"EUR","exchange_rates":{"EUR":"1","USD":"1.08"}}`,
			"exchange_rates.EUR: is the account's own currency (EUR): only other currencies have a rate"},
		{"the currency changed with new rates", `{"exchange_rates":{"EUR":"0.92"}}`, `{"currency":"EUR","exchange_rates":{"USD":"1.087"}}`, ""},
		{"the currency changed, the rates kept", `{"exchange_rates":{"EUR":"0.92"}}`, `{"currency":"EUR"}`,
			"exchange_rates: are rates from USD: send the rates from EUR with the new currency (or {} to clear them)"},
		{"the currency changed, the rates cleared", `{"exchange_rates":{"EUR":"0.92"}}`, `{"currency":"GBP","exchange_rates":{}}`, ""},
		{"the currency changed, no rates", "", `{"currency":"GBP"}`, ""},
		{"a default lead source", "", `{"default_lead_source":3}`, ""},
		{"an unknown default lead source", "", `{"default_lead_source":7}`,
			"default_lead_source: must be the id of one of the account's lead sources (1, 2, 3, 4, 5, 6)"},
		{"a default among the lead sources sent", "", `{"lead_sources":[{"id":7,"name":"Fair"}],"default_lead_source":7}`, ""},
		{"lead sources without the chosen default", `{"default_lead_source":3}`, `{"lead_sources":[{"id":1,"name":"Web"}]}`,
			"lead_sources: must keep the default lead source 3, or come with a new default_lead_source"},
		{"lead sources without the implicit default", "", `{"lead_sources":[{"id":7,"name":"Fair"}]}`, ""},
		{"the defaults restored keep the default", `{"default_lead_source":4}`, `{"lead_sources":[]}`, ""},
	} {
		t.Run(r.name, func(t *testing.T) {
			props, repo := newMemProperties()
			if r.before != "" {
				if _, err := putBody(t, props, r.before); err != nil {
					t.Fatal(err)
				}
			}
			before := repo.st
			_, err := putBody(t, props, r.body)
			if got := strings.Join(violations(t, err), "\n"); got != r.want {
				t.Fatalf("got %q, want %q", got, r.want)
			}
			if err != nil && repo.st.Version != before.Version {
				t.Error("a refused change was written")
			}
		})
	}

	props, repo := newMemProperties()
	st, err := putBody(t, props, `{"lead_sources":[{"id":7,"name":"Fair"},{"id":8,"name":"Web"}]}`)
	if err != nil || st.DefaultLeadSource != 7 || st.DefaultLeadSourceSet {
		t.Errorf("no lead source 1: the default in force is the first, got %d (%v)", st.DefaultLeadSource, err)
	}
	st, err = putBody(t, props, `{"exchange_rates":{"gbp":"0.8600","EUR":0.92}}`)
	want := []property.ExchangeRate{{Currency: "EUR", Rate: decimal.RequireFromString("0.92")}, {Currency: "GBP", Rate: decimal.RequireFromString("0.86")}}
	if err != nil || !slices.EqualFunc(st.ExchangeRates, want, func(a, b property.ExchangeRate) bool { return a.Currency == b.Currency && a.Rate.Equal(b.Rate) }) {
		t.Errorf("rates: %v, %v", st.ExchangeRates, err)
	}
	if st, _ = putBody(t, props, `{"exchange_rates":{"CHF":"0.95"}}`); len(st.ExchangeRates) != 1 {
		t.Errorf("the map replaces the previous one: %v", st.ExchangeRates)
	}
	if st, _ = putBody(t, props, `{"exchange_rates":[]}`); len(st.ExchangeRates) != 0 || repo.st.ExchangeRates == nil {
		t.Errorf("[] clears: %v", st.ExchangeRates)
	}
}

func group(t *testing.T, props *property.Properties, body string) (int64, error) {
	t.Helper()
	req, err := property.DecodeGroup([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.ChangeGroup(context.Background(), "1001", req)
}

func TestGroups(t *testing.T) {
	props, repo := newMemProperties()
	beach, err := group(t, props, `{"action":"create","category":{"name":"Beach","languages":{"it":"Mare"},"properties":["V2","V1"]}}`)
	must(t, err)
	sea, err := group(t, props, `{"action":"create","tag":{"name":"Beach","show_search_engine":false,"properties":["V1"]}}`)
	must(t, err)
	lake, err := group(t, props, `{"action":"create","category":{"name":"Lake"}}`)
	must(t, err)
	g := repo.st.Categories[0]
	if g.ID != beach || g.Name != "Beach" || !g.ShowSearchEngine || g.Languages["it"] != "Mare" || !slices.Equal(g.Properties, []int64{12, 11}) {
		t.Errorf("category as created (shown by default, properties in the order sent): %+v", g)
	}
	if tg := repo.st.Tags[0]; tg.ID != sea || tg.ShowSearchEngine || !slices.Equal(tg.Properties, []int64{11}) {
		t.Errorf("tag (a tag and a category may share a name): %+v", tg)
	}

	for _, r := range []struct {
		name, body string
		want       error
		violation  string
	}{
		{"a name taken in another case", `{"action":"create","category":{"name":"BEACH"}}`, property.ErrNameTaken, ""},
		{"a rename onto another's name", `{"action":"update","category":{"id":` + itoa(lake) + `,"name":"beach"}}`, property.ErrNameTaken, ""},
		{"unknown codes", `{"action":"create","category":{"name":"Hills","properties":["V1","NOPE","GONE"]}}`, nil,
			"category.properties: no property of this account has internal_code \"NOPE\"\ncategory.properties: no property of this account has internal_code \"GONE\""},
		{"update of an unknown id", `{"action":"update","category":{"id":999,"name":"X"}}`, property.ErrGroupNotFound, ""},
		{"delete of an unknown id", `{"action":"delete","tag":{"id":999}}`, property.ErrGroupNotFound, ""},
		{"a tag id is no category id", `{"action":"delete","category":{"id":` + itoa(sea) + `}}`, property.ErrGroupNotFound, ""},
	} {
		t.Run(r.name, func(t *testing.T) {
			before := repo.st.Version
			_, err := group(t, props, r.body)
			switch {
			case r.violation != "":
				if got := strings.Join(violations(t, err), "\n"); got != r.violation {
					t.Errorf("got %q, want %q", got, r.violation)
				}
			case !errors.Is(err, r.want):
				t.Errorf("got %v, want %v", err, r.want)
			}
			if err != nil && repo.st.Version != before {
				t.Error("a refused change was written")
			}
		})
	}

	// An update changes what it carries; its own name in another case is no conflict.
	_, err = group(t, props, `{"action":"update","category":{"id":`+itoa(beach)+`,"name":"BEACH","show_search_engine":"0","properties":["V3"]}}`)
	must(t, err)
	if g := repo.st.Categories[0]; g.Name != "BEACH" || g.ShowSearchEngine || g.Languages["it"] != "Mare" || !slices.Equal(g.Properties, []int64{13}) {
		t.Errorf("category after an update: %+v", g)
	}
	// A deleted property leaves every category and tag; the rest stay as they are.
	_, err = group(t, props, `{"action":"update","category":{"id":`+itoa(beach)+`,"properties":["V3","V1"]}}`)
	must(t, err)
	must(t, props.Delete(context.Background(), "1001", "V1"))
	if !slices.Equal(repo.st.Categories[0].Properties, []int64{13}) || len(repo.st.Tags[0].Properties) != 0 {
		t.Errorf("after deleting V1: %+v %+v", repo.st.Categories[0], repo.st.Tags[0])
	}
	v := repo.st.Version
	must(t, props.Delete(context.Background(), "1001", "V2"))
	if repo.st.Version != v {
		t.Error("deleting a property no group lists changed the settings")
	}
	_, err = group(t, props, `{"action":"delete","category":{"id":`+itoa(beach)+`}}`)
	must(t, err)
	if len(repo.st.Categories) != 1 || repo.st.Categories[0].Name != "Lake" {
		t.Errorf("after a delete: %+v", repo.st.Categories)
	}
}

func TestGroupLimits(t *testing.T) {
	props, _ := newMemProperties()
	for i := range 100 {
		if _, err := group(t, props, `{"action":"create","category":{"name":"C`+itoa(int64(i))+`"}}`); err != nil {
			t.Fatal(err)
		}
	}
	_, err := group(t, props, `{"action":"create","category":{"name":"One too many"}}`)
	if got := strings.Join(violations(t, err), "\n"); got != "category: the account already has 100, the most it may have" {
		t.Errorf("101st category: %q", got)
	}
}

func promotion(t *testing.T, props *property.Properties, body string) (string, error) {
	t.Helper()
	req, err := property.DecodePromotion([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return props.ChangePromotion(context.Background(), "1001", req)
}

func TestPromotions(t *testing.T) {
	props, repo := newMemProperties()
	code, err := promotion(t, props, `{"action":"create","promotion":{"code":"Summer","name":"Summer","type":"percent","amount":10,"start_date":"2027-06-01","properties":["V2"]}}`)
	if err != nil || code != "Summer" {
		t.Fatalf("create: %q, %v", code, err)
	}
	p := repo.st.Promotions[0]
	if p.Type != property.PercentOff || !p.Amount.Equal(decimal.NewFromInt(10)) || !p.End.IsZero() || !slices.Equal(p.Properties, []int64{12}) {
		t.Errorf("promotion as created: %+v", p)
	}
	_, err = promotion(t, props, `{"action":"create","promotion":{"code":"SUMMER","name":"x","type":"flat","amount":5,"start_date":"2027-06-01"}}`)
	if !errors.Is(err, property.ErrPromotionTaken) {
		t.Errorf("a code taken in another case: %v", err)
	}
	code, err = promotion(t, props, `{"action":"update","promotion":{"code":"SUMMER","name":"Summer flat","type":"flat","amount":"25.50","start_date":"2027-06-01","end_date":"2027-06-30"}}`)
	if err != nil || code != "Summer" {
		t.Fatalf("update by the code in another case answers the stored code: %q, %v", code, err)
	}
	if p := repo.st.Promotions[0]; p.Type != property.FlatOff || p.End.Format("2006-01-02") != "2027-06-30" || len(p.Properties) != 0 {
		t.Errorf("the update replaces the promotion whole: %+v", p)
	}
	_, err = promotion(t, props, `{"action":"create","promotion":{"code":"X1","name":"x","type":"flat","amount":5,"start_date":"2027-06-01","properties":["NOPE"]}}`)
	if got := strings.Join(violations(t, err), "\n"); got != `promotion.properties: no property of this account has internal_code "NOPE"` {
		t.Errorf("unknown property: %q", got)
	}
	// A deleted property stays in a promotion: without it the promotion would apply to all.
	_, err = promotion(t, props, `{"action":"create","promotion":{"code":"V3ONLY","name":"x","type":"flat","amount":5,"start_date":"2027-06-01","properties":["V3"]}}`)
	must(t, err)
	must(t, props.Delete(context.Background(), "1001", "V3"))
	if !slices.Equal(repo.st.Promotions[1].Properties, []int64{13}) {
		t.Errorf("promotion after its property was deleted: %+v", repo.st.Promotions[1])
	}
	for _, body := range []string{`{"action":"update","promotion":{"code":"NOPE","name":"x","type":"flat","amount":5,"start_date":"2027-06-01"}}`,
		`{"action":"delete","promotion":{"code":"NOPE"}}`} {
		if _, err := promotion(t, props, body); !errors.Is(err, property.ErrPromotionNotFound) {
			t.Errorf("%s: %v", body, err)
		}
	}
	if code, err = promotion(t, props, `{"action":"delete","promotion":{"code":"summer"}}`); err != nil || code != "Summer" || len(repo.st.Promotions) != 1 {
		t.Errorf("delete: %q %v %+v", code, err, repo.st.Promotions)
	}
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
