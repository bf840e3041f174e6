// Package api is property-svc's HTTP adapter: the interface A resources edge forwards to
// /internal/a/{resource}, and the public media route. Handlers decode and validate with
// the property domain, call the store and answer in interface A's envelope.
package api

import (
	"context"
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
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/property-svc/internal/store"
)

// API serves property-svc's routes.
type API struct {
	store   *store.Store
	fetcher *photo.Fetcher
	log     *slog.Logger
	// renditions caches recently served media. A rendition never changes once written; the
	// expiry bounds how long a deleted photo is still served by this replica.
	renditions *expirable.LRU[string, []byte]
	// renders bounds concurrent image decoding and rendering: a large photo takes a second
	// of CPU and a few hundred MB while it is processed.
	renders chan struct{}
}

// New returns the API.
func New(s *store.Store, fetcher *photo.Fetcher, log *slog.Logger) *API {
	return &API{store: s, fetcher: fetcher, log: log, renditions: expirable.NewLRU[string, []byte](512, nil, 5*time.Minute),
		renders: make(chan struct{}, 2)}
}

// Register mounts the routes: tenant routes behind the signature check, media without.
func (a *API) Register(app *fiber.App, signer *tenancy.Signer) {
	app.Get("/media/:key/:file", a.media)

	in := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), signer.Require())
	in.Post("/property", a.property)
	in.Post("/property-photo", a.photo)
	in.Post("/property-policy", a.policy)
	in.Post("/property-rate", a.rates)
	in.Post("/property-method", a.methods)
	in.Post("/property-tax", a.taxes)
	in.Post("/property-service", a.services)
	in.Post("/property-amenity", a.amenities)
	in.Post("/account-settings", a.settings)

	a.registerB(app, signer)
}

