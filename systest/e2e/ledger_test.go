package e2e

import (
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
)

// ledgerEntries is /api/account-ledger's entries answer.
type ledgerEntries struct {
	Data struct {
		Entries []struct {
			EntryID  string `json:"entry_id"`
			Date     string `json:"date"`
			Currency string `json:"currency"`
			Source   string `json:"source"`
			Postings []struct {
				Account string          `json:"account"`
				Amount  decimal.Decimal `json:"amount"`
				Line    string          `json:"line"`
			} `json:"postings"`
		} `json:"entries"`
	} `json:"data"`
}

// sum adds up the postings of account (and of line, when given) over the entries.
func (l ledgerEntries) sum(account, line string) decimal.Decimal {
	s := decimal.Zero
	for _, e := range l.Data.Entries {
		for _, p := range e.Postings {
			if p.Account == account && (line == "" || p.Line == line) {
				s = s.Add(p.Amount)
			}
		}
	}
	return s
}

// TestLedgerFollowsBookings: a booking's payment and its stay reach the account's ledger
// through booking-svc's journal consumer, balanced, and its cancellation reverses the stay.
func TestLedgerFollowsBookings(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "LEDG1")
	b := create(t, acc, guest(pid, day(30), day(32)))
	acc.b(t, "addbookingpayment", obj{"bookingId": b.BookingID, "amount": "50.25", "description": "first installment"}).ok(t, nil)
	period := obj{"from": day(-1), "to": day(40), "booking_id": b.BookingID}
	read := func() ledgerEntries {
		var l ledgerEntries
		r := acc.a(t, "account-ledger", obj{"action": "entries", "ledger": period})
		r.status(t, http.StatusOK)
		r.decode(t, &l)
		return l
	}
	var l ledgerEntries
	eventually(t, "the booking's entries", func() bool {
		l = read()
		return l.sum("cash", "").Equal(decimal.RequireFromString("50.25")) && l.sum("guest_funds", "rent").Equal(b.TotalRent)
	})
	for _, e := range l.Data.Entries {
		s := decimal.Zero
		for _, p := range e.Postings {
			s = s.Add(p.Amount)
		}
		if !s.IsZero() || e.Source == "" {
			t.Fatalf("entry %s sums to %s", e.EntryID, s)
		}
	}
	// The stay is earned on the check-out day; the guest owes the rest of the grand total.
	if got, want := l.sum("guest_funds", ""), b.GrandTotal.Sub(decimal.RequireFromString("50.25")); !got.Equal(want) {
		t.Fatalf("guest funds %s, want %s", got, want)
	}
	var bal struct {
		Data struct {
			Balances []struct {
				Account string          `json:"account"`
				Amount  decimal.Decimal `json:"amount"`
			} `json:"balances"`
		} `json:"data"`
	}
	r := acc.a(t, "account-ledger", obj{"action": "balances", "ledger": obj{"as_of": day(40), "currency": l.Data.Entries[0].Currency}})
	r.status(t, http.StatusOK)
	r.decode(t, &bal)
	total := decimal.Zero
	for _, x := range bal.Data.Balances {
		total = total.Add(x.Amount)
	}
	if !total.IsZero() || len(bal.Data.Balances) == 0 {
		t.Fatalf("balances %s", r.Body)
	}

	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).ok(t, nil)
	eventually(t, "the cancelled stay reversed", func() bool {
		l = read()
		return l.sum("guest_funds", "rent").IsZero() && l.sum("rental_income", "rent").IsZero()
	})
}
