package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/together"
)

// The account-level resources kept in the settings document (categories, tags, promotions,
// exchange rates, the default lead source) through the domain service over a real store:
// what is stored, what the relay publishes, and that concurrent changes all land.

func (h *harness) props() *property.Properties {
	return property.NewProperties(h.st, photo.NewFetcher(photo.Config{}))
}

// publishedSettings is the settings event the relay would publish now.
func (h *harness) publishedSettings(t *testing.T, account string) contract.Settings {
	t.Helper()
	msgs, err := h.st.Snapshot(ctx, account+":"+settingsAggregate)
	must(t, err)
	var s contract.Settings
	_, err = events.Decode(msgs[0].Value, &s)
	must(t, err)
	return s
}

func decodedGroup(t *testing.T, body string) property.GroupRequest {
	t.Helper()
	req, err := property.DecodeGroup([]byte(body))
	must(t, err)
	return req
}

func decodedPromotion(t *testing.T, body string) property.PromotionRequest {
	t.Helper()
	req, err := property.DecodePromotion([]byte(body))
	must(t, err)
	return req
}

func TestGroupsPromotionsAndRatesArePublished(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	p := h.props()
	v1, v2 := h.create(t, acct, "V1"), h.create(t, acct, "V2")
	cat, err := p.ChangeGroup(ctx, acct, decodedGroup(t, `{"action":"create","category":{"name":"Beach","show_search_engine":0,"languages":{"it":"Mare"},"properties":["V2","V1"]}}`))
	must(t, err)
	tag, err := p.ChangeGroup(ctx, acct, decodedGroup(t, `{"action":"create","tag":{"name":"Pets","properties":["V1"]}}`))
	must(t, err)
	_, err = p.ChangePromotion(ctx, acct, decodedPromotion(t, `{"action":"create","promotion":{"code":"SUMMER","name":"Summer","type":"percent","amount":"12.5","start_date":"2027-06-01","min_nights":3,"usage_limit":50,"properties":["V2"]}}`))
	must(t, err)
	a, err := property.DecodeAccountSettings([]byte(`{"currency":"EUR","exchange_rates":{"usd":"1.0875","GBP":"0.86"},"default_lead_source":3}`))
	must(t, err)
	st, err := p.PutSettings(ctx, acct, a)
	must(t, err)
	if st.Version != 4 || st.DefaultLeadSource != 3 || len(st.Categories) != 1 || len(st.Tags) != 1 || len(st.Promotions) != 1 || len(st.ExchangeRates) != 2 {
		t.Errorf("settings in force: %+v", st)
	}

	pub := h.publishedSettings(t, acct)
	same(t, "published categories", pub.Categories, []contract.Category{{ID: cat, Name: "Beach", ShowSearchEngine: false,
		Languages: map[string]string{"it": "Mare"}, Properties: []int64{v2, v1}}})
	same(t, "published tags", pub.Tags, []contract.Tag{{ID: tag, Name: "Pets", Languages: map[string]string{}, Properties: []int64{v1}}})
	same(t, "published promotions", pub.Promotions, []contract.Promotion{{Code: "SUMMER", Name: "Summer", Type: "percent", Amount: "12.5",
		StartDate: "2027-06-01", EndDate: "", MinNights: 3, UsageLimit: 50, Properties: []int64{v2}}})
	same(t, "published rates", pub.ExchangeRates, map[string]string{"GBP": "0.86", "USD": "1.0875"})
	if pub.DefaultLeadSource != 3 || pub.Version != 4 || pub.Currency != "EUR" {
		t.Errorf("published settings: %+v", pub)
	}

	// A deleted property leaves the category and the tag, not the promotion.
	must(t, p.Delete(ctx, acct, "V2"))
	pub = h.publishedSettings(t, acct)
	if !slices.Equal(pub.Categories[0].Properties, []int64{v1}) || !slices.Equal(pub.Promotions[0].Properties, []int64{v2}) || pub.Version != 5 {
		t.Errorf("after deleting V2: %+v", pub)
	}
	// A deleted property is an unknown code.
	_, err = p.ChangeGroup(ctx, acct, decodedGroup(t, `{"action":"update","tag":{"id":`+fmt.Sprint(tag)+`,"properties":["V2"]}}`))
	var fe interface{ Error() string }
	if err == nil || !errors.As(err, &fe) || h.publishedSettings(t, acct).Version != 5 {
		t.Errorf("a deleted property assigned: %v", err)
	}

	// Another account sees none of it, and cannot use the codes.
	other := newAccount()
	if pub := h.publishedSettings(t, other); len(pub.Categories)+len(pub.Tags)+len(pub.Promotions)+len(pub.ExchangeRates) != 0 || pub.DefaultLeadSource != 1 {
		t.Errorf("another account's settings: %+v", pub)
	}
	_, err = h.props().ChangeGroup(ctx, other, decodedGroup(t, `{"action":"create","category":{"name":"Beach","properties":["V1"]}}`))
	if err == nil {
		t.Error("another account assigned V1")
	}
	_, err = h.props().ChangeGroup(ctx, other, decodedGroup(t, `{"action":"delete","category":{"id":`+fmt.Sprint(cat)+`}}`))
	if !errors.Is(err, property.ErrGroupNotFound) {
		t.Errorf("another account deleted a category: %v", err)
	}
}

