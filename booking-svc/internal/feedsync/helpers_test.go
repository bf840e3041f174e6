package feedsync_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/feedsync"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/ledger/nightstore"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "feedsync_test", &db, nil) }

// discard is a publisher for tests that do not read the events.
type discard struct{}

func (discard) Publish(context.Context, ...events.Message) error { return nil }

// fixture is a feed syncer over the real store, ledger and view on the embedded database,
// beside the booking domain that reserves nights and deletes blocks on the same stores.
type fixture struct {
	svc   *booking.Service
	feeds *feedsync.Syncer
	st    *store.Store
	led   *ledger.Ledger
	vw    *propertyview.Store
}

func newFixture(t *testing.T) fixture {
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
	led := ledger.New(nights)
	vw, err := propertyview.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := seal.New(seal.NewKey())
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(vw), Bookings: st, Blocks: st, Users: st, Ledger: led,
		Gateway: cardpay.NewTest(time.Now), Box: box})
	f := fixture{svc: svc, st: st, led: led, vw: vw}
	f.feeds = f.syncer(st, led)
	return f
}

// syncer is a feed syncer of f's property view over blocks and ledger (f's own, or ones
// that fail on purpose), repairing with f's domain.
func (f fixture) syncer(blocks booking.Blocks, led booking.Ledger) *feedsync.Syncer {
	return feedsync.New(feedsync.Deps{PropertyView: propertyview.NewReader(f.vw), Blocks: blocks, Ledger: led, Current: f.svc.Current})
}

func day(s string) pricing.Date {
	d, err := pricing.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// priceable puts a property of account in the view: 100 a night, any day in and out.
func (f fixture) priceable(t *testing.T, account string, pid int64) {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":1,"deleted":false,
	 "content":{"name":"Concurrency test property","maxguest":6},
	 "rates":{"rate":{"daily_price":"100"},"minimum_stay":1,
	   "setting":{"standard_occupants":6,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}}`,
		account, pid, pid)
	v, err := events.Encode("/test", "vros.property.rates.updated", account, time.Now(), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.vw.Apply(context.Background(), kafka.Message{Value: v}); err != nil {
		t.Fatal(err)
	}
}

// reserve stores a reserved booking holding dates, as a finished create leaves it.
func (f fixture) reserve(t *testing.T, account string, id, pid int64, dates []string) {
	t.Helper()
	ctx := context.Background()
	if err := f.st.InsertPending(ctx, booking.Booking{AccountID: account, BookingID: id, PropertyID: pid, Nights: dates, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	owner := fmt.Sprintf("booking:%d", id)
	if err := f.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: dates}, owner); err != nil {
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
