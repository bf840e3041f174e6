package request

import (
	"regexp"
	"strings"

	"github.com/vros/vros/libs/fields"
)

// Issue 31's fields of getinfo, create and update (docs/rate-plans.md, "Interface B").
const (
	FieldRatePlanID = "ratePlanId"
	FieldChannel    = "channel"

	// MaxChannel is the longest channel name.
	MaxChannel = 32
	channelMsg = "must be a channel name: 1 to 32 letters, digits, _ or -"
)

var channelName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ratePlanRule is the rule of ratePlanId: a whole number 0 to 2147483647 (0: the standard
// plan).
var ratePlanRule = fields.Int{Max: maxInt32}

// readRatePlan reads ratePlanId; absent, null or blank is not sent (the standard plan on
// getinfo and create, the booking's plan on update).
func readRatePlan(o *fields.Object) (int, bool) {
	return o.Int(FieldRatePlanID, ratePlanRule)
}

// readChannel reads channel: a name of letters, digits, _ and -, 1 to 32 characters, any
// case, returned lower case. Blank reads as "", present: no channel (direct); on update it
// clears the booking's channel.
func readChannel(o *fields.Object) (string, bool) {
	s, ok := o.String(FieldChannel, fields.Str{Max: MaxChannel, Pattern: channelName, PatternMsg: channelMsg})
	if !ok || s == "" {
		return s, ok
	}
	return strings.ToLower(s), true
}
