package pricing

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/shopspring/decimal"
)

// Property is everything pricing needs to know about one property. Build it with
// Priced (or FromEvent and ApplySettings), or by hand in tests.
//
// A Property is a value that is read, never changed, by Quote and NightPrice. It carries a
// compiled form of its rates (built by FromEvent, ApplySettings and Prepare) so that a
// calendar does not convert every price of every season for each of its 730 nights. That
// form is rebuilt on the fly, at a cost, when Rates, DatePrices, Currency or WeekendNights
// no longer are the ones it was built from; it cannot see edits made in place inside
// *Rates or DatePrices, so call Prepare after such edits.
type Property struct {
	MaxGuest   int  // guests (adults and children) allowed; 0 means no limit
	NoChildren bool // content.allowchildren is false: children are refused
	Currency   string
	// TimeZone is the property's own IANA zone (content.timezone); empty means the
	// account's, which ApplySettings supplies. Location is the zone in force: "today" and
	// the same-day cut-off are judged there. nil is UTC.
	TimeZone string
	Location *time.Location
	// WeekendNights are the nights (named by the day they start on) that cost the weekend
	// price. The spec leaves "2 or 3 weekend days" to the service: FriSat (the default,
	// used when this is 0) or FriSatSun. Booking and catalog services must use the same
	// value, or a calendar would disagree with a quote.
	WeekendNights Weekdays
	Rates         *Rates             // nil: the property has no rates and cannot be booked
	DatePrices    map[Date]DatePrice // setprices_minnights
	Taxes         []Tax
	Services      []Service // the property's services; those with Default are added to bookings
	Policy        *Policy   // nil: no payment policy (no schedule, no deposit)

	// Rate plans (docs/rate-plans.md). Standard holds the standard plan's terms (nil, or a
	// zero member: "Standard", nothing included, flexible); Plans are the derived plans; Restrictions are
	// the property's restrictions per date, for every plan; Markups are the property's own
	// channel markups and AccountMarkups the account's (ApplyMarkups), which a channel in
	// Markups ignores. Replacing one of these slices is noticed like Rates; edits inside
	// them are not: call Prepare after them.
	Standard       *PlanTerms
	Plans          []Plan
	Restrictions   []Restriction
	Markups        []Markup
	AccountMarkups []Markup

	plan *plan
}

// sameString is a == b without a call when both are the same string, as a Property's
// currency and its plan's are.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// planInputs identifies the rate-plan slices a compiled plan was built from.
type planInputs struct {
	plans, restrictions, markups, account unsafe.Pointer
	n                                     [4]int
}

// same reports whether p still has the slices b was taken from (field by field: comparing
// the structs would call memequal on every NightPrice).
func (b *planInputs) same(p *Property) bool {
	return b.plans == unsafe.Pointer(unsafe.SliceData(p.Plans)) && b.n[0] == len(p.Plans) &&
		b.restrictions == unsafe.Pointer(unsafe.SliceData(p.Restrictions)) && b.n[1] == len(p.Restrictions) &&
		b.markups == unsafe.Pointer(unsafe.SliceData(p.Markups)) && b.n[2] == len(p.Markups) &&
		b.account == unsafe.Pointer(unsafe.SliceData(p.AccountMarkups)) && b.n[3] == len(p.AccountMarkups)
}

func (p *Property) planInputs() planInputs {
	return planInputs{plans: unsafe.Pointer(unsafe.SliceData(p.Plans)), restrictions: unsafe.Pointer(unsafe.SliceData(p.Restrictions)),
		markups: unsafe.Pointer(unsafe.SliceData(p.Markups)), account: unsafe.Pointer(unsafe.SliceData(p.AccountMarkups)),
		n: [4]int{len(p.Plans), len(p.Restrictions), len(p.Markups), len(p.AccountMarkups)}}
}

// Prices are the nightly prices of the base rate or of a season. Optional prices are nil
// when not set; the extra_* prices are per guest above the standard occupancy.
type Prices struct {
	Daily                                               decimal.Decimal
	Weekend, Weekly, Monthly                            *decimal.Decimal
	ExtraDaily, ExtraWeekend, ExtraWeekly, ExtraMonthly *decimal.Decimal
}

