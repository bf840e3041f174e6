package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentCreates: 50 creates for overlapping dates of one property at once give
// exactly one booking; the 49 others get status 8; the ledger holds exactly that booking's
// nights.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "RACE1")
	type result struct {
		code   int
		status int
		id     int64
	}
	results := make([]result, 50)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every stay overlaps the night of day(62): starts from day(58) to day(62).
			g := guest(pid, day(58+i%5), day(63+i%3))
			r := acc.b(t, "create", g)
			var d struct {
				Status int `json:"status"`
				Data   struct {
					BookingID int64 `json:"bookingId"`
				} `json:"data"`
			}
			r.decode(t, &d)
			results[i] = result{r.Code, d.Status, d.Data.BookingID}
		}()
	}
	wg.Wait()
	var winners []int64
	for i, r := range results {
		switch {
		case r.code == http.StatusOK && r.status == 0:
			winners = append(winners, r.id)
		case r.code == http.StatusOK && r.status == 8:
		default:
			t.Fatalf("request %d: HTTP %d status %d", i, r.code, r.status)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d bookings for overlapping dates: %v", len(winners), winners)
	}
	var b bookingData
	acc.b(t, "listbooking", obj{"bookingId": winners[0]}).ok(t, nil)
	var list struct {
		Total int           `json:"totalRecords"`
		List  []bookingData `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &list)
	if list.Total != 1 {
		t.Fatalf("listbooking shows %d bookings", list.Total)
	}
	b = list.List[0]
	owner := fmt.Sprintf("booking:%d", b.BookingID)
	h := held(t, acc, pid, day(55), 15)
	if len(h) != b.QtyOfNights {
		t.Fatalf("ledger holds %d nights, the booking has %d: %v", len(h), b.QtyOfNights, h)
	}
	for d, o := range h {
		if o != owner {
			t.Fatalf("night %s held by %s, want %s", d, o, owner)
		}
		if _, ok := b.NightlyDetail[d]; !ok {
			t.Fatalf("night %s held but not in the booking", d)
		}
	}
}

// TestConcurrentUpdates: 50 bookings on separate dates are all moved at once onto the
// same dates; exactly one move succeeds, the others get status 8 and keep their own nights.
func TestConcurrentUpdates(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "RACE2")
	ids := make([]int64, 50)
	for i := range ids {
		ids[i] = create(t, acc, guest(pid, day(100+2*i), day(101+2*i))).BookingID
	}
	codes := make([]int, 50)
	statuses := make([]int, 50)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := acc.b(t, "update", obj{"bookingId": ids[i], "checkin": day(250), "checkout": day(253)})
			var a bAnswer
			r.decode(t, &a)
			codes[i], statuses[i] = r.Code, a.Status
		}()
	}
	wg.Wait()
	winner := -1
	for i := range ids {
		switch {
		case codes[i] == http.StatusOK && statuses[i] == 0:
			if winner >= 0 {
				t.Fatalf("bookings %d and %d both moved onto the same nights", ids[winner], ids[i])
			}
			winner = i
		case codes[i] == http.StatusOK && statuses[i] == 8:
		default:
			t.Fatalf("update %d: HTTP %d status %d", i, codes[i], statuses[i])
		}
	}
	if winner < 0 {
		t.Fatal("no update succeeded")
	}
	target := held(t, acc, pid, day(250), 3)
	for d, o := range target {
		if o != fmt.Sprintf("booking:%d", ids[winner]) {
			t.Fatalf("night %s held by %s", d, o)
		}
	}
	if len(target) != 3 {
		t.Fatalf("target nights held: %v", target)
	}
	// Every other booking still holds its own night; the winner's old night is free.
	old := held(t, acc, pid, day(100), 100)
	for i, id := range ids {
		d := day(100 + 2*i)
		switch {
		case i == winner && old[d] != "":
			t.Fatalf("the moved booking still holds its old night %s", d)
		case i != winner && old[d] != fmt.Sprintf("booking:%d", id):
			t.Fatalf("booking %d lost its night %s (held by %q)", id, d, old[d])
		}
	}
	if len(old) != 49 {
		t.Fatalf("%d old nights held, want 49", len(old))
	}
}
