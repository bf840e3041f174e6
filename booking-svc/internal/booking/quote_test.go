package booking_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/pricing"
)

// TestQuoteRefusesTakenNights: getinfo refuses a stay with a night held by a booking or a
// block as create refuses it — the same UnavailableError naming the first taken night — so
// that a website's quote widget (which shows any message but Success as the refusal) never
// prices nights its calendar shows as taken. Free nights around them are quoted; a night
// given back (a cancelled booking) is quoted again.
func TestQuoteRefusesTakenNights(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("quote-%d", time.Now().UnixNano())
	const pid = 41
	f.priceable(t, account, pid)
	base := pricing.DateOf(time.Now().UTC()).AddDays(40)
	d := func(n int) pricing.Date { return base.AddDays(n) }
	// A booking of nights 10–12 (check-out on 13), a block of night 20.
	booked, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: booking.Stay{PropertyID: pid, Checkin: d(10), Checkout: d(13),
		Adults: 2, Services: &[]pricing.ServiceLine{}}, Party: ada})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.CreateBlock(ctx, account, booking.BlockRequest{InternalCode: fmt.Sprintf("P%d", pid), Start: d(20), End: d(20)}); err != nil {
		t.Fatal(err)
	}
	stay := func(in, out int) booking.Stay {
		return booking.Stay{PropertyID: pid, Checkin: d(in), Checkout: d(out), Adults: 2, Services: &[]pricing.ServiceLine{}}
	}
	for _, c := range []struct {
		name    string
		in, out int
		taken   int // the first taken night; -1: free
	}{
		{"the booked nights", 10, 13, 10},
		{"ending inside the booking", 8, 12, 10},
		{"starting inside the booking", 12, 15, 12},
		{"around the booking", 9, 14, 10},
		{"the blocked night", 19, 22, 20},
		{"across the booking and the block: the first taken night", 11, 21, 11},
		{"arriving on the booking's check-out day", 13, 16, -1},
		{"leaving on the booking's check-in day", 7, 10, -1},
		{"leaving on the blocked night", 17, 20, -1},
		{"arriving the day after the block", 21, 23, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, pr, err := f.svc.Quote(ctx, account, stay(c.in, c.out), "", 0)
			if c.taken < 0 {
				if err != nil {
					t.Fatalf("free nights refused: %v", err)
				}
				if pr.Result.NightCount != c.out-c.in || !pr.Result.GrandTotal.IsPositive() {
					t.Fatalf("quote %+v", pr.Result)
				}
				return
			}
			var ue *booking.UnavailableError
			if !errors.As(err, &ue) || ue.Date != d(c.taken).String() {
				t.Fatalf("quote of taken nights: %v, want the night of %s taken", err, d(c.taken))
			}
			// create refuses the same stay with the same error.
			_, cerr := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(c.in, c.out), Party: ada})
			if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("create: %v; quote: %v", cerr, err)
			}
		})
	}
	// A stay rule is refused before availability, as create refuses it: too many guests over
	// booked nights names the guests, not the night.
	crowd := stay(10, 13)
	crowd.Adults = 7
	_, _, qerr := f.svc.Quote(ctx, account, crowd, "", 0)
	_, cerr := f.svc.Create(ctx, account, booking.NewBooking{Stay: crowd, Party: ada})
	var fe *booking.FieldError
	if !errors.As(qerr, &fe) || cerr == nil || cerr.Error() != qerr.Error() {
		t.Fatalf("7 guests over booked nights: quote %v, create %v", qerr, cerr)
	}
	// Cancelling the booking gives its nights back to quotes.
	if _, err := f.svc.Cancel(ctx, account, booked.BookingID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.Quote(ctx, account, stay(10, 13), "", 0); err != nil {
		t.Fatalf("after cancelling: %v", err)
	}
}

// TestQuotesRaceACreate: quotes of the same nights while a create takes them never price a
// night already held: each quote either prices the stay (the nights were still free when it
// read them) or names the first night, and once the create has answered every quote refuses.
func TestQuotesRaceACreate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("quote-race-%d", time.Now().UnixNano())
	const pid = 42
	f.priceable(t, account, pid)
	in := pricing.DateOf(time.Now().UTC()).AddDays(50)
	st := booking.Stay{PropertyID: pid, Checkin: in, Checkout: in.AddDays(3), Adults: 2, Services: &[]pricing.ServiceLine{}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	start := make(chan struct{})
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for j := 0; j < 4; j++ {
				_, _, err := f.svc.Quote(ctx, account, st, "", 0)
				var ue *booking.UnavailableError
				if err != nil && (!errors.As(err, &ue) || ue.Date != in.String()) {
					errs <- err
				}
			}
		}()
	}
	close(start)
	if _, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: st, Party: ada}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a quote during the create: %v", err)
	}
	for i := 0; i < 8; i++ {
		var ue *booking.UnavailableError
		if _, _, err := f.svc.Quote(ctx, account, st, "", 0); !errors.As(err, &ue) || ue.Date != in.String() {
			t.Fatalf("a quote after the create: %v", err)
		}
	}
}
