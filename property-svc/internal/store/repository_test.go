package store

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/eventually"
)

// TestCreateFindLocate: a created property is found by its id and by its internal code,
// with the content it was created with, at version 1.
func TestCreateFindLocate(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	other := h.create(t, acct, "V2")
	if pid == other {
		t.Fatalf("two properties got id %d", pid)
	}
	want := property.Stored{Account: acct, ID: pid, InternalCode: "V1", MaxGuest: 6, Photos: map[int64]string{}}
	for _, r := range []property.PropertyRef{ref(pid), code("V1")} {
		got, err := h.repo.Find(ctx, acct, r)
		must(t, err)
		same(t, "Find "+r.String(), got, want)
		id, err := h.repo.Locate(ctx, acct, r)
		must(t, err)
		if id != pid {
			t.Errorf("Locate %s = %d, want %d", r, id, pid)
		}
	}
	p := h.state(t, acct, pid)
	if p.AccountID != acct || p.PropertyID != pid || p.InternalCode != "V1" || p.Version != 1 || p.Deleted {
		t.Errorf("created: %+v", p)
	}
	same(t, "content", p.Content, villaContent())
	same(t, "empty sections", []any{p.Photos, p.Policy, p.Rates, p.Methods, p.Taxes, p.Services, p.Amenities, p.Prices},
		[]any{map[string]any{}, nil, nil, nil, []any{}, []any{}, nil, nil})
	if p.CreatedAt.IsZero() || p.UpdatedAt.Before(p.CreatedAt) {
		t.Errorf("created_at %v, updated_at %v", p.CreatedAt, p.UpdatedAt)
	}

	for _, r := range []property.PropertyRef{code("V3"), ref(other + 1000)} {
		_, err := h.repo.Find(ctx, acct, r)
		isNotFound(t, "Find unknown "+r.String(), err)
		_, err = h.repo.Locate(ctx, acct, r)
		isNotFound(t, "Locate unknown "+r.String(), err)
		_, err = h.repo.Gateways(ctx, acct, r)
		isNotFound(t, "Gateways unknown "+r.String(), err)
	}
}

// TestUpdateContent: an update replaces the fields it carries; absent optional fields keep
// their value, an optional "" clears one.
func TestUpdateContent(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")

	up := villa("V1")
	up.Name, up.MaxGuest, up.Country = "Villa Aurora, renovated", 8, "FR"
	up.Floor, up.Postcode = nil, nil // kept
	up.Brief, up.Phone, up.State, up.Timezone = sp("A stone villa"), sp("390583"), sp("LU"), sp("Europe/Rome")
	up.AllowPet, up.AllowSmoking = bp(true), bp(false)
	got, err := h.repo.UpdateContent(ctx, acct, up)
	must(t, err)
	if got != pid {
		t.Errorf("UpdateContent returned %d, want %d", got, pid)
	}
	want := villaContent()
	want.Name, want.MaxGuest, want.Country = "Villa Aurora, renovated", 8, "FR"
	want.Brief, want.Phone, want.State, want.Timezone = "A stone villa", "390583", "LU", "Europe/Rome"
	want.AllowPet, want.AllowSmoking = bp(true), bp(false)
	same(t, "content after update", h.state(t, acct, pid).Content, want)
	st, err := h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	if st.MaxGuest != 8 {
		t.Errorf("Find after update: maxguest %d, want 8", st.MaxGuest)
	}

	up2 := villa("V1")
	up2.Name, up2.MaxGuest, up2.Country = want.Name, 8, "FR"
	up2.Floor, up2.Postcode = sp("3"), nil
	up2.State, up2.Phone = sp(""), sp("") // cleared; brief, timezone, allow* kept
	_, err = h.repo.UpdateContent(ctx, acct, up2)
	must(t, err)
	want.Floor, want.State, want.Phone = "3", "", ""
	same(t, "content after second update", h.state(t, acct, pid).Content, want)

	_, err = h.repo.UpdateContent(ctx, acct, villa("NOPE"))
	isNotFound(t, "UpdateContent of an unknown code", err)
}

