package property

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vros/vros/libs/fields"
)

// Order is A2's action that orders a property's photos (extension): the main photo first.
const Order Action = "order"

// photoActionRule is A2's action: the spec's writes and the extension's order.
var photoActionRule = fields.Str{Required: true,
	OneOf: []string{string(Create), string(Update), string(Delete), string(Order)}}

// photoIDRule is a photo id's: a whole number 1-2147483647.
var photoIDRule = fields.Int{Required: true, Min: 1, Max: 2147483647}

// Photo is an A2 photo request's subject. The image is kept as sent; the
// photo package decodes or fetches it.
type Photo struct {
	ID           int // 0 on create: the service assigns it
	InternalCode string
	Image        string // base64 data, a data:image/...;base64, URI, or a link
	IsLink       bool   // Image is an http or https link
	// Order is the order action's list of photo ids, the main photo first, each once.
	Order []int64
}

// PhotoRequest is a decoded /api/property-photo body.
type PhotoRequest struct {
	Action Action
	Photo  Photo
}

const maxLink = 2048

var (
	dataURI    = regexp.MustCompile(`^(?i)data:image/[a-z0-9.+-]+;base64,`)
	base64Text = regexp.MustCompile(`^[A-Za-z0-9+/=_\-\s]+$`)
)

// DecodePhoto reads an /api/property-photo body: photo_id is required on
// update and delete, image on create and update, order on order. With an
// unknown action only action and internal_code are checked.
func DecodePhoto(body []byte) (PhotoRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", photoActionRule)
	ph := o.Object("photo", true)
	req := PhotoRequest{Action: Action(action)}
	if req.Action == Update || req.Action == Delete {
		req.Photo.ID, _ = ph.Int("photo_id", photoIDRule)
	}
	req.Photo.InternalCode, _ = ph.String("internal_code", internalCodeRule)
	if req.Action == Create || req.Action == Update {
		req.Photo.Image, req.Photo.IsLink = readImage(ph, "image")
	}
	if req.Action == Order {
		req.Photo.Order = readOrder(ph, "order")
	}
	if err := v.Err(); err != nil {
		return PhotoRequest{}, err
	}
	return req, nil
}

// readImage checks the shape of the image member without decoding it: an
// http(s) link with a host, or base64 text optionally behind a
// data:image/...;base64, prefix (line breaks allowed, as PHP's chunk_split
// writes them).
func readImage(ph *fields.Object, name string) (string, bool) {
	s, ok := ph.String(name, fields.Str{Required: true})
	if !ok {
		return "", false
	}
	t := strings.TrimSpace(s)
	lower := strings.ToLower(t)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(t)
		if err != nil || u.Host == "" || len(t) > maxLink {
			ph.Addf(name, "must be a valid http or https link of at most %d characters", maxLink)
			return "", false
		}
		return s, true
	}
	data := t
	if strings.HasPrefix(lower, "data:") {
		loc := dataURI.FindStringIndex(t)
		if loc == nil {
			ph.Add(name, "must be a data:image/...;base64, URI")
			return "", false
		}
		data = t[loc[1]:]
	}
	if !base64Text.MatchString(data) {
		ph.Add(name, "must be base64 image data or an http or https link")
		return "", false
	}
	return s, false
}

// readOrder reads the order action's list of photo ids, at least one, each once. Whether
// they are the property's photos is checked against the stored property (checkPhotoOrder).
func readOrder(ph *fields.Object, name string) []int64 {
	ids, ok := ph.Ints(name, fields.List{Required: true, Min: 1}, photoIDRule)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(ids))
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[int64(id)] {
			ph.Addf(name, "lists photo %d twice", id)
			continue
		}
		seen[int64(id)] = true
		out = append(out, int64(id))
	}
	return out
}

// checkPhotoOrder checks an order action's list against the photos the property has (have,
// in any order), reporting on field ("photo.order"): every id must be one of have, and every
// photo of have must be listed. A list that leaves a photo out is refused rather than
// completed (choice), so that an editor who has not seen a photo added meanwhile cannot
// order it by accident, and two editors never silently drop each other's photos.
func checkPhotoOrder(field string, order, have []int64) error {
	var v fields.Violations
	has := make(map[int64]bool, len(have))
	for _, id := range have {
		has[id] = true
	}
	listed := make(map[int64]bool, len(order))
	for i, id := range order {
		switch {
		case !has[id]:
			v.Addf(fields.Index(field, i), "photo %d is not a photo of the property", id)
		case listed[id]:
			v.Addf(fields.Index(field, i), "lists photo %d twice", id)
		}
		listed[id] = true
	}
	for _, id := range have {
		if !listed[id] {
			v.Addf(field, "must list every photo of the property once (it has %s)", photoIDs(have))
			break
		}
	}
	return v.Err()
}

// photoIDs lists photo ids in increasing order, "none" for none.
func photoIDs(ids []int64) string {
	if len(ids) == 0 {
		return "none"
	}
	sorted := slices.Sorted(slices.Values(ids))
	out := make([]string, len(sorted))
	for i, id := range sorted {
		out[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(out, ", ")
}
