// Package ownerstore keeps the owners domain's records in MongoDB (database vros_booking).
// FerretDB pushes down only a lone `_id` equality (docs/booking.md, "Listing bookings"), so
// each account's owners, agreements, expenses and payouts live in a collection of its own,
// "owner_books.<accountId>", read by `_id` or whole; receipts, which are large, are kept in
// "owner_receipts" by `_id` ("<account>:<expense>"). Every document carries account_id.
package ownerstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/owners"
	"github.com/vros/vros/libs/mongostore"
)

const (
	booksPrefix = "owner_books."
	// collWrites is never written itself: its lease collection serializes an account's
	// writes (mongostore.WithLease).
	collWrites   = "owner_writes"
	collReceipts = "owner_receipts"
	collAccounts = "owner_accounts"
	collCounters = "counters"
)

// Store is the owners domain's store.
type Store struct {
	db                         *mongo.Database
	writes, receipts, accounts *mongo.Collection
	ownerIDs, agreementIDs     *mongostore.Sequence
	expenseIDs, payoutIDs      *mongostore.Sequence
}

var _ owners.Store = (*Store)(nil)

// New prepares db and returns the store.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	mongostore.PerKeyCollections(booksPrefix)
	if err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(collWrites), collReceipts, collAccounts, collCounters), nil); err != nil {
		return nil, fmt.Errorf("owner collections: %w", err)
	}
	c := db.Collection(collCounters)
	return &Store{db: db, writes: db.Collection(collWrites), receipts: db.Collection(collReceipts), accounts: db.Collection(collAccounts),
		ownerIDs: mongostore.NewSequence(c, owners.KindOwner, 10), agreementIDs: mongostore.NewSequence(c, owners.KindAgreement, 10),
		expenseIDs: mongostore.NewSequence(c, owners.KindExpense, 10), payoutIDs: mongostore.NewSequence(c, owners.KindPayout, 10)}, nil
}

// NextID allocates an id of kind.
func (s *Store) NextID(ctx context.Context, kind string) (int64, error) {
	switch kind {
	case owners.KindOwner:
		return s.ownerIDs.Next(ctx)
	case owners.KindAgreement:
		return s.agreementIDs.Next(ctx)
	case owners.KindExpense:
		return s.expenseIDs.Next(ctx)
	case owners.KindPayout:
		return s.payoutIDs.Next(ctx)
	}
	return 0, fmt.Errorf("no ids of %q", kind)
}

// Locked runs fn holding the account's write lease.
func (s *Store) Locked(ctx context.Context, account string, fn func() error) error {
	return mongostore.WithLease(ctx, s.writes, account, fn)
}

// books is the account's own collection.
func (s *Store) books(account string) *mongo.Collection {
	return s.db.Collection(booksPrefix + collectionSafe(account))
}

// collectionSafe keeps an account id usable in a collection name (as the booking lists).
func collectionSafe(account string) string {
	for _, r := range account {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return fmt.Sprintf("x%x", account)
		}
	}
	return account
}

func key(kind string, id int64) string { return kind + ":" + strconv.FormatInt(id, 10) }

func (s *Store) put(ctx context.Context, account, kind string, id int64, doc any) error {
	_, err := s.books(account).ReplaceOne(ctx, bson.D{{Key: "_id", Value: key(kind, id)}}, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("write %s %d: %w", kind, id, err)
	}
	return nil
}

func (s *Store) get(ctx context.Context, account, kind string, id int64, into any) error {
	err := s.books(account).FindOne(ctx, bson.D{{Key: "_id", Value: key(kind, id)}}).Decode(into)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return owners.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("read %s %d: %w", kind, id, err)
	}
	return nil
}

func (s *Store) del(ctx context.Context, account, kind string, id int64) error {
	res, err := s.books(account).DeleteOne(ctx, bson.D{{Key: "_id", Value: key(kind, id)}})
	if err != nil {
		return fmt.Errorf("delete %s %d: %w", kind, id, err)
	}
	if res.DeletedCount == 0 {
		return owners.ErrNotFound
	}
	return nil
}

