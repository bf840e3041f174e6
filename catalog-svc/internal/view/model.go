package view

import (
	"time"

	"github.com/vros/vros/libs/pricing"
)

// Snapshot is the part of a property snapshot (docs/events.md) the catalog reads. It is
// restated here rather than imported from property-svc: the event schema is the contract.
type Snapshot struct {
	AccountID    string           `json:"account_id"`
	PropertyID   int64            `json:"property_id"`
	InternalCode string           `json:"internal_code"`
	Version      int64            `json:"version"`
	Deleted      bool             `json:"deleted"`
	CreatedAt    time.Time        `json:"created_at"`
	UpdatedAt    time.Time        `json:"updated_at"`
	Content      Content          `json:"content"`
	Photos       map[string]Photo `json:"photos"`
	Policy       *Policy          `json:"policy"`
	Rates        *Rates           `json:"rates"`
	Methods      *struct {
		Gateways []struct {
			Provider    string `json:"provider"`
			Description string `json:"description"`
		} `json:"gateways"`
	} `json:"methods"`
	Taxes     []Tax      `json:"taxes"`
	Services  []Service  `json:"services"`
	Amenities *Amenities `json:"amenities"`
}

// Content is A1.
type Content struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	Brief         string `json:"brief"`
	MaxGuest      int    `json:"maxguest"`
	Bedrooms      int    `json:"bedrooms"`
	Bathrooms     int    `json:"bathrooms"`
	Kitchens      int    `json:"kitchens"`
	Floor         string `json:"floor"`
	SpaceValue    string `json:"space_value"`
	SpaceUnit     string `json:"space_unit"`
	Phone         string `json:"phone"`
	Address       string `json:"address"`
	City          string `json:"city"`
	State         string `json:"state"`
	Postcode      string `json:"postcode"`
	Country       string `json:"country"`
	Latitude      string `json:"latitude"`
	Longitude     string `json:"longitude"`
	AllowChildren *bool  `json:"allowchildren"`
	AllowPet      *bool  `json:"allowpet"`
	AllowSmoking  *bool  `json:"allowsmoking"`
	Timezone      string `json:"timezone"`
}

