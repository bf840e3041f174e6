package property_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

const (
	pngBase64   = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	photoCreate = `{"action":"create","photo":{"internal_code":"VR-001","image":"` + pngBase64 + `"}}`
	photoUpdate = `{"action":"update","photo":{"photo_id":12,"internal_code":"VR-001","image":"https://cdn.example.com/a.jpg"}}`
	photoDelete = `{"action":"delete","photo":{"photo_id":"12","internal_code":"VR-001"}}`
	photoOrder  = `{"action":"order","photo":{"internal_code":"VR-001","order":[12,7,9]}}`
)

func decodePhoto(body []byte) error {
	_, err := property.DecodePhoto(body)
	return err
}

func TestDecodePhotoCreate(t *testing.T) {
	rows := []row{
		tc("valid base64", ""),
		tc("action missing", "action: is required", set("action", del)),
		tc("action unknown lists every action", "action: must be one of create, update, delete, order", set("action", "sort")),
		tc("unknown action checks only internal_code", "action: must be one of create, update, delete, order\nphoto.internal_code: is required",
			set("action", "sort"), set("photo.internal_code", del), set("photo.image", del)),
		tc("photo missing", "photo: is required", set("photo", del)),
		tc("internal_code missing", "photo.internal_code: is required", set("photo.internal_code", del)),
		tc("internal_code 11 chars", "photo.internal_code: must be at most 10 characters", set("photo.internal_code", chars(11))),
		tc("image missing", "photo.image: is required", set("photo.image", del)),
		tc("image blank", "photo.image: is required", set("photo.image", "  ")),
		tc("image not a string", "photo.image: must be a string", set("photo.image", obj(`{"url":"x"}`))),
		tc("photo_id ignored on create", "", set("photo.photo_id", 0)),
		tc("data URI", "", set("photo.image", "data:image/png;base64,"+pngBase64)),
		tc("base64 with line breaks", "", set("photo.image", pngBase64[:40]+"\r\n"+pngBase64[40:])),
		tc("data URI of text", "photo.image: must be a data:image/...;base64, URI", set("photo.image", "data:text/plain;base64,aGVsbG8=")),
		tc("data URI not base64", "photo.image: must be a data:image/...;base64, URI", set("photo.image", "data:image/svg+xml,<svg/>")),
		tc("not base64", "photo.image: must be base64 image data or an http or https link", set("photo.image", "not base64!")),
		tc("other scheme", "photo.image: must be base64 image data or an http or https link", set("photo.image", "ftp://example.com/a.jpg")),
		tc("http link", "", set("photo.image", "http://example.com/a.jpg")),
		tc("link without host", "photo.image: must be a valid http or https link of at most 2048 characters", set("photo.image", "https://")),
		tc("link too long", "photo.image: must be a valid http or https link of at most 2048 characters", set("photo.image", "https://example.com/"+chars(2030))),
	}
	check(t, photoCreate, rows, decodePhoto)
}

func TestDecodePhotoUpdateDelete(t *testing.T) {
	check(t, photoUpdate, []row{
		tc("valid link", ""),
		tc("photo_id missing", "photo.photo_id: is required", set("photo.photo_id", del)),
		tc("photo_id 0", "photo.photo_id: must be between 1 and 2147483647", set("photo.photo_id", 0)),
		tc("photo_id 2147483647", "", set("photo.photo_id", 2147483647)),
		tc("photo_id 2147483648", "photo.photo_id: must be between 1 and 2147483647", set("photo.photo_id", 2147483648)),
		tc("photo_id fraction", "photo.photo_id: must be a whole number", set("photo.photo_id", 1.5)),
		tc("image missing", "photo.image: is required", set("photo.image", del)),
	}, decodePhoto)
	check(t, photoDelete, []row{
		tc("valid", ""),
		tc("photo_id missing", "photo.photo_id: is required", set("photo.photo_id", del)),
		tc("image not needed", "", set("photo.image", del)),
		tc("internal_code missing", "photo.internal_code: is required", set("photo.internal_code", del)),
	}, decodePhoto)
}

