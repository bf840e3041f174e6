package channels

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakechannex"
)

// Channex's PMS certification scenarios (docs.channex.io, "PMS Certification Tests"), each by
// the action an owner takes in vros, asserting the requests the fake Channex received: their
// paths and every value they carried.
//
// Each test has its own account, vros property and Channex property (the certification
// property's shape: one room type, a Best Available Rate of 100 and a Bed & Breakfast Rate of
// 120), so that the tests run in parallel and no property meets Channex's per-property rate
// limit (10 availability and 10 restrictions requests a minute).

// syncDays is the ARI horizon of the certification connections in make test; one test
// syncs the documented 500 days.
var syncDays = envInt("VROS_CHANNELS_DAYS", 30)

// chxSetup is one certification property, connected and fully synced.
type chxSetup struct {
	acc      chantest.Account
	conn     chantest.Connection
	key      string
	code     string
	pid      int64
	bbPlan   int64  // vros's Bed & Breakfast plan
	prop     string // Channex ids
	room     string
	bar, bb  string
	days     int
	today    string // the first date synced: today in the property's zone
	syncMark int    // the fake's last call before the mapping was created
}

// lastSeq is the sequence number of the fake's last call.
func lastSeq() int {
	cs := chx.Calls()
	if len(cs) == 0 {
		return 0
	}
	return cs[len(cs)-1].Seq
}

// newChannex sets up a certification property: the vros property with its two plans, the
// Channex property, the connection (an API key of its own) and the mapping, and waits for
// the full sync the mapping starts to reach the fake.
func newChannex(t *testing.T, days int) *chxSetup {
	t.Helper()
	s := &chxSetup{acc: newAccount(t), days: days, code: "CHX1", key: "key-" + fakechannex.NewID()}
	var err error
	s.pid, err = s.acc.Property(s.code)
	must(t, err)
	s.bbPlan, err = s.acc.PlanBB(s.code)
	must(t, err)
	p := chx.AddProperty(s.key, fakechannex.Property{Title: "Test Property - vros", Currency: "USD",
		RoomTypes: []fakechannex.RoomType{{Title: "Twin Room", RatePlans: []string{"", ""}}}})
	s.prop, s.room = p.ID, p.RoomTypes[0].ID
	s.bar, s.bb = p.RoomTypes[0].RatePlans[0], p.RoomTypes[0].RatePlans[1]
	s.conn, err = s.acc.Connect("channex", chx.URL(), chantest.Obj{"api_key": s.key}, days)
	must(t, err)
	waitProjected(t, s.acc, s.pid)
	s.syncMark = lastSeq()
	must(t, s.acc.Map(s.conn.ID(), s.code, s.prop, s.room,
		chantest.Plan{RatePlanID: 0, RemoteRatePlanID: s.bar}, chantest.Plan{RatePlanID: s.bbPlan, RemoteRatePlanID: s.bb}))
	// The first availability request says which date is today for the property.
	s.waitFor(t, "the full sync's availability", func() bool {
		for _, c := range s.calls(s.syncMark, fakechannex.KindAvailability) {
			if len(c.Values) == 0 {
				continue
			}
			if v := c.Values[0]; v.DateFrom != "" {
				s.today = v.DateFrom
			} else {
				s.today = v.Date
			}
			return true
		}
		return false
	})
	utc := time.Now().UTC()
	if s.today != utc.AddDate(0, 0, -1).Format(time.DateOnly) && s.today != utc.Format(time.DateOnly) &&
		s.today != utc.AddDate(0, 0, 1).Format(time.DateOnly) {
		t.Fatalf("the full sync starts on %s; today is %s (UTC)", s.today, utc.Format(time.DateOnly))
	}
	last := s.day(days - 1)
	s.waitState(t, "the full sync", map[string]int{s.today: 1, last: 1}, map[string]map[string]string{
		s.bar: {s.today: "100.00", last: "100.00"}, s.bb: {s.today: "120.00", last: "120.00"}})
	return s
}

// day is the date n days after the first date synced.
func (s *chxSetup) day(n int) string { return chantest.AddDays(s.today, n) }

