package booking_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
)

// channelService is a service of f's stores that takes channel reservations.
func (f fixture) channelService(crash func(step, account string)) *booking.Service {
	box, _ := seal.New(seal.NewKey())
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: cardpay.NewTest(time.Now), Channel: f.st, Box: box})
	svc.Crash = crash
	return svc
}

func channelRev(status, res, rev string, order int64, in string, nights int) booking.ChannelRevision {
	d, _ := pricing.ParseDate(in)
	return booking.ChannelRevision{ConnectionID: 3, Channel: "Airbnb", ReservationID: res, RevisionID: rev, Order: order, Status: status,
		PropertyID: 1, Checkin: d, Checkout: d.AddDays(nights), Adults: 2, Currency: "EUR", Total: decimal.NewFromInt(int64(100 * nights)),
		Guest: booking.Guest{FirstName: "Crash", LastName: "Test"}}
}

// stopAt is a Crash hook that ends the calling goroutine at step (as if the process died
// there) for account, and records every step it sees.
type stopAt struct {
	mu    sync.Mutex
	step  string
	seen  []string
	fired bool
}

func (s *stopAt) hook(step, _ string) {
	s.mu.Lock()
	s.seen = append(s.seen, step)
	stop := step == s.step && !s.fired
	if stop {
		s.fired = true
	}
	s.mu.Unlock()
	if stop {
		runtime.Goexit()
	}
}

// run applies r on svc in a goroutine of its own and waits for it to return or die.
func run(svc *booking.Service, account string, r booking.ChannelRevision) (res booking.ChannelResult, err error, died bool) {
	done := make(chan struct{})
	died = true
	go func() {
		defer close(done)
		res, err = svc.ApplyChannel(context.Background(), account, r)
		died = false
	}()
	<-done
	return res, err, died
}

// TestChannelCrashAtEveryStep: a new revision, a modification and a cancellation are each
// stopped at every step they pass (the process dying there); the janitor repairs what the
// stop left and integration-svc applies the same revision again: the reservation ends with
// one booking in the revision's state, holding exactly its nights, and no op is left.
func TestChannelCrashAtEveryStep(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("chcrash-%d", time.Now().UnixNano())
	f.priceable(t, account, 1)

	// The steps each kind passes, from a run that is not stopped.
	rec := &stopAt{}
	svc := f.channelService(rec.hook)
	for k, r := range []booking.ChannelRevision{
		channelRev("new", "S", "s1", 1, "2030-01-01", 2), channelRev("modified", "S", "s2", 2, "2030-01-02", 3),
		channelRev("cancelled", "S", "s3", 3, "", 0),
	} {
		rec.mu.Lock()
		rec.seen = nil
		rec.mu.Unlock()
		if _, err := svc.ApplyChannel(ctx, account, r); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s passes %v", r.Status, rec.seen)
		steps := slices.Clone(rec.seen)
		if len(steps) < 4 {
			t.Fatalf("%s passes only %v", r.Status, steps)
		}
		for i, step := range steps {
			res := fmt.Sprintf("X-%s-%d", r.Status, i)
			in := fmt.Sprintf("%d-%02d-01", 2032+2*k+i/10, 1+i%10)
			healthy := f.channelService(nil)
			// Bring the reservation to the state before r.
			if r.Status != "new" {
				if _, err := healthy.ApplyChannel(ctx, account, channelRev("new", res, "n", 1, in, 2)); err != nil {
					t.Fatal(err)
				}
			}
			var want booking.ChannelRevision
			switch r.Status {
			case "new":
				want = channelRev("new", res, "n", 1, in, 2)
			case "modified":
				want = channelRev("modified", res, "m", 2, in, 4)
				want.Checkin = want.Checkin.AddDays(1)
				want.Checkout = want.Checkout.AddDays(1)
			default:
				want = channelRev("cancelled", res, "c", 2, "", 0)
			}
			stop := &stopAt{step: step}
			dying := f.channelService(stop.hook)
			_, err, died := run(dying, account, want)
			if !died {
				t.Fatalf("%s stopped at %s did not stop (%v)", r.Status, step, err)
			}
			f.repair(t) // the janitor, after the lease
			out, err := healthy.ApplyChannel(ctx, account, want)
			if err != nil {
				t.Fatalf("%s applied again after a stop at %s: %v", r.Status, step, err)
			}
			f.checkChannel(t, account, res, out.Booking, want)
			// And once more: nothing changes.
			again, err := healthy.ApplyChannel(ctx, account, want)
			if err != nil || again.Applied || again.Booking.BookingID != out.Booking.BookingID || again.Booking.Version != out.Booking.Version {
				t.Fatalf("%s stopped at %s, applied a third time: %+v %v", r.Status, step, again, err)
			}
		}
	}
}

// checkChannel checks that reservation res has one booking, b, in the state of r, holding
// exactly its nights, with no op left.
func (f fixture) checkChannel(t *testing.T, account, res string, b booking.Booking, r booking.ChannelRevision) {
	t.Helper()
	ctx := context.Background()
	id, err := f.st.ReservationBooking(ctx, account, 3, res)
	if err != nil || id != b.BookingID {
		t.Fatalf("reservation %s is booking %d (%v), answered %d", res, id, err, b.BookingID)
	}
	cur, err := f.st.Booking(ctx, account, id)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := booking.StatusReserved
	if r.Status == "cancelled" {
		wantStatus = booking.StatusCancelled
	}
	if cur.Status != wantStatus || !slices.Contains(cur.ChannelRes.Revisions, r.RevisionID) {
		t.Fatalf("reservation %s: %s %v, want %s with revision %s", res, cur.Status, cur.ChannelRes, wantStatus, r.RevisionID)
	}
	// A cancellation decides its refund in the same write (nothing was paid: none).
	if (r.Status == "cancelled") != (cur.Refund != nil) || cur.Refund != nil && cur.Refund.Status != booking.RefundNone {
		t.Fatalf("reservation %s: %s with refund %+v", res, cur.Status, cur.Refund)
	}
	if r.Status != "cancelled" && (cur.Checkin != r.Checkin.String() || cur.Checkout != r.Checkout.String()) {
		t.Fatalf("reservation %s: %s..%s, want %s..%s", res, cur.Checkin, cur.Checkout, r.Checkin, r.Checkout)
	}
	// Every night of the year around: held by this booking exactly where it says.
	d, _ := pricing.ParseDate(cur.Checkin)
	var all []string
	for x := d.AddDays(-5); x.Before(d.AddDays(10)); x = x.AddDays(1) {
		all = append(all, x.String())
	}
	owner := bookingOwner(id)
	for date, o := range f.owners(t, account, 1, all) {
		held := cur.Status == booking.StatusReserved && slices.Contains(cur.Nights, date)
		if held != (o == owner) || (!held && o != "" && strings.HasPrefix(o, owner)) {
			t.Fatalf("reservation %s: night %s held by %q (booking %s %v)", res, date, o, cur.Status, cur.Nights)
		}
	}
	if n, err := db.Collection("ledger_ops").CountDocuments(ctx, bson.D{{Key: "_id", Value: account + ":" + owner}}); n != 0 || err != nil {
		t.Fatalf("reservation %s: %d ops left (%v)", res, n, err)
	}
}
