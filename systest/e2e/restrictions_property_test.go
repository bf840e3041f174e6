package e2e

// TestRestrictionsAgree is issue 31's property test: for random restriction sets, plans and
// stays, getinfo, create, search-rental and getcalendar agree with the rule engine
// (libs/pricing) on every stay, through edge.
//
// One account holds agreeSets properties. Each gets random rates whose defaults the
// restrictions override (base and season minimum stays, check-in and check-out days, per-date
// minimum nights), a random derived plan, and random /api/property-restriction calls at the
// property's and the plan's level over a 60-day window (ranges, weekday patterns, set and
// clear). The property is read back (A1 get: the contract Property every service prices),
// its restrictions checked against a model of the calls, and the engine's verdict computed
// for every stay of 1–agreeNights nights arriving in the window, on both plans. Then:
//   - getinfo answers every stay on both plans as the engine does: the same error field and
//     message, or the same totals, nightly prices, plan and bookable plans (ratePlans);
//   - search-rental for every stay lists exactly the properties whose standard plan the
//     engine accepts, at the engine's rent;
//   - getcalendar (once per property and plan) shows the engine's day rules and prices, and
//     read by the documented client rule (calendarRefusal) gives the engine's verdict on
//     every stay;
//   - create, on a sample of stays per property, books what the engine accepts at its price
//     and with the plan's terms (then cancels it, to free the nights), and refuses the others
//     with the engine's error.
//
// The run is seeded: the seed is logged and printed on failure; VROS_RESTRICTIONS_SEED
// repeats a run (the window is relative to today, so weekdays move from one day to the next).

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

const (
	agreeSets    = 12 // properties, each with its own restriction set and plan
	agreeLead    = 7  // the window starts this many days from today
	agreeWindow  = 60 // days restricted; stays arrive on each of them
	agreeNights  = 10 // the longest stay compared
	agreeCreates = 12 // stays sent to create per property, a third of them accepted ones
	agreeWorkers = 8  // requests in flight at once
	// In make test, getinfo compares agreeGetinfo random stays of each property (of 1200)
	// and search-rental agreeSearches random stays (of 600, each a verdict on every
	// property): the whole e2e suite shares two cores with the other lane, and 15 000
	// requests took minutes there. VROS_RESTRICTIONS_ALL=1 compares every stay.
	agreeGetinfo  = 200
	agreeSearches = 120
)

// sampled returns n of keys chosen by rng (all of them, in a random order, when every is set
// or n ≥ len(keys)). keys are sorted first, so that a seed repeats the same sample.
func sampled[K any](rng *rand.Rand, keys []K, less func(a, b K) bool, n int, every bool) []K {
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	if every || n >= len(keys) {
		return keys
	}
	return keys[:n]
}

func (a agreeStay) less(b agreeStay) bool {
	return a.in < b.in || a.in == b.in && (a.nights < b.nights || a.nights == b.nights && a.plan < b.plan)
}

// restrictionMembers are the members of a restriction's set and clear, in the contract's order.
var restrictionMembers = []string{"min_stay_arrival", "min_stay_through", "max_stay", "closed_to_arrival", "closed_to_departure", "stop_sell"}

// agreeSet is one property's random configuration and what the engine says of it.
type agreeSet struct {
	code  string
	pid   int
	plan  int64 // the derived plan's id
	rates obj
	minN  []obj // setprices_minnights items
	rplan obj   // the derived plan as created
	calls []obj // /api/property-restriction bodies, in order
	// model is what the calls leave on each date: [0] the property's level, [1] the plan's.
	model [2]map[pricing.Date]contract.Restriction
	eng   pricing.Property
	// verdicts by stay: arrival (days from the window's start), nights, plan.
	verdicts map[agreeStay]agreeVerdict
}

type agreeStay struct {
	in, nights int
	plan       int64
}

type agreeVerdict struct {
	res pricing.Result
	re  *pricing.RuleError
}

// randomDays is a day set: All with probability pAll, else three to six days.
func randomDays(rng *rand.Rand, pAll float64) string {
	if rng.Float64() < pAll {
		return "All"
	}
	names := []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	return strings.Join(names[:3+rng.Intn(4)], ",")
}

