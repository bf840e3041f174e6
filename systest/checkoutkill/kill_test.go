package checkoutkill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/testkit/eventually"
)

// guestPatience is how long a guest goes on retrying one step (a create under its
// Idempotency-Key, a guest, a confirm) that was not answered or answered "try again"
// (5xx, in_progress): far more than a restart and a janitor lease, so that running out of
// it means something is stuck, not that the machine is slow.
const guestPatience = 45 * time.Second

// attempt is one guest's try at a stay of its own: a checkout, and for every other one its
// guest and a confirm with a test card. No two attempts share a night, so each one's
// outcome is its own.
type attempt struct {
	n            int
	pid          int
	from, to     int
	key          string
	confirm      bool
	sent         bool   // its guest sent its checkout (the guests stop before the last ones)
	checkout     string // the checkout's id when POST /checkouts answered 201
	amount       string // its payment's amount
	taken        bool   // POST /checkouts answered dates_taken (a killed try of its own key held them)
	confirmedAs  int64  // the booking id the confirm answered (status booked), else 0
	confirmEnded string // what the confirm (or the guest step) finally answered
}

// TestKillDuringCheckouts: six guests make checkouts of three properties through edge, each
// of its own stay, and every other one gives its details and confirms with a test card;
// booking-svc is killed with SIGKILL once 12 checkouts are held and requests are in flight,
// started again on the same stores, and the guests go on (retrying, as a guest does, a step
// that was cut off or answered "try again") until 12 more are held. Then:
//   - every checkout answered 201 ends booked or not; one whose confirm answered booked is
//     booked, as that booking;
//   - every stay not booked — of a checkout held, or of a create that never held — is free
//     once the windows are over: a new checkout of it holds (polled up to a minute: the
//     verdict does not depend on the machine's speed);
//   - no ledger change is left (booking-svc's ledger_ops), no booking is left pending or
//     held, and every night of the account is held by a reserved booking, exactly the nights
//     of the booked checkouts;
//   - listbooking lists the booked checkouts' bookings, each once with one payment (of the
//     checkout's amount), and nothing else.
func TestKillDuringCheckouts(t *testing.T) {
	ensureRunning(t)
	ctx := context.Background()
	acc := newAccount(t)
	s := newSite(t, acc, "https://checkout-kill.example", "CKL1", "CKL2", "CKL3")

	const (
		guests    = 6
		perGuest  = 14
		killAfter = 12 // checkouts held before the kill, and after the restart before the end
	)
	attempts := make([]*attempt, guests*perGuest)
	for i := range attempts {
		from := 10 + 3*(i/len(s.props))
		attempts[i] = &attempt{n: i, pid: s.props[i%len(s.props)], from: from, to: from + 2, key: newKey(), confirm: i%2 == 0}
	}

	var (
		held, inFlight, cut atomic.Int64
		mu                  sync.Mutex
		failures            []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	// step sends one request until it is answered with something other than "try again":
	// a transport error (booking-svc killed mid-request, or down), a 5xx, a 429 or
	// in_progress is retried after a pause, up to guestPatience.
	step := func(what, method, path string, headers map[string]string, body any) (answer, bool) {
		deadline := time.Now().Add(guestPatience)
		for {
			inFlight.Add(1)
			r, err := s.send(method, path, headers, body)
			inFlight.Add(-1)
			a := decode(r)
			if err == nil && a.code < 500 && a.code != http.StatusTooManyRequests && a.errCode != "in_progress" {
				return a, true
			}
			cut.Add(1)
			if time.Now().After(deadline) {
				fail("%s: still not answered after %v: HTTP %d %s (%v)", what, guestPatience, a.code, a.body, err)
				return a, false
			}
			time.Sleep(100 * time.Millisecond) // a guest's pause before retrying, not a synchronization
		}
	}
	var wg sync.WaitGroup
	for g := range guests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(attempts) && !stopped(); i += guests {
				at := attempts[i]
				at.sent = true
				what := fmt.Sprintf("attempt %d (property %d, %s to %s)", at.n, at.pid, day(at.from), day(at.to))
				a, ok := step(what+": checkout", http.MethodPost, "/checkouts", map[string]string{"Idempotency-Key": at.key},
					stay(at.pid, at.from, at.to))
				switch {
				case !ok:
					continue
				case a.code == http.StatusConflict && a.errCode == "dates_taken":
					at.taken = true
					continue
				case a.code != http.StatusCreated || a.checkout.Status != "held":
					fail("%s: checkout answered HTTP %d %s", what, a.code, a.body)
					continue
				}
				at.checkout, at.amount = a.checkout.ID, a.checkout.Payment.Amount
				held.Add(1)
				if !at.confirm {
					continue
				}
				a, ok = step(what+": guest", http.MethodPost, "/checkouts/"+at.checkout+"/guest", nil, guestOf("Kill-"+strconv.Itoa(at.n)))
				switch {
				case !ok:
					continue
				case a.code == http.StatusConflict && a.errCode == "checkout_expired":
					at.confirmEnded = "guest: checkout_expired"
					continue
				case a.code != http.StatusOK:
					fail("%s: guest answered HTTP %d %s", what, a.code, a.body)
					continue
				}
				a, ok = step(what+": confirm", http.MethodPost, "/checkouts/"+at.checkout+"/confirm", nil, cardOf())
				switch {
				case !ok:
				case a.code == http.StatusConflict && a.errCode == "checkout_expired":
					at.confirmEnded = "checkout_expired"
				case a.code == http.StatusOK && a.checkout.Status == "booked" && a.checkout.Booking != nil:
					at.confirmedAs, at.confirmEnded = a.checkout.Booking.ID, "booked"
				default:
					fail("%s: confirm answered HTTP %d %s", what, a.code, a.body)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	stopGuests := sync.OnceFunc(func() { close(stop) })
	defer func() { stopGuests(); <-done }() // whatever happens, the guests stop before the test ends

	// The kill: once killAfter checkouts are held and at least two requests are in flight.
	eventually.Holds(t, fmt.Sprintf("%d checkouts held and requests in flight before the kill", killAfter), time.Minute, func() bool {
		return held.Load() >= killAfter && inFlight.Load() >= 2
	})
	flying, before := inFlight.Load(), cut.Load()
	svc.Kill()
	atKill := held.Load()
	t.Logf("SIGKILL with %d requests in flight, %d checkouts held", flying, atKill)
	began := time.Now()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted, ready in %v", time.Since(began).Round(time.Millisecond))
	eventually.Holds(t, fmt.Sprintf("%d more checkouts held after the restart", killAfter), time.Minute, func() bool {
		return held.Load() >= atKill+killAfter
	})
	stopGuests()
	<-done
	t.Logf("%d checkouts held in all; %d requests cut off or answered \"try again\" since the kill", held.Load(), cut.Load()-before)
	mu.Lock()
	for _, f := range failures {
		t.Error(f)
	}
	mu.Unlock()
	if t.Failed() {
		t.FailNow()
	}

	// Each checkout held ends booked or not; a confirm answered booked is that booking.
	booked := map[int64]*attempt{}
	var free []*attempt // stays that must be free once the windows are over
	tried := 0
	for _, at := range attempts {
		if at.checkout == "" {
			if at.sent { // never held for its guest (dates_taken, or cut off and given up)
				free = append(free, at)
			}
			continue
		}
		tried++
		var co checkoutJSON
		eventually.Holds(t, "checkout "+at.checkout+" ends", time.Minute, func() bool {
			r, err := s.send(http.MethodGet, "/checkouts/"+at.checkout, nil, nil)
			if err != nil || r.Code >= 500 {
				return false
			}
			a := decode(r)
			if a.code != http.StatusOK {
				t.Fatalf("checkout %s: HTTP %d %s", at.checkout, a.code, a.body)
			}
			co = a.checkout
			return co.Status != "held"
		})
		switch {
		case at.confirmedAs != 0 && (co.Status != "booked" || co.Booking == nil || co.Booking.ID != at.confirmedAs):
			t.Errorf("attempt %d: confirm answered booking %d, checkout %s reads %+v", at.n, at.confirmedAs, at.checkout, co)
		case co.Status == "booked" && co.Booking != nil:
			booked[co.Booking.ID] = at
		case co.Status == "booked":
			t.Errorf("attempt %d: checkout %s booked without a booking: %+v", at.n, at.checkout, co)
		default:
			free = append(free, at)
		}
	}
	t.Logf("%d checkouts held: %d booked, %d not; %d creates sent never held (dates_taken by a killed try of their own key: %d)",
		tried, len(booked), tried-len(booked), countSent(attempts)-tried, countTaken(attempts))

	// Every stay not booked is free after the windows: a new checkout of it holds (and is
	// cancelled at once, freeing it again).
	for _, at := range free {
		eventually.Holds(t, fmt.Sprintf("a new checkout of attempt %d's stay (property %d, %s to %s) holds", at.n, at.pid, day(at.from), day(at.to)),
			time.Minute, func() bool {
				r, err := s.send(http.MethodPost, "/checkouts", map[string]string{"Idempotency-Key": newKey()}, stay(at.pid, at.from, at.to))
				if err != nil || r.Code >= 500 {
					return false
				}
				a := decode(r)
				if a.code == http.StatusConflict && a.errCode == "dates_taken" {
					return false
				}
				if a.code != http.StatusCreated {
					t.Fatalf("a new checkout of attempt %d's stay: HTTP %d %s", at.n, a.code, a.body)
				}
				if r, err := s.send(http.MethodPost, "/checkouts/"+a.checkout.ID+"/cancel", nil, nil); err != nil || r.Code != http.StatusOK {
					t.Fatalf("cancel checkout %s: HTTP %d %s (%v)", a.checkout.ID, r.Code, r.Body, err)
				}
				return true
			})
	}

	// No ledger change left; nothing pending or held; every night held by a reserved booking,
	// exactly the booked checkouts' nights.
	var left string
	deadline := time.Now().Add(time.Minute)
	for left = leftOver(t, acc.AccountID, booked); left != "" && time.Now().Before(deadline); left = leftOver(t, acc.AccountID, booked) {
		time.Sleep(100 * time.Millisecond)
	}
	if left != "" {
		t.Fatalf("a minute after the last checkout: %s", left)
	}

	// listbooking: the booked checkouts, each once with one payment of its amount; nothing else.
	var list struct {
		Total int `json:"totalRecords"`
		List  []struct {
			BookingID int64 `json:"bookingId"`
			Payments  []struct {
				Amount decimal.Decimal `json:"amount"`
			} `json:"payments"`
		} `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"limit": 100}, &list)
	if list.Total != len(booked) || len(list.List) != len(booked) {
		t.Errorf("listbooking: %d bookings (%d listed), want the %d booked checkouts", list.Total, len(list.List), len(booked))
	}
	seen := map[int64]bool{}
	for _, b := range list.List {
		at, ok := booked[b.BookingID]
		switch {
		case !ok:
			t.Errorf("booking %d listed, not a booked checkout", b.BookingID)
		case seen[b.BookingID]:
			t.Errorf("booking %d listed twice", b.BookingID)
		case len(b.Payments) != 1 || !b.Payments[0].Amount.Equal(decimal.RequireFromString(at.amount)):
			t.Errorf("booking %d (checkout %s): payments %+v, want one of %s", b.BookingID, at.checkout, b.Payments, at.amount)
		}
		seen[b.BookingID] = true
	}
	if len(booked) == 0 {
		t.Error("no checkout was booked: the test showed nothing of confirms cut by the kill")
	}
}

// leftOver describes what the account still has that it should not once every checkout
// has ended: a ledger change (ledger_ops), a booking pending or held, a night held by a
// booking not reserved, or nights other than the booked checkouts'. "" when none.
func leftOver(t *testing.T, accountID string, booked map[int64]*attempt) string {
	t.Helper()
	ctx := context.Background()
	db := mongoDB.Database("vros_booking")
	ops, err := db.Collection("ledger_ops").CountDocuments(ctx, bson.D{{Key: "account_id", Value: accountID}})
	if err != nil {
		t.Fatal(err)
	}
	if ops > 0 {
		return fmt.Sprintf("%d ledger changes left", ops)
	}
	cur, err := db.Collection("bookings").Find(ctx, bson.D{{Key: "account_id", Value: accountID}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, d := range docs {
		id, _ := d["booking_id"].(int64)
		s, _ := d["status"].(string)
		status["booking:"+strconv.FormatInt(id, 10)] = s
		if s == "pending" || s == "held" {
			return fmt.Sprintf("booking %d is %s", id, s)
		}
	}
	cur, err = db.Collection("nights").Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(accountID+":")}}}})
	if err != nil {
		t.Fatal(err)
	}
	var nights []bson.M
	if err := cur.All(ctx, &nights); err != nil {
		t.Fatal(err)
	}
	for _, n := range nights {
		owner, _ := n["owner"].(string)
		if status[owner] != "reserved" {
			return fmt.Sprintf("night %v held by %s (%q)", n["_id"], owner, status[owner])
		}
		id, _ := strconv.ParseInt(strings.TrimPrefix(owner, "booking:"), 10, 64)
		if booked[id] == nil {
			return fmt.Sprintf("night %v held by reserved %s, not a booked checkout", n["_id"], owner)
		}
	}
	want := 0
	for _, at := range booked {
		want += at.to - at.from
	}
	if len(nights) != want {
		return fmt.Sprintf("%d nights held, want the %d of the booked checkouts", len(nights), want)
	}
	return ""
}

func countTaken(attempts []*attempt) int {
	n := 0
	for _, at := range attempts {
		if at.taken {
			n++
		}
	}
	return n
}

func countSent(attempts []*attempt) int {
	n := 0
	for _, at := range attempts {
		if at.sent {
			n++
		}
	}
	return n
}

// newKey is a fresh Idempotency-Key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
