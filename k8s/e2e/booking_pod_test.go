//go:build e2e

package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// bookingPodDeletedUnderLoad: 8 clients book short stays (1 to 3 nights, random dates, so
// distinct at first and overlapping more and more) on two properties for 25 s; 8 s in, the
// booking-svc pod is deleted. A request that fails is sent again under the same
// Idempotency-Key until it is acknowledged (a booking id) or refused (status 8). Afterwards:
// every acknowledged booking is listed by listbooking with its dates, no attempt booked
// twice, nothing refused was booked, and no night of a property is held by two bookings.
func bookingPodDeletedUnderLoad(t *testing.T, d *deployment) {
	const (
		clients     = 8
		loadFor     = 25 * time.Second
		deleteAfter = 8 * time.Second
		// A key whose request died with the pod answers 409 until its lease (1 min) ends.
		resolveWithin = 3 * time.Minute
	)
	api := newClient(d.baseURL)
	acc := api.newAccount(t, d.adminToken, "e2e booking pod deleted")
	pids := []int{api.newProperty(t, acc, "PODA", 100), api.newProperty(t, acc, "PODB", 100)}

	before, err := d.servingPods("booking-svc")
	if err != nil || len(before) == 0 {
		t.Fatalf("booking-svc pods: %v (%d serving)", err, len(before))
	}
	victim := before[0].name

	pace := newPacer(40) // under edge's 50 requests/s per account
	defer pace.stop()
	attempts := make([][]*createAttempt, clients) // one slice per client: no lock needed
	start := time.Now()
	ld := startLoad(clients, func(c, i int) {
		rng := rand.New(rand.NewPCG(uint64(c), uint64(i)))
		// Within the 12 months the rates accept bookings for.
		in := 3 + rng.IntN(325)
		at := newCreateAttempt(acc, pids[rng.IntN(len(pids))], day(in), day(in+1+rng.IntN(3)), fmt.Sprintf("pod-c%d-%d", c, i))
		at.resolve(api, pace, resolveWithin, false)
		attempts[c] = append(attempts[c], at)
	})
	defer ld.stop()

	sleepUntil(start.Add(deleteAfter))
	deletedAt := time.Now()
	d.kubectl(t, "-n", namespace, "delete", "pod", victim, "--wait=false")
	t.Logf("deleted pod %s (%d booking-svc pods were serving)", victim, len(before))
	// The replacement: as many serving pods as before, none of them the deleted one.
	var replacedAt time.Time
	for replacedAt.IsZero() {
		serving, err := d.servingPods("booking-svc")
		n := 0
		for _, p := range serving {
			if p.name != victim {
				n++
			}
		}
		switch {
		case err == nil && n >= len(before):
			replacedAt = time.Now()
		case time.Since(deletedAt) > 3*time.Minute:
			t.Fatalf("booking-svc had no replacement for %s 3 minutes after the delete (err %v)", victim, err)
		default:
			time.Sleep(500 * time.Millisecond)
		}
	}
	// Keep booking a while once the replacement serves: the service must be back, not only
	// its pod.
	sleepUntil(later(start.Add(loadFor), replacedAt.Add(5*time.Second)))
	ld.stop()
	loadTook := time.Since(start)

	var all []*createAttempt
	for _, a := range attempts {
		all = append(all, a...)
	}
	acked := map[int64]*createAttempt{}
	byEmail := map[string]*createAttempt{}
	var problems []string
	var refused, failed, failedWhileGone, throttled, replays, ackedAfter int
	for _, at := range all {
		byEmail[at.email] = at
		failed += at.failed
		for _, f := range at.failedAt {
			if !f.Before(deletedAt) && !f.After(replacedAt) {
				failedWhileGone++
			}
		}
		throttled += at.throttled
		if at.replayed {
			replays++
		}
		switch {
		case at.problem != "":
			problems = append(problems, fmt.Sprintf("%s (%s to %s on %d): %s", at.key, at.checkin, at.checkout, at.pid, at.problem))
		case at.refused:
			refused++
		case acked[at.bookingID] != nil:
			problems = append(problems, fmt.Sprintf("booking %d acknowledged to %s and to %s", at.bookingID, acked[at.bookingID].key, at.key))
		default:
			acked[at.bookingID] = at
			if at.ackedAt.After(replacedAt) {
				ackedAfter++
			}
		}
	}

	// Every acknowledged booking must be listed. A booking's list entry is written right
	// after the booking, or by the outbox relay when its writer stopped in between (docs:
	// booking-svc/internal/store/list.go), so it may trail for up to the outbox lease: poll
	// for a bounded time rather than read once.
	var listed []booking
	var missing []int64
	deadline := time.Now().Add(2 * time.Minute)
	for {
		listed, missing, err = nil, nil, nil
		for _, pid := range pids {
			bs, lerr := api.listBookings(acc, pid)
			if lerr != nil {
				err = lerr
			}
			listed = append(listed, bs...)
		}
		seen := map[int64]bool{}
		for _, b := range listed {
			seen[b.BookingID] = true
		}
		for id := range acked {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		if err == nil && len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil {
		t.Fatalf("listing the bookings: %v", err)
	}

	// Each listed booking belongs to one attempt (its guest's email); an attempt has at most
	// one booking, the acknowledged one, with the dates and property it asked for.
	perEmail := map[string][]booking{}
	for _, b := range listed {
		perEmail[strings.ToLower(b.Email)] = append(perEmail[strings.ToLower(b.Email)], b)
	}
	var doubledAttempts, phantoms, mismatched []string
	for email, bs := range perEmail {
		at := byEmail[email]
		switch {
		case at == nil:
			phantoms = append(phantoms, fmt.Sprintf("booking %d of unknown guest %s", bs[0].BookingID, email))
		case len(bs) > 1:
			doubledAttempts = append(doubledAttempts, fmt.Sprintf("%s booked %d times", at.key, len(bs)))
		case at.refused:
			phantoms = append(phantoms, fmt.Sprintf("%s was refused (status 8) yet booking %d exists", at.key, bs[0].BookingID))
		case at.bookingID != 0:
			in, out := bs[0].stay()
			if bs[0].BookingID != at.bookingID || in != at.checkin || out != at.checkout || int(bs[0].PropertyID) != at.pid {
				mismatched = append(mismatched, fmt.Sprintf("%s acknowledged booking %d %s..%s on %d, listed %d %s..%s on %d",
					at.key, at.bookingID, at.checkin, at.checkout, at.pid, bs[0].BookingID, in, out, bs[0].PropertyID))
			}
		}
	}
	// No night of a property held by two bookings that are not cancelled.
	holder := map[string]int64{}
	var doubledNights []string
	for _, b := range listed {
		if b.CancellationDate != nil || b.Status == "cancelled" {
			continue
		}
		in, out := b.stay()
		for _, n := range nights(in, out) {
			k := fmt.Sprintf("%d/%s", b.PropertyID, n)
			if other, ok := holder[k]; ok {
				doubledNights = append(doubledNights, fmt.Sprintf("property %d night %s: bookings %d and %d", b.PropertyID, n, other, b.BookingID))
				continue
			}
			holder[k] = b.BookingID
		}
	}

	t.Logf("booking-svc pod deleted under load: %d create attempts by %d clients in %s, %d acknowledged bookings (%d after the replacement pod was ready), "+
		"%d refused as unavailable (status 8), %d lost, %d doubled nights, %d attempts booked twice, "+
		"%d requests failed (%d of them between the delete and the replacement's readiness; all sent again with the same Idempotency-Key, "+
		"%d definitive answers were replays), %d throttled (429); "+
		"replacement pod ready %s after the delete",
		len(all), clients, secs(loadTook), len(acked), ackedAfter, refused, len(missing), len(doubledNights), len(doubledAttempts),
		failed, failedWhileGone, replays, throttled, secs(replacedAt.Sub(deletedAt)))

	var lost []string
	for _, id := range missing {
		lost = append(lost, fmt.Sprintf("booking %d (%s)", id, acked[id].key))
	}
	report(t, "attempts without a definitive answer", problems...)
	report(t, "acknowledged bookings not listed (lost)", lost...)
	report(t, "attempts booked more than once", doubledAttempts...)
	report(t, "bookings nobody was told about", phantoms...)
	report(t, "bookings listed otherwise than acknowledged", mismatched...)
	report(t, "nights held twice", doubledNights...)
	if len(acked) == 0 {
		t.Error("no booking was acknowledged at all")
	}
	if ackedAfter == 0 {
		t.Error("no booking was acknowledged after the replacement pod was ready: the load did not span the deletion")
	}
}

// report fails the test with up to 10 of the items, when there are any.
func report(t *testing.T, what string, items ...string) {
	t.Helper()
	if len(items) == 0 {
		return
	}
	shown := items
	if len(shown) > 10 {
		shown = shown[:10]
	}
	t.Errorf("%d %s:\n  %s", len(items), what, strings.Join(shown, "\n  "))
}