// Photo is one photo; renditions are at /media/<key>/<rendition>.jpg.
type Photo struct {
	PhotoID int64  `json:"photo_id"`
	Key     string `json:"key"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
}

// Policy is A3's short_stay, reduced to what the detail shows.
type Policy struct {
	PaymentType string `json:"payment_type"`
}

// Prices are the prices of the base rate or of a season (decimal strings, "" when absent).
type Prices struct {
	Daily        string `json:"daily_price"`
	Weekend      string `json:"weekend_price"`
	Weekly       string `json:"weekly_price"`
	Monthly      string `json:"monthly_price"`
	ExtraDaily   string `json:"extra_daily_price"`
	ExtraWeekend string `json:"extra_weekend_price"`
}

// Rates is A4.
type Rates struct {
	Rate        Prices `json:"rate"`
	MinimumStay int    `json:"minimum_stay"`
	Setting     struct {
		StandardOccupants         int    `json:"standard_occupants"`
		DefaultAllowCheckin       string `json:"default_allow_checkin"`
		DefaultAllowCheckout      string `json:"default_allow_checkout"`
		FirstDaySurcharge         string `json:"first_day_surcharge"`
		FirstDaySurchargeOneNight bool   `json:"first_day_surcharge_apply_one_night"`
	} `json:"setting"`
	Seasons []struct {
		Name          string `json:"name"`
		MinimumStay   int    `json:"minimum_stay"`
		StartDate     string `json:"start_date"`
		EndDate       string `json:"end_date"`
		Prices        Prices `json:"prices"`
		AllowCheckin  string `json:"allow_checkin"`
		AllowCheckout string `json:"allow_checkout"`
	} `json:"seasons"`
}

// Tax is one tax.
type Tax struct {
	Name            string `json:"name"`
	Amount          string `json:"amount"`
	Type            int    `json:"type"`
	CalculationType int    `json:"calculation_type"`
	Def             bool   `json:"def"`
}

// Service is one service of the property.
type Service struct {
	Name   string `json:"name"`
	Amount string `json:"amount"`
	Type   int    `json:"type"`
	Def    bool   `json:"def"`
	Taxes  []struct {
		Name string `json:"name"`
		Perc string `json:"perc"`
	} `json:"taxes"`
}

// Amenities are the property's amenities and their display options.
type Amenities struct {
	Items       []Amenity `json:"items"`
	BedOption   int       `json:"bedoption"`
	UseIcon     *bool     `json:"useicon"`
	Description string    `json:"description"`
}

// Amenity is one amenity (B6).
type Amenity struct {
	ID          int               `json:"id"`
	Name        string            `json:"name"`
	DefaultName string            `json:"default_name"`
	Value       string            `json:"value"`
	Qty         int               `json:"qty"`
	Type        int               `json:"type"`
	Class       string            `json:"class"`
	Languages   map[string]string `json:"languages"`
}

// Property is a live property as the catalog serves it. Values are never changed once
// published: an update replaces the pointer, so readers need no lock.
type Property struct {
	Snap Snapshot
	// Pricing is the snapshot's pricing with the account's currency and time zone applied;
	// PricingErr is set when the snapshot cannot be priced.
	Pricing    pricing.Property
	PricingErr error
	raw        []byte // the snapshot, to price it again when the account's settings change
}

// Today is the current date in the property's time zone.
func (p *Property) Today(now time.Time) pricing.Date {
	loc := p.Pricing.Location
	if loc == nil {
		loc = time.UTC
	}
	return pricing.DateOf(now.In(loc))
}

// IDName is a lead source or a brand.
type IDName struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Settings are an account's settings, defaults filled in.
type Settings struct {
	AccountID   string   `json:"account_id"`
	Version     int64    `json:"version"`
	Currency    string   `json:"currency"`
	Timezone    string   `json:"timezone"`
	Languages   []string `json:"languages"`
	LeadSources []IDName `json:"lead_sources"`
	Brands      []IDName `json:"brands"`
	// WeekendNights is 2 or 3: how many nights cost the weekend price (pricing.WeekendOf).
	WeekendNights int `json:"weekend_nights"`
	Search        struct {
		DefaultLimit      int    `json:"default_limit"`
		PriceFilterEnable *bool  `json:"price_filter_enable"`
		RateType          string `json:"rate_type"`
	} `json:"search"`
}

// withDefaults mirrors property-svc's defaults for what an account has not set.
func (s Settings) withDefaults() Settings {
	if s.Currency == "" {
		s.Currency = pricing.DefaultCurrency
	}
	if s.Timezone == "" {
		s.Timezone = pricing.DefaultTimeZone
	}
	if len(s.Languages) == 0 {
		s.Languages = []string{"en"}
	}
	if len(s.LeadSources) == 0 {
		s.LeadSources = []IDName{{1, "Website"}, {2, "Phone"}, {3, "Email"}, {4, "Walk-in"}, {5, "Referral"}, {6, "Channel"}}
	}
	if s.Search.DefaultLimit == 0 {
		s.Search.DefaultLimit = 10
	}
	if s.Search.RateType == "" {
		s.Search.RateType = "daily"
	}
	return s
}

// Booking is a booking event's data.
type Booking struct {
	AccountID   string     `json:"account_id"`
	BookingID   int64      `json:"booking_id"`
	PropertyID  int64      `json:"property_id"`
	Status      string     `json:"status"`
	Version     int64      `json:"version"`
	Checkin     string     `json:"checkin"`
	Checkout    string     `json:"checkout"`
	Nights      []string   `json:"nights"`
	Currency    string     `json:"currency"`
	TotalRent   string     `json:"total_rent"`
	GrandTotal  string     `json:"grand_total"`
	CreatedAt   time.Time  `json:"created_at"`
	CancelledAt *time.Time `json:"cancelled_at"`
}

// Block is a block event's data; both dates are nights of the block.
type Block struct {
	AccountID  string `json:"account_id"`
	BlockID    int64  `json:"block_id"`
	PropertyID int64  `json:"property_id"`
	StartDate  string `json:"start_date"`
	EndDate    string `json:"end_date"`
	Memo       string `json:"memo"`
	Deleted    bool   `json:"deleted"`
	Version    int64  `json:"version"`
	CreatedAt  string `json:"created_at"` // "YYYY-MM-DD HH:MM:SS"
}
