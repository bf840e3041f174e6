// Package api is property-svc's HTTP adapter: the interface A resources edge forwards to
// /internal/a/{resource}, and the public media route. Handlers decode and validate with
// the property domain's decoders, call its service (property.Properties) and answer in
// interface A's envelope.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// API serves property-svc's routes.
type API struct {
	props *property.Properties
	log   *slog.Logger
	// renditions caches recently served media. A rendition never changes once written; the
	// expiry bounds how long a deleted photo is still served by this replica.
	renditions *expirable.LRU[string, []byte]
}

// New returns the API over the domain service props.
func New(props *property.Properties, log *slog.Logger) *API {
	return &API{props: props, log: log, renditions: expirable.NewLRU[string, []byte](512, nil, 5*time.Minute)}
}

// Register mounts the routes: tenant routes behind the signature check, media without.
func (a *API) Register(app *fiber.App, auth *tenancy.Verifier) {
	app.Get("/media/:key/:file", a.media)

	in := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), httpapi.KindAfter("/internal/a/", "A."),
		tenancyfiber.Require(auth), refuseErased)
	in.Post("/property", a.property)
	in.Post("/property-photo", a.photo)
	in.Post("/property-policy", a.policy)
	in.Post("/property-rate", a.rates)
	in.Post("/property-method", a.methods)
	in.Post("/property-tax", a.taxes)
	in.Post("/property-service", a.services)
	in.Post("/property-amenity", a.amenities)
	in.Post("/account-settings", a.settings)
	in.Post("/property-category", a.group)
	in.Post("/property-promotion", a.promotion)
	in.Post("/account-brand", a.brand)
	in.Post("/property-ical", a.ical)
	in.Post("/property-rateplan", a.ratePlans)
	in.Post("/property-restriction", a.restrictions)
	in.Post("/channel-markup", a.markups)

	a.registerB(app, auth)
	a.registerAccount(app, auth)
}

// named names the request's kind (httpapi.SetKind) after its resource and its action,
// "A.property.update"; action is one the decoder admitted. A resource without actions is
// named by its route (httpapi.KindAfter): "A.property-policy".
func named(c *fiber.Ctx, action property.Action) {
	httpapi.SetKind(c, "A."+strings.TrimPrefix(c.Route().Path, "/internal/a/")+"."+string(action))
}

// domainError maps the domain's errors to the envelope; what names the missing property.
func domainError(err error, what string) error {
	switch {
	case errors.Is(err, property.ErrNotFound):
		return httpapi.NotFound(httpapi.StatusNoProperty, what+" does not exist")
	case errors.Is(err, property.ErrCodeTaken):
		return httpapi.Conflict(httpapi.StatusConflict, what+" is already used by another property of this account")
	}
	if le, ok := errors.AsType[*property.LimitError](err); ok {
		return limitError(le)
	}
	return err
}

func codeNotFound(code string) string { return fmt.Sprintf("property with internal_code %q", code) }

func refNotFound(ref property.PropertyRef) string {
	if ref.InternalCode != "" {
		return codeNotFound(ref.InternalCode)
	}
	return fmt.Sprintf("property with property_id %d", ref.ID)
}

