package booking_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/pricing"
)

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

// gate holds the next change of an account that reaches "<change>:planned" — after the read
// it is planned from, before the claim of its op — until released.
type gate struct {
	mu      sync.Mutex
	armed   map[string]chan struct{} // account → release
	reached map[string]chan struct{} // account → closed when held
}

func (g *gate) hook(step, account string) {
	if len(step) < 8 || step[len(step)-8:] != ":planned" {
		return
	}
	g.mu.Lock()
	release, ok := g.armed[account]
	reached := g.reached[account]
	delete(g.armed, account)
	g.mu.Unlock()
	if ok {
		close(reached)
		<-release
	}
}

func (g *gate) arm(account string) (reached, release chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	reached, release = make(chan struct{}), make(chan struct{})
	g.armed[account], g.reached[account] = release, reached
	return reached, release
}

// TestConcurrentChangesKeepTheLedgerExact: updates and cancels of the same bookings run
// concurrently while other bookings claim the nights they free. Each round holds one change
// of a booking between the read it is planned from and the claim of its op, while another
// change of the same booking completes and a new booking takes the nights that one freed —
// the interleaving in which a stale plan used to release the new booking's nights and leave
// its own booking's new nights held by nobody's document. Ten accounts do this at once, with
// more bookings created at random beside them. Afterwards every night is held by exactly
// the reserved booking whose document lists it: none lost, none held twice, none orphaned.
func TestConcurrentChangesKeepTheLedgerExact(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const pid, span, rounds = 1, 40, 4
	g := &gate{armed: map[string]chan struct{}{}, reached: map[string]chan struct{}{}}
	f.svc.Crash = g.hook
	first := pricing.DateOf(time.Now().UTC()).AddDays(10)
	stay := func(from, n int) booking.Stay {
		return booking.Stay{PropertyID: pid, Checkin: first.AddDays(from), Checkout: first.AddDays(from + n), Adults: 2, Services: &[]pricing.ServiceLine{}}
	}
	// move is an update to other dates.
	move := func(from, n int) booking.Patch {
		in, out := first.AddDays(from), first.AddDays(from+n)
		return booking.Patch{Checkin: &in, Checkout: &out}
	}
	party := booking.Party{Guest: booking.Guest{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"}}

	var mu sync.Mutex
	all := map[string][]int64{} // account → bookings
	keep := func(account string, b booking.Booking, err error) error {
		if err == nil {
			mu.Lock()
			all[account] = append(all[account], b.BookingID)
			mu.Unlock()
		}
		return err
	}
	var held, raced, took, stale, created atomic.Int64
	unexpected := make(chan error, 1000)
	expected := func(err error) bool {
		var ue *booking.UnavailableError
		return err == nil || errors.As(err, &ue) || errors.Is(err, booking.ErrBusy) || errors.Is(err, booking.ErrCancelled)
	}
	var wg sync.WaitGroup
	for a := 0; a < 10; a++ {
		account := "conc" + strconv.Itoa(a)
		f.priceable(t, account, pid)
		wg.Add(2)
		go func() { // the booking whose changes race
			defer wg.Done()
			var b booking.Booking
			var err error
			for try := 0; try == 0 || err != nil; try++ { // random guests may take the nights first
				b, err = f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(rand.IntN(span-3), 2), Party: party})
				if try == 50 || !expected(err) {
					unexpected <- fmt.Errorf("no first booking: %w", err)
					return
				}
			}
			_ = keep(account, b, nil)
			for r := 0; r < rounds; r++ {
				reached, release := g.arm(account)
				slow := make(chan error, 1)
				go func() {
					var err error
					if r == rounds-1 {
						_, err = f.svc.Cancel(ctx, account, b.BookingID)
					} else {
						_, err = f.svc.Update(ctx, account, b.BookingID, move(rand.IntN(span-3), 1+rand.IntN(3)))
					}
					slow <- err
				}()
				select {
				case <-reached:
				case err := <-slow:
					if !expected(err) {
						unexpected <- err
					}
					continue
				}
				held.Add(1)
				// Meanwhile another change of the booking completes…
				before, err := f.st.Booking(ctx, account, b.BookingID)
				if err != nil {
					unexpected <- err
				}
				if _, err := f.svc.Update(ctx, account, b.BookingID, move(rand.IntN(span-3), 1+rand.IntN(2))); err == nil {
					raced.Add(1)
					// …and a new booking takes the nights it freed.
					in, _ := pricing.ParseDate(before.Checkin)
					y, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: booking.Stay{PropertyID: pid, Checkin: in,
						Checkout: in.AddDays(len(before.Nights)), Adults: 2, Services: &[]pricing.ServiceLine{}}, Party: party})
					if keep(account, y, err) == nil {
						took.Add(1)
					}
				} else if !expected(err) {
					unexpected <- err
				}
				close(release)
				if err := <-slow; !expected(err) {
					unexpected <- err
				} else if err == nil {
					stale.Add(1)
				}
			}
		}()
		go func() { // other guests book at random
			defer wg.Done()
			for n := 0; n < 8; n++ {
				b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(rand.IntN(span-2), 1+rand.IntN(2)), Party: party})
				if err := keep(account, b, err); err == nil {
					created.Add(1)
				} else if !expected(err) {
					unexpected <- err
				}
			}
		}()
	}
	wg.Wait()
	close(unexpected)
	for err := range unexpected {
		t.Errorf("unexpected error: %v", err)
	}
	t.Logf("%d changes held before their op, while %d changes of the same booking completed and %d new bookings took the nights freed; "+
		"%d held changes then succeeded; %d random bookings", held.Load(), raced.Load(), took.Load(), stale.Load(), created.Load())

	// Every night is held by exactly the reserved booking that lists it.
	var dates []string
	for i := 0; i < span+3; i++ {
		dates = append(dates, first.AddDays(i).String())
	}
	for account, ids := range all {
		want := map[string]string{}
		for _, id := range ids {
			b, err := f.st.Booking(ctx, account, id)
			if err != nil {
				t.Fatal(err)
			}
			if b.Status != booking.StatusReserved {
				continue
			}
			for _, n := range b.Nights {
				if o, dup := want[n]; dup {
					t.Errorf("%s: night %s listed by %s and booking:%d", account, n, o, id)
				}
				want[n] = "booking:" + strconv.FormatInt(id, 10)
			}
		}
		for d, o := range f.owners(t, account, pid, dates) {
			if o != want[d] {
				t.Errorf("%s: night %s held by %q, its reserved booking is %q", account, d, o, want[d])
			}
		}
	}
}
