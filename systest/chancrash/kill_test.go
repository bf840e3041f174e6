package chancrash

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakechannex"
)

// deliver posts Channex's webhook for a revision already in the feed; 200 at once.
func (s *setup) deliver(t *testing.T, id string) {
	t.Helper()
	code, body, err := chx.PostWebhook(context.Background(), inboundURL(s.conn), "booking", id)
	must(t, err)
	if code != http.StatusOK {
		t.Fatalf("webhook answered %d %s", code, body)
	}
}

// acked tells whether the fake received the revision's acknowledgement and serves it no more.
func acked(id string) bool {
	if slices.Contains(chx.Pending(), id) {
		return false
	}
	for _, a := range chx.Acks() {
		if a.RevisionID == id {
			return true
		}
	}
	return false
}

// channelBookings lists a property's bookings that came from a channel, every status.
func (s *setup) channelBookings(t *testing.T, pid int64) []chantest.Booking {
	t.Helper()
	all, err := s.acc.Bookings(pid)
	must(t, err)
	var out []chantest.Booking
	for _, b := range all {
		if b.Channel != "" {
			out = append(out, b)
		}
	}
	return out
}

// noNightTwice fails the test when two reserved bookings of pid hold one night.
func (s *setup) noNightTwice(t *testing.T, pid int64) {
	t.Helper()
	all, err := s.acc.Bookings(pid)
	must(t, err)
	held := map[string]int64{}
	for _, b := range all {
		if b.Cancelled() {
			continue
		}
		for d := b.Checkin; d < b.Checkout; d = chantest.AddDays(d, 1) {
			if o, ok := held[d]; ok {
				t.Fatalf("night %s of property %d is held by bookings %d and %d", d, pid, o, b.BookingID)
			}
			held[d] = b.BookingID
		}
	}
}

// killHolding arms a hold on the next request match accepts, waits for it, kills
// integration-svc while it waits for the answer, and lets the request go (answered 502 to a
// dead process; the fake never saw it).
func killHolding(t *testing.T, what string, match func(chantest.Exchange) bool, start func()) chantest.Exchange {
	t.Helper()
	h := rec.Hold(match)
	defer h.Release()
	start()
	select {
	case x := <-h.Caught:
		svc.Kill()
		h.Release()
		return x
	case <-time.After(within):
		t.Fatalf("%s: no such request within %v", what, within)
	}
	return chantest.Exchange{}
}

