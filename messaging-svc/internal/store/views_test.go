package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

func newViews(t *testing.T) *Views {
	t.Helper()
	v, err := NewViews(context.Background(), testDB)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func propertyEvent(account string, id, version int64, name, zone string) contract.Property {
	return contract.Property{AccountID: account, PropertyID: id, Version: version, Content: contract.Content{
		Name: name, Address: "Via Roma 1", City: "Roma", Postcode: "00100", Country: "IT", Timezone: zone}}
}

// TestViewsProperty: a property's view keeps the newest version only: an older event (a
// replay, another replica behind) changes nothing, a delete hides it and is not undone by an
// older event that arrives after it.
func TestViewsProperty(t *testing.T) {
	ctx := context.Background()
	v := newViews(t)
	acc := "vp1"
	if _, ok, err := v.Property(ctx, acc, 7); err != nil || ok {
		t.Fatalf("unknown property: ok %v err %v", ok, err)
	}
	steps := []struct {
		version int64
		name    string
		deleted bool
		wrote   bool
		want    string // "" not found
	}{
		{2, "Villa Due", false, true, "Villa Due"},
		{1, "Villa Uno", false, false, "Villa Due"},
		{2, "Villa Due bis", false, false, "Villa Due"},
		{3, "Villa Tre", false, true, "Villa Tre"},
		{5, "", true, true, ""},
		{4, "Villa Quattro", false, false, ""},
	}
	for _, s := range steps {
		p := PropertyOf(propertyEvent(acc, 7, s.version, s.name, "Pacific/Kiritimati"))
		wrote, err := v.SaveProperty(ctx, p, s.deleted)
		if err != nil || wrote != s.wrote {
			t.Fatalf("v%d: wrote %v err %v, want wrote %v", s.version, wrote, err, s.wrote)
		}
		got, ok, err := v.Property(ctx, acc, 7)
		if err != nil || ok != (s.want != "") || got.Name != s.want {
			t.Fatalf("after v%d: %+v ok %v err %v, want %q", s.version, got, ok, err, s.want)
		}
	}
	p := PropertyOf(propertyEvent(acc, 8, 1, "Casa", "Pacific/Kiritimati"))
	if _, err := v.SaveProperty(ctx, p, false); err != nil {
		t.Fatal(err)
	}
	got, _, _ := v.Property(ctx, acc, 8)
	want := PropertyView{Account: acc, ID: 8, Name: "Casa", Address: "Via Roma 1", City: "Roma", Postcode: "00100",
		Country: "IT", CheckinTime: "15:00", CheckoutTime: "10:00", Timezone: "Pacific/Kiritimati", Version: 1}
	if got != want {
		t.Fatalf("view %+v, want %+v", got, want)
	}
	// Another account's property of the same id is another view.
	if _, ok, _ := v.Property(ctx, "vp1-other", 8); ok {
		t.Fatal("another account sees the property")
	}
	if err := v.ForgetProperty(ctx, acc, 8); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.Property(ctx, acc, 8); ok {
		t.Fatal("a forgotten property is still there")
	}
}

// TestViewsAccount: the settings snapshot's zone, languages and brands (website from the
// first domain, default language), newest version only, defaults filled in.
func TestViewsAccount(t *testing.T) {
	ctx := context.Background()
	v := newViews(t)
	acc := "va1"
	s := contract.Settings{AccountID: acc, Version: 3, Timezone: "America/Adak", Languages: []string{"it", "en"},
		Brands: []contract.Brand{{ID: 2, Name: "Mare", Domains: []string{"mare.example", "www.mare.example"}, DefaultLanguage: "it"},
			{ID: 3, Name: "Old", Domain: "old.example"}, {ID: 4, Name: "Bare"}}}
	if wrote, err := v.SaveAccount(ctx, AccountOf(s)); err != nil || !wrote {
		t.Fatalf("save: %v %v", wrote, err)
	}
	got, ok, err := v.Account(ctx, acc)
	if err != nil || !ok {
		t.Fatalf("account: %v %v", ok, err)
	}
	want := AccountView{Account: acc, Timezone: "America/Adak", Languages: []string{"it", "en"}, Version: 3,
		Brands: []BrandView{{2, "Mare", "https://mare.example", "it"}, {3, "Old", "https://old.example", ""}, {4, "Bare", "", ""}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view %+v\nwant %+v", got, want)
	}
	older := AccountOf(contract.Settings{AccountID: acc, Version: 2, Timezone: "UTC"})
	if wrote, err := v.SaveAccount(ctx, older); err != nil || wrote {
		t.Fatalf("older settings: wrote %v err %v", wrote, err)
	}
	if got, _, _ := v.Account(ctx, acc); got.Timezone != "America/Adak" {
		t.Fatalf("older settings moved the view back: %+v", got)
	}
	// An account that has set nothing: the defaults.
	d := AccountOf(contract.Settings{AccountID: "va2", Version: 1})
	if d.Timezone != "UTC" || fmt.Sprint(d.Languages) != "[en]" {
		t.Fatalf("defaults: %+v", d)
	}
	if err := v.ForgetAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.Account(ctx, acc); ok {
		t.Fatal("forgotten account still there")
	}
}

// TestViewsErase: an erased account's views go, its later events are refused, and another
// account keeps its own.
func TestViewsErase(t *testing.T) {
	ctx := context.Background()
	v := newViews(t)
	for _, acc := range []string{"ve1", "ve2"} {
		if _, err := v.SaveAccount(ctx, AccountOf(contract.Settings{AccountID: acc, Version: 1, Timezone: "Europe/Rome"})); err != nil {
			t.Fatal(err)
		}
		for id := int64(1); id <= 3; id++ {
			if _, err := v.SaveProperty(ctx, PropertyOf(propertyEvent(acc, id, 1, "P", "")), false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if gone, err := v.Erased(ctx, "ve1"); err != nil || gone {
		t.Fatalf("erased before the erasure: %v %v", gone, err)
	}
	for range 2 { // erasing twice is harmless
		if err := v.EraseAccount(ctx, "ve1", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if gone, err := v.Erased(ctx, "ve1"); err != nil || !gone {
		t.Fatalf("not erased: %v %v", gone, err)
	}
	if _, ok, _ := v.Account(ctx, "ve1"); ok {
		t.Fatal("erased account's view still answers")
	}
	for id := int64(1); id <= 3; id++ {
		if _, ok, _ := v.Property(ctx, "ve1", id); ok {
			t.Fatalf("erased account's property %d still there", id)
		}
		if _, ok, _ := v.Property(ctx, "ve2", id); !ok {
			t.Fatalf("the other account lost property %d", id)
		}
	}
	// Later events of the erased account change nothing.
	if wrote, err := v.SaveAccount(ctx, AccountOf(contract.Settings{AccountID: "ve1", Version: 9})); err != nil || wrote {
		t.Fatalf("settings after the erasure: %v %v", wrote, err)
	}
	if wrote, err := v.SaveProperty(ctx, PropertyOf(propertyEvent("ve1", 4, 9, "P", "")), false); err != nil || wrote {
		t.Fatalf("property after the erasure: %v %v", wrote, err)
	}
	if _, ok, _ := v.Property(ctx, "ve1", 4); ok {
		t.Fatal("a property of the erased account came back")
	}
	// A tombstone of the settings key keeps the erasure mark.
	if err := v.ForgetAccount(ctx, "ve1"); err != nil {
		t.Fatal(err)
	}
	if gone, _ := v.Erased(ctx, "ve1"); !gone {
		t.Fatal("a tombstone removed the erasure mark")
	}
}

// TestViewsConcurrentVersions: two replicas (two Views on one database) apply the versions of
// one property and one account's settings in shuffled order, 24 writers at once: the views
// end at the highest version, never moved back.
func TestViewsConcurrentVersions(t *testing.T) {
	ctx := context.Background()
	replicas := []*Views{newViews(t), newViews(t)}
	acc := "vc1"
	const n = 24
	order := rand.Perm(n)
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i, k := range order {
		version := int64(k + 1)
		v := replicas[i%2]
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := v.SaveProperty(ctx, PropertyOf(propertyEvent(acc, 1, version, fmt.Sprint("v", version), "")), false)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := v.SaveAccount(ctx, AccountOf(contract.Settings{AccountID: acc, Version: version, Timezone: fmt.Sprint("Z", version)}))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	p, _, _ := replicas[0].Property(ctx, acc, 1)
	a, _, _ := replicas[1].Account(ctx, acc)
	if p.Version != n || p.Name != fmt.Sprint("v", n) || a.Version != n || a.Timezone != fmt.Sprint("Z", n) {
		t.Fatalf("property %+v account %+v, want version %d", p, a, n)
	}
}