// dayNames parses a day set as randomDays or a restriction's weekdays writes it.
func dayNames(s string) map[time.Weekday]bool {
	out := map[time.Weekday]bool{}
	for _, n := range strings.Split(s, ",") {
		for w := time.Sunday; w <= time.Saturday; w++ {
			if n == "All" || n == w.String() {
				out[w] = true
			}
		}
	}
	return out
}

// newAgreeSet draws property i's configuration; the window starts on start.
func newAgreeSet(rng *rand.Rand, i int, start pricing.Date) *agreeSet {
	s := &agreeSet{code: fmt.Sprintf("AG%d", i)}
	at := func(n int) string { return start.AddDays(n).String() }

	setting := obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0",
		"default_allow_checkin": randomDays(rng, 0.6), "default_allow_checkout": randomDays(rng, 0.6)}
	rate := obj{"daily_price": 80 + 10*rng.Intn(5), "minimum_stay": 1 + rng.Intn(2)}
	if rng.Intn(2) == 0 {
		rate["weekend_price"] = 150
		setting["apply_weekend_price"] = true
	}
	s.rates = obj{"internal_code": s.code, "rate": rate, "setting": setting}
	if rng.Intn(3) != 0 {
		a := rng.Intn(agreeWindow - 10)
		season := obj{"name": "High", "start_date": at(a), "end_date": at(a + 5 + rng.Intn(20)), "daily_price": 120 + 10*rng.Intn(5),
			"minimum_stay": 1 + rng.Intn(4)}
		if rng.Intn(2) == 0 {
			season["allow_checkin"] = randomDays(rng, 0)
		}
		if rng.Intn(3) == 0 {
			season["allow_checkout"] = randomDays(rng, 0)
		}
		s.rates["season"] = []obj{season}
	}
	if rng.Intn(3) == 0 {
		s.rates["los"] = []obj{{"days": 7, "discount": 10}}
	}
	for _, d := range rng.Perm(agreeWindow)[:rng.Intn(4)] {
		s.minN = append(s.minN, obj{"date": at(d), "recommended_price": strconv.Itoa(90 + rng.Intn(100)),
			"minNights": strconv.Itoa(1 + rng.Intn(5))})
	}

	adjust := func() obj {
		if rng.Intn(2) == 0 {
			return obj{"type": "percent", "value": []string{"-20", "-10", "-12.5", "5", "15"}[rng.Intn(5)]}
		}
		return obj{"type": "amount", "value": []string{"-15", "-7.25", "10"}[rng.Intn(3)]}
	}
	policies := []string{"flexible", "moderate", "strict", "non_refundable"}
	s.rplan = obj{"name": "Plan " + s.code, "inclusions": "Breakfast", "adjustment": adjust(), "minimum_stay": rng.Intn(4),
		"cancellation": obj{"policy": policies[rng.Intn(len(policies))]}, "sold_on": obj{"direct": true}}
	if rng.Intn(2) == 0 {
		a := rng.Intn(agreeWindow)
		r := adjust()
		r["start_date"], r["end_date"] = at(a), at(a+rng.Intn(15))
		s.rplan["ranges"] = []obj{r}
	}

	s.model = [2]map[pricing.Date]contract.Restriction{{}, {}}
	for range 3 + rng.Intn(8) {
		s.calls = append(s.calls, s.newRestriction(rng, start))
	}
	return s
}

