package channels

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakepmsx"
	"github.com/vros/vros/testkit/otaschema"
)

// The certification scenarios through the OpenTravel adapter (SiteMinder's pmsXchange):
// the same actions in vros, asserting what the fake pmsXchange received. Every message vros
// sends is validated by the fake against the OpenTravel 2015A schemas (testkit/otaschema)
// and pmsXchange's rules; every test shows that it refused none. Reservations are pushed
// by the fake to the connection's inbound URL and answered by vros once applied.
//
// pmsXchange takes availability, restrictions and rates in separate messages, and the
// adapter chooses how to split a change among them, so these tests assert the dates each
// change touched (across every message it caused) and the state the fake holds, rather
// than one request per kind as Channex's do.

var (
	otaOnce      sync.Once
	otaValidator *otaschema.Validator
	otaErr       error
)

// validator is the package's schema validator, started at first use (a JVM) and kept.
func validator(t *testing.T) *otaschema.Validator {
	t.Helper()
	otaOnce.Do(func() { otaValidator, otaErr = otaschema.Start() })
	if otaErr != nil {
		t.Fatal(otaErr)
	}
	return otaValidator
}

// otaSetup is one certification property on OpenTravel: the vros property with its two
// plans, a fake pmsXchange of its own (its own credentials), the connection and mapping.
type otaSetup struct {
	acc         chantest.Account
	conn        chantest.Connection
	pms         *fakepmsx.Server
	user, pass  string
	code        string
	pid         int64
	bbPlan      int64
	hotel, room string
	bar, bb     string
	days        int
	today       string
}

func newOTA(t *testing.T, days int) *otaSetup {
	t.Helper()
	s := &otaSetup{acc: newAccount(t), days: days, code: "OTA1", user: "vros-" + fmt.Sprint(time.Now().UnixNano()), pass: "s3cret-Pass-42",
		hotel: "HOTEL1", room: "VILLA", bar: "BAR", bb: "BB"}
	s.pms = fakepmsx.New(validator(t), s.user, s.pass)
	t.Cleanup(s.pms.Close)
	var err error
	s.pid, err = s.acc.Property(s.code)
	must(t, err)
	s.bbPlan, err = s.acc.PlanBB(s.code)
	must(t, err)
	s.conn, err = s.acc.Connect("opentravel", s.pms.URL, chantest.Obj{"username": s.user, "password": s.pass}, days)
	must(t, err)
	waitProjected(t, s.acc, s.pid)
	must(t, s.acc.Map(s.conn.ID(), s.code, s.hotel, s.room,
		chantest.Plan{RatePlanID: 0, RemoteRatePlanID: s.bar}, chantest.Plan{RatePlanID: s.bbPlan, RemoteRatePlanID: s.bb}))
	s.waitFor(t, "the full sync's availability", func() bool {
		ds := s.pms.Dates(s.hotel, s.room, "")
		if len(ds) == 0 {
			return false
		}
		s.today = ds[0]
		return true
	})
	utc := time.Now().UTC()
	if s.today != utc.AddDate(0, 0, -1).Format(time.DateOnly) && s.today != utc.Format(time.DateOnly) &&
		s.today != utc.AddDate(0, 0, 1).Format(time.DateOnly) {
		t.Fatalf("the full sync starts on %s; today is %s (UTC)", s.today, utc.Format(time.DateOnly))
	}
	all := chantest.Dates(s.today, days)
	s.waitDays(t, "the full sync", all, s.defaultsAt)
	return s
}

func (s *otaSetup) day(n int) string { return chantest.AddDays(s.today, n) }

func (s *otaSetup) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := s.pms.Wait(ctx, cond); err != nil {
		t.Fatalf("%s: not within %v (%v); refused: %v", what, within, err, s.refused())
	}
}

// refused lists the messages the fake refused (schema, credentials, pmsXchange's rules).
func (s *otaSetup) refused() []string {
	var out []string
	for _, c := range s.pms.Calls() {
		if c.Refused != "" && c.Fault == "" {
			out = append(out, fmt.Sprintf("#%d %s: %s", c.Seq, c.Root, c.Refused))
		}
	}
	return out
}

func (s *otaSetup) noneRefused(t *testing.T) {
	t.Helper()
	if r := s.refused(); len(r) > 0 {
		t.Fatalf("the fake pmsXchange refused %d messages:\n%s", len(r), strings.Join(r, "\n"))
	}
}

// otaDay is what a date must hold: availability, and per remote plan its values.
type otaDay struct {
	Avail int
	Plans map[string]restr
}

