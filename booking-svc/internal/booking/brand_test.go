package booking_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// TestBrandRules: a booking through a brand records it; the brand's lead source applies when
// no leadsourceId is sent (before the account's default); a brand that lists properties sells
// only those; an unknown brand is refused. An update is checked when it changes the brand or
// the property.
func TestBrandRules(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const account = "brand-rules"
	for _, pid := range []int64{1, 2} {
		f.priceable(t, account, pid)
	}
	f.settings(t, contract.Settings{AccountID: account, Version: 1, DefaultLeadSource: 3, Brands: []contract.Brand{
		{ID: 1, Name: "Aurora", Domains: []string{"aurora.example"}, LeadSource: 5, Properties: []int64{1}},
		{ID: 2, Name: "Borea", Properties: []int64{2}},
		{ID: 3, Name: "Old", Domain: "old.example"}, // no properties listed: sells all
	}})
	in := pricing.DateOf(time.Now().UTC()).AddDays(30)
	next := 0
	create := func(pid, brand, lead int64) (booking.Booking, error) {
		next += 3
		p := ada
		p.BrandID, p.LeadSourceID = brand, lead
		return f.svc.Create(ctx, account, booking.NewBooking{Stay: booking.Stay{PropertyID: pid, Checkin: in.AddDays(next),
			Checkout: in.AddDays(next + 2), Adults: 2, Services: &[]pricing.ServiceLine{}}, Party: p})
	}
	for _, c := range []struct {
		name             string
		pid, brand, lead int64
		err              string
		wantLead         int64
	}{
		{"no brand: the account's default", 1, 0, 0, "", 3},
		{"the brand's lead source", 1, 1, 0, "", 5},
		{"a leadsourceId sent wins", 1, 1, 2, "", 2},
		{"a brand without a lead source: the account's default", 2, 2, 0, "", 3},
		{"a brand that lists no property sells all", 2, 3, 0, "", 3},
		{"a property the brand does not sell", 2, 1, 0, "brandId: brand 1 does not sell property 2 (it is not among the brand's properties)", 0},
		{"an unknown brand", 1, 9, 0, "brandId: is not a brand of this account", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := create(c.pid, c.brand, c.lead)
			if c.err != "" {
				var fe *booking.FieldError
				if !errors.As(err, &fe) || fe.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.BrandID != c.brand || b.LeadSourceID != c.wantLead {
				t.Fatalf("brand %d lead source %d, want %d %d", b.BrandID, b.LeadSourceID, c.brand, c.wantLead)
			}
		})
	}

	b, err := create(1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Moving it to a property its brand does not sell, or to a brand that does not sell its
	// property, is refused; a change of neither is not checked.
	two, brand2 := int64(2), int64(2)
	_, err = f.svc.Update(ctx, account, b.BookingID, booking.Patch{PropertyID: &two})
	var fe *booking.FieldError
	if !errors.As(err, &fe) || fe.Field != "brandId" {
		t.Fatalf("move to property 2: %v", err)
	}
	if _, err = f.svc.Update(ctx, account, b.BookingID, booking.Patch{BrandID: &brand2}); !errors.As(err, &fe) || fe.Field != "brandId" {
		t.Fatalf("move to brand 2: %v", err)
	}
	u, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{PropertyID: &two, BrandID: &brand2})
	if err != nil || u.BrandID != 2 || u.PropertyID != 2 {
		t.Fatalf("move to property 2 through brand 2: %v %+v", err, u)
	}
	// The brand stops listing property 2: an update that changes neither still works.
	f.settings(t, contract.Settings{AccountID: account, Version: 2, DefaultLeadSource: 3, Brands: []contract.Brand{
		{ID: 2, Name: "Borea", Properties: []int64{1}}}})
	name := "Augusta"
	if u, err = f.svc.Update(ctx, account, b.BookingID, booking.Patch{FirstName: &name}); err != nil || u.BrandID != 2 {
		t.Fatalf("rename: %v %+v", err, u)
	}
}
