// Package arrival is a booking's arrival form (B5): how and when the party
// arrives and who its guests are. It reads the updatearrivalform fields and
// merges them into the stored form.
//
// The package does no I/O and reads no clock.
package arrival

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/fields"
)

// Means of arrival (B5 arriveBy), stored lower case.
var Means = []string{"car", "plane", "bus", "ferry", "train", "coach", "other"}

// Bounds the spec leaves open; see docs/interface-b-fields.md.
const (
	MaxGuests          = 50
	MaxTransportNumber = 50
	MaxURL             = 2048
	MaxName            = 100
	MaxPhone           = 30
	MaxAddress         = 500
	MaxAllergies       = 1000
	linkMsg            = "must be an http or https link"
	timeMsg            = "must be a 24-hour time H:i, such as 09:05"
)

var clock = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):([0-5][0-9])$`)

// Arrival is the stored arrival form of a booking.
type Arrival struct {
	ArriveBy        string // one of Means, or "" when not given
	TransportNumber string
	ExpectedTime    string // "HH:MM", or ""
	URL             string
	IsCompleted     bool
	Guests          []Guest
}

// Guest is one person of the party (a detailInformation item).
type Guest struct {
	Name          string
	Surname       string
	DateOfBirth   time.Time // midnight UTC; zero when not given
	Nationality   string    // ISO 3166-1 alpha-2, upper case, or ""
	Email         string
	PhoneNumber   string
	FrontDocument string // http(s) link to an image of the identity document
	BackDocument  string
	Address       string
	Allergies     string
}

// Form is a decoded arrival form. A nil field was not sent and keeps the
// stored value; a pointer to "" clears a text field. DetailInformation, when
// sent, replaces the whole guest list (B5), and an empty list removes it.
type Form struct {
	ArriveBy          *string
	TransportNumber   *string
	ExpectedTime      *string
	URL               *string
	IsCompleted       *bool
	DetailInformation *[]Guest
}

// Apply returns a with the sent fields of f replaced.
func (f Form) Apply(a Arrival) Arrival {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.ArriveBy, f.ArriveBy)
	set(&a.TransportNumber, f.TransportNumber)
	set(&a.ExpectedTime, f.ExpectedTime)
	set(&a.URL, f.URL)
	if f.IsCompleted != nil {
		a.IsCompleted = *f.IsCompleted
	}
	if f.DetailInformation != nil {
		a.Guests = append([]Guest{}, *f.DetailInformation...)
	}
	return a
}

// Read reads the arrival form members of o. Dates of birth are checked
// against now: none may be after today (UTC).
func Read(o *fields.Object, now time.Time) Form {
	var f Form
	if s, ok := o.String("arriveBy", fields.Str{OneOf: Means, IgnoreCase: true}); ok {
		f.ArriveBy = &s
	}
	f.TransportNumber = optional(o.String("transportNumber", fields.Str{Max: MaxTransportNumber}))
	if t, ok := readClock(o, "expectedTime"); ok {
		f.ExpectedTime = &t
	}
	if u, ok := ReadLink(o, "url"); ok {
		f.URL = &u
	}
	f.IsCompleted = optional(o.Bool("isCompleted", false))
	if o.Has("detailInformation") && o.Empty("detailInformation") {
		f.DetailInformation = &[]Guest{}
	} else if items, ok := o.Array("detailInformation", fields.List{Max: MaxGuests}); ok {
		guests := make([]Guest, 0, len(items))
		for _, it := range items {
			guests = append(guests, readGuest(it, now))
		}
		f.DetailInformation = &guests
	}
	return f
}

func readGuest(o *fields.Object, now time.Time) Guest {
	var g Guest
	g.Name, _ = o.String("name", fields.Str{Required: true, Max: MaxName})
	g.Surname, _ = o.String("surname", fields.Str{Max: MaxName})
	if d, ok := o.Date("dateOfBirth", false); ok {
		if d.After(today(now)) {
			o.Add("dateOfBirth", "must not be in the future")
		} else {
			g.DateOfBirth = d
		}
	}
	g.Nationality, _ = guest.ReadCountry(o, "nationality", false)
	g.Email, _ = o.Email("email", false)
	g.PhoneNumber, _ = o.String("phoneNumber", fields.Str{Max: MaxPhone})
	g.FrontDocument, _ = ReadLink(o, "frontDocument")
	g.BackDocument, _ = ReadLink(o, "backDocument")
	g.Address, _ = o.String("address", fields.Str{Max: MaxAddress})
	g.Allergies, _ = o.String("allergies", fields.Str{Max: MaxAllergies})
	return g
}

// readClock reads "H:i" (24-hour, hour with or without a leading zero) and
// returns it as "HH:MM". A blank value reads as "", present.
func readClock(o *fields.Object, name string) (string, bool) {
	s, ok := o.String(name, fields.Str{})
	if !ok || s == "" {
		return s, ok
	}
	m := clock.FindStringSubmatch(s)
	if m == nil {
		o.Add(name, timeMsg)
		return "", false
	}
	h := m[1]
	if len(h) == 1 {
		h = "0" + h
	}
	return h + ":" + m[2], true
}

// ReadLink reads an absolute http or https URL with a host, of at most
// 2048 characters. A blank value reads as "", present.
func ReadLink(o *fields.Object, name string) (string, bool) {
	s, ok := o.String(name, fields.Str{Max: MaxURL})
	if !ok || s == "" {
		return s, ok
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.ContainsAny(s, " \t\r\n") {
		o.Add(name, linkMsg)
		return "", false
	}
	return s, true
}

// today is now's calendar date at midnight UTC, comparable with
// fields.Date values.
func today(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func optional[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}
