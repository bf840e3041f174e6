package booking_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/libs/pricing"
)

func day(s string) pricing.Date {
	d, err := pricing.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func ptr[T any](v T) *T { return &v }

// storedBooking is a booking as the service keeps it (services resolved).
func storedBooking() booking.Booking {
	return booking.Booking{
		AccountID: "a1", BookingID: 9, PropertyID: 12, Status: booking.StatusReserved,
		Guest: booking.Guest{FirstName: "Ann", LastName: "Smith", Email: "ann@example.com", City: "Springfield", State: "IL",
			Postcode: "62701", Country: "US", Other: "late arrival"},
		LeadSourceID: 4, Checkin: "2026-07-01", Checkout: "2026-07-08", Adults: 2, Children: 1,
		ServiceLines: []pricing.ServiceLine{{Name: "Cleaning", Applicable: 1, Amount: decimal.NewFromInt(50), Type: 1, Unit: 1}},
		Quote:        booking.Quote{Currency: "EUR"}, CSADamage: 1, PaymentAuto: true,
	}
}

func TestPatchApply(t *testing.T) {
	for _, c := range []struct {
		name  string
		patch booking.Patch
		check func(t *testing.T, got booking.Draft)
	}{
		{"nothing sent keeps everything", booking.Patch{}, func(t *testing.T, got booking.Draft) {
			want := storedBooking().Draft()
			if got.Guest != want.Guest || got.PropertyID != 12 || got.Adults != 2 || got.Children != 1 || got.Currency != "EUR" ||
				got.Checkin != day("2026-07-01") || got.Checkout != day("2026-07-08") || got.LeadSourceID != 4 || len(*got.Services) != 1 {
				t.Fatalf("got %+v", got)
			}
		}},
		{"sent fields replace, others stay", booking.Patch{FirstName: ptr("Bea"), Adults: ptr(3), Other: ptr("")}, func(t *testing.T, got booking.Draft) {
			want := storedBooking().Draft()
			want.Guest.FirstName, want.Adults, want.Guest.Other = "Bea", 3, ""
			if got.Guest != want.Guest || got.Adults != 3 || got.Children != 1 {
				t.Fatalf("got %+v", got)
			}
		}},
		{"csa absent is unchanged", booking.Patch{TravelInsurance: ptr(true)}, func(t *testing.T, got booking.Draft) {
			if got.CSADamage != 1 || got.CSATravel != 1 {
				t.Fatalf("protection %d/%d", got.CSADamage, got.CSATravel)
			}
		}},
		{"csa 0 turns it off", booking.Patch{DamageProtection: ptr(false)}, func(t *testing.T, got booking.Draft) {
			if got.CSADamage != 0 {
				t.Fatal("still on")
			}
		}},
		{"service absent, same property: kept", booking.Patch{PropertyID: ptr(int64(12))}, func(t *testing.T, got booking.Draft) {
			if got.Services == nil || len(*got.Services) != 1 || (*got.Services)[0].Name != "Cleaning" {
				t.Fatalf("services %+v", got.Services)
			}
		}},
		{"service absent, new property: its defaults", booking.Patch{PropertyID: ptr(int64(13))}, func(t *testing.T, got booking.Draft) {
			if got.PropertyID != 13 || got.Services != nil {
				t.Fatalf("property %d services %#v; want nil (defaults)", got.PropertyID, got.Services)
			}
		}},
		{"service empty removes", booking.Patch{Services: &[]pricing.ServiceLine{}}, func(t *testing.T, got booking.Draft) {
			if got.Services == nil || len(*got.Services) != 0 {
				t.Fatalf("services %#v", got.Services)
			}
		}},
		{"service replaces, even with a new property", booking.Patch{PropertyID: ptr(int64(13)),
			Services: &[]pricing.ServiceLine{{Name: "Bikes", Amount: decimal.NewFromInt(10), Type: 1}}}, func(t *testing.T, got booking.Draft) {
			if got.Services == nil || len(*got.Services) != 1 || (*got.Services)[0].Name != "Bikes" {
				t.Fatalf("services %+v", got.Services)
			}
		}},
		{"paymentCharge and card are per request", booking.Patch{}, func(t *testing.T, got booking.Draft) {
			if got.Charge || got.Card != nil || !got.Auto {
				t.Fatalf("charge %v card %v auto %v", got.Charge, got.Card, got.Auto)
			}
		}},
		{"paymentAuto sent", booking.Patch{PaymentAuto: ptr(false), PaymentCharge: true, Card: &card.Card{Number: "4242424242424242"}},
			func(t *testing.T, got booking.Draft) {
				if !got.Charge || got.Card == nil || got.Auto {
					t.Fatalf("charge %v card %v auto %v", got.Charge, got.Card, got.Auto)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stored := storedBooking().Draft()
			stored.Charge, stored.Card = true, &card.Card{Number: "5555555555554444"}
			c.check(t, c.patch.Apply(stored))
		})
	}
}

func TestPatchApplyDoesNotAliasStored(t *testing.T) {
	b := storedBooking()
	got := booking.Patch{FirstName: ptr("Bea")}.Apply(b.Draft())
	(*got.Services)[0].Name = "Changed"
	if b.Guest.FirstName != "Ann" || b.ServiceLines[0].Name != "Cleaning" {
		t.Fatal("Apply changed the stored booking")
	}
}

func TestDraftCheck(t *testing.T) {
	const protect = "is required when csaDamageProtection or csaTravelInsurance is 1"
	for _, c := range []struct {
		name string
		edit func(d *booking.Draft)
		want string
	}{
		{"stored booking is valid", func(d *booking.Draft) {}, ""},
		{"checkout moved before checkin", func(d *booking.Draft) { d.Checkout = day("2026-06-30") }, "checkout: must be after checkin"},
		{"365 nights", func(d *booking.Draft) { d.Checkout = day("2027-07-01") }, ""},
		{"366 nights", func(d *booking.Draft) { d.Checkout = day("2027-07-02") }, "checkout: must be at most 365 nights after checkin"},
		{"protection without city", func(d *booking.Draft) { d.Guest.City = "" }, "city: " + protect},
		{"protection without an address", func(d *booking.Draft) { d.Guest.City, d.Guest.State, d.Guest.Postcode = "", "", "" },
			"city: " + protect + "\nstate: " + protect + "\npostcode: " + protect},
		{"protection abroad", func(d *booking.Draft) { d.Guest.Country = "IT" }, "csaDamageProtection: is only available for US addresses (country US)"},
		{"travel insurance abroad", func(d *booking.Draft) { d.Guest.Country, d.CSADamage, d.CSATravel = "IT", 0, 1 },
			"csaTravelInsurance: is only available for US addresses (country US)"},
		{"no protection abroad", func(d *booking.Draft) { d.Guest.Country, d.CSADamage, d.Guest.City = "IT", 0, "" }, ""},
		{"charge without card", func(d *booking.Draft) { d.Charge = true }, "creditCard: is required when paymentCharge is 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := storedBooking().Draft()
			c.edit(&d)
			err := d.Check()
			var got []string
			var v booking.Violations
			if errors.As(err, &v) {
				for _, f := range v {
					got = append(got, f.Error())
				}
			} else if err != nil {
				t.Fatalf("error %T %v, want Violations", err, err)
			}
			if g := strings.Join(got, "\n"); g != c.want {
				t.Fatalf("got %q, want %q", g, c.want)
			}
		})
	}
}
