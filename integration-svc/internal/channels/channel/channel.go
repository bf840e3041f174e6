// Package channel is the domain of channel distribution (docs/channels.md): connections to a
// channel manager, the mapping of properties and rate plans to its ids, the ARI values vros
// sends, the reservation revisions it receives, and the ports the rest of integration-svc
// implements: the Adapter of each channel manager (internal/channels/channex,
// internal/channels/opentravel) and the stores (internal/channels/store).
package channel

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Adapters.
const (
	Channex    = "channex"
	OpenTravel = "opentravel"
)

// DefaultDays is the ARI horizon of a connection that names none; MaxDays the longest.
const (
	DefaultDays = 500
	MaxDays     = 730
)

// ErrNotFound: the account has no such connection, mapping, log entry or conflict.
var ErrNotFound = errors.New("not found")

// ErrPropertyMapped: the property has a mapping on the connection already.
var ErrPropertyMapped = errors.New("the property is mapped on this connection already")

// ErrRoomMapped: the channel manager's property and room type are mapped to another property
// of the connection.
var ErrRoomMapped = errors.New("the channel manager's property and room type are mapped to another property")

// Credentials are a connection's secrets, sealed at rest and never answered. Channex uses
// APIKey (the user-api-key header); OpenTravel Username and Password (WS-Security).
type Credentials struct {
	APIKey   string
	Username string
	Password string
}

