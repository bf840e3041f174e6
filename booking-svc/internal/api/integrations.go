package api

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/httpapi"
)

// The internal routes integration-svc calls with the account's signed tenant
// (docs/booking.md, "Integrations"): plain JSON answers, errors in interface A's shape.

// hookBookingJSON is the booking object of interface B (bookingOf, the code that answers
// create, update and listbooking) without the card: CreditCard shadows the embedded field
// of the same JSON name and is always nil, so the key is absent. No card number, masked or
// not, and no card token (the sealed card is never in the booking object) reaches a
// webhook.
type hookBookingJSON struct {
	bookingJSON
	CreditCard *struct{} `json:"creditCard,omitempty"`
}

// hookBooking: GET /internal/hooks/booking/{id} → {"booking": …}; 404 for an id the account
// has no (reserved or cancelled) booking with.
func (a *API) hookBooking(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return httpapi.InvalidField("id", "must be a booking id (a positive integer)")
	}
	b, err := a.bookings.Booking(c.UserContext(), account(c), id)
	if err != nil {
		return domainError(err)
	}
	return c.JSON(fiber.Map{"booking": hookBookingJSON{bookingJSON: a.bookingOf(c, b)}})
}

// icalProperty: GET /internal/ical/property?internal_code=V1 → {"property_id": N} from the
// property view; 404 for a code the account has no property with.
func (a *API) icalProperty(c *fiber.Ctx) error {
	code := c.Query("internal_code")
	if code == "" {
		return httpapi.InvalidField("internal_code", "is required")
	}
	p, err := a.bookings.PropertyByCode(c.UserContext(), account(c), code)
	if errors.Is(err, booking.ErrNoProperty) {
		return httpapi.NotFound(httpapi.StatusNoProperty, "property with internal code "+strconv.Quote(code)+" does not exist")
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"property_id": p.PropertyID})
}