// all reads every record of kind of the account (its own small collection), by id.
func all[R any](ctx context.Context, s *Store, account, kind, idField string) ([]R, error) {
	cur, err := s.books(account).Find(ctx, bson.D{{Key: "kind", Value: kind}}, options.Find().SetSort(bson.D{{Key: idField, Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read %ss: %w", kind, err)
	}
	var out []R
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read %ss: %w", kind, err)
	}
	return out, nil
}

// Records as kept.

type ownerRec struct {
	ID        string        `bson:"_id"`
	Kind      string        `bson:"kind"`
	AccountID string        `bson:"account_id"`
	OwnerID   int64         `bson:"owner_id"`
	Name      string        `bson:"name"`
	OKind     string        `bson:"owner_kind"`
	Email     string        `bson:"email,omitempty"`
	Phone     string        `bson:"phone,omitempty"`
	Address   string        `bson:"address,omitempty"`
	TaxID     string        `bson:"tax_id,omitempty"`
	Language  string        `bson:"language,omitempty"`
	Payout    *payoutRec    `bson:"payout,omitempty"`
	CreatedAt bson.DateTime `bson:"created_at"`
	UpdatedAt bson.DateTime `bson:"updated_at"`
}

type payoutRec struct {
	Sealed  string `bson:"sealed"`
	Summary string `bson:"summary"`
}

type feeRec struct {
	Name   string `bson:"name"`
	Amount string `bson:"amount"`
}

type agreementRec struct {
	ID                   string        `bson:"_id"`
	Kind                 string        `bson:"kind"`
	AccountID            string        `bson:"account_id"`
	AgreementID          int64         `bson:"agreement_id"`
	PropertyID           int64         `bson:"property_id"`
	InternalCode         string        `bson:"internal_code"`
	OwnerID              int64         `bson:"owner_id"`
	StartDate            string        `bson:"start_date"`
	EndDate              string        `bson:"end_date,omitempty"`
	CommissionPercent    string        `bson:"commission_percent"`
	CommissionBasis      string        `bson:"commission_basis"`
	CommissionComponents []string      `bson:"commission_components,omitempty"`
	MonthlyFees          []feeRec      `bson:"monthly_fees,omitempty"`
	Currency             string        `bson:"currency"`
	CreatedAt            bson.DateTime `bson:"created_at"`
	UpdatedAt            bson.DateTime `bson:"updated_at"`
}

type receiptInfoRec struct {
	ContentType string `bson:"content_type"`
	Size        int64  `bson:"size"`
}

type expenseRec struct {
	ID           string          `bson:"_id"`
	Kind         string          `bson:"kind"`
	AccountID    string          `bson:"account_id"`
	ExpenseID    int64           `bson:"expense_id"`
	PropertyID   int64           `bson:"property_id"`
	InternalCode string          `bson:"internal_code"`
	OwnerID      int64           `bson:"owner_id,omitempty"`
	Date         string          `bson:"date"`
	Amount       string          `bson:"amount"`
	Currency     string          `bson:"currency"`
	Category     string          `bson:"category"`
	Description  string          `bson:"description,omitempty"`
	BorneBy      string          `bson:"borne_by"`
	Receipt      *receiptInfoRec `bson:"receipt,omitempty"`
	CreatedAt    bson.DateTime   `bson:"created_at"`
	UpdatedAt    bson.DateTime   `bson:"updated_at"`
}

type payoutDocRec struct {
	ID        string        `bson:"_id"`
	Kind      string        `bson:"kind"`
	AccountID string        `bson:"account_id"`
	PayoutID  int64         `bson:"payout_id"`
	OwnerID   int64         `bson:"owner_id"`
	Date      string        `bson:"date"`
	Amount    string        `bson:"amount"`
	Currency  string        `bson:"currency"`
	Method    string        `bson:"method,omitempty"`
	Reference string        `bson:"reference,omitempty"`
	CreatedAt bson.DateTime `bson:"created_at"`
}

type receiptRec struct {
	ID          string `bson:"_id"`
	AccountID   string `bson:"account_id"`
	ExpenseID   int64  `bson:"expense_id"`
	ContentType string `bson:"content_type"`
	Data        []byte `bson:"data"`
}

func dec(s string) decimal.Decimal {
	d, _ := decimal.NewFromString(s)
	return d
}

// Owners.

func (s *Store) PutOwner(ctx context.Context, o owners.Owner) error {
	r := ownerRec{ID: key(owners.KindOwner, o.OwnerID), Kind: owners.KindOwner, AccountID: o.AccountID, OwnerID: o.OwnerID, Name: o.Name,
		OKind: o.Kind, Email: o.Email, Phone: o.Phone, Address: o.Address, TaxID: o.TaxID, Language: o.Language,
		CreatedAt: bson.NewDateTimeFromTime(o.CreatedAt), UpdatedAt: bson.NewDateTimeFromTime(o.UpdatedAt)}
	if o.Payout != nil {
		r.Payout = &payoutRec{Sealed: o.Payout.Sealed, Summary: o.Payout.Summary}
	}
	return s.put(ctx, o.AccountID, owners.KindOwner, o.OwnerID, r)
}

func ownerOf(r ownerRec) owners.Owner {
	o := owners.Owner{AccountID: r.AccountID, OwnerID: r.OwnerID, Name: r.Name, Kind: r.OKind, Email: r.Email, Phone: r.Phone,
		Address: r.Address, TaxID: r.TaxID, Language: r.Language, CreatedAt: r.CreatedAt.Time().UTC(), UpdatedAt: r.UpdatedAt.Time().UTC()}
	if r.Payout != nil {
		o.Payout = &owners.SealedPayout{Sealed: r.Payout.Sealed, Summary: r.Payout.Summary}
	}
	return o
}

func (s *Store) Owner(ctx context.Context, account string, id int64) (owners.Owner, error) {
	var r ownerRec
	if err := s.get(ctx, account, owners.KindOwner, id, &r); err != nil {
		return owners.Owner{}, err
	}
	return ownerOf(r), nil
}

func (s *Store) Owners(ctx context.Context, account string) ([]owners.Owner, error) {
	recs, err := all[ownerRec](ctx, s, account, owners.KindOwner, "owner_id")
	out := make([]owners.Owner, len(recs))
	for i, r := range recs {
		out[i] = ownerOf(r)
	}
	return out, err
}

func (s *Store) DeleteOwner(ctx context.Context, account string, id int64) error {
	return s.del(ctx, account, owners.KindOwner, id)
}

// Agreements.

func (s *Store) PutAgreement(ctx context.Context, a owners.Agreement) error {
	// The fee pass finds the accounts that have agreements here (one document per account).
	if _, err := s.accounts.UpdateOne(ctx, bson.D{{Key: "_id", Value: a.AccountID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "account_id", Value: a.AccountID}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
		return fmt.Errorf("record the account's agreements: %w", err)
	}
	r := agreementRec{ID: key(owners.KindAgreement, a.AgreementID), Kind: owners.KindAgreement, AccountID: a.AccountID, AgreementID: a.AgreementID,
		PropertyID: a.PropertyID, InternalCode: a.InternalCode, OwnerID: a.OwnerID, StartDate: a.StartDate, EndDate: a.EndDate,
		CommissionPercent: a.CommissionPercent.String(), CommissionBasis: a.CommissionBasis, CommissionComponents: a.CommissionComponents,
		Currency: a.Currency, CreatedAt: bson.NewDateTimeFromTime(a.CreatedAt), UpdatedAt: bson.NewDateTimeFromTime(a.UpdatedAt)}
	for _, f := range a.MonthlyFees {
		r.MonthlyFees = append(r.MonthlyFees, feeRec{Name: f.Name, Amount: f.Amount.String()})
	}
	return s.put(ctx, a.AccountID, owners.KindAgreement, a.AgreementID, r)
}

func agreementOf(r agreementRec) owners.Agreement {
	a := owners.Agreement{AccountID: r.AccountID, AgreementID: r.AgreementID, PropertyID: r.PropertyID, InternalCode: r.InternalCode,
		OwnerID: r.OwnerID, StartDate: r.StartDate, EndDate: r.EndDate, CommissionPercent: dec(r.CommissionPercent),
		CommissionBasis: r.CommissionBasis, CommissionComponents: r.CommissionComponents, Currency: r.Currency,
		CreatedAt: r.CreatedAt.Time().UTC(), UpdatedAt: r.UpdatedAt.Time().UTC()}
	for _, f := range r.MonthlyFees {
		a.MonthlyFees = append(a.MonthlyFees, owners.Fee{Name: f.Name, Amount: dec(f.Amount)})
	}
	return a
}

func (s *Store) Agreement(ctx context.Context, account string, id int64) (owners.Agreement, error) {
	var r agreementRec
	if err := s.get(ctx, account, owners.KindAgreement, id, &r); err != nil {
		return owners.Agreement{}, err
	}
	return agreementOf(r), nil
}

func (s *Store) Agreements(ctx context.Context, account string) ([]owners.Agreement, error) {
	recs, err := all[agreementRec](ctx, s, account, owners.KindAgreement, "agreement_id")
	out := make([]owners.Agreement, len(recs))
	for i, r := range recs {
		out[i] = agreementOf(r)
	}
	return out, err
}

func (s *Store) DeleteAgreement(ctx context.Context, account string, id int64) error {
	return s.del(ctx, account, owners.KindAgreement, id)
}

// AgreementAccounts lists the accounts that have had an agreement (a small collection of
// account ids, read whole).
func (s *Store) AgreementAccounts(ctx context.Context) ([]string, error) {
	cur, err := s.accounts.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read accounts with agreements: %w", err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read accounts with agreements: %w", err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out, nil
}

// Expenses and receipts.

func (s *Store) PutExpense(ctx context.Context, e owners.Expense) error {
	r := expenseRec{ID: key(owners.KindExpense, e.ExpenseID), Kind: owners.KindExpense, AccountID: e.AccountID, ExpenseID: e.ExpenseID,
		PropertyID: e.PropertyID, InternalCode: e.InternalCode, OwnerID: e.OwnerID, Date: e.Date, Amount: e.Amount.String(),
		Currency: e.Currency, Category: e.Category, Description: e.Description, BorneBy: e.BorneBy,
		CreatedAt: bson.NewDateTimeFromTime(e.CreatedAt), UpdatedAt: bson.NewDateTimeFromTime(e.UpdatedAt)}
	if e.Receipt != nil {
		r.Receipt = &receiptInfoRec{ContentType: e.Receipt.ContentType, Size: e.Receipt.Size}
	}
	return s.put(ctx, e.AccountID, owners.KindExpense, e.ExpenseID, r)
}

func expenseOf(r expenseRec) owners.Expense {
	e := owners.Expense{AccountID: r.AccountID, ExpenseID: r.ExpenseID, PropertyID: r.PropertyID, InternalCode: r.InternalCode,
		OwnerID: r.OwnerID, Date: r.Date, Amount: dec(r.Amount), Currency: r.Currency, Category: r.Category, Description: r.Description,
		BorneBy: r.BorneBy, CreatedAt: r.CreatedAt.Time().UTC(), UpdatedAt: r.UpdatedAt.Time().UTC()}
	if r.Receipt != nil {
		e.Receipt = &owners.ReceiptInfo{ContentType: r.Receipt.ContentType, Size: r.Receipt.Size}
	}
	return e
}

func (s *Store) Expense(ctx context.Context, account string, id int64) (owners.Expense, error) {
	var r expenseRec
	if err := s.get(ctx, account, owners.KindExpense, id, &r); err != nil {
		return owners.Expense{}, err
	}
	return expenseOf(r), nil
}

func (s *Store) Expenses(ctx context.Context, account string) ([]owners.Expense, error) {
	recs, err := all[expenseRec](ctx, s, account, owners.KindExpense, "expense_id")
	out := make([]owners.Expense, len(recs))
	for i, r := range recs {
		out[i] = expenseOf(r)
	}
	return out, err
}

func (s *Store) DeleteExpense(ctx context.Context, account string, id int64) error {
	return s.del(ctx, account, owners.KindExpense, id)
}

func receiptID(account string, expense int64) string {
	return account + ":" + strconv.FormatInt(expense, 10)
}

func (s *Store) PutReceipt(ctx context.Context, account string, expense int64, r owners.Receipt) error {
	id := receiptID(account, expense)
	_, err := s.receipts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}},
		receiptRec{ID: id, AccountID: account, ExpenseID: expense, ContentType: r.ContentType, Data: r.Data}, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("write receipt of expense %d: %w", expense, err)
	}
	return nil
}

