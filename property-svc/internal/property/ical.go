package property

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/vros/vros/libs/fields"
)

// Actions of /api/property-ical.
const (
	ICalGet    Action = "get"
	ICalRotate Action = "rotate"
	ICalRevoke Action = "revoke"
)

var icalActionRule = fields.Str{Required: true, OneOf: []string{string(ICalGet), string(ICalRotate), string(ICalRevoke)}}

// ICalRequest is a decoded /api/property-ical body.
type ICalRequest struct {
	Action       Action
	InternalCode string
}

// DecodeICal reads an /api/property-ical body: {"action":…,"property":{"internal_code":…}}.
func DecodeICal(body []byte) (ICalRequest, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	action, _ := o.String("action", icalActionRule)
	req := ICalRequest{Action: Action(action)}
	if p := o.Object("property", true); p != nil {
		req.InternalCode, _ = p.String("internal_code", internalCodeRule)
	}
	if err := v.Err(); err != nil {
		return ICalRequest{}, err
	}
	return req, nil
}

// ICalLink is a property's iCal export link: the token of /ical/<token>.ics, or none
// (Token empty) once revoked.
type ICalLink struct {
	PropertyID   int64
	InternalCode string
	Token        string
	Revoked      bool
	CreatedAt    time.Time // when the token (or the revocation) was made
}

// Path is the link's path on edge, empty when revoked.
func (l ICalLink) Path() string {
	if l.Token == "" {
		return ""
	}
	return "/ical/" + l.Token + ".ics"
}

// newICalToken is 32 random bytes, base64url without padding: the capability the link is.
func newICalToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("iCal token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ICal applies an /api/property-ical request: get (the first get makes the token), rotate
// (a new token; the old link stops working) or revoke (no link until the next rotate).
func (s *Properties) ICal(ctx context.Context, account string, req ICalRequest) (ICalLink, error) {
	var (
		link ICalLink
		err  error
	)
	switch req.Action {
	case ICalGet:
		link, err = s.repo.ICalLink(ctx, account, req.InternalCode)
		if err == nil && link.Token == "" && !link.Revoked {
			var tok string
			if tok, err = newICalToken(); err == nil {
				link, err = s.repo.SetICalToken(ctx, account, req.InternalCode, tok, true)
			}
		}
	case ICalRotate:
		var tok string
		if tok, err = newICalToken(); err == nil {
			link, err = s.repo.SetICalToken(ctx, account, req.InternalCode, tok, false)
		}
	default: // ICalRevoke; the decoder admits nothing else
		link, err = s.repo.SetICalToken(ctx, account, req.InternalCode, "", false)
	}
	if err != nil {
		return ICalLink{}, fmt.Errorf("property-ical %s %q: %w", req.Action, req.InternalCode, err)
	}
	return link, nil
}
