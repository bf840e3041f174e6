// Package properties lets the booking domain read the property view: it answers
// booking.PropertyView from view.Store, in the domain's terms.
package properties

import (
	"context"
	"errors"
	"fmt"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/view"
)

// View is the view as the domain reads it.
type View struct{ store *view.Store }

var _ booking.PropertyView = View{}

// New returns the domain's reader of v.
func New(v *view.Store) View { return View{store: v} }

// Property returns a live property of account.
func (v View) Property(ctx context.Context, account string, pid int64) (booking.Property, error) {
	p, err := v.store.Get(ctx, account, pid)
	return propertyOf(p, err)
}

// PropertyByCode returns the live property of account with an internal code.
func (v View) PropertyByCode(ctx context.Context, account, code string) (booking.Property, error) {
	p, err := v.store.ByCode(ctx, account, code)
	return propertyOf(p, err)
}

func propertyOf(p view.Property, err error) (booking.Property, error) {
	if errors.Is(err, view.ErrNotFound) {
		return booking.Property{}, booking.ErrNoProperty
	}
	if err != nil {
		return booking.Property{}, fmt.Errorf("property view: %w", err)
	}
	return booking.Property{PropertyID: p.PropertyID, InternalCode: p.InternalCode, Name: p.Name, Pricing: p.Pricing}, nil
}

// Settings returns an account's settings (defaults until its first settings event).
func (v View) Settings(ctx context.Context, account string) (booking.Settings, error) {
	st, err := v.store.Settings(ctx, account)
	if err != nil {
		return booking.Settings{}, fmt.Errorf("account settings: %w", err)
	}
	return booking.Settings{LeadSources: st.LeadSources, Brands: st.Brands}, nil
}
