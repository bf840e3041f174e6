package store

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/faults"
)

// TestUpdateListedPastItsDeadline: a change whose request deadline ends once the booking is
// written (a loaded machine: the crash suite's confirms have one second) is answered as
// done, and the next list shows it, without waiting for the outbox relay (which these
// tests do not run). Before, the list entry's write took the request's ended context,
// failed, and the booking was missing from every list until the relay came by.
func TestUpdateListedPastItsDeadline(t *testing.T) {
	s := newStore(t)
	purgeAfter(t, s)
	acc := fresh("rd")
	b := pending(t, s, acc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = faults.With(ctx, func(step string) {
		if step == "listing" {
			cancel() // the deadline ends between the booking's write and its list entry's
		}
	})
	got, err := s.Update(ctx, acc, b.BookingID, booking.Reserved, setStatus(booking.StatusReserved))
	if err != nil || got.Status != booking.StatusReserved {
		t.Fatalf("update: %+v %v", got.Status, err)
	}
	list, n, err := s.List(context.Background(), acc, booking.ListFilter{BookingID: b.BookingID})
	if err != nil || n != 1 || len(list) != 1 || list[0].BookingID != b.BookingID {
		t.Fatalf("list after the update: %d of %d (%v), want booking %d", len(list), n, err, b.BookingID)
	}
}

// TestUpdateStoppedWhileListingHoldsNoLock: a request stopped between a booking's write and
// its list entry's (a crash test's runtime.Goexit; a panic alike) leaves the booking's lock
// free: the next update of the booking goes through instead of waiting for ever (a held
// stripe would also stop every other booking sharing it).
func TestUpdateStoppedWhileListingHoldsNoLock(t *testing.T) {
	s := newStore(t)
	purgeAfter(t, s)
	acc := fresh("stop")
	b := pending(t, s, acc)
	ctx := faults.With(context.Background(), func(step string) {
		if step == "listing" {
			runtime.Goexit()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Update(ctx, acc, b.BookingID, booking.Reserved, setStatus(booking.StatusReserved))
	}()
	<-done
	next := make(chan error, 1)
	go func() {
		_, err := s.Update(context.Background(), acc, b.BookingID, booking.Updated, func(*booking.Booking) error { return nil })
		next <- err
	}()
	select {
	case err := <-next:
		if err != nil {
			t.Fatalf("the next update: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the next update still waits for the lock of the stopped one")
	}
}