// newRestriction draws one /api/property-restriction call and applies it to the model. A
// call at the plan's level has "rate_plan_id": true until the plan exists (s.send sets it).
func (s *agreeSet) newRestriction(rng *rand.Rand, start pricing.Date) obj {
	level := 0
	if rng.Intn(3) == 0 {
		level = 1
	}
	body := obj{"internal_code": s.code}
	if level == 1 {
		body["rate_plan_id"] = true
	}
	var ranges []obj
	type span struct {
		a, b pricing.Date
		days map[time.Weekday]bool
	}
	var spans []span
	for range 1 + rng.Intn(2) {
		a := rng.Intn(agreeWindow)
		b := min(a+rng.Intn(21), agreeWindow-1)
		r := obj{"start_date": start.AddDays(a).String(), "end_date": start.AddDays(b).String()}
		days := "All"
		switch rng.Intn(4) {
		case 0:
			r["weekdays"] = "All"
		case 1, 2:
			days = randomDays(rng, 0)
			if rng.Intn(2) == 0 {
				days = strings.Split(days, ",")[0] // one day: "every Saturday"
			}
			r["weekdays"] = days
		}
		ranges = append(ranges, r)
		spans = append(spans, span{start.AddDays(a), start.AddDays(b), dayNames(days)})
	}
	body["dates"] = ranges

	set := obj{}
	chance := func(p float64) bool { return rng.Float64() < p }
	if chance(0.3) {
		set["min_stay_arrival"] = 1 + rng.Intn(6)
	}
	if chance(0.2) {
		set["min_stay_through"] = 1 + rng.Intn(5)
	}
	if chance(0.2) {
		set["max_stay"] = 2 + rng.Intn(9)
		if a, ok := set["min_stay_arrival"].(int); ok && a > set["max_stay"].(int) {
			set["max_stay"] = a // min_stay_arrival > max_stay in one set is refused
		}
	}
	for _, m := range []string{"closed_to_arrival", "closed_to_departure"} {
		if chance(0.25) {
			set[m] = rng.Intn(4) != 0 // false opens a day the rates' weekdays close
		}
	}
	if chance(0.12) {
		set["stop_sell"] = rng.Intn(3) != 0
	}
	if level == 0 && chance(0.1) {
		set["price"] = strconv.Itoa(90+rng.Intn(100)) + ".50"
	}
	var clear []string
	if chance(0.08) {
		clear = []string{"all"}
	} else {
		for _, m := range append(restrictionMembers, "price") {
			if _, isSet := set[m]; !isSet && (m != "price" || level == 0) && chance(0.12) {
				clear = append(clear, m)
			}
		}
	}
	if len(set) == 0 && len(clear) == 0 {
		clear = []string{restrictionMembers[rng.Intn(len(restrictionMembers))]}
	}
	if len(set) > 0 {
		body["set"] = set
	}
	if len(clear) > 0 {
		body["clear"] = clear
	}

	// The model: each selected date gets the members set and loses those cleared.
	for _, sp := range spans {
		for d := sp.a; !d.After(sp.b); d = d.AddDays(1) {
			if !sp.days[d.Weekday()] {
				continue
			}
			r := s.model[level][d]
			for _, m := range clear {
				if m == "all" {
					r = contract.Restriction{}
				} else {
					setMember(&r, m, nil)
				}
			}
			for m, v := range set {
				if m != "price" {
					setMember(&r, m, v)
				}
			}
			s.model[level][d] = r
		}
	}
	return body
}

// setMember sets (v an int or bool) or clears (v nil) member m of r.
func setMember(r *contract.Restriction, m string, v any) {
	ip := func() *int {
		if v == nil {
			return nil
		}
		n := v.(int)
		return &n
	}
	bp := func() *bool {
		if v == nil {
			return nil
		}
		b := v.(bool)
		return &b
	}
	switch m {
	case "min_stay_arrival":
		r.MinStayArrival = ip()
	case "min_stay_through":
		r.MinStayThrough = ip()
	case "max_stay":
		r.MaxStay = ip()
	case "closed_to_arrival":
		r.ClosedToArrival = bp()
	case "closed_to_departure":
		r.ClosedToDeparture = bp()
	case "stop_sell":
		r.StopSell = bp()
	}
}

// restrictionText writes a date's members for comparisons and reports ("" when none is set).
func restrictionText(r contract.Restriction) string {
	var parts []string
	for _, m := range []struct {
		name string
		i    *int
		b    *bool
	}{{"min_stay_arrival", r.MinStayArrival, nil}, {"min_stay_through", r.MinStayThrough, nil}, {"max_stay", r.MaxStay, nil},
		{"closed_to_arrival", nil, r.ClosedToArrival}, {"closed_to_departure", nil, r.ClosedToDeparture}, {"stop_sell", nil, r.StopSell}} {
		switch {
		case m.i != nil:
			parts = append(parts, fmt.Sprintf("%s=%d", m.name, *m.i))
		case m.b != nil:
			parts = append(parts, fmt.Sprintf("%s=%t", m.name, *m.b))
		}
	}
	return strings.Join(parts, " ")
}

