package catalog

import (
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// The catalog holds the event payloads as the contract defines them (libs/events/contract):
// what it reads of a property, an account's settings, a booking and a block.
type (
	Snapshot   = contract.Property
	Settings   = contract.Settings // defaults filled in (contract.Settings.WithDefaults)
	Booking    = contract.Booking
	Block      = contract.Block // both dates are nights of the block
	Prices     = contract.Prices
	Photo      = contract.Photo
	Amenity    = contract.Amenity // one amenity (B6)
	Brand      = contract.Brand   // one website of the account (docs/brands.md)
	LeadSource = contract.LeadSource
)

// Property is a live property as the catalog serves it. Values are never changed once
// published: an update replaces the pointer, so readers need no lock.
type Property struct {
	Snap Snapshot
	// Pricing is the snapshot's pricing with the account's currency and time zone applied;
	// PricingErr is set when the snapshot cannot be priced.
	Pricing    pricing.Property
	PricingErr error
}

// Today is the current date in the property's time zone.
func (p *Property) Today(now time.Time) pricing.Date {
	loc := p.Pricing.Location
	if loc == nil {
		loc = time.UTC
	}
	return pricing.DateOf(now.In(loc))
}