// Rates are A4: base prices, minimum stay, length-of-stay discounts, setting and seasons.
type Rates struct {
	Base        Prices
	MinimumStay int
	LOS         []LOS
	Setting     Setting
	Seasons     []Season // inclusive date ranges that do not overlap
}

// LOS is a length-of-stay discount: Percent off the total rent of stays of at least Days
// nights.
type LOS struct {
	Days    int
	Percent decimal.Decimal
}

// Setting is A4's setting.
type Setting struct {
	StandardOccupants int // guests included in the price; 0: every guest is included
	AcceptBookingUpto int // months ahead a check-in may be; 0: no limit
	ApplyWeekendPrice bool
	// DefaultCheckin and DefaultCheckout are the days a stay may start and end on; 0 is All.
	DefaultCheckin, DefaultCheckout Weekdays
	ApplyExtraFeePerSeason          bool
	// SameDayUntil (allow_same_day_booking_until) is the local time until which a stay
	// starting today may be booked; AdvanceNoticeDays (advanced_notice_booking_from) is how
	// many days ahead a check-in must be. A4 sets exactly one; neither means same-day
	// bookings are taken all day.
	SameDayUntil              *Clock
	AdvanceNoticeDays         int
	Apply6NightsWeeklyRate    bool
	FirstDaySurcharge         decimal.Decimal
	FirstDaySurchargeOneNight bool // first_day_surcharge_apply_one_night
}

// Season overrides the base rate between Start and End, both included.
type Season struct {
	Name        string
	MinimumStay int // 0: the base minimum stay
	Start, End  Date
	Prices
	AllowCheckin, AllowCheckout Weekdays // 0: the setting's defaults
}

// DatePrice is a per-date override set by setprices_minnights. A nil price leaves that
// price to the season or base rate; MinNights 0 leaves the minimum stay to them.
type DatePrice struct {
	Price, Weekly, Monthly *decimal.Decimal
	MinNights              int
}

// Tax types and what a fixed tax multiplies by (docs/interface-a.md, /api/property-tax).
const (
	TaxPercent = 1 // percent of the total rent
	TaxFixed   = 2 // a fixed amount per Calculation

	PerStay       = 1
	PerNight      = 2
	PerGuestNight = 3
)

// Tax is one rent tax. Only taxes with Default are charged.
type Tax struct {
	Name        string
	Type        int
	Amount      decimal.Decimal // a percent for TaxPercent, money for TaxFixed
	Calculation int             // for TaxFixed: PerStay (also 0), PerNight or PerGuestNight
	Default     bool
}

// Service types and what a fixed service multiplies by (B1's service line). Note the
// reverse order of the tax types.
const (
	ServiceFixed   = 1
	ServicePercent = 2

	ApplyPerStay       = 1
	ApplyPerNight      = 2
	ApplyPerGuest      = 3
	ApplyPerGuestNight = 4
)

// ServiceLine is a service as a booking request (B1) sends it, or as the property defines it.
type ServiceLine struct {
	Name       string
	Applicable int             // ApplyPerStay (also 0) … ApplyPerGuestNight
	Amount     decimal.Decimal // money for ServiceFixed, a percent for ServicePercent
	Type       int             // ServiceFixed or ServicePercent
	Unit       int             // 0 is 1
	Taxes      []ServiceTax
}

// ServiceTax is a tax on a service line: Perc percent of the line's amount.
type ServiceTax struct {
	Name string
	Perc decimal.Decimal
}

// Service is one of the property's services; Default ones are added when a request does
// not list its services.
type Service struct {
	ServiceLine
	Default bool
}

// Payment types, due moments and amount types of A3, spelled as A3 spells them.
const (
	PayFull    = "Full"
	PayPartial = "Partial"
	PayNone    = "None"

	DueBooking          = "Booking"
	DueArrival          = "Arrival"
	DueCheckout         = "Check-out"
	DueXDayPriorArrival = "XDayPriorArrival"
	DueXDayAfterBooking = "XDayAfterBooking"

	Flat                = "Flat"
	PercentOfRent       = "PercentOfRent"
	PercentOfGrandTotal = "PercentOfGrandTotal"
)

