package api

import (
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// quote: getinfo, the temporary quote.
func (a *API) quote(c *fiber.Ctx) error {
	q, err := request.DecodeQuote(c.Body())
	if err != nil {
		return err
	}
	st := booking.Stay{PropertyID: int64(q.PropertyID), Checkin: pricing.DateOf(q.Checkin), Checkout: pricing.DateOf(q.Checkout),
		Adults: q.Adults, Children: q.Children, Services: servicesOf(q.Services), Currency: q.Currency,
		RatePlanID: int64(q.RatePlanID), Channel: q.Channel}
	p, pr, err := a.bookings.Quote(c.UserContext(), account(c), st, q.PromotionCode, int64(q.BrandID))
	if err != nil {
		return domainError(err)
	}
	price := priceOf(pr.Quote(), pr.Result.NightCount, p.Name, p.PropertyID,
		st.Checkin.String()+" "+booking.CheckinTime, st.Checkout.String()+" "+booking.CheckoutTime, q.Adults, q.Children)
	return httpapi.B(c, withPlans(quoteOf(price, q.Include, booking.DiscountTexts(pr.Result)), pr.Terms, pr.Offers))
}

// bookingOf is the booking object, its timestamps in the property's time zone.
func (a *API) bookingOf(c *fiber.Ctx, b booking.Booking) bookingJSON {
	return bookingOf(b, a.bookings.Location(c.UserContext(), account(c), b.PropertyID))
}

// create books a stay.
func (a *API) create(c *fiber.Ctx) error {
	b, err := request.DecodeCreate(c.Body(), a.now())
	if err != nil {
		return err
	}
	nb := newBooking(b)
	nb.Sandbox = tenancyfiber.From(c).Sandbox
	if att := idempotency.From(c); att != nil {
		// The booking's id is recorded with the key before the booking is written: a retry
		// after a crash finds what this attempt did (resolveCreate).
		if nb.ID, err = a.bookings.NewBookingID(c.UserContext()); err != nil {
			return err
		}
		if err := att.Reserve(c.UserContext(), nb.ID); err != nil {
			return err
		}
		nb.ChargeKey = att.Token()
	}
	rec, err := a.bookings.Create(c.UserContext(), account(c), nb)
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, a.bookingOf(c, rec))
}

// update changes a booking: the domain lays the fields sent over the stored booking and
// checks and prices the result as a whole.
func (a *API) update(c *fiber.Ctx) error {
	u, err := request.DecodeUpdate(c.Body(), a.now())
	if err != nil {
		return err
	}
	rec, err := a.bookings.Update(c.UserContext(), account(c), int64(u.BookingID), patchOf(u))
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, a.bookingOf(c, rec))
}

func (a *API) cancel(c *fiber.Ctx) error {
	r, err := request.DecodeCancel(c.Body())
	if err != nil {
		return err
	}
	res, err := a.bookings.CancelWith(c.UserContext(), account(c), int64(r.BookingID),
		booking.CancelOptions{RefundAmount: r.RefundAmount, RefundReason: r.RefundReason})
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, a.cancelledOf(c, res))
}

// cancelJSON is cancel's answer: the booking id, and the refund the cancellation decided
// (docs/money.md).
type cancelJSON struct {
	BookingID int64       `json:"bookingId"`
	Refund    *refundJSON `json:"refund,omitempty"`
	// DepositHold is the damage-deposit hold, released by the cancellation.
	DepositHold *depositJSON `json:"depositHold,omitempty"`
}

func (a *API) cancelledOf(c *fiber.Ctx, b booking.Booking) cancelJSON {
	loc := a.bookings.Location(c.UserContext(), account(c), b.PropertyID)
	return cancelJSON{BookingID: b.BookingID, Refund: refundOf(b, loc), DepositHold: depositOf(b.Deposit, loc)}
}

// retryRefund starts the failed parts of a cancelled booking's refund again; the answer is
// the booking.
func (a *API) retryRefund(c *fiber.Ctx) error {
	r, err := request.DecodeRetryRefund(c.Body())
	if err != nil {
		return err
	}
	rec, err := a.bookings.RetryRefund(c.UserContext(), account(c), int64(r.BookingID))
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, a.bookingOf(c, rec))
}

