package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// The booking engine's routes (docs/booking-engine.md; docs/booking.md, "Checkouts (the
// booking engine)"): what edge's public booking API calls, signed with the account's tenant
// context, the browser's JSON body with the seller's brand_id (and a checkout's
// checkout_id) set by edge. They answer the public API's envelope themselves, so that edge
// forwards the answer as it is: {"data": …} (201 for a new checkout), and refusals
// {"error": {"code", "field", "message"}}.

// engineAction is the idempotency action of a checkout's create.
const engineAction = "engine-checkout"

// registerEngine mounts the booking engine's routes.
func (a *API) registerEngine(app *fiber.App, auth *tenancy.Verifier) {
	a.keys.Resolve(engineAction, a.resolveCheckout)
	// EnvelopeEngine answers what escapes the handlers (a panic) in the same envelope.
	e := app.Group("/internal/engine", httpapi.Use(httpapi.EnvelopeEngine), httpapi.KindAfter("/internal/engine/", "engine."),
		a.engineErrors, tenancyfiber.Require(auth), a.live)
	e.Post("/quote", a.engineRoute(a.engineQuote))
	e.Post("/checkout/create", a.keys.Middleware(engineAction), a.engineRoute(a.checkoutCreate))
	e.Post("/checkout/get", a.engineRoute(a.checkoutGet))
	e.Post("/checkout/guest", a.engineRoute(a.checkoutGuest))
	e.Post("/checkout/confirm", a.engineRoute(a.checkoutConfirm))
	e.Post("/checkout/cancel", a.engineRoute(a.checkoutCancel))
}

// EngineError is a refusal of the public booking API.
type EngineError struct {
	HTTP                 int
	Code, Field, Message string
	// RetryAfter, in seconds, is sent as Retry-After when positive.
	RetryAfter int
}

func (e *EngineError) Error() string { return fmt.Sprintf("%d %s: %s", e.HTTP, e.Code, e.Message) }

// engineRefusal is a refusal whose message starts with its field, when it names one.
func engineRefusal(status int, code, field, msg string) *EngineError {
	if field != "" {
		msg = field + ": " + msg
	}
	return &EngineError{HTTP: status, Code: code, Field: field, Message: msg}
}

type engineErrorBody struct {
	Error engineErrorJSON `json:"error"`
}

type engineErrorJSON struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// engineErrors answers in the engine's envelope an error of what runs before a route's
// handler (the signature, the erased account, the Idempotency-Key).
func (a *API) engineErrors(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return a.writeEngineError(c, err)
	}
	return nil
}

// engineRoute answers a handler's error in the engine's envelope itself, so that the
// idempotency middleware keeps it like any answer (5xx and busy answers are not kept).
func (a *API) engineRoute(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := h(c); err != nil {
			return a.writeEngineError(c, err)
		}
		return nil
	}
}

func (a *API) writeEngineError(c *fiber.Ctx, err error) error {
	e := a.engineError(c, err)
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	return c.Status(e.HTTP).JSON(engineErrorBody{Error: engineErrorJSON{Code: e.Code, Field: e.Field, Message: e.Message}})
}

// engineFields are the engine's names of the fields the domain's rules name as interface B
// spells them.
var engineFields = map[string]string{
	"checkin": request.FieldEngineArrival, "checkout": request.FieldEngineDeparture, "numberofadults": request.FieldEngineAdults,
	"numberofchildren": request.FieldEngineChildren, "propertyId": request.FieldEngineProperty, "brandId": request.FieldEngineBrand,
}

func engineField(f string) string {
	if n, ok := engineFields[f]; ok {
		return n
	}
	return f
}

