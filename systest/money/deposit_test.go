package money

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/testkit/eventually"
)

// depositStep is the deposits' faults step between the gateway's answer to a hold and its
// record (booking-svc/internal/booking/deposit.go).
const depositStep = "deposit:answered"

// advanceTo moves booking-svc's clock to noon (UTC, the test properties' zone) of date for
// the rest of the test.
func advanceTo(t *testing.T, date string) {
	t.Helper()
	at, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatal(err)
	}
	if d := at.Add(12 * time.Hour).Sub(clock.Now()); d > 0 {
		clock.Advance(t, d)
	}
}

// deposit waits until booking id's deposit is in status, and answers the booking.
func (acc account) deposit(t *testing.T, id int64, status string) bookingOut {
	t.Helper()
	var b bookingOut
	eventually.Holds(t, fmt.Sprintf("booking %d's deposit %s", id, status), within, func() bool {
		b = acc.get(t, id)
		return b.Deposit != nil && b.Deposit.Status == status
	})
	return b
}

// depositKey is the idempotency key of a deposit step (docs/money.md).
func depositKey(acc account, id int64, n int, step string) string {
	return fmt.Sprintf("deposit-%s-%d-%d-%s", acc.AccountID, id, n, step)
}

// summary is calls without their answers, for failure messages.
func summary(calls []stripeCall) string {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "[%s %s key %s form %v status %d failed %q id %v] ", c.Method, c.Path, c.Key, c.Form, c.Status, c.Failed, c.Answer["id"])
	}
	return b.String()
}

// keyed are acc's requests to Stripe under key, and those of them that reached Stripe.
func keyed(acc account, key string) (all, passed []stripeCall) {
	for _, c := range stripe.seen(acc, http.MethodPost, "") {
		if c.Key == key {
			all = append(all, c)
			if c.Failed == "" {
				passed = append(passed, c)
			}
		}
	}
	return all, passed
}

