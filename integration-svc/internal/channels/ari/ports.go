// Package ari is ARI out (docs/channels.md, "ARI out"): the projection of the property and
// booking events that availability, rates and restrictions are computed from, the dirty
// marks that say which mapped properties changed, the desired values of a mapped property,
// their difference with what was last sent, and the sender that pushes it through the
// connection's channel.Adapter. It is a domain package: MongoDB is behind its ports
// (internal/channels/aristore), Kafka behind the consumer (ari/consumer).
package ari

import (
	"context"
	"errors"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

// Holder is what one booking or block holds of a property: its nights (empty when it holds
// none: a cancelled booking, a deleted block), at a version of its events.
type Holder struct {
	Account    string
	Key        string // "booking:<id>" or "block:<id>"
	PropertyID int64
	Version    int64
	Nights     []string // YYYY-MM-DD
}

// State is the projection of one property: its newest snapshot (nil: none received yet),
// its account's settings (contract.DefaultSettings before the first settings event), and the
// nights its bookings and blocks hold.
type State struct {
	Property *contract.Property
	Settings contract.Settings
	Held     map[string]bool
}

// Projection keeps the newest snapshots the consumer reads (aristore).
type Projection interface {
	// KeepProperty stores p unless a version at least as new is kept; it reports whether
	// the kept version is now p's (stored now, or before: a redelivery).
	KeepProperty(ctx context.Context, p contract.Property, data []byte) (bool, error)
	// KeepSettings is KeepProperty for an account's settings.
	KeepSettings(ctx context.Context, s contract.Settings, data []byte) (bool, error)
	// KeepHolder stores h unless a newer version of it is kept, and returns the properties
	// whose held nights it changed (the old property too when the holder moved); none when
	// h is older than what is kept.
	KeepHolder(ctx context.Context, h Holder) ([]int64, error)
	// Forget drops a key of the account (a tombstone) and returns the properties it held
	// nights of.
	Forget(ctx context.Context, account, key string) ([]int64, error)
	// Load reads the projection of one property.
	Load(ctx context.Context, account string, property int64) (State, error)
	// Erase drops everything of the account (projection, marks, sent values) and remembers
	// that it was erased; Erased tells.
	Erase(ctx context.Context, account string) error
	Erased(ctx context.Context, account string) (bool, error)
}

// Mark is a claimed dirty mark: one mapped property of a connection whose values may differ
// from what the channel manager has.
type Mark struct {
	Account      string
	ConnectionID int64
	PropertyID   int64
	// Generation counts the marks; Full says a full sync was asked and not done yet.
	Generation int64
	Full       bool
	// Fulls is the count of full syncs asked (the sender records it done with Next).
	Fulls    int64
	Attempts int // failed pushes in a row
	// MarkedAt is when the oldest change not sent yet was marked.
	MarkedAt time.Time
	// Owner is the claimer's token; LeaseUntil the end of its hold.
	Owner      string
	LeaseUntil time.Time
}

// ErrLeaseLost: the mark's lease ran out and another sender took it.
var ErrLeaseLost = errors.New("ari: the mark's lease was lost")

// Marks keeps the dirty marks (chan_dirty).
type Marks interface {
	// Mark marks a connection's property dirty: its generation incremented, and a full sync
	// asked when full. A mark that is new, or asked with now (the mapping API), is due at
	// at; one waiting for a retry keeps its time otherwise.
	Mark(ctx context.Context, account string, connection, property int64, full, now bool, at time.Time) error
	// Claim takes a due mark (next attempt ≤ at, no live lease) under a lease until
	// at+lease; false when none is due.
	Claim(ctx context.Context, at time.Time, lease time.Duration) (Mark, bool, error)
	// Renew extends m's lease to until; ErrLeaseLost when another sender holds it.
	Renew(ctx context.Context, m *Mark, until time.Time) error
	// Next ends a push of m: the mark is deleted when its generation is still m's (done
	// true); otherwise the full syncs up to m.Fulls are recorded done if fullDone, and the
	// newer mark is returned, still held. ErrLeaseLost when another sender holds it.
	Next(ctx context.Context, m Mark, fullDone bool) (Mark, bool, error)
	// Retry lets m go until next, counting a failed attempt.
	Retry(ctx context.Context, m Mark, next time.Time) error
	// Drop deletes m whatever its generation (its connection or mapping is gone).
	Drop(ctx context.Context, m Mark) error
	// Pending counts the marks.
	Pending(ctx context.Context) (int64, error)
}

// Sent keeps the values a channel manager accepted last (chan_sent). Only the holder of a
// mark's lease writes its property's.
type Sent interface {
	// LoadSent reads the values sent for the days [from, from+days) of a connection's property.
	LoadSent(ctx context.Context, account string, connection, property int64, from Day, days int) (Values, error)
	// RecordSent stores v as the values accepted so far (v's days; what v does not know is
	// not known, and days before v.From are past).
	RecordSent(ctx context.Context, account string, connection, property int64, v Values) error
}

// Dirty is what the projection marks through: the mapping API's MarkDirty too.
type Dirty interface {
	MarkDirty(ctx context.Context, account string, connection, property int64, full bool) error
}
