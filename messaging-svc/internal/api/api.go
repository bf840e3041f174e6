// Package api serves messaging-svc's interface A resources (docs/messaging.md, "Interface A
// resources"), which edge forwards from /api/{name} to POST /internal/a/{name}:
// message-template, message-trigger, message-log, messaging-settings and
// message-suppression. Every request carries edge's signed tenant (libs/tenancy); everything
// is read and written for that account only. Bodies are read with libs/fields, every
// violation named by its JSON path, and answered in interface A's envelope (libs/httpapi).
package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/messaging-svc/internal/compose"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
)

// Resources are the interface A resources this package serves, as edge names them.
var Resources = []string{"message-template", "message-trigger", "message-log", "messaging-settings", "message-suppression"}

// ErrNoBooking is what a Previewer's error wraps (errors.Is) when the account has no such
// booking: preview answers 404. It is compose's, which the service's Previewer answers.
var ErrNoBooking = compose.ErrNoBooking

// Previewer builds the data of a message about a real booking of the account (the service's
// compose package implements it, reading the booking from booking-svc). Its error wraps
// ErrNoBooking when the account has no such booking (404); an *httpapi.Error is answered as
// it is; any other error is a 500.
type Previewer interface {
	Data(ctx context.Context, account string, booking int64, trig, lang string) (template.Data, error)
}

// Replanner re-plans the scheduled messages of the account's live bookings after its trigger
// settings changed (the intake implements it).
type Replanner interface {
	Replan(ctx context.Context, account string) error
}

// Tester sends a test message to address through the account's transport now, and answers
// the provider's answer (the server's reply to the message) or why it failed.
type Tester interface {
	Test(ctx context.Context, account, address string) (answer string, err error)
}

// Views tells which properties and brands an account has, and whether it was erased
// (*store.Views).
type Views interface {
	Property(ctx context.Context, account string, id int64) (store.PropertyView, bool, error)
	Account(ctx context.Context, account string) (store.AccountView, bool, error)
	Erased(ctx context.Context, account string) (bool, error)
}

// Bookings answers the last snapshot of a booking (*store.Snapshots; nil: none), whose brand
// and property decide which template a preview by trigger picks.
type Bookings interface {
	Get(ctx context.Context, account string, booking int64) (*contract.Booking, error)
}

// Deps are what the resources work with. Templates, Settings, Messages, Suppressions and
// Views are required. Previewer nil: preview answers 503; Tester nil: messaging-settings
// test answers 503; Replanner nil: a trigger change re-plans nothing (tests only); Bookings
// nil: a preview by trigger picks as for a booking of no brand and property known.
type Deps struct {
	Templates    *store.Templates
	Settings     *store.Settings
	Messages     *store.Messages
	Suppressions *store.Suppressions
	Views        Views
	Bookings     Bookings
	Previewer    Previewer
	Replanner    Replanner
	Tester       Tester
	// Box seals the accounts' SMTP passwords (VROS_ENCRYPTION_KEY): required to save one.
	Box *seal.Box
	// AllowPrivateSMTP lets an account name an SMTP host that is a loopback, private or
	// link-local address (or localhost): development and tests. Otherwise such a host is
	// refused, so that `test` cannot probe the operator's network.
	AllowPrivateSMTP bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// API serves the resources.
type API struct{ d Deps }

// New returns the API over d.
func New(d Deps) *API {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &API{d: d}
}

// Mount mounts the resources on app at POST /internal/a/{name}, in interface A's envelope,
// behind auth's check of the signed tenant (edge's key).
func (a *API) Mount(app fiber.Router, auth *tenancy.Verifier) {
	g := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth))
	g.Post("/message-template", a.templateResource)
	g.Post("/message-trigger", a.triggerResource)
	g.Post("/message-log", a.logResource)
	g.Post("/messaging-settings", a.settingsResource)
	g.Post("/message-suppression", a.suppressionResource)
}

func account(c *fiber.Ctx) string { return tenancyfiber.From(c).AccountID }

// maxID bounds the ids clients send (JSON's exact integers).
const maxID = 1 << 53

// resourceBody reads the body and its action, checked against actions (any case).
func resourceBody(c *fiber.Ctx, v *fields.Violations, actions ...string) (*fields.Object, string) {
	o := fields.Parse(c.Body(), "", v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: actions, IgnoreCase: true})
	return o, action
}

// page is a list's page and limit: page ≥ 1, limit 1–100 (default def).
type page struct{ page, limit int }

func readPage(o *fields.Object, def int) page {
	p := page{page: 1, limit: def}
	if n, ok := o.Int("page", fields.Int{Min: 1, Max: 1 << 31}); ok {
		p.page = n
	}
	if n, ok := o.Int("limit", fields.Int{Min: 1, Max: 100}); ok {
		p.limit = n
	}
	return p
}

// pageOf answers the items of page p and how many there are in all.
func pageOf[T any](p page, items []T) (int, []T) {
	from := min((p.page-1)*p.limit, len(items))
	to := min(from+p.limit, len(items))
	return len(items), items[from:to]
}

// stamp writes an instant in UTC, RFC 3339; nil for the zero time.
func stamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func notFound(msg string) error { return httpapi.NotFound(httpapi.StatusNotFound, msg) }

// errErased refuses a write of an account that has been erased (as property-svc does): a
// request on its way when the account was erased writes nothing.
var errErased = &httpapi.Error{HTTP: http.StatusForbidden, Type: "forbidden", Status: httpapi.StatusInvalid,
	Message: "the account has been erased"}

// write runs a write of the account's templates or settings unless the account is erased
// (403), and closes the race with an erasure as the intake does: the erasure marks the
// account, then deletes; a write writes, then looks for the mark, and if it is there deletes
// the account's templates and settings again. One side sees the other, so nothing written
// survives an erasure.
func (a *API) write(ctx context.Context, account string, fn func() error) error {
	if gone, err := a.d.Views.Erased(ctx, account); err != nil || gone {
		if err == nil {
			err = errErased
		}
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	gone, err := a.d.Views.Erased(ctx, account)
	if err != nil || !gone {
		return err
	}
	if err := a.d.Templates.Erase(ctx, account); err != nil {
		return err
	}
	if err := a.d.Settings.Erase(ctx, account); err != nil {
		return err
	}
	return errErased
}
