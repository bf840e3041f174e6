package api

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// The booking engine's reads (docs/booking-engine.md, docs/catalog.md "Booking engine"):
// edge's public booking API calls them as POST /internal/engine/<name>, signed as every
// request edge forwards, with a JSON object body. They answer in the public API's envelope
// themselves: {"data": …} with HTTP 200, a refusal {"error": {"code", "field", "message"}}
// with HTTP 4xx, so that edge passes them on as they are.

// engineData is the public API's success envelope.
type engineData struct {
	Data any `json:"data"`
}

// engineRefusal is the public API's refusal envelope.
type engineRefusal struct {
	Error engineErrorJSON `json:"error"`
}

type engineErrorJSON struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// The public API's codes catalog-svc answers.
const (
	codeBadRequest = "bad_request"
	codeNotFound   = "not_found"
)

// engineOK answers data in the public API's envelope.
func engineOK(c *fiber.Ctx, data any) error {
	return c.Status(fiber.StatusOK).JSON(engineData{Data: data})
}

// engineNotFound refuses with 404 not_found naming field (message "<field>: <msg>").
func engineNotFound(field, msg string) error {
	return &engineError{status: fiber.StatusNotFound, body: engineErrorJSON{Code: codeNotFound, Field: field, Message: field + ": " + msg}}
}

// engineError is a refusal already in the public API's shape.
type engineError struct {
	status int
	body   engineErrorJSON
}

func (e *engineError) Error() string { return e.body.Message }

// engineErrors answers the client errors of the routes behind it (violations, not found) in
// the public API's envelope: the first violation's field and rule, the message starting with
// the field. Anything else (a signature refused, a body too large, a failure) goes on to the
// app's error handler, in interface A's envelope: edge does not pass those on as they are.
func engineErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	var ee *engineError
	var fe *fields.Error
	var he *httpapi.Error
	switch {
	case errors.As(err, &ee):
	case errors.As(err, &fe) && len(fe.Violations) > 0:
		ee = violationError(fe.Violations[0])
	case errors.As(err, &he) && he.HTTP == fiber.StatusBadRequest && len(he.Violations) > 0:
		ee = violationError(he.Violations[0])
	case errors.As(err, &he) && he.HTTP == fiber.StatusBadRequest:
		ee = &engineError{status: fiber.StatusBadRequest, body: engineErrorJSON{Code: codeBadRequest, Message: he.Message}}
	default:
		return err
	}
	return c.Status(ee.status).JSON(engineRefusal{Error: ee.body})
}

func violationError(v fields.Violation) *engineError {
	return &engineError{status: fiber.StatusBadRequest, body: engineErrorJSON{Code: codeBadRequest, Field: v.Field, Message: v.Field + ": " + v.Message}}
}

// engineOriginsJSON is /internal/engine/origins's data.
type engineOriginsJSON struct {
	Brands []brandOriginsJSON `json:"brands"`
}

type brandOriginsJSON struct {
	ID      int      `json:"id"`
	Origins []string `json:"origins"`
}

// engineOrigins lists every brand of the account, in the account's order, with the origins
// its booking engine is allowed from (contract.Brand.AllowedOrigins: its origins, else two
// per domain), from memory. An origin two brands allow (only brands stored before the origin
// and domain rules can) is listed under the first only, so that it names one brand.
func (a *API) engineOrigins(c *fiber.Ctx) error {
	in := parse(c)
	if err := in.err(); err != nil {
		return err
	}
	st := a.catalog.Settings(account(c))
	out := engineOriginsJSON{Brands: make([]brandOriginsJSON, 0, len(st.Brands))}
	seen := map[string]bool{}
	for _, b := range st.Brands {
		list := []string{}
		for _, o := range b.AllowedOrigins() {
			if !seen[o] {
				seen[o] = true
				list = append(list, o)
			}
		}
		out.Brands = append(out.Brands, brandOriginsJSON{ID: b.ID, Origins: list})
	}
	return engineOK(c, out)
}