// calls are the fake's accepted calls of kind for this property after seq.
func (s *chxSetup) calls(after int, kind string) []fakechannex.Call {
	var out []fakechannex.Call
	for _, c := range chx.Calls() {
		if c.Seq <= after || c.Kind != kind || c.Status != http.StatusOK {
			continue
		}
		for _, v := range c.Values {
			if v.PropertyID == s.prop {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// problems are the fake's refusals and warnings of this property's requests after seq (429
// answers excepted: the rate limit is part of the protocol).
func (s *chxSetup) problems(after int) []string {
	var out []string
	for _, c := range chx.Problems() {
		if c.Seq <= after || c.Status == http.StatusTooManyRequests {
			continue
		}
		mine := strings.Contains(string(c.Body), s.prop) || strings.Contains(c.Path, s.prop)
		if mine {
			out = append(out, fmt.Sprintf("%s %s: HTTP %d %s %v", c.Method, c.Path, c.Status, c.Reason, c.Warn))
		}
	}
	return out
}

func (s *chxSetup) noProblems(t *testing.T) {
	t.Helper()
	if p := s.problems(0); len(p) > 0 {
		t.Fatalf("the fake refused or warned about %d requests of this property:\n%s", len(p), strings.Join(p, "\n"))
	}
}

// waitFor waits on the fake until cond holds.
func (s *chxSetup) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := chx.Wait(ctx, cond); err != nil {
		t.Fatalf("%s: not within %v (%v); problems: %v", what, within, err, s.problems(0))
	}
}

// waitState waits until the fake holds avail (date → availability) and rates (remote plan →
// date → rate).
func (s *chxSetup) waitState(t *testing.T, what string, avail map[string]int, rates map[string]map[string]string) {
	t.Helper()
	s.waitFor(t, what, func() bool {
		for d, want := range avail {
			if got, _, ok := chx.Availability(s.prop, s.room, d); !ok || got != want {
				return false
			}
		}
		for plan, byDate := range rates {
			for d, want := range byDate {
				r, ok := chx.Restriction(s.prop, plan, d)
				if !ok || r.Rate == nil || chantest.Money(*r.Rate) != want {
					return false
				}
			}
		}
		return true
	})
}

// restr is a rate plan's values on a date as the tests expect them, every field.
type restr struct {
	Rate                string
	MinArrival, MinThru int
	MaxStay             int
	CTA, CTD, StopSell  bool
}

// defaults are a plan's values on a date of the certification property without
// restrictions: its price, minimum stay 1 (the rates'), nothing else. Channex's minimum
// stays are at least 1 (1: no restriction), so "none through" is sent as 1.
func (s *chxSetup) defaults(plan string) restr {
	if plan == s.bb {
		return restr{Rate: "120.00", MinArrival: 1, MinThru: 1}
	}
	return restr{Rate: "100.00", MinArrival: 1, MinThru: 1}
}

// text is a change object's rate and restrictions as the fake read them, every field the
// protocol has; a field the request did not carry is "absent".
func text(v fakechannex.Value) map[string]string {
	i := func(p *int) string {
		if p == nil {
			return "absent"
		}
		return strconv.Itoa(*p)
	}
	b := func(p *bool) string {
		if p == nil {
			return "absent"
		}
		return strconv.FormatBool(*p)
	}
	rate := "absent"
	if v.Rate != nil {
		rate = chantest.Money(*v.Rate)
	}
	return map[string]string{"rate": rate, "min_stay_arrival": i(v.MinStayArrival), "min_stay_through": i(v.MinStayThrough),
		"max_stay": i(v.MaxStay), "closed_to_arrival": b(v.ClosedToArrival), "closed_to_departure": b(v.ClosedToDeparture),
		"stop_sell": b(v.StopSell)}
}

func (r restr) text() map[string]string {
	return map[string]string{"rate": r.Rate, "min_stay_arrival": strconv.Itoa(r.MinArrival), "min_stay_through": strconv.Itoa(r.MinThru),
		"max_stay": strconv.Itoa(r.MaxStay), "closed_to_arrival": strconv.FormatBool(r.CTA),
		"closed_to_departure": strconv.FormatBool(r.CTD), "stop_sell": strconv.FormatBool(r.StopSell)}
}

// span is a change object's dates.
func span(v fakechannex.Value) (string, string) {
	if v.Date != "" {
		return v.Date, v.Date
	}
	return v.DateFrom, v.DateTo
}

// wantRestr is one change object a restrictions request must carry.
type wantRestr struct {
	Plan     string
	From, To string
	Values   restr
}

// checkRestrictions asserts that the calls are exactly one restrictions request whose change
// objects are want, in any order, each with every field.
func (s *chxSetup) checkRestrictions(t *testing.T, calls []fakechannex.Call, want []wantRestr) {
	t.Helper()
	if len(calls) != 1 {
		t.Fatalf("%d restrictions requests, want 1: %s", len(calls), bodies(calls))
	}
	c := calls[0]
	if c.Method != http.MethodPost || c.Path != "/api/v1/restrictions" {
		t.Fatalf("restrictions request %s %s", c.Method, c.Path)
	}
	var got, exp []string
	for _, v := range c.Values {
		from, to := span(v)
		if v.PropertyID != s.prop || len(v.Days) > 0 {
			t.Fatalf("change object %+v: property %s, days %v", v, v.PropertyID, v.Days)
		}
		got = append(got, fmt.Sprintf("%s %s..%s %v", v.RatePlanID, from, to, text(v)))
	}
	for _, w := range want {
		exp = append(exp, fmt.Sprintf("%s %s..%s %v", w.Plan, w.From, w.To, w.Values.text()))
	}
	sort.Strings(got)
	sort.Strings(exp)
	if !slices.Equal(got, exp) {
		t.Fatalf("restrictions request carried\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(exp, "\n  "))
	}
}

// wantAvail is one availability change object.
type wantAvail struct {
	From, To string
	Avail    int
}

// checkAvailability asserts that the calls are exactly one availability request carrying
// want (in any order).
func (s *chxSetup) checkAvailability(t *testing.T, calls []fakechannex.Call, want []wantAvail) {
	t.Helper()
	if len(calls) != 1 {
		t.Fatalf("%d availability requests, want 1: %s", len(calls), bodies(calls))
	}
	c := calls[0]
	if c.Method != http.MethodPost || c.Path != "/api/v1/availability" {
		t.Fatalf("availability request %s %s", c.Method, c.Path)
	}
	var got, exp []string
	for _, v := range c.Values {
		from, to := span(v)
		a := -1
		if v.Availability != nil {
			a = *v.Availability
		}
		if v.PropertyID != s.prop || v.RoomTypeID != s.room || len(v.Days) > 0 {
			t.Fatalf("change object %+v: want property %s room type %s", v, s.prop, s.room)
		}
		got = append(got, fmt.Sprintf("%s..%s %d", from, to, a))
	}
	for _, w := range want {
		exp = append(exp, fmt.Sprintf("%s..%s %d", w.From, w.To, w.Avail))
	}
	sort.Strings(got)
	sort.Strings(exp)
	if !slices.Equal(got, exp) {
		t.Fatalf("availability request carried %v, want %v", got, exp)
	}
}

func bodies(cs []fakechannex.Call) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("#%d %s %s", c.Seq, c.Path, c.Body))
	}
	return strings.Join(out, "\n")
}

// checkFullSync asserts the requests of a full sync made after seq: one availability
// request (every date free) and one restrictions request (each plan its price and the
// defaults), over the connection's days.
func (s *chxSetup) checkFullSync(t *testing.T, after int) {
	t.Helper()
	last := s.day(s.days - 1)
	s.checkAvailability(t, s.calls(after, fakechannex.KindAvailability), []wantAvail{{s.today, last, 1}})
	s.checkRestrictions(t, s.calls(after, fakechannex.KindRestrictions), []wantRestr{
		{s.bar, s.today, last, s.defaults(s.bar)}, {s.bb, s.today, last, s.defaults(s.bb)}})
}

// TestChannexFullSync: connecting a property (channel-connection and channel-mapping
// create) sends its ARI for the connection's days: one availability request with every date
// free, one restrictions request with each plan's rate (100 and 120) and restrictions; a
// full sync asked for (channel-mapping sync) sends the same again.
func TestChannexFullSync(t *testing.T) {
	t.Parallel()
	s := newChannex(t, syncDays)
	s.checkFullSync(t, s.syncMark)
	mark := lastSeq()
	must(t, s.acc.Sync(s.conn.ID(), s.code))
	s.waitFor(t, "the full sync asked for", func() bool {
		return len(s.calls(mark, fakechannex.KindAvailability)) > 0 && len(s.calls(mark, fakechannex.KindRestrictions)) > 0
	})
	s.checkFullSync(t, mark)
	s.noProblems(t)
}

// TestChannexFullSync500 is the certification's full sync of 500 days (the default
// horizon): still one request of each kind, the values being the same every date.
func TestChannexFullSync500(t *testing.T) {
	t.Parallel()
	s := newChannex(t, 500)
	s.checkFullSync(t, s.syncMark)
	s.noProblems(t)
}

// TestChannexPriceChanges: a single-date price change (/api/property-restriction's price)
// sends one restrictions request with that date for both plans (the derived plan's price
// follows); a multi-date change (interface B setprices_minnights) sends the ranges of equal
// values, and nothing else.
func TestChannexPriceChanges(t *testing.T) {
	t.Parallel()
	s := newChannex(t, syncDays)

	d := s.day(5)
	mark := lastSeq()
	must(t, s.acc.Restrict(s.code, 0, d, d, chantest.Obj{"price": "150.00"}, nil))
	s.waitState(t, "the single-date price", nil, map[string]map[string]string{s.bar: {d: "150.00"}, s.bb: {d: "170.00"}})
	bar, bb := s.defaults(s.bar), s.defaults(s.bb)
	bar.Rate, bb.Rate = "150.00", "170.00"
	s.checkRestrictions(t, s.calls(mark, fakechannex.KindRestrictions), []wantRestr{{s.bar, d, d, bar}, {s.bb, d, d, bb}})
	if a := s.calls(mark, fakechannex.KindAvailability); len(a) > 0 {
		t.Fatalf("a price change sent availability: %s", bodies(a))
	}

	// Three dates at 180 and, apart, two at 190: two ranges per plan.
	mark = lastSeq()
	var items []chantest.Obj
	for _, n := range []int{10, 11, 12} {
		items = append(items, chantest.Obj{"date": s.day(n), "recommended_price": "180.00", "minNights": "1"})
	}
	for _, n := range []int{15, 16} {
		items = append(items, chantest.Obj{"date": s.day(n), "recommended_price": "190.00", "minNights": "1"})
	}
	must(t, s.acc.BOK("setprices_minnights", chantest.Obj{"propertyId": fmt.Sprintf("%s_%d", s.acc.AccountID, s.pid), "pricingArray": items}, nil))
	s.waitState(t, "the multi-date prices", nil, map[string]map[string]string{
		s.bar: {s.day(10): "180.00", s.day(12): "180.00", s.day(16): "190.00"},
		s.bb:  {s.day(10): "200.00", s.day(12): "200.00", s.day(16): "210.00"}})
	bar180, bb180, bar190, bb190 := s.defaults(s.bar), s.defaults(s.bb), s.defaults(s.bar), s.defaults(s.bb)
	bar180.Rate, bb180.Rate, bar190.Rate, bb190.Rate = "180.00", "200.00", "190.00", "210.00"
	s.checkRestrictions(t, s.calls(mark, fakechannex.KindRestrictions), []wantRestr{
		{s.bar, s.day(10), s.day(12), bar180}, {s.bb, s.day(10), s.day(12), bb180},
		{s.bar, s.day(15), s.day(16), bar190}, {s.bb, s.day(15), s.day(16), bb190}})
	if a := s.calls(mark, fakechannex.KindAvailability); len(a) > 0 {
		t.Fatalf("a price change sent availability: %s", bodies(a))
	}
	s.noProblems(t)
}

// TestChannexRestrictions: each restriction, set on one date at the property's level and
// then cleared, sends one restrictions request with that date for both plans: set, the
// field changed; cleared, the defaults back. Set on the Bed & Breakfast plan only, the
// request carries that plan alone. Stop-sell is one of them: the room stays available.
func TestChannexRestrictions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		plan  bool // on the derived plan only
		set   chantest.Obj
		field string
		apply func(*restr)
	}{
		{"min_stay_arrival", false, chantest.Obj{"min_stay_arrival": 3}, "min_stay_arrival", func(r *restr) { r.MinArrival = 3 }},
		{"min_stay_through", false, chantest.Obj{"min_stay_through": 2}, "min_stay_through", func(r *restr) { r.MinThru = 2 }},
		{"max_stay", false, chantest.Obj{"max_stay": 14}, "max_stay", func(r *restr) { r.MaxStay = 14 }},
		{"closed_to_arrival", false, chantest.Obj{"closed_to_arrival": true}, "closed_to_arrival", func(r *restr) { r.CTA = true }},
		{"closed_to_departure", false, chantest.Obj{"closed_to_departure": true}, "closed_to_departure", func(r *restr) { r.CTD = true }},
		{"stop_sell", false, chantest.Obj{"stop_sell": true}, "stop_sell", func(r *restr) { r.StopSell = true }},
		{"plan_min_stay_arrival", true, chantest.Obj{"min_stay_arrival": 4}, "min_stay_arrival", func(r *restr) { r.MinArrival = 4 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newChannex(t, syncDays)
			d := s.day(7)
			var level int64
			if c.plan {
				level = s.bbPlan
			}
			for _, step := range []string{"set", "clear"} {
				mark := lastSeq()
				var want []wantRestr
				for _, plan := range []string{s.bar, s.bb} {
					if c.plan && plan != s.bb {
						continue
					}
					r := s.defaults(plan)
					if step == "set" {
						c.apply(&r)
					}
					want = append(want, wantRestr{plan, d, d, r})
				}
				if step == "set" {
					must(t, s.acc.Restrict(s.code, level, d, d, c.set, nil))
				} else {
					must(t, s.acc.Restrict(s.code, level, d, d, nil, []string{c.field}))
				}
				s.waitFor(t, step+" "+c.name, func() bool {
					for _, w := range want {
						r, ok := chx.Restriction(s.prop, w.Plan, d)
						if !ok {
							return false
						}
						got := text(r)
						for k, v := range w.Values.text() {
							if got[k] != v {
								return false
							}
						}
					}
					return true
				})
				s.checkRestrictions(t, s.calls(mark, fakechannex.KindRestrictions), want)
				if a := s.calls(mark, fakechannex.KindAvailability); len(a) > 0 {
					t.Fatalf("a restriction sent availability: %s", bodies(a))
				}
			}
			s.noProblems(t)
		})
	}
}

