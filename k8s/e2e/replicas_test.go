//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// replica is one service pod, reached directly through kubectl port-forward.
type replica struct {
	service, pod string
	api          *client
}

func (r replica) String() string { return r.service + "/" + r.pod }

// replicasOf port-forwards to each serving pod of a service.
func (d *deployment) replicasOf(t *testing.T, service string, pods []podInfo) []replica {
	t.Helper()
	var out []replica
	for _, p := range pods {
		if p.httpPort == 0 {
			t.Fatalf("pod %s has no container port named http", p.name)
		}
		out = append(out, replica{service: service, pod: p.name, api: newClient(d.portForward(t, p.name, p.httpPort))})
	}
	return out
}

// calendarDay is the part of a getcalendar day the scenarios read.
type calendarDay struct {
	Date         string      `json:"date"`
	Availability string      `json:"availability"`
	Price        json.Number `json:"price"`
}

// nonAvailable is a getnonavailabledate range: the nights startDate … endDate, both held.
type nonAvailable struct {
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate"`
}

// sameAmount compares a decimal from an answer with a whole amount.
func sameAmount(n json.Number, want int) bool {
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && f == float64(want)
}

// catalogPrice reads the nightly price of one date with getcalendar.
func catalogPrice(r replica, edgeKey string, acc account, pid int, date string) (json.Number, error) {
	a, err := r.api.signedB(edgeKey, acc, "getcalendar", map[string]any{"propertyId": acc.composite(pid), "startDate": date, "endDate": date})
	if err != nil {
		return "", err
	}
	var days []calendarDay
	if !a.bOK(&days) || len(days) != 1 || days[0].Date != date {
		return "", fmt.Errorf("getcalendar %s on %s: %v", date, r, a)
	}
	return days[0].Price, nil
}

// quotedRent is booking-svc's getinfo totalRent of one night (the nightly price, with rates).
func quotedRent(r replica, edgeKey string, acc account, pid int, checkin, checkout string) (json.Number, error) {
	a, err := r.api.signedB(edgeKey, acc, "getinfo", map[string]any{"propertyId": pid, "numberofadults": 2, "checkin": checkin, "checkout": checkout})
	if err != nil {
		return "", err
	}
	var q struct {
		TotalRent json.Number `json:"totalRent"`
	}
	if !a.bOK(&q) {
		return "", fmt.Errorf("getinfo on %s: %v", r, a)
	}
	return q.TotalRent, nil
}

// heldNights are the nights getnonavailabledate reports held within [from, to].
func heldNights(r replica, edgeKey string, acc account, pid int, from, to string) (map[string]bool, error) {
	a, err := r.api.signedB(edgeKey, acc, "getnonavailabledate", map[string]any{"propertyId": pid, "startDate": from, "endDate": to})
	if err != nil {
		return nil, err
	}
	var ranges []nonAvailable
	if !a.bOK(&ranges) {
		return nil, fmt.Errorf("getnonavailabledate on %s: %v", r, a)
	}
	held := map[string]bool{}
	for _, rg := range ranges {
		// endDate is the range's last unavailable night (docs/catalog.md).
		last, err := time.Parse(time.DateOnly, rg.EndDate)
		if err != nil {
			return nil, fmt.Errorf("getnonavailabledate on %s: endDate %q", r, rg.EndDate)
		}
		for _, n := range nights(rg.StartDate, last.AddDate(0, 0, 1).Format(time.DateOnly)) {
			held[n] = true
		}
	}
	return held, nil
}