// TestKillBeforeAck kills integration-svc between applying a channel reservation and
// acknowledging it (the proxy holds the ack unanswered until the kill), three times: a new
// reservation; an out-of-order feed (a modification served before its booking's new
// revision, which is older by inserted_at); and a cancellation. After each restart the feed
// is read again: the booking exists once with the newest revision's dates, every revision is
// acknowledged. Then the fake delivers a revision again (a duplicate): nothing changes and it
// is acknowledged again. No night is held twice at any end.
func TestKillBeforeAck(t *testing.T) {
	ensureRunning(t)
	s := newSetup(t, 30, 1)
	s.mapAll(t)
	p := s.ps[0]
	d := func(n int) string { return apitest.Day(2 + n) }
	isAck := func(x chantest.Exchange) bool { return strings.HasSuffix(x.Path, "/ack") }

	// 1. A new reservation.
	rv := chx.EnqueueRevision(fakechannex.Revision{PropertyID: p.remote, ArrivalDate: d(10), DepartureDate: d(13), Amount: "300.00",
		Customer: fakechannex.Customer{Name: "Kill", Surname: "BeforeAck", Mail: "kill@example.com"}})
	x := killHolding(t, "the ack of the new revision", isAck, func() { s.deliver(t, rv.ID) })
	if !strings.Contains(x.Path, rv.ID) {
		t.Fatalf("held %s, want the ack of %s", x.Path, rv.ID)
	}
	bs := s.channelBookings(t, p.pid)
	if len(bs) != 1 || bs[0].Checkin != d(10) {
		t.Fatalf("before its ack, the revision's booking is %+v", bs)
	}
	id := bs[0].BookingID
	ensureRunning(t)
	waitFake(t, "the new revision acknowledged after the restart", func() bool { return acked(rv.ID) })
	bs = s.channelBookings(t, p.pid)
	if len(bs) != 1 || bs[0].BookingID != id || bs[0].Checkin != d(10) || bs[0].Checkout != d(13) {
		t.Fatalf("after the restart, the channel bookings are %+v (want booking %d once)", bs, id)
	}

	// 2. Out of order: a second reservation's modification is served before its new
	// revision (whose inserted_at is earlier); the kill comes at the first ack.
	now := time.Now().UTC()
	booking2 := fakechannex.NewID()
	mod := fakechannex.Revision{PropertyID: p.remote, BookingID: booking2, Status: "modified", ArrivalDate: d(20), DepartureDate: d(24),
		Amount: "400.00", InsertedAt: now.Add(time.Second), Customer: fakechannex.Customer{Name: "Out", Surname: "OfOrder"}}
	nw := mod
	nw.Status, nw.ArrivalDate, nw.DepartureDate, nw.Amount, nw.InsertedAt = "new", d(16), d(18), "200.00", now
	mod = chx.EnqueueRevision(mod)
	nw = chx.EnqueueRevision(nw)
	killHolding(t, "an ack of the out-of-order revisions", isAck, func() { s.deliver(t, mod.ID) })
	ensureRunning(t)
	s.deliver(t, nw.ID)
	waitFake(t, "both out-of-order revisions acknowledged", func() bool { return acked(mod.ID) && acked(nw.ID) })
	var b2 chantest.Booking
	for _, b := range s.channelBookings(t, p.pid) {
		if b.BookingID != id {
			if b2.BookingID != 0 {
				t.Fatalf("two bookings for the second reservation: %+v and %+v", b2, b)
			}
			b2 = b
		}
	}
	if b2.Checkin != d(20) || b2.Checkout != d(24) || b2.Cancelled() {
		t.Fatalf("the out-of-order reservation's booking is %+v, want %s..%s reserved", b2, d(20), d(24))
	}

	// 3. The first reservation cancelled; the kill at its ack.
	cxl := chx.EnqueueRevision(fakechannex.Revision{PropertyID: p.remote, BookingID: rv.BookingID, OTAReservationCode: rv.OTAReservationCode,
		Status: "cancelled", ArrivalDate: d(10), DepartureDate: d(13), Amount: "300.00", Customer: rv.Customer})
	killHolding(t, "the ack of the cancellation", isAck, func() { s.deliver(t, cxl.ID) })
	ensureRunning(t)
	waitFake(t, "the cancellation acknowledged after the restart", func() bool { return acked(cxl.ID) })
	b, err := s.acc.Booking(id)
	must(t, err)
	if !b.Cancelled() {
		t.Fatalf("after the cancellation, booking %d is %+v", id, b)
	}

	// 4. Duplicates: the new revision and the modification delivered again.
	acks := len(chx.Acks())
	chx.Redeliver(rv.ID)
	chx.Redeliver(mod.ID)
	s.deliver(t, rv.ID)
	waitFake(t, "the duplicates acknowledged", func() bool {
		return len(chx.Acks()) >= acks+2 && !slices.Contains(chx.Pending(), rv.ID) && !slices.Contains(chx.Pending(), mod.ID)
	})
	bs = s.channelBookings(t, p.pid)
	if len(bs) != 2 {
		t.Fatalf("after the duplicates, %d channel bookings: %+v", len(bs), bs)
	}
	for _, b := range bs {
		switch b.BookingID {
		case id:
			if !b.Cancelled() {
				t.Fatalf("the duplicate new revision revived the cancelled booking: %+v", b)
			}
		case b2.BookingID:
			if b.Checkin != d(20) || b.Checkout != d(24) || b.Cancelled() {
				t.Fatalf("the duplicate changed the second booking: %+v", b)
			}
		default:
			t.Fatalf("a booking of no reservation: %+v", b)
		}
	}
	s.noNightTwice(t, p.pid)
}

