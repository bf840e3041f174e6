package contract

import "time"

// Booking event types on vros.booking.v1, keyed `<accountId>:booking:<bookingId>`. A booking
// attempt that never became a booking (pending, then failed) is never published.
const (
	BookingReserved   = "vros.booking.reserved"
	BookingUpdated    = "vros.booking.updated"
	BookingCancelled  = "vros.booking.cancelled"
	BookingTypePrefix = "vros.booking." // every booking event type starts with it
)

// Block event types on vros.booking.v1, keyed `<accountId>:block:<blockId>`.
const (
	BlockCreated = "vros.block.created"
	// BlockUpdated: an imported block's dates changed (its feed event moved).
	BlockUpdated    = "vros.block.updated"
	BlockDeleted    = "vros.block.deleted"
	BlockTypePrefix = "vros.block." // every block event type starts with it
)

// Booking is the data of booking events: what other services need to know of a booking,
// never the guest's contact data or card.
type Booking struct {
	AccountID  string `json:"account_id"`
	BookingID  int64  `json:"booking_id"`
	PropertyID int64  `json:"property_id"`
	Status     string `json:"status"` // "reserved" or "cancelled"
	// Version increases by one with every change of this booking.
	Version  int64  `json:"version"`
	Checkin  string `json:"checkin"`  // first night
	Checkout string `json:"checkout"` // the day the guest leaves (not a night of the stay)
	// Nights are the nights the booking holds: every night of the stay while it is reserved,
	// none (an empty list) otherwise.
	Nights      []string   `json:"nights"`
	Adults      int        `json:"adults"`
	Children    int        `json:"children"`
	Currency    string     `json:"currency"`
	TotalRent   string     `json:"total_rent"`  // decimal string
	GrandTotal  string     `json:"grand_total"` // decimal string: rent, services and taxes
	UserID      int64      `json:"user_id,omitempty"`
	BrandID     int64      `json:"brand_id,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	CancelledAt *time.Time `json:"cancelled_at"` // nil unless cancelled
	// Payments are the payments recorded on the booking (interface B addbookingpayment and
	// card charges), never card data: a consumer learns of a payment added or removed by
	// comparing two snapshots (integration-svc's webhooks do). Absent: none.
	Payments []BookingPayment `json:"payments,omitempty"`
	// ArrivalFormCompleted is true once the guest's arrival form is completed.
	ArrivalFormCompleted bool `json:"arrival_form_completed,omitempty"`
	// RatePlanID is the plan booked (0, left out: the standard plan); RatePlanName and
	// Cancellation are its name and cancellation policy as they were when booked; Channel
	// is the channel the booking's price was quoted for ("": direct).
	RatePlanID   int64         `json:"rate_plan_id,omitempty"`
	RatePlanName string        `json:"rate_plan_name,omitempty"`
	Cancellation *Cancellation `json:"cancellation,omitempty"`
	Channel      string        `json:"channel,omitempty"`
	// Refund is what the booking's cancellation decided to give back and how far it got
	// (docs/money.md, "Refunds"); absent: never cancelled, or cancelled before refunds.
	// Deposit is the damage-deposit hold on the guest's card ("Damage-deposit holds");
	// absent: the quote has no deposit. Neither carries card data nor the owner's reasons
	// (free text that may name the guest).
	Refund  *BookingRefund  `json:"refund,omitempty"`
	Deposit *BookingDeposit `json:"deposit,omitempty"`
	// ChargeFailures are the automatic card charges of the booking's installments that the
	// card refused (docs/money.md, "Automatic payments"), oldest first, each once; absent:
	// none. A consumer learns of a new one by comparing two snapshots (messaging-svc's
	// payment.failed does).
	ChargeFailures []BookingChargeFailure `json:"charge_failures,omitempty"`
}

// BookingChargeFailure is an automatic charge the card refused: ID names the attempt
// (stable: the same attempt repeated is the same failure), Amount what was to be charged
// (decimal string in Currency), Reason the gateway's refusal ("card declined"), never card
// data.
type BookingChargeFailure struct {
	ID       string    `json:"id"`
	Amount   string    `json:"amount"`
	Currency string    `json:"currency"`
	At       time.Time `json:"at"`
	Reason   string    `json:"reason"`
}

// Refund and deposit statuses as booking events carry them (docs/money.md).
const (
	RefundNone      = "none"
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"

	DepositScheduled = "scheduled"
	DepositHeld      = "held"
	DepositReleased  = "released"
	DepositCaptured  = "captured"
	DepositFailed    = "failed"
	DepositNoCard    = "no_card"
)

// BookingRefund is a cancellation's refund: Amount is what is refunded (the policy's
// amount, at most what was paid, or the owner's override), Refunded what of it the
// gateway (or the manager, for recorded payments) has given back so far, both decimal
// strings in Currency. Policy and Percent are the policy's name and percentage it was
// computed with.
type BookingRefund struct {
	Status   string `json:"status"` // none, pending, succeeded or failed
	Amount   string `json:"amount"`
	Refunded string `json:"refunded"`
	Currency string `json:"currency"`
	Policy   string `json:"policy,omitempty"`
	Percent  string `json:"percent,omitempty"`
	Override bool   `json:"override,omitempty"` // the owner chose the amount
}

// BookingDeposit is a damage-deposit hold: Amount held (decimal string in Currency),
// CapturedAmount what the owner captured of it; Reauthorizations counts the holds renewed
// before the card network's expiry; LastError the gateway's last refusal.
type BookingDeposit struct {
	Status           string     `json:"status"` // scheduled, held, released, captured, failed or no_card
	Amount           string     `json:"amount"`
	Currency         string     `json:"currency"`
	DueDate          string     `json:"due_date,omitempty"` // YYYY-MM-DD, the property's zone
	CapturedAmount   string     `json:"captured_amount,omitempty"`
	HeldAt           *time.Time `json:"held_at,omitempty"`
	ReleaseOn        string     `json:"release_on,omitempty"` // YYYY-MM-DD
	ReleasedAt       *time.Time `json:"released_at,omitempty"`
	CapturedAt       *time.Time `json:"captured_at,omitempty"`
	Reauthorizations int        `json:"reauthorizations,omitempty"`
	LastError        string     `json:"last_error,omitempty"`
}

// BookingPayment is one payment of a booking as booking events carry it.
type BookingPayment struct {
	PaymentID int64     `json:"payment_id"`
	Amount    string    `json:"amount"` // decimal string, in Currency
	Currency  string    `json:"currency"`
	Method    string    `json:"method,omitempty"`
	PaidAt    time.Time `json:"paid_at"` // the payment's date as recorded
	CreatedAt time.Time `json:"created_at"`
	// Kind is absent for a payment received, "refund" for a refund (a negative Amount;
	// RefundOf the payment it gives back) or "deposit_capture" for a captured damage
	// deposit (docs/money.md).
	Kind     string `json:"kind,omitempty"`
	RefundOf int64  `json:"refund_of,omitempty"`
}

// Payment kinds (BookingPayment.Kind).
const (
	PaymentKindRefund         = "refund"
	PaymentKindDepositCapture = "deposit_capture"
)

// Block is the data of block events: dates an owner closed (interface A).
type Block struct {
	AccountID  string `json:"account_id"`
	BlockID    int64  `json:"block_id"`
	PropertyID int64  `json:"property_id"`
	StartDate  string `json:"start_date"` // first night blocked
	EndDate    string `json:"end_date"`   // last night blocked (included)
	Memo       string `json:"memo"`
	Deleted    bool   `json:"deleted"` // the dates are open again
	Version    int64  `json:"version"`
	CreatedAt  string `json:"created_at"` // "YYYY-MM-DD HH:MM:SS", UTC
	// FeedID is the iCal feed (integration-svc) a block was imported from; 0: an owner's
	// block. An imported block's dates follow its feed event (BlockUpdated).
	FeedID int64 `json:"feed_id,omitempty"`
}
