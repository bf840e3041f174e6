package property

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/vros/vros/libs/fields"
)

// Photo is an A2 photo request's subject. The image is kept as sent; the
// photo package decodes or fetches it.
type Photo struct {
	ID           int // 0 on create: the service assigns it
	InternalCode string
	Image        string // base64 data, a data:image/...;base64, URI, or a link
	IsLink       bool   // Image is an http or https link
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
// update and delete, image on create and update.
func DecodePhoto(body []byte) (PhotoRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", actionRule)
	ph := o.Object("photo", true)
	req := PhotoRequest{Action: Action(action)}
	if req.Action == Update || req.Action == Delete {
		req.Photo.ID, _ = ph.Int("photo_id", fields.Int{Required: true, Min: 1, Max: 2147483647})
	}
	req.Photo.InternalCode, _ = ph.String("internal_code", internalCodeRule)
	if req.Action == Create || req.Action == Update {
		req.Photo.Image, req.Photo.IsLink = readImage(ph, "image")
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
