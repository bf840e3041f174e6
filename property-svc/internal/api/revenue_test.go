package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/testkit/together"
)

// The revenue resources (docs/rate-plans.md, "Interface A") through property-svc's HTTP
// app over the real store: their answers, byte for byte, every refusal in interface A's
// envelope with nothing stored, /api/property get showing what they set, and concurrent
// clients.

type answerCase struct {
	name, path, body string
	status           int
	want             string
}

func runAnswers(t *testing.T, cases []answerCase, send func(path, body string) (int, []byte)) {
	t.Helper()
	for _, r := range cases {
		t.Run(r.name, func(t *testing.T) {
			status, out := send(r.path, r.body)
			if status != r.status || string(out) != r.want {
				t.Errorf("%d %s\nwant %d %s", status, out, r.status, r.want)
			}
		})
	}
}

// getProperty is /api/property get of code, decoded, with its raw answer.
func getPropertyOf(t *testing.T, send func(path, body string) (int, []byte), code string) (contract.Property, []byte) {
	t.Helper()
	status, out := send("/internal/a/property", `{"action":"get","property":{"internal_code":"`+code+`"}}`)
	var a struct {
		Data contract.Property `json:"data"`
	}
	if status != 200 || json.Unmarshal(out, &a) != nil {
		t.Fatalf("get %s: %d %s", code, status, out)
	}
	return a.Data, out
}

// invalid is the 400 answer of one violation.
func invalid(field, msg string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return fmt.Sprintf(`{"code":400,"error_type":"validation_error","error_message":%s,"errors":[{"field":%s,"message":%s}]}`,
		q("request has 1 invalid field: "+field+" "+msg), q(field), q(msg))
}

func TestRatePlanAnswers(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	send := func(path, body string) (int, []byte) { return call(t, app, acc, path, body) }
	const rp = "/internal/a/property-rateplan"
	runAnswers(t, []answerCase{
		{"list a new property's", rp, `{"action":"list","internal_code":"V1"}`, 200,
			`{"code":200,"data":{"rate_plans":[{"id":0,"name":"Standard","inclusions":"","cancellation":{"policy":"flexible"}}]}}`},
		{"create", rp, `{"action":"create","internal_code":"V1","rate_plan":{"name":"Non-refundable","inclusions":"Breakfast",
			"adjustment":{"type":"percent","value":"-10.00"},"ranges":[{"start_date":"2030-07-01","end_date":"2030-08-31","type":"Percent","value":"-5"}],
			"minimum_stay":2,"cancellation":{"policy":"non_refundable"},"sold_on":{"direct":true,"channels":["AirBnB","bookingcom"]}}}`, 200,
			`{"code":200,"data":{"rate_plan_id":"1"}}`},
		{"another", rp, `{"action":"create","internal_code":"V1","rate_plan":{"name":"Weekly","adjustment":{"type":"amount","value":"-5"}}}`, 200,
			`{"code":200,"data":{"rate_plan_id":"2"}}`},
		{"a name taken", rp, `{"action":"create","internal_code":"V1","rate_plan":{"name":"WEEKLY","adjustment":{"type":"amount","value":"-5"}}}`, 409,
			`{"code":409,"error_type":"conflict","error_message":"rate plan name \"WEEKLY\" is already used by another plan of this property (names are compared ignoring case)"}`},
		{"the standard plan's terms", rp, `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"name":"Flexible rate","cancellation":{"policy":"moderate"}}}`, 200,
			`{"code":200,"data":{"rate_plan_id":"0"}}`},
		{"the standard plan's adjustment", rp, `{"action":"update","internal_code":"V1","rate_plan":{"id":0,"adjustment":{"type":"amount","value":"5"}}}`, 400,
			invalid("rate_plan.adjustment", "the standard plan is the rates themselves")},
		{"delete the standard plan", rp, `{"action":"delete","internal_code":"V1","rate_plan":{"id":0}}`, 400,
			invalid("rate_plan.id", "the standard plan (id 0) cannot be deleted")},
		{"an unknown brand", rp, `{"action":"update","internal_code":"V1","rate_plan":{"id":2,"sold_on":{"brands":[7]}}}`, 400,
			invalid("rate_plan.sold_on.brands", "no brand of this account has id 7")},
		{"update", rp, `{"action":"update","internal_code":"V1","rate_plan":{"id":2,"minimum_stay":"3","sold_on":{"all_brands":true}}}`, 200,
			`{"code":200,"data":{"rate_plan_id":"2"}}`},
		{"delete", rp, `{"action":"delete","internal_code":"V1","rate_plan":{"id":2}}`, 200, `{"code":200,"data":{"rate_plan_id":"2"}}`},
		{"delete again", rp, `{"action":"delete","internal_code":"V1","rate_plan":{"id":2}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"rate plan 2 does not exist"}`},
		{"an id never given again", rp, `{"action":"create","internal_code":"V1","rate_plan":{"name":"Weekly","adjustment":{"type":"amount","value":"-5"}}}`, 200,
			`{"code":200,"data":{"rate_plan_id":"3"}}`},
		{"an unknown property", rp, `{"action":"list","internal_code":"V9"}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"property with internal_code \"V9\" does not exist"}`},
		{"create on an unknown property", rp, `{"action":"create","internal_code":"V9","rate_plan":{"name":"X","adjustment":{"type":"amount","value":"1"}}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"property with internal_code \"V9\" does not exist"}`},
		{"list", rp, `{"action":"list","internal_code":"V1"}`, 200,
			`{"code":200,"data":{"rate_plans":[{"id":0,"name":"Flexible rate","inclusions":"","cancellation":{"policy":"moderate"}},` +
				`{"id":1,"name":"Non-refundable","inclusions":"Breakfast","cancellation":{"policy":"non_refundable"},"adjustment":{"type":"percent","value":"-10"},` +
				`"ranges":[{"start_date":"2030-07-01","end_date":"2030-08-31","type":"percent","value":"-5"}],"minimum_stay":2,` +
				`"sold_on":{"direct":true,"all_brands":false,"channels":["airbnb","bookingcom"]}},` +
				`{"id":3,"name":"Weekly","inclusions":"","cancellation":{"policy":"flexible"},"adjustment":{"type":"amount","value":"-5"},` +
				`"sold_on":{"direct":true,"all_brands":false}}]}}`},
	}, send)
}