// section is one write of a property's configuration and what the relay publishes of it
// afterwards.
type section struct {
	name  string
	write func(r property.Repository, acct string, pid int64) error
	check func(t *testing.T, p contract.Property)
}

func sections() []section {
	yes := true
	return []section{
		{"policy", func(r property.Repository, a string, pid int64) error { return r.SetPolicy(ctx, a, pid, policy()) },
			func(t *testing.T, p contract.Property) {
				same(t, "policy", p.Policy, &contract.Policy{PaymentType: "Partial",
					DamageDeposit:    &contract.Charge{IsDueAt: "Arrival", AmountType: "Flat", Amount: "300"},
					FirstPayment:     &contract.Charge{IsDueAt: "Booking", AmountType: "PercentOfGrandTotal", Amount: "30"},
					RemainingPayment: &contract.Charge{IsDueAt: "XDayPriorArrival", XDay: 30}})
			}},
		{"policy replaced", func(r property.Repository, a string, pid int64) error {
			return r.SetPolicy(ctx, a, pid, property.Policy{PaymentType: property.PayFull,
				FullPayment: &property.Deadline{Due: property.DueXDayAfterBooking, XDay: 2}})
		}, func(t *testing.T, p contract.Property) {
			same(t, "policy", p.Policy, &contract.Policy{PaymentType: "Full",
				PaymentFull: &contract.Charge{IsDueAt: "XDayAfterBooking", XDay: 2}})
		}},
		{"rates", func(r property.Repository, a string, pid int64) error { return r.SetRates(ctx, a, pid, rates("100")) },
			func(t *testing.T, p contract.Property) { same(t, "rates", p.Rates, ratesPublished("100")) }},
		{"rates replaced whole", func(r property.Repository, a string, pid int64) error {
			rs := rates("90.50")
			rs.LOS, rs.Seasons = nil, nil
			return r.SetRates(ctx, a, pid, rs)
		}, func(t *testing.T, p contract.Property) {
			want := ratesPublished("90.5")
			want.LOS, want.Seasons = []contract.LOS{}, []contract.Season{}
			same(t, "rates", p.Rates, want)
		}},
		{"methods", func(r property.Repository, a string, pid int64) error { return r.SetMethods(ctx, a, pid, methods()) },
			func(t *testing.T, p contract.Property) {
				same(t, "methods", p.Methods, &contract.Methods{Gateways: []contract.Gateway{
					{Provider: "stripe", Description: "cards", Public: map[string]string{"public_key": "pk_test_one"}},
					{Provider: "authorizenet"},
					{Provider: "paypal", Description: "PayPal", Public: map[string]string{"email": "owner@example.com"}},
					{Provider: "nexi", Public: map[string]string{"merchant_id": "m-1", "secure_3d": "true"}},
					{Provider: "cash", Description: "on arrival"},
				}})
			}},
		{"methods replaced", func(r property.Repository, a string, pid int64) error {
			return r.SetMethods(ctx, a, pid, property.Methods{Cash: &property.CashMethod{}})
		}, func(t *testing.T, p contract.Property) {
			same(t, "methods", p.Methods, &contract.Methods{Gateways: []contract.Gateway{{Provider: "cash"}}})
		}},
		{"taxes", func(r property.Repository, a string, pid int64) error { return r.SetTaxes(ctx, a, pid, taxes("VAT")) },
			func(t *testing.T, p contract.Property) { same(t, "taxes", p.Taxes, taxesPublished("VAT")) }},
		{"taxes cleared", func(r property.Repository, a string, pid int64) error {
			return r.SetTaxes(ctx, a, pid, property.Taxes{Taxes: []property.Tax{}})
		}, func(t *testing.T, p contract.Property) { same(t, "taxes", p.Taxes, []contract.Tax{}) }},
		{"services", func(r property.Repository, a string, pid int64) error { return r.SetServices(ctx, a, pid, services()) },
			func(t *testing.T, p contract.Property) {
				same(t, "services", p.Services, []contract.Service{
					{Name: "Cleaning", Amount: "50", Type: 1, Applicable: 1, Unit: 1, Def: true, Taxes: []contract.ServiceTax{{Name: "VAT", Perc: "22"}}},
					{Name: "Breakfast", Amount: "12.5", Type: 1, Applicable: 4, Unit: 1, Taxes: []contract.ServiceTax{}}})
			}},
		{"amenities", func(r property.Repository, a string, pid int64) error {
			return r.SetAmenities(ctx, a, pid, property.Amenities{BedOption: ip(2), UseIcon: bp(true), Description: sp("Air conditioning"),
				Amenities: []property.Amenity{
					{Name: "Wi-Fi", DefaultName: "Wifi", Value: "yes", Qty: 1, Type: property.AmenitySystem, Class: "wifi", Languages: map[string]string{"it": "Wi-Fi"}},
					{Name: "Pool", DefaultName: "Pool", Qty: 1, Type: property.AmenityExtra, Class: "pool"}}})
		}, func(t *testing.T, p contract.Property) {
			same(t, "amenities", p.Amenities, &contract.Amenities{BedOption: 2, UseIcon: &yes, Description: "Air conditioning",
				Items: []contract.Amenity{
					{ID: 1, Name: "Wi-Fi", DefaultName: "Wifi", Value: "yes", Qty: 1, Type: 1, Class: "wifi", Languages: map[string]string{"it": "Wi-Fi"}},
					{ID: 2, Name: "Pool", DefaultName: "Pool", Qty: 1, Type: 2, Class: "pool", Languages: map[string]string{}}}})
		}},
		{"amenities replaced, options kept", func(r property.Repository, a string, pid int64) error {
			return r.SetAmenities(ctx, a, pid, property.Amenities{Amenities: []property.Amenity{
				{Name: "Pool", DefaultName: "Pool", Qty: 2, Type: property.AmenityExtra, Class: "pool"}}})
		}, func(t *testing.T, p contract.Property) {
			same(t, "amenities", p.Amenities, &contract.Amenities{BedOption: 2, UseIcon: &yes, Description: "Air conditioning",
				Items: []contract.Amenity{{ID: 1, Name: "Pool", DefaultName: "Pool", Qty: 2, Type: 2, Class: "pool", Languages: map[string]string{}}}})
		}},
		{"daily prices", func(r property.Repository, a string, pid int64) error {
			return r.SetDailyPrices(ctx, a, pid, []property.DayPrice{
				{Date: day("2027-07-03"), Price: d("200"), MinNights: 3},
				{Date: day("2027-03-12"), Price: d("110"), Weekly: dp("700"), Monthly: dp("2500")}})
		}, func(t *testing.T, p contract.Property) {
			same(t, "prices", p.Prices, map[string]contract.DayPrice{
				"2027-07-03": {Price: "200", MinNights: 3}, "2027-03-12": {Price: "110", WeeklyPrice: "700", MonthPrice: "2500"}})
		}},
		{"daily prices, other dates kept", func(r property.Repository, a string, pid int64) error {
			return r.SetDailyPrices(ctx, a, pid, []property.DayPrice{
				{Date: day("2027-07-03"), Price: d("210")}, {Date: day("2027-07-04"), Price: d("220"), MinNights: 2}})
		}, func(t *testing.T, p contract.Property) {
			same(t, "prices", p.Prices, map[string]contract.DayPrice{"2027-07-03": {Price: "210"},
				"2027-07-04": {Price: "220", MinNights: 2}, "2027-03-12": {Price: "110", WeeklyPrice: "700", MonthPrice: "2500"}})
		}},
	}
}

