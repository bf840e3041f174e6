package checkoutkill

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// gateway is booking-svc's Stripe (VROS_BOOKING_STRIPE_API_URL): stripe-mock behind the
// test's refundKiller.
var gateway *refundKiller

// refundKiller is a reverse proxy in front of stripe-mock that records every request's
// method, path, secret key and Idempotency-Key, and once armed, on the first POST /v1/refunds
// of the armed secret key: passes it to stripe-mock (the refund is made at the gateway),
// then kills booking-svc with SIGKILL before the answer is written back, so that booking-svc
// dies after the gateway answered and before it could record anything.
type refundKiller struct {
	URL string

	srv    *httptest.Server
	mu     sync.Mutex
	calls  []gatewayCall
	armed  string        // the secret key whose next refund kills booking-svc ("": none)
	killed chan struct{} // closed once the armed kill is done
}

// gatewayCall is one request the proxy saw.
type gatewayCall struct{ Method, Path, Secret, Key string }

func newRefundKiller(upstream string) *refundKiller {
	target, err := url.Parse(upstream)
	if err != nil {
		panic(err)
	}
	k := &refundKiller{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if !k.killsAt(resp.Request) {
			return nil
		}
		// stripe-mock has answered (the refund is made); booking-svc dies before reading it.
		svc.Kill()
		close(k.killed)
		return nil
	}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		k.mu.Lock()
		k.calls = append(k.calls, gatewayCall{Method: r.Method, Path: r.URL.Path, Secret: secret, Key: r.Header.Get("Idempotency-Key")})
		k.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	k.URL = k.srv.URL
	return k
}

func (k *refundKiller) Close() { k.srv.Close() }

// arm makes the next refund request made with secret kill booking-svc; the channel is
// closed once it did.
func (k *refundKiller) arm(secret string) <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.armed, k.killed = secret, make(chan struct{})
	return k.killed
}

// killsAt says whether r is the armed refund request, and disarms the proxy if it is.
func (k *refundKiller) killsAt(r *http.Request) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	secret, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if k.armed == "" || secret != k.armed || r.Method != http.MethodPost || r.URL.Path != "/v1/refunds" {
		return false
	}
	k.armed = ""
	return true
}

// refunds are the refund requests made with secret so far, in order.
func (k *refundKiller) refunds(secret string) []gatewayCall {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []gatewayCall
	for _, c := range k.calls {
		if c.Secret == secret && c.Method == http.MethodPost && c.Path == "/v1/refunds" {
			out = append(out, c)
		}
	}
	return out
}

// refunded is the part of interface B's booking the refund test reads (docs/money.md).
type refunded struct {
	BookingID  int64           `json:"bookingId"`
	Status     string          `json:"status"`
	GrandTotal decimal.Decimal `json:"grandTotal"`
	Refund     *struct {
		Status string          `json:"status"`
		Amount decimal.Decimal `json:"amount"`
	} `json:"refund"`
	Payments []struct {
		PaymentID json.Number     `json:"paymentId"`
		Amount    decimal.Decimal `json:"amount"`
		RefundOf  json.Number     `json:"refundOf"`
	} `json:"payments"`
}

