package request

import (
	"time"

	"golang.org/x/text/language"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/fields"
)

// The booking engine's bodies (docs/booking-engine.md, "The public API"), as edge forwards
// them to /internal/engine/*: the browser's JSON with the seller's brand_id set by edge and,
// for a checkout's routes, its checkout_id from the path.

// Fields of the booking engine's bodies.
const (
	FieldEngineBrand      = "brand_id"
	FieldEngineCheckout   = "checkout_id"
	FieldEngineProperty   = "property"
	FieldEngineArrival    = "arrival"
	FieldEngineDeparture  = "departure"
	FieldEngineAdults     = "adults"
	FieldEngineChildren   = "children"
	FieldEngineLang       = "lang"
	FieldEngineFirstName  = "first_name"
	FieldEngineLastName   = "last_name"
	FieldEngineEmail      = "email"
	FieldEnginePhone      = "phone"
	FieldEngineCountry    = "country"
	FieldEngineNotes      = "notes"
	FieldEngineCard       = "card"
	maxLang               = 35
	engineLangMsg         = "must be a BCP 47 language tag, such as en or it-IT"
	engineDepartureMsg    = "must be after arrival"
	engineMaxNightsFormat = "must be at most %d nights after arrival"
)

// EngineStay is a quote's or a new checkout's body.
type EngineStay struct {
	BrandID            int
	PropertyID         int
	Arrival, Departure time.Time
	Adults, Children   int
	Lang               string // "" when not sent
}

// DecodeEngineStay reads a quote's or a new checkout's body.
func DecodeEngineStay(body []byte) (EngineStay, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) EngineStay {
		var s EngineStay
		s.BrandID, _ = o.Int(FieldEngineBrand, idRule(true))
		s.PropertyID, _ = o.Int(FieldEngineProperty, idRule(true))
		s.Arrival, _ = o.Date(FieldEngineArrival, true)
		s.Departure, _ = o.Date(FieldEngineDeparture, true)
		s.Adults, _ = o.Int(FieldEngineAdults, fields.Int{Required: true, Min: 1, Max: MaxGuests})
		s.Children, _ = o.Int(FieldEngineChildren, fields.Int{Max: MaxGuests})
		s.Lang = readLang(o)
		if !violated(*v, FieldEngineArrival) && !violated(*v, FieldEngineDeparture) && !s.Arrival.IsZero() && !s.Departure.IsZero() {
			switch {
			case !s.Departure.After(s.Arrival):
				v.Add(FieldEngineDeparture, engineDepartureMsg)
			case s.Departure.Sub(s.Arrival) > MaxNights*24*time.Hour:
				v.Addf(FieldEngineDeparture, engineMaxNightsFormat, MaxNights)
			}
		}
		return s
	})
}

func readLang(o *fields.Object) string {
	s, ok := o.String(FieldEngineLang, fields.Str{Max: maxLang})
	if !ok || s == "" {
		return ""
	}
	if _, err := language.Parse(s); err != nil {
		o.Add(FieldEngineLang, engineLangMsg)
		return ""
	}
	return s
}

// EngineCheckout names a checkout: the body of its get and cancel, and the start of the
// others'.
type EngineCheckout struct {
	BrandID    int
	CheckoutID string
}

func readEngineCheckout(o *fields.Object) EngineCheckout {
	var c EngineCheckout
	c.BrandID, _ = o.Int(FieldEngineBrand, idRule(true))
	c.CheckoutID, _ = o.String(FieldEngineCheckout, fields.Str{Required: true, Max: 64})
	return c
}

// DecodeEngineCheckout reads the body of a checkout's get or cancel.
func DecodeEngineCheckout(body []byte) (EngineCheckout, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) EngineCheckout { return readEngineCheckout(o) })
}

// EngineGuest is the body of a checkout's guest: the guest's contact data, read with
// create's rules (docs/interface-b-fields.md), except that the country must be a valid code
// (it is not replaced).
type EngineGuest struct {
	EngineCheckout
	FirstName, LastName, Email string
	Phone                      string
	Country                    string // ISO 3166-1 alpha-2 upper case; "" when not sent
	Notes                      string
}

// DecodeEngineGuest reads the body of a checkout's guest.
func DecodeEngineGuest(body []byte) (EngineGuest, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) EngineGuest {
		g := EngineGuest{EngineCheckout: readEngineCheckout(o)}
		g.FirstName, _ = o.String(FieldEngineFirstName, fields.Str{Required: true, Max: MaxName}) // blank: "is required"
		g.LastName, _ = o.String(FieldEngineLastName, fields.Str{Required: true, Max: MaxName})
		g.Email, _ = o.Email(FieldEngineEmail, true)
		g.Phone, _ = o.String(FieldEnginePhone, fields.Str{Max: MaxPhone})
		g.Country, _ = guest.ReadCountry(o, FieldEngineCountry, false)
		g.Notes, _ = o.String(FieldEngineNotes, fields.Str{Max: MaxOther})
		return g
	})
}

// EngineConfirm is the body of a checkout's confirm: the card, for a sandbox account's test
// gateway (nil when not sent; a live account's card never reaches vros).
type EngineConfirm struct {
	EngineCheckout
	Card *card.Card
}

// DecodeEngineConfirm reads the body of a checkout's confirm; an expiry is judged at now.
func DecodeEngineConfirm(body []byte, now time.Time) (EngineConfirm, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) EngineConfirm {
		c := EngineConfirm{EngineCheckout: readEngineCheckout(o)}
		switch o.Kind(FieldEngineCard) {
		case fields.KindAbsent, fields.KindNull:
		default:
			if obj := o.Object(FieldEngineCard, false); obj != nil {
				cc := card.ReadEngine(obj, now)
				c.Card = &cc
			}
		}
		return c
	})
}
