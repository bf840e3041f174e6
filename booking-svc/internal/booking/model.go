package booking

import (
	"time"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/libs/pricing"
)

// Booking statuses. A booking is pending while its nights are being claimed (never
// published), reserved once they are, cancelled when its nights were freed, and failed when
// a pending attempt was abandoned. A booking engine's checkout is held: its nights are
// claimed, it is never listed or published, and it becomes reserved when confirmed or failed
// when it expires or is cancelled (checkout.go).
const (
	StatusPending   = "pending"
	StatusHeld      = "held"
	StatusReserved  = "reserved"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"
)

// Change names what a write did to a booking; its event says so.
type Change int

// Changes of a booking.
const (
	Updated Change = iota
	Reserved
	Cancelled
)

// Booking is one booking of an account. Money is decimal strings in the currency's minor
// units (rounded once, when priced), dates YYYY-MM-DD.
type Booking struct {
	AccountID  string
	BookingID  int64
	PropertyID int64
	Status     string
	// Version counts the booking's changes; a change is planned from one version.
	Version int64

	PropertyName string
	UserID       int64
	BrandID      int64
	LeadSourceID int64
	OwnerBook    int

	Guest Guest

	Checkin      string
	Checkout     string
	CheckinTime  string
	CheckoutTime string
	Nights       []string
	Adults       int
	Children     int

	Quote Quote
	// ServiceLines are the services the booking was priced with, kept to price it again
	// with the same services when it changes.
	ServiceLines  []pricing.ServiceLine
	CSADamage     int
	CSATravel     int
	PromotionCode string
	// Promotion is the promotion applied, with the terms it was booked with and the use of
	// its usage limit the booking holds; nil: none.
	Promotion *Promotion

	Payments    map[int64]Payment
	PaymentAuto bool
	// AutopayError is the last automatic charge's failure; automatic charges stop until the
	// booking changes (a new card, new dates).
	AutopayError string
	// ChargeFailures are the automatic charges the card refused, oldest first, each attempt
	// once (published in the booking's events: messaging-svc's payment.failed).
	ChargeFailures []ChargeFailure
	// Sandbox: made by a sandbox account, so its card charges (at booking, on update and
	// automatic ones) reach only the test gateway, whatever the account is later.
	Sandbox bool
	Card    *SealedCard
	Arrival *arrival.Arrival
	// Engine is set on a booking made by the booking engine: its checkout, a hold until it
	// is confirmed.
	Engine *Checkout

	// RatePlanID is the rate plan booked (0: the standard plan); RatePlanName and
	// Cancellation are its name and cancellation policy as they were when it was booked
	// (or when an update moved it to another plan). A booking made before rate plans has
	// neither: it was booked on the standard plan as it then was, "Standard", flexible
	// (Plan answers so). Channel is the channel its price was quoted for ("": direct).
	RatePlanID   int64
	RatePlanName string
	Cancellation *Cancellation
	Channel      string
	// ChannelRes is set on a booking a channel manager sold (channel.go): its reservation
	// and the revisions applied.
	ChannelRes *ChannelReservation
	// ChannelCommission is the commission the channel keeps of a channel booking, as its
	// channel manager reported it ("": none reported), in the booking's currency.
	ChannelCommission string

	// Refund is the refund its cancellation decided (refund.go; nil: never cancelled, or
	// cancelled before refunds existed); Deposit the damage-deposit hold on the guest's card
	// (deposit.go; nil: the quote has no deposit). docs/money.md.
	Refund  *Refund
	Deposit *DepositHold

	CreatedAt   time.Time
	UpdatedAt   time.Time
	CancelledAt *time.Time
}

// Checkout is what a booking made by the booking engine keeps of its checkout (checkout.go).
type Checkout struct {
	// ID is the checkout's id, "co_" and 128 random bits in hex: what the guest's browser
	// holds.
	ID string
	// ExpiresAt ends the hold: a checkout not confirmed by then is expired by the janitor.
	ExpiresAt time.Time
	// Lang is the language its labels are shown in.
	Lang string
	// DueNow is what the confirm pays (the schedule's amount due at booking), in the
	// booking's currency with its minor digits; Gateway takes it: GatewayTest, GatewayStripe
	// or GatewayNone when nothing is due.
	DueNow  string
	Gateway string
	// IntentID, ClientSecret and PublishableKey are the Stripe PaymentIntent the guest's
	// browser confirms (GatewayStripe).
	IntentID       string
	ClientSecret   string
	PublishableKey string
	// Declined counts the test gateway's refusals: each try is charged under the key of
	// the checkout and this count, so that a retried confirm never charges twice and a new
	// card after a refusal is a new charge.
	Declined int
	// Outcome is CheckoutExpired or CheckoutCancelled once the checkout ended without a
	// booking (the booking is then failed).
	Outcome string
}

// Cancellation is a cancellation policy as a booking keeps it: the policy's name
// (flexible, moderate, strict, non_refundable or custom) and its tiers, each "Percent of the
// grand total is refunded when the booking is cancelled DaysBefore days or more before
// arrival" — a named policy's tiers as they were when booked, so that the booking keeps its
// terms whatever the policies become.
type Cancellation struct {
	Policy string
	Tiers  []CancellationTier
}

// CancellationTier is one tier of a policy; Percent is a decimal string (0 to 100).
type CancellationTier struct {
	DaysBefore int
	Percent    string
}

// Guest is the booking party's contact data.
type Guest struct {
	FirstName        string
	LastName         string
	Email            string
	Birthday         string // YYYY-MM-DD, or ""
	Birthplace       string
	Phone1           string
	Phone2           string
	Country          string
	PhoneCountryCode string // derived from Country
	Address          string
	City             string
	State            string
	Postcode         string
	FiscalCode       string
	Other            string
}

