package opentravel_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/opentravel"
	"github.com/vros/vros/testkit/fakepmsx"
	"github.com/vros/vros/testkit/otaschema"
)

var validator *otaschema.Validator

func TestMain(m *testing.M) {
	v, err := otaschema.Start(otaschema.Messages...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	validator = v
	code := m.Run()
	v.Close()
	os.Exit(code)
}

const (
	user = "vros-pms"
	pass = "S3cret!pmsx-pass"
)

type rig struct {
	fake    *fakepmsx.Server
	adapter *opentravel.Adapter
	conn    channel.Connection
	mapping channel.Mapping
	log     []channel.Exchange
	waits   []string
	sent    [][2]int
}

func newRig(t *testing.T) *rig {
	t.Helper()
	f := fakepmsx.New(validator, user, pass)
	t.Cleanup(f.Close)
	r := &rig{
		fake:    f,
		adapter: opentravel.New(&http.Client{Timeout: 5 * time.Second}),
		conn: channel.Connection{Account: "acc", ID: 7, Adapter: channel.OpenTravel, Endpoint: f.URL,
			Credentials: channel.Credentials{Username: user, Password: pass}, Enabled: true, Days: 500},
		mapping: channel.Mapping{Account: "acc", ConnectionID: 7, PropertyID: 12, RemotePropertyID: "HOTEL1", RoomTypeID: "VILLA",
			RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: "BAR"}, {RatePlanID: 3, RemoteRatePlanID: "NRF"}}},
	}
	return r
}

// push runs PushARI, checking that every request and answer it logged is schema-valid and
// that the password never reaches the log.
func (r *rig) push(t *testing.T, b channel.Batch) error {
	t.Helper()
	b.Connection, b.Mapping = r.conn, r.mapping
	if b.Currency == "" {
		b.Currency = "EUR"
	}
	err := r.adapter.PushARI(context.Background(), b,
		func(ctx context.Context, kind string) error { r.waits = append(r.waits, kind); return nil },
		func(av []channel.Availability, rs []channel.Rate) error {
			r.sent = append(r.sent, [2]int{len(av), len(rs)})
			return nil
		},
		func(x channel.Exchange) {
			r.log = append(r.log, x)
			if strings.Contains(string(x.Request), pass) {
				t.Errorf("the logged request holds the password: %s", x.Request)
			}
			if err := validator.Validate(x.Request); err != nil {
				t.Errorf("a request vros sent is not schema-valid: %v\n%s", err, x.Request)
			}
			if x.HTTPStatus == 200 {
				if err := validator.Validate(x.Response); err != nil {
					t.Errorf("an answer is not schema-valid: %v", err)
				}
			}
		})
	return err
}