// TestChannexBookingInVros: a booking made in vros (interface B create) sends availability 0
// for its nights, in one request and nothing else; its cancellation sends them free again.
func TestChannexBookingInVros(t *testing.T) {
	t.Parallel()
	s := newChannex(t, syncDays)
	mark := lastSeq()
	b, status, err := s.acc.Create(s.pid, s.day(8), s.day(11))
	must(t, err)
	if status != 0 {
		t.Fatalf("create answered status %d", status)
	}
	s.waitState(t, "the booking's nights", map[string]int{s.day(8): 0, s.day(10): 0}, nil)
	s.checkAvailability(t, s.calls(mark, fakechannex.KindAvailability), []wantAvail{{s.day(8), s.day(10), 0}})
	if r := s.calls(mark, fakechannex.KindRestrictions); len(r) > 0 {
		t.Fatalf("a booking sent restrictions: %s", bodies(r))
	}
	mark = lastSeq()
	must(t, s.acc.BOK("cancel", chantest.Obj{"bookingId": b.BookingID}, nil))
	s.waitState(t, "the cancelled booking's nights", map[string]int{s.day(8): 1, s.day(10): 1}, nil)
	s.checkAvailability(t, s.calls(mark, fakechannex.KindAvailability), []wantAvail{{s.day(8), s.day(10), 1}})
	s.noProblems(t)
}