// TestKillDuringFullSync kills integration-svc in the middle of the 500-day full sync of four
// properties (the proxy holds the fourth ARI request until the kill), changes a price while
// it is down and again once it is back, and shows that the fake ends holding exactly the
// desired ARI of every property on every date — booked nights 0, the newest price — and that
// no date received a value older than one it had received before.
func TestKillDuringFullSync(t *testing.T) {
	// The ARI projection is read from Kafka in its own consumer group. TestKillBeforeAck
	// kills integration-svc within moments of its start, so a killed member may have joined
	// that group without completing the rebalance; on the embedded lane the group then
	// stayed stuck (kfake does not time such a member out as Kafka does) and no event
	// reached the projection. This test's process reads from a group of its own, joined
	// once before its kill, as a deployment's would be.
	svc.Kill()
	svc.Env = append(svc.Env, "VROS_CHANNEL_CONSUMER_GROUP=integration-svc-channels-fullsync")
	ensureRunning(t)
	const days = 500
	s := newSetup(t, days, 4)
	// A booking on the first property before it is connected: its nights go out as 0.
	booked := []string{apitest.Day(12), apitest.Day(13), apitest.Day(14)}
	_, status, err := s.acc.Create(s.ps[0].pid, apitest.Day(12), apitest.Day(15))
	must(t, err)
	if status != 0 {
		t.Fatalf("create answered status %d", status)
	}
	var ari atomic.Int64
	isARI := func(x chantest.Exchange) bool {
		if !strings.HasSuffix(x.Path, "/api/v1/availability") && !strings.HasSuffix(x.Path, "/api/v1/restrictions") {
			return false
		}
		for _, p := range s.ps {
			if strings.Contains(string(x.Body), p.remote) {
				return ari.Add(1) == 4
			}
		}
		return false
	}
	killHolding(t, "the fourth ARI request of the full sync", isARI, func() { s.mapAll(t) })

	// While integration-svc is down: a price on the second property (the event waits in
	// Kafka); once it is back, a newer one on the same date.
	priced := apitest.Day(40)
	must(t, s.acc.Restrict(s.ps[1].code, 0, priced, priced, chantest.Obj{"price": "150.00"}, nil))
	ensureRunning(t)
	must(t, s.acc.Restrict(s.ps[1].code, 0, priced, priced, chantest.Obj{"price": "160.00"}, nil))

	// The first date synced is today in the properties' zone (the same for all four).
	var today string
	waitFake(t, "a full sync's first date", func() bool {
		for _, c := range chx.CallsOf(fakechannex.KindAvailability) {
			for _, v := range c.Values {
				if v.PropertyID == s.ps[0].remote && c.Status == http.StatusOK {
					if today == "" || v.DateFrom < today && v.DateFrom != "" {
						today = v.DateFrom
					}
				}
			}
		}
		return today != ""
	})
	dates := chantest.Dates(today, days)
	desiredRate := func(pi int, d string) string {
		if pi == 1 && d == priced {
			return "160.00"
		}
		return "100.00"
	}
	desiredAvail := func(pi int, d string) int {
		if pi == 0 && slices.Contains(booked, d) {
			return 0
		}
		return 1
	}
	// diff lists the dates where the fake does not hold the desired values.
	diff := func() []string {
		var out []string
		for pi, p := range s.ps {
			for _, d := range dates {
				if a, _, ok := chx.Availability(p.remote, p.room, d); !ok || a != desiredAvail(pi, d) {
					out = append(out, fmt.Sprintf("%s %s availability %d (sent %v), want %d", p.code, d, a, ok, desiredAvail(pi, d)))
				}
				r, ok := chx.Restriction(p.remote, p.rp, d)
				want := map[string]string{"rate": desiredRate(pi, d), "min_stay_arrival": "1", "closed_to_arrival": "false",
					"closed_to_departure": "false", "stop_sell": "false"}
				got := map[string]string{"rate": "absent", "min_stay_arrival": "absent", "closed_to_arrival": "absent",
					"closed_to_departure": "absent", "stop_sell": "absent"}
				if ok {
					if r.Rate != nil {
						got["rate"] = chantest.Money(*r.Rate)
					}
					if r.MinStayArrival != nil {
						got["min_stay_arrival"] = strconv.Itoa(*r.MinStayArrival)
					}
					for k, v := range map[string]*bool{"closed_to_arrival": r.ClosedToArrival, "closed_to_departure": r.ClosedToDeparture, "stop_sell": r.StopSell} {
						if v != nil {
							got[k] = strconv.FormatBool(*v)
						}
					}
				}
				for k, v := range want {
					if got[k] != v {
						out = append(out, fmt.Sprintf("%s %s %s %s, want %s", p.code, d, k, got[k], v))
					}
				}
			}
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := chx.Wait(ctx, func() bool { return len(diff()) == 0 }); err != nil {
		out := diff()
		t.Fatalf("the fake does not hold the desired ARI (%d differences), e.g.:\n%s", len(out), strings.Join(out[:min(len(out), 20)], "\n"))
	}

	// No value older than one received before: the priced date saw 100, 150, 160 in that
	// order (any of them may be skipped, none may come back); a booked night, once sent
	// taken, never went back to free.
	rank := map[string]int{"100.00": 0, "150.00": 1, "160.00": 2}
	best := -1
	var seen []string
	for _, c := range chx.History(s.ps[1].remote, s.ps[1].rp, priced) {
		if c.Value.Rate == nil {
			continue
		}
		v := chantest.Money(*c.Value.Rate)
		seen = append(seen, v)
		if r := rank[v]; r < best {
			t.Fatalf("date %s received %s after a newer price: %v", priced, v, seen)
		} else {
			best = r
		}
	}
	for _, d := range booked {
		taken := false
		for _, c := range chx.History(s.ps[0].remote, s.ps[0].room, d) {
			if c.Value.Availability == nil {
				continue
			}
			// A sync computed before the projection read the booking sends the night free;
			// once sent taken, it must never be sent free again.
			if *c.Value.Availability == 0 {
				taken = true
			} else if taken {
				t.Fatalf("booked night %s was sent available (request %d) after it was sent taken", d, c.Seq)
			}
		}
	}
	if p := problems(s); len(p) > 0 {
		t.Fatalf("the fake refused %d requests:\n%s", len(p), strings.Join(p, "\n"))
	}
}

// problems are the fake's refusals of the setup's requests (429 and injected faults
// excepted).
func problems(s *setup) []string {
	var out []string
	for _, c := range chx.Problems() {
		if c.Status == http.StatusTooManyRequests {
			continue
		}
		for _, p := range s.ps {
			if strings.Contains(string(c.Body), p.remote) {
				out = append(out, fmt.Sprintf("%s %s: HTTP %d %s %v", c.Method, c.Path, c.Status, c.Reason, c.Warn))
				break
			}
		}
	}
	return out
}
