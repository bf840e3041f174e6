package crash

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// interrupted is a request stopped at one step of its change.
type interrupted struct {
	step   string // "create:claimed"…
	key    string // its Idempotency-Key
	body   string
	sent   time.Time
	target int64 // the booking an update or cancel changes
	// what the change asks for
	checkin, checkout string
	last              string // guest's last name of a create
}

func (r interrupted) action() string { return strings.SplitN(r.step, ":", 2)[0] }

// The steps of each change, in order (booking-svc/internal/booking; "intent" and "written"
// are the outbox intent and the document write of store.UpdateBooking).
var (
	createSteps = []string{"op", "pending", "claimed", "intent", "written", "reserved"}
	updateSteps = []string{"op", "claimed", "intent", "written", "updated", "released"}
	cancelSteps = []string{"op", "intent", "written", "cancelled", "released"}
)

// TestCrashAndRestart stops a create, an update and a cancel at every step of their change,
// restarts booking-svc against the same stores, and checks that: the bookings acknowledged
// before the crash are all there; the events of everyone else flow at once (catalog-svc
// shows another tenant's new booking within seconds); every Idempotency-Key of a stopped
// request resolves within its lease to the committed outcome or a fresh execution, never a
// second booking; after the janitor no night is held by anyone but the booking whose
// document lists it; failed attempts keep no card; and catalog-svc's reservations converge
// to the bookings.
func TestCrashAndRestart(t *testing.T) {
	start := time.Now()
	ctx := context.Background()
	victim, bystander := newAccount(t), newAccount(t)
	pv, pb := bookable(t, victim, "CRV"), bookable(t, bystander, "CRB")
	compV, compB := victim.AccountID+"_"+strconv.Itoa(pv), bystander.AccountID+"_"+strconv.Itoa(pb)

	// Acknowledged before the crash: plain bookings, and those the stopped updates and
	// cancels change.
	create := func(acc account, pid, from, to int, last string) bookingData {
		t.Helper()
		var d bookingData
		acc.b(t, "create", guest(pid, day(from), day(to), last)).ok(t, &d)
		return d
	}
	var acked []bookingData
	for i := 0; i < 3; i++ {
		acked = append(acked, create(victim, pv, 10+2*i, 11+2*i, "Acked"))
	}
	updates := map[string]bookingData{}
	for k, s := range updateSteps {
		updates[s] = create(victim, pv, 60+6*k, 62+6*k, "ToUpdate")
	}
	cancels := map[string]bookingData{}
	for k, s := range cancelSteps {
		cancels[s] = create(victim, pv, 110+3*k, 112+3*k, "ToCancel")
	}

	// Stop one request at every step, one after the other.
	var stopped []interrupted
	stop := func(r interrupted) {
		t.Helper()
		faults.Arm(victim.AccountID, r.step)
		r.sent = time.Now()
		answered := make(chan string, 1)
		go func() {
			// The answer never comes: the handler is stopped, then "dies".
			res, err := victim.direct(&http.Client{Timeout: 30 * time.Second}, r.action(), r.key, r.body)
			answered <- fmt.Sprintf("HTTP %d %s (%v)", res.Code, res.Body, err)
		}()
		select {
		case got := <-faults.Frozen:
			if got != r.step {
				t.Fatalf("stopped at %s, armed %s", got, r.step)
			}
		case a := <-answered:
			t.Fatalf("%s was never reached: %s", r.step, a)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was never reached", r.step)
		}
		stopped = append(stopped, r)
	}
	for k, s := range createSteps {
		r := interrupted{step: "create:" + s, key: "crash-create-" + s, checkin: day(30 + 3*k), checkout: day(32 + 3*k),
			last: "Crash-" + s}
		r.body = apitest.JSON(guest(pv, r.checkin, r.checkout, r.last))
		stop(r)
	}
	for k, s := range updateSteps {
		b := updates[s]
		r := interrupted{step: "update:" + s, key: "crash-update-" + s, target: b.BookingID, checkin: day(61 + 6*k), checkout: day(63 + 6*k)}
		r.body = apitest.JSON(obj{"bookingId": b.BookingID, "checkin": r.checkin, "checkout": r.checkout})
		stop(r)
	}
	for _, s := range cancelSteps {
		b := cancels[s]
		r := interrupted{step: "cancel:" + s, key: "crash-cancel-" + s, target: b.BookingID}
		r.body = apitest.JSON(obj{"bookingId": b.BookingID})
		stop(r)
	}
	// Stopped too, but never retried (no Idempotency-Key): only the janitor finishes them.
	var abandoned []interrupted
	for k, s := range []string{"create:claimed", "create:written", "update:claimed", "update:written", "cancel:written"} {
		r := interrupted{step: s}
		switch r.action() {
		case "create":
			r.checkin, r.checkout, r.last = day(130+3*k), day(132+3*k), "Abandoned-"+s
			r.body = apitest.JSON(guest(pv, r.checkin, r.checkout, r.last))
		case "update":
			b := create(victim, pv, 140+4*k, 142+4*k, "ToUpdateAbandoned")
			r.target, r.checkin, r.checkout = b.BookingID, day(141+4*k), day(143+4*k)
			r.body = apitest.JSON(obj{"bookingId": b.BookingID, "checkin": r.checkin, "checkout": r.checkout})
		case "cancel":
			b := create(victim, pv, 170, 172, "ToCancelAbandoned")
			r.target = b.BookingID
			r.body = apitest.JSON(obj{"bookingId": b.BookingID})
		}
		stop(r)
		abandoned = append(abandoned, r)
	}
	stopped = stopped[:len(stopped)-len(abandoned)]

	// Acknowledged while the others hang.
	acked = append(acked, create(victim, pv, 20, 22, "Acked"))

	// The process dies; booking-svc starts again on the same stores.
	killed := time.Now()
	faults.Kill()
	st.StopBooking()
	if err := st.StartBooking(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests stopped at every step (%d of them never retried); booking-svc restarted in %v", len(stopped)+len(abandoned),
		len(abandoned), time.Since(killed).Round(time.Millisecond))

	// Events of everyone else flow: another tenant's new booking reaches catalog-svc.
	restarted := time.Now()
	fresh := create(bystander, pb, 50, 52, "Bystander")
	eventually.Holds(t, "another tenant's booking in catalog-svc after the restart", 10*time.Second, func() bool {
		return reservations(t, bystander, compB)[fresh.BookingID] == [3]string{day(50), day(52), "reserved"}
	})
	t.Logf("another tenant's booking visible in catalog-svc %v after the restart", time.Since(restarted).Round(time.Millisecond))

	// Every key resolves within its lease, to the committed outcome or a fresh execution.
	var slowest time.Duration
	for _, r := range stopped {
		res, took := resolve(t, victim, r)
		slowest = max(slowest, took)
		var d bookingData
		res.ok(t, &d)
		switch r.action() {
		case "create":
			if d.Status != "reserved" || date(d.Checkin) != r.checkin || date(d.Checkout) != r.checkout {
				t.Errorf("%s: retry answered %s", r.step, post(res.Body))
			}
			// Exactly one booking for the request, whatever the step.
			var list struct {
				Total int           `json:"totalRecords"`
				List  []bookingData `json:"listBooking"`
			}
			victim.b(t, "listbooking", obj{"keyword": r.last}).ok(t, &list)
			if list.Total != 1 || list.List[0].BookingID != d.BookingID {
				t.Errorf("%s: %d bookings for one request (answered %d): %+v", r.step, list.Total, d.BookingID, list.List)
			}
		case "update":
			if d.BookingID != r.target || date(d.Checkin) != r.checkin || date(d.Checkout) != r.checkout {
				t.Errorf("%s: retry answered %s", r.step, post(res.Body))
			}
		case "cancel":
			if d.BookingID != r.target {
				t.Errorf("%s: retry answered %s", r.step, post(res.Body))
			}
		}
		again, err := victim.direct(client, r.action(), r.key, r.body)
		if err != nil || again.Code != res.Code || string(again.Body) != string(res.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: second retry HTTP %d %s (%v), want the first answer replayed", r.step, again.Code, again.Body, err)
		}
	}
	t.Logf("all %d keys resolved within their lease (%v); the last, retried in turn, %v after its request", len(stopped), idempotencyLease,
		slowest.Round(time.Millisecond))

	// The janitor finishes what is left; then the ledger is exactly the bookings.
	eventually.Holds(t, "no unfinished ledger change", janitorLease+5*time.Second, func() bool {
		n, err := mongoDB.Database("vros_booking").Collection("ledger_ops").CountDocuments(ctx, bson.D{{Key: "account_id", Value: victim.AccountID}})
		return err == nil && n == 0
	})
	t.Logf("the janitor finished every abandoned change %v after the restart (lease %v)", time.Since(restarted).Round(time.Millisecond), janitorLease)
	docs := bookingsOf(t, victim)
	held := nights(t, victim, pv, 0, 180)
	want := map[string]string{}
	for id, b := range docs {
		if b["status"] != "reserved" {
			continue
		}
		for _, n := range b["nights"].(bson.A) {
			want[n.(string)] = "booking:" + strconv.FormatInt(id, 10)
		}
	}
	for d, o := range want {
		if held[d] != o {
			t.Errorf("night %s of a reserved booking held by %q, want %s", d, held[d], o)
		}
	}
	for d, o := range held {
		if want[d] != o {
			t.Errorf("orphan night %s held by %s", d, o)
		}
	}

	// No acknowledged booking lost; the stopped changes were made once.
	for _, b := range acked {
		if d := docs[b.BookingID]; d == nil || d["status"] != "reserved" {
			t.Errorf("acknowledged booking %d lost: %v", b.BookingID, d)
		}
	}
	for _, r := range stopped {
		switch d := docs[r.target]; r.action() {
		case "update":
			if d["status"] != "reserved" || d["checkin"] != r.checkin {
				t.Errorf("%s: booking %d is %v from %v", r.step, r.target, d["status"], d["checkin"])
			}
		case "cancel":
			if d["status"] != "cancelled" {
				t.Errorf("%s: booking %d is %v", r.step, r.target, d["status"])
			}
		}
	}
	for _, r := range abandoned {
		switch r.step {
		case "create:written": // the document was reserved: it stays a booking
			var list struct {
				Total int `json:"totalRecords"`
			}
			victim.b(t, "listbooking", obj{"keyword": r.last}).ok(t, &list)
			if list.Total != 1 {
				t.Errorf("%s (abandoned): %d bookings listed, want the one written", r.step, list.Total)
			}
		case "update:claimed": // not written: the booking keeps its dates
			if d := docs[r.target]; d["status"] != "reserved" || d["checkin"] == r.checkin {
				t.Errorf("%s (abandoned): booking %d is %v from %v", r.step, r.target, d["status"], d["checkin"])
			}
		case "update:written":
			if d := docs[r.target]; d["status"] != "reserved" || d["checkin"] != r.checkin {
				t.Errorf("%s (abandoned): booking %d is %v from %v", r.step, r.target, d["status"], d["checkin"])
			}
		case "cancel:written":
			if d := docs[r.target]; d["status"] != "cancelled" {
				t.Errorf("%s (abandoned): booking %d is %v", r.step, r.target, d["status"])
			}
		}
	}
	failed := 0
	for id, b := range docs {
		if b["status"] == "failed" {
			failed++
			if _, ok := b["card"]; ok {
				t.Errorf("failed attempt %d keeps its card", id)
			}
		}
		if b["status"] == "pending" {
			t.Errorf("booking %d still pending", id)
		}
	}

	// By now the relay's sweep has adopted every intent the stopped requests left (outbox
	// lease 1 s, sweep every 2 s): events of everyone else must still flow.
	later := create(bystander, pb, 60, 62, "Bystander")
	eventually.Holds(t, "another tenant's booking in catalog-svc once the stranded intents were adopted", 10*time.Second, func() bool {
		return reservations(t, bystander, compB)[later.BookingID] == [3]string{day(60), day(62), "reserved"}
	})

	// catalog-svc converges to the bookings.
	wantRes := map[int64][3]string{}
	for id, b := range docs {
		if s := b["status"].(string); s == "reserved" || s == "cancelled" {
			wantRes[id] = [3]string{b["checkin"].(string), b["checkout"].(string), s}
		}
	}
	var lastGot map[int64][3]string
	defer func() {
		if t.Failed() {
			t.Logf("catalog: %v\nbookings: %v", lastGot, wantRes)
		}
	}()
	eventually.Holds(t, "catalog-svc reservations equal the bookings", 10*time.Second, func() bool {
		got := reservations(t, victim, compV)
		lastGot = got
		if len(got) != len(wantRes) {
			return false
		}
		for id, w := range wantRes {
			if got[id] != w {
				return false
			}
		}
		return true
	})
	t.Logf("%d bookings and %d failed attempts; ledger and catalog agree; whole test %v",
		len(wantRes), failed, time.Since(start).Round(time.Millisecond))
}

