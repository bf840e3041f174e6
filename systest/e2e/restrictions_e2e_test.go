package e2e

// Rate plans, restrictions per date and channel markups end to end through edge (issue 31,
// docs/rate-plans.md): what /api/property-restriction, /api/property-rateplan and
// /api/channel-markup set changes what getinfo, create, search-rental, getcalendar,
// getnonavailabledate and the iCal export answer, within the views' usual lag; clearing
// reverts to the rates' defaults.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// restrictionCase is one restriction kind: the call that sets it, a stay it refuses and the
// field and words of the refusal, stays it does not touch, and the calendar day showing it.
// Days are counted from today.
type restrictionCase struct {
	name     string
	dates    []obj // the call's ranges
	selected int   // the dates they select
	set      obj
	refused  [2]int
	field    string
	words    string // in the refusal's message
	accepted [][2]int
	day      int
	shows    func(d rpDay) bool // day's calendar entry while the restriction is set
}

// e2eA is the day the restrictions of TestRestrictionsEndToEnd fall on.
const e2eA = 30

func restrictionCases() []restrictionCase {
	a := e2eA
	one := []obj{{"start_date": day(a), "end_date": day(a)}}
	weekday := pricing.MustDate(day(a)).Weekday().String()
	return []restrictionCase{
		{name: "min_stay_arrival", dates: one, selected: 1, set: obj{"min_stay_arrival": 4},
			refused: [2]int{a, a + 2}, field: "checkout", words: "minimum stay for these dates is 4 nights",
			accepted: [][2]int{{a, a + 4}, {a - 1, a + 1}}, day: a,
			shows: func(d rpDay) bool { return d.MinimumStay == 4 }},
		{name: "min_stay_through", dates: []obj{{"start_date": day(a + 1), "end_date": day(a + 1)}}, selected: 1, set: obj{"min_stay_through": 3},
			refused: [2]int{a, a + 2}, field: "checkout", words: "minimum stay for these dates is 3 nights",
			// the departure day is not a night: a stay leaving on it is not held to it.
			accepted: [][2]int{{a, a + 3}, {a - 1, a + 1}}, day: a + 1,
			shows: func(d rpDay) bool { return intOf(d.MinimumStayThru) == 3 && d.MinimumStay == 1 }},
		{name: "max_stay", dates: one, selected: 1, set: obj{"max_stay": 2},
			refused: [2]int{a, a + 3}, field: "checkout", words: "maximum stay for these dates is 2 nights",
			// max stay reads the arrival day only.
			accepted: [][2]int{{a, a + 2}, {a - 1, a + 3}}, day: a,
			shows: func(d rpDay) bool { return intOf(d.MaximumStay) == 2 }},
		{name: "closed_to_arrival", dates: one, selected: 1, set: obj{"closed_to_arrival": true},
			refused: [2]int{a, a + 2}, field: "checkin", words: "check-in is closed on " + day(a),
			accepted: [][2]int{{a - 1, a + 2}, {a - 2, a}}, day: a,
			shows: func(d rpDay) bool { return boolOf(d.ClosedToArrival) == "true" && intOf(d.CheckInOut) == 2 }},
		{name: "closed_to_departure", dates: one, selected: 1, set: obj{"closed_to_departure": true},
			refused: [2]int{a - 2, a}, field: "checkout", words: "check-out is closed on " + day(a),
			accepted: [][2]int{{a, a + 2}, {a - 2, a + 1}}, day: a,
			shows: func(d rpDay) bool { return boolOf(d.ClosedToDeparture) == "true" && intOf(d.CheckInOut) == 1 }},
		{name: "stop_sell", dates: one, selected: 1, set: obj{"stop_sell": true},
			refused: [2]int{a - 1, a + 1}, field: "checkin", words: "not sold for the night of " + day(a),
			// the departure day is not a night: a stay leaving on a stopped day sells.
			accepted: [][2]int{{a - 2, a}, {a + 1, a + 3}}, day: a,
			shows: func(d rpDay) bool { return boolOf(d.StopSell) == "true" && d.Availability == "false" }},
		// A weekday pattern: closed to arrival on A's weekday for two weeks (A and A+7).
		{name: "closed_to_arrival_weekly", dates: []obj{{"start_date": day(a), "end_date": day(a + 13), "weekdays": weekday}}, selected: 2,
			set: obj{"closed_to_arrival": true}, refused: [2]int{a + 7, a + 9}, field: "checkin", words: "check-in is closed on " + day(a+7),
			accepted: [][2]int{{a + 1, a + 3}, {a + 8, a + 10}}, day: a + 7,
			shows: func(d rpDay) bool { return boolOf(d.ClosedToArrival) == "true" }},
	}
}

