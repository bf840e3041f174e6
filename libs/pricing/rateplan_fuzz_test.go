package pricing

import (
	"strings"
	"testing"
	"time"
)

// FuzzRatePlanSnapshot feeds property events with rate plans, restrictions and markups,
// mutated by the fuzzer, to FromSnapshot. A snapshot is either refused with an error naming
// what is wrong, or it gives a Property whose every plan quotes without panicking, whose
// accepted quotes satisfy the relations of rule 8, whose day rules agree with the stay check
// (a stay CheckDays accepts is not refused by Quote for a date rule, and the reverse), and
// whose calendar on each plan agrees with its one-night quotes. Seeds: ratePlanSnapshot and
// variants of it (go test runs them; go test -fuzz FuzzRatePlanSnapshot explores).
func FuzzRatePlanSnapshot(f *testing.F) {
	f.Add(ratePlanSnapshot)
	f.Add(strings.Replace(ratePlanSnapshot, `"min_stay_through":3`, `"min_stay_through":3,"stop_sell":true`, 1))
	f.Add(strings.Replace(ratePlanSnapshot, `"value":"-10"`, `"value":"-100"`, 1))
	f.Add(strings.Replace(ratePlanSnapshot, `"type":"amount","value":"5"`, `"type":"amount","value":"-99999.99"`, 1))
	f.Add(strings.Replace(ratePlanSnapshot, `"max_stay":10`, `"max_stay":1`, 1))
	f.Add(`{"content":{"maxguest":2},"rates":{"rate":{"daily_price":"0.01"},"minimum_stay":0,"setting":{}},
		"restrictions":[{"start_date":"2027-03-01","end_date":"2038-03-01","closed_to_departure":true}]}`)
	f.Fuzz(func(t *testing.T, snapshot string) {
		p, err := FromSnapshot([]byte(snapshot))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "pricing: ") {
				t.Fatalf("error without the package's prefix: %v", err)
			}
			return
		}
		now := time.Date(2027, 1, 10, 10, 0, 0, 0, time.UTC)
		ids := []int64{0}
		for _, x := range p.Plans {
			ids = append(ids, x.ID)
		}
		for _, id := range ids {
			planMin := 0
			if x := planByID(p, id); x != nil {
				planMin = x.MinimumStay
			}
			for k, nights := range []int{1, 2, 3, 7, 15} {
				in := MustDate("2027-03-01").AddDays(k * 3)
				out := in.AddDays(nights)
				for _, channel := range []string{"", "airbnb"} {
					r := Request{Checkin: in, Checkout: out, Adults: 2, Now: now, Plan: id, Channel: channel, SkipSoldOn: true}
					q, err := Quote(p, r)
					dayErr := CheckDays(in, out, planMin, func(d Date) DayRules { return p.Rules(id, d) })
					var re *RuleError
					switch {
					case err == nil:
						checkRelations(t, q)
						if dayErr != nil {
							t.Fatalf("plan %d %s → %s quoted, CheckDays %v", id, in, out, dayErr)
						}
					case !asRule(err, &re):
						if p.Rates != nil && err != ErrTooLarge {
							t.Fatalf("plan %d: %v", id, err)
						}
					case dayCode(re.Code) && (dayErr == nil || dayErr.Code != re.Code):
						t.Fatalf("plan %d %s → %s: Quote %v, CheckDays %v", id, in, out, err, dayErr)
					}
					one := r
					one.Checkout, one.IgnoreRules = in.AddDays(1), true
					if q1, err := Quote(p, one); err == nil {
						cal, ok := NightPriceOn(p, id, channel, in, 2)
						if !ok || !cal.Price.Equal(q1.Nights[0].Price) {
							t.Fatalf("plan %d %s: calendar %s (%v), one-night quote %s", id, in, cal.Price, ok, q1.Nights[0].Price)
						}
					}
				}
			}
		}
	})
}

func asRule(err error, re **RuleError) bool {
	r, ok := err.(*RuleError)
	*re = r
	return ok
}
