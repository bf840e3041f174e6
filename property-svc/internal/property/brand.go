package property

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vros/vros/libs/fields"
)

// Brand is one website of the account (docs/brands.md): its domains, its defaults and the
// properties it shows.
type Brand struct {
	ID      int
	Name    string
	Domains []string // lower-case host names, unique across the account's brands
	// DefaultLanguage is one of the account's languages; "" the account's default.
	DefaultLanguage string
	// DefaultCurrency is the account's currency or one it has an exchange rate for; "" the
	// account's.
	DefaultCurrency string
	// LeadSource is one of the account's lead sources, given to the bookings made through
	// the brand without a leadsourceId; 0 the account's default.
	LeadSource int
	// Search overrides the account's search settings, field by field; nil: the account's.
	Search *BrandSearch
	// Properties are the brand's property ids, in the order sent; empty: the brand lists
	// none and shows every property of the account.
	Properties []int64
}

// Domain is the brand's first domain ("" for none): the one account-settings shows.
func (b Brand) Domain() string {
	if len(b.Domains) == 0 {
		return ""
	}
	return b.Domains[0]
}

// BrandSearch is a brand's search settings; a zero field (0, nil, "") takes the account's.
type BrandSearch struct {
	DefaultLimit      int
	PriceFilterEnable *bool
	RateType          RateType
}

// BrandRequest is a decoded /api/account-brand body. Nil fields were not sent: on update
// they keep the stored value.
type BrandRequest struct {
	Action          Action
	ID              int // update and delete
	Name            *string
	Domains         *[]string
	DefaultLanguage *string // "" clears
	DefaultCurrency *string // "" clears
	LeadSource      *int    // 0 clears
	Search          *BrandSearch
	Properties      *[]string // internal codes
}

// Bounds of an account's brands.
const (
	maxBrandDomains = 20
	maxBrandID      = 2147483647
)

// ErrBrandNotFound: no brand of the account has the id.
var ErrBrandNotFound = errors.New("brand not found")

// DecodeBrand reads an /api/account-brand body.
func DecodeBrand(body []byte) (BrandRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", actionRule)
	req := BrandRequest{Action: Action(action)}
	b := o.Object("brand", true)
	if req.Action == Update || req.Action == Delete {
		req.ID, _ = b.Int("id", fields.Int{Required: true, Min: 1, Max: maxBrandID})
	}
	if req.Action == Create || req.Action == Update {
		req.Name = notBlank(b, "name", fields.Str{Required: req.Action == Create, Min: 1, Max: 100})
		req.Domains = readDomains(b, "domains")
		if l, ok := b.String("default_language", fields.Str{Max: 35}); ok {
			if tag, valid := languageTag(l); l == "" {
				req.DefaultLanguage = ptr("")
			} else if valid {
				req.DefaultLanguage = ptr(tag)
			} else {
				b.Addf("default_language", "must be a BCP 47 language tag (%q is not)", l)
			}
		}
		if c, ok := b.String("default_currency", fields.Str{Max: 3}); ok {
			if c == "" {
				req.DefaultCurrency = ptr("")
			} else if cy := readCurrency(b, "default_currency"); cy != nil {
				req.DefaultCurrency = cy
			}
		}
		req.LeadSource = optional(b.Int("lead_source", fields.Int{Min: 0, Max: 2147483647}))
		if so := b.Object("search", false); so != nil {
			s := BrandSearch{}
			if n, ok := so.Int("default_limit", fields.Int{Min: 1, Max: 100}); ok {
				s.DefaultLimit = n
			}
			s.PriceFilterEnable = optional(so.Bool("price_filter_enable", false))
			if rt, ok := so.String("rate_type", rateTypeRule); ok {
				s.RateType = RateType(rt)
			}
			req.Search = &s
		}
		req.Properties = readCodes(b, "properties")
	}
	if err := v.Err(); err != nil {
		return BrandRequest{}, err
	}
	return req, nil
}

// readDomains reads a list of host names, stored lower case, each once.
func readDomains(o *fields.Object, name string) *[]string {
	raw, ok := o.Strings(name, fields.List{Max: maxBrandDomains}, fields.Str{Max: 253})
	if !ok {
		return nil
	}
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		host, valid := hostName(s)
		switch {
		case !valid:
			o.Addf(name, "must contain host names such as example.com (%q is not)", s)
		case slices.Contains(out, host):
			o.Addf(name, "lists %s twice", host)
		default:
			out = append(out, host)
		}
	}
	return &out
}

// ChangeBrand applies an /api/account-brand request and returns the brand's id. A new
// brand's id is one more than the largest the account has had (a deleted brand's id, which
// its bookings keep, is never given again), allocated inside the settings' conditional
// write, so that brands created at once get different ids.
func (s *Properties) ChangeBrand(ctx context.Context, account string, req BrandRequest) (int, error) {
	var ids []int64
	if req.Properties != nil {
		var err error
		if ids, err = s.locateCodes(ctx, account, "brand.properties", *req.Properties); err != nil {
			return 0, err
		}
	}
	id := req.ID
	_, err := s.repo.ChangeSettings(ctx, account, func(cur Settings) (AccountSettings, error) {
		list := slices.Clone(cur.Brands)
		if req.Action == Create {
			id = cur.LastBrandID + 1
			for _, b := range list {
				id = max(id, b.ID+1)
			}
		}
		i := slices.IndexFunc(list, func(b Brand) bool { return b.ID == id })
		if req.Action != Create && i < 0 {
			return AccountSettings{}, fmt.Errorf("brand %d: %w", id, ErrBrandNotFound)
		}
		switch req.Action {
		case Create:
			if len(list) >= maxBrands {
				return AccountSettings{}, violation("brand", fmt.Sprintf("the account already has %d brands, the most it may have", maxBrands))
			}
			if id > maxBrandID {
				return AccountSettings{}, violation("brand", "the account's brand ids are exhausted")
			}
			list = append(list, mergeBrand(Brand{ID: id, Domains: []string{}, Properties: []int64{}}, req, ids))
		case Update:
			list[i] = mergeBrand(list[i], req, ids)
		default: // Delete
			list = slices.Delete(list, i, i+1)
		}
		if err := checkBrands(cur, list, "brand.", true); err != nil {
			return AccountSettings{}, err
		}
		return AccountSettings{Brands: &list, LastBrandID: ptr(lastBrandID(cur, list))}, nil
	})
	if err != nil {
		return 0, fmt.Errorf("brand of account %s: %w", account, err)
	}
	return id, nil
}

