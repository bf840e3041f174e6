package property

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
)

// Brand is one website of the account (docs/brands.md): its domains, its defaults and the
// properties it shows.
type Brand struct {
	ID      int
	Name    string
	Domains []string // lower-case host names, unique across the account's brands
	// Origins are the web origins the brand's booking engine is allowed from, in
	// contract.ParseOrigin's form, each in one brand of the account; empty: https://<domain>
	// and https://www.<domain> for each of Domains (AllowedOrigins).
	Origins []string
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

// AllowedOrigins are the origins the brand's booking engine is allowed from: its Origins,
// else two per domain (contract.Brand.AllowedOrigins, the one rule consumers read).
func (b Brand) AllowedOrigins() []string {
	return contract.Brand{Origins: b.Origins, Domains: b.Domains}.AllowedOrigins()
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
	Origins         *[]string // [] clears
	DefaultLanguage *string   // "" clears
	DefaultCurrency *string   // "" clears
	LeadSource      *int      // 0 clears
	Search          *BrandSearch
	Properties      *[]string // internal codes
}

// Bounds of an account's brands.
const (
	maxBrandDomains = 20
	maxBrandOrigins = 20
	// maxOriginLength holds "https://", the longest host name, a port and a trailing slash.
	maxOriginLength = 300
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
		req.Origins = readOrigins(b, "origins", &v)
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

// originRule is the rule an origin breaks, in refusals.
const originRule = "must be http:// or https://, a host and an optional port, nothing else"

// readOrigins reads a list of web origins, stored in contract.ParseOrigin's form (lower
// case, no default port, a lone trailing "/" dropped), each once. Violations name the
// element by its index.
func readOrigins(o *fields.Object, name string, v *fields.Violations) *[]string {
	before := v.Len()
	raw, ok := o.Strings(name, fields.List{Max: maxBrandOrigins}, fields.Str{Max: maxOriginLength})
	if !ok || v.Len() != before {
		return nil // an element was not a string, or too long: refused as it is
	}
	out := make([]string, 0, len(raw))
	for i, s := range raw {
		field := fields.Index(name, i)
		origin, err := contract.ParseOrigin(s)
		switch {
		case err != nil:
			o.Addf(field, "%s: %q %v", originRule, s, err)
		case slices.Contains(out, origin):
			o.Addf(field, "lists %s twice", origin)
		default:
			out = append(out, origin)
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
		if err := checkBrands(cur, list, "brand.", true, id); err != nil {
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
	if req.Origins != nil {
		b.Origins = *req.Origins
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
// domains false skips the domain and origin rules: a settings change that leaves the brands
// alone is not refused for domains stored before the rule existed. changed is the brand
// /api/account-brand changes (0 for account-settings): a clash of origins is reported on it.
func checkBrands(st Settings, brands []Brand, prefix string, domains bool, changed int) error {
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
	if domains {
		checkOrigins(brands, changed, field, &v)
	}
	return v.Err()
}

// checkOrigins applies the origin rule: an origin a brand allows (AllowedOrigins: its
// origins, else two per domain) is allowed by no other brand of the account, so that a
// request's Origin names one brand. Two brands' domain defaults never clash when their
// domains do not (the domain rule reports that). A clash is reported on the brand changed
// (the last one checked), else on the later brand of the list: on its origins[i] when the
// origin is one it lists, else on its domains.
func checkOrigins(brands []Brand, changed int, field func(Brand, string) string, v *fields.Violations) {
	type owner struct {
		brand  int
		listed bool // in the brand's origins, not from its domains
	}
	order := make([]Brand, 0, len(brands))
	for _, b := range brands {
		if b.ID != changed {
			order = append(order, b)
		}
	}
	if i := slices.IndexFunc(brands, func(b Brand) bool { return b.ID == changed }); i >= 0 {
		order = append(order, brands[i])
	}
	seen := map[string]owner{}
	for _, b := range order {
		listed := len(b.Origins) > 0
		for i, o := range b.AllowedOrigins() {
			other, dup := seen[o]
			switch {
			case !dup:
				seen[o] = owner{brand: b.ID, listed: listed}
			case other.brand == b.ID || (!listed && !other.listed):
			case listed:
				v.Addf(field(b, fields.Index("origins", i)), "%s is an origin of brand %d: an origin belongs to one brand", o, other.brand)
			default:
				v.Addf(field(b, "domains"), "%s is an origin of brand %d: a brand that lists no origins is allowed from https://<domain> and https://www.<domain>, and an origin belongs to one brand", o, other.brand)
			}
		}
	}
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
