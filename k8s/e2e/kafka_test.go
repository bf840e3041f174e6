//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kafkaWriter is one client of kafkaPodDeletedDuringWrites: it alternates rate changes and
// bookings on a property of its own. It sends each write again until it is acknowledged
// before it makes the next one, so the last acknowledged rate is the property's rate and
// every booking attempt ends acknowledged or reported.
type kafkaWriter struct {
	code string
	pid  int

	lastRate   int // the last acknowledged daily price
	rateWrites int
	bookings   []*createAttempt
	acks       []time.Time // when each write was acknowledged
	failedAt   []time.Time // when a request failed (no answer or 5xx) and was sent again
	problems   []string
}

// setRate sends a rate change until it is acknowledged, for at most bound. Sending the same
// rates again is harmless: a rate change sets the rates it carries.
func (w *kafkaWriter) setRate(api *client, acc account, pace *pacer, daily int, bound time.Duration) {
	deadline := time.Now().Add(bound)
	backoff := 250 * time.Millisecond
	for {
		pace.wait()
		a, err := api.a(acc, "property-rate", rates(w.code, daily))
		switch {
		case err == nil && a.aOK():
			w.lastRate = daily
			w.rateWrites++
			w.acks = append(w.acks, time.Now())
			return
		case failure(a, err) != "":
			w.failedAt = append(w.failedAt, time.Now())
		case a.code == http.StatusTooManyRequests:
		default:
			w.problems = append(w.problems, fmt.Sprintf("rate %d of %s: unexpected answer %v", daily, w.code, a))
			return
		}
		if time.Now().After(deadline) {
			w.problems = append(w.problems, fmt.Sprintf("rate %d of %s: not acknowledged within %s: %s", daily, w.code, bound, failure(a, err)))
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

// catalogState is what one catalog replica shows of a writer's property.
type catalogState struct {
	price        string
	reservations []string // ids <account>_<bookingId>, sorted
	held         []string // nights, sorted
}

// readCatalog reads a property's rate (getcalendar), reservations (getreservations) and held
// nights (getnonavailabledate) from one catalog replica.
func readCatalog(r replica, edgeKey string, acc account, pid int, priceDate, from, to string) (catalogState, error) {
	var s catalogState
	price, err := catalogPrice(r, edgeKey, acc, pid, priceDate)
	if err != nil {
		return s, err
	}
	s.price = string(price)
	a, err := r.api.signedB(edgeKey, acc, "getreservations", map[string]any{"propertyId": acc.composite(pid)})
	if err != nil {
		return s, err
	}
	var res struct {
		Reservations []struct {
			ID string `json:"id"`
		} `json:"reservations"`
	}
	if !a.bOK(&res) {
		return s, fmt.Errorf("getreservations on %s: %v", r, a)
	}
	for _, x := range res.Reservations {
		s.reservations = append(s.reservations, x.ID)
	}
	sort.Strings(s.reservations)
	held, err := heldNights(r, edgeKey, acc, pid, from, to)
	if err != nil {
		return s, err
	}
	for n := range held {
		s.held = append(s.held, n)
	}
	sort.Strings(s.held)
	return s, nil
}

// kafkaPodDeletedDuringWrites: 4 clients change rates and book for at least 30 s; 8 s in,
// the Kafka pod (the dev broker, StatefulSet kafka) is deleted. The writers send a failed
// write again until it is acknowledged. The dev broker keeps its log on the node
// (k8s/dev/kafka.yaml), as a production broker keeps its disk, so it comes back with its
// topics, the events it had acknowledged and the consumer groups' offsets. Should the topics
// be gone all the same, the test does what an operator would: it runs the chart's topic Job
// again (a pre-upgrade hook) with `helm upgrade --reuse-values`. Every acknowledged write
// must then reach every catalog-svc replica within 3 minutes: each property's last
// acknowledged rate (getcalendar), exactly its acknowledged bookings (getreservations) and
// exactly their nights held (getnonavailabledate).
//
// The services' outboxes keep every change made while the broker is away and publish it
// when it is back (docs/events.md, "Delivery: the outbox").
func kafkaPodDeletedDuringWrites(t *testing.T, d *deployment) {
	const (
		clients        = 4
		loadFor        = 30 * time.Second
		deleteAfter    = 8 * time.Second
		resolveWithin  = 4 * time.Minute
		convergeWithin = 3 * time.Minute
		maxBookings    = 300 // nights day(3) to day(302), one per booking
		priceDate      = 2   // a night no booking takes
	)
	if !slices.Contains(d.built, "catalog-svc") {
		t.Skip("catalog-svc is not deployed")
	}
	api := newClient(d.baseURL)
	acc := api.newAccount(t, d.adminToken, "e2e kafka deleted")
	writers := make([]*kafkaWriter, clients)
	for c := range writers {
		w := &kafkaWriter{code: fmt.Sprintf("KAF%d", c), lastRate: 100}
		w.pid = api.newProperty(t, acc, w.code, w.lastRate)
		writers[c] = w
	}
	catalogPods, err := d.servingPods("catalog-svc")
	if err != nil || len(catalogPods) == 0 {
		t.Fatalf("catalog-svc pods: %v (%d serving)", err, len(catalogPods))
	}
	catalog := d.replicasOf(t, "catalog-svc", catalogPods)

	pace := newPacer(12)
	defer pace.stop()
	start := time.Now()
	ld := startLoad(clients, func(c, i int) {
		w := writers[c]
		n := i / 2
		switch {
		case len(w.problems) > 0:
			time.Sleep(time.Second) // this writer stopped at something no retry fixes (reported)
		case i%2 == 0 || n >= maxBookings:
			w.setRate(api, acc, pace, 101+i, resolveWithin) // a new rate at every change
		default:
			at := newCreateAttempt(acc, w.pid, day(3+n), day(4+n), fmt.Sprintf("kafka-c%d-%d", c, n))
			// Status 16 is sent again: a booking-svc replica may not have read the property yet.
			at.resolve(api, pace, resolveWithin, true)
			w.bookings = append(w.bookings, at)
			w.failedAt = append(w.failedAt, at.failedAt...)
			switch {
			case at.problem != "":
				w.problems = append(w.problems, fmt.Sprintf("%s: %s", at.key, at.problem))
			case at.refused:
				w.problems = append(w.problems, fmt.Sprintf("%s: refused (status 8) a night nobody else books", at.key))
			default:
				w.acks = append(w.acks, at.ackedAt)
			}
		}
	})
	defer ld.stop()

	sleepUntil(start.Add(deleteAfter))
	old, err := d.pod(kafkaPod)
	if err != nil {
		t.Fatalf("%v", err)
	}
	deletedAt := time.Now()
	d.kubectl(t, "-n", namespace, "delete", "pod", kafkaPod, "--wait=false")
	// Back: a new kafka-0 (another uid), Ready (the broker accepts connections).
	var backAt time.Time
	for backAt.IsZero() {
		p, err := d.pod(kafkaPod)
		switch {
		case err == nil && p.uid != old.uid && p.ready && !p.terminating:
			backAt = time.Now()
		case time.Since(deletedAt) > 5*time.Minute:
			t.Fatalf("%s not back 5 minutes after the delete: %+v (err %v)", kafkaPod, p, err)
		default:
			time.Sleep(time.Second)
		}
	}
	// Are the topics there? The CLI may need a moment after the port opens.
	var topics []string
	for deadline := time.Now().Add(time.Minute); ; {
		if topics, err = d.kafkaTopics(); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil {
		t.Fatalf("listing the topics of the new broker: %v", err)
	}
	var gone []string
	for _, topic := range eventTopics {
		if !slices.Contains(topics, topic) {
			gone = append(gone, topic)
		}
	}
	topicsNote := "still there"
	if len(gone) > 0 {
		// The broker came back empty (emptyDir) and does not create topics itself
		// (k8s/dev/kafka.yaml). The operator's fix: the chart's topic Job, which every upgrade
		// runs, here with the release's values unchanged (no Deployment rolls).
		t.Logf("the new broker lacks %v; running the chart's topic Job again (helm upgrade --reuse-values)", gone)
		d.helmUpgrade(t)
		if topics, err = d.kafkaTopics(); err != nil {
			t.Fatalf("listing the topics after the topic Job: %v", err)
		}
		for _, topic := range eventTopics {
			if !slices.Contains(topics, topic) {
				t.Fatalf("the topic Job ran, yet %s is missing: %v", topic, topics)
			}
		}
		topicsNote = fmt.Sprintf("gone (%s) and created again by the chart's topic Job", strings.Join(gone, ", "))
	}
	topicsAt := time.Now()
	// Writes go on for a while with the broker and topics back.
	sleepUntil(later(start.Add(loadFor), topicsAt.Add(5*time.Second)))
	ld.stop()
	loadEnd := time.Now()

	// What was acknowledged, and what every catalog replica must end up showing.
	var problems []string
	var acks, failedAt []time.Time
	var rateWrites, bookings int
	want := make([]catalogState, clients)
	for c, w := range writers {
		problems = append(problems, w.problems...)
		acks = append(acks, w.acks...)
		failedAt = append(failedAt, w.failedAt...)
		rateWrites += w.rateWrites
		want[c].price = fmt.Sprint(w.lastRate)
		for _, at := range w.bookings {
			if at.bookingID == 0 {
				continue
			}
			bookings++
			want[c].reservations = append(want[c].reservations, fmt.Sprintf("%s_%d", acc.AccountID, at.bookingID))
			want[c].held = append(want[c].held, nights(at.checkin, at.checkout)...)
		}
		sort.Strings(want[c].reservations)
		sort.Strings(want[c].held)
	}
	sort.Slice(acks, func(i, j int) bool { return acks[i].Before(acks[j]) })
	var ackedBefore, ackedWhileDown, ackedAfter int
	longestGap, prev := time.Duration(0), start
	for _, at := range acks {
		switch {
		case at.Before(deletedAt):
			ackedBefore++
		case at.Before(backAt):
			ackedWhileDown++
		default:
			ackedAfter++
		}
		longestGap, prev = max(longestGap, at.Sub(prev)), at
	}
	var failedInOutage, failedOtherwise int
	for _, at := range failedAt {
		if !at.Before(deletedAt) && !at.After(topicsAt) {
			failedInOutage++
		} else {
			failedOtherwise++
		}
	}

	// Convergence: every replica shows every property as the writers left it.
	var convergedAt time.Time
	var behind []string
	for deadline := loadEnd.Add(convergeWithin); ; {
		behind = nil
		for _, r := range catalog {
			for c, w := range writers {
				got, err := readCatalog(r, d.edgeKey, acc, w.pid, day(priceDate), day(3), day(3+maxBookings))
				if err != nil {
					behind = append(behind, fmt.Sprintf("%s, property %s: %v", r, w.code, err))
					continue
				}
				if !sameAmountString(got.price, want[c].price) {
					behind = append(behind, fmt.Sprintf("%s, property %s: rate %s, want %s", r, w.code, got.price, want[c].price))
				}
				if delta := diff(want[c].reservations, got.reservations); delta != "" {
					behind = append(behind, fmt.Sprintf("%s, property %s: reservations %s", r, w.code, delta))
				}
				if delta := diff(want[c].held, got.held); delta != "" {
					behind = append(behind, fmt.Sprintf("%s, property %s: held nights %s", r, w.code, delta))
				}
			}
		}
		if len(behind) == 0 {
			convergedAt = time.Now()
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}

	converged := "did NOT converge within " + convergeWithin.String()
	if !convergedAt.IsZero() {
		converged = fmt.Sprintf("converged %s after the topics were back (%s after the last write)",
			secs(convergedAt.Sub(topicsAt)), secs(convergedAt.Sub(loadEnd)))
	}
	t.Logf("Kafka pod deleted during writes: %d writes acknowledged (%d rate changes, %d bookings; %d before the delete, %d while the broker was away, %d after), "+
		"%d requests failed during the outage and %d at other times (all sent again until acknowledged), longest stretch without an acknowledged write %s; "+
		"%s back %s after the delete, topics %s; the catalog (%d replicas) %s",
		len(acks), rateWrites, bookings, ackedBefore, ackedWhileDown, ackedAfter, failedInOutage, failedOtherwise, secs(longestGap),
		kafkaPod, secs(backAt.Sub(deletedAt)), topicsNote, len(catalog), converged)
	report(t, "writes that no retry could complete", problems...)
	report(t, "acknowledged writes the catalog does not show", behind...)
	if ackedBefore == 0 || ackedAfter == 0 {
		t.Errorf("the writes did not span the outage: %d acknowledged before the delete, %d after the broker was back", ackedBefore, ackedAfter)
	}
}

// sameAmountString compares two decimal amounts written as text ("120" and "120.00" agree).
func sameAmountString(got, want string) bool {
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && g == w
}

// diff describes how got differs from want (both sorted), "" when equal.
func diff(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	var missing, extra []string
	for _, x := range want {
		if _, found := slices.BinarySearch(got, x); !found {
			missing = append(missing, x)
		}
	}
	for _, x := range got {
		if _, found := slices.BinarySearch(want, x); !found {
			extra = append(extra, x)
		}
	}
	return fmt.Sprintf("%d of %d missing %s, %d unexpected %s", len(missing), len(want), firstFew(missing), len(extra), firstFew(extra))
}

func firstFew(xs []string) string {
	if len(xs) > 5 {
		return fmt.Sprintf("%v…", xs[:5])
	}
	return fmt.Sprint(xs)
}
