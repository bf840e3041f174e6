// Package card reads, checks and redacts payment cards (the creditCard
// object of interface B's create and update).
//
// A Card holds the full number and the CVC so that a gateway can charge it,
// but it never prints them: String, fmt verbs, slog and encoding/json all
// show the masked form. What may be kept is a Stored, which has no CVC; its
// full number must be sealed (libs/seal) by the caller before it is written.
//
// fmt only calls a value's Format method when it can reach the value: a Card
// kept in an unexported struct field is printed field by field by %v. Keep
// cards in exported fields or pass them by themselves.
//
// The package does no I/O and reads no clock.
package card

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/fields"
)

// Brands Brand reports.
const (
	Visa       = "visa"
	Mastercard = "mastercard"
	Amex       = "amex"
	Discover   = "discover"
	Other      = "other"
)

// Bounds of the creditCard object.
const (
	MinDigits = 12
	MaxDigits = 19
	// MaxYearsAhead bounds an expiry date: cards are issued for a few years,
	// so 2099 is a typing error.
	MaxYearsAhead = 20
)

// Card is a payment card as sent with a booking. Number is digits only;
// ExpYear has four digits.
type Card struct {
	Number     string
	NameOnCard string
	ExpMonth   int // 1 to 12
	ExpYear    int
	CVC        string
	FirstName  string
	LastName   string
	Phone      string
	Address    string
	City       string
	State      string
	PostCode   string
	Country    string // ISO 3166-1 alpha-2, upper case; "" when not sent
}

var (
	expiration = regexp.MustCompile(`^(0?[1-9]|1[0-2])/([0-9]{2}|[0-9]{4})$`)
	cvcDigits  = regexp.MustCompile(`^[0-9]{3,4}$`)
)

// Read reads a creditCard object. A nil o (the object was absent or not an
// object, already reported) gives the zero Card. Expiry is checked against
// now: a card is valid through the last day of its expiry month (UTC).
func Read(o *fields.Object, now time.Time) Card {
	var c Card
	if o == nil {
		return c
	}
	c.Number = readNumber(o, "CCNumber")
	c.NameOnCard, _ = o.String("NameOnCard", fields.Str{Required: true, Max: 100})
	c.ExpMonth, c.ExpYear = readExpiration(o, "Expiration", now)
	c.CVC = readCVC(o, "CVC", Brand(c.Number))
	name := fields.Str{Max: 100}
	c.FirstName, _ = o.String("FirstName", name)
	c.LastName, _ = o.String("LastName", name)
	c.Phone, _ = o.String("Phone", fields.Str{Max: 30})
	c.Address, _ = o.String("Address", fields.Str{Max: 500})
	c.City, _ = o.String("City", fields.Str{Max: 200})
	c.State, _ = o.String("State", fields.Str{Max: 200})
	c.PostCode, _ = o.String("PostCode", fields.Str{Max: 20})
	c.Country, _ = guest.ReadCountry(o, "Country", false)
	return c
}

// readNumber accepts digits with spaces and dashes between groups, as
// printed on the card, and returns the digits.
func readNumber(o *fields.Object, name string) string {
	s, ok := o.String(name, fields.Str{Required: true, Max: 2 * MaxDigits})
	if !ok {
		return ""
	}
	n := strings.NewReplacer(" ", "", "-", "").Replace(s)
	switch {
	case strings.Trim(n, "0123456789") != "":
		o.Add(name, "must contain digits only")
	case len(n) < MinDigits || len(n) > MaxDigits:
		o.Addf(name, "must have %d to %d digits", MinDigits, MaxDigits)
	case !Luhn(n):
		o.Add(name, "is not a valid card number")
	default:
		return n
	}
	return ""
}

func readExpiration(o *fields.Object, name string, now time.Time) (month, year int) {
	s, ok := o.String(name, fields.Str{Required: true})
	if !ok {
		return 0, 0
	}
	m := expiration.FindStringSubmatch(s)
	if m == nil {
		o.Add(name, "must be MM/YYYY")
		return 0, 0
	}
	month, _ = strconv.Atoi(m[1])
	year, _ = strconv.Atoi(m[2])
	if len(m[2]) == 2 {
		year += 2000
	}
	now = now.UTC()
	switch {
	case expired(month, year, now):
		o.Add(name, "has expired")
		return 0, 0
	case year > now.Year()+MaxYearsAhead:
		o.Addf(name, "must be at most %d years ahead", MaxYearsAhead)
		return 0, 0
	}
	return month, year
}

