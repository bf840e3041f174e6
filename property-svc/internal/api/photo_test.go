package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/testkit/together"
)

const photoPath = "/internal/a/property-photo"

// newPhoto adds a photo to code as acc and returns its id.
func newPhoto(t *testing.T, app *fiber.App, acc, code string) int64 {
	t.Helper()
	body := `{"action":"create","photo":{"internal_code":"` + code + `","image":"` + pngPhoto(t, 32, 32) + `"}}`
	status, out := call(t, app, acc, photoPath, body)
	var a struct {
		Data struct {
			PhotoID int64 `json:"photo_id"`
		} `json:"data"`
	}
	if status != 200 || json.Unmarshal(out, &a) != nil || a.Data.PhotoID == 0 {
		t.Fatalf("photo of %s: %d %s", code, status, out)
	}
	return a.Data.PhotoID
}

func orderBody(code string, ids ...int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return `{"action":"order","photo":{"internal_code":"` + code + `","order":[` + strings.Join(s, ",") + `]}}`
}

// getOrder is the photos of code as get answers them, in their order, with their positions.
func getOrder(t *testing.T, app *fiber.App, acc, code string) ([]int64, []int) {
	t.Helper()
	status, out, p := getProperty(t, app, acc, code)
	if status != 200 {
		t.Fatalf("get %s: %d %s", code, status, out)
	}
	var ids []int64
	var pos []int
	for _, ph := range p.OrderedPhotos() {
		ids, pos = append(ids, ph.PhotoID), append(pos, ph.Position)
	}
	return ids, pos
}

func wantPhotos(t *testing.T, what string, app *fiber.App, acc, code string, ids ...int64) {
	t.Helper()
	got, pos := getOrder(t, app, acc, code)
	want := make([]int, len(ids))
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(got, ids) || !slices.Equal(pos, want) {
		t.Errorf("%s: get shows photos %v at positions %v, want %v at %v", what, got, pos, ids, want)
	}
}

// TestPhotoOrderThroughTheAPI: A2 order answers the order and get shows it as positions; a
// photo added after goes last; a deleted one leaves the others in order; a partial or
// stale list and an unknown id are refused by field; another account's code is 404.
func TestPhotoOrderThroughTheAPI(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	a, b, c := newPhoto(t, app, acc, "V1"), newPhoto(t, app, acc, "V1"), newPhoto(t, app, acc, "V1")
	wantPhotos(t, "added", app, acc, "V1", a, b, c)

	status, out := call(t, app, acc, photoPath, orderBody("V1", c, a, b))
	if want := fmt.Sprintf(`{"code":200,"data":{"order":[%d,%d,%d]}}`, c, a, b); status != 200 || string(out) != want {
		t.Fatalf("order: %d %s, want %s", status, out, want)
	}
	wantPhotos(t, "ordered", app, acc, "V1", c, a, b)

	// numeric strings, as a form sends them
	body := fmt.Sprintf(`{"action":"order","photo":{"internal_code":"V1","order":["%d","%d","%d"]}}`, b, c, a)
	if status, out := call(t, app, acc, photoPath, body); status != 200 {
		t.Fatalf("order as strings: %d %s", status, out)
	}
	wantPhotos(t, "ordered again", app, acc, "V1", b, c, a)

	d := newPhoto(t, app, acc, "V1")
	wantPhotos(t, "added after the order", app, acc, "V1", b, c, a, d)

	if status, out := call(t, app, acc, photoPath, fmt.Sprintf(`{"action":"delete","photo":{"internal_code":"V1","photo_id":%d}}`, c)); status != 200 {
		t.Fatalf("delete: %d %s", status, out)
	}
	wantPhotos(t, "deleted", app, acc, "V1", b, a, d)

	for _, tc := range []struct {
		name, body, want string
	}{
		{"stale list (a photo deleted since)", orderBody("V1", a, b, c, d),
			fmt.Sprintf(`{"field":"photo.order[2]","message":"photo %d is not a photo of the property"}`, c)},
		{"partial list", orderBody("V1", d, a),
			fmt.Sprintf(`{"field":"photo.order","message":"must list every photo of the property once (it has %d, %d, %d)"}`, a, b, d)},
		{"unknown id", orderBody("V1", a, 99, b, d), `{"field":"photo.order[1]","message":"photo 99 is not a photo of the property"}`},
		{"duplicate", orderBody("V1", a, b, d, a), fmt.Sprintf(`{"field":"photo.order","message":"lists photo %d twice"}`, a)},
		{"missing order", `{"action":"order","photo":{"internal_code":"V1"}}`, `{"field":"photo.order","message":"is required"}`},
	} {
		status, out := call(t, app, acc, photoPath, tc.body)
		if status != 400 || !strings.Contains(string(out), `"errors":[`+tc.want+`]`) {
			t.Errorf("%s: %d %s, want 400 with %s", tc.name, status, out, tc.want)
		}
	}
	wantPhotos(t, "after the refusals", app, acc, "V1", b, a, d)

	other := "9" + acc
	if status, out := call(t, app, other, photoPath, orderBody("V1", b, a, d)); status != 404 ||
		!strings.Contains(string(out), `"error_type":"not_found"`) {
		t.Errorf("another account's code: %d %s, want 404", status, out)
	}
	if status, out := call(t, app, acc, photoPath, orderBody("NOPE", b, a, d)); status != 404 {
		t.Errorf("unknown code: %d %s, want 404", status, out)
	}
	wantPhotos(t, "after another account's order", app, acc, "V1", b, a, d)
}

