package api

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
	"golang.org/x/text/language"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
)

// The booking engine's reads (docs/booking-engine.md, docs/catalog.md "Booking engine"):
// edge's public booking API calls them as POST /internal/engine/<name>, signed as every
// request edge forwards, with a JSON object body. They answer in the public API's envelope
// themselves (httpapi.EnvelopeEngine): {"data": …} with HTTP 200, a refusal {"error":
// {"code", "field", "message"}} with HTTP 4xx, so that edge relays them as they are.

// engineData is the public API's success envelope.
type engineData struct {
	Data any `json:"data"`
}

// engineOK answers data in the public API's envelope.
func engineOK(c *fiber.Ctx, data any) error {
	return c.Status(fiber.StatusOK).JSON(engineData{Data: data})
}

// engineNotFound is a 404 not_found naming field (message "<field>: <msg>"): the app's error
// handler names no field but an invalid one's, so these are answered by engineRefusals.
func engineNotFound(field, msg string) error {
	return &engineError{status: fiber.StatusNotFound, body: httpapi.EngineError{Code: "not_found", Field: field, Message: field + ": " + msg}}
}

// engineError is a refusal already in the public API's shape.
type engineError struct {
	status int
	body   httpapi.EngineError
}

func (e *engineError) Error() string { return e.body.Message }

// engineRefusals answers the engineErrors of the routes behind it; every other error goes
// to the app's error handler, in the same envelope (httpapi.EnvelopeEngine: invalid fields
// are bad_request naming the first).
func engineRefusals(c *fiber.Ctx) error {
	err := c.Next()
	var ee *engineError
	if errors.As(err, &ee) {
		return c.Status(ee.status).JSON(struct {
			Error httpapi.EngineError `json:"error"`
		}{ee.body})
	}
	return err
}

// engineOriginsJSON is /internal/engine/origins's data.
type engineOriginsJSON struct {
	Brands []brandOriginsJSON `json:"brands"`
}

type brandOriginsJSON struct {
	ID      int      `json:"id"`
	Origins []string `json:"origins"`
}

// engineOrigins lists every brand of the account, in the account's order, with the origins
// its booking engine is allowed from (contract.Brand.AllowedOrigins: its origins, else two
// per domain), from memory. An origin two brands allow (only brands stored before the origin
// and domain rules can) is listed under the first only, so that it names one brand.
func (a *API) engineOrigins(c *fiber.Ctx) error {
	in := parse(c)
	if err := in.err(); err != nil {
		return err
	}
	st := a.catalog.Settings(account(c))
	out := engineOriginsJSON{Brands: make([]brandOriginsJSON, 0, len(st.Brands))}
	seen := map[string]bool{}
	for _, b := range st.Brands {
		list := []string{}
		for _, o := range b.AllowedOrigins() {
			if !seen[o] {
				seen[o] = true
				list = append(list, o)
			}
		}
		out.Brands = append(out.Brands, brandOriginsJSON{ID: b.ID, Origins: list})
	}
	return engineOK(c, out)
}

// engineScope is the brand a booking engine read sells through: brand_id, which edge adds
// having found the brand by the request's origin (1-2147483647, a number or a numeric
// string). A brand the account lacks (deleted since edge read the origins) is not_found.
// It also answers the account's own settings, read once with the brand's.
func (a *API) engineScope(c *fiber.Ctx, in *input) (*scope, catalog.Settings, error) {
	id, _ := in.o.Int("brand_id", fields.Int{Required: true, Min: 1, Max: maxID})
	if err := in.err(); err != nil {
		return nil, catalog.Settings{}, err
	}
	acc := account(c)
	st := a.catalog.Settings(acc)
	sc := &scope{acc: acc, st: st, currency: st.Currency}
	i := slices.IndexFunc(st.Brands, func(b catalog.Brand) bool { return b.ID == id })
	if i < 0 {
		return nil, st, engineNotFound("brand_id", "is not a brand of this account")
	}
	sc.useBrand(&st.Brands[i])
	return sc, st, nil
}

// sells is the brand's live property pid, else not_found naming field: an unknown,
// deleted or other account's property, or one the brand does not list, alike.
func (a *API) sells(sc *scope, field string, pid int64) (*catalog.Property, error) {
	p, ok := a.catalog.Property(sc.acc, pid)
	if !ok || !sc.has(pid) {
		return nil, engineNotFound(field, "is not a property this brand sells")
	}
	return p, nil
}

// engineLang reads lang, a BCP 47 tag (optional), in its canonical form.
func engineLang(in *input) string {
	s, ok := in.o.String("lang", fields.Str{Max: 35})
	if !ok || s == "" {
		return ""
	}
	tag, err := language.Parse(s)
	if err != nil || tag == language.Und {
		in.v.Add("lang", "must be a BCP 47 language tag such as it or en-GB")
		return ""
	}
	return tag.String()
}

type engineSiteJSON struct {
	Brand           engineBrandJSON      `json:"brand"`
	Currency        string               `json:"currency"`
	Languages       []string             `json:"languages"`
	DefaultLanguage string               `json:"default_language"`
	Properties      []enginePropertyJSON `json:"properties"`
}

type engineBrandJSON struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type enginePropertyJSON struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	MaxGuests int     `json:"max_guests"`
	Bedrooms  int     `json:"bedrooms"`
	Bathrooms int     `json:"bathrooms"`
	PhotoURL  *string `json:"photo_url"`
	City      string  `json:"city"`
}