func TestPushARIMapping(t *testing.T) {
	cases := []struct {
		name  string
		batch channel.Batch
		plan  string // "" availability
		date  string
		want  fakepmsx.Day
	}{
		{"available", channel.Batch{Availability: []channel.Availability{{From: "2027-01-01", To: "2027-01-05", Available: 1}}},
			"", "2027-01-03", fakepmsx.Day{Availability: "1"}},
		{"taken", channel.Batch{Availability: []channel.Availability{{From: "2027-01-01", To: "2027-01-01", Available: 0}}},
			"", "2027-01-01", fakepmsx.Day{Availability: "0"}},
		{"rate and open restrictions", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-02-01", To: "2027-02-03", Rate: "150.00", MinStayArrival: 1}}},
			"BAR", "2027-02-02", fakepmsx.Day{Rate: "150.00", Currency: "EUR", MinLOS: "1", Master: "Open", Arrival: "Open", Departure: "Open"}},
		{"currency of the property", channel.Batch{Currency: "CHF", Rates: []channel.Rate{{RemoteRatePlanID: "NRF", From: "2027-02-01", To: "2027-02-01", Rate: "99.5"}}},
			"NRF", "2027-02-01", fakepmsx.Day{Rate: "99.5", Currency: "CHF", Master: "Open", Arrival: "Open", Departure: "Open"}},
		{"min stay arrival", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", Rate: "10", MinStayArrival: 3}}},
			"BAR", "2027-03-01", fakepmsx.Day{Rate: "10", Currency: "EUR", MinLOS: "3", Master: "Open", Arrival: "Open", Departure: "Open"}},
		{"min stay through", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", Rate: "10", MinStayThrough: 4}}},
			"BAR", "2027-03-01", fakepmsx.Day{Rate: "10", Currency: "EUR", MinStay: "4", Master: "Open", Arrival: "Open", Departure: "Open"}},
		{"max stay", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", Rate: "10", MaxStay: 14}}},
			"BAR", "2027-03-01", fakepmsx.Day{Rate: "10", Currency: "EUR", MaxLOS: "14", Master: "Open", Arrival: "Open", Departure: "Open"}},
		{"closed to arrival", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", Rate: "10", ClosedToArrival: true}}},
			"BAR", "2027-03-01", fakepmsx.Day{Rate: "10", Currency: "EUR", Master: "Open", Arrival: "Close", Departure: "Open"}},
		{"closed to departure", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", Rate: "10", ClosedToDeparture: true}}},
			"BAR", "2027-03-01", fakepmsx.Day{Rate: "10", Currency: "EUR", Master: "Open", Arrival: "Open", Departure: "Close"}},
		{"stop sell", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", Rate: "10", StopSell: true}}},
			"BAR", "2027-03-01", fakepmsx.Day{Rate: "10", Currency: "EUR", Master: "Close", Arrival: "Open", Departure: "Open"}},
		{"no price: stop sell without a rate", channel.Batch{Rates: []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-03-01", To: "2027-03-01", StopSell: true}}},
			"BAR", "2027-03-01", fakepmsx.Day{Master: "Close", Arrival: "Open", Departure: "Open"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			if err := r.push(t, c.batch); err != nil {
				t.Fatal(err)
			}
			if got := r.fake.Day("HOTEL1", "VILLA", c.plan, c.date); got != c.want {
				t.Fatalf("the fake has %+v, want %+v", got, c.want)
			}
			for _, call := range r.fake.Calls() {
				if !call.Accepted {
					t.Fatalf("refused: %s", call.Refused)
				}
			}
		})
	}
}

func TestPushARIClearsRestrictions(t *testing.T) {
	r := newRig(t)
	set := channel.Rate{RemoteRatePlanID: "BAR", From: "2027-04-01", To: "2027-04-02", Rate: "80", MinStayArrival: 3, MinStayThrough: 2,
		MaxStay: 7, ClosedToArrival: true, ClosedToDeparture: true, StopSell: true}
	if err := r.push(t, channel.Batch{Rates: []channel.Rate{set}}); err != nil {
		t.Fatal(err)
	}
	cleared := channel.Rate{RemoteRatePlanID: "BAR", From: "2027-04-01", To: "2027-04-02", Rate: "85"}
	if err := r.push(t, channel.Batch{Rates: []channel.Rate{cleared}}); err != nil {
		t.Fatal(err)
	}
	want := fakepmsx.Day{Rate: "85", Currency: "EUR", Master: "Open", Arrival: "Open", Departure: "Open"}
	if got := r.fake.Day("HOTEL1", "VILLA", "BAR", "2027-04-02"); got != want {
		t.Fatalf("after clearing: %+v", got)
	}
	h := r.fake.History("HOTEL1", "VILLA", "BAR", "2027-04-01", "MinLOS")
	if len(h) != 2 || h[0].Value != "3" || h[1].Value != "" || h[0].Seq >= h[1].Seq {
		t.Fatalf("MinLOS history %+v", h)
	}
}

func TestPushARISplitsAndOrders(t *testing.T) {
	r := newRig(t)
	r.adapter.Limits.MaxMessages = 3
	var b channel.Batch
	for i := range 7 {
		d := fmt.Sprintf("2027-05-%02d", i+1)
		b.Availability = append(b.Availability, channel.Availability{From: d, To: d, Available: i % 2})
	}
	for i := range 4 {
		d := fmt.Sprintf("2027-06-%02d", i+1)
		b.Rates = append(b.Rates, channel.Rate{RemoteRatePlanID: "BAR", From: d, To: d, Rate: fmt.Sprint(100 + i)})
	}
	if err := r.push(t, b); err != nil {
		t.Fatal(err)
	}
	// 7 availability ranges by 3; 4 rate ranges one by one (3 messages of restrictions each)
	wantKinds := "availability,availability,availability,restrictions,rates,restrictions,rates,restrictions,rates,restrictions,rates"
	if got := strings.Join(r.waits, ","); got != wantKinds {
		t.Fatalf("waits %s", got)
	}
	var kinds []string
	for _, c := range r.fake.Accepted("") {
		kinds = append(kinds, c.Kind)
	}
	if got := strings.Join(kinds, ","); got != wantKinds {
		t.Fatalf("the fake received %s", got)
	}
	if fmt.Sprint(r.sent) != "[[3 0] [3 0] [1 0] [0 1] [0 1] [0 1] [0 1]]" {
		t.Fatalf("sent %v", r.sent)
	}
	if r.log[0].From != "2027-05-01" || r.log[0].To != "2027-05-03" || r.log[0].Kind != channel.KindAvailability {
		t.Fatalf("first exchange %+v", r.log[0])
	}
	for i := range 7 {
		d := fmt.Sprintf("2027-05-%02d", i+1)
		if got := r.fake.Availability("HOTEL1", "VILLA", d); got != fmt.Sprint(i%2) {
			t.Fatalf("%s: %q", d, got)
		}
	}
}

func TestPushARIErrors(t *testing.T) {
	batch := channel.Batch{Availability: []channel.Availability{{From: "2027-01-01", To: "2027-01-02", Available: 1}}}
	cases := []struct {
		name       string
		fault      fakepmsx.Fault
		setup      func(r *rig)
		retryable  bool
		status     int
		retryAfter time.Duration
		text       string
	}{
		{name: "HTTP 500", fault: fakepmsx.Fault500, retryable: true, status: 500},
		{name: "HTTP 503 with Retry-After", fault: fakepmsx.Fault503, retryable: true, status: 503, retryAfter: time.Second},
		{name: "HTTP 429", fault: fakepmsx.Fault429, retryable: true, status: 429, retryAfter: time.Second},
		{name: "SOAP fault", fault: fakepmsx.FaultSOAP, retryable: true, status: 500, text: "SOAP Fault"},
		{name: "timeout", fault: fakepmsx.FaultSlow, retryable: true, setup: func(r *rig) { r.adapter.HTTP.Timeout = 200 * time.Millisecond }},
		{name: "refused credentials", setup: func(r *rig) { r.conn.Password = "wrong" }, status: 200, text: "Invalid WS-Security credentials"},
		{name: "refused content", setup: func(r *rig) { r.mapping.RoomTypeID = "" }, status: 200, text: "InvTypeCode"},
		{name: "unreachable", setup: func(r *rig) { r.conn.Endpoint = "http://127.0.0.1:1/x" }, retryable: true},
		{name: "throttled", setup: func(r *rig) { r.fake.SetLimits(fakepmsx.Limits{MaxMessages: 0, MaxBytes: 100}) }, retryable: true, status: 500, text: "Throttle limit reached"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			if c.fault != "" {
				r.fake.Fail(1, c.fault)
			}
			if c.setup != nil {
				c.setup(r)
			}
			err := r.push(t, batch)
			var re *channel.RemoteError
			if !errors.As(err, &re) {
				t.Fatalf("want a RemoteError, got %v", err)
			}
			if re.Retryable != c.retryable || re.Status != c.status || re.RetryAfter != c.retryAfter || !strings.Contains(re.Message, c.text) {
				t.Fatalf("got %+v", re)
			}
			if len(r.sent) != 0 {
				t.Fatalf("sent reported for a failed request: %v", r.sent)
			}
			if len(r.log) != 1 || r.log[0].Err == nil {
				t.Fatalf("log %+v", r.log)
			}
		})
	}
}

