package store

import "time"

// BookingRec is one booking as stored in vros_booking.bookings (`_id` "<account>:<bookingId>").
// Money is decimal strings, dates YYYY-MM-DD; Status is one of booking.Status….
type BookingRec struct {
	ID         string `bson:"_id"`
	AccountID  string `bson:"account_id"`
	BookingID  int64  `bson:"booking_id"`
	PropertyID int64  `bson:"property_id"`
	Status     string `bson:"status"`
	Version    int64  `bson:"version"`
	LastChange string `bson:"last_change"`

	PropertyName string `bson:"property_name"`
	UserID       int64  `bson:"user_id,omitempty"`
	BrandID      int64  `bson:"brand_id,omitempty"`
	LeadSourceID int64  `bson:"leadsource_id"`
	OwnerBook    int    `bson:"owner_book"`

	Guest GuestRec `bson:"guest"`

	Checkin      string   `bson:"checkin"`
	Checkout     string   `bson:"checkout"`
	CheckinTime  string   `bson:"checkin_time"`
	CheckoutTime string   `bson:"checkout_time"`
	Nights       []string `bson:"nights"`
	Adults       int      `bson:"adults"`
	Children     int      `bson:"children"`

	Quote QuoteRec `bson:"quote"`
	// ServiceLines are the services as requested (nil: the property's defaults), kept to
	// price the booking again when it changes.
	ServiceLines  []ServiceLineRec `bson:"service_lines"`
	ServicesSet   bool             `bson:"services_set"`
	CSADamage     int              `bson:"csa_damage_protection"`
	CSATravel     int              `bson:"csa_travel_insurance"`
	PromotionCode string           `bson:"promotion_code,omitempty"`
	// Promotion is the promotion applied, as booked, and the use of its limit held.
	Promotion *PromotionRec `bson:"promotion,omitempty"`

	Payments    map[string]PaymentRec `bson:"payments"`
	PaymentAuto bool                  `bson:"payment_auto"`
	Sandbox     bool                  `bson:"sandbox,omitempty"`
	// AutopayError is the last automatic charge's failure; automatic charges stop until the
	// booking changes (a new card, new dates).
	AutopayError string `bson:"autopay_error,omitempty"`
	// ChargeFailures are the automatic charges the card refused (booking.ChargeFailure).
	ChargeFailures []ChargeFailureRec `bson:"charge_failures,omitempty"`
	Card           *CardRec           `bson:"card,omitempty"`
	Arrival        *ArrivalRec        `bson:"arrival,omitempty"`
	// Engine is set on a booking made by the booking engine: its checkout (booking.Checkout).
	Engine *CheckoutRec `bson:"engine,omitempty"`

	// The rate plan booked, its name and cancellation policy as booked, and the channel
	// (booking.Booking). All absent on a booking made before rate plans: the standard plan,
	// its name and policy unrecorded, direct. No migration: absent reads as that.
	RatePlanID   int64            `bson:"rate_plan_id,omitempty"`
	RatePlanName string           `bson:"rate_plan_name,omitempty"`
	Cancellation *CancellationRec `bson:"cancellation,omitempty"`
	Channel      string           `bson:"channel,omitempty"`
	// ChannelRes is a channel booking's reservation (booking.ChannelReservation; channel.go).
	ChannelRes *ChannelResRec `bson:"channel_reservation,omitempty"`
	// ChannelCommission is what the channel keeps of a channel booking, as reported.
	ChannelCommission string `bson:"channel_commission,omitempty"`
	// Refund and Deposit: docs/money.md.
	Refund  *RefundRec  `bson:"refund,omitempty"`
	Deposit *DepositRec `bson:"deposit,omitempty"`

	CreatedAt   time.Time  `bson:"created_at"`
	UpdatedAt   time.Time  `bson:"updated_at"`
	CancelledAt *time.Time `bson:"cancelled_at,omitempty"`
}

