// Package api is booking-svc's HTTP adapter: the interface B actions edge forwards to
// /internal/b/{action} and the block-date resource of interface A. Handlers decode with the
// request package, call the booking domain and answer in the interface's envelope.
package api

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/feedsync"
	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/owners"
	"github.com/vros/vros/booking-svc/internal/statement"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// StatusLoginFailed is interface B's status for a wrong user email or password.
const StatusLoginFailed = 80

// API serves booking-svc's routes.
type API struct {
	bookings *booking.Service
	feeds    *feedsync.Syncer
	users    *booking.Users
	keys     *idempotency.Keys
	now      func() time.Time
	// erased, when set, tells the erased accounts (RefuseErased).
	erased func(account string) bool
	// requests counts the interface routes' answers (Instrument; nil: none).
	requests *requestMetrics
	// owners serves the owner resources of interface A (SetOwners; nil: not served).
	owners *owners.Service
	// log logs the failures the booking engine's routes answer themselves (SetLogger; nil:
	// slog's default).
	log *slog.Logger
	// statements serves the owner statements (SetStatements; nil: 503).
	statements *statement.Service
	// books answers /api/account-ledger (SetLedger; nil: 503).
	books *journal.Service
}

// RefuseErased makes the interface routes refuse an erased account, as edge does once its
// credentials are gone: a request that reaches booking-svc anyway (on its way when the
// account was erased) changes nothing.
func (a *API) RefuseErased(erased func(account string) bool) { a.erased = erased }

// countB and countA count the answers of the interface routes (Instrument), or pass.
func (a *API) countB(c *fiber.Ctx) error {
	if a.requests == nil {
		return c.Next()
	}
	return a.requests.countB(c)
}

func (a *API) countA(c *fiber.Ctx) error {
	if a.requests == nil {
		return c.Next()
	}
	return a.requests.countA(c)
}

// live refuses the requests of an erased account.
func (a *API) live(c *fiber.Ctx) error {
	if a.erased != nil && a.erased(account(c)) {
		return httpapi.Unauthorized("the account does not exist")
	}
	return c.Next()
}

// New returns the API.
func New(b *booking.Service, f *feedsync.Syncer, u *booking.Users, k *idempotency.Keys) *API {
	return &API{bookings: b, feeds: f, users: u, keys: k, now: time.Now}
}

// IntegrationRoutes are the routes integration-svc may call with its own key (the grant of
// tenancy.CallerIntegration, docs/internal-auth.md): the hooks and iCal routes it reads and
// writes; every other route accepts edge's key alone.
var IntegrationRoutes = []string{"GET /internal/hooks/booking/:id", "GET /internal/ical/property", "POST /internal/ical/sync",
	"POST /internal/channel/reservation"}

// MessagingRoutes are the routes messaging-svc may call with its own key (the grant of
// tenancy.CallerMessaging, docs/internal-auth.md): the booking a message shows, read when it
// is composed; every other route refuses its key.
var MessagingRoutes = []string{"GET /internal/hooks/booking/:id"}