func TestRestrictionAnswers(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	send := func(path, body string) (int, []byte) { return call(t, app, acc, path, body) }
	const rs = "/internal/a/property-restriction"
	if status, out := send("/internal/a/property-rateplan", `{"action":"create","internal_code":"V1","rate_plan":{"name":"A","adjustment":{"type":"amount","value":"1"}}}`); status != 200 {
		t.Fatalf("plan: %d %s", status, out)
	}
	before, _ := getPropertyOf(t, send, "V1")
	runAnswers(t, []answerCase{
		{"both set and cleared", rs, `{"internal_code":"V1","dates":[{"start_date":"2030-07-01","end_date":"2030-07-31"}],"set":{"max_stay":14},"clear":["max_stay"]}`, 400,
			invalid("clear[0]", "max_stay is both set and cleared")},
		{"a price of a plan", rs, `{"internal_code":"V1","rate_plan_id":1,"dates":[{"start_date":"2030-07-01","end_date":"2030-07-31"}],"set":{"price":"180"}}`, 400,
			invalid("set.price", "is the property's per-date price: send it without rate_plan_id")},
		{"nothing to do", rs, `{"internal_code":"V1","dates":[{"start_date":"2030-07-01","end_date":"2030-07-31"}]}`, 400,
			invalid("set", "set or clear is required")},
		{"min above max", rs, `{"internal_code":"V1","dates":[{"start_date":"2030-07-01","end_date":"2030-07-31"}],"set":{"min_stay_arrival":15,"max_stay":14}}`, 400,
			invalid("set.min_stay_arrival", "must not be above max_stay (14)")},
		{"a bad weekday", rs, `{"internal_code":"V1","dates":[{"start_date":"2030-07-01","end_date":"2030-07-31","weekdays":"Fri"}],"set":{"stop_sell":true}}`, 400,
			invalid("dates[0].weekdays", "must be All or comma-separated days from Sunday to Saturday")},
		{"an unknown plan", rs, `{"internal_code":"V1","rate_plan_id":7,"dates":[{"start_date":"2030-07-01","end_date":"2030-07-31"}],"set":{"stop_sell":true}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"rate plan 7 does not exist"}`},
		{"an unknown property", rs, `{"internal_code":"V9","dates":[{"start_date":"2030-07-01","end_date":"2030-07-31"}],"set":{"stop_sell":true}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"property with internal_code \"V9\" does not exist"}`},
	}, send)
	if after, _ := getPropertyOf(t, send, "V1"); after.Version != before.Version {
		t.Errorf("refused requests changed the property: version %d, was %d", after.Version, before.Version)
	}
	runAnswers(t, []answerCase{
		{"weekends of July", rs, `{"internal_code":"V1","dates":[{"start_date":"2030-07-01","end_date":"2030-07-31","weekdays":"Friday,Saturday"}],
			"set":{"min_stay_arrival":3,"closed_to_arrival":true,"price":"180.00"}}`, 200, `{"code":200,"data":{"dates":8}}`},
		{"a plan's", rs, `{"internal_code":"V1","rate_plan_id":"1","dates":[{"start_date":"2030-07-05","end_date":"2030-07-06"}],"set":{"stop_sell":true}}`, 200,
			`{"code":200,"data":{"dates":2}}`},
		{"clear", rs, `{"internal_code":"V1","dates":[{"start_date":"2030-07-01","end_date":"2030-07-10"}],"clear":["closed_to_arrival","price"]}`, 200,
			`{"code":200,"data":{"dates":10}}`},
	}, send)
	p, out := getPropertyOf(t, send, "V1")
	if p.Version != before.Version+3 {
		t.Errorf("version %d, want %d", p.Version, before.Version+3)
	}
	if !strings.Contains(string(out), `"restrictions":[{"start_date":"2030-07-05","end_date":"2030-07-06","min_stay_arrival":3},`+
		`{"start_date":"2030-07-12","end_date":"2030-07-13","min_stay_arrival":3,"closed_to_arrival":true},`) ||
		!strings.Contains(string(out), `"rate_plans":[{"id":1,"name":"A","inclusions":"","cancellation":{"policy":"flexible"},"adjustment":{"type":"amount","value":"1"},`+
			`"sold_on":{"direct":true,"all_brands":false},"restrictions":[{"start_date":"2030-07-05","end_date":"2030-07-06","stop_sell":true}]}]`) {
		t.Errorf("get: %s", out)
	}
	if p.Prices["2030-07-05"].Price != "" || p.Prices["2030-07-12"].Price != "180" || len(p.Prices) != 6 {
		t.Errorf("prices: %+v", p.Prices)
	}
	// The new members come after every older one, in the event's order.
	if got := keys(t, out, "data"); !slices.Equal(got[len(got)-3:], []string{"prices", "rate_plans", "restrictions"}) {
		t.Errorf("data keys %v", got)
	}
}