// engineError maps an error to the public API's refusal (docs/booking-engine.md, "Codes").
func (a *API) engineError(c *fiber.Ctx, err error) *EngineError {
	var (
		ee     *EngineError
		fe     *booking.FieldError
		ve     booking.Violations
		vf     *fields.Error
		ue     *booking.UnavailableError
		pe     *booking.PaymentError
		ended  *booking.CheckoutEndedError
		booked *booking.CheckoutBookedError
		noPay  *booking.NoIntentsError
		he     *httpapi.Error
	)
	switch {
	case errors.As(err, &ee):
		return ee
	case errors.As(err, &vf) && len(vf.Violations) > 0:
		v := vf.Violations[0]
		return engineRefusal(http.StatusBadRequest, "bad_request", v.Field, v.Message)
	case errors.As(err, &ve) && len(ve) > 0:
		return engineRefusal(http.StatusBadRequest, "bad_request", engineField(ve[0].Field), ve[0].Message)
	case errors.As(err, &fe):
		return engineRefusal(http.StatusBadRequest, "bad_request", engineField(fe.Field), fe.Message)
	case errors.As(err, &ue):
		return engineRefusal(http.StatusConflict, "dates_taken", "", ue.Error())
	case errors.As(err, &pe) && pe.Requires3DS:
		return engineRefusal(http.StatusPaymentRequired, "payment_declined", "card.number",
			"the card requires 3-D Secure authentication, which the test gateway does not complete: use another test card")
	case errors.As(err, &pe):
		return engineRefusal(http.StatusPaymentRequired, "payment_declined", "card.number", pe.Error())
	case errors.As(err, &ended):
		return engineRefusal(http.StatusConflict, "checkout_expired", "", ended.Error())
	case errors.As(err, &booked):
		return engineRefusal(http.StatusConflict, "checkout_booked", "", booked.Error())
	case errors.As(err, &noPay):
		return engineRefusal(http.StatusConflict, "payments_not_set_up", request.FieldEngineProperty, noPay.Error())
	case errors.Is(err, booking.ErrNoProperty):
		return engineRefusal(http.StatusNotFound, "not_found", request.FieldEngineProperty, "this website does not sell such a property")
	case errors.Is(err, booking.ErrNoCheckout):
		return engineRefusal(http.StatusNotFound, "not_found", "", "checkout does not exist")
	case errors.Is(err, booking.ErrPaymentIncomplete):
		return engineRefusal(http.StatusConflict, "payment_incomplete", "", booking.ErrPaymentIncomplete.Error())
	case errors.Is(err, booking.ErrGateway):
		a.engineLog().ErrorContext(c.UserContext(), "payment gateway failed", "err", err, "request_id", httpapi.RequestID(c))
		return &EngineError{HTTP: http.StatusServiceUnavailable, Code: "unavailable", RetryAfter: 1,
			Message: "the payment gateway could not be reached; nothing was charged or changed: retry"}
	case errors.Is(err, booking.ErrBusy), errors.Is(err, context.DeadlineExceeded):
		return &EngineError{HTTP: http.StatusServiceUnavailable, Code: "unavailable", RetryAfter: 1,
			Message: "another change of this checkout is in progress; retry"}
	case errors.As(err, &he):
		return httpEngineError(c, he)
	}
	rid := httpapi.RequestID(c)
	a.engineLog().ErrorContext(c.UserContext(), "request failed", "err", err, "route", c.Route().Path, "request_id", rid)
	return &EngineError{HTTP: http.StatusInternalServerError, Code: "internal_error", Message: "internal error; quote request id " + rid}
}

// httpEngineError is an error of the shared middleware (the signature, the
// Idempotency-Key) in the engine's envelope.
func httpEngineError(c *fiber.Ctx, he *httpapi.Error) *EngineError {
	switch {
	case len(he.Violations) > 0:
		v := he.Violations[0]
		return engineRefusal(he.HTTP, "bad_request", v.Field, v.Message)
	case he.HTTP == http.StatusServiceUnavailable:
		return &EngineError{HTTP: he.HTTP, Code: "unavailable", Message: he.Message, RetryAfter: 1}
	case he.HTTP == http.StatusConflict:
		// An Idempotency-Key whose request is still running.
		retry, _ := strconv.Atoi(string(c.Response().Header.Peek(fiber.HeaderRetryAfter)))
		return &EngineError{HTTP: he.HTTP, Code: "in_progress", Message: he.Message, RetryAfter: max(retry, 1)}
	}
	return &EngineError{HTTP: he.HTTP, Code: he.Type, Message: he.Message}
}

// SetLogger sets the logger of the failures the engine's routes answer themselves.
func (a *API) SetLogger(l *slog.Logger) { a.log = l }