// expand lists runs of restrictions by date.
func expand(runs []contract.Restriction) (map[pricing.Date]string, error) {
	out := map[pricing.Date]string{}
	for _, r := range runs {
		a, err1 := pricing.ParseDate(r.StartDate)
		b, err2 := pricing.ParseDate(r.EndDate)
		if err1 != nil || err2 != nil || b.Before(a) {
			return nil, fmt.Errorf("run %+v", r)
		}
		for d := a; !d.After(b); d = d.AddDays(1) {
			if _, dup := out[d]; dup {
				return nil, fmt.Errorf("runs overlap on %s", d)
			}
			out[d] = restrictionText(r)
		}
	}
	return out, nil
}

// checkModel compares the restrictions the property publishes with the model of the calls.
func (s *agreeSet) checkModel(snap contract.Property) []string {
	var planRuns []contract.Restriction
	found := false
	for _, p := range snap.RatePlans {
		if p.ID == s.plan {
			planRuns, found = p.Restrictions, true
		}
	}
	if !found {
		return []string{fmt.Sprintf("%s: the property has no rate plan %d: %+v", s.code, s.plan, snap.RatePlans)}
	}
	var diffs []string
	for level, runs := range [][]contract.Restriction{snap.Restrictions, planRuns} {
		got, err := expand(runs)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s level %d: %v", s.code, level, err))
			continue
		}
		want := map[pricing.Date]string{}
		for d, r := range s.model[level] {
			if t := restrictionText(r); t != "" {
				want[d] = t
			}
		}
		for d, w := range want {
			if got[d] != w {
				diffs = append(diffs, fmt.Sprintf("%s level %d on %s: published %q, the calls leave %q", s.code, level, d, got[d], w))
			}
		}
		for d, g := range got {
			if _, ok := want[d]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s level %d on %s: published %q, the calls leave nothing", s.code, level, d, g))
			}
		}
	}
	sort.Strings(diffs)
	return diffs
}

// send configures the property through edge: create, rates, per-date minimum nights, the
// plan, the restrictions. Any goroutine.
func (s *agreeSet) send(acc account) error {
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	if err := acc.aSend("property", obj{"action": "create", "property": validProperty(s.code)}, &created); err != nil {
		return err
	}
	s.pid, _ = strconv.Atoi(created.Data.PropertyID)
	if err := acc.aSend("property-rate", s.rates, nil); err != nil {
		return err
	}
	if len(s.minN) > 0 {
		if err := acc.bData("setprices_minnights", obj{"propertyId": acc.AccountID + "_" + strconv.Itoa(s.pid), "pricingArray": s.minN}, nil); err != nil {
			return err
		}
	}
	var plan struct {
		Data struct {
			ID string `json:"rate_plan_id"`
		} `json:"data"`
	}
	if err := acc.aSend("property-rateplan", obj{"action": "create", "internal_code": s.code, "rate_plan": s.rplan}, &plan); err != nil {
		return err
	}
	id, err := strconv.ParseInt(plan.Data.ID, 10, 64)
	if err != nil || id < 1 {
		return fmt.Errorf("property-rateplan create: rate_plan_id %q", plan.Data.ID)
	}
	s.plan = id
	for _, c := range s.calls {
		if _, ok := c["rate_plan_id"]; ok {
			c["rate_plan_id"] = s.plan
		}
		if err := acc.aSend("property-restriction", c, nil); err != nil {
			return err
		}
	}
	return nil
}

// stay is an arrival (days from the window's start) and its nights, as dates.
func (k agreeStay) dates(start pricing.Date) (pricing.Date, pricing.Date) {
	in := start.AddDays(k.in)
	return in, in.AddDays(k.nights)
}

func (k agreeStay) String() string { return fmt.Sprintf("+%d/%dn/plan %d", k.in, k.nights, k.plan) }

