package journal_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/libs/pricing"
)

// bookings is the bookings the resolver reads in these tests (the booking store's port).
type bookings struct {
	mu sync.Mutex
	m  map[int64]booking.Booking
}

func (s *bookings) Booking(_ context.Context, _ string, id int64) (booking.Booking, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	if !ok {
		return b, fmt.Errorf("booking %d: %w", id, booking.ErrNotFound)
	}
	return b, nil
}

func (s *bookings) put(b booking.Booking) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[b.BookingID] = b
}

// agreements are the agreements in force: per property, by date ranges (inclusive).
type agreements struct {
	mu sync.Mutex
	m  []agreementSpan
}

type agreementSpan struct {
	property int64
	from, to string
	a        journal.Agreement
}

func (s *agreements) AgreementOn(_ context.Context, _ string, property int64, date string) (*journal.Agreement, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.m {
		if sp.property == property && sp.from <= date && (sp.to == "" || date <= sp.to) {
			a := sp.a
			return &a, nil
		}
	}
	return nil, nil
}

func (s *agreements) set(spans []agreementSpan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = spans
}

// gen makes random bookings and operations on them.
type gen struct {
	r *rand.Rand
}

// money is a random amount of up to max units in cur's digits.
func (g gen) money(cur string, maxUnits int) decimal.Decimal {
	scale := journal.Scale(cur)
	n := g.r.Int64N(int64(maxUnits) * pow10(scale))
	return decimal.New(n, -scale)
}

func pow10(n int32) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func (g gen) date(from string, days int) string {
	d := pricing.MustDate(from)
	return d.AddDays(g.r.IntN(days)).String()
}

func fix(cur string, d decimal.Decimal) string { return d.StringFixed(journal.Scale(cur)) }

// quote is a random quote of a stay in cur whose totals are the sums of its lines.
func (g gen) quote(cur string) booking.Quote {
	q := booking.Quote{Currency: cur}
	rent := g.money(cur, 2000).Add(decimal.NewFromInt(1))
	discounts, services, taxes := decimal.Zero, decimal.Zero, decimal.Zero
	for i := range g.r.IntN(3) {
		a := g.money(cur, 50)
		discounts = discounts.Add(a)
		q.Discounts = append(q.Discounts, booking.Discount{Name: fmt.Sprint("discount ", i), Amount: fix(cur, a)})
	}
	for i := range g.r.IntN(3) {
		a, t := g.money(cur, 100), g.money(cur, 10)
		services = services.Add(a).Add(t)
		q.Services = append(q.Services, booking.ServiceAmount{Name: fmt.Sprint("service ", i), Amount: fix(cur, a), TaxAmount: fix(cur, t)})
	}
	for i := range g.r.IntN(3) {
		a := g.money(cur, 100)
		taxes = taxes.Add(a)
		q.Taxes = append(q.Taxes, booking.Amount{Name: fmt.Sprint("tax ", i), Amount: fix(cur, a)})
	}
	q.TotalRent, q.DiscountTotal, q.ServiceTotal, q.TaxTotal = fix(cur, rent), fix(cur, discounts), fix(cur, services), fix(cur, taxes)
	q.GrandTotal = fix(cur, rent.Sub(discounts).Add(services).Add(taxes))
	return q
}

func (g gen) stay(b *booking.Booking) {
	in := g.date("2026-03-01", 60)
	b.Checkin = in
	b.Checkout = pricing.MustDate(in).AddDays(1 + g.r.IntN(7)).String()
}

func (g gen) agreement(id int64) journal.Agreement {
	a := journal.Agreement{ID: id, OwnerID: 1 + g.r.Int64N(3), CommissionPercent: decimal.New(g.r.Int64N(3001), -2)}
	switch g.r.IntN(3) {
	case 0:
		a.Basis = journal.BasisRent
	case 1:
		a.Basis = journal.BasisTotal
	default:
		a.Basis = journal.BasisComponents
		for _, c := range []string{journal.ComponentRent, journal.ComponentDiscounts, journal.ComponentServices, journal.ComponentTaxes} {
			if g.r.IntN(2) == 0 {
				a.Components = append(a.Components, c)
			}
		}
	}
	return a
}

func sumPayments(b booking.Booking) decimal.Decimal {
	s := decimal.Zero
	for _, p := range b.Payments {
		if p.Kind != booking.KindDepositCapture {
			s = s.Add(decimal.RequireFromString(p.Amount))
		}
	}
	return s
}