// property: create, update or delete (A1); get and list (extension, read.go).
func (a *API) property(c *fiber.Ctx) error {
	req, err := property.DecodeProperty(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	tenant := tenancyfiber.From(c)
	acc := tenant.AccountID
	ctx := c.UserContext()
	p := req.Property
	switch req.Action {
	case property.Create:
		pid, err := a.props.Create(ctx, acc, p, tenant.MaxProperties)
		if err != nil {
			return domainError(err, fmt.Sprintf("internal_code %q", p.InternalCode))
		}
		return httpapi.A(c, fiber.Map{"property_id": strconv.FormatInt(pid, 10)})
	case property.Update:
		pid, err := a.props.Update(ctx, acc, p)
		if err != nil {
			return domainError(err, codeNotFound(p.InternalCode))
		}
		return httpapi.A(c, fiber.Map{"property_id": strconv.FormatInt(pid, 10)})
	case property.Get:
		return a.getProperty(c, acc, p.InternalCode)
	case property.List:
		return a.listProperties(c, acc, req.List)
	default: // property.Delete; the decoder admits nothing else
		if err := a.props.Delete(ctx, acc, p.InternalCode); err != nil {
			return domainError(err, codeNotFound(p.InternalCode))
		}
		return httpapi.A(c, nil)
	}
}

// photo: create, update or delete (A2); order (extension): the photos' order, the main
// photo first.
func (a *API) photo(c *fiber.Ctx) error {
	req, err := property.DecodePhoto(c.Body())
	if err != nil {
		return err
	}
	named(c, req.Action)
	ph := req.Photo
	if req.Action == property.Order {
		order, err := a.props.OrderPhotos(c.UserContext(), tenancyfiber.From(c).AccountID, ph.InternalCode, ph.Order)
		if err != nil {
			return domainError(err, codeNotFound(ph.InternalCode))
		}
		return httpapi.A(c, fiber.Map{"order": order})
	}
	id, err := a.props.Photo(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	if pe, ok := photo.AsError(err); ok {
		return httpapi.InvalidField(pe.Field(), pe.Error())
	}
	if errors.Is(err, photo.ErrBusy) {
		// Not the client's fault and not this account's: the replica's photo memory stayed
		// taken (docs/photos.md, "Memory").
		return httpapi.Unavailable(err.Error())
	}
	if errors.Is(err, property.ErrPhotoNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("photo %d of property %q does not exist", ph.ID, ph.InternalCode))
	}
	if err != nil {
		return domainError(err, codeNotFound(ph.InternalCode))
	}
	if req.Action == property.Delete {
		return httpapi.A(c, nil)
	}
	return httpapi.A(c, fiber.Map{"photo_id": id})
}

// policy: the payment policy (A3), addressed by internal_code or property_id.
func (a *API) policy(c *fiber.Ctx) error {
	p, err := property.DecodePolicy(c.Body())
	if err != nil {
		return err
	}
	return a.done(c, a.props.SetPolicy(c.UserContext(), tenancyfiber.From(c).AccountID, p), refNotFound(p.Property))
}

// rates: rate settings (A4). A season's minimum stay may not exceed the property's
// maxguest, so the body is decoded once the domain has read the property named by its
// internal_code.
func (a *API) rates(c *fiber.Ctx) error {
	var peek struct {
		InternalCode any `json:"internal_code"`
	}
	_ = json.Unmarshal(c.Body(), &peek)
	code, _ := peek.InternalCode.(string)
	var r property.Rates
	err := a.props.SetRates(c.UserContext(), tenancyfiber.From(c).AccountID, code, func(maxGuest int) (property.Rates, error) {
		var err error
		r, err = property.DecodeRates(c.Body(), maxGuest) // 0 when unknown: rule skipped
		return r, err
	})
	return a.done(c, err, codeNotFound(r.InternalCode))
}

// methods: payment methods (A5); the set sent replaces the stored one.
func (a *API) methods(c *fiber.Ctx) error {
	m, err := property.DecodeMethods(c.Body())
	if err != nil {
		return err
	}
	return a.done(c, a.props.SetMethods(c.UserContext(), tenancyfiber.From(c).AccountID, m), codeNotFound(m.InternalCode))
}

func (a *API) taxes(c *fiber.Ctx) error {
	t, err := property.DecodeTaxes(c.Body())
	if err != nil {
		return err
	}
	return a.done(c, a.props.SetTaxes(c.UserContext(), tenancyfiber.From(c).AccountID, t), codeNotFound(t.InternalCode))
}

func (a *API) services(c *fiber.Ctx) error {
	s, err := property.DecodeServices(c.Body())
	if err != nil {
		return err
	}
	return a.done(c, a.props.SetServices(c.UserContext(), tenancyfiber.From(c).AccountID, s), codeNotFound(s.InternalCode))
}

func (a *API) amenities(c *fiber.Ctx) error {
	am, err := property.DecodeAmenities(c.Body())
	if err != nil {
		return err
	}
	return a.done(c, a.props.SetAmenities(c.UserContext(), tenancyfiber.From(c).AccountID, am), codeNotFound(am.InternalCode))
}

// done answers a change: success with no data, or its error.
func (a *API) done(c *fiber.Ctx, err error, what string) error {
	if err != nil {
		return domainError(err, what)
	}
	return httpapi.A(c, nil)
}

// settings: account settings; the answer is the settings in force.
func (a *API) settings(c *fiber.Ctx) error {
	s, err := property.DecodeAccountSettings(c.Body())
	if err != nil {
		return err
	}
	st, err := a.props.PutSettings(c.UserContext(), tenancyfiber.From(c).AccountID, s)
	if err != nil {
		return err
	}
	return httpapi.A(c, settingsAnswer(st))
}

// media: GET /media/{key}/{rendition}.jpg — public, immutable.
func (a *API) media(c *fiber.Ctx) error {
	key := c.Params("key")
	name, ok := strings.CutSuffix(c.Params("file"), ".jpg")
	if _, known := photo.Lookup(name); !ok || !known || len(key) > 64 {
		return httpapi.NotFound(httpapi.StatusNotFound, "no such image")
	}
	id := key + "/" + name
	data, ok := a.renditions.Get(id)
	if !ok {
		var err error
		data, err = a.props.Rendition(c.UserContext(), key, name)
		if errors.Is(err, property.ErrPhotoNotFound) {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return httpapi.NotFound(httpapi.StatusNotFound, "no such image")
		}
		if err != nil {
			return err
		}
		a.renditions.Add(id, data)
	}
	// Looked up first: a cache revalidating a deleted or erased photo gets the 404.
	etag := `"` + key + "-" + name + `"`
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderETag, etag)
	if c.Get(fiber.HeaderIfNoneMatch) == etag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, "image/jpeg")
	return c.Send(data)
}