// Register mounts the routes behind the signature check.
func (a *API) Register(app *fiber.App, auth *tenancy.Verifier) {
	b := app.Group("/internal/b", httpapi.Use(httpapi.EnvelopeB), httpapi.KindAfter("/internal/b/", "B."), a.countB,
		tenancyfiber.Require(auth), a.live)
	a.keys.Resolve("create", a.resolveCreate)
	a.keys.Resolve("update", a.resolveChange)
	a.keys.Resolve("cancel", a.resolveCancel)
	a.keys.Resolve("addbookingpayment", a.resolveAddPayment)
	once := a.keys.Middleware
	b.Post("/getinfo", a.quote)
	b.Post("/create", once("create"), a.create)
	b.Post("/update", once("update"), a.update)
	b.Post("/cancel", once("cancel"), a.cancel)
	b.Post("/retryrefund", a.retryRefund)
	b.Post("/insertservice", a.insertService)
	b.Post("/listbooking", a.list)
	b.Post("/addbookingpayment", once("addbookingpayment"), a.addPayment)
	b.Post("/updatebookingpayment", once("updatebookingpayment"), a.updatePayment)
	b.Post("/removebookingpayment", once("removebookingpayment"), a.removePayment)
	b.Post("/updatearrivalform", a.arrival)
	b.Post("/adduser", a.addUser)
	b.Post("/updateuser", a.updateUser)
	b.Post("/login", a.login)
	b.Post("/usesocialuser", a.socialUser)
	a.registerDeposits(b)

	a1 := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), httpapi.KindAfter("/internal/a/", "A."), a.countA,
		tenancyfiber.Require(auth), a.live)
	a1.Post("/property-blockdate", a.blockDate)
	a1.Post("/owner-statement", a.ownerStatement)
	a1.Post("/account-ledger", a.accountLedger)
	a.registerStatements(app) // the owners' links: no tenant, the token is the capability
	a.registerOwners(a1)

	// The account as a whole, for edge's admin API (docs/booking.md, "Export and erasure").
	acct := app.Group("/internal/account", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth))
	acct.Get("/usage", a.usage)
	acct.Get("/export", a.export)
	acct.Post("/guests/erase", a.eraseGuest)

	// integration-svc's reads and writes for webhooks and iCal import (docs/booking.md,
	// "Integrations").
	hooks := app.Group("/internal/hooks", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth), a.live)
	hooks.Get("/booking/:id", a.hookBooking)
	ical := app.Group("/internal/ical", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth), a.live)
	ical.Get("/property", a.icalProperty)
	ical.Post("/sync", a.icalSync)
	a.registerChannel(app, auth)

	// The booking engine's checkouts, for edge's public booking API (docs/booking-engine.md).
	a.registerEngine(app, auth)
}

// domainError maps the domain's errors to the interface's statuses (docs/interface-b.md).
func domainError(err error) error {
	var fe *booking.FieldError
	var ve booking.Violations
	var ue *booking.UnavailableError
	var pe *booking.PaymentError
	switch {
	case errors.As(err, &ve):
		var v fields.Violations
		for _, f := range ve {
			v.Add(f.Field, f.Message)
		}
		return v.Err()
	case errors.As(err, &fe):
		return httpapi.InvalidField(fe.Field, fe.Message)
	case errors.As(err, &ue):
		return httpapi.Conflict(httpapi.StatusDatesUnavailable, ue.Error())
	case errors.As(err, &pe) && pe.Requires3DS:
		return &httpapi.Error{HTTP: http.StatusUnprocessableEntity, Type: "payment_3ds", Status: httpapi.StatusPayment3DS,
			Message: "payment with 3-D Secure cards is not supported through this interface"}
	case errors.As(err, &pe):
		return &httpapi.Error{HTTP: http.StatusPaymentRequired, Type: "payment_failed", Status: httpapi.StatusPaymentFailed,
			Message: "payment did not succeed: " + pe.Reason}
	case errors.Is(err, booking.ErrNoProperty):
		return httpapi.NotFound(httpapi.StatusNoProperty, "property does not exist")
	case errors.Is(err, booking.ErrNoBooking):
		return httpapi.NotFound(httpapi.StatusNoBooking, "booking id does not exist")
	case errors.Is(err, booking.ErrCancelled):
		return httpapi.Conflict(httpapi.StatusConflict, "booking is cancelled")
	case errors.Is(err, booking.ErrBusy):
		// Not kept for an Idempotency-Key: the same request may succeed when retried.
		return idempotency.Transient(httpapi.Conflict(httpapi.StatusConflict, booking.ErrBusy.Error()))
	case errors.Is(err, booking.ErrEmailTaken):
		return httpapi.Conflict(httpapi.StatusConflict, booking.ErrEmailTaken.Error())
	case errors.Is(err, booking.ErrNoUser):
		return httpapi.NotFound(httpapi.StatusNotFound, "user does not exist")
	case errors.Is(err, booking.ErrLogin):
		return &httpapi.Error{HTTP: http.StatusUnauthorized, Type: "login_failed", Status: StatusLoginFailed, Message: booking.ErrLogin.Error()}
	}
	return err
}

func account(c *fiber.Ctx) string { return tenancyfiber.From(c).AccountID }