// TestConcurrentSettingsChanges: 40 categories, 20 tags, 20 promotions and 20 rate changes
// of one account at once: every one lands, each bumps the version once, ids are unique.
func TestConcurrentSettingsChanges(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	h.create(t, acct, "V1")
	p := h.props()
	const cats, tags, promos, rates = 40, 20, 20, 20
	var changes []func() error
	run := func(f func() error) { changes = append(changes, f) }
	for i := range cats {
		run(func() error {
			_, err := p.ChangeGroup(ctx, acct, decodedGroup(t, fmt.Sprintf(`{"action":"create","category":{"name":"Cat %d","properties":["V1"]}}`, i)))
			return err
		})
	}
	for i := range tags {
		run(func() error {
			_, err := p.ChangeGroup(ctx, acct, decodedGroup(t, fmt.Sprintf(`{"action":"create","tag":{"name":"Tag %d"}}`, i)))
			return err
		})
	}
	for i := range promos {
		run(func() error {
			_, err := p.ChangePromotion(ctx, acct, decodedPromotion(t, fmt.Sprintf(`{"action":"create","promotion":{"code":"P%d","name":"x","type":"flat","amount":5,"start_date":"2027-01-01"}}`, i)))
			return err
		})
	}
	for i := range rates {
		run(func() error {
			a, err := property.DecodeAccountSettings([]byte(fmt.Sprintf(`{"exchange_rates":{"EUR":"0.%d"}}`, 10+i)))
			if err == nil {
				_, err = p.PutSettings(ctx, acct, a)
			}
			return err
		})
	}
	together.Run(len(changes), func(i int) {
		if err := changes[i](); err != nil {
			t.Error(err)
		}
	})
	pub := h.publishedSettings(t, acct)
	if len(pub.Categories) != cats || len(pub.Tags) != tags || len(pub.Promotions) != promos || len(pub.ExchangeRates) != 1 {
		t.Errorf("%d categories, %d tags, %d promotions, %d rates; want %d, %d, %d, 1", len(pub.Categories), len(pub.Tags), len(pub.Promotions), len(pub.ExchangeRates), cats, tags, promos)
	}
	if pub.Version != cats+tags+promos+rates {
		t.Errorf("version %d, want %d (one per change)", pub.Version, cats+tags+promos+rates)
	}
	ids := map[int64]bool{}
	for _, g := range pub.Categories {
		if ids[g.ID] || len(g.Properties) != 1 {
			t.Errorf("category %+v repeats an id or lost its property", g)
		}
		ids[g.ID] = true
	}
}

// TestConcurrentCreatesWithOneName: of 20 creates of one category name (in several
// cases) exactly one succeeds; the others are ErrNameTaken.
func TestConcurrentCreatesWithOneName(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	p := h.props()
	const n = 20
	errs := make([]error, n)
	together.Run(n, func(i int) {
		name := []string{"Beach", "BEACH", "beach"}[i%3]
		_, errs[i] = p.ChangeGroup(ctx, acct, decodedGroup(t, `{"action":"create","category":{"name":"`+name+`"}}`))
	})
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, property.ErrNameTaken):
			t.Errorf("create: %v", err)
		}
	}
	if pub := h.publishedSettings(t, acct); won != 1 || len(pub.Categories) != 1 || pub.Version != 1 {
		t.Errorf("%d creates won, %d categories stored at version %d; want 1, 1, 1", won, len(pub.Categories), pub.Version)
	}
}

// TestFeaturedIsPublished: isfeatured is stored and published; absent on update keeps it.
func TestFeaturedIsPublished(t *testing.T) {
	h, acct := newHarness(t), newAccount()
	v := villa("F1")
	v.IsFeatured = bp(true)
	pid, err := h.repo.Create(ctx, acct, v, 0)
	must(t, err)
	if !h.state(t, acct, pid).Content.IsFeatured {
		t.Error("isfeatured true not published")
	}
	_, err = h.repo.UpdateContent(ctx, acct, villa("F1"))
	must(t, err)
	if !h.state(t, acct, pid).Content.IsFeatured {
		t.Error("an update without isfeatured cleared it")
	}
	v.IsFeatured = bp(false)
	_, err = h.repo.UpdateContent(ctx, acct, v)
	must(t, err)
	if h.state(t, acct, pid).Content.IsFeatured {
		t.Error("isfeatured false not stored")
	}
	if h.state(t, acct, h.create(t, acct, "F2")).Content.IsFeatured {
		t.Error("a property created without isfeatured is featured")
	}
}

// TestConcurrentSettingsChangesOfTwoProcesses: two stores (two replicas of property-svc,
// each with its own document locks) create 15 categories each in one account at once: the
// version-conditional, leased replace loses none, on FerretDB as on MongoDB.
func TestConcurrentSettingsChangesOfTwoProcesses(t *testing.T) {
	acct := newAccount()
	h1, h2 := newHarness(t), newHarness(t)
	const each = 15
	together.Run(2*each, func(i int) {
		p := h1.props()
		if i%2 == 1 {
			p = h2.props()
		}
		if _, err := p.ChangeGroup(ctx, acct, decodedGroup(t, fmt.Sprintf(`{"action":"create","category":{"name":"Cat %d"}}`, i))); err != nil {
			t.Error(err)
		}
	})
	if pub := h1.publishedSettings(t, acct); len(pub.Categories) != 2*each || pub.Version != 2*each {
		t.Errorf("%d categories at version %d, want %d at %d", len(pub.Categories), pub.Version, 2*each, 2*each)
	}
}
