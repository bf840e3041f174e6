package booking_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestJanitorCountsRepairs: a pass of the janitor that repairs a crashed create (a booking)
// and a crashed block counts one repair of each kind in vros_janitor_repairs_total{kind};
// a pass with nothing left to repair counts nothing more.
func TestJanitorCountsRepairs(t *testing.T) {
	ctx := context.Background()
	own := db.Client().Database(fmt.Sprintf("booking_janitor_metrics_%d", time.Now().UnixNano()))
	t.Cleanup(func() { _ = own.Drop(context.Background()) })
	f := newFixtureIn(t, own) // a database of its own: no op of another test is repaired here
	dates := []string{"2027-03-10", "2027-03-11"}
	crash := func(owner string, pid int64) {
		stay := ledger.Stay{Account: "jm", PropertyID: pid, Dates: dates}
		if err := f.led.Begin(ctx, ledger.Op{Owner: owner, Account: "jm", Claim: []ledger.Stay{stay}}); err != nil {
			t.Fatal(err)
		}
		if err := f.led.Claim(ctx, stay, owner); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.st.InsertPending(ctx, booking.Booking{AccountID: "jm", BookingID: 7, PropertyID: 1, Nights: dates, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	crash(bookingOwner(7), 1) // the create stops before the booking is reserved
	crash("block:8", 2)       // a block's nights claimed, its document never written

	metrics := telemetrytest.NewMetrics(t)
	j := booking.Janitor{Bookings: f.svc, Lease: -time.Hour, Retention: 1000 * time.Hour, Meter: metrics.Meter(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	j.Pass(ctx)
	j.Pass(ctx)
	const name = "vros_janitor_repairs_total"
	for kind, want := range map[string]float64{booking.RepairBooking: 1, booking.RepairBlock: 1, booking.RepairOther: 0} {
		if v := metrics.Value(t, name, "kind", kind); v != want {
			t.Errorf("%s{kind=%q} = %v, want %v", name, kind, v, want)
		}
	}
	for _, s := range metrics.Scrape(t)[name].Series {
		if len(s.Labels) != 1 {
			t.Errorf("%s labels %v, want kind only", name, s.Labels)
		}
	}
	for d, o := range f.owners(t, "jm", 1, dates) {
		if o != "" {
			t.Errorf("night %s still held by %s after the repair", d, o)
		}
	}
}