// verdictText is what the engine says of a stay, for reports.
func (v agreeVerdict) String() string {
	if v.re != nil {
		return fmt.Sprintf("refused %s %s: %s", v.re.Code, v.re.Field, v.re.Message)
	}
	return "accepted, totalRent " + v.res.TotalRent.String()
}

func TestRestrictionsAgree(t *testing.T) {
	t.Parallel()
	began := time.Now()
	seed := time.Now().UnixNano()
	if v := os.Getenv("VROS_RESTRICTIONS_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("VROS_RESTRICTIONS_SEED=%q: %v", v, err)
		}
	}
	t.Logf("seed %d (VROS_RESTRICTIONS_SEED=%d repeats this run today, %s)", seed, seed, day(0))
	rng := rand.New(rand.NewSource(seed))
	start := pricing.MustDate(day(agreeLead))
	acc := newAccount(t)
	// Thousands of requests: more than the stack's per-account burst.
	setPlan(t, acc, obj{"rate_rps": 100000, "rate_burst": 1000000})

	sets := make([]*agreeSet, agreeSets)
	for i := range sets {
		sets[i] = newAgreeSet(rng, i, start)
	}
	setup := &pool{keep: 10}
	var jobs []func()
	for _, s := range sets {
		jobs = append(jobs, func() {
			if err := s.send(acc); err != nil {
				setup.fail(s.code, "%v", err)
			}
		})
	}
	setup.run(4, jobs)
	if r := setup.report(); r != "" {
		t.Fatalf("seed %d: configuring the properties: %s", seed, r)
	}

	// The engine's verdicts, on the property as published.
	settings := contract.DefaultSettings(acc.AccountID)
	byPID := map[string]*agreeSet{}
	for _, s := range sets {
		var snap contract.Property
		s.eng, snap = acc.engineOf(t, s.code, settings)
		if diffs := s.checkModel(snap); len(diffs) > 0 {
			t.Fatalf("seed %d: the restrictions published differ from the calls' (%d dates):\n%s\ncalls: %s", seed, len(diffs),
				strings.Join(diffs[:min(len(diffs), 20)], "\n"), jsonText(s.calls))
		}
		s.verdicts = map[agreeStay]agreeVerdict{}
		for in := range agreeWindow {
			for n := 1; n <= agreeNights; n++ {
				for _, plan := range []int64{0, s.plan} {
					k := agreeStay{in, n, plan}
					a, b := k.dates(start)
					res, re, err := ruleQuote(s.eng, a, b, plan, "")
					if err != nil {
						t.Fatalf("seed %d: %s %s: the engine: %v", seed, s.code, k, err)
					}
					s.verdicts[k] = agreeVerdict{res, re}
				}
			}
		}
		byPID[strconv.Itoa(s.pid)] = s
		waitVersion(t, acc, s.pid)
	}
	configured := time.Now()

	// getcalendar, once per property and plan, when the catalog has the last change: its days
	// are the engine's day rules and prices. Then every stay read from it by the client rule.
	calFirst, calLast := start, start.AddDays(agreeWindow+agreeNights)
	calendars := map[string]map[string]rpDay{}
	calendarKey := func(s *agreeSet, plan int64) string { return s.code + "/" + strconv.FormatInt(plan, 10) }
	for _, s := range sets {
		for _, plan := range []int64{0, s.plan} {
			var last []string
			var days map[string]rpDay
			deadline := time.Now().Add(viewsWithin)
			for {
				var err error
				if days, err = acc.rpCalendar(s.pid, plan, calFirst, calLast); err != nil {
					last = []string{err.Error()}
				} else if last = s.calendarDiffs(days, plan, calFirst, calLast); len(last) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("seed %d: %s plan %d: getcalendar never showed the engine's days within %v (%d differ):\n%s\ncalls: %s",
						seed, s.code, plan, viewsWithin, len(last), strings.Join(last[:min(len(last), 20)], "\n"), jsonText(s.calls))
				}
				time.Sleep(20 * time.Millisecond)
			}
			calendars[calendarKey(s, plan)] = days
		}
	}
	converged := time.Now()

	bad := &pool{keep: 8}
	var calendarStays, getinfoStays, searchStays, searchPairs, created, refused int
	for _, s := range sets {
		for k, v := range s.verdicts {
			a, b := k.dates(start)
			field, err := calendarRefusal(calendars[calendarKey(s, k.plan)], a, b)
			want := ""
			if v.re != nil {
				want = v.re.Field
			}
			calendarStays++
			if err != nil || field != want {
				bad.fail("getcalendar", "%s %s: the client rule refuses on %q (%v), the engine: %s", s.code, k, field, err, v)
			}
		}
	}

	// getinfo: stays on both plans (every one with VROS_RESTRICTIONS_ALL); the standard plan
	// asked without ratePlanId and with 0.
	every := os.Getenv("VROS_RESTRICTIONS_ALL") == "1"
	jobs = nil
	for _, s := range sets {
		keys := make([]agreeStay, 0, len(s.verdicts))
		for k := range s.verdicts {
			keys = append(keys, k)
		}
		for _, k := range sampled(rng, keys, agreeStay.less, agreeGetinfo, every) {
			v := s.verdicts[k]
			getinfoStays++
			jobs = append(jobs, func() {
				a, b := k.dates(start)
				fields := obj{"propertyId": s.pid, "numberofadults": 2, "checkin": a.String(), "checkout": b.String()}
				if k.plan != 0 || k.in%2 == 0 {
					fields["ratePlanId"] = k.plan
				}
				r, err := acc.bSend("getinfo", fields)
				if err != nil {
					bad.fail("getinfo", "%s %s: %v", s.code, k, err)
					return
				}
				if msg := s.sameQuote(r, k, v); msg != "" {
					bad.fail("getinfo", "%s %s: %s; the engine: %s", s.code, k, msg, v)
				}
			})
		}
	}
	// search-rental: every stay, over the whole account, lists the properties the engine
	// accepts on the standard plan.
	var searched []agreeStay
	for in := range agreeWindow {
		for n := 1; n <= agreeNights; n++ {
			searched = append(searched, agreeStay{in: in, nights: n})
		}
	}
	for _, st := range sampled(rng, searched, agreeStay.less, agreeSearches, every) {
		in, n := st.in, st.nights
		searchStays++
		searchPairs += len(sets)
		jobs = append(jobs, func() {
			a, b := start.AddDays(in), start.AddDays(in+n)
			listed, err := acc.rpSearch(url.Values{"checkin": {a.String()}, "checkout": {b.String()}, "numberadults": {"2"},
				"page": {"1"}, "limit": {"100"}})
			if err != nil {
				bad.fail("search-rental", "%s→%s: %v", a, b, err)
				return
			}
			for _, s := range sets {
				v := s.verdicts[agreeStay{in, n, 0}]
				rent, ok := listed[strconv.Itoa(s.pid)]
				switch {
				case ok && v.re != nil:
					bad.fail("search-rental", "%s +%d/%dn listed; the engine: %s", s.code, in, n, v)
				case !ok && v.re == nil:
					bad.fail("search-rental", "%s +%d/%dn not listed; the engine: %s", s.code, in, n, v)
				case ok && !rent.Equal(v.res.TotalRent):
					bad.fail("search-rental", "%s +%d/%dn totalRent %s; the engine: %s", s.code, in, n, rent, v)
				}
			}
			for id := range listed {
				if byPID[id] == nil {
					bad.fail("search-rental", "%s→%s lists %s, no property of this test", a, b, id)
				}
			}
		})
	}
	readsStart := time.Now()
	bad.run(agreeWorkers, jobs)
	readsDone := time.Now()

	// create: per property, a sample of stays one after another (an accepted one is booked,
	// checked and cancelled, freeing its nights for the next); the properties in parallel.
	jobs = nil
	for _, s := range sets {
		var ok, no []agreeStay
		for k, v := range s.verdicts {
			if v.re == nil {
				ok = append(ok, k)
			} else {
				no = append(no, k)
			}
		}
		ok, no = sampled(rng, ok, agreeStay.less, len(ok), false), sampled(rng, no, agreeStay.less, len(no), false)
		nOK := min(len(ok), agreeCreates/3) // a booking costs writes and events; a refusal does not
		sample := append(ok[:nOK], no[:min(len(no), agreeCreates-nOK)]...)
		created += nOK
		refused += len(sample) - nOK
		jobs = append(jobs, func() {
			for _, k := range sample {
				if msg := s.create(acc, k, start); msg != "" {
					bad.fail("create", "%s %s: %s; the engine: %s", s.code, k, msg, s.verdicts[k])
				}
			}
		})
	}
	bad.run(agreeWorkers, jobs)
	done := time.Now()

	codes := map[string]int{}
	for _, s := range sets {
		for _, v := range s.verdicts {
			if v.re == nil {
				codes["accepted"]++
			} else {
				codes[string(v.re.Code)]++
			}
		}
	}
	t.Logf("the engine's verdicts: %v", codes)
	t.Logf("%d properties, %d stays each on 2 plans: getcalendar %d stays, getinfo %d, search-rental %d stays (%d property verdicts), create %d booked + %d refused",
		len(sets), agreeWindow*agreeNights, calendarStays, getinfoStays, searchStays, searchPairs, created, refused)
	t.Logf("time: configure %v, views converged %v, getinfo+search %v, create %v, whole %v",
		configured.Sub(began).Round(time.Millisecond), converged.Sub(configured).Round(time.Millisecond),
		readsDone.Sub(readsStart).Round(time.Millisecond), done.Sub(readsDone).Round(time.Millisecond), done.Sub(began).Round(time.Millisecond))
	if r := bad.report(); r != "" {
		t.Errorf("seed %d (VROS_RESTRICTIONS_SEED=%d): disagreements with the engine by surface: %s", seed, seed, r)
	}
}

