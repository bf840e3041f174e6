package channels

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakechannex"
)

// raceRounds is how many times TestChannelRace books a night both ways at once: 100 in make
// test, VROS_CHANNELS_RACE_ROUNDS for more (docs/testing.md).
var raceRounds = envInt("VROS_CHANNELS_RACE_ROUNDS", 100)

// TestChannelRace books the same night directly (interface B create) and by a channel (a new
// revision in Channex's feed and its webhook) at once, round after round, each round on its
// own night (10 properties, each on a connection of its own, a night each per round), 8
// rounds at a time. In half the rounds
// both start together; in the other half the direct create starts the moment integration-svc
// has stored the revision it read from the feed (chan_revisions), so that both reach
// booking-svc's ledger close together (0–15 ms after it, round by round). Every round:
//   - exactly one of the two holds the night (listbooking);
//   - when the direct create won, the channel's revision is a recorded conflict
//     (channel-conflict, nights_taken, naming the direct booking), acknowledged, and
//     published on vros.integration.v1 (its event naming the same booking);
//   - when the channel won, the create answered its taken-nights status (8) and the channel
//     booking holds the night, its revision acknowledged.
//
// At the end no night of any property is held by two reserved bookings.
func TestChannelRace(t *testing.T) {
	t.Parallel()
	const props = 10
	acc := newAccount(t)
	type prop struct {
		pid        int64
		code       string
		conn       chantest.Connection
		remote     string
		room, plan string
	}
	// A connection per property (its own API key): a connection's revisions are applied one
	// at a time, so rounds in flight on one connection would queue behind each other.
	ps := make([]prop, props)
	for i := range ps {
		p := &ps[i]
		var err error
		key := "key-" + fakechannex.NewID()
		p.conn, err = acc.Connect("channex", chx.URL(), chantest.Obj{"api_key": key}, syncDays)
		must(t, err)
		p.code = fmt.Sprintf("RACE%d", i)
		p.pid, err = acc.Property(p.code)
		must(t, err)
		fp := chx.AddProperty(key, fakechannex.Property{Title: "Race " + p.code, Currency: "USD",
			RoomTypes: []fakechannex.RoomType{{Title: "Villa", RatePlans: []string{""}}}})
		p.remote, p.room, p.plan = fp.ID, fp.RoomTypes[0].ID, fp.RoomTypes[0].RatePlans[0]
		waitProjected(t, acc, p.pid)
		must(t, acc.Map(p.conn.ID(), p.code, p.remote, p.room, chantest.Plan{RatePlanID: 0, RemoteRatePlanID: p.plan}))
	}
	today := apitest.Day(2) // a night in the future in every zone

	type outcome struct {
		round     int
		direct    int64 // booking id when the direct create won
		status    int   // the create's status when it lost
		revision  string
		createErr error
	}
	results := make([]outcome, raceRounds)
	var (
		wg      sync.WaitGroup
		next    atomic.Int64
		failMu  sync.Mutex
		failure []string
	)
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		if len(failure) < 20 {
			failure = append(failure, fmt.Sprintf(format, args...))
		}
	}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= raceRounds {
					return
				}
				p := ps[i%props]
				in := chantest.AddDays(today, i/props)
				out := chantest.AddDays(in, 1)
				rv := chx.EnqueueRevision(fakechannex.Revision{PropertyID: p.remote, ArrivalDate: in, DepartureDate: out,
					Amount: "100.00", Customer: fakechannex.Customer{Name: "Race", Surname: fmt.Sprint(i), Mail: "race@example.com"},
					Rooms: []fakechannex.Room{{RoomTypeID: p.room, RatePlanID: p.plan}}})
				o := outcome{round: i, revision: rv.ID}
				var both sync.WaitGroup
				both.Add(2)
				go func() {
					defer both.Done()
					if i%2 == 1 {
						// Start when integration-svc has stored the revision it read from
						// the feed: its apply through booking-svc is next.
						ctx, cancel := context.WithTimeout(context.Background(), within)
						id := fmt.Sprintf("%s:%d:%s", acc.AccountID, p.conn.ID(), rv.ID) // inboundstore's _id
						for ctx.Err() == nil {
							err := mongoDB.Database("vros_integration").Collection("chan_revisions").
								FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
							if err == nil {
								break
							}
							time.Sleep(time.Millisecond)
						}
						cancel()
						// Then 0–15 ms later, round by round, so that the create meets the
						// channel's apply at every point of it (a spread of the start, not a
						// wait for anything: every outcome is checked the same).
						time.Sleep(time.Duration((i/2)%16) * time.Millisecond)
					}
					b, status, err := acc.Create(p.pid, in, out)
					o.direct, o.status, o.createErr = b.BookingID, status, err
				}()
				go func() {
					defer both.Done()
					code, body, err := chx.PostWebhook(context.Background(), inboundURL(p.conn), "booking_new", rv.ID)
					if err != nil || code != http.StatusOK {
						fail("round %d: webhook %d %s %v", i, code, body, err)
					}
				}()
				both.Wait()
				results[i] = o
			}
		}()
	}
	wg.Wait()
	if len(failure) > 0 {
		t.Fatalf("%d failures:\n%v", len(failure), failure)
	}

	// Every revision acknowledged: applied or recorded as a conflict.
	s := &chxSetup{}
	s.waitFor(t, "every revision acknowledged", func() bool {
		acked := map[string]bool{}
		for _, a := range chx.Acks() {
			acked[a.RevisionID] = true
		}
		for _, o := range results {
			if !acked[o.revision] {
				return false
			}
		}
		return true
	})
	conflicts, err := acc.Conflicts()
	must(t, err)
	byRevision := map[string]chantest.Conflict{}
	for _, c := range conflicts {
		byRevision[c.RevisionID] = c
	}
	bookings := map[int64][]chantest.Booking{}
	for _, p := range ps {
		bookings[p.pid], err = acc.Bookings(p.pid)
		must(t, err)
	}
	var directWins, channelWins int
	for _, o := range results {
		p := ps[o.round%props]
		in := chantest.AddDays(today, o.round/props)
		var holders []chantest.Booking
		for _, b := range bookings[p.pid] {
			if !b.Cancelled() && b.Checkin <= in && in < b.Checkout {
				holders = append(holders, b)
			}
		}
		if o.createErr != nil {
			t.Fatalf("round %d: create: %v", o.round, o.createErr)
		}
		if len(holders) != 1 {
			t.Fatalf("round %d: night %s of property %d held by %d bookings: %+v", o.round, in, p.pid, len(holders), holders)
		}
		h := holders[0]
		switch {
		case o.direct != 0:
			directWins++
			c, ok := byRevision[o.revision]
			if h.BookingID != o.direct || h.Channel != "" {
				t.Fatalf("round %d: the direct booking %d won, the night is held by %+v", o.round, o.direct, h)
			}
			if !ok || c.Reason != "nights_taken" || !slices.Contains(c.BookingIDs, o.direct) {
				t.Fatalf("round %d: the channel lost and its conflict is %+v (recorded %v)", o.round, c, ok)
			}
		case o.status == chantest.StatusTaken:
			channelWins++
			if h.Channel == "" {
				t.Fatalf("round %d: the create was refused, the night is held by %+v", o.round, h)
			}
			if c, ok := byRevision[o.revision]; ok {
				t.Fatalf("round %d: the channel won and a conflict was recorded too: %+v", o.round, c)
			}
		default:
			t.Fatalf("round %d: the create answered status %d", o.round, o.status)
		}
	}
	if len(conflicts) != directWins {
		t.Fatalf("%d conflicts recorded, %d rounds lost by the channel", len(conflicts), directWins)
	}
	// Each conflict reached vros.integration.v1 (messaging-svc's owner.channel_conflict),
	// naming the direct booking that holds the night.
	published := conflictEvents(t, acc.AccountID, conflicts)
	for _, c := range conflicts {
		id, _ := strconv.ParseInt(c.ConflictID.String(), 10, 64)
		if !sameConflict(published[id], c) {
			t.Fatalf("conflict %s published as %+v", c.ConflictID, published[id])
		}
	}
	t.Logf("%d rounds: the direct create won %d, the channel %d", raceRounds, directWins, channelWins)
}
