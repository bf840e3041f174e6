package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

func newSnapshots(t *testing.T) *Snapshots {
	t.Helper()
	s, err := NewSnapshots(context.Background(), testDB)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bookingAt(account string, id, version int64, status string) contract.Booking {
	return contract.Booking{AccountID: account, BookingID: id, PropertyID: 3, Status: status, Version: version,
		Checkin: "2027-06-10", Checkout: "2027-06-14", Adults: 2, Currency: "EUR", GrandTotal: "900.00"}
}

// TestSnapshotsVersions: a booking's snapshot keeps the newest version only, with the whole
// contract read back as it was written (payments, deposit, refund).
func TestSnapshotsVersions(t *testing.T) {
	ctx := context.Background()
	s := newSnapshots(t)
	acc := "sv1"
	if b, err := s.Get(ctx, acc, 1); err != nil || b != nil {
		t.Fatalf("none yet: %v %v", b, err)
	}
	paid := time.Date(2027, 5, 1, 9, 30, 0, 0, time.UTC)
	full := bookingAt(acc, 1, 2, "reserved")
	full.Payments = []contract.BookingPayment{{PaymentID: 901, Amount: "300.00", Currency: "EUR", Method: "card", PaidAt: paid, CreatedAt: paid}}
	full.Deposit = &contract.BookingDeposit{Status: contract.DepositHeld, Amount: "200.00", Currency: "EUR", HeldAt: &paid}
	full.Nights = []string{"2027-06-10", "2027-06-11", "2027-06-12", "2027-06-13"}
	steps := []struct {
		b     contract.Booking
		wrote bool
		want  int64
	}{
		{full, true, 2},
		{bookingAt(acc, 1, 1, "reserved"), false, 2},  // older: a replay
		{bookingAt(acc, 1, 2, "cancelled"), false, 2}, // same version again
		{bookingAt(acc, 1, 4, "cancelled"), true, 4},
		{bookingAt(acc, 1, 3, "reserved"), false, 4}, // out of order
	}
	for i, st := range steps {
		wrote, err := s.Save(ctx, st.b)
		if err != nil || wrote != st.wrote {
			t.Fatalf("step %d: wrote %v err %v, want %v", i, wrote, err, st.wrote)
		}
		got, err := s.Get(ctx, acc, 1)
		if err != nil || got == nil || got.Version != st.want {
			t.Fatalf("step %d: %+v %v, want version %d", i, got, err, st.want)
		}
		if i == 0 && !reflect.DeepEqual(*got, full) {
			t.Fatalf("read back\n%+v\nwant\n%+v", *got, full)
		}
	}
	if _, err := s.Save(ctx, contract.Booking{AccountID: acc, Version: 1}); err == nil {
		t.Fatal("a snapshot without a booking id was saved")
	}
}

// TestSnapshotsBookings: Bookings visits the account's live bookings in id order, never a
// cancelled one nor another account's; Delete and Erase forget them.
func TestSnapshotsBookings(t *testing.T) {
	ctx := context.Background()
	s := newSnapshots(t)
	for _, b := range []contract.Booking{
		bookingAt("sb1", 5, 1, "reserved"), bookingAt("sb1", 2, 1, "reserved"), bookingAt("sb1", 9, 1, "reserved"),
		bookingAt("sb1", 4, 3, "cancelled"), bookingAt("sb2", 3, 1, "reserved"), bookingAt("sb1x", 6, 1, "reserved"),
	} {
		if _, err := s.Save(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// Booking 9 is cancelled later: it leaves the live set.
	if _, err := s.Save(ctx, bookingAt("sb1", 9, 2, "cancelled")); err != nil {
		t.Fatal(err)
	}
	live := func(acc string) []int64 {
		var ids []int64
		if err := s.Bookings(ctx, acc, func(b contract.Booking) error {
			if b.AccountID != acc || b.Status != "reserved" {
				t.Fatalf("visited %+v for %s", b, acc)
			}
			ids = append(ids, b.BookingID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := fmt.Sprint(live("sb1")); got != "[2 5]" {
		t.Fatalf("sb1 live %s, want [2 5]", got)
	}
	if got := fmt.Sprint(live("sb2")); got != "[3]" {
		t.Fatalf("sb2 live %s, want [3]", got)
	}
	stop := errors.New("stop")
	if err := s.Bookings(ctx, "sb1", func(contract.Booking) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("fn's error: %v", err)
	}
	if err := s.Delete(ctx, "sb1", 5); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Get(ctx, "sb1", 5); b != nil {
		t.Fatal("deleted snapshot still there")
	}
	if err := s.Erase(ctx, "sb1"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(live("sb1")); got != "[]" {
		t.Fatalf("erased account still has %s", got)
	}
	if b, _ := s.Get(ctx, "sb1", 4); b != nil {
		t.Fatal("erased account's cancelled booking still there")
	}
	// "sb1x" shares the prefix "sb1" but is another account: untouched.
	if got := fmt.Sprint(live("sb1x")); got != "[6]" {
		t.Fatalf("sb1x live %s, want [6]", got)
	}
	if got := fmt.Sprint(live("sb2")); got != "[3]" {
		t.Fatalf("sb2 after sb1's erasure %s, want [3]", got)
	}
}

// TestSnapshotsConcurrent: two replicas (two Snapshots on one database) save 30 versions of
// each of 4 bookings in shuffled order, all at once: every booking ends at its highest
// version.
func TestSnapshotsConcurrent(t *testing.T) {
	ctx := context.Background()
	replicas := []*Snapshots{newSnapshots(t), newSnapshots(t)}
	const versions, bookings = 30, 4
	var wg sync.WaitGroup
	errs := make(chan error, versions*bookings)
	for id := int64(1); id <= bookings; id++ {
		for i, k := range rand.Perm(versions) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := replicas[i%2].Save(ctx, bookingAt("sc1", id, int64(k+1), "reserved"))
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for id := int64(1); id <= bookings; id++ {
		if b, err := replicas[0].Get(ctx, "sc1", id); err != nil || b == nil || b.Version != versions {
			t.Fatalf("booking %d: %+v %v, want version %d", id, b, err, versions)
		}
	}
}
