package request_test

import (
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/request"
)

// The booking engine's bodies (docs/booking-engine.md), as edge forwards them.

func TestDecodeEngineStay(t *testing.T) {
	base := `{"brand_id":2,"property":12,"arrival":"2026-07-01","departure":"2026-07-08","adults":2,"children":1,"lang":"it-IT"}`
	check(t, base, []row{
		tc("valid example", ""),
		tc("brand_id missing (edge sets it)", "brand_id: is required", set("brand_id", del)),
		tc("property missing", "property: is required", set("property", del)),
		tc("property 0", "property: must be between 1 and 2147483647", set("property", 0)),
		tc("property as text", "", set("property", "12")),
		tc("arrival missing", "arrival: is required", set("arrival", del)),
		tc("arrival not a date", "arrival: must be a valid date (YYYY-MM-DD)", set("arrival", "2026-02-30")),
		tc("arrival with a time", "arrival: must be a valid date (YYYY-MM-DD)", set("arrival", "2026-07-01 15:00:00")),
		tc("departure missing", "departure: is required", set("departure", del)),
		tc("departure on arrival", "departure: must be after arrival", set("departure", "2026-07-01")),
		tc("366 nights", "departure: must be at most 365 nights after arrival", set("departure", "2027-07-02")),
		tc("365 nights", "", set("departure", "2027-07-01")),
		tc("adults missing", "adults: is required", set("adults", del)),
		tc("adults 0", "adults: must be between 1 and 50", set("adults", 0)),
		tc("adults 51", "adults: must be between 1 and 50", set("adults", 51)),
		tc("children absent", "", set("children", del)),
		tc("children 51", "children: must be between 0 and 50", set("children", 51)),
		tc("children -1", "children: must be between 0 and 50", set("children", -1)),
		tc("lang absent", "", set("lang", del)),
		tc("lang blank", "", set("lang", "")),
		tc("lang bare", "", set("lang", "pt")),
		tc("lang not a tag", "lang: must be a BCP 47 language tag, such as en or it-IT", set("lang", "!!")),
		tc("lang too long", "lang: must be at most 35 characters", set("lang", chars(36))),
	}, func(b []byte) error {
		_, err := request.DecodeEngineStay(b)
		return err
	})
	s, err := request.DecodeEngineStay([]byte(base))
	if err != nil || s.BrandID != 2 || s.PropertyID != 12 || s.Adults != 2 || s.Children != 1 || s.Lang != "it-IT" ||
		s.Arrival.Format(time.DateOnly) != "2026-07-01" || s.Departure.Format(time.DateOnly) != "2026-07-08" {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestDecodeEngineGuest(t *testing.T) {
	base := `{"brand_id":2,"checkout_id":"co_0123456789abcdef0123456789abcdef","first_name":"Ada","last_name":"Lovelace",
		"email":"ada@example.com","phone":"+44 20 7946 0000","country":"gb","notes":"late arrival"}`
	check(t, base, []row{
		tc("valid example", ""),
		tc("checkout_id missing (edge sets it)", "checkout_id: is required", set("checkout_id", del)),
		tc("first_name missing", "first_name: is required", set("first_name", del)),
		tc("first_name blank", "first_name: is required", set("first_name", "")),
		tc("first_name 101 chars", "first_name: must be at most 100 characters", set("first_name", chars(101))),
		tc("last_name missing", "last_name: is required", set("last_name", del)),
		tc("last_name blank", "last_name: is required", set("last_name", "")),
		tc("email missing", "email: is required", set("email", del)),
		tc("email blank", "email: is required", set("email", "")),
		tc("email bad", "email: must be a valid email address", set("email", "ada@")),
		tc("phone absent", "", set("phone", del)),
		tc("phone 31 chars", "phone: must be at most 30 characters", set("phone", chars(31))),
		tc("country absent", "", set("country", del)),
		tc("country not a code", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "UK")),
		tc("country three letters", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "GBR")),
		tc("notes 5000 chars", "", set("notes", chars(5000))),
		tc("notes 5001 chars", "notes: must be at most 5000 characters", set("notes", chars(5001))),
	}, func(b []byte) error {
		_, err := request.DecodeEngineGuest(b)
		return err
	})
	g, err := request.DecodeEngineGuest([]byte(base))
	if err != nil || g.Country != "GB" || g.Phone != "+44 20 7946 0000" || g.Notes != "late arrival" || g.BrandID != 2 {
		t.Fatalf("%+v %v", g, err)
	}
}

func TestDecodeEngineConfirm(t *testing.T) {
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	base := `{"brand_id":2,"checkout_id":"co_0123456789abcdef0123456789abcdef",
		"card":{"number":"4242 4242 4242 4242","name":"Ada Lovelace","exp_month":12,"exp_year":2030,"cvc":"123"}}`
	check(t, base, []row{
		tc("valid example", ""),
		tc("no card (Stripe, or nothing due)", "", set("card", del)),
		tc("card null", "", set("card", nil)),
		tc("card not an object", "card: must be an object", set("card", "4242")),
		tc("number missing", "card.number: is required", set("card.number", del)),
		tc("number with letters", "card.number: must contain digits only", set("card.number", "4242x")),
		tc("number too short", "card.number: must have 12 to 19 digits", set("card.number", digits(11))),
		tc("number fails Luhn", "card.number: is not a valid card number", set("card.number", "4242424242424241")),
		tc("name missing", "card.name: is required", set("card.name", del)),
		tc("exp_month 13", "card.exp_month: must be between 1 and 12", set("card.exp_month", 13)),
		tc("exp_month missing", "card.exp_month: is required", set("card.exp_month", del)),
		tc("exp_year two digits", "", set("card.exp_year", 30)),
		tc("expired last month", "card.exp_year: the card has expired", set("card.exp_month", 5), set("card.exp_year", 2026)),
		tc("valid through this month", "", set("card.exp_month", 6), set("card.exp_year", 2026)),
		tc("too far ahead", "card.exp_year: must be at most 20 years ahead", set("card.exp_year", 2047)),
		tc("cvc missing", "card.cvc: is required", set("card.cvc", del)),
		tc("cvc of 4 digits for a Visa", "card.cvc: must be 3 digits", set("card.cvc", "1234")),
		tc("cvc of 3 digits for an Amex", "card.cvc: must be 4 digits for American Express cards", set("card.number", "378282246310005")),
	}, func(b []byte) error {
		_, err := request.DecodeEngineConfirm(b, now)
		return err
	})
	c, err := request.DecodeEngineConfirm([]byte(base), now)
	if err != nil || c.Card == nil || c.Card.Number != "4242424242424242" || c.Card.ExpMonth != 12 || c.Card.ExpYear != 2030 {
		t.Fatalf("%v %v", c.Card, err)
	}
	if c, err := request.DecodeEngineConfirm(apply(t, base, set("card", del)), now); err != nil || c.Card != nil {
		t.Fatalf("%v %v", c.Card, err)
	}
}
