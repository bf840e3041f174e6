package e2e

// property-svc's part of issue #11 through edge: categories and tags
// (/api/property-category), promotion codes (/api/property-promotion), exchange rates and
// the default lead source (account-settings), isfeatured, and setprices_minnights with
// pricingArray as a JSON array and as a PHP form list. What property-svc publishes is read
// from Kafka (the account's settings event), as booking-svc and catalog-svc read it.

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// propSettings waits for the account's settings event that match accepts and returns it.
func propSettings(t *testing.T, acc account, what string, match func(s contract.Settings) bool) contract.Settings {
	t.Helper()
	key := acc.AccountID + ":settings"
	r := keyReader(t, events.TopicProperty, key)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), viewsWithin)
	defer cancel()
	var last contract.Settings
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("no settings event with %s (last: %+v): %v", what, last, err)
		}
		if string(m.Key) != key {
			continue
		}
		var s contract.Settings // fresh: decoding into last would merge its maps
		e, err := events.Decode(m.Value, &s)
		last = s
		if err != nil || e.Type() != contract.SettingsUpdated {
			t.Fatalf("settings event %s: %v", m.Value, err)
		}
		if match(last) {
			return last
		}
	}
}

// propForm sends an interface A request as a PHP form body.
func (acc account) propForm(t *testing.T, resource string, form url.Values) response {
	t.Helper()
	h := acc.AHeaders()
	h["Content-Type"] = "application/x-www-form-urlencoded"
	return do(t, http.MethodPost, "/api/"+resource, h, form.Encode())
}

// propData decodes interface A's success and returns data's member name.
func propData(t *testing.T, r response, name string) string {
	t.Helper()
	r.status(t, http.StatusOK)
	var out struct {
		Code int               `json:"code"`
		Data map[string]string `json:"data"`
	}
	r.decode(t, &out)
	if out.Code != 200 || out.Data[name] == "" {
		t.Fatalf("no data.%s in %s", name, r.Body)
	}
	return out.Data[name]
}

// propWant asserts an interface A error of HTTP code whose message contains msg.
func propWant(t *testing.T, r response, code int, msg string) {
	t.Helper()
	r.status(t, code)
	if e := r.aError(t); !strings.Contains(e.ErrorMessage, msg) {
		t.Fatalf("error %q, want it to contain %q", e.ErrorMessage, msg)
	}
}