// mergeBrand applies the fields req carries to b.
func mergeBrand(b Brand, req BrandRequest, ids []int64) Brand {
	if req.Name != nil {
		b.Name = *req.Name
	}
	if req.Domains != nil {
		b.Domains = *req.Domains
	}
	if req.DefaultLanguage != nil {
		b.DefaultLanguage = *req.DefaultLanguage
	}
	if req.DefaultCurrency != nil {
		b.DefaultCurrency = *req.DefaultCurrency
	}
	if req.LeadSource != nil {
		b.LeadSource = *req.LeadSource
	}
	if req.Search != nil {
		sc := *req.Search
		if sc == (BrandSearch{}) {
			b.Search = nil // {} clears: the account's search settings
		} else {
			b.Search = &sc
		}
	}
	if req.Properties != nil {
		b.Properties = ids
	}
	return b
}

// checkBrands applies the rules between brands and the account's settings st: every domain
// in one brand only, each default language one of
// st's languages, each default currency st's currency or one with an exchange rate, each
// lead source one of st's. prefix names the fields: "brand." for /api/account-brand,
// "brands." for account-settings (with the brand's id).
//
// domains false skips the domain rule: a settings change that leaves the brands alone is not
// refused for domains stored before the rule existed.
func checkBrands(st Settings, brands []Brand, prefix string, domains bool) error {
	var v fields.Violations
	seen := map[string]int{}
	field := func(b Brand, name string) string {
		if prefix == "brand." {
			return prefix + name
		}
		return prefix + strconv.Itoa(b.ID) + "." + name
	}
	for _, b := range brands {
		for _, d := range b.Domains {
			if !domains {
				break
			}
			// Websites' reads find the brand by host ignoring a "www." prefix (catalog-svc),
			// so www.a.example and a.example are one domain.
			key := strings.TrimPrefix(d, "www.")
			if other, dup := seen[key]; dup && other != b.ID {
				v.Addf(field(b, "domains"), "%s is already a domain of brand %d: a domain belongs to one brand (with or without www.)", d, other)
			} else {
				seen[key] = b.ID
			}
		}
		if b.DefaultLanguage != "" && !slices.Contains(st.Languages, b.DefaultLanguage) {
			v.Addf(field(b, "default_language"), "must be one of the account's languages (%s)", strings.Join(st.Languages, ", "))
		}
		if c := b.DefaultCurrency; c != "" && c != st.Currency && !slices.ContainsFunc(st.ExchangeRates, func(r ExchangeRate) bool { return r.Currency == c }) {
			v.Addf(field(b, "default_currency"), "must be the account's currency (%s) or one it has an exchange rate for", st.Currency)
		}
		if b.LeadSource != 0 && !slices.ContainsFunc(st.LeadSources, func(l LeadSource) bool { return l.ID == b.LeadSource }) {
			v.Addf(field(b, "lead_source"), "must be the id of one of the account's lead sources (%s)", leadSourceIDs(st.LeadSources))
		}
	}
	return v.Err()
}

// mergeSettingsBrands is the brands an account-settings body sets, sent: its list replaces
// the account's whole, but a brand of the list that the account already has keeps what
// only /api/account-brand sets (defaults, lead source, search settings, properties), and its
// domains when the body's domain is its first one (docs/brands.md).
func mergeSettingsBrands(cur, sent []Brand) []Brand {
	out := make([]Brand, len(sent))
	for i, b := range sent {
		j := slices.IndexFunc(cur, func(c Brand) bool { return c.ID == b.ID })
		if j < 0 {
			out[i] = b
			continue
		}
		old := cur[j]
		old.Name = b.Name
		if b.Domain() != old.Domain() {
			old.Domains = b.Domains
		}
		out[i] = old
	}
	return out
}

// lastBrandID is the largest brand id the account has had once its brands are next.
func lastBrandID(cur Settings, next []Brand) int {
	last := cur.LastBrandID
	for _, b := range append(slices.Clip(cur.Brands), next...) {
		last = max(last, b.ID)
	}
	return last
}

// inForce is st with the languages, lead sources, currency and exchange rates a sets.
func (a AccountSettings) inForce(st Settings) Settings {
	if a.Languages != nil {
		st.Languages = *a.Languages
		if len(st.Languages) == 0 {
			st.Languages = []string{"en"}
		}
	}
	if a.LeadSources != nil {
		st.LeadSources = *a.LeadSources
		if len(st.LeadSources) == 0 {
			st.LeadSources = DefaultLeadSources
		}
	}
	if a.Currency != nil {
		st.Currency = *a.Currency
	}
	if a.ExchangeRates != nil {
		st.ExchangeRates = *a.ExchangeRates
	}
	return st
}
