package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/testkit/testinfra"
)

var (
	db       *mongo.Database
	commands = &recorder{}
)

// The tests run against the embedded FerretDB (or the server VROS_MONGO_URI names), with a
// client that records every command, to show what a list reads.
func TestMain(m *testing.M) {
	ctx := context.Background()
	uri := os.Getenv("VROS_MONGO_URI")
	var infra *testinfra.Infra
	if uri == "" {
		var err error
		if infra, err = testinfra.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		uri = infra.MongoURI
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetMonitor(&event.CommandMonitor{Started: commands.started}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	db = client.Database(fmt.Sprintf("store_test_%d", time.Now().UnixNano()))
	code := m.Run()
	_ = db.Drop(ctx)
	_ = client.Disconnect(ctx)
	if infra != nil {
		infra.Close()
	}
	os.Exit(code)
}

// recorder keeps the commands sent while it is on.
type recorder struct {
	mu   sync.Mutex
	on   bool
	seen []bson.Raw
}

func (r *recorder) started(_ context.Context, e *event.CommandStartedEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.seen = append(r.seen, append(bson.Raw(nil), e.Command...))
	}
}

func (r *recorder) record(f func()) []bson.Raw {
	r.mu.Lock()
	r.on, r.seen = true, nil
	r.mu.Unlock()
	f()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.seen
}

type discard struct{}

func (discard) Publish(context.Context, ...events.Message) error { return nil }

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.Attach(outbox.New(db, discard{}, s.Snapshot, outbox.Options{}))
	return s
}