// TestSectionsRoundTrip: every section written is what the relay publishes afterwards, and
// the write changes that section only (each case checks every section written before it).
func TestSectionsRoundTrip(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	cases := sections()
	last := map[string]func(*testing.T, contract.Property){}
	var order []string
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must(t, c.write(h.repo, acct, pid))
			p := h.state(t, acct, pid)
			if p.Version != int64(i+2) {
				t.Errorf("version %d, want %d", p.Version, i+2)
			}
			same(t, "content", p.Content, villaContent())
			kind, _, _ := strings.Cut(c.name, " ")
			if _, ok := last[kind]; !ok {
				order = append(order, kind)
			}
			last[kind] = c.check
			for _, k := range order {
				last[k](t, p)
			}
		})
	}
}

// TestSecretsSealedAtRest: gateway secrets are sealed in the stored document and absent
// from the published snapshot; Gateways returns them opened, by id and by internal code.
func TestSecretsSealedAtRest(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	gs, err := h.repo.Gateways(ctx, acct, ref(pid))
	must(t, err)
	if len(gs) != 0 {
		t.Errorf("gateways before any were set: %+v", gs)
	}
	must(t, h.repo.SetMethods(ctx, acct, pid, methods()))

	doc := raw(t, acct, pid)
	for _, s := range secrets {
		if bytes.Contains(doc, []byte(s)) {
			t.Errorf("the stored document holds the secret %q in the clear", s)
		}
	}
	var stored Record
	must(t, bson.Unmarshal(doc, &stored))
	if stored.Methods == nil || len(stored.Methods.Gateways) != 5 || stored.Methods.Gateways[0].Sealed["secret_key"] == "" {
		t.Fatalf("stored methods: %+v", stored.Methods)
	}
	msgs, err := h.st.Snapshot(ctx, recordID(acct, pid))
	must(t, err)
	for _, s := range append(secrets, stored.Methods.Gateways[0].Sealed["secret_key"]) {
		if bytes.Contains(msgs[0].Value, []byte(s)) {
			t.Errorf("the published snapshot holds %q", s)
		}
	}

	want := []property.Gateway{
		{Provider: property.Stripe, Description: "cards", Public: map[string]string{"public_key": "pk_test_one"},
			Secrets: map[string]string{"secret_key": secrets[0]}},
		{Provider: property.AuthorizeNet, Secrets: map[string]string{"login_id": secrets[2], "transaction_key": secrets[3]}},
		{Provider: property.PayPal, Description: "PayPal", Public: map[string]string{"email": "owner@example.com"}, Secrets: map[string]string{}},
		{Provider: property.Nexi, Public: map[string]string{"merchant_id": "m-1", "secure_3d": "true"},
			Secrets: map[string]string{"password": secrets[1]}},
		{Provider: property.Cash, Description: "on arrival", Secrets: map[string]string{}},
	}
	for _, r := range []property.PropertyRef{ref(pid), code("V1")} {
		gs, err := h.repo.Gateways(ctx, acct, r)
		must(t, err)
		same(t, "Gateways "+r.String(), gs, want)
	}

	// A store with another key cannot open them: the secrets really are sealed.
	other := newHarness(t)
	if _, err := other.repo.Gateways(ctx, acct, ref(pid)); err == nil || errors.Is(err, property.ErrNotFound) {
		t.Errorf("Gateways under another key: %v, want an error opening the secrets", err)
	}
}