// Quote is the price of a stay as computed when it was last priced.
type Quote struct {
	Currency string
	// ExchangeRate is the rate the amounts were converted at from the account's currency:
	// units of Currency per unit of it; "1" when Currency is the account's.
	ExchangeRate  string
	TotalRent     string
	TaxTotal      string
	ServiceTotal  string
	DiscountTotal string
	GrandTotal    string
	DamageDeposit string
	MinNightly    string
	MaxNightly    string
	Nightly       map[string]string // by date
	MinimumStay   int
	Taxes         []Amount
	Services      []ServiceAmount
	Discounts     []Discount
	Schedule      []Installment
}

// Amount is a named amount.
type Amount struct {
	Name   string
	Amount string
}

// ServiceAmount is a priced service line.
type ServiceAmount struct {
	Name      string
	Amount    string
	TaxAmount string
}

// Discount is a discount line.
type Discount struct {
	Name          string
	Amount        string
	PromotionCode string
}

// Installment is one due payment of the schedule.
type Installment struct {
	Label  string
	Due    string
	Amount string
}

// Payment methods.
const (
	MethodManual = "manual" // recorded by the owner (B3)
	MethodCard   = "card"   // charged through the gateway
)

// Payment kinds: what a payment entry is (docs/money.md).
const (
	KindPayment        = ""                // a payment received (B3, a card charge)
	KindRefund         = "refund"          // a refund of RefundOf: a negative Amount
	KindDepositCapture = "deposit_capture" // a damage deposit captured from the hold
)

// ChargeFailure is an automatic charge the card refused: ID is the attempt's (its day and
// amount, "2027-01-10-300.00": the same attempt repeated is the same failure), Reason the
// gateway's refusal.
type ChargeFailure struct {
	ID       string
	Amount   string
	Currency string
	At       time.Time
	Reason   string
}

// Payment is a recorded booking payment (B3), a charge made through the gateway, a refund
// (a negative Amount, Kind KindRefund, RefundOf the payment it gives back) or a captured
// damage deposit.
type Payment struct {
	PaymentID   int64
	Amount      string
	Currency    string
	Description string
	Time        time.Time
	Method      string
	ChargeID    string
	CreatedAt   time.Time
	Kind        string
	RefundOf    int64
}

// Refund statuses (docs/money.md, "Refunds").
const (
	RefundNone      = "none"
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// Refund is what a cancellation decided to give back and how far it got: the policy's
// figures, the amount decided (the policy's, or the owner's Override with its Reason), and
// one part per payment it is refunded from, most recent payment first.
type Refund struct {
	Status       string
	Policy       string
	Percent      string // decimal, 0 to 100
	PolicyAmount string // the policy's amount of the grand total
	NetPaid      string // what was paid, less earlier refunds, when it was decided
	Amount       string // what is refunded: min(PolicyAmount, NetPaid), or the override
	Override     bool
	Reason       string
	DecidedAt    time.Time
	Parts        []RefundPart
}

// RefundPart is the refund of one payment. PaymentID is the refund's own payment entry,
// reserved when decided (so it is recorded once); Key the gateway's idempotency key.
type RefundPart struct {
	Of            int64 // the payment refunded
	PaymentID     int64
	Amount        string
	Method        string // the refunded payment's: card (through the gateway) or manual
	Key           string
	Status        string // pending, succeeded or failed
	Attempts      int
	LastError     string
	NextAttemptAt time.Time
	RefundID      string // the gateway's refund id, once it succeeded
	DoneAt        *time.Time
}

// Deposit hold statuses (docs/money.md, "Damage-deposit holds").
const (
	DepositScheduled = "scheduled"
	DepositHeld      = "held"
	DepositReleased  = "released"
	DepositCaptured  = "captured"
	DepositFailed    = "failed"
	DepositNoCard    = "no_card"
)

// DepositHold is the damage deposit held on the guest's card. Step counts the
// authorizations made (each keyed by it); Pending names a gateway step begun and not yet
// recorded done ("hold", "release", "capture"), so that a restarted worker repeats it
// under the same key — once its beginner's deadline is past (PendingAt + the request
// deadline), so that a live beginner and a pass never ask the gateway twice.
type DepositHold struct {
	Status           string
	Amount           string
	Currency         string
	DueDate          string // YYYY-MM-DD, in the property's zone
	Step             int
	Pending          string
	PendingAt        time.Time // when Pending was begun: its beginner works on it until its deadline
	AuthorizationID  string
	HeldAt           *time.Time
	Reauthorizations int
	ReleaseOn        string // YYYY-MM-DD
	ReleasedAt       *time.Time
	CapturedAmount   string
	CaptureReason    string
	CapturedAt       *time.Time
	LastError        string
}

// SealedCard is a card kept for later charges: Sealed holds the encrypted card (never the
// CVC); the rest may be shown.
type SealedCard struct {
	Sealed string
	Masked string
	Brand  string
	Expiry string
}

// Block is a block of dates on a property.
type Block struct {
	AccountID  string
	BlockID    int64
	PropertyID int64
	StartDate  string
	EndDate    string // inclusive: the last blocked night
	Memo       string
	// FeedID is the iCal feed the block was imported from (0: an owner's block), UID the
	// feed event's uid; an imported block follows its feed (package feedsync).
	FeedID    int64
	UID       string
	Deleted   bool
	Version   int64
	CreatedAt time.Time
}

// ListFilter selects bookings of one account.
type ListFilter struct {
	UserID, BookingID, PropertyID, BrandID int64
	From, To                               string // stays overlapping [From, To)
	Keyword                                string // in first name, last name, email
	Skip, Limit                            int64
}
