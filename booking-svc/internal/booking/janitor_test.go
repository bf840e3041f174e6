package booking_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/ledger/nightstore"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "booking_test", &db, nil) }

// discard is a publisher for tests that do not read the events.
type discard struct{}

func (discard) Publish(context.Context, ...events.Message) error { return nil }

type fixture struct {
	svc *booking.Service
	st  *store.Store
	led *ledger.Ledger
	vw  *propertyview.Store
}

func bookingOwner(id int64) string { return "booking:" + strconv.FormatInt(id, 10) }

func newFixture(t *testing.T) fixture {
	t.Helper()
	return newFixtureIn(t, db)
}

// openStores opens the bookings' store on db, its outbox publishing nowhere, and the
// ledger's nights: what every fixture of this package builds its service on.
func openStores(t *testing.T, db *mongo.Database) (*store.Store, *nightstore.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := store.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.Attach(outbox.New(db, discard{}, st.Snapshot, outbox.Options{}))
	nights, err := nightstore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return st, nights
}

// newFixtureIn is newFixture on database db.
func newFixtureIn(t *testing.T, db *mongo.Database) fixture {
	t.Helper()
	ctx := context.Background()
	st, nights := openStores(t, db)
	led := ledger.New(nights)
	vw, err := propertyview.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := seal.New(seal.NewKey())
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(vw), Bookings: st, Blocks: st, Users: st, Ledger: led,
		Gateway: cardpay.NewTest(time.Now), Box: box})
	return fixture{svc: svc, st: st, led: led, vw: vw}
}

func (f fixture) owners(t *testing.T, account string, pid int64, dates []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dates {
		o, err := f.led.Owner(context.Background(), account, pid, d)
		if err != nil {
			t.Fatal(err)
		}
		out[d] = o
	}
	return out
}

// reserve stores a reserved booking holding dates, as a finished create leaves it.
func (f fixture) reserve(t *testing.T, account string, id, pid int64, dates []string) {
	t.Helper()
	ctx := context.Background()
	if err := f.st.InsertPending(ctx, booking.Booking{AccountID: account, BookingID: id, PropertyID: pid, Nights: dates, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := f.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: dates}, bookingOwner(id)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Update(ctx, account, id, booking.Reserved, func(b *booking.Booking) error { b.Status = booking.StatusReserved; return nil }); err != nil {
		t.Fatal(err)
	}
}

// repair runs the janitor as if every op were older than the lease.
func (f fixture) repair(t *testing.T) {
	t.Helper()
	if _, err := f.led.Repair(context.Background(), -time.Hour, f.svc.Current); err != nil {
		t.Fatal(err)
	}
}

func TestJanitorRepairsACrashedCreate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dates := []string{"2027-01-10", "2027-01-11"}
	owner := bookingOwner(1)
	stay := ledger.Stay{Account: "j1", PropertyID: 1, Dates: dates}
	if err := f.led.Begin(ctx, ledger.Op{Owner: owner, Account: "j1", Claim: []ledger.Stay{stay}}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.InsertPending(ctx, booking.Booking{AccountID: "j1", BookingID: 1, PropertyID: 1, Nights: dates, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := f.led.Claim(ctx, stay, owner); err != nil {
		t.Fatal(err)
	}
	// …the process dies before the booking is reserved.
	f.repair(t)
	for d, o := range f.owners(t, "j1", 1, dates) {
		if o != "" {
			t.Fatalf("night %s still held by %s", d, o)
		}
	}
	b, err := f.st.Booking(ctx, "j1", 1)
	if err != nil || b.Status != booking.StatusFailed {
		t.Fatalf("abandoned booking is %q (%v), want failed", b.Status, err)
	}
}

func TestJanitorRepairsACrashedUpdate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old, moved := []string{"2027-02-01", "2027-02-02"}, []string{"2027-02-10", "2027-02-11"}

	// Crash after claiming the new nights, before the booking moved: the new nights go.
	f.reserve(t, "j2", 2, 1, old)
	op := ledger.Op{Owner: bookingOwner(2), Account: "j2", Claim: []ledger.Stay{{PropertyID: 1, Dates: moved}}, Release: []ledger.Stay{{PropertyID: 1, Dates: old}}}
	if err := f.led.Begin(ctx, op); err != nil {
		t.Fatal(err)
	}
	if err := f.led.Claim(ctx, ledger.Stay{Account: "j2", PropertyID: 1, Dates: moved}, bookingOwner(2)); err != nil {
		t.Fatal(err)
	}
	f.repair(t)
	got := f.owners(t, "j2", 1, append(append([]string{}, old...), moved...))
	if got[old[0]] != "booking:2" || got[old[1]] != "booking:2" || got[moved[0]] != "" || got[moved[1]] != "" {
		t.Fatalf("after repairing a crash before the move: %v", got)
	}

	// Crash after the booking moved, before the old nights were freed: the old nights go.
	if err := f.led.Begin(ctx, op); err != nil {
		t.Fatal(err)
	}
	if err := f.led.Claim(ctx, ledger.Stay{Account: "j2", PropertyID: 1, Dates: moved}, bookingOwner(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Update(ctx, "j2", 2, booking.Updated, func(b *booking.Booking) error { b.Nights = moved; return nil }); err != nil {
		t.Fatal(err)
	}
	f.repair(t)
	got = f.owners(t, "j2", 1, append(append([]string{}, old...), moved...))
	if got[old[0]] != "" || got[old[1]] != "" || got[moved[0]] != "booking:2" || got[moved[1]] != "booking:2" {
		t.Fatalf("after repairing a crash after the move: %v", got)
	}
}