func (s *Store) Receipt(ctx context.Context, account string, expense int64) (owners.Receipt, error) {
	var r receiptRec
	err := s.receipts.FindOne(ctx, bson.D{{Key: "_id", Value: receiptID(account, expense)}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return owners.Receipt{}, owners.ErrNotFound
	}
	if err != nil {
		return owners.Receipt{}, fmt.Errorf("read receipt of expense %d: %w", expense, err)
	}
	return owners.Receipt{ContentType: r.ContentType, Data: r.Data}, nil
}

func (s *Store) DeleteReceipt(ctx context.Context, account string, expense int64) error {
	if _, err := s.receipts.DeleteOne(ctx, bson.D{{Key: "_id", Value: receiptID(account, expense)}}); err != nil {
		return fmt.Errorf("delete receipt of expense %d: %w", expense, err)
	}
	return nil
}

// Payouts.

func (s *Store) PutPayout(ctx context.Context, p owners.Payout) error {
	r := payoutDocRec{ID: key(owners.KindPayout, p.PayoutID), Kind: owners.KindPayout, AccountID: p.AccountID, PayoutID: p.PayoutID,
		OwnerID: p.OwnerID, Date: p.Date, Amount: p.Amount.String(), Currency: p.Currency, Method: p.Method, Reference: p.Reference,
		CreatedAt: bson.NewDateTimeFromTime(p.CreatedAt)}
	return s.put(ctx, p.AccountID, owners.KindPayout, p.PayoutID, r)
}

func payoutOf(r payoutDocRec) owners.Payout {
	return owners.Payout{AccountID: r.AccountID, PayoutID: r.PayoutID, OwnerID: r.OwnerID, Date: r.Date, Amount: dec(r.Amount),
		Currency: r.Currency, Method: r.Method, Reference: r.Reference, CreatedAt: r.CreatedAt.Time().UTC()}
}

func (s *Store) Payout(ctx context.Context, account string, id int64) (owners.Payout, error) {
	var r payoutDocRec
	if err := s.get(ctx, account, owners.KindPayout, id, &r); err != nil {
		return owners.Payout{}, err
	}
	return payoutOf(r), nil
}

func (s *Store) Payouts(ctx context.Context, account string) ([]owners.Payout, error) {
	recs, err := all[payoutDocRec](ctx, s, account, owners.KindPayout, "payout_id")
	out := make([]owners.Payout, len(recs))
	for i, r := range recs {
		out[i] = payoutOf(r)
	}
	return out, err
}

func (s *Store) DeletePayout(ctx context.Context, account string, id int64) error {
	return s.del(ctx, account, owners.KindPayout, id)
}

// EraseAccount deletes the account's records: its receipts (by account_id, as the booking
// store erases an account: a rare operator action, which may scan), its own collection, and
// its name among the accounts with agreements. Running it again finishes what a stopped run
// left.
func (s *Store) EraseAccount(ctx context.Context, account string) error {
	if _, err := s.receipts.DeleteMany(ctx, bson.D{{Key: "account_id", Value: account}}); err != nil {
		return fmt.Errorf("erase the account's receipts: %w", err)
	}
	if err := s.books(account).Drop(ctx); err != nil {
		return fmt.Errorf("erase the account's owner records: %w", err)
	}
	if _, err := s.accounts.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}}); err != nil {
		return fmt.Errorf("erase the account's owner records: %w", err)
	}
	return nil
}
