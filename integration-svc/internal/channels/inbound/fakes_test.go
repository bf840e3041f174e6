package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// The in-test implementations of the ports the processor uses besides the stores (its own
// and the channel stores, real, on the embedded database): booking-svc's route (its rules as
// docs/channels.md states them and booking-svc's TestChannelReservation checks them), a
// channel manager's feed and the webhook emitter.

// emitter collects the events raised, once per id (as the deliveries' keys make them).
type emitter struct {
	mu  sync.Mutex
	evs map[string]webhook.Event
}

func (e *emitter) Emit(_ context.Context, ev webhook.Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.evs == nil {
		e.evs = map[string]webhook.Event{}
	}
	e.evs[ev.ID] = ev
	return nil
}

func (e *emitter) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.evs)
}

// ledger is booking-svc's route as the contract states it: one booking per reservation,
// each revision applied once (an older one neither), nights held by one owner, a
// modification or cancellation of an unknown reservation 404.
type ledger struct {
	mu       sync.Mutex
	next     int64
	res      map[string]*resv      // reservation id → its booking
	nights   map[string]int64      // "pid:date" → booking id
	calls    map[string]int        // revision id → calls
	fail     map[string]int        // revision id → transient failures still to answer
	requests []inbound.Request     // every call
	answered func(inbound.Request) // called after each answer, in the caller's goroutine
}

type resv struct {
	id        int64
	status    string
	pid       int64
	in, out   string
	total     string
	revisions []string
	order     int64
	version   int64
}

func newLedger() *ledger {
	return &ledger{next: 100, res: map[string]*resv{}, nights: map[string]int64{}, calls: map[string]int{}, fail: map[string]int{}}
}

func nightsOf(in, out string) []string {
	a, _ := time.Parse(time.DateOnly, in)
	b, _ := time.Parse(time.DateOnly, out)
	var ds []string
	for d := a; d.Before(b); d = d.AddDate(0, 0, 1) {
		ds = append(ds, d.Format(time.DateOnly))
	}
	return ds
}

// take holds the nights of pid for booking id (a direct booking, say).
func (l *ledger) take(pid int64, in, out string, id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range nightsOf(in, out) {
		l.nights[fmt.Sprint(pid, ":", d)] = id
	}
}

func (l *ledger) Apply(_ context.Context, _ string, r inbound.Request) (inbound.Result, error) {
	res, err := l.apply(r)
	if l.answered != nil {
		l.answered(r)
	}
	return res, err
}

func (l *ledger) apply(r inbound.Request) (inbound.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[r.RevisionID]++
	l.requests = append(l.requests, r)
	if l.fail[r.RevisionID] > 0 {
		l.fail[r.RevisionID]--
		return inbound.Result{}, errors.New("booking-svc answered 503: busy")
	}
	b := l.res[r.ReservationID]
	if b == nil && r.Status != channel.RevisionNew {
		return inbound.Result{}, inbound.ErrReservationUnknown
	}
	if b != nil && (slices.Contains(b.revisions, r.RevisionID) || r.Order < b.order) {
		return inbound.Result{BookingID: b.id, Status: b.status, Version: b.version}, nil
	}
	if b != nil && b.status == "cancelled" {
		return inbound.Result{BookingID: b.id, Status: b.status, Version: b.version}, nil
	}
	id := l.next + 1
	if b != nil {
		id = b.id
	}
	if r.Status == channel.RevisionCancelled {
		for k, o := range l.nights {
			if o == b.id {
				delete(l.nights, k)
			}
		}
		b.status, b.version, b.order = "cancelled", b.version+1, r.Order
		b.revisions = append(b.revisions, r.RevisionID)
		return inbound.Result{BookingID: b.id, Status: b.status, Version: b.version, Applied: true}, nil
	}
	var taken []string
	var holders []int64
	for _, d := range nightsOf(r.Checkin, r.Checkout) {
		if o, ok := l.nights[fmt.Sprint(r.PropertyID, ":", d)]; ok && o != id {
			taken = append(taken, d)
			if !slices.Contains(holders, o) {
				holders = append(holders, o)
			}
		}
	}
	if len(taken) > 0 {
		return inbound.Result{}, &inbound.Refusal{Reason: channel.ReasonNightsTaken, Nights: taken, BookingIDs: holders}
	}
	if b == nil {
		l.next++
		b = &resv{id: id}
		l.res[r.ReservationID] = b
	}
	for k, o := range l.nights {
		if o == b.id {
			delete(l.nights, k)
		}
	}
	for _, d := range nightsOf(r.Checkin, r.Checkout) {
		l.nights[fmt.Sprint(r.PropertyID, ":", d)] = b.id
	}
	b.status, b.pid, b.in, b.out, b.total, b.order = "reserved", r.PropertyID, r.Checkin, r.Checkout, r.Total, r.Order
	b.version++
	b.revisions = append(b.revisions, r.RevisionID)
	return inbound.Result{BookingID: b.id, Status: b.status, Version: b.version, Applied: true}, nil
}

