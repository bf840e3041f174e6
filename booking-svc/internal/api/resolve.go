package api

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/libs/httpapi"
)

// The resolvers run when a retry takes over an Idempotency-Key whose attempt stopped without
// an answer (docs/booking.md, "Idempotency"). Each settles what the stopped attempt left —
// the ledger change it had begun, as the janitor would later — and answers with the outcome
// it committed, if it did; otherwise the request runs again, which is then safe.

// settle finishes a stopped change of booking id; a change still running is "busy".
func (a *API) settle(c *fiber.Ctx, id int64) error {
	if err := a.bookings.Settle(c.UserContext(), account(c), id); err != nil {
		return domainError(err)
	}
	return nil
}

// resolveCreate: an earlier attempt whose booking became reserved is answered with that
// booking; one whose booking is pending or failed (or was never written) did not book, and
// the request runs again under a new booking id.
func (a *API) resolveCreate(c *fiber.Ctx, att *idempotency.Attempt) (bool, error) {
	for _, id := range att.Refs {
		if err := a.settle(c, id); err != nil {
			return false, err
		}
		b, err := a.bookings.BookingAnyStatus(c.UserContext(), account(c), id)
		if errors.Is(err, booking.ErrNoBooking) {
			continue
		}
		if err != nil {
			return false, err
		}
		if b.Status == booking.StatusReserved || b.Status == booking.StatusCancelled {
			return true, httpapi.B(c, a.bookingOf(c, b))
		}
	}
	return false, nil
}

// resolveChange (update): the change is settled and made again; an update sets the booking
// to the state it asks for, so making it again leaves the booking as one update would (a
// charge is keyed by the booking's version, so the card is not charged twice).
func (a *API) resolveChange(c *fiber.Ctx, _ *idempotency.Attempt) (bool, error) {
	u, err := request.DecodeUpdate(c.Body(), a.now())
	if err != nil {
		return false, nil // the request answers its own error
	}
	return false, a.settle(c, int64(u.BookingID))
}

// resolveCancel: a booking found cancelled once the stopped cancel is settled is answered
// as cancelled; otherwise the cancel runs again.
func (a *API) resolveCancel(c *fiber.Ctx, _ *idempotency.Attempt) (bool, error) {
	r, err := request.DecodeCancel(c.Body())
	if err != nil {
		return false, nil
	}
	id := int64(r.BookingID)
	if err := a.settle(c, id); err != nil {
		return false, err
	}
	b, err := a.bookings.BookingAnyStatus(c.UserContext(), account(c), id)
	if err == nil && b.Status == booking.StatusCancelled {
		return true, httpapi.B(c, a.cancelledOf(c, b))
	}
	return false, nil
}

// resolveAddPayment: a payment an earlier attempt recorded on the booking is answered;
// otherwise the payment is recorded now.
func (a *API) resolveAddPayment(c *fiber.Ctx, att *idempotency.Attempt) (bool, error) {
	p, err := request.DecodePayment(c.Body(), request.AddPayment, a.now())
	if err != nil {
		return false, nil
	}
	b, err := a.bookings.BookingAnyStatus(c.UserContext(), account(c), int64(p.BookingID))
	if err != nil {
		return false, nil
	}
	for _, id := range att.Refs {
		if _, ok := b.Payments[id]; ok {
			return true, httpapi.B(c, fiber.Map{"paymentId": strconv.FormatInt(id, 10)})
		}
	}
	return false, nil
}
