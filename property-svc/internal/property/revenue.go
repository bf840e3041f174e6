package property

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/pricing"
)

// The revenue controls of issue 31 (docs/rate-plans.md): a property's rate plans
// (/api/property-rateplan), its restrictions per date and per-date prices
// (/api/property-restriction) and the channel markups of the property and of the account
// (/api/channel-markup). The three resources change one Revenue of a property at a time,
// through Repository.ChangeRevenue: one write of the property with its event.

// Revenue is what the three resources change of a property: the standard plan's terms, the
// derived plans, the property's restrictions, its per-date prices (setprices_minnights'
// and /api/property-restriction's price) and its channel markups.
type Revenue struct {
	// StandardPlan holds the standard plan's terms; nil: Standard, nothing, flexible.
	StandardPlan *PlanTerms
	// Plans are the derived plans, by id.
	Plans []RatePlan
	// LastPlanID is the largest plan id the property has given: a new plan's id is above
	// it, so that a deleted plan's id (which bookings keep) is never given again.
	LastPlanID int64
	// Restrictions are the property's, for every plan.
	Restrictions Restrictions
	// Prices are the per-date prices and minimum nights (setprices_minnights).
	Prices map[pricing.Date]DatePrice
	// Markups are the property's channel markups, sorted by channel.
	Markups []Markup
}

// DatePrice is what one date holds of setprices_minnights: its prices (nil: not set) and
// its minimum nights (0: not set).
type DatePrice struct {
	Price, Weekly, Monthly *decimal.Decimal
	MinNights              int
}

// IsZero reports whether the date holds nothing.
func (p DatePrice) IsZero() bool {
	return p.Price == nil && p.Weekly == nil && p.Monthly == nil && p.MinNights == 0
}

// Equal reports whether p and q hold the same values.
func (p DatePrice) Equal(q DatePrice) bool {
	eq := func(a, b *decimal.Decimal) bool { return a == nil && b == nil || a != nil && b != nil && a.Equal(*b) }
	return eq(p.Price, q.Price) && eq(p.Weekly, q.Weekly) && eq(p.Monthly, q.Monthly) && p.MinNights == q.MinNights
}

// Errors of the revenue resources.
var (
	ErrRatePlanNotFound = errors.New("rate plan not found")
	ErrPlanNameTaken    = errors.New("rate plan name already used")
	ErrMarkupNotFound   = errors.New("channel markup not found")
)

// AdjustType says how an adjustment's value is read.
type AdjustType string

// Adjustment types (contract.AdjustPercent, contract.AdjustAmount).
const (
	AdjustPercent AdjustType = "percent" // Value percent of the price, added (negative: off)
	AdjustAmount  AdjustType = "amount"  // Value in the account's currency added to each night
)

// Adjustment is a signed change of a nightly price: a derived plan's, or a channel markup.
type Adjustment struct {
	Type  AdjustType
	Value decimal.Decimal
}

// Bounds of an adjustment's value (docs/rate-plans.md).
var (
	minPercentAdjust = decimal.NewFromInt(-100)
	maxPercentAdjust = decimal.NewFromInt(1000)
	minAmountAdjust  = decimal.NewFromInt(-2147483647)
)

// readAdjustment reads type and value of o (an adjustment, a range or a markup): type
// percent or amount in any case; value a signed decimal with at most 2 decimal places,
// −100 to 1000 for a percent and ±2147483647 for an amount. ok is false when either is
// missing or wrong (recorded).
func readAdjustment(o *fields.Object) (Adjustment, bool) {
	typ, typOK := o.String("type", fields.Str{Required: true, IgnoreCase: true, OneOf: []string{string(AdjustPercent), string(AdjustAmount)}})
	rule := fields.Dec{Required: true, Min: minAmountAdjust, Max: maxInt32, MaxScale: 2}
	if typOK && AdjustType(typ) == AdjustPercent {
		rule.Min, rule.Max = minPercentAdjust, maxPercentAdjust
	}
	v, valOK := o.Decimal("value", rule)
	return Adjustment{Type: AdjustType(typ), Value: v}, typOK && valOK
}

// channelName is a channel's name: letters, digits, _ and -, 1 to 32, any case (stored
// lower case).
var channelName = fields.Str{Required: true, Min: 1, Max: 32, Pattern: regexp.MustCompile(`^[A-Za-z0-9_-]+$`),
	PatternMsg: "must contain only letters a-z, digits, _ and -"}

// readChannel reads a channel's name and returns it lower case.
func readChannel(o *fields.Object, name string) (string, bool) {
	c, ok := o.String(name, channelName)
	return strings.ToLower(c), ok
}

// dateOf is the civil date of a decoded date (midnight UTC).
func dateOf(t time.Time) pricing.Date {
	if t.IsZero() {
		return pricing.Date{}
	}
	return pricing.DateOf(t.UTC())
}
