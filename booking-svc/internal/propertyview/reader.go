package propertyview

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events/contract"
)

// Reader is the view as the domain reads it: booking.PropertyView over the Store, in the
// domain's terms.
type Reader struct{ store *Store }

var _ booking.PropertyView = Reader{}

// NewReader returns the domain's reader of v.
func NewReader(v *Store) Reader { return Reader{store: v} }

// Property returns a live property of account.
func (v Reader) Property(ctx context.Context, account string, pid int64) (booking.Property, error) {
	p, err := v.store.Get(ctx, account, pid)
	return propertyOf(p, err)
}

// PropertyByCode returns the live property of account with an internal code.
func (v Reader) PropertyByCode(ctx context.Context, account, code string) (booking.Property, error) {
	p, err := v.store.ByCode(ctx, account, code)
	return propertyOf(p, err)
}

func propertyOf(p Property, err error) (booking.Property, error) {
	if errors.Is(err, ErrNotFound) {
		return booking.Property{}, booking.ErrNoProperty
	}
	if err != nil {
		return booking.Property{}, fmt.Errorf("property view: %w", err)
	}
	return booking.Property{PropertyID: p.PropertyID, InternalCode: p.InternalCode, Name: p.Name, Pricing: p.Pricing}, nil
}

// Settings returns an account's settings (defaults until its first settings event).
func (v Reader) Settings(ctx context.Context, account string) (booking.Settings, error) {
	st, err := v.store.Settings(ctx, account)
	if err != nil {
		return booking.Settings{}, fmt.Errorf("account settings: %w", err)
	}
	out := booking.Settings{LeadSources: st.LeadSources, Brands: make(map[int]booking.Brand, len(st.Brands)), DefaultLeadSource: st.DefaultLeadSource,
		ExchangeRates: make(map[string]decimal.Decimal, len(st.ExchangeRates)), Location: st.Location,
		Languages: append([]string(nil), st.event.Languages...)}
	// property-svc validates what it publishes; a value that still cannot be read is left out
	// (no rate: the currency is refused; no promotion: the code is unknown), never guessed.
	for code, r := range st.ExchangeRates {
		if d, err := decimal.NewFromString(r); err == nil && d.IsPositive() {
			out.ExchangeRates[strings.ToUpper(code)] = d
		}
	}
	for id, b := range st.Brands {
		br := booking.Brand{Name: b.Name, LeadSource: b.LeadSource, DefaultLanguage: b.DefaultLanguage,
			DefaultCurrency: strings.ToUpper(b.DefaultCurrency)}
		if len(b.Properties) > 0 {
			br.Properties = make(map[int64]bool, len(b.Properties))
			for _, pid := range b.Properties {
				br.Properties[pid] = true
			}
		}
		out.Brands[id] = br
	}
	for _, p := range st.Promotions {
		if pr, ok := promotionOf(p); ok {
			out.Promotions = append(out.Promotions, pr)
		}
	}
	return out, nil
}

func promotionOf(p contract.Promotion) (booking.Promotion, bool) {
	amt, err := decimal.NewFromString(p.Amount)
	if err != nil || amt.IsNegative() || p.Code == "" || (p.Type != "percent" && p.Type != "flat") ||
		p.Type == "percent" && amt.GreaterThan(decimal.NewFromInt(100)) {
		return booking.Promotion{}, false
	}
	return booking.Promotion{Code: p.Code, Name: p.Name, Percent: p.Type == "percent", Amount: amt, StartDate: p.StartDate,
		EndDate: p.EndDate, MinNights: p.MinNights, UsageLimit: max(p.UsageLimit, 0), Properties: p.Properties}, true
}
