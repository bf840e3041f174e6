package money

import (
	"context"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/testkit/eventually"
)

// ledgerBalances asserts that acc's ledger (docs/money.md, "The ledger") balances: every
// entry's postings sum to zero, in each currency, and so does the whole journal.
func ledgerBalances(t *testing.T, acc account) {
	t.Helper()
	entries := journal(t, acc)
	total := map[string]decimal.Decimal{}
	for _, e := range entries {
		sum := decimal.Zero
		for _, p := range e.Postings {
			a, err := decimal.NewFromString(p.Amount)
			if err != nil {
				t.Fatalf("entry %s: amount %q: %v", e.ID, p.Amount, err)
			}
			sum = sum.Add(a)
		}
		if !sum.IsZero() {
			t.Fatalf("entry %s of %s does not balance: its postings sum to %s: %+v", e.ID, e.Date, sum, e.Postings)
		}
		total[e.Currency] = total[e.Currency].Add(sum)
	}
	for cur, s := range total {
		if !s.IsZero() {
			t.Fatalf("the ledger of %s does not balance in %s: %s", acc.AccountID, cur, s)
		}
	}
}

// entry is a journal entry as booking-svc stores it.
type entry struct {
	ID       string    `bson:"_id"`
	Date     string    `bson:"date"`
	Currency string    `bson:"currency"`
	Source   string    `bson:"source"`
	Postings []posting `bson:"postings"`
}

type posting struct {
	Account   string `bson:"account"`
	Amount    string `bson:"amount"`
	OwnerID   int64  `bson:"owner_id"`
	BookingID int64  `bson:"booking_id"`
	Line      string `bson:"line"`
}

// posted waits until acc's journal has a posting that ok accepts.
func posted(t *testing.T, acc account, what string, ok func(posting) bool) {
	t.Helper()
	eventually.Holds(t, "the ledger posts "+what, within, func() bool {
		for _, e := range journal(t, acc) {
			for _, p := range e.Postings {
				if ok(p) {
					return true
				}
			}
		}
		return false
	})
}

// journalOf is the collection of account's journal (booking-svc/internal/store/journal.go).
func journalOf(account string) string {
	for _, r := range account {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return fmt.Sprintf("journal.x%x", account)
		}
	}
	return "journal." + account
}

// journal reads acc's journal entries from booking-svc's store (the account's own
// collection).
func journal(t *testing.T, acc account) []entry {
	t.Helper()
	cur, err := mongoDB.Database("vros_booking").Collection(journalOf(acc.AccountID)).Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// balance is the sum of acc's postings on ledgerAccount.
func balance(t *testing.T, acc account, ledgerAccount string) decimal.Decimal {
	t.Helper()
	sum := decimal.Zero
	for _, e := range journal(t, acc) {
		for _, p := range e.Postings {
			if p.Account == ledgerAccount {
				sum = sum.Add(decimal.RequireFromString(p.Amount))
			}
		}
	}
	return sum
}

// refundPosted waits until the ledger has posted booking id's refund, then asserts that it
// balances and that the cash the booking brought in went back: cash 0.
func refundPosted(t *testing.T, acc account, id int64) {
	t.Helper()
	posted(t, acc, "the refund", func(p posting) bool { return p.BookingID == id && p.Line == "refund" })
	ledgerBalances(t, acc)
	if c := balance(t, acc, "cash"); !c.IsZero() {
		t.Fatalf("cash %s after the booking was refunded in full, want 0", c)
	}
}
