// Package owners keeps what a property manager records for the owners of the homes they run
// (docs/money.md, "Owners, agreements, expenses, payouts"): owners with their payout details
// sealed, the management agreement of each property, the expenses of a property and the
// payouts made to an owner. It answers the ledger what each expense, payout and monthly fee
// posts (ledger.go) and which agreement is in force on a date.
package owners

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// Owner kinds, agreement bases and components, expense categories, who bears an expense,
// payout methods (docs/money.md).
var (
	Kinds         = []string{"person", "company"}
	Bases         = []string{"rent", "total", "components"}
	Components    = []string{"rent", "discounts", "services", "taxes"}
	Categories    = []string{"cleaning", "maintenance", "repairs", "supplies", "utilities", "insurance", "taxes", "other"}
	BorneBy       = []string{"owner", "manager"}
	PayoutMethods = []string{"bank_transfer", "paypal", "other"}
	ReceiptTypes  = []string{"image/jpeg", "image/png", "application/pdf"}
)

// MaxReceipt is the largest receipt kept, in bytes (decoded).
const MaxReceipt = 5 << 20

// MaxFees is the most monthly fees an agreement has.
const MaxFees = 10

// Owner is a person or company who owns properties the account manages.
type Owner struct {
	AccountID string
	OwnerID   int64
	Name      string
	Kind      string
	Email     string
	Phone     string
	Address   string
	TaxID     string
	Language  string
	// Payout is the owner's payout details, sealed (nil: none).
	Payout    *SealedPayout
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SealedPayout is an owner's payout details as kept: sealed with the account's box, bound to
// the account and owner, and the summary answers show ("IBAN •••• 4432").
type SealedPayout struct {
	Sealed  string
	Summary string
}

// PayoutDetails are an owner's payout details in clear: written, never answered.
type PayoutDetails struct {
	Method        string `json:"method"`
	AccountHolder string `json:"account_holder,omitempty"`
	IBAN          string `json:"iban,omitempty"`
	BIC           string `json:"bic,omitempty"`
	AccountNumber string `json:"account_number,omitempty"`
	RoutingNumber string `json:"routing_number,omitempty"`
	Email         string `json:"email,omitempty"`
	Note          string `json:"note,omitempty"`
}

// Agreement is the management agreement of a property with its owner, from StartDate to
// EndDate (both included; "" open-ended).
type Agreement struct {
	AccountID            string
	AgreementID          int64
	PropertyID           int64
	InternalCode         string
	OwnerID              int64
	StartDate            string
	EndDate              string
	CommissionPercent    decimal.Decimal
	CommissionBasis      string
	CommissionComponents []string
	MonthlyFees          []Fee
	// Currency is the property's when the agreement was written: its fees' currency.
	Currency  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Fee is a fixed monthly fee of an agreement, charged to the owner on the 1st.
type Fee struct {
	Name   string
	Amount decimal.Decimal
}

// Covers reports whether the agreement is in force on date (YYYY-MM-DD).
func (a Agreement) Covers(date string) bool {
	return a.StartDate <= date && (a.EndDate == "" || date <= a.EndDate)
}

// overlaps reports whether a and b share a day.
func (a Agreement) overlaps(b Agreement) bool {
	return (b.EndDate == "" || a.StartDate <= b.EndDate) && (a.EndDate == "" || b.StartDate <= a.EndDate)
}

// Expense is money spent for a property, borne by its owner or by the manager.
type Expense struct {
	AccountID    string
	ExpenseID    int64
	PropertyID   int64
	InternalCode string
	// OwnerID is the owner of the agreement in force on Date when the expense was written (0:
	// none, the property was the account's own); an owner-borne expense is charged to them.
	OwnerID     int64
	Date        string
	Amount      decimal.Decimal
	Currency    string
	Category    string
	Description string
	BorneBy     string
	// Receipt describes the kept receipt (nil: none); its bytes are kept apart (Receipt).
	Receipt   *ReceiptInfo
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ReceiptInfo is what an expense says of its receipt.
type ReceiptInfo struct {
	ContentType string
	Size        int64
}

// Receipt is an expense's receipt: a photo or a PDF.
type Receipt struct {
	ContentType string
	Data        []byte
}

// Payout is money paid to an owner.
type Payout struct {
	AccountID string
	PayoutID  int64
	OwnerID   int64
	Date      string
	Amount    decimal.Decimal
	Currency  string
	Method    string
	Reference string
	CreatedAt time.Time
}

// Errors the service answers; the adapters map them to their statuses.
var (
	// ErrNotFound: the owner, agreement, expense, payout or receipt does not exist (for
	// this account). Wrapped in a NotFoundError that names it.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the change breaks a rule of the whole (an overlap, an owner still used).
	ErrConflict = errors.New("conflict")
)

// NotFoundError names what does not exist.
type NotFoundError struct{ What string }

func (e *NotFoundError) Error() string { return e.What + " does not exist" }
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

func notFound(format string, args ...any) error {
	return &NotFoundError{What: fmt.Sprintf(format, args...)}
}

// ConflictError says which rule of the whole a change breaks.
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }
func (e *ConflictError) Unwrap() error { return ErrConflict }

// FieldError is a field the domain refuses once it knows more than the decoder (an amount
// with more digits than the property's currency has).
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Kinds of records, for ids and for the store.
const (
	KindOwner     = "owner"
	KindAgreement = "owner_agreement"
	KindExpense   = "owner_expense"
	KindPayout    = "owner_payout"
)

// Store keeps the records of each account apart: read by id or from the account's own
// collection, never by a filter over other accounts' records.
type Store interface {
	// NextID allocates an id of kind.
	NextID(ctx context.Context, kind string) (int64, error)
	// Locked runs fn while no other writer of account's records runs (in any replica).
	Locked(ctx context.Context, account string, fn func() error) error

	PutOwner(ctx context.Context, o Owner) error
	Owner(ctx context.Context, account string, id int64) (Owner, error)
	Owners(ctx context.Context, account string) ([]Owner, error)
	DeleteOwner(ctx context.Context, account string, id int64) error

	PutAgreement(ctx context.Context, a Agreement) error
	Agreement(ctx context.Context, account string, id int64) (Agreement, error)
	Agreements(ctx context.Context, account string) ([]Agreement, error)
	DeleteAgreement(ctx context.Context, account string, id int64) error

	PutExpense(ctx context.Context, e Expense) error
	Expense(ctx context.Context, account string, id int64) (Expense, error)
	Expenses(ctx context.Context, account string) ([]Expense, error)
	DeleteExpense(ctx context.Context, account string, id int64) error
	PutReceipt(ctx context.Context, account string, expense int64, r Receipt) error
	Receipt(ctx context.Context, account string, expense int64) (Receipt, error)
	DeleteReceipt(ctx context.Context, account string, expense int64) error

	PutPayout(ctx context.Context, p Payout) error
	Payout(ctx context.Context, account string, id int64) (Payout, error)
	Payouts(ctx context.Context, account string) ([]Payout, error)
	DeletePayout(ctx context.Context, account string, id int64) error

	// AgreementAccounts lists the accounts that have (or had) an agreement: the monthly fee
	// pass visits them.
	AgreementAccounts(ctx context.Context) ([]string, error)
	// EraseAccount deletes every record of account.
	EraseAccount(ctx context.Context, account string) error
}

// Properties finds the account's live properties (booking-svc's property view).
type Properties interface {
	Property(ctx context.Context, account string, pid int64) (booking.Property, error)
	PropertyByCode(ctx context.Context, account, code string) (booking.Property, error)
}

// Toucher is the ledger's entry point (journal.Service): Mark records that a source is about
// to change, so that the ledger's repair syncs it even if the process stops right after the
// write; Touch syncs a source's postings with what its resolver answers now and forgets the
// mark.
type Toucher interface {
	Mark(ctx context.Context, account, source string) error
	Touch(ctx context.Context, account, source string) error
}

// Bookings lists an account's bookings (booking-svc's per-account booking list).
type Bookings interface {
	List(ctx context.Context, account string, f booking.ListFilter) ([]booking.Booking, int64, error)
}