func TestPushARIStopsOnWaitAndSent(t *testing.T) {
	r := newRig(t)
	b := channel.Batch{Connection: r.conn, Mapping: r.mapping, Currency: "EUR",
		Availability: []channel.Availability{{From: "2027-01-01", To: "2027-01-02", Available: 1}},
		Rates:        []channel.Rate{{RemoteRatePlanID: "BAR", From: "2027-01-01", To: "2027-01-02", Rate: "1"}}}
	stop := errors.New("limited")
	err := r.adapter.PushARI(context.Background(), b, func(context.Context, string) error { return stop },
		func([]channel.Availability, []channel.Rate) error { return nil }, func(channel.Exchange) {})
	if !errors.Is(err, stop) || len(r.fake.Calls()) != 0 {
		t.Fatalf("wait's error: %v, %d calls", err, len(r.fake.Calls()))
	}
	err = r.adapter.PushARI(context.Background(), b, func(context.Context, string) error { return nil },
		func([]channel.Availability, []channel.Rate) error { return stop }, func(channel.Exchange) {})
	if !errors.Is(err, stop) || len(r.fake.Calls()) != 1 {
		t.Fatalf("sent's error: %v, %d calls", err, len(r.fake.Calls()))
	}
}

func TestTest(t *testing.T) {
	r := newRig(t)
	var log []channel.Exchange
	rec := func(x channel.Exchange) { log = append(log, x) }
	if err := r.adapter.Test(context.Background(), r.conn, rec); err != nil {
		t.Fatal(err)
	}
	if c := r.fake.Calls(); len(c) != 1 || c[0].Kind != "test" || !c[0].Accepted {
		t.Fatalf("calls %+v", c)
	}
	bad := r.conn
	bad.Password = "nope"
	if err := r.adapter.Test(context.Background(), bad, rec); err == nil {
		t.Fatal("bad credentials passed the test")
	}
	if len(log) != 2 || log[0].Kind != channel.KindTest || log[1].Err == nil {
		t.Fatalf("log %+v", log)
	}
	if revs, err := r.adapter.PullRevisions(context.Background(), r.conn, rec); err != nil || revs != nil {
		t.Fatalf("pull: %v %v", revs, err)
	}
	if err := r.adapter.Ack(context.Background(), r.conn, channel.Revision{}, rec); err != nil {
		t.Fatal(err)
	}
}