func (s *otaSetup) defaultsAt(string) otaDay {
	return otaDay{Avail: 1, Plans: map[string]restr{s.bar: {Rate: "100.00", MinArrival: 1}, s.bb: {Rate: "120.00", MinArrival: 1}}}
}

// state reads the fake's state of a date in the tests' terms; a field never sent reads as
// absent. OpenTravel has no "min stay 0": a minimum stay removed (RemoveMinLOS, …) reads
// as the default (min stay on arrival 1, none through, no maximum).
func (s *otaSetup) state(date string) map[string]string {
	out := map[string]string{"availability": s.pms.Availability(s.hotel, s.room, date)}
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	closed := func(v string) string {
		switch v {
		case "Close":
			return "true"
		case "Open":
			return "false"
		}
		return "absent"
	}
	for _, plan := range []string{s.bar, s.bb} {
		d := s.pms.Day(s.hotel, s.room, plan, date)
		rate := "absent"
		if d.Rate != "" {
			rate = chantest.Money(d.Rate)
		}
		out[plan+" rate"] = rate
		out[plan+" min_stay_arrival"] = or(d.MinLOS, "1")
		out[plan+" min_stay_through"] = or(d.MinStay, "0")
		out[plan+" max_stay"] = or(d.MaxLOS, "0")
		out[plan+" closed_to_arrival"] = closed(d.Arrival)
		out[plan+" closed_to_departure"] = closed(d.Departure)
		out[plan+" stop_sell"] = closed(d.Master)
	}
	return out
}

func (d otaDay) text() map[string]string {
	out := map[string]string{"availability": fmt.Sprint(d.Avail)}
	for plan, r := range d.Plans {
		for k, v := range r.text() {
			out[plan+" "+k] = v
		}
	}
	return out
}

// diffDays lists the dates whose state is not want's.
func (s *otaSetup) diffDays(dates []string, want func(string) otaDay) []string {
	var out []string
	for _, d := range dates {
		got := s.state(d)
		for k, v := range want(d).text() {
			if got[k] != v {
				out = append(out, fmt.Sprintf("%s %s: %s, want %s", d, k, got[k], v))
			}
		}
	}
	sort.Strings(out)
	return out
}

// waitDays waits until the fake holds want on every date of dates.
func (s *otaSetup) waitDays(t *testing.T, what string, dates []string, want func(string) otaDay) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := s.pms.Wait(ctx, func() bool { return len(s.diffDays(dates, want)) == 0 }); err != nil {
		d := s.diffDays(dates, want)
		t.Fatalf("%s: not within %v: %d differences, e.g. %v; refused: %v", what, within, len(d), d[:min(len(d), 10)], s.refused())
	}
}

// mark is the number of messages the fake received so far.
func (s *otaSetup) mark() int { return len(s.pms.Calls()) }

// touched is, per kind (availability, restrictions, rates), the dates the accepted
// messages after mark set, read back from the messages themselves.
func (s *otaSetup) touched(t *testing.T, mark int) map[string][]string {
	t.Helper()
	var xs []chantest.Exchange
	for _, c := range s.pms.Calls()[mark:] {
		if c.Accepted {
			xs = append(xs, chantest.Exchange{Seq: c.Seq, Method: http.MethodPost, Body: c.Body, Status: c.Status})
		}
	}
	calls, err := chantest.ReadCalls("opentravel", xs)
	must(t, err)
	sets := map[string]map[string]bool{}
	for _, c := range calls {
		if c.Property != s.hotel {
			t.Fatalf("message #%d for hotel %q, want %q", c.Seq, c.Property, s.hotel)
		}
		if sets[c.Kind] == nil {
			sets[c.Kind] = map[string]bool{}
		}
		for _, d := range c.Dates() {
			sets[c.Kind][d] = true
		}
	}
	out := map[string][]string{}
	for k, set := range sets {
		for d := range set {
			out[k] = append(out[k], d)
		}
		sort.Strings(out[k])
	}
	return out
}

// checkTouched asserts that the messages after mark set exactly dates, every one of them and
// no other: availability messages alone when avail, rates and restrictions messages alone
// otherwise (how a change is split among those two is the adapter's choice).
func (s *otaSetup) checkTouched(t *testing.T, mark int, avail bool, dates []string) {
	t.Helper()
	got := s.touched(t, mark)
	union := map[string]bool{}
	for kind, ds := range got {
		if (kind == "availability") != avail {
			t.Fatalf("%s messages were sent for dates %v", kind, ds)
		}
		for _, d := range ds {
			union[d] = true
		}
	}
	var all []string
	for d := range union {
		all = append(all, d)
	}
	sort.Strings(all)
	if strings.Join(all, ",") != strings.Join(dates, ",") {
		t.Fatalf("the messages set dates %v, want %v", all, dates)
	}
}