func (l *ledger) booking(reservation string) (resv, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.res[reservation]
	if !ok {
		return resv{}, false
	}
	return *b, true
}

func (l *ledger) bookings() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.res)
}

func (l *ledger) callsOf(rev string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[rev]
}

// feed is a channel manager serving a revisions feed with acknowledgement (Channex's), as
// an Adapter.
type feed struct {
	mu    sync.Mutex
	revs  []channel.Revision
	acks  map[string]int
	pulls int
}

var _ channel.Adapter = (*feed)(nil)

func (f *feed) Name() string { return channel.Channex }
func (f *feed) PushARI(context.Context, channel.Batch, func(context.Context, string) error,
	func([]channel.Availability, []channel.Rate) error, func(channel.Exchange)) error {
	return errors.New("unused")
}
func (f *feed) PullRevisions(_ context.Context, _ channel.Connection, record func(channel.Exchange)) ([]channel.Revision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pulls++
	record(channel.Exchange{Kind: channel.KindRevisionsFeed, HTTPStatus: 200})
	return slices.Clone(f.revs), nil
}
func (f *feed) Ack(_ context.Context, _ channel.Connection, r channel.Revision, record func(channel.Exchange)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.acks == nil {
		f.acks = map[string]int{}
	}
	f.acks[r.RevisionID]++
	f.revs = slices.DeleteFunc(f.revs, func(x channel.Revision) bool { return x.RevisionID == r.RevisionID })
	record(channel.Exchange{Kind: channel.KindAck, HTTPStatus: 200})
	return nil
}
func (f *feed) Test(context.Context, channel.Connection, func(channel.Exchange)) error { return nil }

func (f *feed) serve(revs ...channel.Revision) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revs = append(f.revs, revs...)
}

func (f *feed) acked(rev string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acks[rev]
}

func (f *feed) left() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.revs {
		out = append(out, r.RevisionID)
	}
	return out
}

// revision is a revision of reservation res on the mapped room.
func revision(status, res, rev string, order int64, in, out string) channel.Revision {
	return channel.Revision{RevisionID: rev, ReservationID: res, Channel: "BookingCom", Status: status, Order: order,
		RemotePropertyID: "HOTEL1", RoomTypeID: "ROOM1", RemoteRatePlanID: "BAR", Checkin: in, Checkout: out, Adults: 2,
		Currency: "EUR", Total: "300.00", Guest: channel.Guest{FirstName: "Ada", LastName: "Byron", Email: "ada@example.com"},
		Raw: []byte(`{"revision":"` + rev + `","card":"•••• 1111"}`)}
}

func has(s []string, sub string) bool {
	return slices.ContainsFunc(s, func(x string) bool { return strings.Contains(x, sub) })
}
