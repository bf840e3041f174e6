package money

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/testkit/eventually"
)

// ledgerBalances asserts that acc's ledger (docs/money.md, "The ledger") balances, as
// interface A's account-ledger answers it through edge: every entry's postings sum to zero,
// and so do the balances of its ledger accounts.
func ledgerBalances(t *testing.T, acc account) {
	t.Helper()
	for _, e := range journal(t, acc) {
		sum := decimal.Zero
		for _, p := range e.Postings {
			sum = sum.Add(decimal.RequireFromString(p.Amount))
		}
		if !sum.IsZero() {
			t.Fatalf("entry %s of %s does not balance: its postings sum to %s: %+v", e.ID, e.Date, sum, e.Postings)
		}
	}
	var out struct {
		Balances []struct {
			Account string `json:"account"`
			OwnerID int64  `json:"owner_id"`
			Amount  string `json:"amount"`
		} `json:"balances"`
	}
	acc.a(t, "account-ledger", obj{"action": "balances", "ledger": obj{"as_of": day(ledgerDays), "currency": "USD"}}).ok(t).data(t, &out)
	sum := decimal.Zero
	for _, b := range out.Balances {
		sum = sum.Add(decimal.RequireFromString(b.Amount))
	}
	if len(out.Balances) == 0 || !sum.IsZero() {
		t.Fatalf("the ledger's balances %+v sum to %s, want 0", out.Balances, sum)
	}
}

// ledgerDays bounds the dates of the tests' entries: day(-1) to day(ledgerDays) (a period of
// at most 366 days).
const ledgerDays = 360

// entry is a journal entry as account-ledger answers it.
type entry struct {
	ID       string    `json:"entry_id"`
	Date     string    `json:"date"`
	Currency string    `json:"currency"`
	Source   string    `json:"source"`
	Postings []posting `json:"postings"`
}

type posting struct {
	Account   string `json:"account"`
	Amount    string `json:"amount"`
	OwnerID   int64  `json:"owner_id"`
	BookingID int64  `json:"booking_id"`
	Line      string `json:"line"`
}

// journal is acc's journal entries in USD, through edge.
func journal(t *testing.T, acc account) []entry {
	t.Helper()
	var out struct {
		Entries []entry `json:"entries"`
	}
	acc.a(t, "account-ledger", obj{"action": "entries", "ledger": obj{"from": day(-1), "to": day(ledgerDays), "currency": "USD"}}).
		ok(t).data(t, &out)
	return out.Entries
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
		t.Fatalf("cash %s after the booking was refunded in full, want 0: %+v", c, journal(t, acc))
	}
}
