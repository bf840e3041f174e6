// Package property is the domain of interface A (property management): the
// resources a caller sets through /api/{action}, the decoders that turn a request
// body into them, listing every violated rule by field path, and the service
// (Properties) that applies them through the storage it declares (Repository).
//
// Dependencies point inward: internal/api calls this package, internal/store
// implements its Repository; it imports neither Fiber, the Mongo driver nor the
// store (make archcheck holds that: tools/archcheck). Money is decimal.Decimal; calendar dates are
// time.Time at midnight UTC.
package property

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// Action is what an A1 property or A2 photo request asks for.
type Action string

// Actions of A1 and A2.
const (
	Create Action = "create"
	Update Action = "update"
	Delete Action = "delete"
)

// maxInt32 is the spec's upper bound for amounts, prices and ids.
var maxInt32 = decimal.NewFromInt(2147483647)

var (
	internalCodeRule = fields.Str{Required: true, Max: 10}
	actionRule       = fields.Str{Required: true, OneOf: []string{string(Create), string(Update), string(Delete)}}
	// price: 0 to 2147483647 with at most 2 decimal places (cents).
	price         = fields.Dec{Max: maxInt32, MaxScale: 2}
	requiredPrice = fields.Dec{Required: true, Max: maxInt32, MaxScale: 2}
	// percent of an amount, with room for rates such as 8.875 %.
	percent = fields.Dec{Required: true, Max: decimal.NewFromInt(100), MaxScale: 4}
)

// amountRule is the rule of an amount that is a percentage (0 to 100, 4
// decimal places) or money (0 to 2147483647, 2 decimal places). When the
// kind is unknown because the type was invalid, only the outer bounds apply.
func amountRule(isPercent, isMoney bool) fields.Dec {
	switch {
	case isPercent:
		return percent
	case isMoney:
		return requiredPrice
	}
	return fields.Dec{Required: true, Max: maxInt32, MaxScale: 4}
}

// readTimezone reads an optional IANA time zone name. It returns nil when the
// member was not sent and "" when it was sent blank.
func readTimezone(o *fields.Object, name string) *string {
	tz, ok := o.String(name, fields.Str{Max: 64})
	if !ok {
		return nil
	}
	if tz != "" && !validTimezone(tz) {
		o.Add(name, "must be an IANA time zone name such as Europe/Rome")
		return nil
	}
	return &tz
}

// validTimezone accepts names of the IANA database. "Local" depends on the
// machine and is refused; "UTC" is accepted. The service's main should import
// time/tzdata so that the answer does not depend on the image's zoneinfo.
func validTimezone(name string) bool {
	if name == "Local" || strings.TrimSpace(name) != name {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