// defaultDay reports whether a calendar day shows simpleRates' defaults and no restriction.
func defaultDay(d rpDay) bool {
	return d.Availability == "true" && d.MinimumStay == 1 && intOf(d.CheckInOut) == 0 && intOf(d.MinimumStayThru) == 0 &&
		intOf(d.MaximumStay) == 0 && boolOf(d.ClosedToArrival) == "false" && boolOf(d.ClosedToDeparture) == "false" &&
		boolOf(d.StopSell) == "false"
}

// TestRestrictionsEndToEnd: each restriction kind, at the property's level and at a derived
// plan's, set through /api/property-restriction, changes what getinfo, create,
// search-rental and getcalendar answer (and, stop-sell, getnonavailabledate and the iCal
// export); clearing it reverts to the default. Then a plan's price and terms in getinfo's
// ratePlans and in the booking, and a channel's markup in its quote.
func TestRestrictionsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"property", "plan"} {
		for _, c := range restrictionCases() {
			t.Run(level+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				restrictionEndToEnd(t, level == "plan", c)
			})
		}
	}
	t.Run("plans_and_markups", func(t *testing.T) {
		t.Parallel()
		plansAndMarkups(t)
	})
}

// quoteOn sends getinfo for a stay (days from today) on plan for channel.
func (acc account) quoteOn(t *testing.T, pid int, stay [2]int, plan int64, channel string) bReply {
	t.Helper()
	fields := obj{"propertyId": pid, "numberofadults": 2, "checkin": day(stay[0]), "checkout": day(stay[1])}
	if plan != 0 {
		fields["ratePlanId"] = plan
	}
	if channel != "" {
		fields["channel"] = channel
	}
	r, err := acc.bSend("getinfo", fields)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// quoted decodes an accepted getinfo, failing t otherwise.
func (r bReply) quoted(t *testing.T) rpQuote {
	t.Helper()
	if r.HTTP != http.StatusOK || r.Status != 0 {
		t.Fatalf("want a quote: HTTP %d %s", r.HTTP, r.Body)
	}
	var q rpQuote
	if err := json.Unmarshal(r.Data, &q); err != nil {
		t.Fatalf("quote %s: %v", r.Data, err)
	}
	return q
}

// listedFor is what search-rental lists for a stay of property pid (the property_id filter).
func (acc account) listedFor(t *testing.T, pid int, stay [2]int) bool {
	t.Helper()
	listed, err := acc.rpSearch(url.Values{"checkin": {day(stay[0])}, "checkout": {day(stay[1])}, "numberadults": {"2"},
		"property_id": {strconv.Itoa(pid)}})
	if err != nil {
		t.Fatal(err)
	}
	_, ok := listed[strconv.Itoa(pid)]
	return ok
}

// calendarDay is day n of pid's getcalendar on plan (nil while the catalog cannot answer).
func (acc account) calendarDay(t *testing.T, pid int, plan int64, n int) *rpDay {
	t.Helper()
	d := pricing.MustDate(day(n))
	days, err := acc.rpCalendar(pid, plan, d, d)
	if err != nil {
		return nil
	}
	x := days[d.String()]
	return &x
}

// nonAvailable lists the days getnonavailabledate reports for pid.
func (acc account) nonAvailable(t *testing.T, pid int) map[string]bool {
	t.Helper()
	out, ok := acc.ledgerNights(t, pid)
	if !ok {
		return nil
	}
	return out
}

func restrictionEndToEnd(t *testing.T, onPlan bool, c restrictionCase) {
	acc := newAccount(t)
	setPlan(t, acc, obj{"rate_rps": 100000, "rate_burst": 1000000}) // polls of up to a minute each
	const code = "RE1"
	pid := bookable(t, acc, code)
	var plan int64 // the plan the restriction is on, and the stays are asked for
	var feed string
	if onPlan {
		var out struct {
			Data struct {
				ID string `json:"rate_plan_id"`
			} `json:"data"`
		}
		r := acc.a(t, "property-rateplan", obj{"action": "create", "internal_code": code, "rate_plan": obj{"name": "Member rate",
			"adjustment": obj{"type": "percent", "value": "-10"}, "cancellation": obj{"policy": "strict"}, "sold_on": obj{"direct": true}}})
		r.status(t, http.StatusOK)
		r.decode(t, &out)
		plan, _ = strconv.ParseInt(out.Data.ID, 10, 64)
		if plan < 1 {
			t.Fatalf("rate_plan_id: %s", r.Body)
		}
	} else if c.name == "stop_sell" {
		feed = *acc.icalLink(t, "get", code).URL
	}
	// The views know the property (and its plan) before the restriction.
	eventually(t, "the calendar has the property and its plan", func() bool {
		d := acc.calendarDay(t, pid, plan, c.day)
		return d != nil && defaultDay(*d)
	})
	eventually(t, "the quote on the plan", func() bool { return acc.quoteOn(t, pid, c.refused, plan, "").Status == 0 })
	eventually(t, "the search lists the stay", func() bool { return acc.listedFor(t, pid, c.refused) })

	// Set.
	body := obj{"internal_code": code, "dates": c.dates, "set": c.set}
	if onPlan {
		body["rate_plan_id"] = plan
	}
	var set struct {
		Code int `json:"code"`
		Data struct {
			Dates int `json:"dates"`
		} `json:"data"`
	}
	r := acc.a(t, "property-restriction", body)
	r.status(t, http.StatusOK)
	if r.decode(t, &set); set.Data.Dates != c.selected {
		t.Fatalf("property-restriction selected %d dates, want %d: %s", set.Data.Dates, c.selected, r.Body)
	}

	// getinfo refuses the stay as the engine does, on the plan restricted; the stays it does
	// not touch are quoted.
	var refusal bReply
	eventually(t, "getinfo refuses "+c.name, func() bool {
		refusal = acc.quoteOn(t, pid, c.refused, plan, "")
		return refusal.Status == 4
	})
	eng, _ := acc.engineOf(t, code, contract.DefaultSettings(acc.AccountID))
	_, re, err := ruleQuote(eng, pricing.MustDate(day(c.refused[0])), pricing.MustDate(day(c.refused[1])), plan, "")
	if err != nil || re == nil {
		t.Fatalf("the engine accepts the refused stay (%v)", err)
	}
	if re.Field != c.field || !strings.Contains(re.Message, c.words) || !refusal.names(re.Field, re.Message) {
		t.Fatalf("getinfo %s, the engine %s %s: %q (want field %s, words %q)", refusal.Body, re.Code, re.Field, re.Message, c.field, c.words)
	}
	for _, s := range c.accepted {
		acc.quoteOn(t, pid, s, plan, "").quoted(t)
	}
	if onPlan {
		// The standard plan is not restricted: quoted, and its bookable plans leave the
		// restricted plan out.
		q := acc.quoteOn(t, pid, c.refused, 0, "").quoted(t)
		if len(q.RatePlans) != 1 || q.RatePlans[0].RatePlanID != 0 {
			t.Fatalf("ratePlans of the standard quote while plan %d refuses the stay: %+v", plan, q.RatePlans)
		}
	}

	// search-rental (the standard plan) and getcalendar (the plan asked).
	if onPlan {
		eventually(t, "the plan's calendar shows "+c.name, func() bool {
			d := acc.calendarDay(t, pid, plan, c.day)
			return d != nil && c.shows(*d)
		})
		if d := acc.calendarDay(t, pid, 0, c.day); d == nil || !defaultDay(*d) {
			t.Fatalf("the standard plan's calendar shows the plan's restriction: %+v", d)
		}
		if !acc.listedFor(t, pid, c.refused) {
			t.Fatal("search-rental leaves out a stay the standard plan sells")
		}
	} else {
		eventually(t, "the calendar shows "+c.name, func() bool {
			d := acc.calendarDay(t, pid, 0, c.day)
			return d != nil && c.shows(*d)
		})
		eventually(t, "the search leaves the stay out", func() bool { return !acc.listedFor(t, pid, c.refused) })
		for _, s := range c.accepted {
			if !acc.listedFor(t, pid, s) {
				t.Fatalf("search-rental leaves out %v", s)
			}
		}
	}
	if feed != "" {
		// Stop-sell: a non-available night, exported as such.
		eventually(t, "getnonavailabledate and the feed show the stopped night", func() bool {
			na := acc.nonAvailable(t, pid)
			f := fetchFeed(t, feed, "")
			if f.code != http.StatusOK || !sameNights(na, map[string]bool{day(c.day): true}) {
				return false
			}
			nights, _ := icalNights(t, f.body)
			return sameNights(nights, na) && strings.Contains(string(f.body), "Not available")
		})
	}

	// create refuses it with the same error; an untouched stay books on the plan (and is
	// cancelled: the views see its nights free again before the checks below pass).
	bad := guest(pid, day(c.refused[0]), day(c.refused[1]))
	bad["ratePlanId"] = plan
	if a, err := acc.bSend("create", bad); err != nil || !a.names(re.Field, re.Message) {
		t.Fatalf("create of the refused stay: %s (%v)", a.Body, err)
	}
	good := guest(pid, day(c.accepted[0][0]), day(c.accepted[0][1]))
	good["ratePlanId"] = plan
	var booked rpQuote
	if err := acc.bData("create", good, &booked); err != nil {
		t.Fatal(err)
	}
	if booked.RatePlanID == nil || *booked.RatePlanID != plan {
		t.Fatalf("the booking's ratePlanId %s, want %d", ptrText(booked.RatePlanID), plan)
	}
	acc.b(t, "cancel", obj{"bookingId": booked.BookingID}).ok(t, nil)

	// Clear: every surface reverts to the default.
	clear := []string{}
	for m := range c.set {
		clear = append(clear, m)
	}
	if c.name == "closed_to_arrival_weekly" {
		clear = []string{"all"}
	}
	body = obj{"internal_code": code, "dates": c.dates, "clear": clear}
	if onPlan {
		body["rate_plan_id"] = plan
	}
	acc.a(t, "property-restriction", body).status(t, http.StatusOK)
	eventually(t, "getinfo quotes the stay again", func() bool { return acc.quoteOn(t, pid, c.refused, plan, "").Status == 0 })
	eventually(t, "the calendar shows the default again", func() bool {
		d := acc.calendarDay(t, pid, plan, c.day)
		return d != nil && defaultDay(*d)
	})
	eventually(t, "the search lists the stay again", func() bool { return acc.listedFor(t, pid, c.refused) })
	if onPlan {
		q := acc.quoteOn(t, pid, c.refused, 0, "").quoted(t)
		if len(q.RatePlans) != 2 || q.RatePlans[1].RatePlanID != plan {
			t.Fatalf("ratePlans after the clear: %+v", q.RatePlans)
		}
	}
	if feed != "" {
		eventually(t, "getnonavailabledate and the feed are empty again", func() bool {
			f := fetchFeed(t, feed, "")
			if f.code != http.StatusOK {
				return false
			}
			nights, _ := icalNights(t, f.body)
			na := acc.nonAvailable(t, pid)
			return na != nil && len(na) == 0 && len(nights) == 0
		})
	}
}

// plansAndMarkups: a derived plan's price and terms in getinfo (its ratePlans too), in the
// booking's B2 fields as booked, on a channel with the channel's markup (the property's
// replacing the account's); the standard plan's terms; where a plan is sold; its minimum
// stay; a deleted plan.
func plansAndMarkups(t *testing.T) {
	acc := newAccount(t)
	setPlan(t, acc, obj{"rate_rps": 100000, "rate_burst": 1000000})
	const code = "RP1"
	pid := bookable(t, acc, code) // 100 a night
	acc.a(t, "property-rateplan", obj{"action": "update", "internal_code": code,
		"rate_plan": obj{"id": 0, "name": "Flexible rate", "cancellation": obj{"policy": "moderate"}}}).status(t, http.StatusOK)
	r := acc.a(t, "property-rateplan", obj{"action": "create", "internal_code": code, "rate_plan": obj{"name": "Non-refundable",
		"inclusions": "Breakfast", "adjustment": obj{"type": "percent", "value": "-10"}, "minimum_stay": 2,
		"cancellation": obj{"policy": "non_refundable"}, "sold_on": obj{"direct": true, "channels": []string{"Airbnb"}}}})
	r.status(t, http.StatusOK)
	var created struct {
		Data struct {
			ID string `json:"rate_plan_id"`
		} `json:"data"`
	}
	r.decode(t, &created)
	if created.Data.ID != "1" {
		t.Fatalf("the first derived plan's id: %s", r.Body)
	}
	var list struct {
		Data struct {
			Plans []struct {
				ID     int64                  `json:"id"`
				Name   string                 `json:"name"`
				SoldOn contract.SoldOn        `json:"sold_on"`
				Cancel *contract.Cancellation `json:"cancellation"`
			} `json:"rate_plans"`
		} `json:"data"`
	}
	r = acc.a(t, "property-rateplan", obj{"action": "list", "internal_code": code})
	r.status(t, http.StatusOK)
	r.decode(t, &list)
	if p := list.Data.Plans; len(p) != 2 || p[0].ID != 0 || p[0].Name != "Flexible rate" || p[1].ID != 1 || p[1].Name != "Non-refundable" ||
		len(p[1].SoldOn.Channels) != 1 || p[1].SoldOn.Channels[0] != "airbnb" {
		t.Fatalf("list: %s", r.Body)
	}
	acc.a(t, "channel-markup", obj{"action": "set", "markup": obj{"channel": "airbnb", "type": "percent", "value": "15"}}).status(t, http.StatusOK)
	acc.a(t, "channel-markup", obj{"action": "set", "markup": obj{"channel": "vrbo", "type": "percent", "value": "50"}}).status(t, http.StatusOK)
	acc.a(t, "channel-markup", obj{"action": "set", "internal_code": code, "markup": obj{"channel": "VRBO", "type": "amount", "value": "5"}}).status(t, http.StatusOK)

	stay := [2]int{20, 23} // three nights
	var std rpQuote
	eventually(t, "getinfo lists both plans", func() bool {
		a := acc.quoteOn(t, pid, stay, 0, "")
		if a.Status != 0 {
			return false
		}
		std = a.quoted(t)
		return len(std.RatePlans) == 2 && ptrText(std.RatePlanName) == "Flexible rate"
	})
	policy := func(p *rpPolicy) string {
		if p == nil {
			return "absent"
		}
		var tiers []string
		for _, x := range p.Tiers {
			tiers = append(tiers, strconv.Itoa(x.DaysBefore)+":"+x.Percent.String())
		}
		return p.Policy + "[" + strings.Join(tiers, " ") + "]"
	}
	if ptrText(std.RatePlanID) != "0" || policy(std.CancellationPolicy) != "moderate[5:100 1:50]" || !std.TotalRent.Equal(dec("300")) {
		t.Fatalf("the standard quote: plan %s, policy %s, totalRent %s", ptrText(std.RatePlanID), policy(std.CancellationPolicy), std.TotalRent)
	}
	p0, p1 := std.RatePlans[0], std.RatePlans[1]
	if p0.RatePlanID != 0 || p0.RatePlanName != "Flexible rate" || !p0.TotalRent.Equal(dec("300")) ||
		p1.RatePlanID != 1 || p1.RatePlanName != "Non-refundable" || p1.Inclusions != "Breakfast" || !p1.TotalRent.Equal(dec("270")) ||
		policy(&p1.CancellationPolicy) != "non_refundable[]" {
		t.Fatalf("ratePlans: %+v", std.RatePlans)
	}
	q := acc.quoteOn(t, pid, stay, 1, "").quoted(t)
	if ptrText(q.RatePlanID) != "1" || ptrText(q.RatePlanName) != "Non-refundable" || ptrText(q.Inclusions) != "Breakfast" ||
		policy(q.CancellationPolicy) != "non_refundable[]" || !q.TotalRent.Equal(dec("270")) || !q.NightlyDetail[day(20)].Equal(dec("90")) {
		t.Fatalf("the plan's quote: %+v", q)
	}
	eventually(t, "the plan's calendar prices", func() bool {
		d := acc.calendarDay(t, pid, 1, 20)
		return d != nil && d.Price.Equal(dec("90"))
	})

	// Channels: the plan's price with the channel's markup; the property's vrbo markup
	// replaces the account's.
	eventually(t, "an airbnb quote has the markup", func() bool {
		a := acc.quoteOn(t, pid, stay, 1, "airbnb")
		return a.Status == 0 && a.quoted(t).TotalRent.Equal(dec("310.5")) // 3 × 100 × 0.9 × 1.15
	})
	eventually(t, "a vrbo quote has the property's markup", func() bool {
		a := acc.quoteOn(t, pid, stay, 0, "vrbo")
		return a.Status == 0 && a.quoted(t).TotalRent.Equal(dec("315")) // 3 × (100 + 5)
	})
	if a := acc.quoteOn(t, pid, stay, 0, "airbnb").quoted(t); !a.TotalRent.Equal(dec("345")) || len(a.RatePlans) != 2 || !a.RatePlans[1].TotalRent.Equal(dec("310.5")) {
		t.Fatalf("the standard plan on airbnb: %+v", a)
	}
	// Where a plan is sold, its minimum stay, an unknown plan: the engine's refusals.
	eng, _ := acc.engineOf(t, code, contract.DefaultSettings(acc.AccountID))
	for _, c := range []struct {
		name    string
		stay    [2]int
		plan    int64
		channel string
		field   string
	}{
		{"not sold on vrbo", stay, 1, "vrbo", "ratePlanId"},
		{"the plan's minimum stay", [2]int{20, 21}, 1, "", "checkout"},
		{"no plan 7", stay, 7, "", "ratePlanId"},
	} {
		_, re, err := ruleQuote(eng, pricing.MustDate(day(c.stay[0])), pricing.MustDate(day(c.stay[1])), c.plan, c.channel)
		if err != nil || re == nil || re.Field != c.field {
			t.Fatalf("%s: the engine says %v (%v)", c.name, re, err)
		}
		if a := acc.quoteOn(t, pid, c.stay, c.plan, c.channel); !a.names(re.Field, re.Message) {
			t.Fatalf("%s: getinfo %s, the engine %s: %s", c.name, a.Body, re.Field, re.Message)
		}
	}

	// The booking records the plan, its terms and the channel as booked, and keeps them when
	// the plan changes.
	body := guest(pid, day(stay[0]), day(stay[1]))
	body["ratePlanId"], body["channel"] = 1, "airbnb"
	var b rpQuote
	if err := acc.bData("create", body, &b); err != nil {
		t.Fatal(err)
	}
	if ptrText(b.RatePlanID) != "1" || ptrText(b.RatePlanName) != "Non-refundable" || policy(b.CancellationPolicy) != "non_refundable[]" ||
		ptrText(b.Channel) != "airbnb" || !b.TotalRent.Equal(dec("310.5")) {
		t.Fatalf("the booking: plan %s %s, policy %s, channel %s, totalRent %s", ptrText(b.RatePlanID), ptrText(b.RatePlanName),
			policy(b.CancellationPolicy), ptrText(b.Channel), b.TotalRent)
	}
	var direct rpQuote
	if err := acc.bData("create", guest(pid, day(30), day(32)), &direct); err != nil {
		t.Fatal(err)
	}
	if ptrText(direct.RatePlanID) != "0" || ptrText(direct.RatePlanName) != "Flexible rate" || policy(direct.CancellationPolicy) != "moderate[5:100 1:50]" ||
		ptrText(direct.Channel) != "" || !direct.TotalRent.Equal(dec("200")) {
		t.Fatalf("the direct booking: %+v", direct)
	}
	acc.a(t, "property-rateplan", obj{"action": "update", "internal_code": code, "rate_plan": obj{"id": 1, "name": "Saver",
		"cancellation": obj{"policy": "flexible"}}}).status(t, http.StatusOK)
	eventually(t, "getinfo has the renamed plan", func() bool {
		a := acc.quoteOn(t, pid, [2]int{40, 43}, 1, "")
		return a.Status == 0 && ptrText(a.quoted(t).RatePlanName) == "Saver"
	})
	// An update that does not send ratePlanId keeps the booking's plan, as booked.
	var upd rpQuote
	if err := acc.bData("update", obj{"bookingId": b.BookingID, "numberofadults": 3}, &upd); err != nil {
		t.Fatal(err)
	}
	if ptrText(upd.RatePlanID) != "1" || ptrText(upd.Channel) != "airbnb" {
		t.Fatalf("the update: plan %s channel %s", ptrText(upd.RatePlanID), ptrText(upd.Channel))
	}
	var listed struct {
		List []rpQuote `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": b.BookingID}).ok(t, &listed)
	if len(listed.List) != 1 || ptrText(listed.List[0].RatePlanName) != "Non-refundable" || policy(listed.List[0].CancellationPolicy) != "non_refundable[]" {
		t.Fatalf("listbooking after the plan changed: %+v", listed.List)
	}

	// getratetable lists both plans; a deleted plan is no longer sold, and the booking keeps it.
	var table struct {
		RatePlans []struct {
			ID          int64  `json:"id"`
			Name        string `json:"name"`
			MinimumStay int    `json:"minimumStay"`
		} `json:"ratePlans"`
	}
	eventually(t, "getratetable lists the renamed plan", func() bool {
		return acc.try(t, "getratetable", obj{"propertyId": pid}, &table) && len(table.RatePlans) == 2 && table.RatePlans[1].Name == "Saver"
	})
	if table.RatePlans[0].ID != 0 || table.RatePlans[0].Name != "Flexible rate" || table.RatePlans[1].MinimumStay != 2 {
		t.Fatalf("getratetable ratePlans: %+v", table.RatePlans)
	}
	acc.a(t, "property-rateplan", obj{"action": "delete", "internal_code": code, "rate_plan": obj{"id": 1}}).status(t, http.StatusOK)
	eventually(t, "getinfo refuses the deleted plan", func() bool {
		return acc.quoteOn(t, pid, [2]int{40, 43}, 1, "").names("ratePlanId", "rate plan 1 does not exist")
	})
	acc.b(t, "listbooking", obj{"bookingId": b.BookingID}).ok(t, &listed)
	if len(listed.List) != 1 || ptrText(listed.List[0].RatePlanID) != "1" || ptrText(listed.List[0].RatePlanName) != "Non-refundable" {
		t.Fatalf("listbooking after the plan's delete: %+v", listed.List)
	}
	acc.a(t, "channel-markup", obj{"action": "delete", "markup": obj{"channel": "airbnb"}}).status(t, http.StatusOK)
	eventually(t, "an airbnb quote without the markup", func() bool {
		a := acc.quoteOn(t, pid, [2]int{40, 43}, 0, "airbnb")
		return a.Status == 0 && a.quoted(t).TotalRent.Equal(dec("300"))
	})
}