// lagsUntil polls every replica at once, every 10 ms, until shows reports the write, and
// returns each replica's lag from since (the write's answer) to the first answer showing it;
// -1 for a replica that did not show it within pollFor.
func lagsUntil(replicas []replica, since time.Time, pollFor time.Duration, shows func(replica) bool) []time.Duration {
	lags := make([]time.Duration, len(replicas))
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if shows(r) {
					lags[i] = time.Since(since)
					return
				}
				if time.Since(since) > pollFor {
					lags[i] = -1
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return lags
}

// twoReplicasAgree: booking-svc and catalog-svc are scaled to 2 replicas with helm; then
// 10 rate changes (interface A) and 10 bookings (interface B create) go through edge, and
// after each answer every replica is read directly: catalog-svc's getcalendar price and
// booking-svc's getinfo quote must show the new rate, catalog-svc's getnonavailabledate and
// booking-svc's listbooking the new booking. Every replica must show every write within 1 s
// of the write's answer. Each replica keeps its own view (its own consumer group, memory;
// docs/catalog.md "Replicas", docs/booking.md "The pricing view"), which is why each one is
// read and not the Service.
//
// A replica is reached with kubectl port-forward and the tenant headers edge would sign
// (client.signedB): through edge or the Service, which replica answers is not ours to pick.
func twoReplicasAgree(t *testing.T, d *deployment) {
	const (
		writes  = 10
		bound   = time.Second
		pollFor = 30 * time.Second
	)
	for _, s := range []string{"booking-svc", "catalog-svc"} {
		if !slices.Contains(d.built, s) {
			t.Skipf("%s is not deployed", s)
		}
	}
	// With autoscaling on (values-kind.yaml) the Deployments have no replica count of their
	// own: their HPA raises them to minReplicas, after helm returns. kind has no
	// metrics-server, but an HPA enforces its minimum without metrics.
	d.helmUpgrade(t, "--set", "bookingSvc.replicaCount=2,bookingSvc.autoscaling.minReplicas=2,"+
		"catalogSvc.replicaCount=2,catalogSvc.autoscaling.minReplicas=2")
	bookingPods := d.waitServingPods(t, "booking-svc", 2, 5*time.Minute)
	catalogPods := d.waitServingPods(t, "catalog-svc", 2, 5*time.Minute)

	api := newClient(d.baseURL)
	acc := api.newAccount(t, d.adminToken, "e2e two replicas")
	const code, priceDate = "REP1", 20
	pid := api.newProperty(t, acc, code, 100)
	catalog := d.replicasOf(t, "catalog-svc", catalogPods)
	bookingReplicas := d.replicasOf(t, "booking-svc", bookingPods)
	all := append(append([]replica(nil), catalog...), bookingReplicas...)

	// price is what a replica quotes for one night at priceDate: catalog-svc's calendar price,
	// booking-svc's getinfo rent.
	price := func(r replica) (json.Number, error) {
		if r.service == "catalog-svc" {
			return catalogPrice(r, d.edgeKey, acc, pid, day(priceDate))
		}
		return quotedRent(r, d.edgeKey, acc, pid, day(priceDate), day(priceDate+1))
	}
	showsPrice := func(want int) func(replica) bool {
		return func(r replica) bool {
			got, err := price(r)
			return err == nil && sameAmount(got, want)
		}
	}
	showsBooking := func(id int64, night string) func(replica) bool {
		return func(r replica) bool {
			if r.service == "catalog-svc" {
				held, err := heldNights(r, d.edgeKey, acc, pid, night, night)
				return err == nil && held[night]
			}
			a, err := r.api.signedB(d.edgeKey, acc, "listbooking", map[string]any{"bookingId": id})
			var list struct {
				Total int `json:"totalRecords"`
			}
			return err == nil && a.bOK(&list) && list.Total == 1
		}
	}

	// Every replica knows the property before anything is measured (this also proves that
	// the direct, signed calls work).
	for i, lag := range lagsUntil(all, time.Now(), time.Minute, showsPrice(100)) {
		if lag < 0 {
			got, err := price(all[i])
			t.Fatalf("%s never showed the property's first rate (100): it reads %q (%v)", all[i], got, err)
		}
	}

	type lagKey struct{ replica, kind string }
	lags := map[lagKey]durations{}
	var late []string
	record := func(kind, what string, got []time.Duration) {
		for i, lag := range got {
			r := all[i]
			switch {
			case lag < 0:
				late = append(late, fmt.Sprintf("%s never showed %s within %s", r, what, pollFor))
				lag = pollFor
			case lag > bound:
				late = append(late, fmt.Sprintf("%s showed %s after %s", r, what, ms(lag)))
			}
			k := lagKey{r.String(), kind}
			lags[k] = append(lags[k], lag)
		}
	}
	for i := range writes {
		daily := 110 + 10*i
		a, err := api.a(acc, "property-rate", rates(code, daily))
		if err != nil || !a.aOK() {
			t.Fatalf("rate change %d: %v %v", i, err, a)
		}
		record("rate", fmt.Sprintf("rate %d", daily), lagsUntil(all, time.Now(), pollFor, showsPrice(daily)))

		in, out := day(40+2*i), day(41+2*i)
		a, err = api.b(acc.bBody("create", guest(pid, in, out, fmt.Sprintf("rep-%d@example.com", i))), nil)
		var bk booking
		if err != nil || !a.bOK(&bk) || bk.BookingID == 0 {
			t.Fatalf("booking %d: %v %v", i, err, a)
		}
		record("booking", fmt.Sprintf("booking %d", bk.BookingID), lagsUntil(all, time.Now(), pollFor, showsBooking(bk.BookingID, in)))
	}

	var figures []string
	var worst time.Duration
	for _, r := range all {
		rate, booked := lags[lagKey{r.String(), "rate"}], lags[lagKey{r.String(), "booking"}]
		figures = append(figures, fmt.Sprintf("%s rate max %s p50 %s, booking max %s p50 %s",
			r, ms(rate.max()), ms(rate.p50()), ms(booked.max()), ms(booked.p50())))
		worst = max(worst, rate.max(), booked.max())
	}
	t.Logf("booking-svc and catalog-svc at 2 replicas agree: %d rate changes and %d bookings through edge, each replica read directly "+
		"(lag from the write's answer to the replica's first answer showing it, one read through port-forward included): %s; worst %s, bound %s",
		writes, writes, strings.Join(figures, "; "), ms(worst), bound)
	report(t, "reads that did not show a write within the bound", late...)
}