// with is a copy of o with the members of more.
func with(o, more obj) obj {
	out := obj{}
	for k, v := range o {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func id64(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

func TestCompatPropertyCategoriesAndTags(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	v1, v2 := id64(t, createProperty(t, acc, "CT1")), id64(t, createProperty(t, acc, "CT2"))

	cat := id64(t, propData(t, acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": "Beach houses",
		"languages": obj{"it": "Case al mare"}, "properties": []string{"CT2", "CT1"}}}), "category_id"))
	// A tag from a PHP form body: bracket notation, every value a string.
	tag := id64(t, propData(t, acc.propForm(t, "property-category", url.Values{"action": {"create"}, "tag[name]": {"Pet friendly"},
		"tag[languages][it]": {"Animali ammessi"}, "tag[properties][]": {"CT1"}}), "tag_id"))
	spare := id64(t, propData(t, acc.a(t, "property-category", obj{"action": "create", "tag": obj{"name": "Spare"}}), "tag_id"))

	// Rules, each a clear error that changes nothing.
	acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": "Hills", "properties": []string{"CT1", "NOPE"}}}).
		wantViolation(t, "category.properties", `no property of this account has internal_code "NOPE"`)
	acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": strings.Repeat("x", 101)}}).
		wantViolation(t, "category.name", "must be at most 100 characters")
	acc.a(t, "property-category", obj{"action": "update", "category": obj{"name": "No id"}}).wantViolation(t, "category.id", "is required")
	acc.a(t, "property-category", obj{"action": "create"}).wantViolation(t, "category", "is required")
	propWant(t, acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": "BEACH HOUSES"}}), http.StatusConflict, `"BEACH HOUSES" is already used`)
	propWant(t, acc.a(t, "property-category", obj{"action": "update", "category": obj{"id": 999999999, "name": "X"}}), http.StatusNotFound, "category 999999999 does not exist")
	propWant(t, other.a(t, "property-category", obj{"action": "delete", "category": obj{"id": cat}}), http.StatusNotFound, "does not exist")
	other.a(t, "property-category", obj{"action": "create", "category": obj{"name": "Theirs", "properties": []string{"CT1"}}}).
		wantViolation(t, "category.properties", `internal_code "CT1"`)

	// Update: hidden from search forms, one property; delete the spare tag.
	if got := id64(t, propData(t, acc.a(t, "property-category", obj{"action": "update", "category": obj{"id": strconv.FormatInt(cat, 10),
		"name": "Beach", "show_search_engine": "0", "properties": []string{"CT1", "CT2"}}}), "category_id")); got != cat {
		t.Fatalf("update answered category %d, want %d", got, cat)
	}
	if got := id64(t, propData(t, acc.a(t, "property-category", obj{"action": "delete", "tag": obj{"id": spare}}), "tag_id")); got != spare {
		t.Fatalf("delete answered tag %d", got)
	}

	s := propSettings(t, acc, "the category updated and the spare tag deleted", func(s contract.Settings) bool {
		return len(s.Categories) == 1 && s.Categories[0].Name == "Beach" && len(s.Tags) == 1
	})
	c, tg := s.Categories[0], s.Tags[0]
	if c.ID != cat || c.ShowSearchEngine || c.Languages["it"] != "Case al mare" || !slices.Equal(c.Properties, []int64{v1, v2}) {
		t.Errorf("published category %+v", c)
	}
	if tg.ID != tag || tg.Name != "Pet friendly" || tg.Languages["it"] != "Animali ammessi" || !slices.Equal(tg.Properties, []int64{v1}) {
		t.Errorf("published tag %+v", tg)
	}

	// A deleted property leaves its category and tag.
	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "CT1"}}).status(t, http.StatusOK)
	propSettings(t, acc, "CT1 gone from the groups", func(s contract.Settings) bool {
		return len(s.Categories) == 1 && slices.Equal(s.Categories[0].Properties, []int64{v2}) && len(s.Tags) == 1 && len(s.Tags[0].Properties) == 0
	})

	// catalog-svc serves the tags in default-config's tags_list once its part reads them.
	var cfg map[string]any
	acc.read(t, "default-config", "", &cfg)
	if _, ok := cfg["tags_list"]; !ok {
		t.Log("default-config has no tags_list yet: catalog-svc's part has not landed; checked through the published settings only")
		return
	}
	eventually(t, "tags_list lists the tag", func() bool {
		var cfg struct {
			Tags []struct {
				ID   any    `json:"id"`
				Name string `json:"name"`
			} `json:"tags_list"`
		}
		acc.read(t, "default-config", "", &cfg)
		return len(cfg.Tags) == 1 && cfg.Tags[0].Name == "Pet friendly"
	})
}

