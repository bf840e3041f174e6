package property

import (
	"errors"
	"testing"

	"github.com/vros/vros/libs/fields"
)

// revenueSeeds are the bodies of docs/rate-plans.md and some near misses.
var revenueSeeds = []string{
	`{"action":"create","internal_code":"V1","rate_plan":{"name":"Non-refundable","inclusions":"Breakfast",
	  "adjustment":{"type":"percent","value":"-10"},
	  "ranges":[{"start_date":"2027-07-01","end_date":"2027-08-31","type":"percent","value":"-5"}],
	  "minimum_stay":2,"cancellation":{"policy":"non_refundable"},
	  "sold_on":{"direct":true,"all_brands":false,"brands":[1],"channels":["airbnb","bookingcom"]}}}`,
	`{"action":"update","internal_code":"V1","rate_plan":{"id":0,"name":"Flexible rate","cancellation":{"policy":"custom","tiers":[{"days_before":30,"percent":"100"}]}}}`,
	`{"action":"delete","internal_code":"V1","rate_plan":{"id":1}}`,
	`{"internal_code":"V1","rate_plan_id":1,"dates":[{"start_date":"2027-07-01","end_date":"2027-07-31","weekdays":"Friday,Saturday"}],
	  "set":{"min_stay_arrival":3,"min_stay_through":2,"max_stay":14,"closed_to_arrival":true,"closed_to_departure":false,"stop_sell":"1"},"clear":["price"]}`,
	`{"internal_code":"V1","dates":[{"start_date":"2027-07-01","end_date":"2027-07-31"}],"clear":["all"]}`,
	`{"internal_code":"V1","dates":[{"start_date":"0000-01-01","end_date":"9999-12-31","weekdays":""}],"set":{"price":"1e400"}}`,
	`{"action":"set","internal_code":"V1","markup":{"channel":"Vrbo","type":"amount","value":"5"}}`,
	`{"action":"delete","markup":{"channel":"airbnb"}}`,
	`[]`, `null`, `{"dates":{"0":{"start_date":"2027-01-01"}}}`,
}

// FuzzDecodeRevenue: whatever the body, the decoders of /api/property-rateplan,
// /api/property-restriction and /api/channel-markup never panic; a refusal is the field
// violations interface A answers 400 with, each naming a field and a rule; and an accepted
// restriction keeps every documented bound.
func FuzzDecodeRevenue(f *testing.F) {
	for _, s := range revenueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		refusal := func(name string, err error) {
			if err == nil {
				return
			}
			var fe *fields.Error
			if !errors.As(err, &fe) || len(fe.Violations) == 0 {
				t.Fatalf("%s(%q): error %v is not a list of field violations", name, body, err)
			}
			for _, v := range fe.Violations {
				if v.Field == "" || v.Message == "" {
					t.Fatalf("%s(%q): violation %+v names no field or no rule", name, body, v)
				}
			}
		}
		_, err := DecodeRatePlan(body)
		refusal("DecodeRatePlan", err)
		_, err = DecodeMarkup(body)
		refusal("DecodeMarkup", err)
		req, err := DecodeRestriction(body)
		refusal("DecodeRestriction", err)
		if err != nil {
			return
		}
		if len(req.Dates) < 1 || len(req.Dates) > maxRestrictionRanges {
			t.Fatalf("DecodeRestriction(%q) accepted %d date ranges", body, len(req.Dates))
		}
		for _, d := range req.Dates {
			if d.Start.IsZero() || d.End.Before(d.Start) || d.Days == 0 {
				t.Fatalf("DecodeRestriction(%q) accepted the range %+v", body, d)
			}
		}
		for _, n := range []int{req.Set.MinStayArrival, req.Set.MinStayThrough, req.Set.MaxStay} {
			if n < 0 || n > 365 {
				t.Fatalf("DecodeRestriction(%q) accepted a stay of %d nights", body, n)
			}
		}
		if req.Set.IsZero() && req.Price == nil && len(req.Clear) == 0 {
			t.Fatalf("DecodeRestriction(%q) accepted a request that neither sets nor clears", body)
		}
		if req.Price != nil && (req.Plan != 0 || req.Price.Sign() < 0) {
			t.Fatalf("DecodeRestriction(%q) accepted the price %s on plan %d", body, req.Price, req.Plan)
		}
	})
}