// For random sequences of operations on bookings — payments, refunds, deposit captures,
// cancellations with partial refunds, updates moving the dates, channel commissions,
// agreements of every basis coming and going — the ledger balances after every operation,
// every entry balances, each booking's entries post what the resolver says it should, a
// second sync posts nothing, and the guest funds of a reserved booking are what it costs,
// less the channel's commission and what was paid.
func TestLedgerFollowsRandomBookings(t *testing.T) {
	ctx := context.Background()
	l, st, acc := newLedger(t)
	bs := &bookings{m: map[int64]booking.Booking{}}
	ags := &agreements{}
	l.Register("booking", journal.BookingResolver(bs, ags))
	g := gen{rand.New(rand.NewPCG(33, 1))}
	currencies := []string{"EUR", "JPY", "KWD"}
	var ids []int64
	nextPayment := int64(1)
	touch := func(id int64) {
		t.Helper()
		if err := l.Touch(ctx, acc, journal.BookingSource(id)); err != nil {
			t.Fatal(err)
		}
	}
	ops := 160
	if testing.Short() {
		ops = 40
	}
	seen := map[string]int{}
	for step := range ops {
		var op string
		var touched []int64
		if len(ids) == 0 || g.r.IntN(8) == 0 {
			id := int64(len(ids) + 1)
			cur := currencies[g.r.IntN(len(currencies))]
			b := booking.Booking{AccountID: acc, BookingID: id, PropertyID: 1 + g.r.Int64N(2), Status: booking.StatusReserved,
				Quote: g.quote(cur), Payments: map[int64]booking.Payment{}}
			if g.r.IntN(4) == 0 {
				b.Status = booking.StatusHeld
			}
			g.stay(&b)
			bs.put(b)
			ids = append(ids, id)
			op, touched = "create", []int64{id}
		} else if g.r.IntN(10) == 0 {
			var spans []agreementSpan
			for p := int64(1); p <= 2; p++ {
				if g.r.IntN(3) > 0 {
					split := g.date("2026-03-01", 70)
					spans = append(spans, agreementSpan{p, "2026-01-01", split, g.agreement(p * 10)})
					if g.r.IntN(2) == 0 {
						spans = append(spans, agreementSpan{p, pricing.MustDate(split).AddDays(1).String(), "", g.agreement(p*10 + 1)})
					}
				}
			}
			ags.set(spans)
			op, touched = "agreements", ids
		} else {
			id := ids[g.r.IntN(len(ids))]
			b, err := bs.Booking(ctx, acc, id)
			if err != nil {
				continue // deleted
			}
			cur := b.Quote.Currency
			b.Payments = clonePayments(b.Payments)
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(g.r.IntN(90*24)) * time.Hour)
			switch k := g.r.IntN(9); {
			case k <= 1:
				b.Payments[nextPayment] = booking.Payment{PaymentID: nextPayment, Amount: fix(cur, g.money(cur, 800).Add(decimal.NewFromInt(1))), Currency: cur, Time: now}
				nextPayment++
				op = "payment"
			case k == 2:
				paid := sumPayments(b)
				if !paid.IsPositive() {
					continue
				}
				amt := decimal.New(g.r.Int64N(paid.Shift(journal.Scale(cur)).IntPart())+1, -journal.Scale(cur))
				b.Payments[nextPayment] = booking.Payment{PaymentID: nextPayment, Amount: fix(cur, amt.Neg()), Currency: cur, Time: now, Kind: booking.KindRefund}
				nextPayment++
				op = "refund"
			case k == 3:
				b.Payments[nextPayment] = booking.Payment{PaymentID: nextPayment, Amount: fix(cur, g.money(cur, 300).Add(decimal.NewFromInt(1))), Currency: cur, Time: now, Kind: booking.KindDepositCapture}
				nextPayment++
				op = "deposit capture"
			case k == 4 && b.Status == booking.StatusReserved:
				b.Status = booking.StatusCancelled
				b.CancelledAt = &now
				paid := sumPayments(b)
				if g.r.IntN(4) > 0 {
					refund := decimal.Zero
					if paid.IsPositive() {
						refund = decimal.New(g.r.Int64N(paid.Shift(journal.Scale(cur)).IntPart()+1), -journal.Scale(cur))
					}
					b.Refund = &booking.Refund{Status: booking.RefundPending, NetPaid: fix(cur, paid), Amount: fix(cur, refund), DecidedAt: now}
				}
				op = "cancel"
			case k == 5 && b.Status != booking.StatusCancelled:
				g.stay(&b)
				if g.r.IntN(2) == 0 {
					b.Quote = g.quote(cur)
				}
				op = "move"
			case k == 6 && b.Status == booking.StatusHeld:
				b.Status = booking.StatusReserved
				op = "reserve"
			case k == 7 && b.Status == booking.StatusReserved:
				total := decimal.RequireFromString(b.Quote.GrandTotal)
				b.ChannelCommission, b.Channel = fix(cur, total.Mul(decimal.New(g.r.Int64N(25), -2)).Round(journal.Scale(cur))), "Booking.com"
				op = "channel commission"
			case k == 8 && g.r.IntN(4) == 0:
				bs.mu.Lock()
				delete(bs.m, id)
				bs.mu.Unlock()
				op = "delete"
			default:
				continue
			}
			if op != "delete" {
				b.Version++
				bs.put(b)
			}
			touched = []int64{id}
		}
		seen[op]++
		for _, id := range touched {
			touch(id)
		}
		checkBalanced(t, l, acc)
		for _, id := range touched {
			src := journal.BookingSource(id)
			want, err := journal.BookingResolver(bs, ags)(ctx, acc, src)
			if err != nil {
				t.Fatal(err)
			}
			if got := posted(t, st, acc, src); !journal.Same(got, want) {
				t.Fatalf("step %d (%s): booking %d posts %+v, wants %+v", step, op, id, got, want)
			}
			if es, err := l.Sync(ctx, acc, src, want); err != nil || len(es) != 0 {
				t.Fatalf("step %d (%s): a second sync posted %+v (%v)", step, op, es, err)
			}
			checkGuestFunds(t, l, acc, bs, id, step, op)
		}
	}
	t.Logf("operations: %v", seen)
	if !testing.Short() {
		for _, op := range []string{"create", "agreements", "payment", "refund", "deposit capture", "cancel", "move", "reserve", "channel commission", "delete"} {
			if seen[op] == 0 {
				t.Errorf("no %s in the sequence", op)
			}
		}
		// The agreements were in force: commissions were posted.
		income := decimal.Zero
		for _, c := range currencies {
			b, err := l.Balance(ctx, acc, journal.Query{LedgerAccount: journal.ManagementIncome, Currency: c})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("management income in %s: %s", c, b)
			income = income.Add(b.Abs())
		}
		if income.IsZero() {
			t.Error("no commission was posted")
		}
	}
}