func TestCompatPropertyPromotion(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	createProperty(t, acc, "PR1")
	promo := obj{"code": "Summer_27", "name": "Summer", "type": "percent", "amount": "15", "start_date": day(10), "end_date": day(100),
		"min_nights": 3, "usage_limit": 20, "properties": []string{"PR1"}}
	if code := propData(t, acc.a(t, "property-promotion", obj{"action": "create", "promotion": promo}), "promotion_code"); code != "Summer_27" {
		t.Fatalf("create answered %q", code)
	}
	propWant(t, acc.a(t, "property-promotion", obj{"action": "create", "promotion": with(promo, obj{"code": "SUMMER_27"})}),
		http.StatusConflict, `"SUMMER_27" is already used`)
	acc.a(t, "property-promotion", obj{"action": "create", "promotion": with(promo, obj{"code": "P2", "amount": 99.5})}).
		wantViolation(t, "promotion.amount", "must be at most 99")
	acc.a(t, "property-promotion", obj{"action": "create", "promotion": with(promo, obj{"code": "P2", "end_date": day(5)})}).
		wantViolation(t, "promotion.end_date", "must not be before start_date")
	acc.a(t, "property-promotion", obj{"action": "create", "promotion": with(promo, obj{"code": "no spaces"})}).
		wantViolation(t, "promotion.code", "must contain only")
	acc.a(t, "property-promotion", obj{"action": "create", "promotion": with(promo, obj{"code": "P2", "properties": []string{"NOPE"}})}).
		wantViolation(t, "promotion.properties", `internal_code "NOPE"`)
	propWant(t, acc.a(t, "property-promotion", obj{"action": "delete", "promotion": obj{"code": "NOPE"}}), http.StatusNotFound, `"NOPE" does not exist`)

	// Update by the code in another case: a flat, open-ended promotion for every property.
	if code := propData(t, acc.a(t, "property-promotion", obj{"action": "update", "promotion": obj{"code": "summer_27", "name": "Summer flat",
		"type": "flat", "amount": "25.50", "start_date": day(10)}}), "promotion_code"); code != "Summer_27" {
		t.Fatalf("update answered %q, want the stored spelling", code)
	}
	propData(t, acc.a(t, "property-promotion", obj{"action": "create", "promotion": with(promo, obj{"code": "GONE"})}), "promotion_code")
	propData(t, acc.a(t, "property-promotion", obj{"action": "delete", "promotion": obj{"code": "gone"}}), "promotion_code")
	s := propSettings(t, acc, "the promotion updated", func(s contract.Settings) bool {
		return len(s.Promotions) == 1 && s.Promotions[0].Type == "flat"
	})
	want := contract.Promotion{Code: "Summer_27", Name: "Summer flat", Type: "flat", Amount: "25.5", StartDate: day(10), Properties: []int64{}}
	if p := s.Promotions[0]; p.Code != want.Code || p.Name != want.Name || p.Amount != want.Amount || p.StartDate != want.StartDate ||
		p.EndDate != "" || p.MinNights != 0 || p.UsageLimit != 0 || len(p.Properties) != 0 {
		t.Errorf("published promotion %+v, want %+v", p, want)
	}
}

func TestCompatAccountRatesAndLeadSource(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	r := acc.a(t, "account-settings", obj{"exchange_rates": obj{"eur": "0.92", "GBP": 0.79}, "default_lead_source": "3"})
	r.status(t, http.StatusOK)
	var out struct {
		Data struct {
			DefaultLeadSource int               `json:"default_lead_source"`
			ExchangeRates     map[string]string `json:"exchange_rates"`
		} `json:"data"`
	}
	r.decode(t, &out)
	if out.Data.DefaultLeadSource != 3 || out.Data.ExchangeRates["EUR"] != "0.92" || out.Data.ExchangeRates["GBP"] != "0.79" || len(out.Data.ExchangeRates) != 2 {
		t.Fatalf("settings answer %s", r.Body)
	}
	acc.a(t, "account-settings", obj{"exchange_rates": obj{"XYZ": "1.5"}}).wantViolation(t, "exchange_rates.XYZ", "ISO 4217")
	acc.a(t, "account-settings", obj{"exchange_rates": obj{"USD": "1"}}).wantViolation(t, "exchange_rates.USD", "the account's own currency")
	acc.a(t, "account-settings", obj{"exchange_rates": obj{"EUR": "0.12345678901"}}).wantViolation(t, "exchange_rates.EUR", "at most 10 decimal places")
	acc.a(t, "account-settings", obj{"exchange_rates": obj{"EUR": "0"}}).wantViolation(t, "exchange_rates.EUR", "greater than 0")
	acc.a(t, "account-settings", obj{"currency": "EUR"}).wantViolation(t, "exchange_rates", "are rates from USD")
	acc.a(t, "account-settings", obj{"default_lead_source": 99}).wantViolation(t, "default_lead_source", "one of the account's lead sources")
	acc.a(t, "account-settings", obj{"lead_sources": []obj{{"id": 1, "name": "Web"}}}).wantViolation(t, "lead_sources", "must keep the default lead source 3")

	// The whole map replaces the previous one, in a form body too.
	acc.propForm(t, "account-settings", url.Values{"exchange_rates[CHF]": {"0.95"}}).status(t, http.StatusOK)
	s := propSettings(t, acc, "CHF only", func(s contract.Settings) bool { return len(s.ExchangeRates) == 1 && s.ExchangeRates["CHF"] == "0.95" })
	if s.DefaultLeadSource != 3 || s.Currency != "USD" {
		t.Errorf("published settings %+v", s)
	}
	acc.a(t, "account-settings", obj{"exchange_rates": obj{}}).status(t, http.StatusOK)
	propSettings(t, acc, "no rates", func(s contract.Settings) bool { return s.ExchangeRates != nil && len(s.ExchangeRates) == 0 })
}