// engineSite is what a booking engine's page starts from: the brand, its currency (its
// default, else the account's), the account's languages, the brand's default language (else
// the account's first), and the properties it sells that can be booked online (bookable), in
// the brand's order when it lists them, else every live one by id. A property's photo is its
// main photo's w_800 rendition under the media base (absolute, as every read's links), null
// without photos. Property names have no translations: lang is checked, and names are the
// properties' own.
func (a *API) engineSite(c *fiber.Ctx) error {
	in := parse(c)
	engineLang(in)
	sc, st, err := a.engineScope(c, in)
	if err != nil {
		return err
	}
	var props []*catalog.Property
	if sc.list != nil {
		for _, pid := range sc.list {
			if p, ok := a.catalog.Property(sc.acc, pid); ok {
				props = append(props, p)
			}
		}
	} else {
		props = a.catalog.Properties(sc.acc)
	}
	base := a.mediaBase(c)
	out := engineSiteJSON{Brand: engineBrandJSON{ID: sc.brand.ID, Name: sc.brand.Name}, Currency: sc.st.Currency,
		Languages: st.Languages, Properties: make([]enginePropertyJSON, 0, len(props))}
	out.DefaultLanguage = sc.brand.DefaultLanguage
	if out.DefaultLanguage == "" && len(out.Languages) > 0 {
		out.DefaultLanguage = out.Languages[0]
	}
	for _, p := range props {
		if !bookable(p) {
			continue
		}
		ct := p.Snap.Content
		e := enginePropertyJSON{ID: p.Snap.PropertyID, Name: ct.Name, MaxGuests: ct.MaxGuest, Bedrooms: ct.Bedrooms,
			Bathrooms: ct.Bathrooms, City: ct.City}
		if ph, ok := mainPhoto(p); ok {
			link := mediaLink(base, ph.Key, "w_800")
			e.PhotoURL = &link
		}
		out.Properties = append(out.Properties, e)
	}
	return engineOK(c, out)
}

type engineCalendarJSON struct {
	PropertyID int64           `json:"property_id"`
	Currency   string          `json:"currency"`
	Days       []engineDayJSON `json:"days"`
}

type engineDayJSON struct {
	Date      string  `json:"date"`
	Available bool    `json:"available"`
	Arrival   bool    `json:"arrival"`
	Departure bool    `json:"departure"`
	MinStay   int     `json:"min_stay"`
	Price     *string `json:"price"` // a string, as the public API writes money
}

// engineMonths bounds months.
const (
	engineMonthsDefault = 2
	engineMonthsMax     = 12
)

// engineCalendar is a property's calendar for the booking engine's date picker, from the
// calendar's one rule (nightOf, as getcalendar): from `from` (default today in the property's
// time zone; in the past is allowed, not beyond the calendar's horizon) to the end of the month months − 1 after it (months 1-12, default 2). A day is
// available when its night is priced, free (not held, not stopped) and not before today;
// arrival when a stay may start that day (available and a check-in day: a restriction's
// closed to arrival included); departure when one may end it (a check-out day, closed to
// departure included, whose previous night is available); min_stay the resolved minimum stay
// of a stay starting that day (the standard plan's rules: pricing.NightPriceOn); price the night's price for one guest with the currency's minor digits, null without
// rates.
func (a *API) engineCalendar(c *fiber.Ctx) error {
	in := parse(c)
	pid, _ := in.o.Int("property", fields.Int{Required: true, Min: 1, Max: maxID})
	from, fromSent := in.date("from", false)
	months := engineMonthsDefault
	if !in.o.Empty("months") {
		months, _ = in.o.Int("months", fields.Int{Min: 1, Max: engineMonthsMax})
	}
	sc, _, err := a.engineScope(c, in)
	if err != nil {
		return err
	}
	p, err := a.sells(sc, "property", int64(pid))
	if err != nil {
		return err
	}
	today := p.Today(a.now())
	if !fromSent {
		from = today
	} else if from.After(today.AddDays(horizon)) {
		return httpapi.InvalidField("from", fmt.Sprintf("must be at most %d days after today (the calendar's horizon)", horizon))
	}
	y, m, _ := from.Civil()
	to := pricing.NewDate(y, m+time.Month(months), 1).AddDays(-1) // the last day of the last month
	held := a.catalog.Held(sc.acc, p.Snap.PropertyID)
	cur := calendarCurrency(p)
	scale := pricing.Scale(cur)
	out := engineCalendarJSON{PropertyID: p.Snap.PropertyID, Currency: cur, Days: make([]engineDayJSON, 0, pricing.DaysBetween(from, to)+1)}
	available := func(d pricing.Date, n night) bool { return n.Free && !d.Before(today) }
	prev := from.AddDays(-1)
	prevAvailable := available(prev, nightOf(p, 0, prev, held[prev]))
	var last struct {
		d decimal.Decimal
		s *string
	}
	for d := from; !d.After(to); d = d.AddDays(1) {
		n := nightOf(p, 0, d, held[d])
		day := engineDayJSON{Date: d.String(), Available: available(d, n)}
		day.Arrival = day.Available && n.CheckinAllowed
		day.Departure = prevAvailable && n.Priced && n.CheckoutAllowed
		if n.Priced {
			day.MinStay = n.MinimumStay
			if last.s == nil || !last.d.Equal(n.Price) {
				s := n.Price.StringFixed(scale)
				last.d, last.s = n.Price, &s
			}
			day.Price = last.s
		}
		out.Days = append(out.Days, day)
		prevAvailable = day.Available
	}
	return engineOK(c, out)
}