// Connection is an account's connection to a channel manager.
type Connection struct {
	Account  string
	ID       int64
	Adapter  string // Channex or OpenTravel
	Endpoint string // the channel manager's base URL
	Credentials
	// Channel is the channel markup applied to every rate pushed (lower case); default the
	// adapter's name.
	Channel string
	Enabled bool
	// InboundToken is the capability of the inbound URL /channels/{adapter}/{token}. The
	// stores keep only its hash: it is set when a connection is created or its token
	// rotated, and in what ConnectionByToken answers; empty in every other read.
	InboundToken string
	// Days is the ARI horizon: today and the Days-1 dates after it.
	Days      int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PlanMapping maps one vros rate plan (0: the standard plan) to the channel manager's id.
type PlanMapping struct {
	RatePlanID       int64
	RemoteRatePlanID string
}

// Mapping maps one property of a connection to the channel manager's ids.
type Mapping struct {
	Account          string
	ConnectionID     int64
	PropertyID       int64
	InternalCode     string
	RemotePropertyID string // Channex property id / OTA HotelCode
	RoomTypeID       string // Channex room type id / OTA InvTypeCode
	RatePlans        []PlanMapping
	Enabled          bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// RemotePlan is the channel manager's id of a vros plan ("" when the plan is not mapped).
func (m Mapping) RemotePlan(plan int64) string {
	for _, p := range m.RatePlans {
		if p.RatePlanID == plan {
			return p.RemoteRatePlanID
		}
	}
	return ""
}

// LocalPlan is the vros plan of a channel manager's rate plan id (false when not mapped).
func (m Mapping) LocalPlan(remote string) (int64, bool) {
	for _, p := range m.RatePlans {
		if p.RemoteRatePlanID == remote {
			return p.RatePlanID, true
		}
	}
	return 0, false
}

// Date is a calendar date "YYYY-MM-DD".
type Date = string

// Availability is one range of dates (From to To, both included) with the same availability
// of a room type: 1 free, 0 taken.
type Availability struct {
	From, To  Date
	Available int
}

// Rate is one range of dates (both included) of one remote rate plan with the same values.
// Rate is a decimal string in the property's currency ("0" with StopSell on a date without a
// price); every field is always sent (the values are the whole state of the dates, never a
// partial change).
type Rate struct {
	RemoteRatePlanID  string
	From, To          Date
	Rate              string
	MinStayArrival    int
	MinStayThrough    int
	MaxStay           int // 0: none
	ClosedToArrival   bool
	ClosedToDeparture bool
	StopSell          bool
}

// Batch is the ARI of one mapped property to send in one go: the adapter splits it into the
// requests its channel manager takes (each within its size limits), availability first.
type Batch struct {
	Connection   Connection
	Mapping      Mapping
	Currency     string
	Availability []Availability
	Rates        []Rate
}

// Exchange is one request an adapter made and its answer, for the channel log. Request and
// Response have card data masked.
type Exchange struct {
	Kind       string // a Kind* constant
	Request    []byte
	Response   []byte
	HTTPStatus int
	Duration   time.Duration
	From, To   Date // the dates an ARI request covered
	Err        error
	// Warning is what an accepted answer reported as left out (Channex's meta.warnings);
	// the exchange is still ok.
	Warning string
}

// Log kinds.
const (
	KindAvailability  = "availability"
	KindRestrictions  = "restrictions"
	KindRates         = "rates"
	KindRevisionsFeed = "revisions_feed"
	KindAck           = "ack"
	KindReservation   = "reservation"
	KindWebhook       = "webhook"
	KindTest          = "test"
)

// Log statuses.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusRetrying  = "retrying"
	StatusHeld      = "held"
	StatusConflict  = "conflict"
	StatusDuplicate = "duplicate"
)

// EntryOf is the log entry of ex, an exchange of c about property (0: none) in direction
// ("out" or "in"). status "" is StatusOK without an error, StatusRetrying for a retryable
// *RemoteError and StatusError for any other error.
func EntryOf(c Connection, property int64, direction string, ex Exchange, status string) LogEntry {
	e := LogEntry{Account: c.Account, ConnectionID: c.ID, PropertyID: property, Direction: direction, Kind: ex.Kind,
		Status: status, HTTPStatus: ex.HTTPStatus, Request: string(ex.Request), Response: string(ex.Response),
		From: ex.From, To: ex.To, Duration: ex.Duration}
	if ex.Err != nil {
		e.Error = ex.Err.Error()
	}
	if e.Status == "" {
		var re *RemoteError
		switch {
		case ex.Err == nil:
			e.Status = StatusOK
		case errors.As(ex.Err, &re) && re.Retryable:
			e.Status = StatusRetrying
		default:
			e.Status = StatusError
		}
	}
	return e
}

// RemoteError is a channel manager's refusal or failure. Retryable: 429, 5xx, a timeout or a
// broken connection; RetryAfter is the wait the answer asked for (0: none said).
type RemoteError struct {
	Status     int
	Retryable  bool
	RetryAfter time.Duration
	Message    string
}

func (e *RemoteError) Error() string {
	if e.Status == 0 {
		return "channel manager: " + e.Message
	}
	return fmt.Sprintf("channel manager answered %d: %s", e.Status, e.Message)
}

// Revision statuses.
const (
	RevisionNew       = "new"
	RevisionModified  = "modified"
	RevisionCancelled = "cancelled"
)

// Guest is who a channel reservation is for (never card data).
type Guest struct {
	FirstName, LastName, Email, Phone, Country string
}

// Revision is one state of a channel reservation, whole.
type Revision struct {
	ConnectionID  int64
	RevisionID    string // unique per connection
	ReservationID string // the channel manager's reservation id
	Channel       string // the selling channel as the channel manager names it ("BookingCom")
	Status        string // a Revision* constant
	// Order orders the revisions of one reservation (Channex: the feed's inserted_at;
	// OTA: the message's TimeStamp), as Unix nanoseconds.
	Order            int64
	RemotePropertyID string
	RoomTypeID       string
	RemoteRatePlanID string
	Checkin          Date
	Checkout         Date
	Adults, Children int
	Currency         string
	Total            string // decimal string
	// Commission is what the selling channel keeps of Total, as the channel manager reports
	// it (Channex: ota_commission; OpenTravel: TotalCommissions), a decimal string in
	// Currency; "": not reported.
	Commission string
	Guest      Guest
	Notes      string
	// Raw is the revision as received, card data masked (for the log).
	Raw []byte
}

// Adapter is one channel manager's protocol. Every method is safe for concurrent use.
type Adapter interface {
	// Name is the adapter's name (Channex, OpenTravel).
	Name() string
	// PushARI sends b in as many requests as the channel manager needs, availability first,
	// calling sent after each accepted request with the ranges it carried (so that the
	// sender records them) and record for every request made. It stops at the first
	// failure and returns it (a *RemoteError when the channel manager answered or was not
	// reached). wait is called before each request with its kind (KindAvailability, …) so
	// that the caller applies its rate limits; an error from wait stops the push.
	PushARI(ctx context.Context, b Batch, wait func(ctx context.Context, kind string) error,
		sent func(avail []Availability, rates []Rate) error, record func(Exchange)) error
	// PullRevisions reads the revisions not acknowledged yet (Channex's feed); an adapter
	// whose reservations are pushed answers none.
	PullRevisions(ctx context.Context, c Connection, record func(Exchange)) ([]Revision, error)
	// Ack acknowledges a pulled revision once it is applied or recorded as a conflict.
	Ack(ctx context.Context, c Connection, r Revision, record func(Exchange)) error
	// Test makes one authenticated read of the channel manager (channel-connection test).
	Test(ctx context.Context, c Connection, record func(Exchange)) error
}

// Inbound is a message posted to a connection's inbound route (/channels/{adapter}/{token}),
// as its adapter reads it.
type Inbound struct {
	// Revisions are the reservations the message carries (OpenTravel's pushes).
	Revisions []Revision
	// Pull: the message is a hint that revisions wait in the feed (Channex's webhook).
	Pull bool
	// Kind is the log kind of the message (KindWebhook, KindReservation).
	Kind string
	// Message is what the adapter's Reply needs to answer the message (OpenTravel: its
	// element and EchoToken); opaque to the caller.
	Message string
}

// Applied is what became of one revision of an inbound message, for its reply.
type Applied struct {
	RevisionID string
	BookingID  int64     // 0 when it became a conflict
	Conflict   *Conflict // set when the revision was recorded as a conflict
}

// ErrUnauthorized: an inbound message's credentials are not the connection's.
var ErrUnauthorized = errors.New("the message's credentials are not the connection's")

// InboundError is an inbound message the adapter cannot read; Field names what is wrong.
type InboundError struct {
	Field, Message string
}

func (e *InboundError) Error() string { return e.Field + ": " + e.Message }

// Receiver is implemented by adapters that take messages on the inbound route.
type Receiver interface {
	// Receive reads body posted for c (checking the credentials it carries, if the protocol
	// has any: ErrUnauthorized); an unreadable body is an *InboundError.
	Receive(ctx context.Context, c Connection, body []byte) (Inbound, error)
	// Reply is the answer to the message once every revision is applied (in the order
	// Receive returned them), with its content type; err set: the message could not be
	// processed now (the reply asks the sender to retry).
	Reply(in Inbound, applied []Applied, err error) (contentType string, body []byte, status int)
}

// Conflict reasons.
const (
	ReasonNightsTaken     = "nights_taken"
	ReasonUnknownProperty = "unknown_property"
	ReasonUnknownRoomType = "unknown_room_type"
	ReasonInvalid         = "invalid"
)

// Conflict is a channel reservation revision that could not be applied.
type Conflict struct {
	Account       string
	ID            int64
	ConnectionID  int64
	ReservationID string
	RevisionID    string
	Channel       string
	PropertyID    int64
	Checkin       Date
	Checkout      Date
	Reason        string
	Message       string
	Nights        []Date
	BookingIDs    []int64
	GuestName     string
	Total         string
	Currency      string
	CreatedAt     time.Time
	ResolvedAt    *time.Time
	Note          string
}

// LogEntry is one message of the channel log.
type LogEntry struct {
	Account      string
	ID           int64
	ConnectionID int64
	PropertyID   int64
	Direction    string // "out" or "in"
	Kind         string
	Status       string
	HTTPStatus   int
	Request      string
	Response     string
	Truncated    bool
	Error        string
	From, To     Date
	At           time.Time
	Duration     time.Duration
}

// LogFilter selects log entries (zero fields: any); Cursor continues a list (the last id
// seen), Limit ≤ 200.
type LogFilter struct {
	ConnectionID int64
	PropertyID   int64
	Kind, Status string
	From, To     time.Time
	Q            string
	Cursor       int64
	Limit        int
}

// Connections keeps the accounts' connections and mappings.
type Connections interface {
	NextID(ctx context.Context) (int64, error)
	AddConnection(ctx context.Context, c Connection) error
	Connection(ctx context.Context, account string, id int64) (Connection, error)
	// ConnectionByToken finds the connection of an inbound token (any account).
	ConnectionByToken(ctx context.Context, adapter, token string) (Connection, error)
	ListConnections(ctx context.Context, account string) ([]Connection, error)
	// EnabledConnections lists every account's enabled connections of an adapter.
	EnabledConnections(ctx context.Context, adapter string) ([]Connection, error)
	ModifyConnection(ctx context.Context, account string, id int64, change func(c *Connection) error) (Connection, error)
	DeleteConnection(ctx context.Context, account string, id int64) error

	AddMapping(ctx context.Context, m Mapping) error
	Mapping(ctx context.Context, account string, connection, property int64) (Mapping, error)
	// Mappings lists the account's mappings (connection or property > 0: theirs only).
	Mappings(ctx context.Context, account string, connection, property int64) ([]Mapping, error)
	// MappingByRoom finds the mapping of a channel manager's property and room type.
	MappingByRoom(ctx context.Context, account string, connection int64, remoteProperty, roomType string) (Mapping, error)
	ModifyMapping(ctx context.Context, account string, connection, property int64, change func(m *Mapping) error) (Mapping, error)
	DeleteMapping(ctx context.Context, account string, connection, property int64) error
	// Erase deletes everything the account holds.
	Erase(ctx context.Context, account string) error
}

// Log keeps the channel log.
type Log interface {
	Append(ctx context.Context, e LogEntry) error
	List(ctx context.Context, account string, f LogFilter) ([]LogEntry, error)
	Get(ctx context.Context, account string, id int64) (LogEntry, error)
}

// Conflicts keeps the reservation conflicts.
type Conflicts interface {
	// Record stores c once per (account, connection, revision): false when it was stored
	// before (the stored one is returned).
	Record(ctx context.Context, c Conflict) (Conflict, bool, error)
	List(ctx context.Context, account string, openOnly bool) ([]Conflict, error)
	Get(ctx context.Context, account string, id int64) (Conflict, error)
	Resolve(ctx context.Context, account string, id int64, note string, at time.Time) (Conflict, error)
}
