// Package api is catalog-svc's HTTP adapter: the interface B catalog actions edge forwards to
// /internal/b/{action}, the owner-token reads it forwards to /internal/read/{name} and the
// booking engine's reads it calls at /internal/engine/{name}. Every answer is computed from
// the catalog's memory; no request reads MongoDB. The choices made where the spec is silent
// are in docs/catalog.md.
package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// API serves catalog-svc's routes.
type API struct {
	catalog *catalog.Catalog
	// MediaBase prefixes photo links; "" uses edge's X-Vros-Public-Base (mediaBase).
	MediaBase string
	now       func() time.Time
	// records holds the search records; see catalog.Memo for why it is keyed by the property.
	records catalog.Memo[*searchRecord]
	// feeds holds the rendered iCal feeds (ical.go).
	feeds feeds
	// calendars holds getcalendar's encoded answers (calendars.go).
	calendars calendars
	// answers holds search-rental's and property-detail's encoded answers (answers.go).
	answers *answers
	// Applied is how far the consumer has applied the topics, told with every answer edge
	// may keep (answers.go, keptAt); nil tells nothing, and edge keeps nothing.
	Applied *events.Applied
}

// New returns the API. An erased account's search records are dropped with it.
func New(v *catalog.Catalog, mediaBase string) *API {
	a := &API{catalog: v, MediaBase: strings.TrimRight(mediaBase, "/"), now: time.Now, calendars: newCalendars(),
		answers: newAnswers(defaultAnswerBytes)}
	v.OnErase(a.records.Forget)
	v.OnErase(a.answers.Forget)
	v.OnErase(a.feeds.Forget)
	v.OnErase(a.calendars.Forget)
	return a
}

// Register mounts the routes: behind the signature check but for the iCal export.
func (a *API) Register(app *fiber.App, auth *tenancy.Verifier) {
	// The iCal export: no tenant check, the token in the path is the capability (ical.go).
	app.Get("/internal/ical/:file", a.ical)

	b := app.Group("/internal/b", httpapi.Use(httpapi.EnvelopeB), httpapi.KindAfter("/internal/b/", "B."), tenancyfiber.Require(auth))
	b.Post("/gettax", a.getTax)
	b.Post("/getservice", a.getService)
	b.Post("/getblockdates", a.getBlockDates)
	b.Post("/getnonavailabledate", a.getNonAvailable)
	b.Post("/getratetable", a.getRateTable)
	b.Post("/listcountry", a.listCountry)
	b.Post("/getproperties", a.getProperties)
	b.Post("/getpropertyinfo", a.getPropertyInfo)
	b.Post("/getcalendar", a.getCalendar)
	b.Post("/getreservations", a.getReservations)
	b.Post("/getdiscounts", a.getDiscounts)

	// Edge forwards owner-token reads as POST with a JSON body (readInput); GET with the
	// parameters in the query is what it sent before and stays served during an upgrade.
	r := app.Group("/internal/read", httpapi.Use(httpapi.EnvelopeB), httpapi.KindAfter("/internal/read/", "read."),
		tenancyfiber.Require(auth))
	for name, h := range map[string]fiber.Handler{
		"default-config":             a.defaultConfig,
		"get-all-amenity":            a.allAmenity,
		"get-min-max-price-property": a.minMaxPrice,
		"banner-gallery":             a.bannerGallery,
		"property-gallery":           a.propertyGallery,
		"property-amenity":           a.propertyAmenity,
		"property-detail":            a.propertyDetail,
		"get-all-property-info":      a.propertyDetail,
		"property-category":          a.propertyCategory,
		"search-rental":              a.searchRental,
		"get-property-related":       a.propertyRelated,
	} {
		r.Post("/"+name, h)
		r.Get("/"+name, h)
	}

	// The booking engine's reads (engine.go), in the public booking API's envelope.
	e := app.Group("/internal/engine", httpapi.Use(httpapi.EnvelopeEngine), httpapi.KindAfter("/internal/engine/", "engine."),
		engineRefusals, tenancyfiber.Require(auth))
	e.Post("/origins", a.engineOrigins)
	e.Post("/site", a.engineSite)
	e.Post("/calendar", a.engineCalendar)
}

func account(c *fiber.Ctx) string { return tenancyfiber.From(c).AccountID }

// errNoProperty is status 16, for unknown, deleted and other accounts' properties alike.
func errNoProperty() error {
	return httpapi.NotFound(httpapi.StatusNoProperty, "property does not exist")
}

// input is a parsed request body with its violations.
type input struct {
	o *fields.Object
	v fields.Violations
}

func parse(c *fiber.Ctx) *input {
	in := &input{}
	body := c.Body()
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	in.o = fields.Parse(body, "", &in.v)
	return in
}

func (in *input) err() error { return in.v.Err() }

const maxID = 2147483647

// propertyID reads a plain numeric propertyId.
func (in *input) propertyID(required bool) int64 {
	n, _ := in.o.Int("propertyId", fields.Int{Required: required, Min: 1, Max: maxID})
	return int64(n)
}

// compositeID reads a `<user_id>_<id>` value. It reports other = true when user_id is not
// the caller's account (the caller then answers as if the object did not exist).
func (in *input) compositeID(name, acc string) (id int64, other bool) {
	s, ok := in.o.String(name, fields.Str{Required: true})
	if !ok {
		return 0, false
	}
	i := strings.LastIndexByte(s, '_')
	if i <= 0 {
		in.v.Add(name, "must be <user_id>_<id>")
		return 0, false
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || n < 1 || n > maxID {
		in.v.Add(name, "must be <user_id>_<id>")
		return 0, false
	}
	return n, s[:i] != acc
}

// date reads an optional YYYY-MM-DD member.
func (in *input) date(name string, required bool) (pricing.Date, bool) {
	t, ok := in.o.Date(name, required)
	if !ok {
		return pricing.Date{}, false
	}
	return pricing.DateOf(t), true
}

func dec(d decimal.Decimal) json.Number { return json.Number(d.String()) }

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

func optFlag(b *bool) int { return flag(b != nil && *b) }
