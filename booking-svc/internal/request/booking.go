package request

import (
	"regexp"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/fields"
)

// B1 field names, as sent and as reported in violations and Sent.
const (
	FieldUserID           = "userId"
	FieldPropertyID       = "propertyId"
	FieldBookingID        = "bookingId"
	FieldFirstName        = "firstName"
	FieldLastName         = "lastName"
	FieldBirthday         = "birthday"
	FieldBirthplace       = "birthplace"
	FieldAddress          = "address"
	FieldPhone1           = "phone1"
	FieldPhone2           = "phone2"
	FieldEmail            = "email"
	FieldAdults           = "numberofadults"
	FieldChildren         = "numberofchildren"
	FieldLeadSourceID     = "leadsourceId"
	FieldCheckin          = "checkin"
	FieldCheckout         = "checkout"
	FieldService          = "service"
	FieldCurrency         = "currency"
	FieldDamageProtection = "csaDamageProtection"
	FieldTravelInsurance  = "csaTravelInsurance"
	FieldCity             = "city"
	FieldState            = "state"
	FieldPostcode         = "postcode"
	FieldCountry          = "country"
	FieldFiscalCode       = "fiscal_code"
	FieldPromotionCode    = "promotionCode"
	FieldPaymentCharge    = "paymentCharge"
	FieldPaymentAuto      = "paymentAuto"
	FieldCreditCard       = "creditCard"
	FieldBrandID          = "brandId"
	FieldOther            = "other"
	FieldAction           = "action"
	FieldPaymentID        = "paymentId"
	FieldAmount           = "amount"
	FieldDescription      = "description"
	FieldTime             = "time"

	protectionUSOnlyMessage = "is only available for US addresses (country US)"
)

// Bounds of B1; those the spec leaves open are choices documented in
// docs/interface-b-fields.md.
const (
	MaxGuests      = 50  // numberofadults, numberofchildren
	MaxNights      = 365 // checkin to checkout
	MaxName        = 100
	MaxBirthplace  = 100
	MaxAddress     = 500
	MaxPhone       = 30
	MaxCity        = 200
	MaxPostcode    = 20 // letters, digits, spaces and hyphens (HA3 0BL, 62701-1234)
	MaxFiscalCode  = 32
	MaxPromotion   = 50
	MaxOther       = 5000
	DefaultCountry = guest.DefaultCountry
)

// Booking holds the B1 fields of a create body, or the values an update
// body sent.
type Booking struct {
	PropertyID    int
	UserID        int // 0: none
	FirstName     string
	LastName      string
	Email         string    // as given
	Birthday      time.Time // midnight UTC; zero when not given
	Birthplace    string
	Address       string
	Phone1        string
	Phone2        string
	City          string
	State         string
	Postcode      string // as sent (trimmed): digits, letters, spaces, hyphens; leading zeros kept
	Country       string // ISO 3166-1 alpha-2 upper case; "" when not given
	FiscalCode    string
	PromotionCode string
	Adults        int
	Children      int
	LeadSourceID  int // 0: not sent; a create then uses the account's default lead source
	Checkin       time.Time
	Checkout      time.Time

	// Services nil: not sent, the property's default services apply.
	// Non-nil and empty: no services.
	Services []Service
	Currency string // ISO 4217 upper case; "" means the main currency

	DamageProtection bool
	TravelInsurance  bool

	// CountryReplaced says that the country sent was not a valid code and
	// Country holds DefaultCountry instead (B1: "an invalid code is
	// replaced by the US code").
	CountryReplaced bool

	// PaymentCharge and Card are instructions of one request, not booking
	// state.
	PaymentCharge bool
	Card          *card.Card // nil: not sent
	PaymentAuto   bool

	BrandID int // 0: none
	Other   string

	// RatePlanID is the plan booked (0: the standard plan; on update, not sent keeps the
	// booking's); Channel the channel its price is quoted for ("": direct).
	RatePlanID int
	Channel    string
}

// Nights is the number of nights from Checkin to Checkout.
func (b Booking) Nights() int {
	return int(b.Checkout.Sub(b.Checkin).Hours() / 24)
}

// Protection reports whether either protection product is used.
func (b Booking) Protection() bool { return b.DamageProtection || b.TravelInsurance }