func (a *API) engineLog() *slog.Logger {
	if a.log != nil {
		return a.log
	}
	return slog.Default()
}

// engineQuoteJSON is the public API's Quote.
type engineQuoteJSON struct {
	PropertyID    int64            `json:"property_id"`
	Arrival       string           `json:"arrival"`
	Departure     string           `json:"departure"`
	Nights        int              `json:"nights"`
	Adults        int              `json:"adults"`
	Children      int              `json:"children"`
	Currency      string           `json:"currency"`
	Lines         []engineLineJSON `json:"lines"`
	Total         string           `json:"total"`
	DueNow        string           `json:"due_now"`
	Schedule      []engineDueJSON  `json:"schedule"`
	DamageDeposit string           `json:"damage_deposit"`
}

type engineLineJSON struct {
	Kind   string `json:"kind"`
	Label  string `json:"label"`
	Amount string `json:"amount"`
}

type engineDueJSON struct {
	DueDate string `json:"due_date"`
	Amount  string `json:"amount"`
}

// Kinds of a quote's lines.
const (
	LineRent     = "rent"
	LineDiscount = "discount"
	LineService  = "service"
	LineTax      = "tax"
	LineFee      = "fee"
)

// engineQuoteOf is an offer as the public API shows it. Its lines add up to its total exactly:
// the rent (the nights' prices), the first night's surcharge (a fee, when the stay pays
// one), each discount (negative), each service and the tax on it, each tax. Its schedule is
// what is due after due_now, so that due_now and the schedule add up to the total too.
func engineQuoteOf(o booking.Offer) engineQuoteJSON {
	q := o.Quote
	scale := int32(0)
	if _, frac, ok := strings.Cut(q.GrandTotal, "."); ok {
		scale = int32(len(frac))
	}
	amount := func(s string) decimal.Decimal { d, _ := decimal.NewFromString(s); return d }
	l := labelsFor(o.Lang)
	out := engineQuoteJSON{PropertyID: o.PropertyID, Arrival: o.Checkin, Departure: o.Checkout, Nights: o.Nights, Adults: o.Adults,
		Children: o.Children, Currency: q.Currency, Lines: []engineLineJSON{}, Total: q.GrandTotal, DueNow: o.DueNow,
		Schedule: []engineDueJSON{}, DamageDeposit: q.DamageDeposit}
	rent := amount(q.TotalRent)
	if len(q.Nightly) > 0 {
		rent = decimal.Zero
		for _, p := range q.Nightly {
			rent = rent.Add(amount(p))
		}
	}
	out.Lines = append(out.Lines, engineLineJSON{Kind: LineRent, Label: l.rent(o.Nights), Amount: rent.StringFixed(scale)})
	if fee := amount(q.TotalRent).Sub(rent); !fee.IsZero() {
		out.Lines = append(out.Lines, engineLineJSON{Kind: LineFee, Label: l.surcharge, Amount: fee.StringFixed(scale)})
	}
	for _, d := range q.Discounts {
		out.Lines = append(out.Lines, engineLineJSON{Kind: LineDiscount, Label: d.Name, Amount: amount(d.Amount).Neg().StringFixed(scale)})
	}
	for _, s := range q.Services {
		out.Lines = append(out.Lines, engineLineJSON{Kind: LineService, Label: s.Name, Amount: s.Amount})
		if tax := amount(s.TaxAmount); !tax.IsZero() {
			out.Lines = append(out.Lines, engineLineJSON{Kind: LineTax, Label: fmt.Sprintf(l.serviceTax, s.Name), Amount: s.TaxAmount})
		}
	}
	for _, t := range q.Taxes {
		out.Lines = append(out.Lines, engineLineJSON{Kind: LineTax, Label: t.Name, Amount: t.Amount})
	}
	for _, in := range o.Later {
		out.Schedule = append(out.Schedule, engineDueJSON{DueDate: in.Due, Amount: in.Amount})
	}
	return out
}

// labels are the words of a quote's lines that booking-svc writes itself (the owner's
// services, taxes and discounts keep their own names).
type labels struct {
	night, nights string // "Rent, 1 night", "Rent, %d nights"
	surcharge     string
	serviceTax    string // "Tax on %s"
}

