package aristore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/integration-svc/internal/channels/aristore"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/together"
)

// TestFullSyncThenDelta: connecting (MarkDirty full) sends all 500 days, availability before
// rates, coalesced, and logs each request; a booking then sends only its nights'
// availability; a price change only the changed dates' rates; a change that changes nothing
// sends nothing.
func TestFullSyncThenDelta(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.connect("a1", 500)
	e.putProperty(t, property("a1", 1, "100.00"))
	e.drain(t, ctx) // the property's mark: the first send is every day anyway (nothing sent yet)
	e.rec.taken()
	if err := e.snd.MarkDirty(ctx, "a1", 1, 7, true); err != nil {
		t.Fatal(err)
	}
	e.drain(t, ctx)
	reqs := e.rec.taken()
	if len(reqs) != 2 || reqs[0].Kind != channel.KindAvailability || reqs[1].Kind != channel.KindRestrictions {
		t.Fatalf("full sync made %d requests", len(reqs))
	}
	n := 0
	for _, a := range reqs[0].Avail {
		n += days(a.From, a.To)
	}
	perPlan := map[string]int{}
	for _, r := range reqs[1].Rates {
		perPlan[r.RemoteRatePlanID] += days(r.From, r.To)
	}
	if n != 500 || perPlan["STD"] != 500 || perPlan["NR"] != 500 || reqs[0].Avail[0].From != "2027-03-11" {
		t.Fatalf("full sync covered %d days of availability from %s, rates %v", n, reqs[0].Avail[0].From, perPlan)
	}
	if len(reqs[1].Rates) >= 500 {
		t.Errorf("full sync rates in %d ranges: not coalesced", len(reqs[1].Rates))
	}
	if err := e.rec.holds("a1", 7, e.desired(t, "a1")); err != nil {
		t.Fatal(err)
	}
	if got := e.log.statuses(); len(got) < 2 || got[len(got)-2] != "availability:ok" || got[len(got)-1] != "restrictions:ok" {
		t.Errorf("log %v", got)
	}
	if e.pending(t) != 0 {
		t.Fatal("a mark is left after the sync")
	}

	e.book(t, "a1", 5, 1, "reserved", "2027-04-01", "2027-04-02")
	e.drain(t, ctx)
	reqs = e.rec.taken()
	if len(reqs) != 1 || reqs[0].Kind != channel.KindAvailability ||
		!slices.Equal(reqs[0].Avail, []channel.Availability{{From: "2027-04-01", To: "2027-04-02", Available: 0}}) {
		t.Fatalf("a booking sent %+v", reqs)
	}

	e.putProperty(t, func() contract.Property {
		p := property("a1", 2, "100.00")
		p.Restrictions = append(p.Restrictions, contract.Restriction{StartDate: "2027-05-03", EndDate: "2027-05-04", MaxStay: intp(9)})
		return p
	}())
	e.drain(t, ctx)
	reqs = e.rec.taken()
	if len(reqs) != 1 || reqs[0].Kind != channel.KindRestrictions || len(reqs[0].Rates) != 2 {
		t.Fatalf("a restriction on two dates sent %+v", reqs)
	}
	for _, r := range reqs[0].Rates {
		if r.From != "2027-05-03" || r.To != "2027-05-04" || r.MaxStay != 9 {
			t.Errorf("restriction range %+v", r)
		}
	}

	e.putProperty(t, func() contract.Property {
		p := property("a1", 3, "100.00")
		p.Restrictions = append(p.Restrictions, contract.Restriction{StartDate: "2027-05-03", EndDate: "2027-05-04", MaxStay: intp(9)})
		p.Content.Name = "renamed"
		return p
	}())
	e.drain(t, ctx)
	if reqs := e.rec.taken(); len(reqs) != 0 {
		t.Fatalf("a change of nothing sent %+v", reqs)
	}
	if err := e.rec.holds("a1", 7, e.desired(t, "a1")); err != nil {
		t.Fatal(err)
	}

	// The next day, the horizon moves: the hourly refresh marks the property, and the new
	// last date is sent, nothing before.
	e.clock.Add(24 * time.Hour)
	if err := e.snd.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	e.drain(t, ctx)
	reqs = e.rec.taken()
	if len(reqs) != 2 || reqs[0].Avail[0].From != "2028-07-23" || reqs[1].Rates[0].From != "2028-07-23" {
		t.Fatalf("the next day sent %+v", reqs)
	}
}