// storeError maps the store's errors to the envelope.
func storeError(err error, what string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return httpapi.NotFound(httpapi.StatusNoProperty, what+" does not exist")
	case errors.Is(err, store.ErrCodeTaken):
		return httpapi.Conflict(httpapi.StatusConflict, what+" is already used by another property of this account")
	case errors.Is(err, store.ErrPhotoNotFound):
		return httpapi.NotFound(httpapi.StatusNotFound, what+" does not exist")
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

// property: create, update or delete (A1).
func (a *API) property(c *fiber.Ctx) error {
	req, err := property.DecodeProperty(c.Body())
	if err != nil {
		return err
	}
	acc := tenancy.From(c).AccountID
	ctx := c.UserContext()
	p := req.Property
	switch req.Action {
	case property.Create:
		rec, err := a.store.Create(ctx, acc, p)
		if err != nil {
			return storeError(err, fmt.Sprintf("internal_code %q", p.InternalCode))
		}
		return httpapi.A(c, fiber.Map{"property_id": strconv.FormatInt(rec.PropertyID, 10)})
	case property.Update:
		rec, err := a.store.UpdateContent(ctx, acc, p)
		if err != nil {
			return storeError(err, codeNotFound(p.InternalCode))
		}
		return httpapi.A(c, fiber.Map{"property_id": strconv.FormatInt(rec.PropertyID, 10)})
	default: // property.Delete; the decoder admits nothing else
		if err := a.store.Delete(ctx, acc, p.InternalCode); err != nil {
			return storeError(err, codeNotFound(p.InternalCode))
		}
		return httpapi.A(c, nil)
	}
}

// photo: create, update or delete (A2). Images are decoded and rendered before anything
// is stored, so a bad image changes nothing.
func (a *API) photo(c *fiber.Ctx) error {
	req, err := property.DecodePhoto(c.Body())
	if err != nil {
		return err
	}
	acc := tenancy.From(c).AccountID
	ctx := c.UserContext()
	ph := req.Photo
	rec, err := a.store.Resolve(ctx, acc, property.PropertyRef{InternalCode: ph.InternalCode})
	if err != nil {
		return storeError(err, codeNotFound(ph.InternalCode))
	}
	photoNotFound := fmt.Sprintf("photo %d of property %q", ph.ID, ph.InternalCode)
	if req.Action == property.Delete {
		if err := a.store.DeletePhoto(ctx, rec, int64(ph.ID)); err != nil {
			return storeError(err, photoNotFound)
		}
		return httpapi.A(c, nil)
	}
	if req.Action == property.Update {
		if _, ok := rec.Photos[strconv.Itoa(ph.ID)]; !ok {
			return storeError(store.ErrPhotoNotFound, photoNotFound)
		}
	}
	img, err := a.render(ctx, ph.Image)
	if err != nil {
		return err
	}
	source := ""
	if ph.IsLink {
		source = ph.Image
	}
	id := int64(ph.ID)
	if req.Action == property.Create {
		_, id, err = a.store.NewPhoto(ctx, rec, img, source)
	} else {
		_, err = a.store.ReplacePhoto(ctx, rec, id, img, source)
	}
	if err != nil {
		return storeError(err, photoNotFound)
	}
	return httpapi.A(c, fiber.Map{"photo_id": id})
}

func (a *API) render(ctx context.Context, image string) (*photo.Result, error) {
	select {
	case a.renders <- struct{}{}:
		defer func() { <-a.renders }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	img, err := photo.Load(ctx, image, a.fetcher)
	if err != nil {
		if pe, ok := photo.AsError(err); ok {
			return nil, httpapi.InvalidField(pe.Field(), pe.Error())
		}
		return nil, err
	}
	return photo.Render(img)
}

// policy: the payment policy (A3), addressed by internal_code or property_id.
func (a *API) policy(c *fiber.Ctx) error {
	p, err := property.DecodePolicy(c.Body())
	if err != nil {
		return err
	}
	return a.setSection(c, p.Property, store.PolicyUpdated, "policy", store.PolicyRecord(p))
}

// rates: rate settings (A4). A season's minimum stay may not exceed the property's
// maxguest (the spec's rule), so the property is read before the body is validated.
func (a *API) rates(c *fiber.Ctx) error {
	var peek struct {
		InternalCode any `json:"internal_code"`
	}
	_ = json.Unmarshal(c.Body(), &peek)
	code, _ := peek.InternalCode.(string)
	acc := tenancy.From(c).AccountID
	rec, lookupErr := a.store.Resolve(c.UserContext(), acc, property.PropertyRef{InternalCode: code})
	r, err := property.DecodeRates(c.Body(), rec.Content.MaxGuest) // 0 when unknown: rule skipped
	if err != nil {
		return err
	}
	if lookupErr != nil {
		return storeError(lookupErr, codeNotFound(r.InternalCode))
	}
	_, err = a.store.Set(c.UserContext(), rec.ID, store.RatesUpdated, "rates", store.RatesRecord(r))
	return a.done(c, err, codeNotFound(r.InternalCode))
}

// methods: payment methods (A5); the set sent replaces the stored one.
func (a *API) methods(c *fiber.Ctx) error {
	m, err := property.DecodeMethods(c.Body())
	if err != nil {
		return err
	}
	acc := tenancy.From(c).AccountID
	return a.setSection(c, property.PropertyRef{InternalCode: m.InternalCode}, store.MethodsUpdated, "methods", a.store.MethodsRecord(acc, m))
}

func (a *API) taxes(c *fiber.Ctx) error {
	t, err := property.DecodeTaxes(c.Body())
	if err != nil {
		return err
	}
	return a.setSection(c, property.PropertyRef{InternalCode: t.InternalCode}, store.TaxesUpdated, "taxes", store.TaxRecords(t))
}

func (a *API) services(c *fiber.Ctx) error {
	s, err := property.DecodeServices(c.Body())
	if err != nil {
		return err
	}
	return a.setSection(c, property.PropertyRef{InternalCode: s.InternalCode}, store.ServicesUpdated, "services", store.ServiceRecords(s))
}

func (a *API) amenities(c *fiber.Ctx) error {
	am, err := property.DecodeAmenities(c.Body())
	if err != nil {
		return err
	}
	return a.onProperty(c, property.PropertyRef{InternalCode: am.InternalCode}, func(ctx context.Context, id string) error {
		_, err := a.store.SetAmenities(ctx, id, am)
		return err
	})
}

// setSection replaces one section of the property ref.
func (a *API) setSection(c *fiber.Ctx, ref property.PropertyRef, change, section string, value any) error {
	return a.onProperty(c, ref, func(ctx context.Context, id string) error {
		_, err := a.store.Set(ctx, id, change, section, value)
		return err
	})
}

// onProperty runs write on the live property ref of the caller's account.
func (a *API) onProperty(c *fiber.Ctx, ref property.PropertyRef, write func(ctx context.Context, id string) error) error {
	id, err := a.store.Locate(c.UserContext(), tenancy.From(c).AccountID, ref)
	if err != nil {
		return storeError(err, refNotFound(ref))
	}
	return a.done(c, write(c.UserContext(), id), refNotFound(ref))
}

func (a *API) done(c *fiber.Ctx, err error, what string) error {
	if err != nil {
		return storeError(err, what)
	}
	return httpapi.A(c, nil)
}

// settings: account settings; the answer is the settings in force.
func (a *API) settings(c *fiber.Ctx) error {
	s, err := property.DecodeAccountSettings(c.Body())
	if err != nil {
		return err
	}
	rec, err := a.store.PutSettings(c.UserContext(), tenancy.From(c).AccountID, s)
	if err != nil {
		return err
	}
	return httpapi.A(c, rec)
}

// media: GET /media/{key}/{rendition}.jpg — public, immutable.
func (a *API) media(c *fiber.Ctx) error {
	key := c.Params("key")
	name, ok := strings.CutSuffix(c.Params("file"), ".jpg")
	if _, known := photo.Lookup(name); !ok || !known || len(key) > 64 {
		return httpapi.NotFound(httpapi.StatusNotFound, "no such image")
	}
	etag := `"` + key + "-" + name + `"`
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderETag, etag)
	if c.Get(fiber.HeaderIfNoneMatch) == etag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	id := key + "/" + name
	data, ok := a.renditions.Get(id)
	if !ok {
		var err error
		data, err = a.store.Rendition(c.UserContext(), key, name)
		if errors.Is(err, store.ErrPhotoNotFound) {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return httpapi.NotFound(httpapi.StatusNotFound, "no such image")
		}
		if err != nil {
			return err
		}
		a.renditions.Add(id, data)
	}
	c.Set(fiber.HeaderContentType, "image/jpeg")
	return c.Send(data)
}
