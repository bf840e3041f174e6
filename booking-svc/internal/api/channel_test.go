package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/together"
)

// channelDo posts body to /internal/channel/reservation for account, signed as
// integration-svc signs it.
func (s *server) channelDo(t *testing.T, account, body string) (int, map[string]any) {
	t.Helper()
	const path = "/internal/channel/reservation"
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerIntegration, integrationKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account},
		http.MethodPost, path, []byte(body), time.Now())
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Errorf("answer %d is not JSON: %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// rev is a revision body: status, reservation and revision ids, order, dates and total.
type rev struct {
	status, res, rev string
	order            int64
	pid              int64
	in, out          string
	total            string
	plan             int64
}

func (r rev) adults() int {
	if r.res == "R10" {
		return 0
	}
	return 2
}

func (r rev) body() string {
	pid := r.pid
	if pid == 0 {
		pid = 7
	}
	return fmt.Sprintf(`{"connection_id":1,"channel":"BookingCom","reservation_id":%q,"revision_id":%q,"order":%d,"status":%q,
	 "property_id":%d,"rate_plan_id":%d,"checkin":%q,"checkout":%q,"adults":%d,"children":1,"currency":"EUR","total":%q,
	 "guest":{"first_name":"Chan","last_name":"Nel","email":"chan@example.com","phone":"+39 06 1234","country":"IT"},"notes":"late arrival"}`,
		r.res, r.rev, r.order, r.status, pid, r.plan, r.in, r.out, r.adults(), r.total)
}

func dates(from string, n int) []string {
	d, _ := time.Parse(time.DateOnly, from)
	out := make([]string, n)
	for i := range n {
		out[i] = d.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

// owners are who holds each of the dates of pid.
func (s *server) ownersOf(t *testing.T, account string, pid int64, ds []string) []string {
	t.Helper()
	out := make([]string, len(ds))
	for i, d := range ds {
		o, err := s.led.Owner(context.Background(), account, pid, d)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = o
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestChannelReservation: each rule of the route, in the order a reservation's life takes
// them, on one account.
func TestChannelReservation(t *testing.T) {
	s := newServer(t)
	acct := newAccount("chres")
	priceable(t, s, acct, 7)
	ctx := context.Background()
	other := s.book(t, acct, 7, "2027-05-20", 3, booking.Guest{FirstName: "Direct", Email: "d@example.com"}, 0)
	var id int64
	owner := func() string { return "booking:" + strconv.FormatInt(id, 10) }

	type want struct {
		code    int
		applied bool
		status  string
		version float64
	}
	check := func(name string, r rev, w want) map[string]any {
		t.Helper()
		code, out := s.channelDo(t, acct, r.body())
		if code != w.code {
			t.Fatalf("%s: %d %v, want %d", name, code, out, w.code)
		}
		if code == http.StatusOK {
			if out["applied"] != w.applied || out["status"] != w.status || out["version"] != w.version {
				t.Fatalf("%s: %v, want applied %v status %s version %v", name, out, w.applied, w.status, w.version)
			}
			if id == 0 {
				id = int64(out["booking_id"].(float64))
			} else if got := int64(out["booking_id"].(float64)); got != id {
				t.Fatalf("%s: booking %d, want %d", name, got, id)
			}
		}
		return out
	}

	// new → a reserved booking holding its nights, the channel's total, published.
	check("new", rev{status: "new", res: "R1", rev: "r1", order: 10, in: "2027-05-01", out: "2027-05-04", total: "450"},
		want{http.StatusOK, true, "reserved", 1})
	b, err := s.st.Booking(ctx, acct, id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Channel != "bookingcom" || b.Quote.GrandTotal != "450.00" || b.Quote.TotalRent != "450.00" || b.Quote.Currency != "EUR" ||
		b.Guest.FirstName != "Chan" || b.Guest.Phone1 != "+39 06 1234" || b.Guest.Other != "late arrival" || b.Adults != 2 || b.Children != 1 ||
		b.ChannelRes == nil || b.ChannelRes.ReservationID != "R1" || b.ChannelRes.ConnectionID != 1 || b.RatePlanName != "Standard" {
		t.Fatalf("booking: %+v", b)
	}
	if n := b.Quote.Nightly; n["2027-05-01"] != "150.00" || n["2027-05-03"] != "150.00" {
		t.Errorf("nightly: %v", n)
	}
	if got := s.ownersOf(t, acct, 7, dates("2027-05-01", 3)); !reflect.DeepEqual(got, repeat(owner(), 3)) {
		t.Fatalf("ledger: %v", got)
	}
	if got := s.listed(t, acct, id); got["bookingId"] != float64(id) {
		t.Errorf("listbooking: %v", got)
	}
	eventually.Holds(t, "the reserved event", 10*time.Second, func() bool {
		m, ok := s.pub.latest()[store.BookingAggregate(acct, id)]
		if !ok {
			return false
		}
		var ev struct {
			Channel string `json:"channel"`
			Status  string `json:"status"`
		}
		ce, err := events.Decode(m.Value, &ev)
		return err == nil && ce.Type() == store.BookingReserved && ev.Channel == "bookingcom" && ev.Status == "reserved"
	})

	// The same revision again, and an older one: nothing changes.
	check("the same revision", rev{status: "new", res: "R1", rev: "r1", order: 10, in: "2027-05-01", out: "2027-05-04", total: "450"},
		want{http.StatusOK, false, "reserved", 1})
	check("an older revision", rev{status: "modified", res: "R1", rev: "r0", order: 5, in: "2027-06-01", out: "2027-06-04", total: "9"},
		want{http.StatusOK, false, "reserved", 1})

	// modified → new nights claimed, old ones released, total changed.
	check("modified", rev{status: "modified", res: "R1", rev: "r2", order: 20, in: "2027-05-02", out: "2027-05-06", total: "600.50"},
		want{http.StatusOK, true, "reserved", 2})
	if got := s.ownersOf(t, acct, 7, dates("2027-05-01", 5)); !reflect.DeepEqual(got, append([]string{""}, repeat(owner(), 4)...)) {
		t.Fatalf("ledger after the modification: %v", got)
	}
	if b, _ = s.st.Booking(ctx, acct, id); b.Quote.GrandTotal != "600.50" || b.Checkin != "2027-05-02" || len(b.ChannelRes.Revisions) != 2 {
		t.Fatalf("modified booking: %+v", b)
	}

	// modified onto nights another booking holds → 409 naming them, the booking unchanged.
	out := check("modified onto taken nights", rev{status: "modified", res: "R1", rev: "r3", order: 30, in: "2027-05-19", out: "2027-05-22", total: "1"},
		want{code: http.StatusConflict})
	cf, _ := out["conflict"].(map[string]any)
	if cf["reason"] != "nights_taken" || !reflect.DeepEqual(cf["nights"], []any{"2027-05-20", "2027-05-21"}) ||
		!reflect.DeepEqual(cf["booking_ids"], []any{float64(other.BookingID)}) {
		t.Fatalf("conflict: %v", out)
	}
	if b2, _ := s.st.Booking(ctx, acct, id); b2.Version != 2 || b2.Checkin != "2027-05-02" {
		t.Fatalf("the refused modification changed the booking: %+v", b2)
	}
	if got := s.ownersOf(t, acct, 7, dates("2027-05-19", 3)); !reflect.DeepEqual(got, []string{"", "booking:" + strconv.FormatInt(other.BookingID, 10), "booking:" + strconv.FormatInt(other.BookingID, 10)}) {
		t.Fatalf("ledger after the refusal: %v", got)
	}

	// A modification or cancellation of a reservation never seen → 404.
	for _, st := range []string{"modified", "cancelled"} {
		out := check(st+" of an unknown reservation", rev{status: st, res: "R-unknown", rev: "x", order: 1, in: "2027-07-01", out: "2027-07-02", total: "1"},
			want{code: http.StatusNotFound})
		if e, _ := out["error"].(map[string]any); e["code"] != "reservation_unknown" {
			t.Errorf("%s: %v", st, out)
		}
	}

	// cancelled → cancelled, nights released; again → applied false.
	check("cancelled", rev{status: "cancelled", res: "R1", rev: "r4", order: 40}, want{http.StatusOK, true, "cancelled", 3})
	if got := s.ownersOf(t, acct, 7, dates("2027-05-02", 4)); !reflect.DeepEqual(got, repeat("", 4)) {
		t.Fatalf("ledger after the cancellation: %v", got)
	}
	check("cancelled again", rev{status: "cancelled", res: "R1", rev: "r4", order: 40}, want{http.StatusOK, false, "cancelled", 3})
	check("modified after the cancellation", rev{status: "modified", res: "R1", rev: "r5", order: 50, in: "2027-05-02", out: "2027-05-03", total: "1"},
		want{http.StatusOK, false, "cancelled", 3})

	// new onto taken nights → 409, nothing booked; then a modification onto free nights
	// books it; a cancellation of a reservation that never booked answers booking 0.
	id = 0
	out = check("new onto taken nights", rev{status: "new", res: "R2", rev: "a1", order: 1, in: "2027-05-21", out: "2027-05-24", total: "300"},
		want{code: http.StatusConflict})
	if cf, _ := out["conflict"].(map[string]any); !reflect.DeepEqual(cf["nights"], []any{"2027-05-21", "2027-05-22"}) {
		t.Fatalf("conflict: %v", out)
	}
	if got := s.ownersOf(t, acct, 7, []string{"2027-05-23"}); got[0] != "" {
		t.Fatalf("a refused new holds a night: %v", got)
	}
	check("modified of the refused reservation onto free nights", rev{status: "modified", res: "R2", rev: "a2", order: 2, in: "2027-05-24",
		out: "2027-05-26", total: "200"}, want{http.StatusOK, true, "reserved", 1})
	id = 0
	check("new R3 refused", rev{status: "new", res: "R3", rev: "b1", order: 1, in: "2027-05-20", out: "2027-05-21", total: "1"}, want{code: http.StatusConflict})
	if code, out := s.channelDo(t, acct, rev{status: "cancelled", res: "R3", rev: "b2", order: 2}.body()); code != http.StatusOK ||
		out["booking_id"] != float64(0) || out["status"] != "cancelled" {
		t.Fatalf("cancel of a reservation never booked: %d %v", code, out)
	}

	// Invalid content → 422 naming the field; an unknown property or plan likewise.
	for _, tc := range []struct {
		name        string
		body        string
		code, field string
	}{
		{"checkout before checkin", rev{status: "new", res: "R9", rev: "z", in: "2027-08-03", out: "2027-08-01", total: "1"}.body(), "invalid", "checkout"},
		{"no total", strings.Replace(rev{status: "new", res: "R9", rev: "z", in: "2027-08-01", out: "2027-08-03", total: "1"}.body(), `"total":"1"`, `"total":""`, 1), "invalid", "total"},
		{"bad status", rev{status: "maybe", res: "R9", rev: "z", in: "2027-08-01", out: "2027-08-03", total: "1"}.body(), "invalid", "status"},
		{"unknown property", rev{status: "new", res: "R9", rev: "z", pid: 99, in: "2027-08-01", out: "2027-08-03", total: "1"}.body(), "unknown_property", "property_id"},
		{"unknown plan", rev{status: "new", res: "R9", rev: "z", plan: 5, in: "2027-08-01", out: "2027-08-03", total: "1"}.body(), "invalid", "rate_plan_id"},
	} {
		code, out := s.channelDo(t, acct, tc.body)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusUnprocessableEntity || e["code"] != tc.code || e["field"] != tc.field {
			t.Errorf("%s: %d %v, want 422 %s on %s", tc.name, code, out, tc.code, tc.field)
		}
	}
	// No adult said: booked for one.
	id = 0
	check("no adults", rev{status: "new", res: "R10", rev: "q1", order: 1, in: "2027-10-01", out: "2027-10-02", total: "1"}, want{http.StatusOK, true, "reserved", 1})
	if b, err := s.st.Booking(ctx, acct, id); err != nil || b.Adults != 1 {
		t.Fatalf("no adults: %+v %v", b, err)
	}
	if _, err := s.st.ReservationBooking(ctx, acct, 1, "R9"); err == nil {
		t.Error("a refused revision recorded its reservation")
	}

	// edge's key is not integration-svc's: an unsigned call is refused.
	req := httptest.NewRequest(http.MethodPost, "/internal/channel/reservation", strings.NewReader(`{}`))
	if resp, err := s.app.Test(req, -1); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned call: %v %v", resp, err)
	}
}

// TestChannelReservationConcurrent: fifty identical new revisions at once make one booking;
// then a direct booking and a channel booking of the same night at once, forty times: one
// wins each time, the other is refused (status 8 / 409), and the ledger holds exactly the
// winner's nights.
func TestChannelReservationConcurrent(t *testing.T) {
	s := newServer(t)
	acct := newAccount("chconc")
	priceable(t, s, acct, 7)
	ctx := context.Background()

	var ids sync64
	var applied atomic.Int64
	together.Run(50, func(int) {
		code, out := s.channelDo(t, acct, rev{status: "new", res: "C1", rev: "c1", order: 1, in: "2027-09-01", out: "2027-09-05", total: "400"}.body())
		if code != http.StatusOK {
			t.Errorf("concurrent new: %d %v", code, out)
			return
		}
		ids.add(int64(out["booking_id"].(float64)))
		if out["applied"] == true {
			applied.Add(1)
		}
	})
	if got := ids.distinct(); len(got) != 1 || applied.Load() != 1 {
		t.Fatalf("50 identical revisions made bookings %v, %d applied", got, applied.Load())
	}
	id := ids.distinct()[0]
	if got := s.ownersOf(t, acct, 7, dates("2027-09-01", 4)); !reflect.DeepEqual(got, repeat("booking:"+strconv.FormatInt(id, 10), 4)) {
		t.Fatalf("ledger: %v", got)
	}
	all, err := s.st.AccountBookings(ctx, acct)
	if err != nil || len(all) != 1 {
		t.Fatalf("the account holds %d bookings (%v)", len(all), err)
	}

	wins := map[string]int{}
	for i := range 40 {
		night := time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 2*i)
		in, out := night.Format(time.DateOnly), night.AddDate(0, 0, 1).Format(time.DateOnly)
		var direct, channel int
		var chOut map[string]any
		together.Run(2, func(k int) {
			if k == 0 {
				code, body := s.do(t, acct, http.MethodPost, "/internal/b/create", fmt.Sprintf(`{"propertyId":7,"checkin":%q,"checkout":%q,
				 "numberofadults":2,"firstName":"Di","lastName":"Rect","email":"direct@example.com","phone1":"+1 555 0100"}`, in, out))
				var b struct {
					Status int `json:"status"`
				}
				_ = json.Unmarshal(body, &b)
				direct = b.Status
				if b.Status != 0 && b.Status != httpapi.StatusDatesUnavailable {
					t.Errorf("direct create: %d %s", code, body)
				}
				return
			}
			channel, chOut = s.channelDo(t, acct, rev{status: "new", res: "D" + strconv.Itoa(i), rev: "d", order: 1, in: in, out: out, total: "100"}.body())
		})
		switch {
		case direct == 0 && channel == http.StatusConflict:
			wins["direct"]++
		case direct == httpapi.StatusDatesUnavailable && channel == http.StatusOK:
			wins["channel"]++
		default:
			t.Fatalf("round %d: direct status %d, channel %d %v", i, direct, channel, chOut)
		}
		o := s.ownersOf(t, acct, 7, []string{in})[0]
		kind, num, _ := strings.Cut(o, ":")
		bid, _ := strconv.ParseInt(num, 10, 64)
		b, err := s.st.Booking(ctx, acct, bid)
		if kind != "booking" || err != nil || b.Status != booking.StatusReserved || (b.ChannelRes != nil) != (channel == http.StatusOK) {
			t.Fatalf("round %d: the night is held by %q (%+v, %v)", i, o, b, err)
		}
	}
	t.Logf("wins: %v", wins)
}

// sync64 collects int64s from goroutines.
type sync64 struct {
	mu sync.Mutex
	v  []int64
}

func (s *sync64) add(v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v = append(s.v, v)
}

func (s *sync64) distinct() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.v)
	slices.Sort(out)
	return slices.Compact(out)
}
