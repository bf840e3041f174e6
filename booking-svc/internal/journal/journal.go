// Package journal is an account's double-entry ledger of money (docs/money.md, "The
// ledger"): entries of signed postings that sum to zero, never changed once written, each
// made by a source (a booking, an expense, a payout, a monthly fee) whose postings are a
// function of the source as it is now. Sync posts the difference between what a source
// should have posted and what it has, so running it again, after a crash or for a replayed
// event, posts nothing twice.
package journal

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Ledger accounts (docs/money.md).
const (
	Cash              = "cash"
	GuestFunds        = "guest_funds"
	Owner             = "owner"
	RentalIncome      = "rental_income"
	TaxPayable        = "tax_payable"
	ManagementIncome  = "management_income"
	ManagementExpense = "management_expense"
)

// Lines say what a posting is for; statements group by them.
const (
	LineRent              = "rent"
	LineDiscount          = "discount"
	LineService           = "service"
	LineTax               = "tax"
	LineCommission        = "commission"
	LineChannelCommission = "channel_commission"
	LineCancellationFee   = "cancellation_fee"
	LineDepositCapture    = "deposit_capture"
	LinePayment           = "payment"
	LineRefund            = "refund"
	LineExpense           = "expense"
	LineFee               = "fee"
	LinePayout            = "payout"
)

// Posting is one signed amount (debit +, credit −) on a ledger account, with what it
// concerns: the owner (Owner postings; 0 otherwise), property and booking (0: none).
type Posting struct {
	Date       string // YYYY-MM-DD: the day it belongs to
	Currency   string
	Account    string
	Amount     decimal.Decimal
	OwnerID    int64
	PropertyID int64
	BookingID  int64
	Line       string
	Label      string
}

// Entry is one balanced group of postings of one date and currency, made by one source.
type Entry struct {
	ID        string // "<account>:<source>:<seq>"
	AccountID string
	Source    string // "booking:12", "expense:3", "payout:4", "fee:<agreement>:<YYYY-MM>"
	Seq       int64
	Date      string
	Currency  string
	PostedAt  time.Time
	Postings  []Posting
}

// Resolver answers what a source should have posted now (nil: nothing, e.g. it was
// deleted). Sources of a kind ("booking", "expense", …) share a resolver.
type Resolver func(ctx context.Context, account, source string) ([]Posting, error)

// Query selects postings of one account: optionally of one ledger account, owner,
// property, booking and currency, dated From to To (both included; "": open).
type Query struct {
	LedgerAccount string
	OwnerID       int64
	PropertyID    int64
	BookingID     int64
	Currency      string
	From, To      string
}

// Store keeps the entries and the posted state of each source.
type Store interface {
	// Posted returns a source's entries, by Seq.
	Posted(ctx context.Context, account, source string) ([]Entry, error)
	// Insert writes e unless an entry of its ID exists; it answers the entry stored (e, or
	// the one another writer stored first).
	Insert(ctx context.Context, e Entry) (Entry, error)
	// Mark records that source may have to be synced; Unmark forgets it once synced; Marked
	// lists marks older than before.
	Mark(ctx context.Context, account, source string) error
	Unmark(ctx context.Context, account, source string) error
	Marked(ctx context.Context, before time.Time) ([][2]string, error)
	// Entries returns account's entries with a posting matching q, by date then ID.
	Entries(ctx context.Context, account string, q Query) ([]Entry, error)
}

// Agreement is the management agreement in force for a property on a date
// (docs/money.md, "Owners, agreements"): the owner its revenue is owed to and the
// commission the manager takes, CommissionPercent (0 to 100) of the Basis.
type Agreement struct {
	ID                int64
	OwnerID           int64
	CommissionPercent decimal.Decimal
	Basis             string   // BasisRent, BasisTotal or BasisComponents
	Components        []string // with BasisComponents: among ComponentRent, …
}

// Commission bases and components of an agreement.
const (
	BasisRent       = "rent"       // rent less discounts
	BasisTotal      = "total"      // the grand total
	BasisComponents = "components" // the sum of Components

	ComponentRent      = "rent"
	ComponentDiscounts = "discounts"
	ComponentServices  = "services"
	ComponentTaxes     = "taxes"
)

// Agreements answers the agreement in force for a property on a date (YYYY-MM-DD); nil:
// none, the property is the account's own (its revenue is rental_income, no commission).
type Agreements interface {
	AgreementOn(ctx context.Context, account string, propertyID int64, date string) (*Agreement, error)
}

// NoAgreements is the Agreements of an account without owners: every property its own.
type NoAgreements struct{}

// AgreementOn answers nil.
func (NoAgreements) AgreementOn(context.Context, string, int64, string) (*Agreement, error) {
	return nil, nil
}
