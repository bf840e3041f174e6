package money

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/testkit/eventually"
)

// refundStep is the refunds' faults step between the gateway's answer and the record
// (booking-svc/internal/booking/refund.go).
const refundStep = "refund:answered"

// paymentOut is a payment of a booking answer, the refund fields (docs/money.md) included.
type paymentOut struct {
	PaymentID string          `json:"paymentId"`
	Amount    decimal.Decimal `json:"amount"`
	Currency  string          `json:"currency"`
	Method    string          `json:"method"`
	Kind      string          `json:"kind"`
	RefundOf  json.Number     `json:"refundOf"`
}

// refundOut is a booking answer's refund.
type refundOut struct {
	Status       string          `json:"status"`
	Policy       string          `json:"policy"`
	Percent      decimal.Decimal `json:"percent"`
	PolicyAmount decimal.Decimal `json:"policyAmount"`
	NetPaid      decimal.Decimal `json:"netPaid"`
	Amount       decimal.Decimal `json:"amount"`
	Override     bool            `json:"override"`
	Parts        []struct {
		Of            json.Number     `json:"refundOf"`
		PaymentID     json.Number     `json:"paymentId"`
		Amount        decimal.Decimal `json:"amount"`
		Method        string          `json:"method"`
		Status        string          `json:"status"`
		Attempts      int             `json:"attempts"`
		LastError     string          `json:"lastError"`
		NextAttemptAt string          `json:"nextAttemptAt"`
	} `json:"parts"`
}

// bookingOut is the part of interface B's booking the money tests read.
type bookingOut struct {
	BookingID  int64           `json:"bookingId"`
	Status     string          `json:"status"`
	Currency   string          `json:"currency"`
	GrandTotal decimal.Decimal `json:"grandTotal"`
	AmountPaid decimal.Decimal `json:"amountPaid"`
	Payments   []paymentOut    `json:"payments"`
	Refund     *refundOut      `json:"refund"`
	Deposit    *depositOut     `json:"depositHold"`
}

// depositOut is a booking answer's depositHold (docs/money.md).
type depositOut struct {
	Status           string              `json:"status"`
	Amount           decimal.Decimal     `json:"amount"`
	Currency         string              `json:"currency"`
	DueDate          string              `json:"dueDate"`
	HeldAt           *string             `json:"heldAt"`
	AuthorizationID  string              `json:"authorizationId"`
	Reauthorizations int                 `json:"reauthorizations"`
	ReleaseOn        string              `json:"releaseOn"`
	ReleasedAt       *string             `json:"releasedAt"`
	CapturedAmount   decimal.NullDecimal `json:"capturedAmount"`
	CaptureReason    string              `json:"captureReason"`
	CapturedAt       *string             `json:"capturedAt"`
	LastError        string              `json:"lastError"`
}

// refunds are the booking's refund payments.
func (b bookingOut) refunds() []paymentOut {
	var out []paymentOut
	for _, p := range b.Payments {
		if p.Amount.IsNegative() || p.Kind == "refund" {
			out = append(out, p)
		}
	}
	return out
}

// create books acc's property from day(from) to day(to), paid in full by card.
func (acc account) create(t *testing.T, from, to int, last string) bookingOut {
	t.Helper()
	var b bookingOut
	acc.b(t, "create", acc.cardGuest(from, to, last, true)).ok(t).data(t, &b)
	if len(b.Payments) != 1 || b.Payments[0].Method != "card" || !b.Payments[0].Amount.Equal(b.GrandTotal) {
		t.Fatalf("create: payments %+v, want one card charge of the grand total %s", b.Payments, b.GrandTotal)
	}
	return b
}