// TestNewerChangeDuringPush: a booking arriving while the sender is between the
// availability and the rates request of a push is sent after it, by the same sender: the
// channel manager ends with the newest values, and the last availability it received for
// the booked nights is 0.
func TestNewerChangeDuringPush(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.connect("a1", 60)
	e.putProperty(t, property("a1", 1, "100.00"))
	var once sync.Once
	e.rec.before = func(_ context.Context, r request) error {
		if r.Kind == channel.KindRestrictions {
			once.Do(func() { e.book(t, "a1", 5, 1, "reserved", "2027-03-20") })
		}
		return nil
	}
	e.drain(t, ctx)
	reqs := e.rec.taken()
	if len(reqs) != 3 || reqs[2].Kind != channel.KindAvailability {
		t.Fatalf("requests %+v", reqs)
	}
	if !slices.Equal(reqs[2].Avail, []channel.Availability{{From: "2027-03-20", To: "2027-03-20", Available: 0}}) {
		t.Errorf("the newer change sent %+v", reqs[2].Avail)
	}
	if err := e.rec.holds("a1", 7, e.desired(t, "a1")); err != nil {
		t.Fatal(err)
	}
	if e.pending(t) != 0 {
		t.Fatal("a mark is left")
	}
}

// TestRetry: a 429 keeps the mark until its backoff (or the Retry-After asked) has passed on
// the clock, logged "retrying"; then the values are sent. A refusal (400) waits ErrorRetry,
// logged "error".
func TestRetry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.connect("a1", 30)
	e.putProperty(t, property("a1", 1, "100.00"))
	fails := []error{
		&channel.RemoteError{Status: 429, Retryable: true, Message: "slow down"},
		&channel.RemoteError{Status: 503, Retryable: true, RetryAfter: 40 * time.Second, Message: "down"},
		&channel.RemoteError{Status: 400, Message: "unknown room type"},
	}
	var mu sync.Mutex
	e.rec.before = func(context.Context, request) error {
		mu.Lock()
		defer mu.Unlock()
		if len(fails) == 0 {
			return nil
		}
		err := fails[0]
		fails = fails[1:]
		return err
	}
	step := func(wait time.Duration) {
		t.Helper()
		if did, err := e.snd.Once(ctx); err != nil || !did {
			t.Fatalf("nothing due (%v)", err)
		}
		e.clock.Add(wait - time.Millisecond)
		if did, _ := e.snd.Once(ctx); did {
			t.Fatalf("retried before %v", wait)
		}
		e.clock.Add(time.Millisecond)
	}
	step(time.Second)      // 429: the first backoff
	step(40 * time.Second) // 503 asking 40s, more than the second backoff (2s)
	step(10 * time.Minute) // 400: ErrorRetry
	e.drain(t, ctx)
	if err := e.rec.holds("a1", 7, e.desired(t, "a1")); err != nil {
		t.Fatal(err)
	}
	want := []string{"availability:retrying", "availability:retrying", "availability:error", "availability:ok", "restrictions:ok"}
	if got := e.log.statuses(); !slices.Equal(got, want) {
		t.Errorf("log %v, want %v", got, want)
	}
}

