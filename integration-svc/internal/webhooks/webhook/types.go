package webhook

import (
	"crypto/sha256"
	"encoding/base32"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The event types an endpoint may subscribe to (docs/webhooks.md, "Events").
const (
	BookingCreated         = "booking.created"
	BookingUpdated         = "booking.updated"
	BookingCancelled       = "booking.cancelled"
	PaymentAdded           = "payment.added"
	PaymentRemoved         = "payment.removed"
	ArrivalFormCompleted   = "arrival_form.completed"
	RefundSucceeded        = "refund.succeeded"
	RefundFailed           = "refund.failed"
	DepositHeld            = "deposit.held"
	DepositReauthorized    = "deposit.reauthorized"
	DepositReleased        = "deposit.released"
	DepositCaptured        = "deposit.captured"
	DepositFailed          = "deposit.failed"
	AvailabilityChanged    = "availability.changed"
	PropertyCreated        = "property.created"
	PropertyUpdated        = "property.updated"
	PropertyDeleted        = "property.deleted"
	RatesUpdated           = "rates.updated"
	ICalConflict           = "ical.conflict"
	ChannelConflict        = "channel.conflict"
	WebhookDisabled        = "webhook.disabled"
	WebhookTest            = "webhook.test"
	AllTypes               = "*"
	MaxEndpointsPerAccount = 50
)

// Types lists every event type in the order docs/webhooks.md gives them.
var Types = []string{BookingCreated, BookingUpdated, BookingCancelled, PaymentAdded, PaymentRemoved,
	ArrivalFormCompleted, RefundSucceeded, RefundFailed, DepositHeld, DepositReauthorized, DepositReleased, DepositCaptured,
	DepositFailed, AvailabilityChanged, PropertyCreated, PropertyUpdated, PropertyDeleted,
	RatesUpdated, ICalConflict, ChannelConflict, WebhookDisabled, WebhookTest}

// KnownType reports whether t is an event type or "*".
func KnownType(t string) bool { return t == AllTypes || slices.Contains(Types, t) }

// CarriesBooking reports whether events of type t carry the booking (filled at send time,
// so that nothing with guest data is stored here).
func CarriesBooking(t string) bool {
	switch t {
	case BookingCreated, BookingUpdated, BookingCancelled, PaymentAdded, PaymentRemoved, ArrivalFormCompleted,
		RefundSucceeded, RefundFailed, DepositHeld, DepositReauthorized, DepositReleased, DepositCaptured, DepositFailed:
		return true
	}
	return false
}

var msgEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// MessageID is the stable id of the event of type typ derived from version of the Kafka key
// (extra: a payment id, or "" ): "msg_" and 26 base32 characters of a SHA-256 over them, so
// that deriving it again from a re-read message gives the same id.
func MessageID(key string, version int64, typ, extra string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + strconv.FormatInt(version, 10) + "\x00" + typ + "\x00" + extra))
	return "msg_" + strings.ToLower(msgEncoding.EncodeToString(sum[:]))[:26]
}

// Endpoint is one webhook subscription of an account.
type Endpoint struct {
	Account        string
	ID             int64
	URL            string
	EventTypes     []string
	BrandID        int64
	Description    string
	Enabled        bool
	DisabledAt     *time.Time
	DisabledReason string
	FailureStreak  int
	// FirstFailureAt is the first failed attempt of the current streak.
	FirstFailureAt *time.Time
	// StreakFrom: failures before it do not count (the endpoint was re-enabled then).
	StreakFrom    *time.Time
	LastSuccessAt *time.Time
	LastFailureAt *time.Time
	Secret        string
	// OldSecret signs too until OldSecretUntil (a rotation's overlap).
	OldSecret      string
	OldSecretUntil *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Notice is the webhook.disabled event of the endpoint's disabling until it is recorded
	// for the account's other endpoints (nil then): kept with the disabling, so that a
	// failure to record it right after is made good later (deliver.RepairEvery).
	Notice *Event
}

// Wants reports whether the endpoint subscribes to events of type t.
func (e Endpoint) Wants(t string) bool {
	return slices.Contains(e.EventTypes, t) || slices.Contains(e.EventTypes, AllTypes)
}

// Secrets are the secrets a delivery is signed with at now: the current one, and the
// previous one during a rotation's overlap.
func (e Endpoint) Secrets(now time.Time) []string {
	s := []string{e.Secret}
	if e.OldSecret != "" && e.OldSecretUntil != nil && now.Before(*e.OldSecretUntil) {
		s = append(s, e.OldSecret)
	}
	return s
}

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	Account       string
	WebhookID     int64
	MessageID     string
	EventType     string
	PropertyID    int64
	BookingID     int64
	Data          []byte
	EventAt       time.Time
	Status        string
	Attempts      int
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	DeliveredAt   *time.Time
	// Lease is the token of the lease under which this process sends it (store.Lease): its
	// outcome is recorded only if the lease is still this one (not redelivered meanwhile).
	Lease string
}

// Attempt is one try of a delivery.
type Attempt struct {
	Account         string
	WebhookID       int64
	MessageID       string
	Attempt         int
	At              time.Time
	StatusCode      int
	LatencyMS       int64
	Error           string
	ResponseExcerpt string
}
