package ari

import (
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/pricing"
)

// Diff returns what must be sent so that the channel manager holds want: the dates whose
// value differs from sent (every date when sent is nil: a full sync), as ranges of
// consecutive dates with equal values, availability and then each plan's rates. A range also
// runs over dates that already hold its value when they join two changed runs of it: fewer
// ranges, the same state. sent covers the same days as want (Sent.LoadSent).
func Diff(want Values, sent *Values) ([]channel.Availability, []channel.Rate) {
	if sent != nil && (sent.From != want.From || sent.Days != want.Days) {
		sent = nil
	}
	date := func(i int) string { return want.From.AddDays(i).String() }
	var avail []channel.Availability
	coalesce(want.Days, func(i int) int8 { return want.Avail[i] },
		func(i int) bool { return sent == nil || sent.Avail[i] != want.Avail[i] },
		func(from, to int, v int8) {
			avail = append(avail, channel.Availability{From: date(from), To: date(to), Available: int(v)})
		})
	var rates []channel.Rate
	for pi, plan := range want.Plans {
		ws := want.Rates[pi]
		var ss []RateValue
		if sent != nil {
			ss = sent.RatesOf(plan)
		}
		coalesce(want.Days, func(i int) RateValue { return ws[i] },
			func(i int) bool { return ss == nil || ss[i] != ws[i] },
			func(from, to int, v RateValue) {
				rates = append(rates, channel.Rate{RemoteRatePlanID: plan, From: date(from), To: date(to),
					Rate: v.Rate, MinStayArrival: v.MinStayArrival, MinStayThrough: v.MinStayThrough,
					MaxStay: v.MaxStay, ClosedToArrival: v.ClosedToArrival,
					ClosedToDeparture: v.ClosedToDeparture, StopSell: v.StopSell})
			})
	}
	return avail, rates
}

// coalesce calls emit for each range of changed days [from, to] with equal values, a range
// running over unchanged days of its value that lie between two of its changed days.
func coalesce[T comparable](n int, want func(int) T, changed func(int) bool, emit func(from, to int, v T)) {
	open := false
	var start, last int
	var v T
	for i := range n {
		w, c := want(i), changed(i)
		if open && w == v {
			if c {
				last = i
			}
			continue
		}
		if open {
			emit(start, last, v)
			open = false
		}
		if c {
			open, start, last, v = true, i, i, w
		}
	}
	if open {
		emit(start, last, v)
	}
}

// Apply writes accepted ranges into v (a sent state covering its days; dates outside are
// ignored): what Sent.RecordSent keeps, for tests and for a sender that holds the state.
func (v *Values) Apply(avail []channel.Availability, rates []channel.Rate) {
	each := func(from, to string, f func(i int)) {
		a, err1 := pricing.ParseDate(from)
		b, err2 := pricing.ParseDate(to)
		if err1 != nil || err2 != nil {
			return
		}
		for d := a; !d.After(b); d = d.AddDays(1) {
			if i := pricing.DaysBetween(v.From, d); i >= 0 && i < v.Days {
				f(i)
			}
		}
	}
	for _, a := range avail {
		each(a.From, a.To, func(i int) { v.Avail[i] = int8(a.Available) })
	}
	for _, r := range rates {
		rs := v.RatesOf(r.RemoteRatePlanID)
		if rs == nil {
			rs = make([]RateValue, v.Days)
			v.Plans = append(v.Plans, r.RemoteRatePlanID)
			v.Rates = append(v.Rates, rs)
		}
		val := RateValueOf(r)
		each(r.From, r.To, func(i int) { rs[i] = val })
	}
}

// RateValueOf is the value a rate range carries.
func RateValueOf(r channel.Rate) RateValue {
	return RateValue{Rate: r.Rate, MinStayArrival: r.MinStayArrival, MinStayThrough: r.MinStayThrough,
		MaxStay: r.MaxStay, ClosedToArrival: r.ClosedToArrival, ClosedToDeparture: r.ClosedToDeparture,
		StopSell: r.StopSell}
}

// Unknown is a sent state that knows nothing of the days [from, from+days).
func Unknown(from Day, days int) Values {
	v := Values{From: from, Days: days, Avail: make([]int8, days)}
	for i := range v.Avail {
		v.Avail[i] = -1
	}
	return v
}