// Policy is A3's short_stay.
type Policy struct {
	PaymentType   string
	DamageDeposit *Charge // nil: no deposit
	Full          *Charge // payment_full: Due and XDay only
	First         *Charge // payment_partial.first_payment
	Remaining     *Charge // payment_partial.remaining_payment: Due and XDay only
}

// Charge is a due payment of the policy: when (Due, XDay) and, where it has one, how much
// (AmountType, Amount: money for Flat, a percent otherwise).
type Charge struct {
	Due        string
	XDay       int
	AmountType string
	Amount     decimal.Decimal
}

// Prepare compiles the rates for Quote and NightPrice. FromEvent and ApplySettings call
// it; call it yourself after building or editing a Property by hand. It also reports a
// Property whose rates cannot be priced (a negative price, overlapping seasons).
func (p *Property) Prepare() error {
	pl, err := compile(p)
	if err != nil {
		return err
	}
	p.plan = pl
	return nil
}

// ApplySettings applies the account settings of a vros.account.settings.updated event:
// the account currency, and the account time zone when the property has none of its own.
// Empty values leave the current ones. Call it after every FromEvent (Priced does), because
// a property event carries neither.
func (p *Property) ApplySettings(currency, timezone string) error {
	if currency != "" {
		c, err := normCurrency(currency)
		if err != nil {
			return err
		}
		p.Currency = c
	}
	if p.TimeZone == "" && timezone != "" {
		loc, err := loadZone(timezone)
		if err != nil {
			return err
		}
		p.Location = loc
	}
	return p.Prepare()
}

func normCurrency(c string) (string, error) {
	if len(c) != 3 {
		return "", fmt.Errorf("pricing: currency %q is not an ISO 4217 code", c)
	}
	b := []byte(c)
	for i, x := range b {
		if x >= 'a' && x <= 'z' {
			x -= 'a' - 'A'
			b[i] = x
		}
		if x < 'A' || x > 'Z' {
			return "", fmt.Errorf("pricing: currency %q is not an ISO 4217 code", c)
		}
	}
	return string(b), nil
}

// zones caches loaded locations: time.LoadLocation reads and parses zone data on every
// call, and a consumer rebuilds a Property on every event.
var zones sync.Map // name → *time.Location

func loadZone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	if name == "Local" {
		return nil, errors.New("pricing: time zone Local is not allowed")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("pricing: time zone %q: %w", name, err)
	}
	zones.Store(name, loc)
	return loc, nil
}

func (p *Property) location() *time.Location {
	if p.Location == nil {
		return time.UTC
	}
	return p.Location
}

func (p *Property) weekend() Weekdays {
	if p.WeekendNights == 0 {
		return FriSat
	}
	return p.WeekendNights
}

// compiled returns the compiled rates, rebuilding them when p no longer matches them.
// It returns nil (and no error) for a property without rates.
func (p *Property) compiled() (*plan, error) {
	if p.Rates == nil {
		return nil, nil
	}
	if pl := p.plan; pl != nil && pl.rates == p.Rates && sameString(pl.currency, p.Currency) && pl.weekendSet == p.weekend() &&
		pl.dates == mapID(p.DatePrices) && pl.ndates == len(p.DatePrices) && pl.built.same(p) {
		return pl, nil
	}
	return compile(p)
}

// mapID is the identity of a map, to notice that a Property was given another one: a map
// value is a pointer to the runtime's map header (reflect.Value.UnsafePointer says the
// same, at the cost of a call on every NightPrice).
func mapID(m map[Date]DatePrice) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// Scale returns the number of minor-unit digits of an ISO 4217 currency: every amount of
// a Result is rounded to it. ISO 4217's list, not CLDR's, because invoices follow ISO.
func Scale(currency string) int32 {
	switch currency {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	case "CLF", "UYW":
		return 4
	}
	return 2
}