func (l labels) rent(n int) string {
	if n == 1 {
		return l.night
	}
	return fmt.Sprintf(l.nights, n)
}

var engineLabels = map[string]labels{
	"en": {"Rent, 1 night", "Rent, %d nights", "First-night surcharge", "Tax on %s"},
	"it": {"Affitto, 1 notte", "Affitto, %d notti", "Supplemento prima notte", "Imposta su %s"},
	"es": {"Alquiler, 1 noche", "Alquiler, %d noches", "Recargo primera noche", "Impuesto sobre %s"},
	"fr": {"Location, 1 nuit", "Location, %d nuits", "Supplément première nuit", "Taxe sur %s"},
	"de": {"Miete, 1 Nacht", "Miete, %d Nächte", "Zuschlag erste Nacht", "Steuer auf %s"},
	"pt": {"Aluguel, 1 noite", "Aluguel, %d noites", "Sobretaxa da primeira noite", "Imposto sobre %s"},
	"nl": {"Huur, 1 nacht", "Huur, %d nachten", "Toeslag eerste nacht", "Belasting op %s"},
}

// labelsFor are the labels of language lang (its base language; English when booking-svc
// has no words in it).
func labelsFor(lang string) labels {
	base, _, _ := strings.Cut(strings.ToLower(strings.ReplaceAll(lang, "_", "-")), "-")
	if l, ok := engineLabels[base]; ok {
		return l
	}
	return engineLabels["en"]
}

// engineCheckoutJSON is the public API's Checkout.
type engineCheckoutJSON struct {
	ID         string             `json:"id"`
	Status     string             `json:"status"`
	ExpiresAt  string             `json:"expires_at"`
	PropertyID int64              `json:"property_id"`
	Arrival    string             `json:"arrival"`
	Departure  string             `json:"departure"`
	Adults     int                `json:"adults"`
	Children   int                `json:"children"`
	Quote      engineQuoteJSON    `json:"quote"`
	Guest      *engineGuestJSON   `json:"guest"`
	Payment    enginePaymentJSON  `json:"payment"`
	Booking    *engineBookingJSON `json:"booking,omitempty"`
}

type engineGuestJSON struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
	Country   string `json:"country"`
	Notes     string `json:"notes"`
}

type enginePaymentJSON struct {
	Gateway        string `json:"gateway"`
	Amount         string `json:"amount"`
	Currency       string `json:"currency"`
	PublishableKey string `json:"publishable_key,omitempty"`
	ClientSecret   string `json:"client_secret,omitempty"`
}

type engineBookingJSON struct {
	ID int64 `json:"id"`
}

// engineCheckoutOf is a checkout as the public API shows it at now. The PaymentIntent's client
// secret is shown while the checkout is held only.
func engineCheckoutOf(b booking.Booking, now time.Time) engineCheckoutJSON {
	co := b.Engine
	status := booking.CheckoutStatus(b, now)
	out := engineCheckoutJSON{ID: co.ID, Status: status, ExpiresAt: co.ExpiresAt.UTC().Format(time.RFC3339), PropertyID: b.PropertyID,
		Arrival: b.Checkin, Departure: b.Checkout, Adults: b.Adults, Children: b.Children, Quote: engineQuoteOf(booking.OfferOf(b)),
		Payment: enginePaymentJSON{Gateway: co.Gateway, Amount: co.DueNow, Currency: b.Quote.Currency}}
	if co.Gateway == booking.GatewayStripe {
		out.Payment.PublishableKey = co.PublishableKey
		if status == booking.CheckoutHeld {
			out.Payment.ClientSecret = co.ClientSecret
		}
	}
	if g := b.Guest; g.FirstName != "" {
		out.Guest = &engineGuestJSON{FirstName: g.FirstName, LastName: g.LastName, Email: g.Email, Phone: g.Phone1, Country: g.Country, Notes: g.Other}
	}
	if status == booking.CheckoutBooked {
		out.Booking = &engineBookingJSON{ID: b.BookingID}
	}
	return out
}

type engineData struct {
	Data any `json:"data"`
}

func (a *API) engineQuote(c *fiber.Ctx) error {
	r, err := request.DecodeEngineStay(c.Body())
	if err != nil {
		return err
	}
	o, err := a.bookings.EngineQuote(c.UserContext(), account(c), engineStay(r))
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(engineData{Data: engineQuoteOf(o)})
}

