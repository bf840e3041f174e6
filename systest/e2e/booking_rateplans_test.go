package e2e

// Issue 31's interface B side through edge (docs/booking.md, "Rate plans and channels"): a plan
// and a restriction set through interface A change what getinfo quotes and create books
// within the view's lag; the booking object and listbooking show the plan as booked. Every
// exchange is checked against the OpenAPI documents by the suite's client.

import (
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
)

type planQuote struct {
	TotalRent          decimal.Decimal `json:"totalRent"`
	RatePlanID         int64           `json:"ratePlanId"`
	RatePlanName       string          `json:"ratePlanName"`
	Inclusions         string          `json:"inclusions"`
	CancellationPolicy struct {
		Policy string `json:"policy"`
		Tiers  []struct {
			DaysBefore int             `json:"days_before"`
			Percent    decimal.Decimal `json:"percent"`
		} `json:"tiers"`
	} `json:"cancellationPolicy"`
	RatePlans []struct {
		RatePlanID int64           `json:"ratePlanId"`
		TotalRent  decimal.Decimal `json:"totalRent"`
	} `json:"ratePlans"`
	Channel string `json:"channel"`
}

func TestBookingOnARatePlanThroughEdge(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "BRP1")
	stay := func(in, out int, extra obj) obj {
		body := obj{"propertyId": pid, "numberofadults": 2, "checkin": day(in), "checkout": day(out)}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	// Before any plan: the standard plan's terms, no ratePlans.
	var q planQuote
	acc.b(t, "getinfo", stay(40, 43, nil)).ok(t, &q)
	if q.RatePlanID != 0 || q.RatePlanName != "Standard" || q.CancellationPolicy.Policy != "flexible" || q.RatePlans != nil ||
		!q.TotalRent.Equal(decimal.NewFromInt(300)) {
		t.Fatalf("getinfo before plans: %+v", q)
	}

	// A plan sold direct, 10 % off, and one sold on airbnb only, with a 15 % markup there.
	acc.a(t, "property-rateplan", obj{"action": "create", "internal_code": "BRP1", "rate_plan": obj{"name": "Non-refundable",
		"inclusions": "Breakfast", "adjustment": obj{"type": "percent", "value": "-10"}, "cancellation": obj{"policy": "non_refundable"},
		"sold_on": obj{"direct": true}}}).status(t, http.StatusOK)
	acc.a(t, "property-rateplan", obj{"action": "create", "internal_code": "BRP1", "rate_plan": obj{"name": "Channel rate",
		"adjustment": obj{"type": "percent", "value": "0"}, "cancellation": obj{"policy": "moderate"},
		"sold_on": obj{"direct": false, "channels": []string{"airbnb"}}}}).status(t, http.StatusOK)
	acc.a(t, "channel-markup", obj{"action": "set", "internal_code": "BRP1", "markup": obj{"channel": "airbnb", "type": "percent", "value": "15"}}).
		status(t, http.StatusOK)
	waitVersion(t, acc, pid)

	acc.b(t, "getinfo", stay(40, 43, obj{"ratePlanId": 1})).ok(t, &q)
	if q.RatePlanID != 1 || q.RatePlanName != "Non-refundable" || q.Inclusions != "Breakfast" || q.CancellationPolicy.Policy != "non_refundable" ||
		!q.TotalRent.Equal(decimal.NewFromInt(270)) || len(q.RatePlans) != 2 || q.RatePlans[0].RatePlanID != 0 || q.RatePlans[1].RatePlanID != 1 {
		t.Fatalf("getinfo on plan 1: %+v", q)
	}
	if e := refused(t, acc.b(t, "getinfo", stay(40, 43, obj{"ratePlanId": 2}))); len(e) != 1 || e[0].Field != "ratePlanId" {
		t.Fatalf("plan 2 direct: %+v", e)
	}
	acc.b(t, "getinfo", stay(40, 43, obj{"ratePlanId": "2", "channel": "AirBnB"})).ok(t, &q)
	if q.RatePlanID != 2 || !q.TotalRent.Equal(decimal.NewFromInt(345)) || len(q.RatePlans) != 2 || q.RatePlans[1].RatePlanID != 2 {
		t.Fatalf("getinfo on plan 2 for airbnb: %+v", q)
	}

	// create on plan 1: the booking object shows the plan as booked, and keeps it through
	// updates and listbooking after the owner renamed the plan and changed its policy.
	body := guest(pid, day(40), day(43))
	body["ratePlanId"] = 1
	d := create(t, acc, body)
	var booked planQuote
	acc.b(t, "update", obj{"bookingId": d.BookingID, "numberofadults": 3}).ok(t, &booked)
	if booked.RatePlanID != 1 || booked.RatePlanName != "Non-refundable" || booked.CancellationPolicy.Policy != "non_refundable" ||
		booked.Channel != "" || !booked.TotalRent.Equal(decimal.NewFromInt(270)) {
		t.Fatalf("the booking: %+v", booked)
	}
	acc.a(t, "property-rateplan", obj{"action": "update", "internal_code": "BRP1", "rate_plan": obj{"id": 1, "name": "Saver",
		"cancellation": obj{"policy": "strict"}}}).status(t, http.StatusOK)
	waitVersion(t, acc, pid)
	acc.b(t, "update", obj{"bookingId": d.BookingID, "checkout": day(44)}).ok(t, &booked)
	if booked.RatePlanID != 1 || booked.RatePlanName != "Non-refundable" || booked.CancellationPolicy.Policy != "non_refundable" ||
		!booked.TotalRent.Equal(decimal.NewFromInt(360)) {
		t.Fatalf("an update after the owner changed the plan: %+v", booked)
	}
	var list struct {
		ListBooking []planQuote `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": d.BookingID}).ok(t, &list)
	if len(list.ListBooking) != 1 || list.ListBooking[0].RatePlanName != "Non-refundable" || list.ListBooking[0].CancellationPolicy.Policy != "non_refundable" {
		t.Fatalf("listbooking after the rename: %+v", list)
	}

	// A stop-sell set through interface A refuses a quote and a booking alike, on checkin.
	acc.a(t, "property-restriction", obj{"internal_code": "BRP1", "dates": []obj{{"start_date": day(50), "end_date": day(50)}},
		"set": obj{"stop_sell": true}}).status(t, http.StatusOK)
	waitVersion(t, acc, pid)
	qe := refused(t, acc.b(t, "getinfo", stay(49, 52, nil)))
	ce := refused(t, acc.b(t, "create", guest(pid, day(49), day(52))))
	if len(qe) != 1 || qe[0].Field != "checkin" || len(ce) != 1 || ce[0] != qe[0] {
		t.Fatalf("stop-sell: getinfo %+v, create %+v", qe, ce)
	}
}

type bFieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// refused asserts status 4 and returns the fields it names.
func refused(t *testing.T, r response) []bFieldError {
	t.Helper()
	r.wantStatus(t, 4)
	var e struct {
		Errors []bFieldError `json:"errors"`
	}
	r.decode(t, &e)
	return e.Errors
}