// TestLeaseTakeover: a sender stopped mid-push (its context cancelled after the
// availability was accepted, as a crash would) keeps the mark under its lease; once the
// lease has run out another sender takes it and sends what was not accepted, so no date is
// lost and nothing accepted is sent twice.
func TestLeaseTakeover(t *testing.T) {
	e := newEnv(t)
	e.connect("a1", 90)
	e.putProperty(t, property("a1", 1, "100.00"))
	crashed, crash := context.WithCancel(context.Background())
	e.rec.before = func(ctx context.Context, r request) error {
		if r.Kind == channel.KindRestrictions && ctx == crashed {
			crash()
			return ctx.Err()
		}
		return nil
	}
	if did, err := e.snd.Once(crashed); err != nil || !did {
		t.Fatalf("claimed nothing (%v)", err)
	}
	if reqs := e.rec.taken(); len(reqs) != 1 || reqs[0].Kind != channel.KindAvailability {
		t.Fatalf("before the crash: %+v", reqs)
	}
	ctx := context.Background()
	e.book(t, "a1", 8, 1, "reserved", "2027-04-10") // marked while the lease is held
	if did, _ := e.snd.Once(ctx); did {
		t.Fatal("a held mark was taken before its lease ran out")
	}
	e.clock.Add(e.cfg.Lease)
	e.drain(t, ctx)
	reqs := e.rec.taken()
	if len(reqs) != 2 || reqs[0].Kind != channel.KindAvailability || len(reqs[0].Avail) != 1 || reqs[1].Kind != channel.KindRestrictions {
		t.Fatalf("the takeover sent %+v", reqs)
	}
	if err := e.rec.holds("a1", 7, e.desired(t, "a1")); err != nil {
		t.Fatal(err)
	}
}

