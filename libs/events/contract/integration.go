package contract

import "time"

// ChannelConflict is the event type of a channel reservation integration-svc could not
// apply (docs/channels.md, "Conflicts"): on vros.integration.v1, keyed
// `<accountId>:conflict:<conflictId>`, so compaction keeps each conflict's latest state. It
// is published through integration-svc's outbox in the write that records the conflict (and
// again when it is resolved); a consumer may read one more than once and keys what it does on
// the conflict id. The account's erasure publishes a tombstone for each key.
const ChannelConflict = "vros.channel.conflict"

// Conflict is the data of ChannelConflict: what the owner needs to act, never the guest (no
// name or contact data) nor the owner's resolution note.
type Conflict struct {
	AccountID    string `json:"account_id"`
	ConflictID   int64  `json:"conflict_id"`
	ConnectionID int64  `json:"connection_id"`
	// PropertyID is the vros property the reservation was for (0: its room type is mapped to
	// none, reason unknown_property or unknown_room_type).
	PropertyID int64 `json:"property_id"`
	// BookingID is the first vros booking the conflict names (the one holding the nights
	// asked, reason nights_taken); BookingIDs all of them. 0 and absent: none.
	BookingID  int64   `json:"booking_id,omitempty"`
	BookingIDs []int64 `json:"booking_ids,omitempty"`
	// Channel is the channel the reservation came from (airbnb, booking.com, …) as the channel
	// manager names it; ReservationID and RevisionID its ids there.
	Channel       string `json:"channel"`
	ReservationID string `json:"reservation_id"`
	RevisionID    string `json:"revision_id"`
	Checkin       string `json:"checkin"`
	Checkout      string `json:"checkout"`
	// Reason is why it was not applied: nights_taken, unknown_property, unknown_room_type or
	// invalid; Message booking-svc's or the adapter's refusal ("the night of 2027-03-09 is
	// taken"); Nights the nights refused.
	Reason  string   `json:"reason"`
	Message string   `json:"message,omitempty"`
	Nights  []string `json:"nights,omitempty"`
	// Total and Currency are the reservation's as the channel sent them ("" none).
	Total    string `json:"total,omitempty"`
	Currency string `json:"currency,omitempty"`
	// At is when the conflict was recorded; ResolvedAt when the owner resolved it (nil: open).
	At         time.Time  `json:"at"`
	ResolvedAt *time.Time `json:"resolved_at"`
}

// Conflict reasons (Conflict.Reason).
const (
	ConflictNightsTaken     = "nights_taken"
	ConflictUnknownProperty = "unknown_property"
	ConflictUnknownRoomType = "unknown_room_type"
	ConflictInvalid         = "invalid"
)