// Sent is the set of B1 field names an update body carried (Field...
// constants). A member sent as null, or a number sent as "", is not sent.
type Sent map[string]bool

// Has reports whether field was sent.
func (s Sent) Has(field string) bool { return s[field] }

// Update is a decoded update body: the booking id, the values sent (in
// Booking, zero where not sent) and which fields were sent.
type Update struct {
	BookingID int
	Booking   Booking
	Sent      Sent
}

// DecodeCreate reads a create body. now dates the birthday and card
// expiry checks.
func DecodeCreate(body []byte, now time.Time) (Booking, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) Booking {
		b, _ := readBooking(o, now, true)
		checkBooking(b, v, func(field string) bool { return violated(*v, field) })
		return b
	})
}

// DecodeUpdate reads an update body: bookingId is required, every other
// field is optional and recorded in Sent. Rules between fields are checked
// when all their fields were sent; the domain checks them again on the
// booking the update makes (booking.Draft.Check).
func DecodeUpdate(body []byte, now time.Time) (Update, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) Update {
		var u Update
		u.BookingID, _ = o.Int(FieldBookingID, idRule(true))
		u.Booking, u.Sent = readBooking(o, now, false)
		checkBooking(u.Booking, v, func(field string) bool {
			if field == FieldCreditCard {
				return violated(*v, field) // per-request: judged on the body
			}
			return !u.Sent.Has(field) || violated(*v, field)
		})
		return u
	})
}

// checkBooking adds the violations of the rules spanning fields. unknown
// reports fields whose value cannot be judged (not sent, or already wrong);
// a rule involving one is skipped.
func checkBooking(b Booking, v *fields.Violations, unknown func(field string) bool) {
	if !unknown(FieldCheckin) && !unknown(FieldCheckout) {
		checkStay(v, b.Checkin, b.Checkout)
	}
	if b.Protection() {
		flag := FieldDamageProtection
		if !b.DamageProtection {
			flag = FieldTravelInsurance
		}
		if !unknown(flag) {
			for _, f := range []struct{ field, value string }{
				{FieldCity, b.City}, {FieldState, b.State}, {FieldPostcode, b.Postcode},
			} {
				if f.value == "" && !unknown(f.field) {
					v.Add(f.field, "is required when csaDamageProtection or csaTravelInsurance is 1")
				}
			}
			if b.Country != "" && b.Country != DefaultCountry && !unknown(FieldCountry) {
				v.Add(flag, protectionUSOnlyMessage)
			}
		}
	}
	if b.PaymentCharge && b.Card == nil && !unknown(FieldCreditCard) && !unknown(FieldPaymentCharge) {
		v.Add(FieldCreditCard, "is required when paymentCharge is 1")
	}
}

// checkStay checks a stay's dates: checkout after checkin, at most
// MaxNights nights.
func checkStay(v *fields.Violations, checkin, checkout time.Time) {
	switch {
	case checkin.IsZero() || checkout.IsZero():
	case !checkout.After(checkin):
		v.Add(FieldCheckout, "must be after checkin")
	case checkout.Sub(checkin) > MaxNights*24*time.Hour:
		v.Addf(FieldCheckout, "must be at most %d nights after checkin", MaxNights)
	}
}