// configure gives a property every section and a photo, and returns it as stored.
func (h *harness) configure(t *testing.T, acct string, pid int64) property.Stored {
	t.Helper()
	for _, c := range sections() {
		must(t, c.write(h.repo, acct, pid))
	}
	must(t, h.repo.SetMethods(ctx, acct, pid, methods()))
	st, err := h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	_, err = h.repo.AddPhoto(ctx, st, img("first"), "https://example.com/a.jpg")
	must(t, err)
	st, err = h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	if len(st.Photos) != 1 {
		t.Fatalf("photos after AddPhoto: %v", st.Photos)
	}
	return st
}

// calls are every Repository method that names a property, called for account acct on the
// property st describes (its id, code and photos); each should answer ErrNotFound when
// that property is not a live one of acct.
func calls(acct string, st property.Stored) map[string]func(r property.Repository) error {
	pid := st.ID
	var photoID int64
	for id := range st.Photos {
		photoID = id
	}
	as := st
	as.Account = acct
	return map[string]func(r property.Repository) error{
		"Find by id":   func(r property.Repository) error { _, err := r.Find(ctx, acct, ref(pid)); return err },
		"Find by code": func(r property.Repository) error { _, err := r.Find(ctx, acct, code(st.InternalCode)); return err },
		"Locate by id": func(r property.Repository) error { _, err := r.Locate(ctx, acct, ref(pid)); return err },
		"Locate by code": func(r property.Repository) error {
			_, err := r.Locate(ctx, acct, code(st.InternalCode))
			return err
		},
		"Gateways by id": func(r property.Repository) error { _, err := r.Gateways(ctx, acct, ref(pid)); return err },
		"Gateways by code": func(r property.Repository) error {
			_, err := r.Gateways(ctx, acct, code(st.InternalCode))
			return err
		},
		"UpdateContent": func(r property.Repository) error {
			_, err := r.UpdateContent(ctx, acct, villa(st.InternalCode))
			return err
		},
		"Delete":       func(r property.Repository) error { return r.Delete(ctx, acct, st.InternalCode) },
		"SetPolicy":    func(r property.Repository) error { return r.SetPolicy(ctx, acct, pid, policy()) },
		"SetRates":     func(r property.Repository) error { return r.SetRates(ctx, acct, pid, rates("1")) },
		"SetMethods":   func(r property.Repository) error { return r.SetMethods(ctx, acct, pid, methods()) },
		"SetTaxes":     func(r property.Repository) error { return r.SetTaxes(ctx, acct, pid, taxes("X")) },
		"SetServices":  func(r property.Repository) error { return r.SetServices(ctx, acct, pid, services()) },
		"SetAmenities": func(r property.Repository) error { return r.SetAmenities(ctx, acct, pid, property.Amenities{}) },
		"SetDailyPrices": func(r property.Repository) error {
			return r.SetDailyPrices(ctx, acct, pid, []property.DayPrice{{Date: day("2027-01-01"), Price: d("1")}})
		},
		"AddPhoto": func(r property.Repository) error { _, err := r.AddPhoto(ctx, as, img("add"), ""); return err },
		"ReplacePhoto": func(r property.Repository) error {
			return r.ReplacePhoto(ctx, as, photoID, img("replace"), "")
		},
		"DeletePhoto": func(r property.Repository) error { return r.DeletePhoto(ctx, as, photoID) },
		"OrderPhotos": func(r property.Repository) error {
			_, err := r.OrderPhotos(ctx, as, func(cur []int64) ([]int64, error) { return cur, nil })
			return err
		},
	}
}

