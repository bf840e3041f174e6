package api

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/libs/httpapi"
)

// The damage-deposit actions of interface B (docs/money.md, "Damage-deposit holds"): each
// answers the booking, with its depositHold, as update does.

func (a *API) registerDeposits(b fiber.Router) {
	b.Post("/"+request.CaptureDepositAction, a.captureDeposit)
	b.Post("/"+request.ReleaseDepositAction, a.releaseDeposit)
}

func (a *API) captureDeposit(c *fiber.Ctx) error {
	r, err := request.DecodeCaptureDeposit(c.Body())
	if err != nil {
		return err
	}
	rec, err := a.bookings.CaptureDeposit(c.UserContext(), account(c), int64(r.BookingID), booking.CaptureInput{Amount: r.Amount, Reason: r.Reason})
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, a.bookingOf(c, rec))
}

func (a *API) releaseDeposit(c *fiber.Ctx) error {
	r, err := request.DecodeReleaseDeposit(c.Body())
	if err != nil {
		return err
	}
	rec, err := a.bookings.ReleaseDeposit(c.UserContext(), account(c), int64(r.BookingID))
	if err != nil {
		return domainError(err)
	}
	return httpapi.B(c, a.bookingOf(c, rec))
}

// depositJSON is a booking's depositHold: amounts in the deposit's currency, dates
// YYYY-MM-DD, timestamps in the property's zone (null until they happen).
type depositJSON struct {
	Status           string       `json:"status"`
	Amount           json.Number  `json:"amount"`
	Currency         string       `json:"currency"`
	DueDate          string       `json:"dueDate"`
	HeldAt           *string      `json:"heldAt"`
	AuthorizationID  *string      `json:"authorizationId"`
	Reauthorizations int          `json:"reauthorizations"`
	ReleaseOn        string       `json:"releaseOn"`
	ReleasedAt       *string      `json:"releasedAt"`
	CapturedAmount   *json.Number `json:"capturedAmount"`
	CaptureReason    *string      `json:"captureReason"`
	CapturedAt       *string      `json:"capturedAt"`
	LastError        *string      `json:"lastError"`
}

func depositOf(d *booking.DepositHold, loc *time.Location) *depositJSON {
	if d == nil {
		return nil
	}
	at := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.In(loc).Format(dateTime)
		return &s
	}
	text := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	out := &depositJSON{Status: d.Status, Amount: money(d.Amount), Currency: d.Currency, DueDate: d.DueDate, HeldAt: at(d.HeldAt),
		AuthorizationID: text(d.AuthorizationID), Reauthorizations: d.Reauthorizations, ReleaseOn: d.ReleaseOn,
		ReleasedAt: at(d.ReleasedAt), CaptureReason: text(d.CaptureReason), CapturedAt: at(d.CapturedAt), LastError: text(d.LastError)}
	if d.Status == booking.DepositCaptured { // before, CapturedAmount is a capture under way
		n := money(d.CapturedAmount)
		out.CapturedAmount = &n
	}
	return out
}