// CheckoutRec is the booking engine's checkout of a booking (booking.Checkout).
type CheckoutRec struct {
	ID             string    `bson:"id"`
	ExpiresAt      time.Time `bson:"expires_at"`
	Lang           string    `bson:"lang,omitempty"`
	DueNow         string    `bson:"due_now"`
	Gateway        string    `bson:"gateway"`
	IntentID       string    `bson:"intent_id,omitempty"`
	ClientSecret   string    `bson:"client_secret,omitempty"`
	PublishableKey string    `bson:"publishable_key,omitempty"`
	Declined       int       `bson:"declined,omitempty"`
	Outcome        string    `bson:"outcome,omitempty"`
}

// CancellationRec is a booking's cancellation policy as booked (booking.Cancellation).
type CancellationRec struct {
	Policy string                `bson:"policy"`
	Tiers  []CancellationTierRec `bson:"tiers"`
}

// CancellationTierRec is one tier of a policy.
type CancellationTierRec struct {
	DaysBefore int    `bson:"days_before"`
	Percent    string `bson:"percent"`
}

// GuestRec is the booking party's contact data.
type GuestRec struct {
	FirstName        string `bson:"first_name"`
	LastName         string `bson:"last_name"`
	Email            string `bson:"email"`
	Birthday         string `bson:"birthday,omitempty"`
	Birthplace       string `bson:"birthplace,omitempty"`
	Phone1           string `bson:"phone1,omitempty"`
	Phone2           string `bson:"phone2,omitempty"`
	Country          string `bson:"country,omitempty"`
	PhoneCountryCode string `bson:"phone_country_code,omitempty"`
	Address          string `bson:"address,omitempty"`
	City             string `bson:"city,omitempty"`
	State            string `bson:"state,omitempty"`
	Postcode         string `bson:"postcode,omitempty"`
	FiscalCode       string `bson:"fiscal_code,omitempty"`
	Other            string `bson:"other,omitempty"`
}

// QuoteRec is the price of the booking as computed when it was last changed.
type QuoteRec struct {
	Currency string `bson:"currency"`
	// ExchangeRate is the rate from the account's currency; absent on bookings made before
	// conversions existed, which were all in the account's currency (rate 1).
	ExchangeRate  string            `bson:"exchange_rate,omitempty"`
	TotalRent     string            `bson:"total_rent"`
	TaxTotal      string            `bson:"tax_total"`
	ServiceTotal  string            `bson:"service_total"`
	DiscountTotal string            `bson:"discount_total"`
	GrandTotal    string            `bson:"grand_total"`
	DamageDeposit string            `bson:"damage_deposit"`
	MinNightly    string            `bson:"min_nightly"`
	MaxNightly    string            `bson:"max_nightly"`
	Nightly       map[string]string `bson:"nightly"`
	MinimumStay   int               `bson:"minimum_stay"`
	Taxes         []AmountRec       `bson:"taxes"`
	Services      []ServiceAmtRec   `bson:"services"`
	Discounts     []DiscountRec     `bson:"discounts"`
	Schedule      []InstallmentRec  `bson:"schedule"`
}

// PromotionRec is the promotion a booking was booked with (booking.Promotion).
type PromotionRec struct {
	Code       string  `bson:"code"`
	Name       string  `bson:"name,omitempty"`
	Percent    bool    `bson:"percent"`
	Amount     string  `bson:"amount"`
	StartDate  string  `bson:"start_date,omitempty"`
	EndDate    string  `bson:"end_date,omitempty"`
	MinNights  int     `bson:"min_nights,omitempty"`
	UsageLimit int     `bson:"usage_limit,omitempty"`
	Properties []int64 `bson:"properties,omitempty"`
	Slot       int     `bson:"slot,omitempty"`
}

// AmountRec is a named amount.
type AmountRec struct {
	Name   string `bson:"name"`
	Amount string `bson:"amount"`
}

