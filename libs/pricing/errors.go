package pricing

// Code names the rule a request broke.
type Code string

const (
	NotBookable        Code = "NotBookable"        // the property has no rates
	BadRange           Code = "BadRange"           // checkout not after checkin, or more than 365 nights
	BadGuests          Code = "BadGuests"          // fewer than one adult, or negative children
	TooManyGuests      Code = "TooManyGuests"      // adults + children above maxguest
	ChildrenNotAllowed Code = "ChildrenNotAllowed" // children at a property that disallows them
	PastDate           Code = "PastDate"           // check-in before today (property time)
	TooSoon            Code = "TooSoon"            // advance notice not met, or same-day cut-off passed
	TooFarAhead        Code = "TooFarAhead"        // check-in beyond accept_booking_upto months
	CheckinDay         Code = "CheckinDay"         // check-in on a day the rules do not allow
	CheckoutDay        Code = "CheckoutDay"        // check-out on a day the rules do not allow
	MinimumStay        Code = "MinimumStay"        // fewer nights than the minimum stay
	BadService         Code = "BadService"         // a service line that cannot be priced

	// Rate plans and restrictions (docs/rate-plans.md).
	StopSell          Code = "StopSell"          // a night of the stay is not sold
	ClosedToArrival   Code = "ClosedToArrival"   // a restriction closes the check-in date to arrivals
	ClosedToDeparture Code = "ClosedToDeparture" // a restriction closes the check-out date to departures
	MaximumStay       Code = "MaximumStay"       // more nights than the arrival's maximum stay
	UnknownPlan       Code = "UnknownPlan"       // the rate plan asked for does not exist
	NotSold           Code = "NotSold"           // the rate plan is not sold where the request asks
)

// MaxNights is the longest stay that can be quoted.
const MaxNights = 365

// RuleError is a request that breaks a booking rule. Field names the request field to
// blame, as B1 spells it; Message is client-facing, lower case, and names the rule.
type RuleError struct {
	Code    Code
	Field   string
	Message string
}

func (e *RuleError) Error() string { return e.Field + ": " + e.Message }

func ruleErr(c Code, field, msg string) *RuleError {
	return &RuleError{Code: c, Field: field, Message: msg}
}