// readCVC checks the number of digits for the brand: 4 for American
// Express, 3 for the other known brands, 3 or 4 otherwise.
func readCVC(o *fields.Object, name, brand string) string {
	s, ok := o.String(name, fields.Str{Required: true})
	if !ok {
		return ""
	}
	switch {
	case !cvcDigits.MatchString(s):
		o.Add(name, "must be 3 or 4 digits")
	case brand == Amex && len(s) != 4:
		o.Add(name, "must be 4 digits for American Express cards")
	case brand != Amex && brand != Other && len(s) != 3:
		o.Add(name, "must be 3 digits")
	default:
		return s
	}
	return ""
}

func expired(month, year int, now time.Time) bool {
	firstAfter := time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(firstAfter)
}

// Expired reports whether the card's expiry month has ended at now.
func (c Card) Expired(now time.Time) bool { return expired(c.ExpMonth, c.ExpYear, now.UTC()) }

// Expiry is the expiry date written MM/YYYY.
func (c Card) Expiry() string { return fmt.Sprintf("%02d/%04d", c.ExpMonth, c.ExpYear) }

// Last4 is the last four digits of the number.
func (c Card) Last4() string { return Last4(c.Number) }

// Brand is the card's network, from its number.
func (c Card) Brand() string { return Brand(c.Number) }

// Masked is the number as it may be shown: "•••• 4242".
func (c Card) Masked() string { return Mask(c.Number) }

// String shows the card without its number or CVC:
// "visa •••• 4242 exp 12/2030".
func (c Card) String() string {
	return redacted(c.Number, c.ExpMonth, c.ExpYear)
}

// Format prints the redacted String for every verb, including %#v and %+v.
func (c Card) Format(f fmt.State, verb rune) { format(f, verb, c.String()) }

// LogValue shows the redacted card in slog records.
func (c Card) LogValue() slog.Value { return logValue(c.Number, c.ExpMonth, c.ExpYear) }

// MarshalJSON writes the redacted card, so that a card that reaches a JSON
// log or response by mistake shows no secret. Use Storable to keep a card.
func (c Card) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Brand  string `json:"brand"`
		Number string `json:"number"`
		Expiry string `json:"expiry"`
	}{c.Brand(), c.Masked(), c.Expiry()})
}

// Storable is what may be kept of the card: everything but the CVC.
func (c Card) Storable() Stored {
	return Stored{
		Number: c.Number, Masked: c.Masked(), Last4: c.Last4(), Brand: c.Brand(),
		ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, NameOnCard: c.NameOnCard,
		FirstName: c.FirstName, LastName: c.LastName, Phone: c.Phone, Address: c.Address,
		City: c.City, State: c.State, PostCode: c.PostCode, Country: c.Country,
	}
}

// Stored is the part of a card that may be kept "for later use" (B1). It
// never holds the CVC. Number is the full number: seal it (libs/seal)
// before writing, or seal the whole JSON document. Like Card, it prints
// redacted; only json.Marshal writes the number.
type Stored struct {
	Number     string `json:"number"`
	Masked     string `json:"masked"`
	Last4      string `json:"last4"`
	Brand      string `json:"brand"`
	ExpMonth   int    `json:"expMonth"`
	ExpYear    int    `json:"expYear"`
	NameOnCard string `json:"nameOnCard"`
	FirstName  string `json:"firstName,omitempty"`
	LastName   string `json:"lastName,omitempty"`
	Phone      string `json:"phone,omitempty"`
	Address    string `json:"address,omitempty"`
	City       string `json:"city,omitempty"`
	State      string `json:"state,omitempty"`
	PostCode   string `json:"postCode,omitempty"`
	Country    string `json:"country,omitempty"`
}