// TestAccountIsolation: every method called with another account for an existing property
// answers ErrNotFound and changes nothing: not the property's document, not its photos,
// and nothing is stored for the other account.
func TestAccountIsolation(t *testing.T) {
	h := newHarness(t)
	owner, stranger := newAccount(), newAccount()
	pid := h.create(t, owner, "V1")
	st := h.configure(t, owner, pid)
	for name, call := range calls(stranger, st) {
		t.Run(name, func(t *testing.T) {
			before := raw(t, owner, pid)
			isNotFound(t, name+" by another account", call(h.repo))
			unchanged(t, name+" by another account", before, raw(t, owner, pid))
		})
	}
	for _, coll := range []string{collProperties, collCodes} {
		if n := count(t, coll, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + stranger + ":"}}}}); n != 0 {
			t.Errorf("%d documents of the other account in %s", n, coll)
		}
	}
	for _, key := range st.Photos {
		for _, n := range photo.Names() {
			if _, err := h.repo.Rendition(ctx, key, n); err != nil {
				t.Errorf("the owner's rendition %s/%s: %v", key, n, err)
			}
		}
	}
	if _, err := h.repo.Find(ctx, owner, ref(pid)); err != nil {
		t.Errorf("the owner lost the property: %v", err)
	}
}

// TestInternalCodes: a live property's code is its account's alone; another account may
// use it, and a deleted property's code is free again (docs/interface-a.md: 409 only for a
// code "the account already uses"; docs/events.md: deleted frees the code).
func TestInternalCodes(t *testing.T) {
	h := newHarness(t)
	acct, other := newAccount(), newAccount()
	pid := h.create(t, acct, "V1")

	_, err := h.repo.Create(ctx, acct, villa("V1"), 0)
	if !errors.Is(err, property.ErrCodeTaken) {
		t.Fatalf("second live V1: %v, want ErrCodeTaken", err)
	}
	if n := count(t, collProperties, bson.D{{Key: "account_id", Value: acct}}); n != 1 {
		t.Errorf("%d property documents after a refused create, want 1", n)
	}
	if v := h.state(t, acct, pid).Version; v != 1 {
		t.Errorf("a refused create changed the property: version %d", v)
	}

	theirs := h.create(t, other, "V1")
	for _, c := range []struct {
		acct string
		pid  int64
	}{{acct, pid}, {other, theirs}} {
		got, err := h.repo.Locate(ctx, c.acct, code("V1"))
		must(t, err)
		if got != c.pid {
			t.Errorf("V1 of %s is %d, want %d", c.acct, got, c.pid)
		}
	}

	must(t, h.repo.Delete(ctx, acct, "V1"))
	again, err := h.repo.Create(ctx, acct, villa("V1"), 0)
	if err != nil {
		t.Fatalf("V1 after its property was deleted: %v", err)
	}
	if again == pid {
		t.Fatalf("the new V1 reuses id %d", pid)
	}
	for _, r := range []property.PropertyRef{code("V1"), ref(again)} {
		st, err := h.repo.Find(ctx, acct, r)
		must(t, err)
		if st.ID != again {
			t.Errorf("Find %s = %d, want the new property %d", r, st.ID, again)
		}
	}
	_, err = h.repo.Find(ctx, acct, ref(pid))
	isNotFound(t, "Find the deleted V1 by id", err)
	up := villa("V1")
	up.Name = "The new Villa Aurora, 2027"
	got, err := h.repo.UpdateContent(ctx, acct, up)
	must(t, err)
	if got != again || h.state(t, acct, pid).Content.Name == up.Name {
		t.Errorf("UpdateContent of V1 reached %d, want only %d", got, again)
	}
	if _, err := h.repo.Create(ctx, acct, villa("V1"), 0); !errors.Is(err, property.ErrCodeTaken) {
		t.Errorf("second live V1 after a delete: %v, want ErrCodeTaken", err)
	}
	if got, _ := h.repo.Locate(ctx, other, code("V1")); got != theirs {
		t.Errorf("the other account's V1 is %d, want %d", got, theirs)
	}
}

