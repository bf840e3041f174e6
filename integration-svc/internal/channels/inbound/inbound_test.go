package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
	"github.com/vros/vros/integration-svc/internal/channels/inboundstore"
	"github.com/vros/vros/integration-svc/internal/channels/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "chinbound_test", &db, nil) }

var accounts atomic.Int64

type fixture struct {
	acct  string
	conn  channel.Connection
	p     *inbound.Processor
	st    *inboundstore.Store
	led   *ledger
	feed  *feed
	log   *store.Log
	confl *store.Conflicts
	hooks *emitter
	cs    *store.Connections
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := inboundstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := seal.New(seal.NewKey())
	chs, err := store.Open(ctx, db, box)
	if err != nil {
		t.Fatal(err)
	}
	acct := fmt.Sprintf("inb%d-%d", time.Now().UnixNano()%1e6, accounts.Add(1))
	conn := channel.Connection{Account: acct, ID: 4, Adapter: channel.Channex, Endpoint: "https://channex.example", Channel: "channex",
		Credentials: channel.Credentials{APIKey: "key"}, Enabled: true, InboundToken: "tok-" + acct, Days: 500, CreatedAt: time.Now().UTC()}
	if err := chs.Connections.AddConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if err := chs.Connections.AddMapping(ctx, channel.Mapping{Account: acct, ConnectionID: 4, PropertyID: 12, InternalCode: "P12",
		RemotePropertyID: "HOTEL1", RoomTypeID: "ROOM1", RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: "STD"},
			{RatePlanID: 3, RemoteRatePlanID: "BAR"}}, Enabled: true, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{acct: acct, conn: conn, st: st, led: newLedger(), feed: &feed{}, log: chs.Log, confl: chs.Conflicts, hooks: &emitter{},
		cs: chs.Connections}
	f.p = f.processor(nil)
	return f
}

// processor is a processor over f's ports (a "replica"; crash: its Crash hook).
func (f *fixture) processor(crash func(step, rev string)) *inbound.Processor {
	return &inbound.Processor{Connections: f.cs, Log: f.log, Conflicts: f.confl, Revisions: f.st, Leases: f.st, Booking: f.led, Hooks: f.hooks,
		Adapters: map[string]channel.Adapter{channel.Channex: f.feed}, Lease: time.Minute, Holder: "test", Wait: 5 * time.Second, Crash: crash}
}

