package journal_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/journal"
)

// table renders an account's entries as docs/money.md's worked examples show them.
func table(t *testing.T, l *journal.Service, acc string) string {
	t.Helper()
	es, err := l.Entries(context.Background(), acc, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| entry | date | account | line | label | amount |\n|---|---|---|---|---|---:|\n")
	for _, e := range es {
		for _, p := range e.Postings {
			account := p.Account
			if p.Account == journal.Owner {
				account = fmt.Sprintf("owner %d", p.OwnerID)
			}
			fmt.Fprintf(&b, "| %s:%d | %s | %s | %s | %s | %s |\n", e.Source, e.Seq, e.Date, account, p.Line, p.Label,
				p.Amount.StringFixed(journal.Scale(e.Currency)))
		}
	}
	return b.String()
}

func at(day string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", day+" 10:00")
	if err != nil {
		panic(err)
	}
	return t
}

// balances checks hand-computed balances of ledger accounts (owner: owner 7's).
func balances(t *testing.T, l *journal.Service, acc string, want map[string]string) {
	t.Helper()
	for account, amount := range want {
		q := journal.Query{LedgerAccount: account, Currency: "EUR"}
		if account == journal.Owner {
			q.OwnerID = 7
		}
		got, err := l.Balance(context.Background(), acc, q)
		if err != nil || !got.Equal(decimal.RequireFromString(amount)) {
			t.Errorf("%s: %s (%v), want %s", account, got, err, amount)
		}
	}
}

// TestWorkedExamples computes docs/money.md's worked examples (section 6) and checks that the
// page shows them as computed, and their balances against hand-computed figures.
func TestWorkedExamples(t *testing.T) {
	ctx := context.Background()
	doc, err := os.ReadFile("../../../docs/money.md")
	if err != nil {
		t.Fatal(err)
	}
	owner7 := &agreements{m: []agreementSpan{{1, "2026-01-01", "", journal.Agreement{ID: 1, OwnerID: 7,
		CommissionPercent: decimal.RequireFromString("20"), Basis: journal.BasisRent}}}}
	examples := []struct {
		name  string
		steps []func(*booking.Booking)
		want  map[string]string
	}{
		{
			name: "direct booking, two installments, 20 % of rent",
			steps: []func(*booking.Booking){
				func(b *booking.Booking) {
					b.Checkin, b.Checkout = "2026-04-10", "2026-04-15"
					b.Quote = booking.Quote{Currency: "EUR", TotalRent: "1000.00", DiscountTotal: "50.00", ServiceTotal: "80.00", TaxTotal: "30.00",
						GrandTotal: "1060.00", Discounts: []booking.Discount{{Name: "Early booking", Amount: "50.00"}},
						Services: []booking.ServiceAmount{{Name: "Cleaning", Amount: "80.00", TaxAmount: "0.00"}},
						Taxes:    []booking.Amount{{Name: "City tax", Amount: "30.00"}}}
					b.Payments[1] = booking.Payment{PaymentID: 1, Amount: "318.00", Currency: "EUR", Time: at("2026-03-01"), Method: booking.MethodCard}
				},
				func(b *booking.Booking) {
					b.Payments[2] = booking.Payment{PaymentID: 2, Amount: "742.00", Currency: "EUR", Time: at("2026-04-01"), Method: booking.MethodCard}
				},
			},
			// The owner is owed rent 1000 − discount 50 + cleaning 80 − commission 20 % × 950.
			want: map[string]string{journal.Owner: "-840.00", journal.ManagementIncome: "-190.00", journal.TaxPayable: "-30.00",
				journal.GuestFunds: "0", journal.Cash: "1060.00"},
		},
		{
			name: "channel booking, 15 % channel commission",
			steps: []func(*booking.Booking){
				func(b *booking.Booking) {
					b.Checkin, b.Checkout, b.Channel = "2026-04-28", "2026-05-03", "Booking.com"
					b.Quote = booking.Quote{Currency: "EUR", TotalRent: "600.00", GrandTotal: "600.00"}
					b.ChannelCommission = "90.00"
				},
				func(b *booking.Booking) {
					b.Payments[3] = booking.Payment{PaymentID: 3, Amount: "510.00", Currency: "EUR", Time: at("2026-05-06"), Method: booking.MethodManual,
						Description: "Booking.com payout"}
				},
			},
			// The owner bears the channel's 90 and the manager's 20 % of the 600 rent.
			want: map[string]string{journal.Owner: "-390.00", journal.ManagementIncome: "-120.00", journal.GuestFunds: "0", journal.Cash: "510.00"},
		},
		{
			name: "cancellation with a 50 % refund",
			steps: []func(*booking.Booking){
				func(b *booking.Booking) {
					b.Checkin, b.Checkout = "2026-05-05", "2026-05-10"
					b.Quote = booking.Quote{Currency: "EUR", TotalRent: "500.00", GrandTotal: "500.00"}
					b.Payments[4] = booking.Payment{PaymentID: 4, Amount: "500.00", Currency: "EUR", Time: at("2026-03-10"), Method: booking.MethodCard}
				},
				func(b *booking.Booking) {
					b.Status = booking.StatusCancelled
					when := at("2026-04-01")
					b.CancelledAt = &when
					b.Refund = &booking.Refund{Status: booking.RefundPending, Policy: "moderate", Percent: "50", PolicyAmount: "250.00",
						NetPaid: "500.00", Amount: "250.00", DecidedAt: when}
				},
				func(b *booking.Booking) {
					b.Refund.Status = booking.RefundSucceeded
					b.Payments[5] = booking.Payment{PaymentID: 5, Amount: "-250.00", Currency: "EUR", Time: at("2026-04-02"), Method: booking.MethodCard,
						Kind: booking.KindRefund, RefundOf: 4}
				},
			},
			// The owner keeps the 250 not refunded, less the manager's 20 % of it.
			want: map[string]string{journal.Owner: "-200.00", journal.ManagementIncome: "-50.00", journal.GuestFunds: "0", journal.Cash: "250.00"},
		},
	}
	for i, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			l, _, acc := newLedger(t)
			bs := &bookings{m: map[int64]booking.Booking{}}
			l.Register("booking", journal.BookingResolver(bs, owner7))
			b := booking.Booking{AccountID: acc, BookingID: int64(i + 1), PropertyID: 1, Status: booking.StatusReserved, Payments: map[int64]booking.Payment{}}
			for _, step := range ex.steps {
				step(&b)
				b.Payments = clonePayments(b.Payments)
				bs.put(b)
				if err := l.Touch(ctx, acc, journal.BookingSource(b.BookingID)); err != nil {
					t.Fatal(err)
				}
			}
			checkBalanced(t, l, acc)
			balances(t, l, acc, ex.want)
			got := table(t, l, acc)
			if !strings.Contains(string(doc), got) {
				t.Errorf("docs/money.md does not show example %q as computed:\n%s", ex.name, got)
			}
		})
	}
}
