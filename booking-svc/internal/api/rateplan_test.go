package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// planned applies version 1 of property pid of account to the view, as the consumer does: 100
// a night, any day in and out, with the rate-plan members extra (",…").
func planned(t *testing.T, s *server, account string, pid int64, extra string) {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":1,"deleted":false,
	 "content":{"name":"Rate plan villa","maxguest":6},
	 "rates":{"rate":{"daily_price":"100"},"minimum_stay":1,
	   "setting":{"standard_occupants":6,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}%s}`,
		account, pid, pid, extra)
	v, err := events.Encode("/test", contract.RatePlansUpdated, account, time.Now(), json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	key := account + ":" + strconv.FormatInt(pid, 10)
	if err := s.consumer.Apply(context.Background(), kafka.Message{Key: []byte(key), Value: v}); err != nil {
		t.Fatal(err)
	}
}

// ruled are restrictions and plans on days after base: night 2 stopped, day 10 closed to
// arrival, day 20 to departure, arrivals on day 30 at most 3 nights, on day 40 at least 5;
// plan 1 sold direct, plan 2 on airbnb only.
func ruled(base time.Time) string {
	d := func(n int) string { return base.AddDate(0, 0, n).Format(time.DateOnly) }
	return fmt.Sprintf(`, "restrictions":[
	  {"start_date":%q,"end_date":%q,"stop_sell":true},
	  {"start_date":%q,"end_date":%q,"closed_to_arrival":true},
	  {"start_date":%q,"end_date":%q,"closed_to_departure":true},
	  {"start_date":%q,"end_date":%q,"max_stay":3},
	  {"start_date":%q,"end_date":%q,"min_stay_arrival":5}],
	 "rate_plans":[
	  {"id":1,"name":"Non-refundable","inclusions":"Breakfast","cancellation":{"policy":"non_refundable"},
	   "adjustment":{"type":"percent","value":"-10"},"sold_on":{"direct":true}},
	  {"id":2,"name":"Channel rate","cancellation":{"policy":"custom","tiers":[{"days_before":30,"percent":"75.5"}]},
	   "adjustment":{"type":"amount","value":"0"},"sold_on":{"channels":["airbnb"]}}]`,
		d(2), d(2), d(10), d(10), d(20), d(20), d(30), d(30), d(40), d(40))
}

// bAnswer is interface B's envelope.
type bAnswer struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Errors  []fieldError    `json:"errors"`
	Data    json.RawMessage `json:"data"`
}

type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (s *server) b(t *testing.T, account, action, body string) (int, bAnswer) {
	t.Helper()
	code, out := s.do(t, account, http.MethodPost, "/internal/b/"+action, body)
	var a bAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("%s: %d %s", action, code, out)
	}
	return code, a
}

// TestRuleErrorsInBsEnvelope: every rule of a stay the engine judges — the restrictions, an
// unknown plan, a plan not sold where asked — answers getinfo and create with status 4 (HTTP
// 400 inside, 200 at edge) and one error naming its field, the same for both actions; the
// stays beside them are sold.
func TestRuleErrorsInBsEnvelope(t *testing.T) {
	s := newServer(t)
	acct := newAccount("rules")
	const pid = 71
	base := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 40)
	planned(t, s, acct, pid, ruled(base))
	for _, c := range []struct {
		code          string
		in, nights    int
		extra         string
		field, prefix string
	}{
		{"StopSell", 0, 4, "", "checkin", ""},
		{"ClosedToArrival", 10, 2, "", "checkin", ""},
		{"ClosedToDeparture", 18, 2, "", "checkout", ""},
		{"MaximumStay", 30, 4, "", "checkout", ""},
		{"MinimumStay", 40, 3, "", "checkout", ""},
		{"UnknownPlan", 50, 2, `,"ratePlanId":9`, "ratePlanId", "rate plan 9 does not exist"},
		{"NotSold direct", 50, 2, `,"ratePlanId":"2"`, "ratePlanId", "rate plan 2 is not sold"},
		{"NotSold on another channel", 50, 2, `,"ratePlanId":2,"channel":"Vrbo"`, "ratePlanId", "rate plan 2 is not sold"},
		{"NotSold on a channel", 50, 2, `,"ratePlanId":1,"channel":"airbnb"`, "ratePlanId", "rate plan 1 is not sold"},
		{"sold: the channel's plan on its channel", 50, 2, `,"ratePlanId":2,"channel":"AIRBNB"`, "", ""},
		{"sold: leaving on the stopped night", 0, 2, "", "", ""},
		{"sold: the maximum stay", 30, 3, `,"ratePlanId":1`, "", ""},
	} {
		t.Run(c.code, func(t *testing.T) {
			stay := fmt.Sprintf(`"propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q%s`, pid,
				base.AddDate(0, 0, c.in).Format(time.DateOnly), base.AddDate(0, 0, c.in+c.nights).Format(time.DateOnly), c.extra)
			qcode, q := s.b(t, acct, "getinfo", `{"action":"getinfo",`+stay+`}`)
			ccode, cr := s.b(t, acct, "create", `{"action":"create","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com",`+stay+`}`)
			if c.field == "" {
				if qcode != 200 || q.Status != 0 || ccode != 200 || cr.Status != 0 {
					t.Fatalf("getinfo %d %+v\ncreate %d %+v", qcode, q, ccode, cr)
				}
				var b struct {
					BookingID int64 `json:"bookingId"`
				}
				_ = json.Unmarshal(cr.Data, &b)
				if code, a := s.b(t, acct, "cancel", fmt.Sprintf(`{"bookingId":%d}`, b.BookingID)); code != 200 || a.Status != 0 {
					t.Fatalf("cancel: %d %+v", code, a)
				}
				return
			}
			for _, a := range []struct {
				name string
				code int
				ans  bAnswer
			}{{"getinfo", qcode, q}, {"create", ccode, cr}} {
				if a.code != http.StatusBadRequest || a.ans.Status != 4 || len(a.ans.Errors) != 1 || a.ans.Errors[0].Field != c.field ||
					!strings.HasPrefix(a.ans.Errors[0].Message, c.prefix) {
					t.Fatalf("%s: %d %+v, want status 4 on %s", a.name, a.code, a.ans, c.field)
				}
			}
			if q.Errors[0] != cr.Errors[0] || q.Message != cr.Message {
				t.Fatalf("getinfo %+v, create %+v", q, cr)
			}
		})
	}
}

