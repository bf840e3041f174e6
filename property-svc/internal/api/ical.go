package api

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/property-svc/internal/property"
)

// publicURLHeader is edge's public base URL (no trailing slash), sent with every request it
// forwards, so that the answer can give the whole link.
const publicURLHeader = "X-Vros-Public-URL"

// icalAnswer is the data of a property-ical answer; url and path are null when revoked.
type icalAnswer struct {
	PropertyID   int64     `json:"property_id"`
	InternalCode string    `json:"internal_code"`
	URL          *string   `json:"url"`
	Path         *string   `json:"path"`
	Revoked      bool      `json:"revoked"`
	CreatedAt    time.Time `json:"created_at"`
}

// ical: the property's iCal export link (/api/property-ical get, rotate, revoke).
func (a *API) ical(c *fiber.Ctx) error {
	req, err := property.DecodeICal(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	link, err := a.props.ICal(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	if err != nil {
		return domainError(err, codeNotFound(req.InternalCode))
	}
	out := icalAnswer{PropertyID: link.PropertyID, InternalCode: link.InternalCode, Revoked: link.Revoked, CreatedAt: link.CreatedAt.UTC()}
	if path := link.Path(); path != "" {
		// c.Get's string is the request's buffer: copied before it outlives the handler.
		url := strings.Clone(strings.TrimRight(c.Get(publicURLHeader), "/")) + path
		out.URL, out.Path = &url, &path
	}
	return httpapi.A(c, out)
}