// inboundURL is the connection's inbound URL, absolute.
func inboundURL(c chantest.Connection) string {
	if strings.HasPrefix(c.InboundURL, "http") {
		return c.InboundURL
	}
	if c.InboundURL != "" {
		return st.EdgeURL + c.InboundURL
	}
	return st.EdgeURL + "/channels/" + c.Adapter + "/" + c.InboundToken
}

// deliver enqueues a revision in the fake's feed and posts Channex's webhook to the
// connection's inbound URL through edge; the webhook is answered 200 at once.
func (s *chxSetup) deliver(t *testing.T, r fakechannex.Revision) fakechannex.Revision {
	t.Helper()
	r.PropertyID = s.prop
	rv := chx.EnqueueRevision(r)
	code, body, err := chx.PostWebhook(context.Background(), inboundURL(s.conn), "booking", rv.ID)
	must(t, err)
	if code != http.StatusOK {
		t.Fatalf("webhook answered %d %s", code, body)
	}
	return rv
}

// waitAcked waits until the fake has the revision's acknowledgement and no longer serves it.
func (s *chxSetup) waitAcked(t *testing.T, id string) {
	t.Helper()
	s.waitFor(t, "the ack of revision "+id, func() bool {
		if slices.Contains(chx.Pending(), id) {
			return false
		}
		for _, a := range chx.Acks() {
			if a.RevisionID == id {
				return true
			}
		}
		return false
	})
}

