package api

import (
	"strings"
	"testing"
)

// TestPropertyCategory: the account's categories in its order, with their live properties in
// the category's order, hidden ones with "0"; property_include adds bare properties "p<id>".
func TestPropertyCategory(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	// A third property in no category.
	s.load("vros.property.created", property("acc1", 11, "Loft", "Siena", 1, 1, 2, "80", false))
	type entry struct {
		id, name, show string
		props          []string
	}
	check := func(t *testing.T, body string, want []entry) {
		t.Helper()
		list := decodeOrdered(t, s.read("property-category", body))
		if len(list.items) != len(want) {
			t.Fatalf("%s: %d entries, want %d", body, len(list.items), len(want))
		}
		for i, w := range want {
			e := list.items[i]
			wantKeys(t, "category", e, "id", "name", "show_search_engine", "properties", "gallery", "languages")
			var ids, gallery []string
			for _, p := range e.get(t, "properties").items {
				ids = append(ids, p.get(t, "id").str())
				wantKeys(t, "category property", p, "id", "name", "type", "city", "country", "brief", "maxguest", "bedroom", "bathroom",
					"isfeatured", "image_path")
			}
			// The links of the main photos (property 7's main photo is kV4, 3's kC4, 11's kL4).
			for _, ph := range e.get(t, "gallery").items {
				link := ph.str()
				if !strings.HasPrefix(link, "/media/k") || !strings.HasSuffix(link, "4/original.jpg") {
					t.Errorf("gallery link %q is not a main photo's", link)
				}
				gallery = append(gallery, map[string]string{"V": "7", "C": "3", "L": "11"}[link[len("/media/k"):len("/media/k")+1]])
			}
			if e.get(t, "id").str() != w.id || e.get(t, "name").str() != w.name || e.get(t, "show_search_engine").str() != w.show ||
				strings.Join(ids, ",") != strings.Join(w.props, ",") || strings.Join(gallery, ",") != strings.Join(w.props, ",") {
				t.Errorf("%s entry %d: %s %s %s %v gallery %v, want %+v", body, i, e.get(t, "id").str(), e.get(t, "name").str(),
					e.get(t, "show_search_engine").str(), ids, gallery, w)
			}
			wantKeys(t, "category languages", e.get(t, "languages"), "en", "it")
		}
	}
	cats := []entry{{"5", "Villas", "1", []string{"7", "3"}}, {"6", "Hidden", "0", []string{"3"}}}
	for _, body := range []string{`{}`, `{"property_include":"0"}`, `{"property_include":""}`, `{"property_include":false}`} {
		check(t, body, cats)
	}
	with := append(cats, entry{"p11", "Loft", "1", []string{"11"}})
	for _, body := range []string{`{"property_include":"1"}`, `{"property_include":1}`, `{"property_include":"true"}`} {
		check(t, body, with)
	}
	list := decodeOrdered(t, s.read("property-category", `{}`))
	if l := list.items[0].get(t, "languages", "it").str(); l != "Ville" {
		t.Errorf("it name %q", l)
	}
	if l := list.items[1].get(t, "languages", "it").str(); l != "Hidden" {
		t.Errorf("it name without translation %q", l)
	}
	// A bad flag is an error naming it.
	code, out := s.call("acc1", "POST", "/internal/read/property-category", `{"property_include":"maybe"}`, nil)
	if code != 400 || !strings.Contains(string(out), "property_include") {
		t.Fatalf("bad flag: %d %s", code, out)
	}
	// Another account sees none of acc1's categories.
	code, out = s.call("acc2", "POST", "/internal/read/property-category", `{"property_include":"1"}`, nil)
	if code != 200 || string(out) != `[{"id":"p9","name":"Other","show_search_engine":"1","properties":[{"id":"9","name":"Other","type":"Villa","city":"Rome","country":"IT","brief":"Brief of Other","maxguest":"10","bedroom":"5","bathroom":"5","isfeatured":"0","image_path":"/media/kO4/original.jpg"}],"gallery":["/media/kO4/original.jpg"],"languages":{"en":"Other"}}]` {
		t.Fatalf("acc2: %d %s", code, out)
	}
}