// resolve retries a stopped request until its key stops answering "in progress", and
// returns the answer and how long after the stopped request it came. A retry sent once the
// lease is over (with half a second for the clocks of this test) must not be "in progress".
func resolve(t *testing.T, acc account, r interrupted) (response, time.Duration) {
	t.Helper()
	leaseOver := r.sent.Add(idempotencyLease + 500*time.Millisecond)
	for {
		asked := time.Now()
		res, err := acc.direct(client, r.action(), r.key, r.body)
		if err != nil {
			t.Fatal(err)
		}
		if res.Code != http.StatusConflict {
			return res, time.Since(r.sent)
		}
		if asked.After(leaseOver) {
			t.Fatalf("%s: key still answers %s %v after the request, lease %v", r.step, res.Body, asked.Sub(r.sent), idempotencyLease)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reservations reads catalog-svc's reservations of a property: booking id → stay and status.
func reservations(t *testing.T, acc account, comp string) map[int64][3]string {
	t.Helper()
	r := acc.b(t, "getreservations", obj{"propertyId": comp})
	out := map[int64][3]string{}
	if r.Code != http.StatusOK {
		return out
	}
	var res struct {
		Reservations []struct {
			ID, StartDate, EndDate, Status string
		} `json:"reservations"`
	}
	r.ok(t, &res)
	for _, x := range res.Reservations {
		_, idText, _ := strings.Cut(x.ID, "_")
		id, _ := strconv.ParseInt(idText, 10, 64)
		out[id] = [3]string{date(x.StartDate), date(x.EndDate), x.Status}
	}
	return out
}

// date is the date part of an answer's date (and time).
func date(s string) string { return s[:min(10, len(s))] }
