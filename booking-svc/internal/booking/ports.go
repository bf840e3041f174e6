package booking

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// What the domain needs of the world, declared here and satisfied by the adapters that
// service.Run injects: internal/store (Repository, Blocks, UserRepository), the ledger on
// its MongoDB store (Ledger), the property view (PropertyView) and a card gateway (Gateway).

// Repository keeps bookings and the index of their payments. Reads of a missing document
// answer ErrNotFound.
type Repository interface {
	// Now is the repository's clock (UTC, to the precision it stores).
	Now() time.Time
	NextBookingID(ctx context.Context) (int64, error)
	// InsertPending stores a booking whose nights are not yet claimed; it is not published.
	InsertPending(ctx context.Context, b Booking) error
	// InsertReserved stores a new booking, reserved, whose nights its publish op holds, and
	// lists it; its event is handed to the relay, which releases key with rel once it is
	// published (ledger.Ledger.Handoff).
	InsertReserved(ctx context.Context, b Booking, rel ledger.Releaser, key string) (Booking, error)
	// Booking returns a booking of account in any status.
	Booking(ctx context.Context, account string, id int64) (Booking, error)
	// Update reads booking id, lets apply change it, and writes what apply changed (and
	// nothing else, so that concurrent changes of other fields all land), with a new version;
	// the change is published. An error of apply leaves the booking as it was.
	Update(ctx context.Context, account string, id int64, change Change, apply func(*Booking) error) (Booking, error)
	// MarkFailed ends an attempt that never became a booking: failed, without its card,
	// unpublished; PurgeFailed deletes those marked before a time and reports how many.
	MarkFailed(ctx context.Context, account string, id int64) error
	PurgeFailed(ctx context.Context, before time.Time) (int, error)
	// Relist rewrites the list entry of b, whose writer may have stopped before writing it.
	Relist(ctx context.Context, b Booking) error
	// Republish records an outbox intent for booking id: its current state is published.
	Republish(ctx context.Context, account string, id int64) error
	// List returns the account's bookings that match f, newest first, and how many match.
	List(ctx context.Context, account string, f ListFilter) ([]Booking, int64, error)
	// Autopay lists the reserved bookings with automatic payments.
	Autopay(ctx context.Context) ([]Booking, error)

	NextPaymentID(ctx context.Context) (int64, error)
	// IndexPayment records which booking a payment belongs to; PaymentBooking reads it.
	IndexPayment(ctx context.Context, account string, paymentID, bookingID int64) error
	UnindexPayment(ctx context.Context, account string, paymentID int64) error
	PaymentBooking(ctx context.Context, account string, paymentID int64) (int64, error)
}

// Blocks keeps blocks of dates. Reads of a missing or deleted block answer ErrNotFound.
// Its feed methods (FeedBlocks, the feed lease, the feed tombstone) serve package feedsync,
// which syncs the blocks imported from iCal feeds over this port.
type Blocks interface {
	NextBlockID(ctx context.Context) (int64, error)
	// InsertBlock stores (and publishes) a block whose nights are already claimed.
	InsertBlock(ctx context.Context, b Block) (Block, error)
	Block(ctx context.Context, account string, id int64) (Block, error)
	// DeleteBlock marks a block deleted and publishes it; the caller then frees its nights.
	DeleteBlock(ctx context.Context, account string, id int64) (Block, error)
	// FeedBlocks returns the live blocks of property pid (0: of every property) imported
	// from feed.
	FeedBlocks(ctx context.Context, account string, pid, feed int64) ([]Block, error)
	// MoveBlock gives a live block new dates (published as an update).
	MoveBlock(ctx context.Context, account string, id int64, start, end string) (Block, error)
	// TakeFeedLease makes holder the only sync of feed until until (a lease whose holder's
	// time is up is taken over) and answers the blocks earlier holders left unfinished;
	// ErrBusy while another sync holds it. NoteFeedBlock records blocks holder's sync is
	// about to touch; EndFeedLease gives the lease up (done: the sync finished all it began).
	TakeFeedLease(ctx context.Context, account string, feed int64, holder string, until time.Time) ([]int64, error)
	NoteFeedBlock(ctx context.Context, account string, feed int64, holder string, ids ...int64) error
	EndFeedLease(ctx context.Context, account string, feed int64, holder string, done bool) error
	// BuryFeed records a permanent tombstone for account's feed (idempotent); FeedGone tells
	// whether it has one.
	BuryFeed(ctx context.Context, account string, feed int64) error
	FeedGone(ctx context.Context, account string, feed int64) (bool, error)
}