// insertService adds services to a booking; the answer lists all of them.
func (a *API) insertService(c *fiber.Ctx) error {
	r, err := request.DecodeInsertService(c.Body())
	if err != nil {
		return err
	}
	rec, err := a.bookings.InsertServices(c.UserContext(), account(c), int64(r.BookingID), *servicesOf(r.Services))
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, insertedOf(a.bookingOf(c, rec)))
}

func (a *API) list(c *fiber.Ctx) error {
	l, err := request.DecodeList(c.Body())
	if err != nil {
		return err
	}
	f := booking.ListFilter{UserID: int64(l.UserID), BookingID: int64(l.BookingID), PropertyID: int64(l.PropertyID),
		BrandID: int64(l.BrandID), Keyword: l.Keyword, Skip: int64(l.Offset()), Limit: int64(l.Limit)}
	if !l.Checkin.IsZero() {
		f.From = l.Checkin.Format(time.DateOnly)
	}
	if !l.Checkout.IsZero() {
		f.To = l.Checkout.Format(time.DateOnly)
	}
	recs, total, err := a.bookings.List(c.UserContext(), account(c), f)
	if err != nil {
		return err
	}
	out := make([]bookingJSON, len(recs))
	locs := map[int64]*time.Location{} // a page's bookings share few properties: one look-up each
	for i, r := range recs {
		loc, ok := locs[r.PropertyID]
		if !ok {
			loc = a.bookings.Location(c.UserContext(), account(c), r.PropertyID)
			locs[r.PropertyID] = loc
		}
		out[i] = bookingOf(r, loc)
	}
	return httpapi.B(c, fiber.Map{"totalRecords": total, "listBooking": out})
}

func paymentInput(p request.Payment) booking.PaymentInput {
	in := booking.PaymentInput{Amount: p.Amount, Time: p.Time}
	if p.Description != nil {
		in.Description = *p.Description
	}
	if p.Currency != nil {
		in.Currency = *p.Currency
	}
	return in
}

// paymentID reads the client's payment id; ours are numbers, so any other text is an
// unknown payment.
func paymentID(p request.Payment) (int64, error) {
	id, err := strconv.ParseInt(p.PaymentID, 10, 64)
	if err != nil || id < 1 {
		return 0, httpapi.NotFound(httpapi.StatusNotFound, "payment does not exist")
	}
	return id, nil
}

func paymentError(err error) error {
	if errors.Is(err, booking.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, "payment does not exist")
	}
	return domainError(err)
}

func (a *API) addPayment(c *fiber.Ctx) error {
	p, err := request.DecodePayment(c.Body(), request.AddPayment, a.now())
	if err != nil {
		return err
	}
	in := paymentInput(p)
	if att := idempotency.From(c); att != nil {
		if in.ID, err = a.bookings.NewPaymentID(c.UserContext()); err != nil {
			return err
		}
		if err := att.Reserve(c.UserContext(), in.ID); err != nil {
			return err
		}
	}
	id, err := a.bookings.AddPayment(c.UserContext(), account(c), int64(p.BookingID), in)
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, fiber.Map{"paymentId": strconv.FormatInt(id, 10)})
}

func (a *API) updatePayment(c *fiber.Ctx) error {
	p, err := request.DecodePayment(c.Body(), request.UpdatePayment, a.now())
	if err != nil {
		return err
	}
	id, err := paymentID(p)
	if err != nil {
		return err
	}
	if err := a.bookings.UpdatePayment(c.UserContext(), account(c), id, paymentInput(p)); err != nil {
		return paymentError(err)
	}
	return httpapi.B(c, fiber.Map{"paymentId": p.PaymentID})
}