// TestAccountsApart: two accounts' properties marked concurrently, many times, by running
// workers: each account's channel manager state ends exactly its own, and no request
// carries the other account's connection.
func TestAccountsApart(t *testing.T) {
	e := newEnv(t)
	accounts := []string{"a1", "a2"}
	for i, a := range accounts {
		e.connect(a, 40)
		e.putProperty(t, property(a, 1, fmt.Sprintf("%d.00", 100+i*50)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.snd.Run(ctx); close(done) }()
	together.Run(20, func(i int) {
		a := accounts[i%2]
		raw, _ := json.Marshal(contract.Booking{AccountID: a, BookingID: int64(100 + i), PropertyID: 7, Status: "reserved",
			Version: 1, Nights: []string{fmt.Sprintf("2027-03-%02d", 12+i/2)}})
		if err := e.proj.Apply(ctx, ari.Event{Account: a, Rest: fmt.Sprintf("booking:%d", 100+i), Type: contract.BookingReserved, Data: raw}); err != nil {
			t.Error(err)
		}
	})
	eventually.Holds(t, "every mark sent", 30*time.Second, func() bool {
		if e.pending(t) != 0 {
			return false
		}
		for _, a := range accounts {
			if e.rec.holds(a, 7, e.desired(t, a)) != nil {
				return false
			}
		}
		return true
	})
	cancel()
	<-done
	for _, r := range e.rec.taken() {
		for _, x := range r.Rates {
			if x.RemoteRatePlanID != "STD" && x.RemoteRatePlanID != "NR" {
				t.Errorf("plan %s", x.RemoteRatePlanID)
			}
		}
	}
	for _, a := range accounts {
		v := e.desired(t, a)
		for i := 1; i <= 10; i++ {
			if v.Avail[i] != 0 {
				t.Errorf("%s: day %d free", a, i)
			}
		}
	}
	if e.desired(t, "a1").RatesOf("STD")[0].Rate == e.desired(t, "a2").RatesOf("STD")[0].Rate {
		t.Error("the accounts' prices are alike: the test shows nothing")
	}
}

// TestErase: the account-erased event drops the account's projection, marks and sent
// values; a late event of the erased account keeps nothing.
func TestErase(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.connect("a1", 10)
	e.putProperty(t, property("a1", 1, "100.00"))
	e.book(t, "a1", 5, 1, "reserved", "2027-03-12")
	e.apply(t, "a1", "account", contract.AccountErased, contract.AccountErasure{AccountID: "a1"})
	st, err := e.st.Load(ctx, "a1", 7)
	if err != nil || st.Property != nil || len(st.Held) != 0 || e.pending(t) != 0 {
		t.Fatalf("after the erasure: %+v %v pending %d", st, err, e.pending(t))
	}
	e.putProperty(t, property("a1", 2, "100.00"))
	if st, _ := e.st.Load(ctx, "a1", 7); st.Property != nil || e.pending(t) != 0 {
		t.Fatal("a late event of an erased account was kept")
	}
}

// TestHolders: a booking's versions apply in order (an older one changes nothing), a
// cancellation frees its nights, a moved booking leaves its old property, a tombstone forgets
// it; a deleted block frees its dates.
func TestHolders(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	held := func(p int64) []string {
		st, err := e.st.Load(ctx, "a1", p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for n := range st.Held {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	e.book(t, "a1", 5, 2, "reserved", "2027-03-12", "2027-03-13")
	e.book(t, "a1", 5, 1, "reserved", "2027-03-20")
	if got := held(7); !slices.Equal(got, []string{"2027-03-12", "2027-03-13"}) {
		t.Fatalf("held %v", got)
	}
	e.book(t, "a1", 5, 3, "cancelled")
	if got := held(7); len(got) != 0 {
		t.Fatalf("a cancelled booking holds %v", got)
	}
	e.apply(t, "a1", "block:4", contract.BlockCreated, contract.Block{BlockID: 4, PropertyID: 7, StartDate: "2027-03-01", EndDate: "2027-03-14", Version: 1})
	// Nights more than 3 days past are not kept.
	if got := held(7); len(got) != 8 || got[0] != "2027-03-07" {
		t.Fatalf("block holds %v", got)
	}
	e.apply(t, "a1", "block:4", contract.BlockUpdated, contract.Block{BlockID: 4, PropertyID: 8, StartDate: "2027-03-14", EndDate: "2027-03-14", Version: 2})
	if got, got8 := held(7), held(8); len(got) != 0 || !slices.Equal(got8, []string{"2027-03-14"}) {
		t.Fatalf("moved block: %v and %v", got, got8)
	}
	if err := e.proj.Apply(ctx, ari.Event{Account: "a1", Rest: "block:4", Tombstone: true}); err != nil {
		t.Fatal(err)
	}
	if got := held(8); len(got) != 0 {
		t.Fatalf("after the tombstone %v", got)
	}

	// Once every night of a booking is more than 3 days past, its entry goes.
	e.book(t, "a1", 9, 1, "reserved", "2027-03-11", "2027-03-12")
	e.book(t, "a1", 10, 1, "reserved", "2027-03-20")
	e.clock.Add(6 * 24 * time.Hour)
	if got := held(7); len(got) != 3 {
		t.Fatalf("held %v", got)
	}
	var doc struct {
		H map[string]any `bson:"h"`
	}
	if err := db.Client().Database(e.dbName).Collection(aristore.HoldsCollection).FindOne(ctx, bson.D{{Key: "_id", Value: "a1:7"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.H["booking:9"]; ok || len(doc.H) != 1 {
		t.Fatalf("holds after the nights passed: %v", doc.H)
	}
}

// TestDeltasBeforeFullSyncs: a change marked after full syncs were asked for is claimed
// before them, so that it does not wait for the whole sync; the full syncs then go oldest
// first.
func TestDeltasBeforeFullSyncs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for p := int64(1); p <= 3; p++ {
		if err := e.st.Mark(ctx, "a1", 1, p, true, true, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Second)
	}
	if err := e.st.Mark(ctx, "a1", 1, 4, false, true, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for range 4 {
		m, ok, err := e.st.Claim(ctx, e.clock.Now(), time.Minute)
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if m.Full != (m.PropertyID != 4) {
			t.Errorf("property %d claimed with full %v", m.PropertyID, m.Full)
		}
		got = append(got, m.PropertyID)
	}
	if !slices.Equal(got, []int64{4, 1, 2, 3}) {
		t.Fatalf("claimed in the order %v, want the change first, then the full syncs oldest first", got)
	}
}