// logged counts the log entries of kind and status.
func (f *fixture) logged(t *testing.T, kind, status string) int {
	t.Helper()
	es, err := f.log.List(context.Background(), f.acct, channel.LogFilter{Kind: kind, Status: status, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// conflicts are the account's conflicts.
func (f *fixture) conflicts(t *testing.T) []channel.Conflict {
	t.Helper()
	ks, err := f.confl.List(context.Background(), f.acct, false)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func (f *fixture) receive(t *testing.T, revs ...channel.Revision) []channel.Applied {
	t.Helper()
	out, err := f.p.Receive(context.Background(), f.conn, revs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOutOfOrder: a modification before its new revision is held (logged held, answered
// with no booking), then applied right after the new one arrives; a cancellation before its
// new revision likewise, ending cancelled with its nights free.
func TestOutOfOrder(t *testing.T) {
	f := newFixture(t)
	mod := revision("modified", "R1", "r2", 2, "2027-03-05", "2027-03-09")
	got := f.receive(t, mod)
	if got[0].RevisionID != "r2" || got[0].BookingID != 0 || got[0].Conflict != nil {
		t.Fatalf("the early modification: %+v", got)
	}
	if f.logged(t, channel.KindReservation, channel.StatusHeld) != 1 || f.led.bookings() != 0 {
		t.Fatalf("held: %d log entries, %d bookings", f.logged(t, channel.KindReservation, channel.StatusHeld), f.led.bookings())
	}
	got = f.receive(t, revision("new", "R1", "r1", 1, "2027-03-01", "2027-03-04"))
	b, ok := f.led.booking("R1")
	if !ok || got[0].BookingID != b.id || b.in != "2027-03-05" || b.version != 2 || b.pid != 12 {
		t.Fatalf("after the new revision: %+v %+v", got, b)
	}
	if st, err := f.st.Get(context.Background(), f.acct, 4, "r2"); err != nil || st.State != inbound.StateApplied || st.BookingID != b.id ||
		st.Guest.Email != "" || st.Raw != nil {
		t.Fatalf("the held revision now: %+v %v (content dropped once final)", st, err)
	}
	if rq := f.led.requests[len(f.led.requests)-1]; rq.RatePlanID != 3 || rq.PropertyID != 12 {
		t.Errorf("the plan and property sent: %+v", rq)
	}

	// A cancellation before its new revision.
	got = f.receive(t, revision("cancelled", "R2", "c2", 5, "2027-04-01", "2027-04-03"))
	if got[0].BookingID != 0 || f.led.callsOf("c2") != 1 {
		t.Fatalf("the early cancellation: %+v", got)
	}
	f.receive(t, revision("new", "R2", "c1", 4, "2027-04-01", "2027-04-03"))
	if b, _ := f.led.booking("R2"); b.status != "cancelled" || f.led.callsOf("c2") != 2 {
		t.Fatalf("after the new revision: %+v", b)
	}
	if n := len(f.led.nights); n != 4 {
		t.Fatalf("%d nights held, want R1's 4", n)
	}
}

// TestDuplicateRevision: the same revision pushed twice is applied once; the second is
// logged duplicate and answered the same booking.
func TestDuplicateRevision(t *testing.T) {
	f := newFixture(t)
	r := revision("new", "R1", "r1", 1, "2027-05-01", "2027-05-04")
	a := f.receive(t, r)
	b := f.receive(t, r)
	if a[0].BookingID == 0 || b[0].BookingID != a[0].BookingID || f.led.callsOf("r1") != 1 || f.led.bookings() != 1 {
		t.Fatalf("twice: %+v %+v, %d calls", a, b, f.led.callsOf("r1"))
	}
	if n := f.logged(t, channel.KindReservation, channel.StatusDuplicate); n != 1 {
		t.Fatalf("%d duplicate entries", n)
	}
	// Twice in one message too.
	c := f.receive(t, revision("modified", "R1", "r2", 2, "2027-05-02", "2027-05-04"), revision("modified", "R1", "r2", 2, "2027-05-02", "2027-05-04"))
	if c[0].BookingID != a[0].BookingID || c[1].BookingID != a[0].BookingID || f.led.callsOf("r2") != 1 {
		t.Fatalf("twice in one message: %+v, %d calls", c, f.led.callsOf("r2"))
	}
}

// TestConflictRecordedOnceAndAcked: a new revision on taken nights is a conflict — stored
// once, raised once as channel.conflict, logged, acknowledged; served again (its ack lost)
// it is a duplicate acknowledged again, never a second conflict. A room type no property is
// mapped to is a conflict too.
func TestConflictRecordedOnceAndAcked(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.led.take(12, "2027-06-02", "2027-06-03", 55)
	f.feed.serve(revision("new", "R1", "r1", 1, "2027-06-01", "2027-06-04"))
	if err := f.p.Pull(ctx, f.conn); err != nil {
		t.Fatal(err)
	}
	if f.feed.acked("r1") != 1 || len(f.conflicts(t)) != 1 || f.hooks.count() != 1 || f.logged(t, channel.KindReservation, channel.StatusConflict) != 1 {
		t.Fatalf("acks %d, conflicts %d, events %d", f.feed.acked("r1"), len(f.conflicts(t)), f.hooks.count())
	}
	k := f.conflicts(t)[0]
	if k.Reason != channel.ReasonNightsTaken || fmt.Sprint(k.Nights) != "[2027-06-02]" || fmt.Sprint(k.BookingIDs) != "[55]" ||
		k.GuestName != "Ada Byron" || k.PropertyID != 12 || k.Total != "300.00" {
		t.Fatalf("conflict: %+v", k)
	}
	for _, ev := range f.hooks.evs {
		if ev.Type != webhook.ChannelConflict || ev.PropertyID != 12 || has([]string{string(ev.Data)}, "Ada") {
			t.Fatalf("event: %+v %s", ev, ev.Data)
		}
	}
	// The ack was lost: the feed serves the revision again.
	f.feed.serve(revision("new", "R1", "r1", 1, "2027-06-01", "2027-06-04"))
	if err := f.p.Pull(ctx, f.conn); err != nil {
		t.Fatal(err)
	}
	if f.feed.acked("r1") != 2 || len(f.conflicts(t)) != 1 || f.hooks.count() != 1 || f.led.callsOf("r1") != 1 ||
		f.logged(t, channel.KindReservation, channel.StatusDuplicate) != 1 {
		t.Fatalf("again: acks %d, conflicts %d, events %d, calls %d", f.feed.acked("r1"), len(f.conflicts(t)), f.hooks.count(), f.led.callsOf("r1"))
	}

	// An unmapped room type.
	r := revision("new", "R2", "x1", 1, "2027-07-01", "2027-07-02")
	r.RoomTypeID = "ROOM9"
	got := f.receive(t, r)
	if got[0].Conflict == nil || got[0].Conflict.Reason != channel.ReasonUnknownRoomType || f.led.callsOf("x1") != 0 || f.hooks.count() != 2 {
		t.Fatalf("unmapped room: %+v", got)
	}
}

// TestCrashBetweenApplyAndAck: the processor stops (for good, as a killed process) right
// after booking-svc answered a revision, before recording it or acknowledging it. The next
// pull, by another processor once the dead one's lease ran out, applies it again —
// booking-svc answers applied:false with the same booking — and acknowledges it. The
// booking exists once; a stop right after the ack changes nothing either.
func TestCrashBetweenApplyAndAck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i, step := range []string{"applied", "acked"} {
		if i == 0 {
			f.feed.serve(revision("new", "R1", "r1", 1, "2027-08-01", "2027-08-05"))
		} else {
			f.feed.serve(revision("modified", "R1", "r2", 2, "2027-08-02", "2027-08-05"))
		}
		var fired atomic.Bool
		reached := make(chan struct{})
		// The whole process dies: its context ends too (its hold's renewal stops).
		dctx, die := context.WithCancel(ctx)
		dying := f.processor(func(s, rev string) {
			if s == step && fired.CompareAndSwap(false, true) {
				die()
				close(reached)
				select {} // the process died here: nothing of it runs again, its hold stays
			}
		})
		dying.Lease = 300 * time.Millisecond
		go func() { _ = dying.Pull(dctx, f.conn) }()
		select {
		case <-reached:
		case <-time.After(30 * time.Second):
			t.Fatalf("the processor did not reach %s", step)
		}
		// The next replica pulls once the dead one's hold has run out.
		next := f.processor(nil)
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := next.Pull(ctx, f.conn)
			if err == nil {
				break
			}
			if !errors.Is(err, inbound.ErrBusy) || time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the dead processor's hold runs out
		}
	}
	b, ok := f.led.booking("R1")
	if !ok || f.led.bookings() != 1 || b.in != "2027-08-02" || len(f.feed.left()) != 0 || f.feed.acked("r1") < 1 || f.feed.acked("r2") != 1 {
		t.Fatalf("booking %+v (%d bookings), feed left %v, acks r1 %d r2 %d", b, f.led.bookings(), f.feed.left(), f.feed.acked("r1"), f.feed.acked("r2"))
	}
	if f.led.callsOf("r1") != 2 || f.led.callsOf("r2") != 1 || f.feed.acked("r2") != 1 {
		t.Errorf("r1 was applied %d times, want 2 (the second answered applied:false); r2 %d times, acked %d, want once",
			f.led.callsOf("r1"), f.led.callsOf("r2"), f.feed.acked("r2"))
	}
}

// TestTransientFailureNotAcked: booking-svc failing is not an outcome: the revision is not
// acknowledged (nor answered to a push) and the next pull applies it.
func TestTransientFailureNotAcked(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.led.fail["r1"] = 1
	f.feed.serve(revision("new", "R1", "r1", 1, "2027-09-01", "2027-09-02"))
	if err := f.p.Pull(ctx, f.conn); err == nil || f.feed.acked("r1") != 0 {
		t.Fatalf("first pull: %v, acks %d", err, f.feed.acked("r1"))
	}
	if err := f.p.Pull(ctx, f.conn); err != nil || f.feed.acked("r1") != 1 || f.led.bookings() != 1 {
		t.Fatalf("second pull: %v, acks %d", err, f.feed.acked("r1"))
	}
	f.led.fail["p1"] = 1
	if _, err := f.p.Receive(ctx, f.conn, []channel.Revision{revision("new", "R2", "p1", 1, "2027-09-05", "2027-09-06")}); err == nil {
		t.Fatal("a push whose revision could not be applied was answered")
	}
	if got := f.receive(t, revision("new", "R2", "p1", 1, "2027-09-05", "2027-09-06")); got[0].BookingID == 0 {
		t.Fatalf("the push sent again: %+v", got)
	}
}

// TestPullerOnDemand: PullNow pulls the connection at once (not waiting for the period),
// and Run pulls every enabled connection of the adapter.
func TestPullerOnDemand(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u := &inbound.Puller{P: f.p, Adapter: channel.Channex, Period: time.Hour, Wait: time.Second}
	done := make(chan error, 1)
	go func() { done <- u.Run(ctx) }()
	f.feed.serve(revision("new", "R1", "r1", 1, "2027-10-01", "2027-10-02"))
	deadline := time.Now().Add(10 * time.Second)
	for f.feed.acked("r1") == 0 {
		u.PullNow(f.acct, 4)
		if time.Now().After(deadline) {
			t.Fatal("PullNow did not pull")
		}
		time.Sleep(20 * time.Millisecond) // polling the outcome, not synchronising on time
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLeases: of many processors taking one connection at once exactly one holds it; a
// hold past its end is taken over; a release frees it.
func TestLeases(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var won atomic.Int64
	done := make(chan struct{})
	for i := range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			ok, err := f.st.Take(ctx, f.acct, 9, fmt.Sprint("h", i), time.Now().Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	for range 16 {
		<-done
	}
	if won.Load() != 1 {
		t.Fatalf("%d holders", won.Load())
	}
	if ok, _ := f.st.Take(ctx, f.acct, 10, "a", time.Now().Add(-time.Second)); !ok {
		t.Fatal("first take")
	}
	if ok, err := f.st.Take(ctx, f.acct, 10, "b", time.Now().Add(time.Minute)); !ok || err != nil {
		t.Fatalf("an expired hold was not taken over: %v", err)
	}
	if mine, err := f.st.Renew(ctx, f.acct, 10, "a", time.Now().Add(time.Minute)); mine || err != nil {
		t.Fatalf("a former holder renewed the hold: %v", err)
	}
	if mine, err := f.st.Renew(ctx, f.acct, 10, "b", time.Now().Add(-time.Second)); !mine || err != nil {
		t.Fatalf("the holder could not renew: %v", err)
	}
	if ok, _ := f.st.Take(ctx, f.acct, 10, "d", time.Now().Add(time.Minute)); !ok {
		t.Fatal("a hold renewed into the past was not taken over")
	}
	if mine, _ := f.st.Renew(ctx, f.acct, 10, "b", time.Now().Add(time.Minute)); mine {
		t.Fatal("the holder renewed a hold taken over")
	}
	if err := f.st.Release(ctx, f.acct, 10, "d"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.st.Take(ctx, f.acct, 10, "b", time.Now().Add(time.Minute)); !ok {
		t.Fatal("take after a release")
	}
	if err := f.st.Release(ctx, f.acct, 10, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.st.Take(ctx, f.acct, 10, "c", time.Now().Add(time.Minute)); ok {
		t.Fatal("a release by a former holder freed the hold")
	}
	if err := f.st.Release(ctx, f.acct, 10, "b"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.st.Take(ctx, f.acct, 10, "c", time.Now().Add(time.Minute)); !ok {
		t.Fatal("a released hold was not free")
	}
	if err := f.st.Erase(ctx, f.acct); err != nil {
		t.Fatal(err)
	}
}

// TestCommissionSentToBookingSvc: the channel's commission a revision reports reaches
// booking-svc with it, also when the revision waited in the store (a modification held until
// its new revision arrived); a revision without one sends none.
func TestCommissionSentToBookingSvc(t *testing.T) {
	f := newFixture(t)
	mod := revision("modified", "R1", "r2", 2, "2027-03-05", "2027-03-09")
	mod.Commission = "45.00"
	f.receive(t, mod)
	f.receive(t, revision("new", "R1", "r1", 1, "2027-03-01", "2027-03-04"))
	got := map[string]string{}
	for _, rq := range f.led.requests {
		got[rq.RevisionID] = rq.Commission
	}
	if c, ok := got["r2"]; !ok || c != "45.00" || got["r1"] != "" {
		t.Fatalf("commissions sent: %v", got)
	}
}