// UserRepository keeps guest users; an email is unique per account, in any case.
type UserRepository interface {
	// AddUser stores a new user and returns it with its id; ErrEmailTaken if the email is.
	AddUser(ctx context.Context, account string, u guest.User, social bool) (guest.User, error)
	// User and UserByEmail answer ErrNotFound for a user account does not have.
	User(ctx context.Context, account string, id int64) (guest.User, error)
	UserByEmail(ctx context.Context, account, email string) (guest.User, error)
	// UpdateUser writes u over the stored user u.UserID; ErrEmailTaken if its new email is.
	UpdateUser(ctx context.Context, account string, u guest.User) (guest.User, error)
}

// AccountRecords is what the repository keeps of one account as a whole: its records for
// the export, its usage figures, and the rewrites a guest's erasure needs.
type AccountRecords interface {
	// AccountBookings returns every booking document of account, in any status, by id.
	AccountBookings(ctx context.Context, account string) ([]Booking, error)
	// AccountBlocks returns every block of account, deleted ones too, by id.
	AccountBlocks(ctx context.Context, account string) ([]Block, error)
	// AccountUsers returns every guest user of account, by id.
	AccountUsers(ctx context.Context, account string) ([]guest.User, error)
	// Usage counts account's bookings and blocks over [from, to).
	Usage(ctx context.Context, account string, from, to time.Time) (Usage, error)
	// Anonymise rewrites booking id with apply: a booking as an update (a new version,
	// published), an attempt that never became one in place, unpublished.
	Anonymise(ctx context.Context, account string, id int64, apply func(*Booking) error) error
	// EraseUser replaces user id's personal data with anon's and gives up its claim of
	// email, the address it was found by.
	EraseUser(ctx context.Context, account string, id int64, email string, anon guest.User) error
}

// Ledger holds nights so that none is ever sold twice (package ledger tells the protocol).
type Ledger interface {
	Begin(ctx context.Context, op ledger.Op) error
	Claim(ctx context.Context, s ledger.Stay, owner string) error
	Release(ctx context.Context, s ledger.Stay, owner string) error
	// Transfer passes the nights of s that from holds straight to to; it returns those to
	// does not hold afterwards.
	Transfer(ctx context.Context, s ledger.Stay, from, to string) ([]string, error)
	End(ctx context.Context, account, owner string) error
	// EndPublish removes owner's publish op (ledger.Op.Publish); Handoff names it for the
	// relay, which removes it once the change is published.
	EndPublish(ctx context.Context, account, owner string) error
	Handoff(account, owner string) (ledger.Releaser, string)
	// OnPublish sets what a repair calls before it ends a publish op (ledger.Ledger.Published).
	OnPublish(f func(ctx context.Context, account, owner string) error)
	Repair(ctx context.Context, lease time.Duration, current ledger.Current) (int, error)
	RepairOwner(ctx context.Context, account, owner string, margin, lease time.Duration, current ledger.Current) (bool, error)
	// RepairStopped repairs owner's op at once: its writer is known to have stopped.
	RepairStopped(ctx context.Context, account, owner string, current ledger.Current) (bool, error)
	// Owner returns who holds a night ("" when free).
	Owner(ctx context.Context, account string, pid int64, date string) (string, error)
	// Owners returns who holds each held night of property pid from first to last (both
	// included), by date.
	Owners(ctx context.Context, account string, pid int64, first, last string) (map[string]string, error)
}

// Property is what the domain knows of a property: enough to price a stay.
type Property struct {
	PropertyID   int64
	InternalCode string
	Name         string
	Pricing      pricing.Property
}