// TestOpenTravelFullSync: connecting a property sends its availability, rates and
// restrictions for the connection's days, every message schema-valid; a full sync asked
// for sends every date again.
func TestOpenTravelFullSync(t *testing.T) {
	t.Parallel()
	s := newOTA(t, syncDays)
	all := chantest.Dates(s.today, s.days)
	got := s.touched(t, 0)
	for _, kind := range []string{"availability", "rates", "restrictions"} {
		if j := strings.Join(got[kind], ","); j != strings.Join(all, ",") {
			t.Fatalf("the full sync's %s messages set dates %v, want %s..%s", kind, got[kind], all[0], all[len(all)-1])
		}
	}
	mark := s.mark()
	must(t, s.acc.Sync(s.conn.ID(), s.code))
	s.waitFor(t, "the full sync asked for", func() bool {
		g := s.touched(t, mark)
		return len(g["availability"]) == s.days && len(g["rates"]) == s.days && len(g["restrictions"]) == s.days
	})
	s.waitDays(t, "the full sync asked for", all, s.defaultsAt)
	s.noneRefused(t)
}

// TestOpenTravelPriceChanges: a single-date price change (/api/property-restriction) sets
// that date alone, both plans; a multi-date one (setprices_minnights) its dates alone.
func TestOpenTravelPriceChanges(t *testing.T) {
	t.Parallel()
	s := newOTA(t, syncDays)
	d := s.day(5)
	mark := s.mark()
	must(t, s.acc.Restrict(s.code, 0, d, d, chantest.Obj{"price": "150.00"}, nil))
	price := map[string][2]string{d: {"150.00", "170.00"}}
	want := func(date string) otaDay {
		w := s.defaultsAt(date)
		if p, ok := price[date]; ok {
			bar, bb := w.Plans[s.bar], w.Plans[s.bb]
			bar.Rate, bb.Rate = p[0], p[1]
			w.Plans[s.bar], w.Plans[s.bb] = bar, bb
		}
		return w
	}
	s.waitDays(t, "the single-date price", chantest.Dates(s.today, s.days), want)
	s.checkTouched(t, mark, false, []string{d})

	mark = s.mark()
	var items []chantest.Obj
	for _, n := range []int{10, 11, 12, 15, 16} {
		p := "180.00"
		price[s.day(n)] = [2]string{"180.00", "200.00"}
		if n >= 15 {
			p, price[s.day(n)] = "190.00", [2]string{"190.00", "210.00"}
		}
		items = append(items, chantest.Obj{"date": s.day(n), "recommended_price": p, "minNights": "1"})
	}
	must(t, s.acc.BOK("setprices_minnights", chantest.Obj{"propertyId": fmt.Sprintf("%s_%d", s.acc.AccountID, s.pid), "pricingArray": items}, nil))
	s.waitDays(t, "the multi-date prices", chantest.Dates(s.today, s.days), want)
	s.checkTouched(t, mark, false, []string{s.day(10), s.day(11), s.day(12), s.day(15), s.day(16)})
	s.noneRefused(t)
}

// TestOpenTravelRestrictions: each restriction set on one date and cleared, and stop-sell,
// changes that date alone, to the value and back to the defaults.
func TestOpenTravelRestrictions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		set   chantest.Obj
		apply func(*restr)
	}{
		{"min_stay_arrival", chantest.Obj{"min_stay_arrival": 3}, func(r *restr) { r.MinArrival = 3 }},
		{"min_stay_through", chantest.Obj{"min_stay_through": 2}, func(r *restr) { r.MinThru = 2 }},
		{"max_stay", chantest.Obj{"max_stay": 14}, func(r *restr) { r.MaxStay = 14 }},
		{"closed_to_arrival", chantest.Obj{"closed_to_arrival": true}, func(r *restr) { r.CTA = true }},
		{"closed_to_departure", chantest.Obj{"closed_to_departure": true}, func(r *restr) { r.CTD = true }},
		{"stop_sell", chantest.Obj{"stop_sell": true}, func(r *restr) { r.StopSell = true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newOTA(t, syncDays)
			d := s.day(7)
			for _, step := range []string{"set", "clear"} {
				mark := s.mark()
				want := func(date string) otaDay {
					w := s.defaultsAt(date)
					if date == d && step == "set" {
						for plan, r := range w.Plans {
							c.apply(&r)
							w.Plans[plan] = r
						}
					}
					return w
				}
				if step == "set" {
					must(t, s.acc.Restrict(s.code, 0, d, d, c.set, nil))
				} else {
					must(t, s.acc.Restrict(s.code, 0, d, d, nil, []string{c.name}))
				}
				s.waitDays(t, step+" "+c.name, chantest.Dates(s.today, s.days), want)
				s.checkTouched(t, mark, false, []string{d})
			}
			s.noneRefused(t)
		})
	}
}

