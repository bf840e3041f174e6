package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// POST /internal/channel/reservation: integration-svc applies one revision of a channel
// reservation (docs/channels.md, "Reservations in"). Plain JSON answers:
//
//	200 {"booking_id","status","version","applied"}
//	409 {"conflict":{"reason":"nights_taken","nights":[…],"booking_ids":[…]}}
//	404 {"error":{"code":"reservation_unknown",…}}
//	422 {"error":{"code":"invalid"|"unknown_property","field","message"}}

func (a *API) registerChannel(app *fiber.App, auth *tenancy.Verifier) {
	ch := app.Group("/internal/channel", httpapi.Use(httpapi.EnvelopeA), httpapi.KindAfter("/internal/channel/", "channel."),
		tenancyfiber.Require(auth), a.live)
	ch.Post("/reservation", a.channelReservation)
}

type channelErrorJSON struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func channelError(c *fiber.Ctx, status int, e channelErrorJSON) error {
	return c.Status(status).JSON(fiber.Map{"error": e})
}

// decodeChannelRevision reads the body; every rule names its field.
func decodeChannelRevision(body []byte) (booking.ChannelRevision, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	conn, _ := o.Int("connection_id", fields.Int{Required: true, Min: 1})
	channel, _ := o.String("channel", fields.Str{Max: 100})
	res, _ := o.String("reservation_id", fields.Str{Required: true, Min: 1, Max: 255})
	rev, _ := o.String("revision_id", fields.Str{Required: true, Min: 1, Max: 255})
	order, _ := o.Int("order", fields.Int{Min: 0})
	status, _ := o.String("status", fields.Str{Required: true, OneOf: []string{booking.ChannelNew, booking.ChannelModified, booking.ChannelCancelled}})
	r := booking.ChannelRevision{ConnectionID: int64(conn), Channel: channel, ReservationID: res, RevisionID: rev, Order: int64(order), Status: status}
	if status == booking.ChannelCancelled {
		// A cancellation names its reservation; the rest, when sent, is not read.
		return r, v.Err()
	}
	pid, _ := o.Int("property_id", fields.Int{Required: true, Min: 1})
	plan, _ := o.Int("rate_plan_id", fields.Int{Min: 0})
	in, okI := o.Date("checkin", true)
	out, okO := o.Date("checkout", true)
	// The nights must be held whatever the channel says of the party: a stay for no adult
	// (a channel that sends none) is booked for one.
	adults, _ := o.Int("adults", fields.Int{Max: 100})
	adults = max(adults, 1)
	children, _ := o.Int("children", fields.Int{Max: 100})
	cur, _ := o.String("currency", fields.Str{Required: true, Min: 3, Max: 3})
	total, okT := o.Decimal("total", fields.Dec{Required: true})
	commission, okC := o.Decimal("commission", fields.Dec{})
	g := o.Object("guest", false)
	first, _ := g.String("first_name", fields.Str{Max: 100})
	last, _ := g.String("last_name", fields.Str{Max: 100})
	email, _ := g.String("email", fields.Str{Max: fields.MaxEmail})
	phone, _ := g.String("phone", fields.Str{Max: 50})
	country, _ := g.String("country", fields.Str{Max: 2})
	notes, _ := o.String("notes", fields.Str{Max: 4000})
	if okI && okO {
		switch n := pricing.DaysBetween(pricing.DateOf(in), pricing.DateOf(out)); {
		case n < 1:
			v.Add("checkout", "must be after checkin")
		case n > booking.MaxNights:
			v.Add("checkout", fmt.Sprintf("must be at most %d nights after checkin", booking.MaxNights))
		}
	}
	r.PropertyID, r.RatePlanID = int64(pid), int64(plan)
	r.Checkin, r.Checkout, r.Adults, r.Children = pricing.DateOf(in), pricing.DateOf(out), adults, children
	if okC && okT && commission.GreaterThan(total) {
		v.Add("commission", "must be at least 0 and at most total")
	}
	r.Currency, r.Total, r.Commission, r.Notes = cur, total, commission, notes
	r.Guest = booking.Guest{FirstName: first, LastName: last, Email: email, Phone1: phone, Country: country}
	return r, v.Err()
}

func (a *API) channelReservation(c *fiber.Ctx) error {
	r, err := decodeChannelRevision(c.Body())
	var fe *fields.Error
	if errors.As(err, &fe) {
		f := fe.Violations[0]
		return channelError(c, http.StatusUnprocessableEntity, channelErrorJSON{Code: "invalid", Field: f.Field, Message: f.Field + ": " + f.Message})
	}
	if err != nil {
		return err
	}
	res, err := a.bookings.ApplyChannel(c.UserContext(), account(c), r)
	var ce *booking.ChannelConflictError
	var fde *booking.FieldError
	switch {
	case err == nil:
		b := res.Booking
		return c.JSON(fiber.Map{"booking_id": b.BookingID, "status": b.Status, "version": b.Version, "applied": res.Applied})
	case errors.As(err, &ce):
		return c.Status(http.StatusConflict).JSON(fiber.Map{"conflict": fiber.Map{"reason": "nights_taken", "nights": ce.Nights,
			"booking_ids": ce.BookingIDs}})
	case errors.Is(err, booking.ErrReservationUnknown):
		return channelError(c, http.StatusNotFound, channelErrorJSON{Code: "reservation_unknown",
			Message: fmt.Sprintf("reservation %q of connection %d has no booking", r.ReservationID, r.ConnectionID)})
	case errors.Is(err, booking.ErrNoProperty):
		return channelError(c, http.StatusUnprocessableEntity, channelErrorJSON{Code: "unknown_property", Field: "property_id",
			Message: fmt.Sprintf("property %d does not exist", r.PropertyID)})
	case errors.Is(err, booking.ErrBusy):
		c.Set(fiber.HeaderRetryAfter, "1")
		return channelError(c, http.StatusServiceUnavailable, channelErrorJSON{Code: "busy", Message: booking.ErrBusy.Error()})
	case errors.As(err, &fde):
		return channelError(c, http.StatusUnprocessableEntity, channelErrorJSON{Code: "invalid", Field: fde.Field, Message: fde.Error()})
	}
	return domainError(err)
}