// TestDepositHolds drives three bookings with a 300.00 damage deposit held on the guest's
// card, due the day before arrival, by booking-svc's test clock: all three held on their due
// dates, booking-svc dying between Stripe's answer to one hold and its record (after the
// restart the hold is asked again under its key and recorded once); the short stay's released
// releaseDays after check-out, dying the same way after Stripe's answer to the release; one
// whose deposit the owner captures in part (the captured amount recorded as a payment, the
// rest released by the capture); and a long stay whose hold is renewed before the card
// network lets it lapse (a new hold, then the old one released). booking-svc restarts
// between the steps; each step's request reaches Stripe under its key once (twice where the
// process died after it), and the booking records each step once.
func TestDepositHolds(t *testing.T) {
	acc := newAccount(t, true)
	acc.a(t, "property-policy", obj{"internal_code": acc.code, "short_stay": obj{"payment_type": "None",
		"damage_deposit": obj{"is_due_at": "XDayPriorArrival", "x_day": 1, "amount": 300, "amount_type": "Flat"}}}).ok(t)
	acc.waitPriced(t)
	book := func(from, to int, last string) bookingOut {
		t.Helper()
		var b bookingOut
		acc.b(t, "create", acc.cardGuest(from, to, last, false)).ok(t).data(t, &b)
		if b.Deposit == nil || b.Deposit.Status != "scheduled" || !b.Deposit.Amount.Equal(decimal.NewFromInt(300)) ||
			b.Deposit.DueDate != day(from-1) || b.Deposit.ReleaseOn != day(to+releaseDays) {
			t.Fatalf("booking %s→%s's deposit: %+v, want 300 scheduled on %s, released on %s", day(from), day(to), b.Deposit,
				day(from-1), day(to+releaseDays))
		}
		return b
	}
	short, captured, long := book(10, 11, "Short"), book(11, 12, "Captured"), book(12, 27, "Long")
	if n := len(stripe.seen(acc, http.MethodPost, "/v1/payment_intents")); n != 0 {
		t.Fatalf("Stripe saw %d intents before the due date, want none", n)
	}

	// The last due date: the worker holds the three; it dies after Stripe's answer to the
	// first.
	faults.Arm(acc.AccountID, depositStep)
	advanceTo(t, day(11))
	faults.Stopped(t, depositStep, within)
	restart(t)
	holds := map[int64]string{}
	for _, b := range []bookingOut{short, captured, long} {
		got := acc.deposit(t, b.BookingID, "held").Deposit
		if got.AuthorizationID == "" || got.HeldAt == nil || got.Reauthorizations != 0 {
			t.Fatalf("booking %d's hold: %+v", b.BookingID, got)
		}
		holds[b.BookingID] = got.AuthorizationID
		all, passed := keyed(acc, depositKey(acc, b.BookingID, 1, "hold"))
		if len(passed) < 1 || len(passed) > 2 || passed[0].Path != "/v1/payment_intents" ||
			passed[0].Form.Get("capture_method") != "manual" || passed[0].Form.Get("amount") != "30000" {
			t.Fatalf("booking %d's hold requests: %+v, want a manual-capture intent of 30000 (twice at most: the crash)", b.BookingID, all)
		}
	}
	// The keys the crashes stopped after Stripe's answer: asked twice.
	twice := map[string]bool{}
	for _, b := range []bookingOut{short, captured, long} {
		k := depositKey(acc, b.BookingID, 1, "hold")
		if _, passed := keyed(acc, k); len(passed) == 2 {
			twice[k], twice[k+"/payment-method"] = true, true
		}
	}
	if len(twice) != 2 {
		t.Fatalf("holds asked twice: %v, want the one the crash stopped", twice)
	}

	// releaseDays after the short stay's check-out: released, booking-svc dying between
	// Stripe's answer and the record (the release asked again under its key after the
	// restart, recorded once); the long stay's hold is 2 days old and stays. (Before the
	// owner's capture: the crash stops the account's first step that reaches it.)
	faults.Arm(acc.AccountID, depositStep)
	advanceTo(t, day(11+releaseDays))
	faults.Stopped(t, depositStep, within)
	restart(t)
	s := acc.deposit(t, short.BookingID, "released").Deposit
	if s.ReleasedAt == nil {
		t.Fatalf("the released deposit: %+v", s)
	}
	release := depositKey(acc, short.BookingID, 1, "release")
	twice[release] = true
	if _, passed := keyed(acc, release); len(passed) != 2 || passed[1].Path != passed[0].Path ||
		passed[0].Path != "/v1/payment_intents/"+holds[short.BookingID]+"/cancel" {
		t.Fatalf("release requests %s, want a cancel of %s and its repeat; every request: %s", summary(passed), holds[short.BookingID],
			summary(stripe.seen(acc, "", "")))
	}
	if l := acc.get(t, long.BookingID).Deposit; l.Status != "held" || l.Reauthorizations != 0 {
		t.Fatalf("the long stay's deposit 2 days after its hold: %+v, want held as it was", l)
	}

	// The owner captures 120.50 of one: captured and recorded once, the rest released by
	// Stripe. The money worker leaves the capture the owner's request began to it (until that
	// request's deadline): Stripe sees the key once.
	restart(t)
	var c bookingOut
	acc.b(t, "capturedeposit", obj{"bookingId": captured.BookingID, "amount": "120.50", "reason": "Broken lamp"}).ok(t).data(t, &c)
	c = acc.get(t, captured.BookingID)
	if d := c.Deposit; d.Status != "captured" || !d.CapturedAmount.Decimal.Equal(decimal.RequireFromString("120.50")) ||
		d.CaptureReason != "Broken lamp" || d.CapturedAt == nil {
		t.Fatalf("the captured deposit: %+v", d)
	}
	var kept []paymentOut
	for _, p := range c.Payments {
		if p.Kind == "deposit_capture" {
			kept = append(kept, p)
		}
	}
	if len(kept) != 1 || !kept[0].Amount.Equal(decimal.RequireFromString("120.50")) {
		t.Fatalf("payments %+v, want one deposit_capture of 120.50", c.Payments)
	}
	_, passed := keyed(acc, depositKey(acc, captured.BookingID, 1, "capture"))
	if len(passed) != 1 || passed[0].Path != "/v1/payment_intents/"+holds[captured.BookingID]+"/capture" ||
		passed[0].Form.Get("amount_to_capture") != "12050" {
		t.Fatalf("capture requests %s, want one of 12050 on %s (the deposit now: %+v)", summary(passed), holds[captured.BookingID], c.Deposit)
	}

	// Six days after the hold, the long stay's is renewed: a new hold, then the old released.
	restart(t)
	advanceTo(t, day(18))
	var l *depositOut
	eventually.Holds(t, "the long stay's hold renewed", within, func() bool {
		l = acc.get(t, long.BookingID).Deposit
		return l.Reauthorizations == 1 && l.Status == "held"
	})
	if l.AuthorizationID == holds[long.BookingID] || l.AuthorizationID == "" {
		t.Fatalf("the renewed hold kept its authorization %s", l.AuthorizationID)
	}
	_, second := keyed(acc, depositKey(acc, long.BookingID, 2, "hold"))
	_, old := keyed(acc, depositKey(acc, long.BookingID, 1, "release"))
	if len(second) != 1 || len(old) != 1 || old[0].Path != "/v1/payment_intents/"+holds[long.BookingID]+"/cancel" {
		t.Fatalf("renewal requests: hold %+v, release %+v; want one new hold and one cancel of %s", second, old, holds[long.BookingID])
	}

	// Every request under a deposit key: nothing asked twice but the steps the crashes
	// stopped.
	counts := map[string]int{}
	for _, c := range stripe.seen(acc, http.MethodPost, "") {
		if strings.HasPrefix(c.Key, "deposit-") && c.Failed == "" {
			counts[c.Key]++
		}
	}
	t.Logf("requests to Stripe under each deposit key: %v", counts)
	for k, n := range counts {
		if n != 1 && !(n == 2 && twice[k]) {
			t.Fatalf("Stripe saw %s %d times", k, n)
		}
	}
	posted(t, acc, "the captured deposit", func(p posting) bool {
		return p.BookingID == captured.BookingID && p.Line == "deposit_capture" && p.Account == "cash" && decimal.RequireFromString(p.Amount).Equal(decimal.RequireFromString("120.50"))
	})
	ledgerBalances(t, acc)
}
