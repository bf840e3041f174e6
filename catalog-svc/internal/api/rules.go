package api

import (
	"fmt"
	"slices"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
)

// The rate plans and restrictions of docs/rate-plans.md, as the catalog's reads ask the rule
// engine (libs/pricing) about them: every read below takes its facts from the engine, never
// from the snapshot's restrictions themselves, so that no read can disagree with a quote.

// ratePlan reads the optional ratePlanId of a read: 0 (absent, null, blank or 0) is the
// standard plan; any other id must be a derived plan of p (status 4 naming ratePlanId).
// Where a plan is sold does not matter to the reads that show it (the calendar).
func ratePlan(in *input, p *catalog.Property) (int64, error) {
	id, _ := in.o.Int("ratePlanId", fields.Int{Max: maxID})
	if err := in.err(); err != nil || id == 0 {
		return 0, err
	}
	if !slices.ContainsFunc(p.Snap.RatePlans, func(rp contract.RatePlan) bool { return rp.ID == int64(id) }) {
		return 0, httpapi.InvalidField("ratePlanId", fmt.Sprintf("rate plan %d does not exist", id))
	}
	return int64(id), nil
}

// restrictionSpan is the first and last date that p's own restrictions (those of every
// plan) cover: outside it the standard plan stops no night. ok is false without any.
func restrictionSpan(p *catalog.Property) (first, last pricing.Date, ok bool) {
	rs := p.Snap.Restrictions
	if len(rs) == 0 || p.PricingErr != nil {
		return first, last, false
	}
	first, err1 := pricing.ParseDate(rs[0].StartDate)
	last, err2 := pricing.ParseDate(rs[len(rs)-1].EndDate)
	for _, r := range rs { // runs are sorted; be safe with a snapshot that is not
		if d, err := pricing.ParseDate(r.StartDate); err == nil && (err1 != nil || d.Before(first)) {
			first, err1 = d, nil
		}
		if d, err := pricing.ParseDate(r.EndDate); err == nil && (err2 != nil || d.After(last)) {
			last, err2 = d, nil
		}
	}
	return first, last, err1 == nil && err2 == nil && !last.Before(first)
}

// stoppedNights calls fn, in date order, for each night from from to to (both included) that
// the standard plan does not sell (a stop-sell, pricing.Property.Rules): getnonavailabledate
// and the iCal export show them as not available.
func stoppedNights(p *catalog.Property, from, to pricing.Date, fn func(pricing.Date)) {
	first, last, ok := restrictionSpan(p)
	if !ok {
		return
	}
	if first.Before(from) {
		first = from
	}
	if last.After(to) {
		last = to
	}
	for d := first; !d.After(last); d = d.AddDays(1) {
		if p.Pricing.Rules(0, d).StopSell {
			fn(d)
		}
	}
}

// stoppedRuns is stoppedNights as runs of consecutive nights [first, last], over every date
// p's restrictions cover that is not before since. A run is never cut at since: its dates
// (and so its iCal UID) stay the same from one day to the next.
func stoppedRuns(p *catalog.Property, since pricing.Date) [][2]pricing.Date {
	first, last, ok := restrictionSpan(p)
	if !ok || last.Before(since) {
		return nil
	}
	var runs [][2]pricing.Date
	stoppedNights(p, first, last, func(d pricing.Date) {
		if n := len(runs); n > 0 && runs[n-1][1].AddDays(1) == d {
			runs[n-1][1] = d
			return
		}
		runs = append(runs, [2]pricing.Date{d, d})
	})
	return slices.DeleteFunc(runs, func(r [2]pricing.Date) bool { return r[1].Before(since) })
}
