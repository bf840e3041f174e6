package contract

// Rate plans, restrictions per date and channel markups (docs/rate-plans.md). They travel in
// the property snapshot (Property.RatePlans, Property.Restrictions, Property.StandardPlan,
// Property.ChannelMarkups) and the account's settings (Settings.ChannelMarkups); libs/pricing
// is the one rule engine that reads them.

// Property event types of issue 31's resources; each carries the whole Property.
const (
	RatePlansUpdated    = "vros.property.rateplans.updated"    // /api/property-rateplan
	RestrictionsUpdated = "vros.property.restrictions.updated" // /api/property-restriction
	MarkupsUpdated      = "vros.property.markups.updated"      // /api/channel-markup with internal_code
)

// Adjustment types of a derived plan and of a channel markup.
const (
	AdjustPercent = "percent" // Value percent of the price, added (negative: off)
	AdjustAmount  = "amount"  // Value in the account's currency added to each night (negative: off)
)

// Cancellation policies.
const (
	CancelFlexible      = "flexible"
	CancelModerate      = "moderate"
	CancelStrict        = "strict"
	CancelNonRefundable = "non_refundable"
	CancelCustom        = "custom"
)

// StandardPlanID is the id of a property's standard plan: its rates (A4, setprices) as they
// are. Derived plans have ids from 1.
const StandardPlanID = 0

// PlanTerms are what every plan, the standard one included, says besides its price.
type PlanTerms struct {
	Name       string `json:"name"`       // "" on the standard plan: "Standard"
	Inclusions string `json:"inclusions"` // meals and inclusions, as the guest reads them
	// Cancellation is the plan's cancellation policy; nil on the standard plan: flexible.
	Cancellation *Cancellation `json:"cancellation,omitempty"`
}

// RatePlan is a derived plan: the standard plan's nightly prices with an adjustment, its own
// terms, minimum stay, where it is sold and its own restrictions.
type RatePlan struct {
	ID int64 `json:"id"` // 1 … ; never given again after a delete
	PlanTerms
	// Adjustment applies to every night outside Ranges.
	Adjustment Adjustment `json:"adjustment"`
	// Ranges replace Adjustment for the nights from StartDate to EndDate (both included);
	// they do not overlap.
	Ranges []RangeAdjustment `json:"ranges,omitempty"`
	// MinimumStay is a floor on every stay of the plan (0: none).
	MinimumStay int    `json:"minimum_stay,omitempty"`
	SoldOn      SoldOn `json:"sold_on"`
	// Restrictions are the plan's own, on top of the property's (docs/rate-plans.md says how
	// the two combine).
	Restrictions []Restriction `json:"restrictions,omitempty"`
}

// Adjustment is a change of a price: Type AdjustPercent or AdjustAmount, Value a signed
// decimal string ("-10": ten percent, or ten units, off).
type Adjustment struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// RangeAdjustment is a plan's adjustment for the nights of a date range.
type RangeAdjustment struct {
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
	Adjustment
}

// SoldOn says where a derived plan can be booked. Direct: interface B and the API without a
// brand or channel; a brand's website (brandId, the booking engine) when AllBrands or its id
// is in Brands; a channel's quotes when its name is in Channels.
type SoldOn struct {
	Direct    bool     `json:"direct"`
	AllBrands bool     `json:"all_brands"`
	Brands    []int64  `json:"brands,omitempty"`
	Channels  []string `json:"channels,omitempty"`
}

// Cancellation is a cancellation policy: one of the named policies, or custom tiers.
type Cancellation struct {
	Policy string             `json:"policy"`
	Tiers  []CancellationTier `json:"tiers,omitempty"` // with Policy custom only
}

// CancellationTier: Percent (decimal string, 0–100) of the booking's total is refunded
// when the booking is cancelled DaysBefore days or more before arrival.
type CancellationTier struct {
	DaysBefore int    `json:"days_before"`
	Percent    string `json:"percent"`
}

// Restriction is a run of dates, StartDate to EndDate (both included), that carry the same
// restrictions. A nil member is not set on those dates (the default applies). Runs of one
// list are sorted and do not overlap; adjacent runs differ.
type Restriction struct {
	StartDate         string `json:"start_date"`
	EndDate           string `json:"end_date"`
	MinStayArrival    *int   `json:"min_stay_arrival,omitempty"`
	MinStayThrough    *int   `json:"min_stay_through,omitempty"`
	MaxStay           *int   `json:"max_stay,omitempty"`
	ClosedToArrival   *bool  `json:"closed_to_arrival,omitempty"`
	ClosedToDeparture *bool  `json:"closed_to_departure,omitempty"`
	StopSell          *bool  `json:"stop_sell,omitempty"`
}

// Markup is a channel markup: an adjustment of every night's price (after the plan's) in
// quotes asked for Channel (a lower-case name such as "airbnb").
type Markup struct {
	Channel string `json:"channel"`
	Adjustment
}