// channelBookings lists the property's bookings that came from a channel.
func (s *chxSetup) channelBookings(t *testing.T) []chantest.Booking {
	t.Helper()
	all, err := s.acc.Bookings(s.pid)
	must(t, err)
	var out []chantest.Booking
	for _, b := range all {
		if b.Channel != "" {
			out = append(out, b)
		}
	}
	return out
}

// TestChannexChannelBookings: a new, a modified and a cancelled channel booking (revisions in
// Channex's feed, announced by its webhook on the public inbound route) are each applied in
// vros — the booking exists, moves, is cancelled (interface B listbooking) — and each
// revision is acknowledged; the ARI projection sends the nights back as taken, then moved,
// then free.
func TestChannexChannelBookings(t *testing.T) {
	t.Parallel()
	s := newChannex(t, syncDays)

	mark := lastSeq()
	rv := s.deliver(t, fakechannex.Revision{ArrivalDate: s.day(12), DepartureDate: s.day(15), Amount: "330.00",
		Customer: fakechannex.Customer{Name: "Grace", Surname: "Hopper", Mail: "grace@example.com", Country: "US"}})
	s.waitAcked(t, rv.ID)
	bs := s.channelBookings(t)
	if len(bs) != 1 || bs[0].Checkin != s.day(12) || bs[0].Checkout != s.day(15) || bs[0].Cancelled() {
		t.Fatalf("after the new revision, the channel bookings are %+v", bs)
	}
	id := bs[0].BookingID
	if bs[0].Channel != "bookingcom" {
		t.Fatalf("channel %q, want bookingcom", bs[0].Channel)
	}
	s.waitState(t, "the channel booking's nights", map[string]int{s.day(12): 0, s.day(14): 0}, nil)
	s.checkAvailability(t, s.calls(mark, fakechannex.KindAvailability), []wantAvail{{s.day(12), s.day(14), 0}})
	if status, err := s.acc.Sellable(s.pid, s.day(13), s.day(14)); err != nil || status == 0 {
		t.Fatalf("a night of the channel booking is still sold directly: status %d %v", status, err)
	}

	mark = lastSeq()
	mod := s.deliver(t, fakechannex.Revision{BookingID: rv.BookingID, OTAReservationCode: rv.OTAReservationCode, Status: "modified",
		ArrivalDate: s.day(20), DepartureDate: s.day(22), Amount: "220.00", Customer: rv.Customer})
	s.waitAcked(t, mod.ID)
	bs = s.channelBookings(t)
	if len(bs) != 1 || bs[0].BookingID != id || bs[0].Checkin != s.day(20) || bs[0].Checkout != s.day(22) || bs[0].Cancelled() {
		t.Fatalf("after the modification, the channel bookings are %+v (booking %d)", bs, id)
	}
	s.waitState(t, "the moved nights", map[string]int{s.day(12): 1, s.day(14): 1, s.day(20): 0, s.day(21): 0}, nil)
	s.checkAvailability(t, s.calls(mark, fakechannex.KindAvailability), []wantAvail{{s.day(12), s.day(14), 1}, {s.day(20), s.day(21), 0}})

	mark = lastSeq()
	cxl := s.deliver(t, fakechannex.Revision{BookingID: rv.BookingID, OTAReservationCode: rv.OTAReservationCode, Status: "cancelled",
		ArrivalDate: s.day(20), DepartureDate: s.day(22), Amount: "220.00", Customer: rv.Customer})
	s.waitAcked(t, cxl.ID)
	b, err := s.acc.Booking(id)
	must(t, err)
	if !b.Cancelled() {
		t.Fatalf("after the cancellation, booking %d is %+v", id, b)
	}
	s.waitState(t, "the cancelled nights", map[string]int{s.day(20): 1, s.day(21): 1}, nil)
	s.checkAvailability(t, s.calls(mark, fakechannex.KindAvailability), []wantAvail{{s.day(20), s.day(21), 1}})
	if p := chx.Pending(); slices.Contains(p, rv.ID) || slices.Contains(p, mod.ID) || slices.Contains(p, cxl.ID) {
		t.Fatalf("revisions still in the feed: %v", p)
	}
	s.noProblems(t)
}
