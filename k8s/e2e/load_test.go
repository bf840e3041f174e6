//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// load runs clients in parallel, each calling step(client, i) for i = 0, 1, 2, ... until
// stop, which lets every client finish the step it is in and waits for all of them. Steps
// run on their own goroutines, so they never call t.Fatal: they record what happened and the
// test asserts once the load is over. Defer stop right after starting, so that a failing
// test never leaves clients sending traffic into the next scenario.
type load struct {
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func startLoad(clients int, step func(client, i int)) *load {
	l := &load{done: make(chan struct{})}
	for c := range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; !l.stopping(); i++ {
				step(c, i)
			}
		}()
	}
	return l
}

func (l *load) stopping() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *load) stop() {
	l.once.Do(func() { close(l.done) })
	l.wg.Wait()
}

// sleepUntil sleeps until at (no-op when it is past).
func sleepUntil(at time.Time) {
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// createAttempt is one booking a client asks for under an Idempotency-Key of its own, sent
// again, byte for byte, until it is acknowledged or refused.
type createAttempt struct {
	pid               int
	checkin, checkout string
	email, key        string
	body              []byte

	bookingID int64     // acknowledged: the booking id of the success answer
	ackedAt   time.Time // when the acknowledgement arrived
	refused   bool      // status 8: the dates were taken
	replayed  bool      // the definitive answer was a replay (Idempotent-Replayed: true)
	problem   string    // an answer no retry can change, or no definitive answer in time
	// failed counts the requests that got no answer, a 5xx, or 409 status 40 (the key's
	// earlier request still holds it); throttled the 429s. Both were sent again.
	failed, throttled int
	failedAt          []time.Time
}

// newCreateAttempt prepares a create; tag names the attempt (its key and its guest's email,
// which tells its booking apart in listbooking).
func newCreateAttempt(acc account, pid int, checkin, checkout, tag string) *createAttempt {
	email := tag + "@example.com"
	return &createAttempt{pid: pid, checkin: checkin, checkout: checkout, email: email, key: "e2e-" + tag,
		body: acc.bBody("create", guest(pid, checkin, checkout, email))}
}

// resolve sends the attempt until it is acknowledged or refused, for at most bound. A
// request that failed is sent again under the same key: booking-svc answers a key it has
// answered with that answer again, and settles a key whose request died before the retry
// runs (docs/booking.md, "Idempotency"), so retries cannot book twice. While a dead
// request's lease runs (VROS_BOOKING_IDEMPOTENCY_LEASE, 1 min) the key answers status 40 (HTTP
// 200, like every interface B application outcome through edge).
// Status 16 is sent again too when retry16 is set: with several booking-svc replicas, one
// may not have read a new property's event yet.
func (at *createAttempt) resolve(api *client, pace *pacer, bound time.Duration, retry16 bool) {
	h := http.Header{"Idempotency-Key": {at.key}}
	deadline := time.Now().Add(bound)
	backoff := 250 * time.Millisecond
	for {
		pace.wait()
		a, err := api.b(at.body, h)
		e := a.envelope()
		var last string
		switch {
		case err == nil && a.code == http.StatusOK && e.Status == 0:
			var data struct {
				BookingID int64 `json:"bookingId"`
			}
			if json.Unmarshal(e.Data, &data) != nil || data.BookingID == 0 {
				at.problem = "a success without bookingId: " + a.String()
				return
			}
			at.bookingID, at.ackedAt = data.BookingID, time.Now()
			at.replayed = a.header.Get("Idempotent-Replayed") == "true"
			return
		case err == nil && a.code == http.StatusOK && e.Status == 8:
			at.refused = true
			at.replayed = a.header.Get("Idempotent-Replayed") == "true"
			return
		case failure(a, err) != "":
			last = failure(a, err)
			at.failed++
			at.failedAt = append(at.failedAt, time.Now())
		case a.code == http.StatusOK && e.Status == 40:
			last = a.String()
			at.failed++
			at.failedAt = append(at.failedAt, time.Now())
		case a.code == http.StatusTooManyRequests:
			last = a.String()
			at.throttled++
		case retry16 && a.code == http.StatusOK && e.Status == 16:
			last = a.String()
		default:
			at.problem = "unexpected answer: " + a.String()
			return
		}
		if time.Now().After(deadline) {
			at.problem = fmt.Sprintf("no definitive answer within %s; last: %s", bound, last)
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}