// Settings is what the domain knows of an account's settings.
type Settings struct {
	LeadSources map[int]string
	Brands      map[int]Brand
	// DefaultLeadSource is the lead source of a booking created without one.
	DefaultLeadSource int
	// ExchangeRates are the currencies a quote or booking may ask for: code → units of it
	// per one unit of the account's currency (only valid, positive rates).
	ExchangeRates map[string]decimal.Decimal
	// Promotions are the account's promotion codes.
	Promotions []Promotion
	// Location is the account's time zone (UTC when unknown), the zone of its properties
	// that have none of their own.
	Location *time.Location
	// Languages are the account's language codes, the first its default.
	Languages []string
}

// Brand is what the domain knows of a brand (docs/brands.md).
type Brand struct {
	Name string
	// LeadSource is the lead source of a booking made through the brand without a
	// leadsourceId; 0: the account's default.
	LeadSource int
	// Properties are the brand's property ids; nil: the brand lists none and sells every
	// property of the account.
	Properties map[int64]bool
	// DefaultLanguage and DefaultCurrency are the brand's website defaults ("": the
	// account's).
	DefaultLanguage string
	DefaultCurrency string
}

// Sells tells whether the brand sells property pid.
func (b Brand) Sells(pid int64) bool { return b.Properties == nil || b.Properties[pid] }

// PropertyView is booking-svc's copy of property-svc's data. A property that does not
// exist (or was deleted) answers ErrNoProperty.
type PropertyView interface {
	Property(ctx context.Context, account string, pid int64) (Property, error)
	PropertyByCode(ctx context.Context, account, code string) (Property, error)
	Settings(ctx context.Context, account string) (Settings, error)
}

// Gateway charges cards (package cardpay tells its requests, answers and errors).
type Gateway interface {
	Charge(ctx context.Context, req cardpay.ChargeRequest) (cardpay.Charge, error)
}

// Intents are a live property's PaymentIntents (Stripe), which the guest's browser confirms
// with the card typed into the gateway's own field (the booking engine's live payments,
// docs/booking-engine.md). CreateIntent answers cardpay.ErrNoIntents for a property that has
// no such gateway; the same IdempotencyKey answers the same intent.
type Intents interface {
	CreateIntent(ctx context.Context, req cardpay.IntentRequest) (cardpay.Intent, error)
	Intent(ctx context.Context, accountID string, propertyID int64, id string) (cardpay.Intent, error)
	CancelIntent(ctx context.Context, accountID string, propertyID int64, id, idempotencyKey string) (cardpay.Intent, error)
}

// Checkouts keeps what finds the booking engine's checkouts (checkout.go): the id a guest
// holds names a booking of an account, and the checkouts still held are listed for their
// expiry. Both are read by `_id` or as a small collection of their own, never by a filter
// over the bookings (docs/booking.md, "Listing bookings").
type Checkouts interface {
	// PutCheckout records checkout id (of account, booking bookingID) as held until
	// expiresAt: its name and its hold; again for the same id is no error.
	PutCheckout(ctx context.Context, h Hold) error
	// CheckoutHold returns the record of checkout id (ErrNotFound for none), held or not.
	CheckoutHold(ctx context.Context, id string) (Hold, error)
	// Holds lists the checkouts still recorded as held whose window ended by before.
	Holds(ctx context.Context, before time.Time) ([]Hold, error)
	// DropHold forgets that checkout id is held (it ended); its name stays.
	DropHold(ctx context.Context, id string) error
	// Unpublished changes booking id, which was never published (pending or held), in
	// place: the fields apply changed, no new version, no event. An error of apply leaves it
	// as it was.
	Unpublished(ctx context.Context, account string, id int64, apply func(*Booking) error) (Booking, error)
	// EndCheckout ends held booking id that never became a booking, as MarkFailed does
	// (failed, unpublished, kept for the failed-attempt retention), with the checkout's
	// outcome (expired, cancelled).
	EndCheckout(ctx context.Context, account string, id int64, outcome string) error
}

// Hold is the record of a checkout: its id, whose booking it is and until when it holds.
type Hold struct {
	ID        string
	AccountID string
	BookingID int64
	ExpiresAt time.Time
}
