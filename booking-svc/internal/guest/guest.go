// Package guest is the pure domain of interface B's guest users (B4): the
// user record, the rules of the adduser, updateuser, login and usesocialuser
// bodies, password hashing, and the person fields other packages share
// (email addresses, country codes).
//
// It does no I/O and reads no clock. Readers take a *fields.Object, record
// every violation under the field names as sent and never stop early.
package guest

import (
	"strings"

	"github.com/vros/vros/libs/fields"
)

// DefaultCountry is the country of a user who names none (B4: default US),
// and the fallback of CountryFromLocale.
const DefaultCountry = "US"

// Bounds the spec leaves open; see docs/interface-b-fields.md.
const (
	MaxName        = 100
	MaxCompany     = 200
	MaxAddress     = 500
	MaxPhone       = 30
	MinPassword    = 6  // characters (B4, Limits)
	MaxPassword    = 72 // bytes: bcrypt ignores anything longer
	maxLocale      = 35 // a BCP 47 tag of reasonable length
	maxLoginSecret = 1024
)

// User is a stored guest user (B4). Email keeps the spelling the user gave;
// EmailKey is what uniqueness and login look-ups compare.
type User struct {
	UserID       int
	Email        string
	Name         string
	Company      string
	Address      string
	Country      string // ISO 3166-1 alpha-2, upper case
	Phone1       string
	Phone2       string
	PasswordHash string // bcrypt; empty for a user created by social login
}

// EmailKey is the user's email in the form used for uniqueness.
func (u User) EmailKey() string { return EmailKey(u.Email) }

// EmailKey lower-cases an address, so that Ann@Example.com and
// ann@example.com are one user.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// NewUser is a decoded adduser body.
type NewUser struct {
	Email    string
	Password string // plain; hash it with HashPassword, never store it
	Name     string
	Company  string
	Address  string
	Country  string // DefaultCountry when not sent or blank
	Phone1   string
	Phone2   string
}

// User returns the record to store for n, with the given password hash.
func (n NewUser) User(passwordHash string) User {
	return User{
		Email: n.Email, Name: n.Name, Company: n.Company, Address: n.Address,
		Country: n.Country, Phone1: n.Phone1, Phone2: n.Phone2, PasswordHash: passwordHash,
	}
}

// Update is a decoded updateuser body. A nil field was not sent and keeps
// the stored value; a pointer to "" clears an optional field.
type Update struct {
	UserID   int
	Email    *string
	Password *string // nil (absent or blank): the password is unchanged
	Name     *string
	Company  *string
	Address  *string
	Country  *string // a blank value reads as DefaultCountry
	Phone1   *string
	Phone2   *string
}

// Apply returns u with the sent fields replaced. The password is not
// touched: the caller hashes *up.Password and sets PasswordHash itself.
func (up Update) Apply(u User) User {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&u.Email, up.Email)
	set(&u.Name, up.Name)
	set(&u.Company, up.Company)
	set(&u.Address, up.Address)
	set(&u.Country, up.Country)
	set(&u.Phone1, up.Phone1)
	set(&u.Phone2, up.Phone2)
	return u
}

// Credentials is a decoded login body.
type Credentials struct {
	Email    string
	Password string
}

// Social is a decoded usesocialuser body. Country is derived from Locale.
type Social struct {
	Email   string
	Name    string
	Locale  string
	Country string
}

// User returns the record to store for a first social login: no password.
func (s Social) User() User {
	return User{Email: s.Email, Name: s.Name, Country: s.Country}
}

var (
	nameRule    = fields.Str{Required: true, Min: 1, Max: MaxName}
	companyRule = fields.Str{Max: MaxCompany}
	addressRule = fields.Str{Max: MaxAddress}
	phoneRule   = fields.Str{Max: MaxPhone}
)

// ReadNew reads the adduser fields of o.
func ReadNew(o *fields.Object) NewUser {
	var n NewUser
	n.Email, _ = o.Email("email", true)
	n.Password, _ = readPassword(o, "password", true)
	n.Name, _ = o.String("name", nameRule)
	n.Company, _ = o.String("company", companyRule)
	n.Address, _ = o.String("address", addressRule)
	n.Country = DefaultCountry
	if c, ok := ReadCountry(o, "country", false); ok && c != "" {
		n.Country = c
	}
	n.Phone1, _ = o.String("phone1", phoneRule)
	n.Phone2, _ = o.String("phone2", phoneRule)
	return n
}

// ReadUpdate reads the updateuser fields of o.
func ReadUpdate(o *fields.Object) Update {
	var up Update
	up.UserID, _ = o.Int("userId", idRule(true))
	if e, ok := o.Email("email", false); ok {
		if e == "" {
			o.Add("email", "must not be blank")
		} else {
			up.Email = &e
		}
	}
	if p, ok := readPassword(o, "password", false); ok && p != "" {
		up.Password = &p
	}
	if s, ok := o.String("name", fields.Str{Max: MaxName}); ok {
		if s == "" {
			o.Add("name", "must not be blank")
		} else {
			up.Name = &s
		}
	}
	up.Company = optional(o.String("company", companyRule))
	up.Address = optional(o.String("address", addressRule))
	if c, ok := ReadCountry(o, "country", false); ok {
		if c == "" {
			c = DefaultCountry
		}
		up.Country = &c
	}
	up.Phone1 = optional(o.String("phone1", phoneRule))
	up.Phone2 = optional(o.String("phone2", phoneRule))
	return up
}

// ReadCredentials reads the login fields of o. Only presence and a sanity
// bound are checked: the rules of adduser would tell a caller which
// passwords cannot exist.
func ReadCredentials(o *fields.Object) Credentials {
	var c Credentials
	c.Email, _ = o.String("email", fields.Str{Required: true, Max: fields.MaxEmail})
	c.Password, _ = o.String("password", fields.Str{Required: true, Max: maxLoginSecret})
	return c
}

// ReadSocial reads the usesocialuser fields of o and derives the country
// from the locale.
func ReadSocial(o *fields.Object) Social {
	var s Social
	s.Email, _ = o.Email("email", true)
	s.Name, _ = o.String("name", nameRule)
	var ok bool
	if s.Locale, ok = o.String("locale", fields.Str{Required: true, Max: maxLocale}); ok {
		s.Country = CountryFromLocale(s.Locale)
	}
	return s
}

// readPassword applies the adduser password rules: at least MinPassword
// characters and at most MaxPassword bytes. The value is never trimmed.
func readPassword(o *fields.Object, name string, required bool) (string, bool) {
	p, ok := o.String(name, fields.Str{Required: required, Min: MinPassword})
	if !ok || p == "" {
		return p, ok
	}
	if len(p) > MaxPassword {
		o.Addf(name, "must be at most %d bytes (the limit of bcrypt)", MaxPassword)
		return "", false
	}
	return p, true
}

// idRule is the rule of a numeric id: 1 to 2147483647.
func idRule(required bool) fields.Int {
	return fields.Int{Required: required, Min: 1, Max: 2147483647}
}

func optional[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}