// TestRatePlanFieldsInB: getinfo appends the plan quoted and its terms, and the bookable
// plans when the property has derived plans (none otherwise); the booking object (create,
// update, listbooking) appends the plan, its name and policy as booked and the channel, each
// after every member of today's answers; the booking event carries them; an update without
// ratePlanId keeps them; a booking stored before rate plans shows the standard plan, flexible,
// direct, and publishes none of them.
func TestRatePlanFieldsInB(t *testing.T) {
	s := newServer(t)
	acct := newAccount("planb")
	const pid, plain = 72, 73
	base := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 60)
	planned(t, s, acct, pid, ruled(base.AddDate(0, 0, -100)))
	priceable(t, s, acct, plain)
	stay := func(pid int64, in, nights int, extra string) string {
		return fmt.Sprintf(`"propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q%s`, pid,
			base.AddDate(0, 0, in).Format(time.DateOnly), base.AddDate(0, 0, in+nights).Format(time.DateOnly), extra)
	}
	data := func(a bAnswer) (map[string]any, []string) {
		t.Helper()
		if a.Status != 0 {
			t.Fatalf("answer %+v", a)
		}
		var m map[string]any
		if err := json.Unmarshal(a.Data, &m); err != nil {
			t.Fatal(err)
		}
		return m, keys(t, a.Data)
	}
	tail := func(ks []string, n int) string { return strings.Join(ks[len(ks)-n:], ",") }
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }

	// A property without derived plans: the standard plan's terms, no ratePlans.
	_, q := s.b(t, acct, "getinfo", `{"action":"getinfo",`+stay(plain, 0, 3, "")+`}`)
	m, ks := data(q)
	if tail(ks, 5) != "paymentSchedule,ratePlanId,ratePlanName,inclusions,cancellationPolicy" || m["ratePlans"] != nil ||
		js(m["cancellationPolicy"]) != `{"policy":"flexible","tiers":[{"days_before":1,"percent":100}]}` || m["ratePlanName"] != "Standard" {
		t.Fatalf("getinfo of a property without plans: %v %s", ks, q.Data)
	}
	// With derived plans, on a channel: the plan and every plan sold there.
	_, q = s.b(t, acct, "getinfo", `{"action":"getinfo",`+stay(pid, 0, 3, `,"ratePlanId":2,"channel":"airbnb"`)+`}`)
	m, ks = data(q)
	want := `[{"ratePlanId":0,"ratePlanName":"Standard","inclusions":"","cancellationPolicy":{"policy":"flexible","tiers":[{"days_before":1,"percent":100}]},"totalRent":300.00,"grandTotal":300.00},` +
		`{"ratePlanId":2,"ratePlanName":"Channel rate","inclusions":"","cancellationPolicy":{"policy":"custom","tiers":[{"days_before":30,"percent":75.5}]},"totalRent":300.00,"grandTotal":300.00}]`
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(q.Data, &raw)
	if tail(ks, 6) != "paymentSchedule,ratePlanId,ratePlanName,inclusions,cancellationPolicy,ratePlans" || m["ratePlanId"] != 2.0 ||
		m["ratePlanName"] != "Channel rate" || string(raw["ratePlans"]) != want {
		t.Fatalf("getinfo on plan 2 for airbnb: %v %s", ks, q.Data)
	}

	// create, then update without the plan, then listbooking: the same four members, last.
	_, cr := s.b(t, acct, "create", `{"action":"create","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com",`+
		stay(pid, 0, 3, `,"ratePlanId":1`)+`}`)
	m, ks = data(cr)
	id := int64(m["bookingId"].(float64))
	const booked = `1 "Non-refundable" {"policy":"non_refundable","tiers":[]} ""`
	four := func(m map[string]any) string {
		return fmt.Sprintf("%v %s %s %s", m["ratePlanId"], js(m["ratePlanName"]), js(m["cancellationPolicy"]), js(m["channel"]))
	}
	if tail(ks, 6) != "creditCard,arrivalForm,ratePlanId,ratePlanName,cancellationPolicy,channel" || four(m) != booked || m["totalRent"] != 270.0 {
		t.Fatalf("create: %v %s", ks, cr.Data)
	}
	_, up := s.b(t, acct, "update", fmt.Sprintf(`{"action":"update","bookingId":%d,"numberofadults":3}`, id))
	if m, _ = data(up); four(m) != booked {
		t.Fatalf("update without ratePlanId: %s", up.Data)
	}
	if m = s.listed(t, acct, id); four(m) != booked {
		t.Fatalf("listbooking: %v", m)
	}
	ev := s.publishedPlan(t, acct, id, 2)
	if ev != `{"rate_plan_id":1,"rate_plan_name":"Non-refundable","cancellation":{"policy":"non_refundable"}}` {
		t.Fatalf("event: %s", ev)
	}
	// On the channel's plan, for airbnb.
	_, up = s.b(t, acct, "update", fmt.Sprintf(`{"action":"update","bookingId":%d,"ratePlanId":2,"channel":"AirBnB"}`, id))
	if m, _ = data(up); four(m) != `2 "Channel rate" {"policy":"custom","tiers":[{"days_before":30,"percent":75.5}]} "airbnb"` {
		t.Fatalf("update onto plan 2: %s", up.Data)
	}
	if ev = s.publishedPlan(t, acct, id, 3); ev != `{"rate_plan_id":2,"rate_plan_name":"Channel rate","cancellation":{"policy":"custom","tiers":[{"days_before":30,"percent":"75.5"}]},"channel":"airbnb"}` {
		t.Fatalf("event: %s", ev)
	}

	// A booking stored before rate plans.
	old := s.book(t, acct, plain, base.AddDate(0, 0, 10).Format(time.DateOnly), 2, booking.Guest{FirstName: "Old", LastName: "Guest"}, 0)
	if m = s.listed(t, acct, old.BookingID); four(m) != `0 "Standard" {"policy":"flexible","tiers":[{"days_before":1,"percent":100}]} ""` {
		t.Fatalf("a booking from before rate plans: %v", m)
	}
	if ev = s.publishedPlan(t, acct, old.BookingID, old.Version); ev != `{}` {
		t.Fatalf("event of a booking from before rate plans: %s", ev)
	}
}