func TestMarkupAnswers(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	send := func(path, body string) (int, []byte) { return call(t, app, acc, path, body) }
	const cm = "/internal/a/channel-markup"
	runAnswers(t, []answerCase{
		{"list none", cm, `{"action":"list"}`, 200, `{"code":200,"data":{"channel_markups":[]}}`},
		{"the account's", cm, `{"action":"set","markup":{"channel":"AirBnB","type":"percent","value":"15.00"}}`, 200, `{"code":200,"data":{"channel":"airbnb"}}`},
		{"the property's", cm, `{"action":"set","internal_code":"V1","markup":{"channel":"vrbo","type":"amount","value":"5"}}`, 200, `{"code":200,"data":{"channel":"vrbo"}}`},
		{"a bad value", cm, `{"action":"set","markup":{"channel":"vrbo","type":"percent","value":"-101"}}`, 400,
			invalid("markup.value", "must be between -100 and 1000")},
		{"delete one the property has not", cm, `{"action":"delete","internal_code":"V1","markup":{"channel":"airbnb"}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"channel markup \"airbnb\" of property \"V1\" does not exist"}`},
		{"delete one the account has not", cm, `{"action":"delete","markup":{"channel":"vrbo"}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"channel markup \"vrbo\" of the account does not exist"}`},
		{"an unknown property", cm, `{"action":"list","internal_code":"V9"}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"property with internal_code \"V9\" does not exist"}`},
		{"list the account's", cm, `{"action":"list"}`, 200, `{"code":200,"data":{"channel_markups":[{"channel":"airbnb","type":"percent","value":"15"}]}}`},
		{"list the property's", cm, `{"action":"list","internal_code":"V1"}`, 200, `{"code":200,"data":{"channel_markups":[{"channel":"vrbo","type":"amount","value":"5"}]}}`},
	}, send)
	_, out := send("/internal/a/account-settings", `{}`)
	if got := keys(t, out, "data"); got[len(got)-1] != "channel_markups" || !strings.Contains(string(out), `"channel_markups":[{"channel":"airbnb","type":"percent","value":"15"}]`) {
		t.Errorf("account-settings: %s", out)
	}
	if _, out := getPropertyOf(t, send, "V1"); !strings.HasSuffix(string(out), `"channel_markups":[{"channel":"vrbo","type":"amount","value":"5"}]}}`) {
		t.Errorf("get: %s", out)
	}
	if status, out := send(cm, `{"action":"delete","internal_code":"V1","markup":{"channel":"VRBO"}}`); status != 200 {
		t.Errorf("delete: %d %s", status, out)
	}
	if _, out := getPropertyOf(t, send, "V1"); strings.Contains(string(out), "channel_markups") {
		t.Errorf("get after the delete: %s", out)
	}
}