// ServiceAmtRec is a priced service line.
type ServiceAmtRec struct {
	Name      string `bson:"name"`
	Amount    string `bson:"amount"`
	TaxAmount string `bson:"tax_amount"`
}

// DiscountRec is a discount line.
type DiscountRec struct {
	Name          string `bson:"name"`
	Amount        string `bson:"amount"`
	PromotionCode string `bson:"promotion_code,omitempty"`
}

// InstallmentRec is one due payment of the schedule.
type InstallmentRec struct {
	Label  string `bson:"label"`
	Due    string `bson:"due"`
	Amount string `bson:"amount"`
}

// ServiceLineRec is a requested service line.
type ServiceLineRec struct {
	Name       string          `bson:"name"`
	Applicable int             `bson:"applicable"`
	Amount     string          `bson:"amount"`
	Type       int             `bson:"type"`
	Unit       int             `bson:"unit"`
	Taxes      []ServiceTaxRec `bson:"taxes"`
}

// ServiceTaxRec is a tax of a requested service line.
type ServiceTaxRec struct {
	Name string `bson:"name"`
	Perc string `bson:"perc"`
}

// PaymentRec is a recorded booking payment (B3) or a charge made through the gateway.
type PaymentRec struct {
	PaymentID   int64     `bson:"payment_id"`
	Amount      string    `bson:"amount"`
	Currency    string    `bson:"currency"`
	Description string    `bson:"description,omitempty"`
	Time        time.Time `bson:"time"`
	Method      string    `bson:"method"` // "manual" or the gateway charge
	ChargeID    string    `bson:"charge_id,omitempty"`
	CreatedAt   time.Time `bson:"created_at"`
	// Kind is "" for a payment received, "refund" or "deposit_capture"; RefundOf is the
	// payment a refund gives back (docs/money.md).
	Kind     string `bson:"kind,omitempty"`
	RefundOf int64  `bson:"refund_of,omitempty"`
}

// RefundRec is a cancellation's refund (booking.Refund).
type RefundRec struct {
	Status       string          `bson:"status"`
	Policy       string          `bson:"policy"`
	Percent      string          `bson:"percent"`
	PolicyAmount string          `bson:"policy_amount"`
	NetPaid      string          `bson:"net_paid"`
	Amount       string          `bson:"amount"`
	Override     bool            `bson:"override,omitempty"`
	Reason       string          `bson:"reason,omitempty"`
	DecidedAt    time.Time       `bson:"decided_at"`
	Parts        []RefundPartRec `bson:"parts"`
}

// RefundPartRec is the refund of one payment (booking.RefundPart).
type RefundPartRec struct {
	Of            int64      `bson:"of"`
	PaymentID     int64      `bson:"payment_id"`
	Amount        string     `bson:"amount"`
	Method        string     `bson:"method"`
	Key           string     `bson:"key"`
	Status        string     `bson:"status"`
	Attempts      int        `bson:"attempts"`
	LastError     string     `bson:"last_error,omitempty"`
	NextAttemptAt time.Time  `bson:"next_attempt_at"`
	RefundID      string     `bson:"refund_id,omitempty"`
	DoneAt        *time.Time `bson:"done_at,omitempty"`
}

// DepositRec is a booking's damage-deposit hold (booking.DepositHold).
type DepositRec struct {
	Status           string     `bson:"status"`
	Amount           string     `bson:"amount"`
	Currency         string     `bson:"currency"`
	DueDate          string     `bson:"due_date"`
	Step             int        `bson:"step"`
	Pending          string     `bson:"pending,omitempty"`
	PendingAt        time.Time  `bson:"pending_at,omitempty"`
	AuthorizationID  string     `bson:"authorization_id,omitempty"`
	HeldAt           *time.Time `bson:"held_at,omitempty"`
	Reauthorizations int        `bson:"reauthorizations,omitempty"`
	ReleaseOn        string     `bson:"release_on,omitempty"`
	ReleasedAt       *time.Time `bson:"released_at,omitempty"`
	CapturedAmount   string     `bson:"captured_amount,omitempty"`
	CaptureReason    string     `bson:"capture_reason,omitempty"`
	CapturedAt       *time.Time `bson:"captured_at,omitempty"`
	LastError        string     `bson:"last_error,omitempty"`
}

