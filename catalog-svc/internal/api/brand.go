package api

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/fields"
)

// scope is what a read shows (docs/brands.md): a brand's properties and settings, or the
// whole account's.
type scope struct {
	acc string
	// st are the account's settings as the brand shows them: its default language first,
	// its currency, its search settings over the account's, its lead source first.
	st catalog.Settings
	// currency is the account's own currency, the one prices are stored in (st.Currency
	// is the brand's).
	currency string
	brand    *catalog.Brand // nil: the account as a whole
	// ids are the brand's properties; nil: every property of the account (no brand, or a
	// brand that lists none). list holds them in the brand's order, each once.
	ids  map[int64]bool
	list []int64
}

// brandID is the brand read's id; 0 for the account as a whole.
func (s *scope) brandID() int64 {
	if s.brand == nil {
		return 0
	}
	return int64(s.brand.ID)
}

// has tells whether the scope shows property pid.
func (s *scope) has(pid int64) bool { return s.ids == nil || s.ids[pid] }

// filter keeps the properties the scope shows, in their order.
func (s *scope) filter(props []*catalog.Property) []*catalog.Property {
	if s.ids == nil {
		return props
	}
	out := props[:0:0]
	for _, p := range props {
		if s.ids[p.Snap.PropertyID] {
			out = append(out, p)
		}
	}
	return out
}

// readScope is the brand of a read: brandId (an id the account's brands lack is a violation
// naming it, status 4), else the brand one of whose domains is the host of `domain` (the URL
// or host name websites send; case, a "www." prefix and a port do not matter). No brandId
// and no matching domain: the account as a whole. An account with no brands reads as before
// brands: neither is read (getproperties still checks that brandId is an id).
func (a *API) readScope(c *fiber.Ctx, in *input) *scope {
	acc := account(c)
	sc := &scope{acc: acc, st: a.catalog.Settings(acc)}
	sc.currency = sc.st.Currency
	if len(sc.st.Brands) == 0 {
		return sc
	}
	var b *catalog.Brand
	if !in.o.Empty("brandId") {
		id, ok := in.o.Int("brandId", fields.Int{Min: 1, Max: maxID})
		if !ok {
			return sc
		}
		i := slices.IndexFunc(sc.st.Brands, func(b catalog.Brand) bool { return b.ID == id })
		if i < 0 {
			in.v.Add("brandId", "is not a brand of this account")
			return sc
		}
		b = &sc.st.Brands[i]
	} else if in.o.Kind("domain") == fields.KindString {
		d, _ := in.o.String("domain", fields.Str{})
		b = brandOfHost(sc.st.Brands, hostOf(d))
	}
	if b != nil {
		sc.useBrand(b)
	}
	return sc
}

// useBrand narrows the scope to brand b.
func (s *scope) useBrand(b *catalog.Brand) {
	s.brand = b
	if len(b.Properties) > 0 {
		s.ids = make(map[int64]bool, len(b.Properties))
		for _, pid := range b.Properties {
			if !s.ids[pid] {
				s.ids[pid] = true
				s.list = append(s.list, pid)
			}
		}
	}
	st := s.st
	if i := slices.Index(st.Languages, b.DefaultLanguage); i > 0 {
		st.Languages = append([]string{b.DefaultLanguage}, slices.Delete(slices.Clone(st.Languages), i, i+1)...)
	}
	if b.DefaultCurrency != "" {
		st.Currency = b.DefaultCurrency
	}
	if bs := b.Search; bs != nil {
		if bs.DefaultLimit != 0 {
			st.Search.DefaultLimit = bs.DefaultLimit
		}
		if bs.RateType != "" {
			st.Search.RateType = bs.RateType
		}
		if bs.PriceFilterEnable != nil {
			st.Search.PriceFilterEnable = bs.PriceFilterEnable
		}
	}
	if i := slices.IndexFunc(st.LeadSources, func(l catalog.LeadSource) bool { return l.ID == b.LeadSource }); i > 0 {
		l := st.LeadSources[i]
		st.LeadSources = append([]catalog.LeadSource{l}, slices.Delete(slices.Clone(st.LeadSources), i, i+1)...)
	}
	s.st = st
}

// convert is an amount in the account's currency in the scope's currency, at the account's
// exchange rate, to cents; unchanged when they are the same or no rate is known.
func (s *scope) convert(d decimal.Decimal) decimal.Decimal {
	if s.st.Currency == s.currency {
		return d
	}
	r, err := decimal.NewFromString(s.st.ExchangeRates[s.st.Currency])
	if err != nil || !r.IsPositive() {
		return d
	}
	return d.Mul(r).Round(2)
}

// hostOf is the host name of a URL or of a bare host name (with or without a port), lower
// case, without a trailing dot and a "www." prefix; "" when there is none.
func hostOf(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 2048 {
		return ""
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		s = u.Host
	} else if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	return bareHost(s)
}

func bareHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return strings.TrimPrefix(h, "www.")
}

// brandOfHost is the brand with host among its domains (compared as bareHost), else nil.
func brandOfHost(brands []catalog.Brand, host string) *catalog.Brand {
	if host == "" {
		return nil
	}
	for i := range brands {
		for _, d := range brands[i].HostNames() {
			if bareHost(d) == host {
				return &brands[i]
			}
		}
	}
	return nil
}