// publishedPlan is the rate-plan members of the event of version of booking id, as published.
func (s *server) publishedPlan(t *testing.T, account string, id, version int64) string {
	t.Helper()
	key := account + ":booking:" + strconv.FormatInt(id, 10)
	var out string
	waitFor(t, "booking version "+strconv.FormatInt(version, 10)+" published", func() bool {
		m, ok := s.pub.latest()[key]
		if !ok {
			return false
		}
		var ce struct {
			Data struct {
				Version      int64                  `json:"version"`
				RatePlanID   int64                  `json:"rate_plan_id,omitempty"`
				RatePlanName string                 `json:"rate_plan_name,omitempty"`
				Cancellation *contract.Cancellation `json:"cancellation,omitempty"`
				Channel      string                 `json:"channel,omitempty"`
			} `json:"data"`
		}
		if err := json.Unmarshal(m.Value, &ce); err != nil {
			t.Fatal(err)
		}
		v := ce.Data.Version
		ce.Data.Version = 0
		b, _ := json.Marshal(struct {
			RatePlanID   int64                  `json:"rate_plan_id,omitempty"`
			RatePlanName string                 `json:"rate_plan_name,omitempty"`
			Cancellation *contract.Cancellation `json:"cancellation,omitempty"`
			Channel      string                 `json:"channel,omitempty"`
		}{ce.Data.RatePlanID, ce.Data.RatePlanName, ce.Data.Cancellation, ce.Data.Channel})
		out = string(b)
		return v == version
	})
	return out
}