func TestPushARISplitsBySize(t *testing.T) {
	r := newRig(t)
	r.adapter.Limits.MaxBytes = 2500 // a few messages
	r.fake.SetLimits(fakepmsx.Limits{MaxBytes: 2500})
	var b channel.Batch
	for i := range 12 {
		d := fmt.Sprintf("2027-05-%02d", i+1)
		b.Availability = append(b.Availability, channel.Availability{From: d, To: d, Available: 1})
		b.Rates = append(b.Rates, channel.Rate{RemoteRatePlanID: "BAR", From: d, To: d, Rate: "100.00", MinStayArrival: 2})
	}
	if err := r.push(t, b); err != nil {
		t.Fatal(err)
	}
	calls := r.fake.Calls()
	if len(calls) < 4 {
		t.Fatalf("%d requests: not split", len(calls))
	}
	for _, c := range calls {
		if !c.Accepted || len(c.Body) > 2500 {
			t.Fatalf("a request of %d bytes: %s", len(c.Body), c.Refused)
		}
	}
	var av, rs int
	for _, s := range r.sent {
		av, rs = av+s[0], rs+s[1]
	}
	if av != 12 || rs != 12 {
		t.Fatalf("sent %d availability and %d rate ranges", av, rs)
	}
	if d := r.fake.Day("HOTEL1", "VILLA", "BAR", "2027-05-12"); d.Rate != "100.00" || d.MinLOS != "2" {
		t.Fatalf("last date %+v", d)
	}
}

func TestPushARIKeepsTheRequestRate(t *testing.T) {
	r := newRig(t)
	// two requests per (long) minute: the third waits for the window
	r.adapter.Limits = opentravel.Limits{RequestsPerMinute: 2, Concurrent: 3, MaxMessages: 1, Window: time.Hour}
	b := channel.Batch{Availability: []channel.Availability{
		{From: "2027-01-01", To: "2027-01-01", Available: 1}, {From: "2027-01-02", To: "2027-01-02", Available: 0},
		{From: "2027-01-03", To: "2027-01-03", Available: 1}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Connection, b.Mapping, b.Currency = r.conn, r.mapping, "EUR"
	var sent int
	// once two are sent, the push is abandoned: the third is waiting for the window (the
	// limiter answers the context's error), not sent (a RemoteError)
	err := r.adapter.PushARI(ctx, b, nil, func(av []channel.Availability, _ []channel.Rate) error {
		if sent += len(av); sent == 2 {
			cancel()
		}
		return nil
	}, func(channel.Exchange) {})
	var re *channel.RemoteError
	if !errors.Is(err, context.Canceled) || errors.As(err, &re) || sent != 2 || len(r.fake.Calls()) != 2 {
		t.Fatalf("err %v, sent %d, %d requests", err, sent, len(r.fake.Calls()))
	}
}
