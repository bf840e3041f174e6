package e2e

// Issue #28: the public 365villas WordPress plugin (bikencms/guestwisely-development 1.0.1)
// through edge, as it calls vros (form bodies, owner-token reads and the private
// external-booking action) and reads the answers (json_decode; docs/compatibility.md, "The
// WordPress plugin"). catalog-svc's wordpress_test.go checks every shape; this test checks
// what needs the whole stack: the category tiles' image URLs answer, a property page is
// found from its slug, and the quote widget is refused for booked nights.

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/testkit/phpjson"
)

// wpSlug is Helpers365::MakePropertySlug with MakeStringURLFriendly (ASCII names).
func wpSlug(id, baseName string) string {
	s := strings.ToLower(strings.TrimSpace(baseName))
	s = regexp.MustCompile(`[\t\n\v\f\r _]+`).ReplaceAllString(s, "-")
	s = regexp.MustCompile(`[^a-zA-Z0-9-]`).ReplaceAllString(s, "")
	s = regexp.MustCompile(`-+`).ReplaceAllString(s, "-")
	return id + "-" + s
}

func TestCompatWordPressPlugin(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "WP1", withAmenities)
	ps := strconv.Itoa(pid)
	acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "WP1", "image": samplePNG(t, 320, 200)}}).status(t, http.StatusOK)
	acc.a(t, "property-category", obj{"action": "create", "category": obj{"name": "Sea", "show_search_engine": true,
		"properties": []string{"WP1"}}}).status(t, http.StatusOK)
	waitVersion(t, acc, pid)
	in, out := day(20), day(23)
	create(t, acc, guest(pid, in, out))

	var cats *catNode
	eventually(t, "catalog has the photo, the category and the booking", func() bool {
		r := catCall(t, acc, http.MethodPost, "property-category", "", "", "form", map[string]string{"include[0]": "gallery",
			"include[1]": "languages", "property_include": "1", "domain": "https://site.example"})
		if r.Code != http.StatusOK {
			return false
		}
		cats = catDecode(t, r.Body)
		var ranges []nonAvail
		return len(cats.items) == 1 && len(cats.items[0].at(t, "gallery").items) == 1 &&
			acc.try(t, "getnonavailabledate", obj{"propertyId": pid}, &ranges) && len(ranges) == 1
	})

	t.Run("category tiles: gallery[0] is an image URL that answers", func(t *testing.T) {
		link := cats.items[0].at(t, "gallery").reset(t)
		if link.v.Kind() != phpjson.String {
			t.Fatalf("gallery[0] is not a string: %v", link.keys)
		}
		resp, err := http.Get(link.text())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") {
			t.Fatalf("GET %s: HTTP %d %s", link.text(), resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})

	t.Run("a card's slug finds its property page", func(t *testing.T) {
		list := catRead(t, acc, http.MethodPost, "search-rental", "", "", "form", map[string]string{"limit": "10", "lang": "en",
			"include[0]": "discounttexts", "include[1]": "discountdescription", "domain": "https://site.example"})
		card := list.at(t, "properties").reset(t)
		slug := wpSlug(card.at(t, "id").text(), card.at(t, "base_name").text())
		if card.at(t, "id").text() != ps || !strings.HasPrefix(slug, ps+"-") || len(slug) <= len(ps)+1 {
			t.Fatalf("slug %q", slug)
		}
		// API365::GetProperty: the id before the first "-", then the whole slug compared.
		page := catRead(t, acc, http.MethodPost, "get-all-property-info", "", "", "form", map[string]string{"property_id": ps,
			"lang": "en", "domain": "https://site.example"}).at(t, "properties")
		if got := wpSlug(page.at(t, "id").text(), page.at(t, "base_name").text()); got != slug {
			t.Fatalf("the page's slug %q, the card's %q", got, slug)
		}
		if rv := card.at(t, "rateValue").text(); !strings.HasSuffix(rv, "100.00") || rv == "100.00" {
			t.Errorf("card rateValue %q", rv)
		}
	})

	t.Run("the quote widget is refused for booked nights, as create is", func(t *testing.T) {
		quote := func(checkin, checkout string) bAnswer {
			r := acc.form(t, "getinfo", url.Values{"propertyId": {ps}, "checkin": {checkin}, "checkout": {checkout},
				"numberofadults": {"2"}, "include[0]": {"discounttexts"}, "include[1]": {"grandTotalBeforeDiscounted"}})
			if r.Code != http.StatusOK {
				t.Fatalf("getinfo: HTTP %d %s", r.Code, r.Body)
			}
			return r.b(t)
		}
		for _, c := range []struct{ in, out, taken string }{{in, out, in}, {day(18), day(22), in}, {day(22), day(25), day(22)}} {
			a := quote(c.in, c.out)
			want := "requested dates are not available: the night of " + c.taken + " is taken"
			if a.Status != 8 || a.Message != want {
				t.Errorf("getinfo %s–%s: status %d %q, want 8 %q", c.in, c.out, a.Status, a.Message, want)
			}
			g := guest(pid, c.in, c.out)
			r := acc.b(t, "create", g)
			if cr := r.b(t); cr.Status != a.Status || cr.Message != a.Message {
				t.Errorf("create %s–%s: %d %q; getinfo: %d %q", c.in, c.out, cr.Status, cr.Message, a.Status, a.Message)
			}
		}
		// Around the booking: free nights are quoted (the plugin tests message == "Success").
		for _, c := range [][2]string{{day(23), day(25)}, {day(17), day(20)}} {
			if a := quote(c[0], c[1]); a.Status != 0 || a.Message != "Success" {
				t.Errorf("getinfo %s–%s: %d %q", c[0], c[1], a.Status, a.Message)
			}
		}
	})
}