// TestConcurrentPhotoAddsAndOrdersThroughTheAPI: 8 clients of one property at once, 4 adding
// photos and 4 ordering the photos they last got, reversed. An order is taken (200) or,
// when a photo was added since its get, refused on photo.order (400); nothing else. At the
// end get shows every added photo exactly once, at positions 1..n.
func TestConcurrentPhotoAddsAndOrdersThroughTheAPI(t *testing.T) {
	const clients, rounds = 8, 3
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	want := []int64{newPhoto(t, app, acc, "V1")}
	added := make([][]int64, clients)
	errs := make([]string, clients)
	orders := make([]int, clients)
	image := pngPhoto(t, 32, 32)
	together.Run(clients, func(c int) { // errors are recorded: t.Fatal belongs to the test's goroutine
		for range rounds {
			if c%2 == 0 {
				status, out := call(t, app, acc, photoPath, `{"action":"create","photo":{"internal_code":"V1","image":"`+image+`"}}`)
				var a struct {
					Data struct {
						PhotoID int64 `json:"photo_id"`
					} `json:"data"`
				}
				if status != 200 || json.Unmarshal(out, &a) != nil || a.Data.PhotoID == 0 {
					errs[c] = fmt.Sprintf("add: %d %s", status, out)
					return
				}
				added[c] = append(added[c], a.Data.PhotoID)
				continue
			}
			status, out := call(t, app, acc, propertyPath, `{"action":"get","property":{"internal_code":"V1"}}`)
			var g struct {
				Data contract.Property `json:"data"`
			}
			if status != 200 || json.Unmarshal(out, &g) != nil {
				errs[c] = fmt.Sprintf("get: %d %s", status, out)
				return
			}
			var ids []int64
			for _, ph := range g.Data.OrderedPhotos() {
				ids = append(ids, ph.PhotoID)
			}
			slices.Reverse(ids)
			switch status, out := call(t, app, acc, photoPath, orderBody("V1", ids...)); {
			case status == 200:
				orders[c]++
			case status != 400 || !strings.Contains(string(out), `"field":"photo.order`):
				errs[c] = fmt.Sprintf("order %v: %d %s", ids, status, out)
				return
			}
		}
	})
	for c, e := range errs {
		if e != "" {
			t.Errorf("client %d: %s", c, e)
		}
	}
	for _, ids := range added {
		want = append(want, ids...)
	}
	got, pos := getOrder(t, app, acc, "V1")
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("photos %v, want each of %v once", got, want)
	}
	for i, p := range pos {
		if p != i+1 {
			t.Errorf("positions %v, want 1..%d", pos, len(got))
			break
		}
	}
	n := 0
	for _, o := range orders {
		n += o
	}
	t.Logf("%d photos, %d orders taken", len(got), n)
}