// Card rebuilds a Card from a stored one, without CVC, for charges that the
// payment schedule makes later (paymentAuto).
func (s Stored) Card() Card {
	return Card{
		Number: s.Number, NameOnCard: s.NameOnCard, ExpMonth: s.ExpMonth, ExpYear: s.ExpYear,
		FirstName: s.FirstName, LastName: s.LastName, Phone: s.Phone, Address: s.Address,
		City: s.City, State: s.State, PostCode: s.PostCode, Country: s.Country,
	}
}

// String shows the stored card without its number.
func (s Stored) String() string { return redacted(s.Number, s.ExpMonth, s.ExpYear) }

// Format prints the redacted String for every verb.
func (s Stored) Format(f fmt.State, verb rune) { format(f, verb, s.String()) }

// LogValue shows the redacted stored card in slog records.
func (s Stored) LogValue() slog.Value { return logValue(s.Number, s.ExpMonth, s.ExpYear) }

// Mask shows only the last four digits of a number: "•••• 4242". Characters
// other than digits are ignored; a number of four digits or fewer shows
// none of them.
func Mask(number string) string {
	l4 := Last4(number)
	if l4 == "" {
		return "••••"
	}
	return "•••• " + l4
}

// Last4 is the last four digits of number, or "" when it has four digits
// or fewer (they would be the whole number).
func Last4(number string) string {
	d := digitsOf(number)
	if len(d) <= 4 {
		return ""
	}
	return d[len(d)-4:]
}

// Brand tells the card network from the number's prefix (IIN): visa,
// mastercard, amex, discover or other.
func Brand(number string) string {
	d := digitsOf(number)
	prefix := func(n int) int {
		if len(d) < n {
			return -1
		}
		v, _ := strconv.Atoi(d[:n])
		return v
	}
	switch p2, p3, p4, p6 := prefix(2), prefix(3), prefix(4), prefix(6); {
	case len(d) == 0:
		return Other
	case d[0] == '4':
		return Visa
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return Mastercard
	case p2 == 34, p2 == 37:
		return Amex
	case p4 == 6011, p2 == 65, p3 >= 644 && p3 <= 649, p6 >= 622126 && p6 <= 622925:
		return Discover
	}
	return Other
}

// Luhn reports whether the digits of number pass the Luhn check. A string
// with anything but digits fails.
func Luhn(number string) bool {
	if number == "" {
		return false
	}
	sum, double := 0, false
	for i := len(number) - 1; i >= 0; i-- {
		c := number[i]
		if c < '0' || c > '9' {
			return false
		}
		n := int(c - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func redacted(number string, month, year int) string {
	return fmt.Sprintf("%s %s exp %02d/%04d", Brand(number), Mask(number), month, year)
}

func format(f fmt.State, verb rune, s string) {
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = f.Write([]byte(s))
}

func logValue(number string, month, year int) slog.Value {
	return slog.GroupValue(
		slog.String("brand", Brand(number)),
		slog.String("number", Mask(number)),
		slog.String("expiry", fmt.Sprintf("%02d/%04d", month, year)),
	)
}

// ReadEngine reads the booking engine's card object (docs/booking-engine.md): number (digits,
// spaces and dashes between groups), name, exp_month (1 to 12), exp_year (four digits, or two
// meaning 20YY) and cvc. A nil o gives the zero Card. Expiry is checked against now as Read
// checks it; an expired card is named on exp_year.
func ReadEngine(o *fields.Object, now time.Time) Card {
	var c Card
	if o == nil {
		return c
	}
	c.Number = readNumber(o, "number")
	c.NameOnCard, _ = o.String("name", fields.Str{Required: true, Max: 100})
	month, mok := o.Int("exp_month", fields.Int{Required: true, Min: 1, Max: 12})
	year, yok := o.Int("exp_year", fields.Int{Required: true, Min: 0, Max: 9999})
	if yok && year < 100 {
		year += 2000
	}
	now = now.UTC()
	switch {
	case !mok || !yok:
	case year < 2000 || expired(month, year, now):
		o.Add("exp_year", "the card has expired")
	case year > now.Year()+MaxYearsAhead:
		o.Addf("exp_year", "must be at most %d years ahead", MaxYearsAhead)
	default:
		c.ExpMonth, c.ExpYear = month, year
	}
	c.CVC = readCVC(o, "cvc", Brand(c.Number))
	return c
}