func TestDecodePhotoOrder(t *testing.T) {
	check(t, photoOrder, []row{
		tc("valid", ""),
		tc("numeric strings", "", set("photo.order", obj(`["12"," 7",9]`))),
		tc("one photo", "", set("photo.order", obj(`[3]`))),
		tc("photo_id and image ignored", "", set("photo.photo_id", "x"), set("photo.image", "not base64!")),
		tc("order missing", "photo.order: is required", set("photo.order", del)),
		tc("order null", "photo.order: is required", set("photo.order", nil)),
		tc("order empty", "photo.order: must have at least 1 item", set("photo.order", obj(`[]`))),
		tc("order not a list", "photo.order: must be an array", set("photo.order", "12,7,9")),
		tc("duplicate id", "photo.order: lists photo 7 twice", set("photo.order", obj(`[12,7,9,"7"]`))),
		tc("non-number", "photo.order[1]: must be a number", set("photo.order", obj(`[12,"seven",9]`))),
		tc("object item", "photo.order[2]: must be a number", set("photo.order", obj(`[12,7,{"id":9}]`))),
		tc("null item", "photo.order[0]: is required", set("photo.order", obj(`[null,7]`))),
		tc("id 0", "photo.order[1]: must be between 1 and 2147483647", set("photo.order", obj(`[12,0]`))),
		tc("id 2147483648", "photo.order[0]: must be between 1 and 2147483647", set("photo.order", obj(`[2147483648]`))),
		tc("id 2147483647", "", set("photo.order", obj(`[2147483647]`))),
		tc("fraction", "photo.order[0]: must be a whole number", set("photo.order", obj(`[1.5]`))),
		tc("internal_code missing", "photo.internal_code: is required", set("photo.internal_code", del)),
	}, decodePhoto)
	req, err := property.DecodePhoto([]byte(photoOrder))
	if err != nil || req.Action != property.Order || req.Photo.InternalCode != "VR-001" || !slices.Equal(req.Photo.Order, []int64{12, 7, 9}) {
		t.Fatalf("decoded %+v, %v", req, err)
	}
}

// orderRepo is fakeRepo with photos 7, 9 and 12 of VR-001 and an OrderPhotos that calls
// order on them, as the store does, and keeps what it returns.
type orderRepo struct {
	*fakeRepo
	cur    []int64
	stored []int64
}

func (r *orderRepo) OrderPhotos(_ context.Context, p property.Stored, order func([]int64) ([]int64, error)) ([]int64, error) {
	if p.ID != r.fakeRepo.stored.ID {
		return nil, property.ErrNotFound
	}
	ids, err := order(r.cur)
	if err != nil {
		return nil, err
	}
	r.stored = ids
	return ids, nil
}

// TestOrderPhotosRules: the order must be exactly the property's photos as stored when it
// is written (each once): an unknown id is named by its index, a partial list is refused
// naming the photos the property has, and nothing is written then.
func TestOrderPhotosRules(t *testing.T) {
	for _, tt := range []struct {
		name  string
		order []int64
		want  string
	}{
		{"every photo", []int64{12, 7, 9}, ""},
		{"unknown id", []int64{12, 99, 7, 9}, "photo.order[1]: photo 99 is not a photo of the property"},
		{"partial list", []int64{12, 7}, "photo.order: must list every photo of the property once (it has 7, 9, 12)"},
		{"unknown in place of one", []int64{12, 7, 99},
			"photo.order[2]: photo 99 is not a photo of the property\nphoto.order: must list every photo of the property once (it has 7, 9, 12)"},
		{"one twice", []int64{12, 7, 9, 7}, "photo.order[3]: lists photo 7 twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, base := newProperties()
			repo := &orderRepo{fakeRepo: base, cur: []int64{7, 9, 12}}
			props := property.NewProperties(repo, photo.NewFetcher(photo.Config{}))
			got, err := props.OrderPhotos(context.Background(), "1001", "VR-001", tt.order)
			if tt.want == "" {
				if err != nil || !slices.Equal(got, tt.order) || !slices.Equal(repo.stored, tt.order) {
					t.Fatalf("got %v %v, stored %v", got, err, repo.stored)
				}
				return
			}
			if v := strings.Join(violations(t, err), "\n"); v != tt.want || repo.stored != nil {
				t.Fatalf("violations %q, stored %v; want %q, nothing stored", v, repo.stored, tt.want)
			}
		})
	}
	_, base := newProperties()
	props := property.NewProperties(&orderRepo{fakeRepo: base}, photo.NewFetcher(photo.Config{}))
	if _, err := props.OrderPhotos(context.Background(), "1001", "NOPE", []int64{1}); !errors.Is(err, property.ErrNotFound) {
		t.Fatalf("unknown code: %v", err)
	}
	if _, err := props.OrderPhotos(context.Background(), "2002", "VR-001", []int64{1}); !errors.Is(err, property.ErrNotFound) {
		t.Fatalf("another account's code: %v", err)
	}
	noPhotos := &orderRepo{fakeRepo: base}
	props = property.NewProperties(noPhotos, photo.NewFetcher(photo.Config{}))
	_, err := props.OrderPhotos(context.Background(), "1001", "VR-001", []int64{1})
	if v := strings.Join(violations(t, err), "\n"); v != "photo.order[0]: photo 1 is not a photo of the property" {
		t.Fatalf("a property without photos: %q", v)
	}
}

func TestDecodePhotoValues(t *testing.T) {
	tests := []struct {
		body   string
		action property.Action
		id     int
		image  string
		isLink bool
	}{
		{photoCreate, property.Create, 0, pngBase64, false},
		{photoUpdate, property.Update, 12, "https://cdn.example.com/a.jpg", true},
		{photoDelete, property.Delete, 12, "", false},
	}
	for _, tt := range tests {
		req, err := property.DecodePhoto([]byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		p := req.Photo
		if req.Action != tt.action || p.ID != tt.id || p.InternalCode != "VR-001" || p.Image != tt.image || p.IsLink != tt.isLink {
			t.Errorf("%s: got %+v", tt.action, req)
		}
	}
}