// readBooking reads the B1 fields. On create the spec's required fields
// are required; on update every field is optional, a required field sent
// blank is refused and optional text sent blank clears the value.
func readBooking(o *fields.Object, now time.Time, create bool) (Booking, Sent) {
	var b Booking
	sent := Sent{}
	mark := func(field string, ok bool) {
		if ok {
			sent[field] = true
		}
	}
	// text reads a string; required fields may not be cleared on update.
	text := func(field string, dst *string, max int, required bool) {
		s, ok := o.String(field, fields.Str{Required: required && create, Max: max})
		if ok && s == "" && required {
			o.Add(field, "must not be blank")
			return
		}
		*dst = s
		mark(field, ok)
	}
	integer := func(field string, dst *int, r fields.Int) {
		r.Required = r.Required && create
		n, ok := o.Int(field, r)
		*dst = n
		mark(field, ok)
	}
	date := func(field string, dst *time.Time, required bool) {
		d, ok := readStayDate(o, field, required && create)
		*dst = d
		mark(field, ok)
	}
	flag := func(field string, dst *bool) {
		f, ok := readFlag(o, field)
		*dst = f
		mark(field, ok)
	}

	integer(FieldPropertyID, &b.PropertyID, idRule(true))
	integer(FieldUserID, &b.UserID, idRule(false))
	text(FieldFirstName, &b.FirstName, MaxName, true)
	text(FieldLastName, &b.LastName, MaxName, true)
	if e, ok := o.Email(FieldEmail, create); ok {
		if e == "" {
			o.Add(FieldEmail, "must not be blank")
		} else {
			b.Email = e
			mark(FieldEmail, true)
		}
	}
	if d, ok := readPastDate(o, FieldBirthday, now); ok {
		b.Birthday = d
		mark(FieldBirthday, true)
	}
	text(FieldBirthplace, &b.Birthplace, MaxBirthplace, false)
	text(FieldAddress, &b.Address, MaxAddress, false)
	text(FieldPhone1, &b.Phone1, MaxPhone, false)
	text(FieldPhone2, &b.Phone2, MaxPhone, false)
	text(FieldCity, &b.City, MaxCity, false)
	text(FieldState, &b.State, MaxCity, false)
	b.Postcode, sent[FieldPostcode] = readPostcode(o, FieldPostcode)
	b.Country, b.CountryReplaced, sent[FieldCountry] = readBookingCountry(o, FieldCountry)
	text(FieldFiscalCode, &b.FiscalCode, MaxFiscalCode, false)
	text(FieldPromotionCode, &b.PromotionCode, MaxPromotion, false)
	integer(FieldAdults, &b.Adults, fields.Int{Required: true, Min: 1, Max: MaxGuests})
	integer(FieldChildren, &b.Children, fields.Int{Max: MaxGuests})
	integer(FieldLeadSourceID, &b.LeadSourceID, idRule(false))
	date(FieldCheckin, &b.Checkin, true)
	date(FieldCheckout, &b.Checkout, true)
	b.Services, sent[FieldService] = readServices(o, FieldService, false)
	b.Currency, sent[FieldCurrency] = readCurrency(o, FieldCurrency)
	flag(FieldDamageProtection, &b.DamageProtection)
	flag(FieldTravelInsurance, &b.TravelInsurance)
	flag(FieldPaymentCharge, &b.PaymentCharge)
	flag(FieldPaymentAuto, &b.PaymentAuto)
	if c := o.Object(FieldCreditCard, false); c != nil {
		cc := card.Read(c, now)
		b.Card = &cc
		mark(FieldCreditCard, true)
	}
	integer(FieldBrandID, &b.BrandID, idRule(false))
	text(FieldOther, &b.Other, MaxOther, false)
	integer(FieldRatePlanID, &b.RatePlanID, ratePlanRule)
	b.Channel, sent[FieldChannel] = readChannel(o)
	for k, ok := range sent {
		if !ok {
			delete(sent, k)
		}
	}
	return b, sent
}

// readPostcode reads B1's postcode. B1 types it "integer", but guests abroad have codes
// such as HA3 0BL or 1010-123, so it is text: up to MaxPostcode letters, digits, spaces and
// hyphens, starting with a letter or digit, sent as a string or a number (leading zeros
// survive as text). A blank value reads as "", present.
func readPostcode(o *fields.Object, name string) (string, bool) {
	s, ok := o.String(name, fields.Str{})
	if !ok || s == "" {
		return s, ok
	}
	s = strings.TrimSpace(s)
	if !postcode.MatchString(s) {
		o.Add(name, "must contain only letters, digits, spaces and hyphens, starting with a letter or digit")
		return "", false
	}
	if len(s) > MaxPostcode {
		o.Addf(name, "must be at most %d characters", MaxPostcode)
		return "", false
	}
	return s, true
}

var postcode = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 -]*$`)

// readBookingCountry applies B1's rule: "an invalid code is replaced by
// the US code". Any string that is not an ISO 3166-1 alpha-2 code becomes
// DefaultCountry with replaced set; only a value that is not a string at
// all (an object, a boolean) is a violation. Blank reads as "", present.
func readBookingCountry(o *fields.Object, name string) (code string, replaced, sent bool) {
	s, ok := o.String(name, fields.Str{})
	if !ok || s == "" {
		return s, false, ok
	}
	if c, valid := guest.ParseCountry(s); valid {
		return c, false, true
	}
	return DefaultCountry, true, true
}
