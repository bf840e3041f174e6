// Package trigger decides which messages a booking sends and when (docs/messaging.md,
// "Triggers", "Exactly once"): the catalog of triggers, each account's settings for them, and
// Plan, which turns two snapshots of a booking into the messages to create and the scheduled
// ones to cancel. Every message has a natural id, so that a replayed event or a second replica
// plans the same ids and the outbox inserts each once. The package does no I/O.
package trigger

// Trigger names, as docs/messaging.md lists them; templates are keyed by the same names.
const (
	BookingConfirmed     = "booking.confirmed"
	BookingModified      = "booking.modified"
	BookingCancelled     = "booking.cancelled"
	PaymentReceived      = "payment.received"
	PaymentFailed        = "payment.failed"
	PaymentDueSoon       = "payment.due_soon"
	DepositHeld          = "deposit.held"
	DepositReleased      = "deposit.released"
	StayArrival          = "stay.arrival"
	StayCheckout         = "stay.checkout"
	StayThanks           = "stay.thanks"
	OwnerBooking         = "owner.booking"
	OwnerCancellation    = "owner.cancellation"
	OwnerChannelConflict = "owner.channel_conflict"
)

// Recipient is who receives a trigger's message.
type Recipient string

const (
	Guest Recipient = "guest" // the booking's guest
	Owner Recipient = "owner" // the account's notification addresses
)

// Anchor is the day a scheduled trigger counts its offset from.
type Anchor int

const (
	AnchorNone     Anchor = iota // an event trigger
	AnchorCheckin                // days before check-in
	AnchorCheckout               // days before check-out
	AnchorAfterOut               // days after check-out
	AnchorDue                    // days before the unpaid balance's due date
)

// Def is one trigger of the catalog. A scheduled trigger (Anchor not AnchorNone) is sent at
// a local time, DefaultDays before (or after, AnchorAfterOut) its anchor day, in the
// property's time zone.
type Def struct {
	Name        string
	To          Recipient
	Anchor      Anchor
	DefaultDays int
	DefaultAt   string // HH:MM, local
}

// Scheduled tells whether the trigger is sent at a time of the stay rather than on an event.
func (d Def) Scheduled() bool { return d.Anchor != AnchorNone }

var catalog = []Def{
	{Name: BookingConfirmed, To: Guest},
	{Name: BookingModified, To: Guest},
	{Name: BookingCancelled, To: Guest},
	{Name: PaymentReceived, To: Guest},
	{Name: PaymentFailed, To: Guest},
	{Name: PaymentDueSoon, To: Guest, Anchor: AnchorDue, DefaultDays: 3, DefaultAt: "10:00"},
	{Name: DepositHeld, To: Guest},
	{Name: DepositReleased, To: Guest},
	{Name: StayArrival, To: Guest, Anchor: AnchorCheckin, DefaultDays: 3, DefaultAt: "10:00"},
	{Name: StayCheckout, To: Guest, Anchor: AnchorCheckout, DefaultDays: 1, DefaultAt: "18:00"},
	{Name: StayThanks, To: Guest, Anchor: AnchorAfterOut, DefaultDays: 1, DefaultAt: "10:00"},
	{Name: OwnerBooking, To: Owner},
	{Name: OwnerCancellation, To: Owner},
	{Name: OwnerChannelConflict, To: Owner},
}

// Catalog answers every trigger, in the order of docs/messaging.md.
func Catalog() []Def { return append([]Def(nil), catalog...) }

// Lookup answers the trigger named name.
func Lookup(name string) (Def, bool) {
	for _, d := range catalog {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}
