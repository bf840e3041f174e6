// Package inbound takes channel reservations in (docs/channels.md, "Reservations in"): it
// stores each revision a channel manager sends or serves, applies the revisions of each
// reservation in order through booking-svc's ledger, holds a modification or cancellation
// until its reservation's booking exists, records what booking-svc refuses as a conflict
// (raised as the webhook channel.conflict), and acknowledges a revision only once its
// outcome is durable. It works over its ports: the channel stores (channel.Connections,
// Log, Conflicts), its own Revisions and Leases (internal/channels/inboundstore), booking-svc
// (Booking; inbound/bookingclient) and the adapters.
package inbound

import (
	"context"
	"errors"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// Request is one revision as booking-svc's POST /internal/channel/reservation takes it.
type Request struct {
	ConnectionID  int64
	Channel       string
	ReservationID string
	RevisionID    string
	Order         int64
	Status        string
	PropertyID    int64
	RatePlanID    int64
	Checkin       string
	Checkout      string
	Adults        int
	Children      int
	Currency      string
	Total         string
	Commission    string // the channel's commission ("": not reported)
	Guest         channel.Guest
	Notes         string
}

// Result is booking-svc's answer to an applied revision (BookingID 0: the cancellation of
// a reservation that never became a booking).
type Result struct {
	BookingID int64
	Status    string
	Version   int64
	Applied   bool
}

// Refusal is booking-svc refusing a revision for good: nights taken (409), an unknown
// property or invalid content (422). Reason is a channel.Reason* constant.
type Refusal struct {
	Reason     string
	Field      string
	Message    string
	Nights     []string
	BookingIDs []int64
}

func (r *Refusal) Error() string {
	return "booking-svc refused the revision: " + r.Reason + " " + r.Message
}

// ErrReservationUnknown: booking-svc has no booking for the reservation a modification or
// cancellation names (the revision is held).
var ErrReservationUnknown = errors.New("booking-svc knows no booking of the reservation")

// Booking is booking-svc's ledger. Errors other than *Refusal and ErrReservationUnknown are
// transient: the revision is applied again later.
type Booking interface {
	Apply(ctx context.Context, account string, r Request) (Result, error)
}

// Revision states.
const (
	StateReceived = "received" // stored, not applied yet
	StateHeld     = "held"     // waits for its reservation's new revision
	StateApplied  = "applied"
	StateConflict = "conflict"
)

// Stored is a revision as kept in chan_revisions.
type Stored struct {
	Account string
	channel.Revision
	State      string
	BookingID  int64
	ConflictID int64
	ReceivedAt time.Time
}

// Final tells whether the revision's outcome is known for good (applied or a conflict).
func (s Stored) Final() bool { return s.State == StateApplied || s.State == StateConflict }

// Revisions keeps the received revisions: one per connection and revision id.
type Revisions interface {
	// Add stores r, received at, unless the connection has that revision already; it
	// answers the stored revision and whether it was added.
	Add(ctx context.Context, account string, r channel.Revision, at time.Time) (Stored, bool, error)
	// Get answers a stored revision (channel.ErrNotFound when none).
	Get(ctx context.Context, account string, connection int64, revision string) (Stored, error)
	// Pending lists the revisions of a reservation not final yet (received or held), by
	// Order, then by arrival.
	Pending(ctx context.Context, account string, connection int64, reservation string) ([]Stored, error)
	// Settle records a revision's state (a final one with its booking or conflict id; a
	// final revision leaves the reservation's pending ones and may drop its content).
	Settle(ctx context.Context, account string, connection int64, revision, state string, bookingID, conflictID int64) error
	// Erase deletes everything of the account.
	Erase(ctx context.Context, account string) error
}

// Leases makes one processor at a time work on a connection, across replicas.
type Leases interface {
	// Take makes holder (unique to one hold) the connection's processor until until unless
	// another holds it (false then); a hold past its end is taken over.
	Take(ctx context.Context, account string, connection int64, holder string, until time.Time) (bool, error)
	// Renew moves holder's hold's end to until: false when the hold is no longer holder's.
	Renew(ctx context.Context, account string, connection int64, holder string, until time.Time) (bool, error)
	// Release gives holder's hold up (nothing if it is not holder's).
	Release(ctx context.Context, account string, connection int64, holder string) error
	// Erase deletes everything of the account.
	Erase(ctx context.Context, account string) error
}

// Emitter raises an event to the account's webhook endpoints (hooks.Hooks).
type Emitter interface {
	Emit(ctx context.Context, e webhook.Event) error
}