func engineStay(r request.EngineStay) booking.EngineStay {
	return booking.EngineStay{BrandID: int64(r.BrandID), PropertyID: int64(r.PropertyID), Checkin: pricing.DateOf(r.Arrival),
		Checkout: pricing.DateOf(r.Departure), Adults: r.Adults, Children: r.Children, Lang: r.Lang}
}

// checkoutCreate holds a stay: 201 and the new checkout. Its Idempotency-Key is required: the
// same key answers the same checkout.
func (a *API) checkoutCreate(c *fiber.Ctx) error {
	r, err := request.DecodeEngineStay(c.Body())
	if err != nil {
		return err
	}
	att := idempotency.From(c)
	if att == nil {
		return engineRefusal(http.StatusBadRequest, "bad_request", idempotency.Header, "is required: the same key answers the same checkout")
	}
	nc := booking.NewCheckout{EngineStay: engineStay(r), Sandbox: tenancyfiber.From(c).Sandbox}
	// The booking's id is recorded with the key before the booking is written: a retry after
	// a crash finds what this attempt did (resolveCheckout).
	if nc.ID, err = a.bookings.NewBookingID(c.UserContext()); err != nil {
		return err
	}
	if err := att.Reserve(c.UserContext(), nc.ID); err != nil {
		return err
	}
	b, err := a.bookings.CreateCheckout(c.UserContext(), account(c), nc)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(engineData{Data: engineCheckoutOf(b, a.bookings.Now())})
}

// resolveCheckout: an earlier attempt of the same key whose checkout was made (held, or
// booked or ended since) is answered with that checkout; one that never held anything did
// not, and the request runs again under a new booking id.
func (a *API) resolveCheckout(c *fiber.Ctx, att *idempotency.Attempt) (bool, error) {
	for _, id := range att.Refs {
		if err := a.bookings.Settle(c.UserContext(), account(c), id); err != nil {
			return true, a.writeEngineError(c, err)
		}
		b, err := a.bookings.ResumeCheckout(c.UserContext(), account(c), id)
		if errors.Is(err, booking.ErrNoCheckout) {
			continue
		}
		if err != nil {
			return true, a.writeEngineError(c, err)
		}
		return true, c.Status(http.StatusCreated).JSON(engineData{Data: engineCheckoutOf(b, a.bookings.Now())})
	}
	return false, nil
}

func (a *API) checkoutGet(c *fiber.Ctx) error {
	r, err := request.DecodeEngineCheckout(c.Body())
	if err != nil {
		return err
	}
	b, err := a.bookings.FindCheckout(c.UserContext(), account(c), int64(r.BrandID), r.CheckoutID)
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(engineData{Data: engineCheckoutOf(b, a.bookings.Now())})
}

func (a *API) checkoutGuest(c *fiber.Ctx) error {
	r, err := request.DecodeEngineGuest(c.Body())
	if err != nil {
		return err
	}
	g := booking.Guest{FirstName: r.FirstName, LastName: r.LastName, Email: r.Email, Phone1: r.Phone, Country: r.Country, Other: r.Notes}
	b, err := a.bookings.CheckoutGuest(c.UserContext(), account(c), int64(r.BrandID), r.CheckoutID, g)
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(engineData{Data: engineCheckoutOf(b, a.bookings.Now())})
}

func (a *API) checkoutConfirm(c *fiber.Ctx) error {
	r, err := request.DecodeEngineConfirm(c.Body(), a.now())
	if err != nil {
		return err
	}
	b, err := a.bookings.ConfirmCheckout(c.UserContext(), account(c), int64(r.BrandID), r.CheckoutID, r.Card)
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(engineData{Data: engineCheckoutOf(b, a.bookings.Now())})
}

func (a *API) checkoutCancel(c *fiber.Ctx) error {
	r, err := request.DecodeEngineCheckout(c.Body())
	if err != nil {
		return err
	}
	b, err := a.bookings.CancelCheckout(c.UserContext(), account(c), int64(r.BrandID), r.CheckoutID)
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(engineData{Data: engineCheckoutOf(b, a.bookings.Now())})
}
