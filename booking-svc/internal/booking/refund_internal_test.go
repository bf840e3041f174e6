package booking

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/pricing"
)

var (
	refundNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	june10    = pricing.NewDate(2026, 6, 10)
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func pay(id int64, amount, method string, hoursAgo int) Payment {
	return Payment{PaymentID: id, Amount: amount, Currency: "EUR", Method: method, Time: refundNow.Add(-time.Duration(hoursAgo) * time.Hour)}
}

// refundBooking is an EUR booking of grand total total checking in on 2026-06-20 with
// payments ps.
func refundBooking(total string, c *Cancellation, ps ...Payment) Booking {
	b := Booking{AccountID: "acc1", BookingID: 7, Checkin: "2026-06-20", Quote: Quote{Currency: "EUR", GrandTotal: total},
		Cancellation: c, Payments: map[int64]Payment{}}
	for _, p := range ps {
		b.Payments[p.PaymentID] = p
	}
	return b
}

func named(policy string) *Cancellation {
	c := cancellationOf(pricing.Cancellation{Policy: policy}.Resolved())
	return &c
}

// TestRefundRules: one case per rule of docs/money.md section 1.
func TestRefundRules(t *testing.T) {
	ids := []int64{101, 102, 103, 104}
	for _, c := range []struct {
		name        string
		b           Booking
		on          pricing.Date
		opts        CancelOptions
		percent     string
		policy      string // policy_amount
		amount      string
		parts       []string // "of:amount:method:status"
		err         string   // a field error's message
		status      string
		overrideSet bool
	}{
		{name: "no policy recorded is flexible: 100 % a day before", b: refundBooking("450.00", nil, pay(1, "450.00", MethodCard, 1)), on: june10,
			percent: "100", policy: "450.00", amount: "450.00", parts: []string{"1:450.00:card:pending"}, status: RefundPending},
		{name: "flexible, on the day of arrival: nothing", b: refundBooking("450.00", nil, pay(1, "450.00", MethodCard, 1)),
			on: pricing.NewDate(2026, 6, 20), percent: "0", policy: "0.00", amount: "0.00", status: RefundNone},
		{name: "never more than paid: 30 % paid, 50 % refundable", b: refundBooking("1000.00", named(pricing.CancelModerate), pay(1, "300.00", MethodCard, 1)),
			on: pricing.NewDate(2026, 6, 17), percent: "50", policy: "500.00", amount: "300.00", parts: []string{"1:300.00:card:pending"}, status: RefundPending},
		{name: "strict 14 days before: half", b: refundBooking("1000.00", named(pricing.CancelStrict), pay(1, "1000.00", MethodManual, 1)),
			on: pricing.NewDate(2026, 6, 6), percent: "50", policy: "500.00", amount: "500.00", parts: []string{"1:500.00:manual:succeeded"}, status: RefundSucceeded},
		{name: "non-refundable", b: refundBooking("1000.00", named(pricing.CancelNonRefundable), pay(1, "1000.00", MethodCard, 1)), on: june10,
			percent: "0", policy: "0.00", amount: "0.00", status: RefundNone},
		{name: "tiers as booked, not as the named policy is now", b: refundBooking("1000.00",
			&Cancellation{Policy: pricing.CancelModerate, Tiers: []CancellationTier{{DaysBefore: 3, Percent: "80"}}}, pay(1, "1000.00", MethodCard, 1)),
			on: pricing.NewDate(2026, 6, 16), percent: "80", policy: "800.00", amount: "800.00", parts: []string{"1:800.00:card:pending"}, status: RefundPending},
		{name: "custom without tiers: nothing", b: refundBooking("1000.00", &Cancellation{Policy: pricing.CancelCustom}, pay(1, "1000.00", MethodCard, 1)),
			on: june10, percent: "0", policy: "0.00", amount: "0.00", status: RefundNone},
		{name: "custom percent rounded half away from zero", b: refundBooking("100.01",
			&Cancellation{Policy: pricing.CancelCustom, Tiers: []CancellationTier{{DaysBefore: 0, Percent: "50"}}}, pay(1, "100.01", MethodManual, 1)),
			on: june10, percent: "50", policy: "50.01", amount: "50.01", parts: []string{"1:50.01:manual:succeeded"}, status: RefundSucceeded},
		{name: "nothing paid: nothing", b: refundBooking("450.00", nil), on: june10, percent: "100", policy: "450.00", amount: "0.00", status: RefundNone},
		{name: "most recent first, each at most what remains", b: refundBooking("1000.00", nil,
			pay(1, "300.00", MethodCard, 30), pay(2, "200.00", MethodManual, 20), pay(3, "100.00", MethodCard, 10),
			Payment{PaymentID: 4, Amount: "-50.00", Method: MethodCard, Kind: KindRefund, RefundOf: 3, Time: refundNow}),
			on: june10, percent: "100", policy: "1000.00", amount: "550.00",
			parts: []string{"3:50.00:card:pending", "2:200.00:manual:succeeded", "1:300.00:card:pending"}, status: RefundPending},
		{name: "a captured deposit is not paid for the stay", b: refundBooking("1000.00", nil, pay(1, "100.00", MethodCard, 2),
			Payment{PaymentID: 2, Amount: "200.00", Method: MethodCard, Kind: KindDepositCapture, Time: refundNow}),
			on: june10, percent: "100", policy: "1000.00", amount: "100.00", parts: []string{"1:100.00:card:pending"}, status: RefundPending},
		{name: "override below the policy", b: refundBooking("1000.00", nil, pay(1, "450.00", MethodCard, 1)), on: june10,
			opts: CancelOptions{RefundAmount: ptrDec("120.50"), RefundReason: "goodwill"}, percent: "100", policy: "1000.00", amount: "120.50",
			parts: []string{"1:120.50:card:pending"}, status: RefundPending, overrideSet: true},
		{name: "override beyond the policy, up to what was paid", b: refundBooking("1000.00", named(pricing.CancelNonRefundable), pay(1, "450.00", MethodCard, 1)),
			on: june10, opts: CancelOptions{RefundAmount: ptrDec("450"), RefundReason: "storm"}, percent: "0", policy: "0.00", amount: "450.00",
			parts: []string{"1:450.00:card:pending"}, status: RefundPending, overrideSet: true},
		{name: "override of 0", b: refundBooking("1000.00", nil, pay(1, "450.00", MethodCard, 1)), on: june10,
			opts: CancelOptions{RefundAmount: ptrDec("0"), RefundReason: "no show"}, percent: "100", policy: "1000.00", amount: "0.00", status: RefundNone, overrideSet: true},
		{name: "override above what was paid", b: refundBooking("1000.00", nil, pay(1, "450.00", MethodCard, 1)), on: june10,
			opts: CancelOptions{RefundAmount: ptrDec("450.01"), RefundReason: "x"}, err: "must be at most 450.00, what was paid"},
		{name: "override with more decimals than the currency", b: refundBooking("1000.00", nil, pay(1, "450.00", MethodCard, 1)), on: june10,
			opts: CancelOptions{RefundAmount: ptrDec("1.001"), RefundReason: "x"}, err: "must have at most 2 decimals, as EUR has"},
		{name: "negative override", b: refundBooking("1000.00", nil, pay(1, "450.00", MethodCard, 1)), on: june10,
			opts: CancelOptions{RefundAmount: ptrDec("-1"), RefundReason: "x"}, err: "must be 0 or more"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, manual, err := decideRefund(c.b, c.on, refundNow, c.opts, ids)
			if c.err != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != "refundAmount" || fe.Message != c.err {
					t.Fatalf("err = %v, want refundAmount %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Percent != c.percent || r.PolicyAmount != c.policy || r.Amount != c.amount || r.Status != c.status || r.Override != c.overrideSet {
				t.Fatalf("refund %+v", r)
			}
			if len(r.Parts) != len(c.parts) {
				t.Fatalf("parts %+v, want %v", r.Parts, c.parts)
			}
			nManual := 0
			for i, p := range r.Parts {
				got := strconv.FormatInt(p.Of, 10) + ":" + p.Amount + ":" + p.Method + ":" + p.Status
				if got != c.parts[i] || p.PaymentID != ids[i] || p.Key != refundKey("acc1", 7, p.Of, 1, 0) {
					t.Errorf("part %d: %s (%+v), want %s", i, got, p, c.parts[i])
				}
				if p.Method == MethodManual {
					nManual++
				}
			}
			if len(manual) != nManual {
				t.Fatalf("%d manual entries, want %d", len(manual), nManual)
			}
			for _, m := range manual {
				if m.Kind != KindRefund || !d(m.Amount).IsNegative() || m.RefundOf == 0 {
					t.Errorf("manual entry %+v", m)
				}
			}
		})
	}
	t.Run("too few ids reserved is a change", func(t *testing.T) {
		b := refundBooking("1000.00", nil, pay(1, "300.00", MethodCard, 3), pay(2, "300.00", MethodCard, 2))
		if _, _, err := decideRefund(b, june10, refundNow, CancelOptions{}, []int64{9}); !errors.Is(err, errChanged) {
			t.Fatalf("err = %v, want errChanged", err)
		}
	})
}

func ptrDec(s string) *decimal.Decimal { v := d(s); return &v }

func TestRefundKeys(t *testing.T) {
	if k := refundKey("acc1", 7, 12, 1, 0); k != "refund-acc1-7-12-1" {
		t.Fatal(k)
	}
	for in, want := range map[string]string{"refund-a-retry-7-12-1": "refund-a-retry-7-12-1-retry1", "refund-a-7-12-1-retry1": "refund-a-7-12-1-retry2"} {
		if got := nextRefundKey(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestRefundStatus(t *testing.T) {
	for want, parts := range map[string][]RefundPart{
		RefundNone:      nil,
		RefundPending:   {{Status: RefundFailed}, {Status: RefundPending}},
		RefundFailed:    {{Status: RefundSucceeded}, {Status: RefundFailed}},
		RefundSucceeded: {{Status: RefundSucceeded}},
	} {
		if got := refundStatus(parts); got != want {
			t.Errorf("%+v: %s, want %s", parts, got, want)
		}
	}
}

// TestRefundProperty: for random policies (custom tiers too), payment schedules of card and
// manual payments (some partly refunded already), cancellation dates and currencies, the
// refund is min(policy amount, net paid), never negative; its parts add up to it, are taken
// most recent first, each at most what remains of its payment.
func TestRefundProperty(t *testing.T) {
	policies := []string{"", pricing.CancelFlexible, pricing.CancelModerate, pricing.CancelStrict, pricing.CancelNonRefundable, pricing.CancelCustom}
	currencies := []string{"JPY", "EUR", "KWD"}
	for i := range 500 {
		rng := rand.New(rand.NewPCG(33, uint64(i)))
		cur := currencies[rng.IntN(len(currencies))]
		scale := pricing.Scale(cur)
		unit := decimal.New(1, -scale)
		total := unit.Mul(decimal.NewFromInt(rng.Int64N(5_000_000) + 1))
		checkin := pricing.NewDate(2026, 7, 1).AddDays(rng.IntN(60))
		on := checkin.AddDays(-rng.IntN(95) + 5)
		var c *Cancellation
		var tiers []CancellationTier
		switch p := policies[rng.IntN(len(policies))]; p {
		case "":
		case pricing.CancelCustom:
			c = &Cancellation{Policy: p}
			for range rng.IntN(4) {
				tiers = append(tiers, CancellationTier{DaysBefore: rng.IntN(60), Percent: decimal.New(rng.Int64N(10001), -2).String()})
			}
			c.Tiers = tiers
		default:
			c = named(p)
			tiers = c.Tiers
		}
		if c == nil {
			tiers = named(pricing.CancelFlexible).Tiers
		}
		b := Booking{AccountID: "acc", BookingID: int64(i + 1), Checkin: checkin.String(), Cancellation: c,
			Quote: Quote{Currency: cur, GrandTotal: total.StringFixed(scale)}, Payments: map[int64]Payment{}}
		n := rng.IntN(6)
		for j := range n {
			id := int64(j + 1)
			amt := unit.Mul(decimal.NewFromInt(rng.Int64N(2_000_000) + 1))
			m := MethodCard
			if rng.IntN(2) == 0 {
				m = MethodManual
			}
			at := refundNow.Add(-time.Duration(rng.IntN(72)) * time.Hour) // equal times too: ids order them
			b.Payments[id] = Payment{PaymentID: id, Amount: amt.StringFixed(scale), Currency: cur, Method: m, Time: at}
			if rng.IntN(4) == 0 { // partly refunded already
				back := unit.Mul(decimal.NewFromInt(rng.Int64N(amt.Div(unit).IntPart()) + 1))
				b.Payments[100+id] = Payment{PaymentID: 100 + id, Amount: back.Neg().StringFixed(scale), Method: m, Kind: KindRefund, RefundOf: id, Time: at}
			}
		}
		opts := CancelOptions{}
		paid := netPaid(b)
		if rng.IntN(5) == 0 {
			x := unit.Mul(decimal.NewFromInt(rng.Int64N(paid.Div(unit).IntPart() + 2)))
			opts = CancelOptions{RefundAmount: &x, RefundReason: "owner"}
		}
		ids := []int64{1001, 1002, 1003, 1004, 1005, 1006}
		r, manual, err := decideRefund(b, on, refundNow, opts, ids)
		if opts.RefundAmount != nil && opts.RefundAmount.GreaterThan(paid) {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Message != "must be at most "+paid.StringFixed(scale)+", what was paid" {
				t.Fatalf("case %d: override %s > paid %s: %v", i, opts.RefundAmount, paid, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		// The policy's amount, computed here from the tiers as booked.
		days := pricing.DaysBetween(on, checkin)
		percent := decimal.Zero
		for _, tr := range tiers {
			if p := d(tr.Percent); days >= tr.DaysBefore && p.GreaterThan(percent) {
				percent = p
			}
		}
		policy := total.Mul(percent).Div(decimal.NewFromInt(100)).Round(scale)
		want := decimal.Max(decimal.Min(policy, paid), decimal.Zero)
		if opts.RefundAmount != nil {
			want = *opts.RefundAmount
		}
		if !d(r.PolicyAmount).Equal(policy) || !d(r.Amount).Equal(want) || d(r.Amount).IsNegative() {
			t.Fatalf("case %d (%s, %v, %s on %s, paid %s): refund %+v, want policy %s amount %s", i, cur, c, checkin, on, paid, r, policy, want)
		}
		if got := r.Amount; got != want.StringFixed(scale) {
			t.Fatalf("case %d: amount %q not in %s's digits", i, got, cur)
		}
		sum := decimal.Zero
		remains := map[int64]decimal.Decimal{}
		for id, p := range b.Payments {
			if p.Kind == KindPayment {
				remains[id] = remains[id].Add(d(p.Amount))
			} else {
				remains[p.RefundOf] = remains[p.RefundOf].Add(d(p.Amount))
			}
		}
		for k, p := range r.Parts {
			a := d(p.Amount)
			if !a.IsPositive() || a.GreaterThan(remains[p.Of]) || p.PaymentID != ids[k] {
				t.Fatalf("case %d: part %+v (remains %s)", i, p, remains[p.Of])
			}
			if k > 0 {
				prev, this := b.Payments[r.Parts[k-1].Of], b.Payments[p.Of]
				if this.Time.After(prev.Time) || (this.Time.Equal(prev.Time) && this.PaymentID > prev.PaymentID) {
					t.Fatalf("case %d: part %d (payment %d) is more recent than part %d", i, k, p.Of, k-1)
				}
			}
			// Every payment more recent than this part's is refunded whole.
			for id, q := range b.Payments {
				if q.Kind == KindPayment && q.Time.After(b.Payments[p.Of].Time) && remains[id].IsPositive() {
					taken := false
					for _, o := range r.Parts {
						taken = taken || (o.Of == id && d(o.Amount).Equal(remains[id]))
					}
					if !taken {
						t.Fatalf("case %d: payment %d is more recent than %d but not refunded whole", i, id, p.Of)
					}
				}
			}
			sum = sum.Add(a)
		}
		if !sum.Equal(d(r.Amount)) {
			t.Fatalf("case %d: parts add up to %s, refund %s", i, sum, r.Amount)
		}
		for _, m := range manual {
			if !d(m.Amount).IsNegative() || m.Kind != KindRefund {
				t.Fatalf("case %d: manual entry %+v", i, m)
			}
		}
	}
}