// calendarDiffs compares a getcalendar answer with the engine's calendar days
// (pricing.NightPriceOn: the plan's prices and day rules, its minimum stay included).
func (s *agreeSet) calendarDiffs(days map[string]rpDay, plan int64, first, last pricing.Date) []string {
	var diffs []string
	for d := first; !d.After(last); d = d.AddDays(1) {
		got, ok := days[d.String()]
		if !ok {
			diffs = append(diffs, d.String()+": missing")
			continue
		}
		e, ok := pricing.NightPriceOn(s.eng, plan, "", d, 1)
		if !ok {
			diffs = append(diffs, d.String()+": the engine cannot price it")
			continue
		}
		typ := 3
		switch {
		case e.CheckinAllowed && e.CheckoutAllowed:
			typ = 0
		case e.CheckinAllowed:
			typ = 1
		case e.CheckoutAllowed:
			typ = 2
		}
		want := fmt.Sprintf("availability %t price %s minimumstay %d check_in_out_type %d minimumstay_through %d maximumstay %d closed_to_arrival %t closed_to_departure %t stop_sell %t",
			!e.StopSell, e.Price, e.MinimumStay, typ, e.MinStayThrough, e.MaxStay, e.ClosedToArrival, e.ClosedToDeparture, e.StopSell)
		have := fmt.Sprintf("availability %s price %s minimumstay %d check_in_out_type %d minimumstay_through %d maximumstay %d closed_to_arrival %s closed_to_departure %s stop_sell %s",
			got.Availability, got.Price, got.MinimumStay, intOf(got.CheckInOut), intOf(got.MinimumStayThru), intOf(got.MaximumStay),
			boolOf(got.ClosedToArrival), boolOf(got.ClosedToDeparture), boolOf(got.StopSell))
		if have != want {
			diffs = append(diffs, fmt.Sprintf("%s: %s; the engine: %s", d, have, want))
		}
	}
	return diffs
}

