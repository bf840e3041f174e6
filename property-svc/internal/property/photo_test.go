package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const (
	pngBase64   = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	photoCreate = `{"action":"create","photo":{"internal_code":"VR-001","image":"` + pngBase64 + `"}}`
	photoUpdate = `{"action":"update","photo":{"photo_id":12,"internal_code":"VR-001","image":"https://cdn.example.com/a.jpg"}}`
	photoDelete = `{"action":"delete","photo":{"photo_id":"12","internal_code":"VR-001"}}`
)

func decodePhoto(body []byte) error {
	_, err := property.DecodePhoto(body)
	return err
}

func TestDecodePhotoCreate(t *testing.T) {
	rows := []row{
		tc("valid base64", ""),
		tc("action missing", "action: is required", set("action", del)),
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
