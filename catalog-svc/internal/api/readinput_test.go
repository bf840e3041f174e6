package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestReadInput: edge forwards reads as POST with a JSON body (property_id a string, or a
// number); a GET with the query is served alike; a bad id is status 4 naming the field.
func TestReadInput(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	for _, tc := range []struct {
		name, method, target, body string
		code                       int
		want                       string // in the body
	}{
		{"POST string id", "POST", "/internal/read/property-gallery", `{"property_id":"7"}`, 200, `"property_gallery_7"`},
		{"POST number id", "POST", "/internal/read/property-gallery", `{"property_id":7}`, 200, `"property_gallery_7"`},
		{"POST propertyId", "POST", "/internal/read/property-gallery", `{"propertyId":"3"}`, 200, `"property_gallery_3"`},
		{"POST blank id is none", "POST", "/internal/read/property-gallery", `{"property_id":"","domain":"x","lang":"en"}`, 200, `"property_gallery_3"`},
		{"POST empty body", "POST", "/internal/read/property-gallery", ``, 200, `"property_gallery_7"`},
		{"POST PHP empty array", "POST", "/internal/read/property-gallery", `[]`, 200, `"property_gallery_7"`},
		{"GET query", "GET", "/internal/read/property-gallery?property_id=7", ``, 200, `"property_gallery_7"`},
		{"GET propertyId", "GET", "/internal/read/property-amenity?propertyId=3", ``, 200, `"property_amenity_3"`},
		{"letters", "POST", "/internal/read/property-gallery", `{"property_id":"abc"}`, 400, `property_id`},
		{"zero", "POST", "/internal/read/property-gallery", `{"property_id":"0"}`, 400, `property_id`},
		{"fraction", "POST", "/internal/read/property-amenity", `{"property_id":"7.5"}`, 400, `property_id`},
		{"object", "POST", "/internal/read/property-detail", `{"property_id":{"a":1}}`, 400, `property_id`},
		{"not JSON", "POST", "/internal/read/property-detail", `property_id=7`, 400, `body`},
		{"unknown", "POST", "/internal/read/property-detail", `{"property_id":"8"}`, 404, `"status":16`},
		{"another account's", "POST", "/internal/read/property-gallery", `{"property_id":"9"}`, 404, `"status":16`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := s.call("acc1", tc.method, tc.target, tc.body, nil)
			if code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Fatalf("%d %s, want %d with %s", code, out, tc.code, tc.want)
			}
			if tc.code == 200 && tc.method == "POST" && strings.Contains(tc.body, `"7"`) && strings.Contains(string(out), "property_gallery_3") {
				t.Fatalf("one property asked, every one answered: %s", out)
			}
		})
	}
}

// TestPhotoLinksAbsolute: links use VROS_CATALOG_MEDIA_BASE_URL, else edge's
// X-Vros-Public-Base when it is an http(s) base URL; a malformed header is ignored.
func TestPhotoLinksAbsolute(t *testing.T) {
	for _, tc := range []struct {
		name, env, header, want string
	}{
		{"configured", "https://cdn.example.com/", "https://edge.example.com", "https://cdn.example.com/media/kV4/original.jpg"},
		{"header", "", "https://edge.example.com/", "https://edge.example.com/media/kV4/original.jpg"},
		{"header with path", "", "http://localhost:8080/vros", "http://localhost:8080/vros/media/kV4/original.jpg"},
		{"ftp header", "", "ftp://edge.example.com", "/media/kV4/original.jpg"},
		{"no host", "", "https://", "/media/kV4/original.jpg"},
		{"query", "", "https://edge.example.com/?x=1", "/media/kV4/original.jpg"},
		{"script", "", `javascript:alert(1)`, "/media/kV4/original.jpg"},
		{"quote", "", `https://edge.example.com/"x`, "/media/kV4/original.jpg"},
		{"none", "", "", "/media/kV4/original.jpg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.env)
			fixture(s)
			h := map[string]string{}
			if tc.header != "" {
				h[HeaderPublicBase] = tc.header
			}
			code, out := s.call("acc1", http.MethodPost, "/internal/read/property-gallery", `{"property_id":"7"}`, h)
			if code != 200 {
				t.Fatalf("%d %s", code, out)
			}
			link := decodeOrdered(t, out).first(t).first(t).get(t, "link").str()
			if link != tc.want {
				t.Fatalf("link %q, want %q", link, tc.want)
			}
		})
	}
}

// TestGalleryPhotoKeys: a photo's keys keep the spec's order.
func TestGalleryPhotoKeys(t *testing.T) {
	s := newServer(t, "")
	fixture(s)
	ph := decodeOrdered(t, s.read("property-gallery", `{"property_id":"7"}`)).first(t).first(t)
	wantKeys(t, "photo", ph, "id", "property_id", "type", "position", "property_name", "link", "link_banner", "link_small",
		"link_317_179", "link_h_179", "link_thumbnail", "description")
	if got := string(s.action("gettax", `{"propertyId":"7"}`)); got != "[]" {
		t.Fatalf("gettax: %s", got)
	}
}