// TestOpenTravelBookings: a booking in vros sets its nights unavailable; a new, a modified
// and a cancelled reservation pushed by pmsXchange (OTA_HotelResNotifRQ, then
// OTA_HotelResModifyNotifRQ, then a cancellation) are each answered Success with vros's
// booking id once applied, and the booking exists, moves, is cancelled.
func TestOpenTravelBookings(t *testing.T) {
	t.Parallel()
	s := newOTA(t, syncDays)
	all := chantest.Dates(s.today, s.days)
	taken := map[string]bool{}
	want := func(date string) otaDay {
		w := s.defaultsAt(date)
		if taken[date] {
			w.Avail = 0
		}
		return w
	}

	// A booking made in vros.
	mark := s.mark()
	b, status, err := s.acc.Create(s.pid, s.day(8), s.day(11))
	must(t, err)
	if status != 0 {
		t.Fatalf("create answered status %d", status)
	}
	for _, n := range []int{8, 9, 10} {
		taken[s.day(n)] = true
	}
	s.waitDays(t, "the booking's nights", all, want)
	s.checkTouched(t, mark, true, []string{s.day(8), s.day(9), s.day(10)})
	must(t, s.acc.BOK("cancel", chantest.Obj{"bookingId": b.BookingID}, nil))
	clear(taken)
	s.waitDays(t, "the cancelled booking's nights", all, want)

	// Reservations pushed by the channel manager.
	res := fakepmsx.Reservation{ID: "SM-" + fmt.Sprint(time.Now().UnixNano()), Status: "new", Channel: "BookingCom",
		HotelCode: s.hotel, RoomType: s.room, RatePlan: s.bar, Checkin: s.day(12), Checkout: s.day(15), Adults: 2,
		Currency: "USD", Total: "330.00", FirstName: "Grace", LastName: "Hopper", Email: "grace@example.com", Country: "US", Card: true}
	push := func(r fakepmsx.Reservation) int64 {
		t.Helper()
		rep, err := s.pms.Push(context.Background(), inboundURL(s.conn), s.user, s.pass, r)
		must(t, err)
		if rep.HTTPStatus != http.StatusOK || !rep.Success || len(rep.Errors) > 0 {
			t.Fatalf("push of %s %s answered %d success %v errors %v: %s", r.ID, r.Status, rep.HTTPStatus, rep.Success, rep.Errors, rep.Body)
		}
		var id int64
		if _, err := fmt.Sscan(rep.BookingIDs[r.ID], &id); err != nil || id == 0 {
			t.Fatalf("push of %s answered booking ids %v", r.ID, rep.BookingIDs)
		}
		return id
	}
	id := push(res)
	got, err := s.acc.Booking(id)
	must(t, err)
	if got.Checkin != s.day(12) || got.Checkout != s.day(15) || got.Cancelled() || got.Channel == "" {
		t.Fatalf("the pushed reservation's booking is %+v", got)
	}
	for _, n := range []int{12, 13, 14} {
		taken[s.day(n)] = true
	}
	s.waitDays(t, "the channel booking's nights", all, want)

	mod := res
	mod.Status, mod.Modify, mod.Checkin, mod.Checkout, mod.Total = "modified", true, s.day(20), s.day(22), "220.00"
	if id2 := push(mod); id2 != id {
		t.Fatalf("the modification answered booking %d, want %d", id2, id)
	}
	got, err = s.acc.Booking(id)
	must(t, err)
	if got.Checkin != s.day(20) || got.Checkout != s.day(22) || got.Cancelled() {
		t.Fatalf("the modified booking is %+v", got)
	}
	clear(taken)
	taken[s.day(20)], taken[s.day(21)] = true, true
	s.waitDays(t, "the moved nights", all, want)

	cxl := mod
	cxl.Status, cxl.Modify = "cancelled", false
	if id3 := push(cxl); id3 != id {
		t.Fatalf("the cancellation answered booking %d, want %d", id3, id)
	}
	got, err = s.acc.Booking(id)
	must(t, err)
	if !got.Cancelled() {
		t.Fatalf("the cancelled booking is %+v", got)
	}
	clear(taken)
	s.waitDays(t, "the cancelled channel booking's nights", all, want)
	if n := len(s.pms.Calls()); n == 0 {
		t.Fatal("no message")
	}
	s.noneRefused(t)
}