func TestCompatIsFeatured(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	p := validProperty("FE1")
	p["isfeatured"] = "1"
	pid := propData(t, acc.a(t, "property", obj{"action": "create", "property": p}), "property_id")
	if field(stored(t, acc.AccountID, pid), "content", "isfeatured") != true {
		t.Fatal("isfeatured not stored")
	}
	acc.a(t, "property", obj{"action": "update", "property": validProperty("FE1")}).status(t, http.StatusOK)
	if field(stored(t, acc.AccountID, pid), "content", "isfeatured") != true {
		t.Fatal("an update without isfeatured cleared it")
	}
	acc.a(t, "property", obj{"action": "update", "property": with(validProperty("FE1"), obj{"isfeatured": "maybe"})}).
		wantViolation(t, "property.isfeatured", "must be a boolean")
	acc.a(t, "property", obj{"action": "update", "property": with(validProperty("FE1"), obj{"isfeatured": false})}).status(t, http.StatusOK)
	if v := field(stored(t, acc.AccountID, pid), "content", "isfeatured"); v == true {
		t.Fatal("isfeatured false not stored")
	}
}

func TestCompatSetPricesArray(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "SPA1")
	id := acc.AccountID + "_" + strconv.Itoa(pid)
	d1, d2, d3 := day(40), day(41), day(42)
	var empty []any
	// pricingArray as a JSON array.
	acc.b(t, "setprices_minnights", obj{"propertyId": id, "pricingArray": []obj{
		{"date": d1, "recommended_price": 151.5, "minNights": 2}, {"date": d2, "recommended_price": "161"}}}).ok(t, &empty)
	// pricingArray from a PHP form body: a list of objects with string values.
	form := url.Values{"key": {acc.Key}, "pass": {acc.Pass}, "action": {"setprices_minnights"}, "propertyId": {id},
		"pricingArray[0][date]": {d3}, "pricingArray[0][recommended_price]": {"171"}, "pricingArray[0][minNights]": {"1"}}
	do(t, http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode()).ok(t, &empty)
	waitVersion(t, acc, pid)
	var q bookingData
	acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": d1, "checkout": day(43)}).ok(t, &q)
	if !q.NightlyDetail[d1].Equal(dec("151.5")) || !q.NightlyDetail[d2].Equal(dec("161")) || !q.NightlyDetail[d3].Equal(dec("171")) {
		t.Fatalf("nightly prices %v", q.NightlyDetail)
	}

	// An item that cannot be applied fails the push, naming it; nothing is stored.
	before := field(stored(t, acc.AccountID, strconv.Itoa(pid)), "version")
	for _, c := range []struct {
		name  string
		body  obj
		field string
	}{
		{"array, price missing", obj{"propertyId": id, "pricingArray": []obj{{"date": day(44), "recommended_price": "1"}, {"date": day(45)}}}, "pricingArray[1].recommended_price"},
		{"array, item not an object", obj{"propertyId": id, "pricingArray": []any{obj{"date": day(44), "recommended_price": "1"}, "x"}}, "pricingArray[1]"},
		{"array, bad date", obj{"propertyId": id, "pricingArray": []obj{{"date": "2027-02-30", "recommended_price": "1"}}}, "pricingArray[0].date"},
		{"string, bad price", obj{"propertyId": id, "pricingArray": `[{"date":"` + day(44) + `","recommended_price":"cheap"}]`}, "pricingArray[0].recommended_price"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := acc.b(t, "setprices_minnights", c.body).wantStatus(t, 4)
			if !strings.Contains(a.Message, c.field) {
				t.Errorf("message %q does not name %s", a.Message, c.field)
			}
		})
	}
	if after := field(stored(t, acc.AccountID, strconv.Itoa(pid)), "version"); after != before {
		t.Errorf("a refused push changed the property: version %v → %v", before, after)
	}
}
