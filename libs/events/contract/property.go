package contract

import "time"

// Property event types on vros.property.v1, keyed `<accountId>:<propertyId>`. Each carries
// the whole Property as it is after the change; the type names the last change only, and two
// quick changes may be published as one snapshot carrying the later type.
const (
	PropertyCreated    = "vros.property.created"
	PropertyUpdated    = "vros.property.updated" // A1 content
	PropertyDeleted    = "vros.property.deleted"
	PhotosUpdated      = "vros.property.photos.updated"
	PolicyUpdated      = "vros.property.policy.updated"
	RatesUpdated       = "vros.property.rates.updated"
	MethodsUpdated     = "vros.property.methods.updated"
	TaxesUpdated       = "vros.property.taxes.updated"
	ServicesUpdated    = "vros.property.services.updated"
	AmenitiesUpdated   = "vros.property.amenities.updated"
	PricesUpdated      = "vros.property.prices.updated"
	PropertyTypePrefix = "vros.property." // every property event type starts with it
)

// Property is the data of every vros.property.* event: a full snapshot of one property's
// configuration. Sealed payment secrets are never part of it.
type Property struct {
	AccountID    string `json:"account_id"`
	PropertyID   int64  `json:"property_id"`
	InternalCode string `json:"internal_code"`
	// Version increases by one with every change of this property: apply an event only if its
	// version is newer than the one held.
	Version int64 `json:"version"`
	// Deleted is true once the property is deleted; its internal code is free again.
	Deleted   bool      `json:"deleted"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	Content Content          `json:"content"`
	Photos  map[string]Photo `json:"photos"` // by photo id (decimal); ordered by OrderedPhotos, the first is the main photo
	Policy  *Policy          `json:"policy"` // nil: no payment policy set
	Rates   *Rates           `json:"rates"`  // nil: no rates set, the property cannot be priced
	Methods *Methods         `json:"methods"`
	// Taxes and Services are the lists as set through the extensions (docs/interface-a.md).
	Taxes     []Tax      `json:"taxes"`
	Services  []Service  `json:"services"`
	Amenities *Amenities `json:"amenities"`
	// Prices are the per-date prices and minimum nights of setprices_minnights, by date.
	Prices map[string]DayPrice `json:"prices"`
	// ICalTokenSHA256 is the hex SHA-256 of the token in the property's iCal export link
	// (/ical/<token>.ics, interface A property-ical); empty: no link, or revoked. The token
	// itself never leaves property-svc.
	ICalTokenSHA256 string `json:"ical_token_sha256,omitempty"`
	// StandardPlan holds the standard plan's terms (name, inclusions, cancellation policy);
	// nil: "Standard", none, flexible. RatePlans are the derived plans, by id
	// (docs/rate-plans.md).
	StandardPlan *PlanTerms `json:"standard_plan,omitempty"`
	RatePlans    []RatePlan `json:"rate_plans,omitempty"`
	// Restrictions are the property's restrictions per date, for every plan.
	Restrictions []Restriction `json:"restrictions,omitempty"`
	// ChannelMarkups are the property's own markups; a channel listed here ignores the
	// account's markup for it (Settings.ChannelMarkups).
	ChannelMarkups []Markup `json:"channel_markups,omitempty"`
}

// Content is the property's A1 content.
type Content struct {
	Name      string `json:"name"`
	Type      string `json:"type"` // A1 property type ("Villa", "Apartment", …)
	Brief     string `json:"brief"`
	MaxGuest  int    `json:"maxguest"` // guests allowed; 0: no limit
	Bedrooms  int    `json:"bedrooms"`
	Bathrooms int    `json:"bathrooms"`
	Kitchens  int    `json:"kitchens"`
	Floor     string `json:"floor"`
	// SpaceValue, Latitude and Longitude are decimal strings.
	SpaceValue string `json:"space_value"`
	SpaceUnit  string `json:"space_unit"` // "meters" or "feet"
	Phone      string `json:"phone"`
	Address    string `json:"address"`
	City       string `json:"city"`
	State      string `json:"state"`
	Postcode   string `json:"postcode"`
	Country    string `json:"country"`
	Latitude   string `json:"latitude"`
	Longitude  string `json:"longitude"`
	// AllowChildren, AllowPet and AllowSmoking are nil when never set; children are refused
	// only when AllowChildren is false.
	AllowChildren *bool `json:"allowchildren"`
	AllowPet      *bool `json:"allowpet"`
	AllowSmoking  *bool `json:"allowsmoking"`
	// Timezone is the property's IANA zone; empty means the account's (Settings.Timezone).
	Timezone string `json:"timezone"`
	// IsFeatured marks a property the websites show first (A1 extension `isfeatured`).
	IsFeatured bool `json:"isfeatured"`
}

// Photo is one photo; its renditions are served at /media/<key>/<rendition>.jpg.
type Photo struct {
	PhotoID   int64     `json:"photo_id"`
	Key       string    `json:"key"`
	Width     int       `json:"width"`
	Height    int       `json:"height"`
	Source    string    `json:"source,omitempty"` // the link it was fetched from, if any
	CreatedAt time.Time `json:"created_at"`
	// Position is the photo's place in the property's order, from 1 (the main photo); 0
	// (absent) in snapshots from before photos could be ordered. Read the order with
	// Property.OrderedPhotos or ComparePhotos, never from Position alone.
	Position int `json:"position,omitempty"`
}

// Policy is A3's short_stay payment policy.
type Policy struct {
	PaymentType      string  `json:"payment_type"` // "Full", "Partial" or "None"
	DamageDeposit    *Charge `json:"damage_deposit"`
	PaymentFull      *Charge `json:"payment_full"`      // with PaymentType Full; no amount
	FirstPayment     *Charge `json:"first_payment"`     // with PaymentType Partial
	RemainingPayment *Charge `json:"remaining_payment"` // with PaymentType Partial; no amount
}

// Charge is a due amount of the payment policy.
type Charge struct {
	// IsDueAt is "Booking", "Arrival", "Checkout", "XDayPriorArrival" or "XDayAfterBooking".
	IsDueAt    string `json:"is_due_at"`
	XDay       int    `json:"x_day,omitempty"`       // the X of the XDay… dues
	AmountType string `json:"amount_type,omitempty"` // "Flat", "PercentOfRent" or "PercentOfGrandTotal"
	Amount     string `json:"amount,omitempty"`      // decimal string
}

// Rates are A4: base prices, minimum stay, length-of-stay discounts, setting and seasons.
type Rates struct {
	Rate        Prices   `json:"rate"`
	MinimumStay int      `json:"minimum_stay"`
	LOS         []LOS    `json:"los"`
	Setting     Setting  `json:"setting"`
	Seasons     []Season `json:"seasons"` // inclusive date ranges that do not overlap
}

// Prices are the nightly prices of the base rate or of a season, decimal strings; an
// optional price that is not set is "". The extra_* prices are per guest above the
// standard occupancy.
type Prices struct {
	Daily        string `json:"daily_price"`
	Weekend      string `json:"weekend_price,omitempty"`
	Weekly       string `json:"weekly_price,omitempty"`
	Monthly      string `json:"monthly_price,omitempty"`
	ExtraDaily   string `json:"extra_daily_price,omitempty"`
	ExtraWeekend string `json:"extra_weekend_price,omitempty"`
	ExtraWeekly  string `json:"extra_weekly_price,omitempty"`
	ExtraMonthly string `json:"extra_monthly_price,omitempty"`
}

// LOS is a length-of-stay discount: Discount percent off the rent of stays of at least Days
// nights.
type LOS struct {
	Days     int    `json:"days"`
	Discount string `json:"discount"`
}

// Setting is A4's setting. Day sets are "All" or comma-separated day names ("Friday,Saturday");
// "" is All.
type Setting struct {
	StandardOccupants      int    `json:"standard_occupants"`  // guests included in the price; 0: all
	AcceptBookingUpto      int    `json:"accept_booking_upto"` // months ahead a check-in may be; 0: no limit
	ApplyWeekendPrice      bool   `json:"apply_weekend_price"`
	DefaultAllowCheckin    string `json:"default_allow_checkin"`
	DefaultAllowCheckout   string `json:"default_allow_checkout"`
	ApplyExtraFeePerSeason bool   `json:"apply_extra_fee_per_season"`
	// AllowSameDayBookingUntil ("HH:MM", local) and AdvancedNoticeBookingFrom (days) are
	// exclusive: A4 sets at most one.
	AllowSameDayBookingUntil  string `json:"allow_same_day_booking_until,omitempty"`
	AdvancedNoticeBookingFrom *int   `json:"advanced_notice_booking_from,omitempty"`
	Apply6NightsWeeklyRate    bool   `json:"apply_6_nights_weekly_rate"`
	FirstDaySurcharge         string `json:"first_day_surcharge"` // decimal string
	FirstDaySurchargeOneNight bool   `json:"first_day_surcharge_apply_one_night"`
}

// Season is one season of A4: its prices replace the base rate's from StartDate to EndDate,
// both included.
type Season struct {
	Name          string `json:"name"`
	MinimumStay   int    `json:"minimum_stay,omitempty"` // 0: the base rate's
	StartDate     string `json:"start_date"`
	EndDate       string `json:"end_date"`
	Prices        Prices `json:"prices"`
	AllowCheckin  string `json:"allow_checkin,omitempty"` // day set; "": the setting's default
	AllowCheckout string `json:"allow_checkout,omitempty"`
}

// Methods are A5: which payment methods exist, with their public values only.
type Methods struct {
	Gateways []Gateway `json:"gateways"`
}

// Gateway is one payment method.
type Gateway struct {
	Provider    string `json:"provider"` // "stripe", "paypal", …
	Description string `json:"description"`
	// Public holds values safe to show: a publishable key, a PayPal email, the 3-D Secure flag.
	Public map[string]string `json:"public,omitempty"`
}

// Tax is one tax (docs/interface-a.md defines type and calculation_type).
type Tax struct {
	Name            string `json:"name"`
	Amount          string `json:"amount"`           // decimal string: a percent or a fixed amount
	Type            int    `json:"type"`             // 1 percent of the rent, 2 fixed amount
	CalculationType int    `json:"calculation_type"` // of a fixed tax: 1 per stay, 2 per night, 3 per guest per night
	Def             bool   `json:"def"`              // applied to every booking
}

// Service is one default service of the property (docs/interface-a.md).
type Service struct {
	Name       string       `json:"name"`
	Amount     string       `json:"amount"`     // decimal string
	Type       int          `json:"type"`       // 1 fixed amount, 2 percent of the total rent
	Applicable int          `json:"applicable"` // 1 per stay, 2 per night, 3 per occupant, 4 per occupant per night
	Unit       int          `json:"unit"`
	Def        bool         `json:"def"` // added to bookings and quotes by default
	Taxes      []ServiceTax `json:"taxes"`
}

// ServiceTax is a tax on a service line.
type ServiceTax struct {
	Name string `json:"name"`
	Perc string `json:"perc"` // decimal string, percent
}

// Amenities are the property's amenity list and its display options.
type Amenities struct {
	Items       []Amenity `json:"items"`
	BedOption   int       `json:"bedoption,omitempty"`
	UseIcon     *bool     `json:"useicon,omitempty"`
	Description string    `json:"description,omitempty"`
}

// Amenity is one amenity; ID is its position from 1, stable while the list is.
type Amenity struct {
	ID          int               `json:"id"`
	Name        string            `json:"name"`
	DefaultName string            `json:"default_name"`
	Value       string            `json:"value"`
	Qty         int               `json:"qty"`
	Type        int               `json:"type"`
	Class       string            `json:"class"`
	Languages   map[string]string `json:"languages"` // name by language code
}

// DayPrice is one date's price and minimum stay (setprices_minnights). Price "" keeps the
// rate's price and only sets the minimum stay.
type DayPrice struct {
	Price       string `json:"price"`
	WeeklyPrice string `json:"weekly_price,omitempty"`
	MonthPrice  string `json:"monthly_price,omitempty"`
	MinNights   int    `json:"min_nights,omitempty"`
}
