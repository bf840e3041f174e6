package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// galleryPhoto is a photo of property-gallery.
type galleryPhoto struct {
	ID         int    `json:"id"`
	Type       int    `json:"type"`
	Position   int    `json:"position"`
	LinkBanner string `json:"link_banner"`
}

// galleryOrder reads property pid's property-gallery and returns its photo ids, types and
// positions in the answer's order, and the banner link of the first.
func galleryOrder(t *testing.T, acc account, pid string) (ids, types, positions []int, banner string, ok bool) {
	t.Helper()
	var gallery map[string][]galleryPhoto
	r := acc.read(t, "property-gallery", pid, &gallery)
	if r.Code != http.StatusOK || bError(r.Body) {
		return nil, nil, nil, "", false
	}
	for _, ph := range gallery["property_gallery_"+pid] {
		ids, types, positions = append(ids, ph.ID), append(types, ph.Type), append(positions, ph.Position)
		if banner == "" {
			banner = ph.LinkBanner
		}
	}
	return ids, types, positions, banner, true
}

// TestPhotoOrder: an owner orders a property's photos through edge (A2 order, JSON and a PHP
// form); the answer is the order, get shows the positions, and catalog-svc's
// property-gallery follows (the first of type 1, positions 1..n) as does banner-gallery's
// main photo. A partial or stale list and an unknown id are refused by field and change
// nothing; another account's code is 404.
func TestPhotoOrder(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := createProperty(t, acc, "PO1")
	var ids []int
	for range 3 {
		ids = append(ids, photoID(t, acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "PO1", "image": samplePNG(t, 64, 48)}})))
	}
	a, b, c := ids[0], ids[1], ids[2]
	var got []int
	eventually(t, "property-gallery shows the photos in the order they were added", func() bool {
		got, _, _, _, _ = galleryOrder(t, acc, pid)
		return slices.Equal(got, []int{a, b, c})
	})

	r := acc.a(t, "property-photo", obj{"action": "order", "photo": obj{"internal_code": "PO1", "order": []int{c, a, b}}})
	r.status(t, http.StatusOK)
	if want := fmt.Sprintf(`{"code":200,"data":{"order":[%d,%d,%d]}}`, c, a, b); string(r.Body) != want {
		t.Fatalf("order: %s, want %s", r.Body, want)
	}
	wantGet := func(what string, order ...int) {
		t.Helper()
		r := acc.a(t, "property", obj{"action": "get", "property": obj{"internal_code": "PO1"}})
		r.status(t, http.StatusOK)
		var out struct {
			Data contract.Property `json:"data"`
		}
		r.decode(t, &out)
		var gotIDs, gotPos []int
		for _, ph := range out.Data.OrderedPhotos() {
			gotIDs, gotPos = append(gotIDs, int(ph.PhotoID)), append(gotPos, ph.Position)
		}
		if !slices.Equal(gotIDs, order) || !slices.Equal(gotPos, []int{1, 2, 3}[:len(order)]) {
			t.Fatalf("%s: get shows %v at positions %v, want %v at 1..%d", what, gotIDs, gotPos, order, len(order))
		}
	}
	wantGet("ordered", c, a, b)
	wantGallery := func(what string, order ...int) {
		t.Helper()
		var types, positions []int
		var banner string
		eventually(t, what, func() bool {
			got, types, positions, banner, _ = galleryOrder(t, acc, pid)
			return slices.Equal(got, order)
		})
		if !slices.Equal(types, []int{1, 2, 2}) || !slices.Equal(positions, []int{1, 2, 3}) {
			t.Errorf("%s: types %v positions %v, want 1 2 2 and 1 2 3", what, types, positions)
		}
		var banners []string
		acc.read(t, "banner-gallery", "", &banners).status(t, http.StatusOK)
		if len(banners) != 1 || banners[0] != banner {
			t.Errorf("%s: banner-gallery %v, want the main photo's %s", what, banners, banner)
		}
	}
	wantGallery("property-gallery follows the order", c, a, b)

	// A PHP form sends the list as photo[order][0]=…, each a string.
	form := url.Values{"action": {"order"}, "photo[internal_code]": {"PO1"}}
	for i, id := range []int{b, c, a} {
		form.Set(fmt.Sprintf("photo[order][%d]", i), strconv.Itoa(id))
	}
	acc.propForm(t, "property-photo", form).status(t, http.StatusOK)
	wantGet("ordered by a form", b, c, a)
	wantGallery("property-gallery follows the form's order", b, c, a)

	before := field(stored(t, acc.AccountID, pid), "version")
	acc.a(t, "property-photo", obj{"action": "order", "photo": obj{"internal_code": "PO1", "order": []int{a, b}}}).
		wantViolation(t, "photo.order", fmt.Sprintf("must list every photo of the property once (it has %d, %d, %d)", a, b, c))
	acc.a(t, "property-photo", obj{"action": "order", "photo": obj{"internal_code": "PO1", "order": []int{a, 99, b, c}}}).
		wantViolation(t, "photo.order[1]", "photo 99 is not a photo of the property")
	acc.a(t, "property-photo", obj{"action": "order", "photo": obj{"internal_code": "PO1", "order": []any{a, "seven", c}}}).
		wantViolation(t, "photo.order[1]", "must be a number")
	other.a(t, "property-photo", obj{"action": "order", "photo": obj{"internal_code": "PO1", "order": []int{a, b, c}}}).
		status(t, http.StatusNotFound)
	if after := field(stored(t, acc.AccountID, pid), "version"); after != before {
		t.Errorf("refused orders changed the property: version %v became %v", before, after)
	}

	// A photo added after an order goes last; a deleted one leaves the others in order.
	d := photoID(t, acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "PO1", "image": samplePNG(t, 64, 48)}}))
	acc.a(t, "property-photo", obj{"action": "delete", "photo": obj{"internal_code": "PO1", "photo_id": b}}).status(t, http.StatusOK)
	wantGet("added and deleted", c, a, d)
	wantGallery("property-gallery after an add and a delete", c, a, d)
}