// reply reads a getinfo or create answer against the engine's verdict: a refusal must name
// the engine's field and message (msg "" when it does); an acceptance must succeed, and its
// data is returned with accepted true for the caller to compare.
func (v agreeVerdict) reply(r bReply) (q rpQuote, msg string, accepted bool) {
	if v.re != nil {
		if r.HTTP != http.StatusOK || !r.names(v.re.Field, v.re.Message) {
			return q, fmt.Sprintf("HTTP %d %s", r.HTTP, r.Body), false
		}
		return q, "", false
	}
	if r.HTTP != http.StatusOK || r.Status != 0 {
		return q, fmt.Sprintf("HTTP %d %s", r.HTTP, r.Body), false
	}
	if err := json.Unmarshal(r.Data, &q); err != nil {
		return q, err.Error(), false
	}
	return q, "", true
}

// sameQuote compares a getinfo answer with the engine's verdict ("" when they agree).
func (s *agreeSet) sameQuote(r bReply, k agreeStay, v agreeVerdict) string {
	q, msg, accepted := v.reply(r)
	if !accepted {
		return msg
	}
	if msg := v.sameTotals(q); msg != "" {
		return msg
	}
	// ratePlans: the plans that accept the stay, the standard plan first, at their totals.
	var want []string
	for _, plan := range []int64{0, s.plan} {
		if w := s.verdicts[agreeStay{k.in, k.nights, plan}]; w.re == nil {
			want = append(want, fmt.Sprintf("%d %s %s %s", plan, w.res.PlanName, w.res.TotalRent, w.res.GrandTotal))
		}
	}
	var got []string
	for _, p := range q.RatePlans {
		got = append(got, fmt.Sprintf("%d %s %s %s", p.RatePlanID, p.RatePlanName, p.TotalRent, p.GrandTotal))
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		return fmt.Sprintf("ratePlans [%s], want [%s]", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	return ""
}

// sameTotals compares a quote or a booking with an accepted verdict ("" when they agree).
func (v agreeVerdict) sameTotals(q rpQuote) string {
	switch {
	case !q.TotalRent.Equal(v.res.TotalRent) || !q.GrandTotal.Equal(v.res.GrandTotal) || q.QtyOfNights != v.res.NightCount:
		return fmt.Sprintf("totalRent %s grandTotal %s qtyofnights %d", q.TotalRent, q.GrandTotal, q.QtyOfNights)
	case q.RatePlanID == nil || *q.RatePlanID != v.res.Plan || q.RatePlanName == nil || *q.RatePlanName != v.res.PlanName:
		return fmt.Sprintf("ratePlanId %v ratePlanName %v", ptrText(q.RatePlanID), ptrText(q.RatePlanName))
	case q.CancellationPolicy == nil || q.CancellationPolicy.Policy != v.res.Cancellation.Policy:
		return fmt.Sprintf("cancellationPolicy %+v, want %q", q.CancellationPolicy, v.res.Cancellation.Policy)
	}
	nightly := v.res.NightlyPriceDetail()
	if len(q.NightlyDetail) != len(nightly) {
		return fmt.Sprintf("nightlyPriceDetail %v", q.NightlyDetail)
	}
	for d, p := range nightly {
		if got, ok := q.NightlyDetail[d.String()]; !ok || !got.Equal(p) {
			return fmt.Sprintf("nightlyPriceDetail %v, the engine's %v", q.NightlyDetail, nightly)
		}
	}
	return ""
}

// create books stay k as a guest does and checks the answer against the engine: an accepted
// stay is booked at its price with its plan's terms and then cancelled; a refused one is
// refused with the engine's error. Any goroutine.
func (s *agreeSet) create(acc account, k agreeStay, start pricing.Date) string {
	v := s.verdicts[k]
	a, b := k.dates(start)
	body := guest(s.pid, a.String(), b.String())
	if k.plan != 0 || k.nights%2 == 0 {
		body["ratePlanId"] = k.plan
	}
	r, err := acc.bSend("create", body)
	if err != nil {
		return err.Error()
	}
	q, msg, accepted := v.reply(r)
	if !accepted {
		return msg
	}
	msg = v.sameTotals(q)
	if msg == "" && (q.Channel == nil || *q.Channel != "") {
		msg = fmt.Sprintf("channel %v, want \"\"", ptrText(q.Channel))
	}
	if q.BookingID == 0 {
		return "no bookingId: " + string(r.Body)
	}
	if err := acc.bData("cancel", obj{"bookingId": q.BookingID}, nil); err != nil {
		return msg + " (and its cancel: " + err.Error() + ")"
	}
	return msg
}

func ptrText[T any](p *T) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}
