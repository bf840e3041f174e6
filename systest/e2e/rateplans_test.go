package e2e

// The revenue resources of docs/rate-plans.md ("Interface A") through edge: rate plans,
// restrictions per date and their price, channel markups at both levels, read back through
// /api/property get, the lists and the events property-svc publishes. Every exchange is also
// checked against the OpenAPI document by the suite's client.

import (
	"net/http"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

func TestRatePlansThroughEdge(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := createProperty(t, acc, "RP1")
	createProperty(t, other, "RP1")

	// Plans: a derived one, the standard plan's terms, the rules through edge.
	plan := obj{"name": "Non-refundable", "inclusions": "Breakfast", "adjustment": obj{"type": "percent", "value": "-10"},
		"ranges":       []obj{{"start_date": day(40), "end_date": day(50), "type": "amount", "value": "-5"}},
		"minimum_stay": 2, "cancellation": obj{"policy": "non_refundable"},
		"sold_on": obj{"direct": true, "channels": []string{"AirBnB"}}}
	if id := propData(t, acc.a(t, "property-rateplan", obj{"action": "create", "internal_code": "RP1", "rate_plan": plan}), "rate_plan_id"); id != "1" {
		t.Fatalf("plan id %s", id)
	}
	if id := propData(t, acc.a(t, "property-rateplan", obj{"action": "update", "internal_code": "RP1",
		"rate_plan": obj{"id": 0, "name": "Flexible rate", "cancellation": obj{"policy": "moderate"}}}), "rate_plan_id"); id != "0" {
		t.Fatalf("standard plan answered %s", id)
	}
	propWant(t, acc.a(t, "property-rateplan", obj{"action": "create", "internal_code": "RP1", "rate_plan": with(plan, obj{"name": "NON-REFUNDABLE"})}),
		http.StatusConflict, `rate plan name "NON-REFUNDABLE" is already used`)
	acc.a(t, "property-rateplan", obj{"action": "update", "internal_code": "RP1", "rate_plan": obj{"id": 0, "minimum_stay": 3}}).
		wantViolation(t, "rate_plan.minimum_stay", "the standard plan is the rates themselves")
	propWant(t, acc.a(t, "property-rateplan", obj{"action": "delete", "internal_code": "RP1", "rate_plan": obj{"id": 4}}),
		http.StatusNotFound, "rate plan 4 does not exist")

	// Restrictions: the weekends of a month at the property's level, with a price; two
	// nights stopped on the plan; the rules through edge.
	from := time.Now().UTC().AddDate(0, 0, 30)
	weekends := 0
	for d := range 31 {
		if wd := from.AddDate(0, 0, d).Weekday(); wd == time.Friday || wd == time.Saturday {
			weekends++
		}
	}
	var n struct {
		Data struct {
			Dates int `json:"dates"`
		} `json:"data"`
	}
	r := acc.a(t, "property-restriction", obj{"internal_code": "RP1", "dates": []obj{{"start_date": day(30), "end_date": day(60), "weekdays": "Friday,Saturday"}},
		"set": obj{"min_stay_arrival": 3, "closed_to_arrival": true, "price": "180.00"}})
	r.status(t, http.StatusOK)
	if r.decode(t, &n); n.Data.Dates != weekends {
		t.Errorf("dates selected %d, want %d", n.Data.Dates, weekends)
	}
	r = acc.a(t, "property-restriction", obj{"internal_code": "RP1", "rate_plan_id": 1, "dates": []obj{{"start_date": day(45), "end_date": day(46)}},
		"set": obj{"stop_sell": true}})
	r.status(t, http.StatusOK)
	if r.decode(t, &n); n.Data.Dates != 2 {
		t.Errorf("plan dates %d", n.Data.Dates)
	}
	acc.a(t, "property-restriction", obj{"internal_code": "RP1", "rate_plan_id": 1, "dates": []obj{{"start_date": day(45), "end_date": day(46)}},
		"set": obj{"price": 99}}).wantViolation(t, "set.price", "send it without rate_plan_id")
	acc.a(t, "property-restriction", obj{"internal_code": "RP1", "dates": []obj{{"start_date": day(45), "end_date": day(46)}}}).
		wantViolation(t, "set", "set or clear is required")
	propWant(t, acc.a(t, "property-restriction", obj{"internal_code": "RP1", "rate_plan_id": 9, "dates": []obj{{"start_date": day(45), "end_date": day(46)}},
		"clear": []string{"all"}}), http.StatusNotFound, "rate plan 9 does not exist")

	// Channel markups at both levels.
	if c := propData(t, acc.a(t, "channel-markup", obj{"action": "set", "markup": obj{"channel": "AirBnB", "type": "percent", "value": "15"}}), "channel"); c != "airbnb" {
		t.Errorf("account markup answered %s", c)
	}
	if c := propData(t, acc.a(t, "channel-markup", obj{"action": "set", "internal_code": "RP1", "markup": obj{"channel": "vrbo", "type": "amount", "value": "5"}}), "channel"); c != "vrbo" {
		t.Errorf("property markup answered %s", c)
	}
	propWant(t, acc.a(t, "channel-markup", obj{"action": "delete", "internal_code": "RP1", "markup": obj{"channel": "airbnb"}}),
		http.StatusNotFound, `channel markup "airbnb" of property "RP1" does not exist`)
	var markups struct {
		Data struct {
			ChannelMarkups []contract.Markup `json:"channel_markups"`
		} `json:"data"`
	}
	r = acc.a(t, "channel-markup", obj{"action": "list"})
	r.status(t, http.StatusOK)
	if r.decode(t, &markups); len(markups.Data.ChannelMarkups) != 1 || markups.Data.ChannelMarkups[0].Value != "15" {
		t.Errorf("the account's markups: %s", r.Body)
	}

	// Read back: get, the plans' list, the other account's.
	r, p := getOf(t, acc, "RP1")
	r.status(t, http.StatusOK)
	switch {
	case p.StandardPlan == nil || p.StandardPlan.Name != "Flexible rate" || p.StandardPlan.Cancellation.Policy != "moderate":
		t.Errorf("standard plan: %s", r.Body)
	case len(p.RatePlans) != 1 || p.RatePlans[0].Name != "Non-refundable" || p.RatePlans[0].SoldOn.Channels[0] != "airbnb" ||
		len(p.RatePlans[0].Restrictions) != 1 || p.RatePlans[0].Restrictions[0].StartDate != day(45) || !*p.RatePlans[0].Restrictions[0].StopSell:
		t.Errorf("rate plans: %s", r.Body)
	case len(p.Restrictions) == 0 || p.Restrictions[0].MinStayArrival == nil || *p.Restrictions[0].MinStayArrival != 3 || !*p.Restrictions[0].ClosedToArrival:
		t.Errorf("restrictions: %s", r.Body)
	case len(p.Prices) != weekends || len(p.ChannelMarkups) != 1 || p.ChannelMarkups[0].Channel != "vrbo":
		t.Errorf("prices and markups: %s", r.Body)
	}
	dates := 0
	for _, run := range p.Restrictions {
		start, _ := time.Parse(time.DateOnly, run.StartDate)
		end, _ := time.Parse(time.DateOnly, run.EndDate)
		dates += int(end.Sub(start).Hours()/24) + 1
	}
	if dates != weekends {
		t.Errorf("the runs hold %d dates, want %d: %+v", dates, weekends, p.Restrictions)
	}
	var list struct {
		Data struct {
			RatePlans []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"rate_plans"`
		} `json:"data"`
	}
	r = acc.a(t, "property-rateplan", obj{"action": "list", "internal_code": "RP1"})
	r.status(t, http.StatusOK)
	if r.decode(t, &list); len(list.Data.RatePlans) != 2 || list.Data.RatePlans[0].Name != "Flexible rate" || list.Data.RatePlans[1].ID != 1 {
		t.Errorf("list: %s", r.Body)
	}
	r = other.a(t, "property-rateplan", obj{"action": "list", "internal_code": "RP1"})
	r.status(t, http.StatusOK)
	if r.decode(t, &list); len(list.Data.RatePlans) != 1 || list.Data.RatePlans[0].Name != "Standard" {
		t.Errorf("the other account's list: %s", r.Body)
	}
	if r, p := getOf(t, other, "RP1"); len(p.RatePlans) != 0 || len(p.Restrictions) != 0 || len(p.ChannelMarkups) != 0 {
		t.Errorf("the other account's property: %s", r.Body)
	}

	// What property-svc publishes: the property's snapshot after the markup, and the
	// account's settings with its markup.
	m := watch(t, acc.AccountID+":"+pid, func(typ string, s snapshot) bool { return typ == contract.MarkupsUpdated })
	var pub contract.Property
	if _, err := events.Decode(m.Value, &pub); err != nil {
		t.Fatal(err)
	}
	if len(pub.RatePlans) != 1 || len(pub.Restrictions) != len(p.Restrictions) || len(pub.ChannelMarkups) != 1 || pub.StandardPlan == nil {
		t.Errorf("published: %s", m.Value)
	}
	propSettings(t, acc, "the account's markup", func(s contract.Settings) bool {
		return len(s.ChannelMarkups) == 1 && s.ChannelMarkups[0].Channel == "airbnb" && s.ChannelMarkups[0].Value == "15"
	})
}