// TestEachWriteBumpsVersionByOne: every write through the repository raises the version
// by exactly one, the snapshot says which change it was, and the relay publishes versions
// in increasing order up to the last.
func TestEachWriteBumpsVersionByOne(t *testing.T) {
	h := newHarness(t)
	h.relay(t)
	acct := newAccount()
	var pid int64
	var st property.Stored
	var photoID int64
	steps := []struct {
		change string
		write  func() error
	}{
		{PropertyCreated, func() (err error) { pid, err = h.repo.Create(ctx, acct, villa("V1"), 0); return err }},
		{PropertyUpdated, func() error { _, err := h.repo.UpdateContent(ctx, acct, villa("V1")); return err }},
		{PolicyUpdated, func() error { return h.repo.SetPolicy(ctx, acct, pid, policy()) }},
		{RatesUpdated, func() error { return h.repo.SetRates(ctx, acct, pid, rates("100")) }},
		{MethodsUpdated, func() error { return h.repo.SetMethods(ctx, acct, pid, methods()) }},
		{TaxesUpdated, func() error { return h.repo.SetTaxes(ctx, acct, pid, taxes("VAT")) }},
		{ServicesUpdated, func() error { return h.repo.SetServices(ctx, acct, pid, services()) }},
		{AmenitiesUpdated, func() error { return h.repo.SetAmenities(ctx, acct, pid, property.Amenities{}) }},
		{PricesUpdated, func() error {
			return h.repo.SetDailyPrices(ctx, acct, pid, []property.DayPrice{{Date: day("2027-01-01"), Price: d("1")}})
		}},
		{PhotosUpdated, func() (err error) {
			if st, err = h.repo.Find(ctx, acct, ref(pid)); err != nil {
				return err
			}
			photoID, err = h.repo.AddPhoto(ctx, st, img("a"), "")
			return err
		}},
		{PhotosUpdated, func() (err error) {
			if st, err = h.repo.Find(ctx, acct, ref(pid)); err != nil {
				return err
			}
			return h.repo.ReplacePhoto(ctx, st, photoID, img("b"), "")
		}},
		{PhotosUpdated, func() (err error) {
			if st, err = h.repo.Find(ctx, acct, ref(pid)); err != nil {
				return err
			}
			_, err = h.repo.OrderPhotos(ctx, st, func(cur []int64) ([]int64, error) { return cur, nil })
			return err
		}},
		{PhotosUpdated, func() (err error) {
			if st, err = h.repo.Find(ctx, acct, ref(pid)); err != nil {
				return err
			}
			return h.repo.DeletePhoto(ctx, st, photoID)
		}},
		{PropertyDeleted, func() error { return h.repo.Delete(ctx, acct, "V1") }},
	}
	for i, s := range steps {
		must(t, s.write())
		msgs, err := h.st.Snapshot(ctx, recordID(acct, pid))
		must(t, err)
		var p contract.Property
		e, err := events.Decode(msgs[0].Value, &p)
		must(t, err)
		if p.Version != int64(i+1) || e.Type() != s.change {
			t.Errorf("after step %d (%s): version %d, type %s", i+1, s.change, p.Version, e.Type())
		}
	}
	final := int64(len(steps))
	key := events.Key(acct, strconv.FormatInt(pid, 10))
	eventually.Holds(t, "the relay publishes the last version", 10*time.Second, func() bool {
		got := h.pub.published(t, key)
		return len(got) > 0 && got[len(got)-1].Version == final
	})
	var prev int64
	for _, p := range h.pub.published(t, key) {
		if p.Version <= prev {
			t.Errorf("published version %d after %d", p.Version, prev)
		}
		prev = p.Version
	}
}

