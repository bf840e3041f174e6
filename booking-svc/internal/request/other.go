package request

import (
	"time"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/fields"
)

// Arrival is a decoded updatearrivalform body.
type Arrival struct {
	BookingID int
	Form      arrival.Form
}

// DecodeArrival reads an updatearrivalform body: bookingId and the B5
// fields. now bounds the guests' dates of birth.
func DecodeArrival(body []byte, now time.Time) (Arrival, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) Arrival {
		var a Arrival
		a.BookingID, _ = o.Int(FieldBookingID, idRule(true))
		a.Form = arrival.Read(o, now)
		return a
	})
}

// DecodeAddUser reads an adduser body.
func DecodeAddUser(body []byte) (guest.NewUser, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) guest.NewUser { return guest.ReadNew(o) })
}

// DecodeUpdateUser reads an updateuser body.
func DecodeUpdateUser(body []byte) (guest.Update, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) guest.Update { return guest.ReadUpdate(o) })
}

// DecodeLogin reads a login body.
func DecodeLogin(body []byte) (guest.Credentials, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) guest.Credentials { return guest.ReadCredentials(o) })
}

// DecodeSocialUser reads a usesocialuser body.
func DecodeSocialUser(body []byte) (guest.Social, error) {
	return decode(body, func(o *fields.Object, _ *fields.Violations) guest.Social { return guest.ReadSocial(o) })
}