// TestConcurrentRestrictionsThroughTheAPI: 20 clients set restrictions on different dates of
// one property at once; all of them are there at the end, as get shows it.
func TestConcurrentRestrictionsThroughTheAPI(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	const n = 20
	together.Run(n, func(i int) {
		d := fmt.Sprintf("2030-09-%02d", 1+i)
		body := fmt.Sprintf(`{"internal_code":"V1","dates":[{"start_date":%q,"end_date":%q}],"set":{"min_stay_through":%d}}`, d, d, i+1)
		if status, out := call(t, app, acc, "/internal/a/property-restriction", body); status != 200 || string(out) != `{"code":200,"data":{"dates":1}}` {
			t.Errorf("client %d: %d %s", i, status, out)
		}
	})
	p, _ := getPropertyOf(t, func(path, body string) (int, []byte) { return call(t, app, acc, path, body) }, "V1")
	if len(p.Restrictions) != n || p.Version != 1+n {
		t.Fatalf("%d runs at version %d, want %d at %d", len(p.Restrictions), p.Version, n, 1+n)
	}
	for i, r := range p.Restrictions {
		if r.MinStayThrough == nil || *r.MinStayThrough != i+1 || r.StartDate != fmt.Sprintf("2030-09-%02d", 1+i) {
			t.Errorf("run %d: %+v", i, r)
		}
	}
}

// TestRatePlansOfTwoAccountsAtOnce: two accounts, each with a property V1, create plans at
// once; each lists its own only.
func TestRatePlansOfTwoAccountsAtOnce(t *testing.T) {
	app, a := newServer(t)
	b := strconv.FormatInt(7000+accounts.Add(1), 10)
	for _, acc := range []string{a, b} {
		createProperty(t, app, acc, "V1")
	}
	const each = 8
	together.Run(2*each, func(i int) {
		acc := []string{a, b}[i%2]
		body := fmt.Sprintf(`{"action":"create","internal_code":"V1","rate_plan":{"name":"%s-%d","adjustment":{"type":"amount","value":"1"}}}`, acc, i)
		if status, out := call(t, app, acc, "/internal/a/property-rateplan", body); status != 200 {
			t.Errorf("%s: %d %s", acc, status, out)
		}
	})
	for _, acc := range []string{a, b} {
		_, out := call(t, app, acc, "/internal/a/property-rateplan", `{"action":"list","internal_code":"V1"}`)
		var l struct {
			Data struct {
				RatePlans []struct {
					ID   int64  `json:"id"`
					Name string `json:"name"`
				} `json:"rate_plans"`
			} `json:"data"`
		}
		if err := json.Unmarshal(out, &l); err != nil || len(l.Data.RatePlans) != 1+each {
			t.Fatalf("%s: %s", acc, out)
		}
		ids := []int64{}
		for _, p := range l.Data.RatePlans[1:] {
			ids = append(ids, p.ID)
			if !strings.HasPrefix(p.Name, acc+"-") {
				t.Errorf("account %s lists %q", acc, p.Name)
			}
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []int64{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Errorf("account %s: ids %v", acc, ids)
		}
	}
}
