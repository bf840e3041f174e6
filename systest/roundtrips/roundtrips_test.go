package roundtrips

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// within bounds the wait for booking-svc's view of the property: liveness on a loaded
// machine, not a measure.
const within = time.Minute

// kindRow is one request kind: its expected store round trips per request (the mean of
// vros_store_operations over runs requests), the service that serves it, and how to make one
// request of it (run; prepare makes what the runs need, outside the measured window).
type kindRow struct {
	kind string  // vros_request_kind
	want float64 // round trips per request, exactly
	runs int
	svc  func() string // the service's internal URL
	// prepare makes what n runs need (bookings to update or cancel); run i is one request.
	prepare func(t *testing.T, f *fixture, n int)
	run     func(t *testing.T, f *fixture, i int)
}

// TestStoreRoundTrips: each kind's store round trips per request, through edge, equal the
// table's. When a change cuts (or adds) round trips of a kind, update its row in the same
// commit, with the operations it now makes.
func TestStoreRoundTrips(t *testing.T) {
	booking := func() string { return st.BookingInternalURL }
	property := func() string { return st.PropertyInternalURL }
	rows := []kindRow{
		// B create, one night, no card: insert ledger_ops (the op), insert nights, insert
		// bookings (written reserved), insert booking_list.<account> (its list entry) = 4.
		// Booking ids are reserved ten at a time, the next block in the background once half
		// of one is drawn (mongostore.Sequence.ReserveAhead): not the request's. The outbox
		// intent is the op itself (relayed, then deleted by the relay: not the request's).
		{kind: "B.create", want: 4, runs: 10, svc: booking,
			run: func(t *testing.T, f *fixture, _ int) { f.create(t) }},
		// B update moving the stay one night later: find bookings, insert ledger_ops, find
		// bookings, insert nights (the new night), find bookings, findAndModify bookings,
		// update booking_list.<account>, find nights, delete nights (the night left), delete
		// ledger_ops, insert outbox (its intent, through the batched mongostore.Inserter:
		// one per request that waited for it) = 11.
		{kind: "B.update", want: 11, runs: 5, svc: booking,
			prepare: func(t *testing.T, f *fixture, n int) { f.book(t, n) },
			run: func(t *testing.T, f *fixture, i int) {
				s := f.stays[i]
				f.b(t, "update", map[string]any{"bookingId": s.id, "checkin": apitest.Day(s.day + 1), "checkout": apitest.Day(s.day + 2)})
			}},
		// B cancel: find bookings, insert ledger_ops, find bookings ×2, findAndModify
		// bookings, update booking_list.<account>, find nights, delete nights, delete
		// ledger_ops, insert outbox (the intent, as for an update) = 10.
		{kind: "B.cancel", want: 10, runs: 5, svc: booking,
			prepare: func(t *testing.T, f *fixture, n int) { f.book(t, n) },
			run:     func(t *testing.T, f *fixture, i int) { f.b(t, "cancel", map[string]any{"bookingId": f.stays[i].id}) }},
		// B getinfo, a quote: booking-svc's view of the property is in memory; find nights
		// (is the stay free) = 1.
		{kind: "B.getinfo", want: 1, runs: 5, svc: booking,
			run: func(t *testing.T, f *fixture, i int) {
				f.b(t, "getinfo", map[string]any{"propertyId": f.pid, "numberofadults": 2,
					"checkin": apitest.Day(300 + i), "checkout": apitest.Day(302 + i)})
			}},
		// A property update (POST /api/property, action update), a new name each time: insert
		// outbox (the intent, through the Inserter), findAndModify properties (made with the
		// concurrent updates of the property, one per request that waited for it) = 2. The
		// internal_code's property is known since the create (property-svc's code hints).
		{kind: "A.property.update", want: 2, runs: 5, svc: property,
			run: func(t *testing.T, f *fixture, i int) {
				body := strings.Replace(demo.Property, `"Seaside Villa with Garden"`, fmt.Sprintf(`"Seaside Villa with Garden %d"`, i), 1)
				f.a(t, "property", `{"action":"update","property":`+f.coded(body)+`}`)
			}},
		// A property-rate, the rates replaced, a new daily price each time: find codes, find
		// properties (the maxguest the rates are checked against), findAndModify properties,
		// insert outbox (the intent, as above) = 4.
		{kind: "A.property-rate", want: 4, runs: 5, svc: property,
			run: func(t *testing.T, f *fixture, i int) { f.a(t, "property-rate", f.rates(100+i)) }},
	}

	f := newFixture(t)
	var report strings.Builder
	failed := false
	fmt.Fprintf(&report, "%-20s %8s %10s  %s\n", "kind", "want", "measured", "commands the service ran meanwhile (background work included)")
	for _, r := range rows {
		if r.prepare != nil {
			r.prepare(t, f, r.runs+1)
		}
		// One request first, unmeasured: what a replica does once (a cache filled) is not
		// what the kind costs.
		r.run(t, f, r.runs)
		before := apitest.ScrapeMetrics(t, r.svc())
		for i := range r.runs {
			r.run(t, f, i)
		}
		after := apitest.ScrapeMetrics(t, r.svc())
		s0, n0 := opsOf(before, r.kind)
		s1, n1 := opsOf(after, r.kind)
		sum, n := s1-s0, n1-n0
		mean := math.NaN()
		if n > 0 {
			mean = sum / n
		}
		ok := n == float64(r.runs) && math.Abs(sum-r.want*n) < 1e-6
		mark := ""
		if !ok {
			failed, mark = true, "  <-- differs"
		}
		fmt.Fprintf(&report, "%-20s %8.2f %10.2f  (%g round trips over %g requests)%s\n    %s\n",
			r.kind, r.want, mean, sum, n, mark, delta(commands(before), commands(after)))
	}
	if failed {
		t.Errorf("store round trips per request differ from the table (roundtrips_test.go):\n%s", report.String())
	} else {
		t.Logf("store round trips per request:\n%s", report.String())
	}
}

