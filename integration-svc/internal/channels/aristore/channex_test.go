package aristore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/channex"
	"github.com/vros/vros/testkit/fakechannex"
)

// TestChannexFullSyncAndRetry: the sender through the real Channex adapter to the strict
// fake: a 500-day full sync of two mapped plans and a third that no longer exists in vros
// (sent stop-sell with the rate 0) is accepted without a warning, and the fake then holds
// exactly the desired values on every date; a 503 is retried after its backoff and leaves
// the newest values.
func TestChannexFullSyncAndRetry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	fake := fakechannex.Start(t)
	fp := fake.AddProperty("key-1", fakechannex.Property{Title: "V7", Currency: "USD", Timezone: "Europe/Rome",
		RoomTypes: []fakechannex.RoomType{{Title: "House", RatePlans: []string{"", "", ""}}}})
	rt := fp.RoomTypes[0]
	c := channel.Connection{Account: "a1", ID: 1, Adapter: channel.Channex, Endpoint: fake.URL(),
		Credentials: channel.Credentials{APIKey: "key-1"}, Channel: "channex", Enabled: true, Days: 500}
	m := channel.Mapping{Account: "a1", ConnectionID: 1, PropertyID: 7, RemotePropertyID: fp.ID, RoomTypeID: rt.ID,
		RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: rt.RatePlans[0]},
			{RatePlanID: 1, RemoteRatePlanID: rt.RatePlans[1]}, {RatePlanID: 9, RemoteRatePlanID: rt.RatePlans[2]}}, Enabled: true}
	e.conns.put(c, m)
	snd := ari.NewSender(e.cfg, ari.Deps{Projection: e.st, Marks: e.st, Sent: e.st, Connections: e.conns, Log: e.log,
		Adapters: map[string]channel.Adapter{channel.Channex: channex.New(channex.Options{Timeout: 10 * time.Second})},
		Now:      e.clock.Now, Jitter: func(d time.Duration) time.Duration { return d }})
	e.proj.Mark = snd.Touch
	e.putProperty(t, property("a1", 1, "100.00"))
	e.book(t, "a1", 5, 1, "reserved", "2027-03-20", "2027-03-21")
	if err := snd.MarkDirty(ctx, "a1", 1, 7, true); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		t.Helper()
		for range 20 {
			did, err := snd.Once(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !did {
				return
			}
		}
		t.Fatal("marks kept coming")
	}
	drain()
	if p := fake.Problems(); len(p) > 0 {
		t.Fatalf("the fake refused or warned: %+v", p[0])
	}
	check := func() {
		t.Helper()
		want := e.desired(t, "a1")
		for i := range want.Days {
			d := want.From.AddDays(i).String()
			a, _, ok := fake.Availability(fp.ID, rt.ID, d)
			if !ok || a != int(want.Avail[i]) {
				t.Fatalf("%s availability %d %v, want %d", d, a, ok, want.Avail[i])
			}
			for pi, plan := range want.Plans {
				r, ok := fake.Restriction(fp.ID, plan, d)
				w := want.Rates[pi][i]
				if !ok || r.Rate == nil || r.MinStayArrival == nil || r.MinStayThrough == nil || r.MaxStay == nil ||
					r.ClosedToArrival == nil || r.ClosedToDeparture == nil || r.StopSell == nil {
					t.Fatalf("%s %s: %+v", d, plan, r)
				}
				got := ari.RateValue{Rate: *r.Rate, MinStayArrival: *r.MinStayArrival, MinStayThrough: *r.MinStayThrough,
					MaxStay: *r.MaxStay, ClosedToArrival: *r.ClosedToArrival, ClosedToDeparture: *r.ClosedToDeparture, StopSell: *r.StopSell}
				rate, _ := strconv.ParseFloat(got.Rate, 64)
				wrate, _ := strconv.ParseFloat(w.Rate, 64)
				got.Rate, w.Rate = "", ""
				// Channex's minimum stays are at least 1: the adapter sends vros's 0 (none) so.
				w.MinStayArrival, w.MinStayThrough = max(w.MinStayArrival, 1), max(w.MinStayThrough, 1)
				if got != w || rate != wrate {
					t.Fatalf("%s %s: %+v rate %v, want %+v rate %v", d, plan, got, rate, w, wrate)
				}
			}
		}
	}
	check()
	if r, _ := fake.Restriction(fp.ID, rt.RatePlans[2], "2027-04-01"); r.StopSell == nil || !*r.StopSell {
		t.Errorf("the plan vros no longer has is not stopped: %+v", r)
	}

	fake.FailNext(1, fakechannex.Fault{Status: 503})
	e.book(t, "a1", 6, 1, "reserved", "2027-05-02")
	drain()
	if did, _ := snd.Once(ctx); did {
		t.Fatal("retried before the backoff")
	}
	if got := e.log.statuses(); got[len(got)-1] != "availability:retrying" {
		t.Fatalf("the 503 was logged %v", got)
	}
	e.clock.Add(time.Second)
	drain()
	check()
	if p := fake.Problems(); len(p) > 0 {
		t.Fatalf("the fake refused or warned: %+v", p[0])
	}
}