// get is booking id as interface B's listbooking answers it.
func (acc account) get(t *testing.T, id int64) bookingOut {
	t.Helper()
	var l struct {
		List []bookingOut `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": id}).ok(t).data(t, &l)
	if len(l.List) != 1 {
		t.Fatalf("listbooking of booking %d: %d bookings", id, len(l.List))
	}
	return l.List[0]
}

// refund waits until booking id's refund is as ok wants, and answers the booking.
func (acc account) refund(t *testing.T, id int64, what string, ok func(*refundOut) bool) bookingOut {
	t.Helper()
	var b bookingOut
	eventually.Holds(t, fmt.Sprintf("booking %d's refund %s", id, what), within, func() bool {
		b = acc.get(t, id)
		return b.Refund != nil && ok(b.Refund)
	})
	return b
}

// refundCalls are the refund requests of acc the proxy saw.
func refundCalls(acc account) []stripeCall { return stripe.seen(acc, http.MethodPost, "/v1/refunds") }

// intentOf is the id of the one PaymentIntent Stripe made for acc, the charge of its booking.
func intentOf(t *testing.T, acc account) string {
	t.Helper()
	var ids []string
	for _, c := range stripe.seen(acc, http.MethodPost, "/v1/payment_intents") {
		if c.Form.Get("capture_method") != "manual" {
			id, _ := c.Answer["id"].(string)
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("Stripe made %d charges for the account, want 1: %v", len(ids), ids)
	}
	return ids[0]
}

// minor is amount in cents (USD).
func minor(amount decimal.Decimal) string { return amount.Shift(2).StringFixed(0) }

// TestCancelRefunds: a live booking paid by card is cancelled through edge (the flexible
// policy of a booking without a rate plan, well before arrival: 100 %); the cancel's answer
// and listbooking show the refund succeeded, with a negative payment refund_of the charge;
// Stripe was asked once, for the grand total in cents on the charge's PaymentIntent, under
// the documented idempotency key; the ledger balances.
func TestCancelRefunds(t *testing.T) {
	acc := newAccount(t, true)
	b := acc.create(t, 40, 43, "Refunded")
	charge := b.Payments[0]

	var cancelled bookingOut
	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).ok(t).data(t, &cancelled)
	// The cancel attempts the refund at once (waiting for the money worker, every 100 ms
	// here, when it happens to hold the booking's refund), and answers what it did.
	if r := cancelled.Refund; r == nil || r.Status != "succeeded" || !r.Amount.Equal(b.GrandTotal) {
		t.Fatalf("the cancel's refund: %+v, want %s succeeded", r, b.GrandTotal)
	}
	got := acc.refund(t, b.BookingID, "succeeded", func(r *refundOut) bool { return r.Status == "succeeded" })
	checkRefunded(t, got, charge, b.GrandTotal)

	calls := refundCalls(acc)
	if len(calls) != 1 {
		t.Fatalf("Stripe saw %d refund requests, want 1: %+v", len(calls), calls)
	}
	c := calls[0]
	if pi := intentOf(t, acc); c.Form.Get("amount") != minor(b.GrandTotal) || c.Form.Get("payment_intent") != pi {
		t.Fatalf("the refund request: %v, want amount %s on %s", c.Form, minor(b.GrandTotal), pi)
	}
	if want := "refund-" + acc.AccountID + "-" + itoa(b.BookingID) + "-" + charge.PaymentID + "-1"; c.Key != want {
		t.Fatalf("the refund's Idempotency-Key %q, want %q", c.Key, want)
	}
	refundPosted(t, acc, b.BookingID)
}

// checkRefunded asserts that b's refund succeeded for amount, recorded as one negative card
// payment refunding charge.
func checkRefunded(t *testing.T, b bookingOut, charge paymentOut, amount decimal.Decimal) {
	t.Helper()
	if b.Status != "cancelled" && b.Status != "canceled" {
		t.Fatalf("booking %d is %s, want cancelled", b.BookingID, b.Status)
	}
	if b.Refund == nil || b.Refund.Status != "succeeded" || !b.Refund.Amount.Equal(amount) {
		t.Fatalf("listbooking's refund: %+v, want succeeded for %s", b.Refund, amount)
	}
	r := b.refunds()
	if len(r) != 1 || !r[0].Amount.Equal(amount.Neg()) || r[0].RefundOf.String() != charge.PaymentID || r[0].Method != "card" {
		t.Fatalf("refund payments %+v, want one of -%s refunding payment %s by card", r, amount, charge.PaymentID)
	}
	if !b.AmountPaid.IsZero() {
		t.Fatalf("amountPaid %s after a full refund, want 0", b.AmountPaid)
	}
}

// TestRefundRetried: Stripe fails the first refund request (HTTP 500); the cancel answers
// the refund pending with its next attempt; once booking-svc's clock passes the first retry
// wait the money worker retries, once, under the same key, and the refund is recorded once.
func TestRefundRetried(t *testing.T) {
	acc := newAccount(t, true)
	b := acc.create(t, 50, 52, "Retried")
	stripe.fail(acc, http.MethodPost, "/v1/refunds", 1, fail500)

	var cancelled bookingOut
	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).ok(t).data(t, &cancelled)
	if cancelled.Refund == nil || cancelled.Refund.Status != "pending" {
		t.Fatalf("the cancel's refund: %+v, want pending", cancelled.Refund)
	}
	// The first attempt (the cancel's, or the worker's if it took the part first) fails.
	failed := acc.refund(t, b.BookingID, "pending after a failed attempt", func(r *refundOut) bool {
		return r.Status == "pending" && len(r.Parts) == 1 && r.Parts[0].LastError != "" && r.Parts[0].NextAttemptAt != ""
	})
	if len(failed.refunds()) != 0 {
		t.Fatalf("a failed attempt recorded refunds: %+v", failed.refunds())
	}
	// Nothing is retried before the wait is over.
	if n := len(refundCalls(acc)); n != 1 {
		t.Fatalf("Stripe saw %d refund requests before the retry wait, want 1", n)
	}

	clock.Advance(t, 2*time.Minute) // the schedule's first wait is 1m
	got := acc.refund(t, b.BookingID, "retried", func(r *refundOut) bool { return r.Status == "succeeded" })
	checkRefunded(t, got, b.Payments[0], b.GrandTotal)
	calls := refundCalls(acc)
	if len(calls) != 2 || calls[0].Failed != fail500 || calls[1].Failed != "" || calls[0].Key != calls[1].Key {
		t.Fatalf("refund requests %+v, want the failed one and one retry under the same key", calls)
	}
	refundPosted(t, acc, b.BookingID)
}

// TestRefundCrash: booking-svc dies between Stripe's answer to the refund and the record of
// it (the refunds' faults step); restarted on the same stores, the refund is found and
// recorded once: one refund payment on the booking, every request to Stripe under the one
// key (Stripe answers a repeated key with the refund it made).
func TestRefundCrash(t *testing.T) {
	acc := newAccount(t, true)
	b := acc.create(t, 60, 62, "Crashed")

	faults.Arm(acc.AccountID, refundStep)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		_, _ = acc.direct(&http.Client{Timeout: within}, "cancel", obj{"bookingId": b.BookingID})
	}()
	faults.Stopped(t, refundStep, within)
	if n := len(refundCalls(acc)); n != 1 {
		t.Fatalf("Stripe saw %d refund requests before the crash, want 1", n)
	}
	restart(t)
	<-answered

	clock.Advance(t, 2*time.Minute) // past any retry wait of the attempt that died
	eventually.Holds(t, "the refund is recorded after the restart", within, func() bool {
		r := acc.get(t, b.BookingID).Refund
		return r != nil && r.Status == "succeeded"
	})
	got := acc.get(t, b.BookingID)
	checkRefunded(t, got, b.Payments[0], b.GrandTotal)
	calls := refundCalls(acc)
	if len(calls) < 2 {
		t.Fatalf("Stripe saw %d refund requests, want the one before the crash and its repeat", len(calls))
	}
	for _, c := range calls {
		if c.Key != calls[0].Key {
			t.Fatalf("refund requests under keys %q and %q: want one key", calls[0].Key, c.Key)
		}
	}
	refundPosted(t, acc, b.BookingID)
}

// TestRefundDropped: the connection to Stripe drops before any answer, on every request of
// the cancel's attempt; the refund stays pending (Stripe may
// or may not have made it), the worker repeats it under the same key once the wait is
// over, and it is recorded once.
func TestRefundDropped(t *testing.T) {
	acc := newAccount(t, true)
	b := acc.create(t, 70, 72, "Dropped")
	// Every connection drops (Go's transport and Stripe's library repeat some at once) until
	// the cancel has answered.
	stripe.fail(acc, http.MethodPost, "/v1/refunds", 1000, failDrop)

	var cancelled bookingOut
	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).ok(t).data(t, &cancelled)
	if cancelled.Refund == nil || cancelled.Refund.Status != "pending" {
		t.Fatalf("the cancel's refund after dropped connections: %+v, want pending", cancelled.Refund)
	}
	acc.refund(t, b.BookingID, "pending after a dropped attempt", func(r *refundOut) bool {
		return r.Status == "pending" && len(r.Parts) == 1 && r.Parts[0].LastError != ""
	})
	stripe.clear(acc)
	clock.Advance(t, 2*time.Minute)
	got := acc.refund(t, b.BookingID, "repeated", func(r *refundOut) bool { return r.Status == "succeeded" })
	checkRefunded(t, got, b.Payments[0], b.GrandTotal)
	calls := refundCalls(acc)
	if n := len(calls); n < 2 || calls[0].Failed != failDrop || calls[n-1].Failed != "" || calls[n-2].Failed != failDrop {
		t.Fatalf("refund requests %+v, want dropped ones and one answered", calls)
	}
	for _, c := range calls {
		if c.Key != calls[0].Key {
			t.Fatalf("refund requests under keys %q and %q: want one key", calls[0].Key, c.Key)
		}
	}
	refundPosted(t, acc, b.BookingID)
}
