package catalog

import (
	"context"
	"time"
)

// Kind is the kind of aggregate a snapshot is of.
type Kind string

// The kinds of snapshot the catalog holds, in the order a start reads them.
const (
	KindProperty Kind = "property" // key "<account>:<propertyId>"
	KindSettings Kind = "settings" // key "<account>:settings"
	KindBooking  Kind = "booking"  // key "<account>:booking:<bookingId>"
	KindBlock    Kind = "block"    // key "<account>:block:<blockId>"
)

// Kinds lists every kind of snapshot.
var Kinds = []Kind{KindProperty, KindSettings, KindBooking, KindBlock}

// SnapshotStore keeps what the catalog holds beyond its memory, so that a start does not need
// Kafka's history although the consumer group's offsets have moved on: the newest snapshot of
// every aggregate, by its key (the events' message key, which names its account), and the
// erased accounts. internal/store keeps it in MongoDB.
type SnapshotStore interface {
	// Erased lists the accounts marked erased.
	Erased(ctx context.Context) ([]string, error)
	// Snapshots calls fn with every stored snapshot, kind after kind in the order of Kinds.
	Snapshots(ctx context.Context, fn func(kind Kind, key string, data []byte) error) error
	// Keep stores data as key's snapshot at version unless one at least as new is stored
	// (another replica may have stored it meanwhile), and returns the snapshot stored
	// afterwards: nil when there is none (it was removed meanwhile). fresh says that the
	// caller holds no version of key, so that most likely none is stored either.
	Keep(ctx context.Context, kind Kind, key string, version int64, data []byte, fresh bool) (stored []byte, err error)
	// Remove deletes key's snapshot; one not stored is no error.
	Remove(ctx context.Context, kind Kind, key string) error
	// MarkErased records that the account is erased (at, unless it is already marked).
	MarkErased(ctx context.Context, account string, at time.Time) error
	// Purge deletes everything stored of the account but its erasure's mark: its snapshots
	// and whatever else the store keeps beside them (the consumer's parked events).
	Purge(ctx context.Context, account string) error
}

// MalformedError is an event the catalog can never apply: delivering it again would not help
// (the consumer parks it).
type MalformedError struct{ Err error }

func (e *MalformedError) Error() string { return e.Err.Error() }
func (e *MalformedError) Unwrap() error { return e.Err }

func malformed(err error) error { return &MalformedError{Err: err} }