func (a *API) removePayment(c *fiber.Ctx) error {
	p, err := request.DecodePayment(c.Body(), request.RemovePayment, a.now())
	if err != nil {
		return err
	}
	id, err := paymentID(p)
	if err != nil {
		return err
	}
	if err := a.bookings.RemovePayment(c.UserContext(), account(c), id); err != nil {
		return paymentError(err)
	}
	return httpapi.B(c, fiber.Map{"paymentId": p.PaymentID})
}

// arrival: updatearrivalform; detailInformation replaces the guest list.
func (a *API) arrival(c *fiber.Ctx) error {
	r, err := request.DecodeArrival(c.Body(), a.now())
	if err != nil {
		return err
	}
	if err := a.bookings.SetArrival(c.UserContext(), account(c), int64(r.BookingID), r.Form); err != nil {
		return domainError(err)
	}
	return httpapi.B(c, fiber.Map{"message": "Complete"})
}

func (a *API) addUser(c *fiber.Ctx) error {
	n, err := request.DecodeAddUser(c.Body())
	if err != nil {
		return err
	}
	u, err := a.users.Add(c.UserContext(), account(c), n)
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, userOf(u))
}

func (a *API) updateUser(c *fiber.Ctx) error {
	up, err := request.DecodeUpdateUser(c.Body())
	if err != nil {
		return err
	}
	u, err := a.users.Update(c.UserContext(), account(c), up)
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, userOf(u))
}

func (a *API) login(c *fiber.Ctx) error {
	cr, err := request.DecodeLogin(c.Body())
	if err != nil {
		return err
	}
	u, err := a.users.Login(c.UserContext(), account(c), cr)
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, userOf(u))
}

func (a *API) socialUser(c *fiber.Ctx) error {
	s, err := request.DecodeSocialUser(c.Body())
	if err != nil {
		return err
	}
	u, err := a.users.Social(c.UserContext(), account(c), s)
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, userOf(u))
}

// blockDate: interface A extension /api/property-blockdate, create or delete a block of
// nights (docs/interface-a.md).
func (a *API) blockDate(c *fiber.Ctx) error {
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: []string{"create", "delete"}})
	blk := o.Object("block", true)
	if action == "delete" {
		id, _ := blk.Int("block_id", fields.Int{Required: true, Min: 1, Max: 1 << 53})
		if err := v.Err(); err != nil {
			return err
		}
		if err := a.bookings.DeleteBlock(c.UserContext(), account(c), int64(id)); err != nil {
			if errors.Is(err, booking.ErrNotFound) {
				return httpapi.NotFound(httpapi.StatusNotFound, "block "+strconv.Itoa(id)+" does not exist")
			}
			if errors.Is(err, booking.ErrImportedBlock) {
				return httpapi.Conflict(httpapi.StatusConflict, "block "+strconv.Itoa(id)+" was imported from an iCal feed; change or remove the feed instead")
			}
			return domainError(err)
		}
		return httpapi.A(c, nil)
	}
	code, _ := blk.String("internal_code", fields.Str{Required: true, Max: 10})
	start, okS := blk.Date("start_date", true)
	end, okE := blk.Date("end_date", true)
	memo, _ := blk.String("memo", fields.Str{Max: 500})
	if okS && okE {
		switch n := int(end.Sub(start).Hours()/24) + 1; {
		case n < 1:
			blk.Add("end_date", "must not be before start_date")
		case n > booking.MaxBlockNights:
			blk.Addf("end_date", "must be at most %d days after start_date", booking.MaxBlockNights-1)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	b, err := a.bookings.CreateBlock(c.UserContext(), account(c), booking.BlockRequest{InternalCode: code,
		Start: pricing.DateOf(start), End: pricing.DateOf(end), Memo: memo})
	var ue *booking.UnavailableError
	switch {
	case errors.Is(err, booking.ErrNoProperty):
		return httpapi.NotFound(httpapi.StatusNoProperty, "property with internal_code \""+code+"\" does not exist")
	case errors.As(err, &ue):
		return httpapi.Conflict(httpapi.StatusDatesUnavailable, ue.Error())
	case err != nil:
		return err
	}
	return httpapi.A(c, fiber.Map{"block_id": b.BlockID})
}