// TestKillBetweenRefundAndRecord: issue 33's "a kill -9 between the gateway's answer and
// the record leaves one refund, not two, after restart" with a real SIGKILL (systest/money's
// TestRefundCrash stops booking-svc in process at the step refund:answered). A live
// account's booking paid by card through stripe-mock is cancelled through edge; the proxy
// passes the cancel's refund to stripe-mock and kills booking-svc before answering it.
// booking-svc started again on the same stores still has the booking cancelled (written
// before the refund was attempted) and its refund pending; once the dead attempt's lease is
// over, the money worker repeats the refund under the same Idempotency-Key (stripe-mock, as
// Stripe, answers it again) and records it once: one negative payment refunding the charge.
func TestKillBetweenRefundAndRecord(t *testing.T) {
	ensureRunning(t)
	acc := accountOf(t, "Refund Kill Owner", false)
	pid := bookable(t, acc, "RFK1")
	secret := "sk_test_refundkill" + acc.AccountID
	acc.a(t, "property-method", obj{"internal_code": "RFK1",
		"stripe": obj{"secret_key": secret, "public_key": "pk_test_refundkill" + acc.AccountID}}, nil)
	waitPriced(t, acc, pid)

	var b refunded
	acc.b(t, "create", apitest.CardGuest(pid, 40, 43, "Killed", true), &b)
	if len(b.Payments) != 1 || !b.Payments[0].Amount.Equal(b.GrandTotal) {
		t.Fatalf("create: payments %+v, want one card charge of the grand total %s", b.Payments, b.GrandTotal)
	}
	charge := b.Payments[0].PaymentID

	killed := gateway.arm(secret)
	// The cancel's own request dies with booking-svc: edge answers an error, or nothing.
	r, err := apitest.Send(client, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil,
		acc.BBody("cancel", obj{"bookingId": b.BookingID}))
	t.Logf("the cancel cut by the kill answered HTTP %d %s (%v)", r.Code, r.Body, err)
	select {
	case <-killed:
	case <-time.After(time.Minute): // liveness only: the kill comes during the cancel
		t.Fatal("no refund request reached the gateway: booking-svc was not killed")
	}
	if n := len(gateway.refunds(secret)); n != 1 {
		t.Fatalf("the gateway saw %d refund requests before the kill, want 1", n)
	}
	if err := svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}

	get := func() refunded {
		var l struct {
			List []refunded `json:"listBooking"`
		}
		acc.b(t, "listbooking", obj{"bookingId": b.BookingID}, &l)
		if len(l.List) != 1 {
			t.Fatalf("listbooking of booking %d: %d bookings", b.BookingID, len(l.List))
		}
		return l.List[0]
	}
	// The cancel was recorded before the refund was attempted: it survived the kill, and
	// nothing of the refund is recorded while it is pending.
	after := get()
	if (after.Status != "cancelled" && after.Status != "canceled") || after.Refund == nil {
		t.Fatalf("after the restart booking %d is %s with refund %+v, want cancelled with a refund", b.BookingID, after.Status, after.Refund)
	}
	if after.Refund.Status == "pending" && len(after.Payments) != 1 {
		t.Fatalf("a pending refund with payments %+v recorded, want only the charge", after.Payments)
	}

	var got refunded
	eventually.Holds(t, "the refund is recorded after the restart", time.Minute, func() bool {
		got = get()
		return got.Refund != nil && got.Refund.Status == "succeeded"
	})
	if !got.Refund.Amount.Equal(b.GrandTotal) {
		t.Errorf("refund of %s, want the grand total %s", got.Refund.Amount, b.GrandTotal)
	}
	var refunds int
	for _, p := range got.Payments {
		if p.PaymentID == charge {
			continue
		}
		refunds++
		if !p.Amount.Equal(b.GrandTotal.Neg()) || p.RefundOf != charge {
			t.Errorf("refund payment %+v, want -%s refunding payment %s", p, b.GrandTotal, charge)
		}
	}
	if refunds != 1 {
		t.Errorf("%d refund payments %+v, want one", refunds, got.Payments)
	}
	calls := gateway.refunds(secret)
	t.Logf("refund %s after the restart, then succeeded; %d refund requests at the gateway", after.Refund.Status, len(calls))
	if len(calls) < 2 {
		t.Fatalf("the gateway saw %d refund requests, want the one cut by the kill and its repeat", len(calls))
	}
	for _, c := range calls {
		if c.Key == "" || c.Key != calls[0].Key {
			t.Fatalf("refund requests under Idempotency-Keys %q and %q: want one key", calls[0].Key, c.Key)
		}
	}
}