// book stores a reserved booking as a create leaves it.
func book(t *testing.T, s *Store, account string, pid int64, checkin, checkout, last string) booking.Booking {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextBookingID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := booking.Booking{AccountID: account, BookingID: id, PropertyID: pid, Checkin: checkin, Checkout: checkout, Nights: []string{checkin},
		Guest: booking.Guest{FirstName: "Ada", LastName: last, Email: "ada@example.com"}, CreatedAt: s.Now(), UpdatedAt: s.Now()}
	if err := s.InsertPending(ctx, b); err != nil {
		t.Fatal(err)
	}
	out, err := s.Update(ctx, account, id, booking.Reserved, setStatus(booking.StatusReserved))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setStatus is a change that sets a booking's status.
func setStatus(status string) func(*booking.Booking) error {
	return func(b *booking.Booking) error { b.Status = status; return nil }
}

func ids(bs []booking.Booking) []int64 {
	out := []int64{}
	for _, b := range bs {
		out = append(out, b.BookingID)
	}
	return out
}

// TestListReadsOnlyItsAccount: on FerretDB a list of one account never queries the
// bookings collection with anything but an `_id` (so it never reads another account's
// bookings), and answers exactly what the indexed query answers.
func TestListReadsOnlyItsAccount(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for i := 0; i < 12; i++ {
		last := "Lovelace"
		if i%3 == 0 {
			last = "Hopper"
		}
		b := book(t, s, "la", int64(1+i%2), fmt.Sprintf("2027-03-%02d", 1+2*i), fmt.Sprintf("2027-03-%02d", 3+2*i), last)
		if i == 4 {
			if _, err := s.Update(ctx, "la", b.BookingID, booking.Cancelled, setStatus(booking.StatusCancelled)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Attempts that are not bookings.
	id, _ := s.NextBookingID(ctx)
	if err := s.InsertPending(ctx, booking.Booking{AccountID: "la", BookingID: id, PropertyID: 1, Checkin: "2027-03-01", Checkout: "2027-03-02"}); err != nil {
		t.Fatal(err)
	}
	filters := []booking.ListFilter{
		{Limit: 10}, {Skip: 10, Limit: 10}, {Limit: 100, Keyword: "hop"}, {Limit: 100, PropertyID: 2},
		{Limit: 100, From: "2027-03-10", To: "2027-03-14"}, {Limit: 3, Keyword: "LOVE", PropertyID: 1},
	}
	want := map[int][]int64{}
	wantTotal := map[int]int64{}
	for i, f := range filters {
		want[i], wantTotal[i] = queryBookings(t, "la", f)
	}
	// Another tenant with many bookings.
	var others []any
	for i := 0; i < 2000; i++ {
		others = append(others, BookingRec{ID: fmt.Sprintf("lb:%d", 900000+i), AccountID: "lb", BookingID: int64(900000 + i), PropertyID: 1,
			Status: booking.StatusReserved, Checkin: "2027-03-01", Checkout: "2027-03-05", Guest: GuestRec{LastName: "Lovelace"}})
	}
	if _, err := db.Collection(collBookings).InsertMany(ctx, others); err != nil {
		t.Fatal(err)
	}
	for i, f := range filters {
		var got []booking.Booking
		var total int64
		var err error
		seen := commands.record(func() { got, total, err = s.List(ctx, "la", f) })
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range seen {
			if coll, ok := c.Lookup("find").StringValueOK(); ok && coll == collBookings {
				if filter := c.Lookup("filter").Document(); !idOnly(filter) {
					t.Errorf("list %+v queried the bookings with %s", f, filter)
				}
			}
			for _, name := range []string{"count", "aggregate"} {
				if coll, ok := c.Lookup(name).StringValueOK(); ok && coll == collBookings {
					t.Errorf("list %+v ran %s on the bookings", f, name)
				}
			}
		}
		if total != wantTotal[i] || !reflect.DeepEqual(ids(got), want[i]) {
			t.Errorf("list %+v: %d %v, the indexed query %d %v", f, total, ids(got), wantTotal[i], want[i])
		}
	}

	// The figures of docs/booking.md: one account's list beside 2000 bookings of another.
	start := time.Now()
	if _, _, err := s.List(ctx, "la", booking.ListFilter{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	t.Logf("listbooking of 11 bookings beside 2000 of another account: per-account list %v", time.Since(start).Round(time.Microsecond))
	start = time.Now()
	queryBookings(t, "la", booking.ListFilter{Limit: 10})
	t.Logf("the same query on the bookings collection: %v", time.Since(start).Round(time.Microsecond))
}

// queryBookings is the reference answer: the filter run on the bookings collection itself
// (the ids of the page, and how many match).
func queryBookings(t *testing.T, account string, f booking.ListFilter) ([]int64, int64) {
	t.Helper()
	ctx := context.Background()
	q := query(account, f)
	n, err := db.Collection(collBookings).CountDocuments(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection(collBookings).Find(ctx, q, options.Find().SetSort(bson.D{{Key: "booking_id", Value: -1}}).SetSkip(f.Skip).SetLimit(f.Limit))
	if err != nil {
		t.Fatal(err)
	}
	var recs []BookingRec
	if err := cur.All(ctx, &recs); err != nil {
		t.Fatal(err)
	}
	out := []int64{}
	for _, r := range recs {
		out = append(out, r.BookingID)
	}
	return out, n
}

// idOnly reports whether a filter is a lone `_id` equal to a string: all FerretDB pushes down.
func idOnly(filter bson.Raw) bool {
	elems, err := filter.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return false
	}
	_, ok := elems[0].Value().StringValueOK()
	return ok
}

// TestListEntryRepaired: a booking changed by a writer that stopped before writing its list
// entry is listed right once the relay reads it (Snapshot), and a list that meets an entry
// older than its booking repairs it.
func TestListEntryRepaired(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	b := book(t, s, "lr", 1, "2027-04-01", "2027-04-03", "Hopper")
	// The writer changes the document, then stops.
	stale := func(last string) {
		t.Helper()
		if _, err := db.Collection(collBookings).UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(b.AccountID, b.BookingID)}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "guest.last_name", Value: last}}}, {Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(kw string) int64 {
		t.Helper()
		_, n, err := s.List(ctx, "lr", booking.ListFilter{Limit: 10, Keyword: kw})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	stale("Lamarr")
	if _, err := s.Snapshot(ctx, BookingAggregate("lr", b.BookingID)); err != nil {
		t.Fatal(err)
	}
	if list("lamarr") != 1 || list("hopper") != 0 {
		t.Fatal("the relay's read did not repair the list entry")
	}
	stale("Noether")
	if n := list("lamarr"); n != 0 {
		t.Fatalf("a stale entry listed a booking that no longer matches (%d)", n)
	}
	if list("noether") != 1 {
		t.Fatal("the list did not repair the entry it met")
	}
}

// TestFailedAttempts: a failed attempt loses its card at once and is deleted after the
// retention; bookings and attempts still pending are left alone.
func TestFailedAttempts(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	attempt := func() int64 {
		t.Helper()
		id, _ := s.NextBookingID(ctx)
		if err := s.InsertPending(ctx, booking.Booking{AccountID: "fa", BookingID: id, PropertyID: 1, Guest: booking.Guest{LastName: "Hopper"},
			Card: &booking.SealedCard{Sealed: "sealed-card", Masked: "•••• 4242"}}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	failed, pending := attempt(), attempt()
	kept := book(t, s, "fa", 1, "2027-05-01", "2027-05-02", "Lamarr")
	if err := s.MarkFailed(ctx, "fa", failed); err != nil {
		t.Fatal(err)
	}
	b, err := s.Booking(ctx, "fa", failed)
	if err != nil || b.Status != booking.StatusFailed || b.Card != nil || b.Guest.LastName != "Hopper" {
		t.Fatalf("failed attempt: %+v, %v", b, err)
	}
	if n, err := s.PurgeFailed(ctx, s.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("purged %d (%v) within the retention", n, err)
	}
	if n, err := s.PurgeFailed(ctx, s.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purged %d (%v) after the retention, want 1", n, err)
	}
	if _, err := s.Booking(ctx, "fa", failed); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("failed attempt still there: %v", err)
	}
	for _, id := range []int64{pending, kept.BookingID} {
		if _, err := s.Booking(ctx, "fa", id); err != nil {
			t.Fatalf("booking %d purged: %v", id, err)
		}
	}
}

// TestSnapshotOfAttempts: the relay publishes nothing for an attempt that never became a
// booking, waits for one still pending, and publishes a booking's nights only while reserved.
func TestSnapshotOfAttempts(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id, _ := s.NextBookingID(ctx)
	if err := s.InsertPending(ctx, booking.Booking{AccountID: "sa", BookingID: id, PropertyID: 1, Nights: []string{"2027-06-01"}}); err != nil {
		t.Fatal(err)
	}
	agg := BookingAggregate("sa", id)
	if m, err := s.Snapshot(ctx, agg); !errors.Is(err, outbox.ErrNotReady) {
		t.Fatalf("pending booking: %v, %v; want not ready", m, err)
	}
	if err := s.MarkFailed(ctx, "sa", id); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Snapshot(ctx, agg); err != nil || len(m) != 0 {
		t.Fatalf("failed attempt: %v, %v; want nothing", m, err)
	}
	if m, err := s.Snapshot(ctx, BookingAggregate("sa", 987654321)); err != nil || len(m) != 0 {
		t.Fatalf("absent booking: %v, %v; want nothing", m, err)
	}
	b := book(t, s, "sa", 1, "2027-06-10", "2027-06-11", "Hopper")
	for _, want := range []struct {
		status string
		nights int
	}{{booking.StatusReserved, 1}, {booking.StatusCancelled, 0}} {
		if want.status == booking.StatusCancelled {
			if _, err := s.Update(ctx, "sa", b.BookingID, booking.Cancelled, setStatus(booking.StatusCancelled)); err != nil {
				t.Fatal(err)
			}
		}
		m, err := s.Snapshot(ctx, BookingAggregate("sa", b.BookingID))
		if err != nil || len(m) != 1 || m[0].Topic != events.TopicBooking {
			t.Fatalf("%s booking: %v, %v", want.status, m, err)
		}
		var ev contract.Booking
		if _, err := events.Decode(m[0].Value, &ev); err != nil || ev.Status != want.status || len(ev.Nights) != want.nights {
			t.Fatalf("%s booking event: %+v, %v", want.status, ev, err)
		}
	}
}