// TestSettings: PutSettings changes what it carries and keeps the rest, bumps the
// version, and one account's settings are not another's.
func TestSettings(t *testing.T) {
	h := newHarness(t)
	a, b := newAccount(), newAccount()
	rt := property.RateWeekly
	put := property.AccountSettings{Currency: sp("EUR"), Timezone: sp("Europe/Rome"), Languages: &[]string{"it", "en"},
		LeadSources: &[]property.LeadSource{{ID: 1, Name: "Website"}, {ID: 9, Name: "Fair"}},
		Brands: &[]property.Brand{{ID: 1, Name: "Aurora Villas", Domains: []string{"aurora.example"},
			Origins: []string{"https://aurora.example", "http://localhost:3000"}, Properties: []int64{}}},
		Search: &property.Search{DefaultLimit: ip(20), PriceFilterEnable: bp(true), RateType: &rt}, WeekendNights: ip(3)}
	got, err := putSettings(h, a, put)
	must(t, err)
	want := property.Settings{Account: a, Version: 1, Currency: "EUR", Timezone: "Europe/Rome", Languages: []string{"it", "en"},
		LeadSources: []property.LeadSource{{ID: 1, Name: "Website"}, {ID: 9, Name: "Fair"}},
		Brands: []property.Brand{{ID: 1, Name: "Aurora Villas", Domains: []string{"aurora.example"},
			Origins: []string{"https://aurora.example", "http://localhost:3000"}, Properties: []int64{}}},
		Search: property.SearchSettings{DefaultLimit: 20, PriceFilterEnable: true, RateType: property.RateWeekly}, WeekendNights: 3,
		DefaultLeadSource: 1, ExchangeRates: []property.ExchangeRate{}, Categories: []property.Group{}, Tags: []property.Group{},
		Promotions: []property.Promotion{}, ChannelMarkups: []property.Markup{}}
	want.UpdatedAt = got.UpdatedAt
	same(t, "settings put", got, want)

	// Nothing carried: nothing changes but the version.
	got, err = putSettings(h, a, property.AccountSettings{})
	must(t, err)
	want.Version, want.UpdatedAt = 2, got.UpdatedAt
	same(t, "settings after an empty put", got, want)

	// Another account has its own, the defaults.
	other, err := putSettings(h, b, property.AccountSettings{})
	must(t, err)
	same(t, "the other account's settings", other, property.Settings{Account: b, Version: 1, UpdatedAt: other.UpdatedAt,
		Currency: "USD", Timezone: "UTC", Languages: []string{"en"}, LeadSources: defaultLeadSources(), Brands: []property.Brand{},
		Search: property.SearchSettings{DefaultLimit: 10, RateType: property.RateDaily}, WeekendNights: 2,
		DefaultLeadSource: 1, ExchangeRates: []property.ExchangeRate{}, Categories: []property.Group{}, Tags: []property.Group{},
		Promotions: []property.Promotion{}, ChannelMarkups: []property.Markup{}})
	_, err = putSettings(h, b, property.AccountSettings{Currency: sp("GBP"), Brands: &[]property.Brand{{ID: 2, Name: "B"}}})
	must(t, err)

	// One field, and a list cleared; a's settings are untouched by b's.
	got, err = putSettings(h, a, property.AccountSettings{Timezone: sp("Europe/Paris"), Brands: &[]property.Brand{},
		Search: &property.Search{DefaultLimit: ip(5)}})
	must(t, err)
	want.Version, want.UpdatedAt, want.Timezone, want.Brands, want.Search.DefaultLimit = 3, got.UpdatedAt, "Europe/Paris", []property.Brand{}, 5
	same(t, "settings after a partial put", got, want)

	// The relay publishes what is in force.
	msgs, err := h.st.Snapshot(ctx, a+":"+settingsAggregate)
	must(t, err)
	var pub contract.Settings
	_, err = events.Decode(msgs[0].Value, &pub)
	must(t, err)
	if pub.AccountID != a || pub.Version != 3 || pub.Currency != "EUR" || pub.Timezone != "Europe/Paris" {
		t.Errorf("published settings: %+v", pub)
	}
}

// putSettings changes what a carries, as the account-settings resource does.
func putSettings(h *harness, account string, a property.AccountSettings) (property.Settings, error) {
	return h.repo.ChangeSettings(ctx, account, func(property.Settings) (property.AccountSettings, error) { return a, nil })
}

func defaultLeadSources() []property.LeadSource {
	out := make([]property.LeadSource, len(DefaultLeadSources))
	for i, l := range DefaultLeadSources {
		out[i] = property.LeadSource{ID: l.ID, Name: l.Name}
	}
	return out
}