func clonePayments(m map[int64]booking.Payment) map[int64]booking.Payment {
	out := make(map[int64]booking.Payment, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// checkGuestFunds computes what the guest funds of a booking hold without the resolver:
// a reserved booking's grand total less the channel's commission and what was paid; a
// cancelled one's refund decided but not yet recorded.
func checkGuestFunds(t *testing.T, l *journal.Service, acc string, bs *bookings, id int64, step int, op string) {
	t.Helper()
	b, err := bs.Booking(context.Background(), acc, id)
	var want decimal.Decimal
	cur := "EUR"
	switch {
	case err != nil:
		return
	case b.Status == booking.StatusReserved:
		cur = b.Quote.Currency
		want = decimal.RequireFromString(b.Quote.GrandTotal).Sub(sumPayments(b))
		if b.ChannelCommission != "" {
			want = want.Sub(decimal.RequireFromString(b.ChannelCommission))
		}
	case b.Status == booking.StatusCancelled:
		cur = b.Quote.Currency
		kept := sumPayments(b)
		if r := b.Refund; r != nil {
			kept = decimal.RequireFromString(r.NetPaid).Sub(decimal.RequireFromString(r.Amount))
		}
		want = kept.Sub(sumPayments(b))
	default:
		want = decimal.Zero
	}
	got, err := l.Balance(context.Background(), acc, journal.Query{LedgerAccount: journal.GuestFunds, BookingID: id, Currency: cur})
	if err != nil || !got.Equal(want) {
		t.Fatalf("step %d (%s): guest funds of booking %d (%s) = %s, want %s (%v)", step, op, id, b.Status, got, want, err)
	}
}
