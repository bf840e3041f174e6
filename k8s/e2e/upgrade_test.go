//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// helmUpgradeUnderLoad: every service image is tagged anew (<tag>-upgrade, the same
// content) and `helm upgrade --reuse-values --set image.tag=<tag>-upgrade --wait` rolls all
// the Deployments while 4 clients keep sending quotes (getinfo), calendars (getcalendar),
// rate changes (interface A) and bookings (create). Not one request may fail: no answer at
// all and any 5xx (edge's 503 for an unreachable service included) count as failed, and
// any other answer but success is unexpected. Afterwards every pod of every Deployment runs
// the new tag.
//
// The clients are ordinary keep-alive HTTP clients and never retry, except where Go's
// transport itself resends a request on a connection the server closed (it does so for
// reads, and for POSTs that carry an Idempotency-Key, as the bookings do): that is what
// integrators get, and what a rollout must not break.
func helmUpgradeUnderLoad(t *testing.T, d *deployment) {
	const (
		clients = 4
		// Nights each client's property offers to its bookings, one night each (within the
		// 12 months the rates accept).
		maxBookings = 320
	)
	newTag := d.imageTag + "-upgrade"
	api := newClient(d.baseURL)
	acc := api.newAccount(t, d.adminToken, "e2e helm upgrade")
	codes := make([]string, clients)
	pids := make([]int, clients)
	for c := range clients {
		codes[c] = fmt.Sprintf("UPG%d", c)
		pids[c] = api.newProperty(t, acc, codes[c], 100)
	}

	// The new images before the load starts: loading them is not part of what is measured.
	var images []string
	for _, s := range append([]string{"chart-test"}, d.built...) {
		run(t, d.root, "docker", "tag", d.image(s, d.imageTag), d.image(s, newTag))
		images = append(images, d.image(s, newTag))
	}
	d.loadImages(t, images)

	type result struct {
		kind       string
		write      bool
		at         time.Time
		failure    string // no answer or a 5xx
		noAnswer   bool
		unexpected string // another answer that is not a success
	}
	var mu sync.Mutex
	var results []result
	booked := make([]int, clients) // each client's bookings so far: its next night
	pace := newPacer(16)           // 4 a second per client, far under edge's limit
	defer pace.stop()
	ld := startLoad(clients, func(c, i int) {
		pace.wait()
		var r result
		var a answer
		var err error
		kind := (c + i) % 4
		if kind == 3 && booked[c] >= maxBookings {
			kind = 0
		}
		switch kind {
		case 0:
			r.kind = "getinfo"
			a, err = api.b(acc.bBody("getinfo", map[string]any{"propertyId": pids[c], "numberofadults": 2,
				"checkin": day(340), "checkout": day(342)}), nil)
		case 1:
			r.kind = "getcalendar"
			a, err = api.b(acc.bBody("getcalendar", map[string]any{"propertyId": acc.composite(pids[c]),
				"startDate": day(1), "endDate": day(14)}), nil)
		case 2:
			r.kind, r.write = "property-rate", true
			a, err = api.a(acc, "property-rate", rates(codes[c], 100+10*(i%5)))
		case 3:
			r.kind, r.write = "create", true
			n := booked[c]
			booked[c]++ // a night per attempt, whatever its outcome: no two attempts share one
			a, err = api.b(acc.bBody("create", guest(pids[c], day(3+n), day(4+n), fmt.Sprintf("upg-c%d-%d@example.com", c, n))),
				http.Header{"Idempotency-Key": {fmt.Sprintf("upg-c%d-%d", c, n)}})
		}
		r.at = time.Now()
		r.noAnswer = err != nil
		if r.failure = failure(a, err); r.failure == "" {
			ok := a.bOK(nil)
			if r.kind == "property-rate" {
				ok = a.aOK()
			}
			if !ok {
				r.unexpected = a.String()
			}
		}
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
	})
	defer ld.stop()

	time.Sleep(3 * time.Second) // the load runs before the upgrade starts
	upgradeStart := time.Now()
	d.helmUpgrade(t, "--set", "image.tag="+newTag)
	// helm --wait and rollout status are done once the new pods are ready; the old ones may
	// still be terminating. Done means every pod runs the new tag.
	for _, s := range d.built {
		want := d.image(s, newTag)
		deadline := time.Now().Add(3 * time.Minute)
		for {
			pods, err := d.pods(componentSelector(s))
			done := err == nil && len(pods) > 0
			for _, p := range pods {
				if p.terminating || !p.ready || !slices.Equal(p.images, []string{want}) {
					done = false
				}
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: pods not all on %s 3 minutes after the upgrade: %+v (err %v)", s, want, pods, err)
			}
			time.Sleep(2 * time.Second)
		}
	}
	rollout := time.Since(upgradeStart)
	time.Sleep(5 * time.Second) // and the load goes on a little on the new pods
	ld.stop()

	var reads, writes, failedNoAnswer, failed5xx, okBefore, okAfter int
	var failures, unexpected []string
	for _, r := range results {
		if r.write {
			writes++
		} else {
			reads++
		}
		at := r.at.Sub(upgradeStart).Round(100 * time.Millisecond)
		switch {
		case r.failure != "":
			if r.noAnswer {
				failedNoAnswer++
			} else {
				failed5xx++
			}
			failures = append(failures, fmt.Sprintf("%s at %s after the upgrade started: %s", r.kind, at, r.failure))
		case r.unexpected != "":
			unexpected = append(unexpected, fmt.Sprintf("%s at %s after the upgrade started: %s", r.kind, at, r.unexpected))
		case r.at.Before(upgradeStart):
			okBefore++
		case r.at.After(upgradeStart.Add(rollout)):
			okAfter++
		}
	}
	t.Logf("helm upgrade to image tag %s under load: %d requests by %d clients (%d reads, %d writes), %d failed (%d without an answer, %d 5xx), "+
		"%d other unexpected answers; %d Deployments rolled in %s",
		newTag, len(results), clients, reads, writes, len(failures), failedNoAnswer, failed5xx, len(unexpected), len(d.built), secs(rollout))
	report(t, "requests failed during the upgrade", failures...)
	report(t, "unexpected answers during the upgrade", unexpected...)
	if okBefore == 0 || okAfter == 0 {
		t.Errorf("the load did not span the upgrade: %d successes before it, %d after the rollout", okBefore, okAfter)
	}
}