// delta lists the commands counted in after and not in before, "find bookings ×3, …".
func delta(before, after map[string]float64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if d := after[k] - before[k]; d > 0 {
			out = append(out, fmt.Sprintf("%s ×%g", k, d))
		}
	}
	return strings.Join(out, ", ")
}

// fixture is the account and the bookable property the requests use.
type fixture struct {
	acc   demo.Account
	code  string
	pid   int
	day   int    // the next free day (from today) for a stay
	stays []stay // made by book, for the row being run
}

type stay struct {
	id  int64
	day int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	acc, err := apitest.NewAccount(http.DefaultClient, st.EdgeURL, adminToken, "Round Trips Owner")
	if err != nil {
		t.Fatal(err)
	}
	acc.EdgeURL = st.EdgeURL
	f := &fixture{acc: acc, code: "RT" + acc.AccountID, day: 20}
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	if err := apitest.PostA(http.DefaultClient, acc, "property", `{"action":"create","property":`+f.coded(demo.Property)+`}`, &created); err != nil {
		t.Fatal(err)
	}
	if f.pid, err = strconv.Atoi(created.Data.PropertyID); err != nil {
		t.Fatalf("property_id %q", created.Data.PropertyID)
	}
	f.a(t, "property-rate", f.rates(100))
	// booking-svc quotes the property once its view has it (status 16 or no rates before).
	eventually.Holds(t, "booking-svc prices the property", within, func() bool {
		s, _ := f.send(t, "getinfo", map[string]any{"propertyId": f.pid, "numberofadults": 2,
			"checkin": apitest.Day(300), "checkout": apitest.Day(302)})
		return s == 0
	})
	return f
}

// coded is body with the property's internal_code.
func (f *fixture) coded(body string) string {
	return strings.Replace(body, `"DEMO1"`, `"`+f.code+`"`, 1)
}

// rates are rates bookable from today for a night or more, at daily a night.
func (f *fixture) rates(daily int) string {
	return apitest.JSON(map[string]any{"internal_code": f.code, "rate": map[string]any{"daily_price": daily, "minimum_stay": 1},
		"setting": map[string]any{"standard_occupants": 4, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}})
}

// create books one night, no card, on a day of its own (the next night stays free for an
// update to move it there); it returns the booking's id.
func (f *fixture) create(t *testing.T) stay {
	t.Helper()
	s := stay{day: f.day}
	f.day += 3
	var d struct {
		BookingID int64 `json:"bookingId"`
	}
	f.b(t, "create", map[string]any{"propertyId": f.pid, "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
		"numberofadults": 2, "leadsourceId": 1, "checkin": apitest.Day(s.day), "checkout": apitest.Day(s.day + 1)}, &d)
	if d.BookingID == 0 {
		t.Fatal("create: no bookingId")
	}
	s.id = d.BookingID
	return s
}

// book makes n stays for a row to change.
func (f *fixture) book(t *testing.T, n int) {
	t.Helper()
	f.stays = f.stays[:0]
	for range n {
		f.stays = append(f.stays, f.create(t))
	}
}

// b sends an interface B request through edge; an answer other than status 0 fails t. out,
// if any, receives the answer's data.
func (f *fixture) b(t *testing.T, action string, fields map[string]any, out ...any) {
	t.Helper()
	status, data := f.send(t, action, fields)
	if status != 0 {
		t.Fatalf("%s: status %d %s", action, status, data)
	}
	for _, o := range out {
		if err := json.Unmarshal(data, o); err != nil {
			t.Fatalf("%s: %s: %v", action, data, err)
		}
	}
}

func (f *fixture) send(t *testing.T, action string, fields map[string]any) (int, json.RawMessage) {
	t.Helper()
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, f.acc.BBody(action, fields))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Status  int             `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("%s: HTTP %d %s", action, r.Code, r.Body)
	}
	if a.Status != 0 {
		return a.Status, json.RawMessage(a.Message)
	}
	return 0, a.Data
}

// a sends an interface A request through edge; an answer other than 200 fails t.
func (f *fixture) a(t *testing.T, resource, body string) {
	t.Helper()
	if err := apitest.PostA(http.DefaultClient, f.acc, resource, body, nil); err != nil {
		t.Fatal(err)
	}
}