// CardRec is a stored card: Sealed holds the encrypted card (never the CVC).
type CardRec struct {
	Sealed string `bson:"sealed"`
	Masked string `bson:"masked"`
	Brand  string `bson:"brand"`
	Expiry string `bson:"expiry"`
}

// ArrivalRec is the arrival form (B5).
type ArrivalRec struct {
	ArriveBy        string         `bson:"arrive_by,omitempty"`
	TransportNumber string         `bson:"transport_number,omitempty"`
	ExpectedTime    string         `bson:"expected_time,omitempty"`
	URL             string         `bson:"url,omitempty"`
	IsCompleted     bool           `bson:"is_completed"`
	Guests          []ArrivalGuest `bson:"guests"`
}

// ArrivalGuest is one guest of the arrival form.
type ArrivalGuest struct {
	Name          string `bson:"name,omitempty"`
	Surname       string `bson:"surname,omitempty"`
	DateOfBirth   string `bson:"date_of_birth,omitempty"`
	Nationality   string `bson:"nationality,omitempty"`
	Email         string `bson:"email,omitempty"`
	PhoneNumber   string `bson:"phone_number,omitempty"`
	FrontDocument string `bson:"front_document,omitempty"`
	BackDocument  string `bson:"back_document,omitempty"`
	Address       string `bson:"address,omitempty"`
	Allergies     string `bson:"allergies,omitempty"`
}

// BlockRec is a block of dates on a property (`_id` "<account>:<blockId>").
type BlockRec struct {
	ID         string `bson:"_id"`
	AccountID  string `bson:"account_id"`
	BlockID    int64  `bson:"block_id"`
	PropertyID int64  `bson:"property_id"`
	StartDate  string `bson:"start_date"`
	EndDate    string `bson:"end_date"` // inclusive: the last blocked night
	Memo       string `bson:"memo"`
	// FeedID and UID: a block imported from an iCal feed (integration-svc) and the feed
	// event's uid; 0 and "" for an owner's block.
	FeedID    int64     `bson:"feed_id,omitempty"`
	UID       string    `bson:"uid,omitempty"`
	Deleted   bool      `bson:"deleted"`
	Version   int64     `bson:"version"`
	CreatedAt time.Time `bson:"created_at"`
	// UpdatedAt is the time of the latest change after the creation (a move, the deletion);
	// zero for version 1. It is the time of the change's event.
	UpdatedAt time.Time `bson:"updated_at,omitempty"`
}

// UserRec is a guest user (B4), `_id` "<account>:<userId>".
type UserRec struct {
	ID           string    `bson:"_id"`
	AccountID    string    `bson:"account_id"`
	UserID       int64     `bson:"user_id"`
	Email        string    `bson:"email"`
	Name         string    `bson:"name"`
	Company      string    `bson:"company,omitempty"`
	Address      string    `bson:"address,omitempty"`
	Country      string    `bson:"country"`
	Phone1       string    `bson:"phone1,omitempty"`
	Phone2       string    `bson:"phone2,omitempty"`
	PasswordHash string    `bson:"password_hash,omitempty"`
	Social       bool      `bson:"social"`
	CreatedAt    time.Time `bson:"created_at"`
	UpdatedAt    time.Time `bson:"updated_at"`
}

// ChargeFailureRec is an automatic charge the card refused (booking.ChargeFailure).
type ChargeFailureRec struct {
	ID       string    `bson:"id"`
	Amount   string    `bson:"amount"`
	Currency string    `bson:"currency"`
	At       time.Time `bson:"at"`
	Reason   string    `bson:"reason"`
}
