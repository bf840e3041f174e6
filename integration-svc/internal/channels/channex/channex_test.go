package channex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/testkit/fakechannex"
)

// clock is the manual clock the fake and the adapter share: the adapter's sleeps move it,
// so that rate limits and Retry-After are kept without real waiting.
type clock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	return nil
}
func (c *clock) slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum time.Duration
	for _, d := range c.sleeps {
		sum += d
	}
	return sum
}

type env struct {
	fake  *fakechannex.Server
	clock *clock
	prop  fakechannex.Property
	conn  channel.Connection
	m     channel.Mapping
	ad    *Adapter
	ex    []channel.Exchange
	sent  [][2]int // per sent() call: availability ranges, rate ranges
	waits []string
	mu    sync.Mutex
}

func newEnv(t *testing.T, o Options) *env {
	t.Helper()
	c := &clock{t: time.Date(2027, 1, 5, 9, 0, 0, 0, time.UTC)}
	fake := fakechannex.Start(t, fakechannex.Options{Now: c.Now})
	p := fake.CertificationProperty("key-1")
	o.Now, o.Sleep = c.Now, c.Sleep
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	e := &env{fake: fake, clock: c, prop: p, ad: New(o),
		conn: channel.Connection{Account: "a", ID: 7, Adapter: channel.Channex, Endpoint: fake.URL(),
			Credentials: channel.Credentials{APIKey: "key-1"}},
	}
	e.m = channel.Mapping{ConnectionID: 7, PropertyID: 12, RemotePropertyID: p.ID, RoomTypeID: p.RoomTypes[0].ID,
		RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: p.RoomTypes[0].RatePlans[0]},
			{RatePlanID: 3, RemoteRatePlanID: p.RoomTypes[0].RatePlans[1]}}}
	return e
}

func (e *env) record(ex channel.Exchange) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ex = append(e.ex, ex)
}

func (e *env) push(ctx context.Context, b channel.Batch) error {
	b.Connection, b.Mapping = e.conn, e.m
	return e.ad.PushARI(ctx, b, func(_ context.Context, kind string) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.waits = append(e.waits, kind)
		return nil
	}, func(av []channel.Availability, rates []channel.Rate) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.sent = append(e.sent, [2]int{len(av), len(rates)})
		return nil
	}, e.record)
}

func rate(plan, from, to, amount string) channel.Rate {
	return channel.Rate{RemoteRatePlanID: plan, From: from, To: to, Rate: amount, MinStayArrival: 1, MinStayThrough: 1}
}

// TestPushARIFields: every ARI field reaches Channex as the docs name it, availability
// before restrictions, one wait and one exchange per request, sent after each.
func TestPushARIFields(t *testing.T) {
	e := newEnv(t, Options{})
	bar, bb := e.m.RatePlans[0].RemoteRatePlanID, e.m.RatePlans[1].RemoteRatePlanID
	err := e.push(context.Background(), channel.Batch{Currency: "USD",
		Availability: []channel.Availability{{From: "2027-01-05", To: "2027-01-09", Available: 1}, {From: "2027-01-10", To: "2027-01-10", Available: 0}},
		Rates: []channel.Rate{
			rate(bar, "2027-01-05", "2027-01-07", "100.00"),
			{RemoteRatePlanID: bar, From: "2027-01-08", To: "2027-01-08", Rate: "150.5", MinStayArrival: 3, MinStayThrough: 2, MaxStay: 14},
			{RemoteRatePlanID: bar, From: "2027-01-09", To: "2027-01-09", Rate: "150.00", ClosedToArrival: true, ClosedToDeparture: true},
			{RemoteRatePlanID: bb, From: "2027-01-05", To: "2027-01-06", Rate: "120.00", StopSell: true},
			{RemoteRatePlanID: bb, From: "2027-01-07", To: "2027-01-07"}, // no price: no rate sent
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, date string
		avail      int
	}{{"range start", "2027-01-05", 1}, {"range end", "2027-01-09", 1}, {"single date", "2027-01-10", 0}} {
		if got, _, ok := e.fake.Availability(e.prop.ID, e.m.RoomTypeID, tc.date); !ok || got != tc.avail {
			t.Errorf("availability %s (%s): %d %v, want %d", tc.name, tc.date, got, ok, tc.avail)
		}
	}
	i := func(n int) *int { return &n }
	s := func(v string) *string { return &v }
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name, plan, date string
		want             fakechannex.Restrictions
	}{
		{"rate on a range", bar, "2027-01-06", fakechannex.Restrictions{Rate: s("100.00"), MinStayArrival: i(1), MinStayThrough: i(1), MaxStay: i(0), ClosedToArrival: b(false), ClosedToDeparture: b(false), StopSell: b(false)}},
		{"min stays and max stay", bar, "2027-01-08", fakechannex.Restrictions{Rate: s("150.50"), MinStayArrival: i(3), MinStayThrough: i(2), MaxStay: i(14), ClosedToArrival: b(false), ClosedToDeparture: b(false), StopSell: b(false)}},
		{"CTA and CTD", bar, "2027-01-09", fakechannex.Restrictions{Rate: s("150.00"), MinStayArrival: i(1), MinStayThrough: i(1), MaxStay: i(0), ClosedToArrival: b(true), ClosedToDeparture: b(true), StopSell: b(false)}},
		{"stop sell on a second plan", bb, "2027-01-05", fakechannex.Restrictions{Rate: s("120.00"), MinStayArrival: i(1), MinStayThrough: i(1), MaxStay: i(0), ClosedToArrival: b(false), ClosedToDeparture: b(false), StopSell: b(true)}},
		{"no price, min stay 0 sent as 1", bb, "2027-01-07", fakechannex.Restrictions{MinStayArrival: i(1), MinStayThrough: i(1), MaxStay: i(0), ClosedToArrival: b(false), ClosedToDeparture: b(false), StopSell: b(false)}},
	} {
		got, ok := e.fake.Restriction(e.prop.ID, tc.plan, tc.date)
		tc.want.PropertyID, tc.want.RatePlanID, tc.want.Date = e.prop.ID, tc.plan, tc.date
		if !ok || show(got) != show(tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, show(got), show(tc.want))
		}
	}
	calls := e.fake.Calls()
	if len(calls) != 2 || calls[0].Kind != fakechannex.KindAvailability || calls[1].Kind != fakechannex.KindRestrictions {
		t.Fatalf("calls %+v, want availability then restrictions", calls)
	}
	if len(calls[0].Values) != 2 || calls[0].Values[1].Date != "2027-01-10" || calls[0].Values[0].DateFrom != "2027-01-05" {
		t.Errorf("availability values %+v: a single date as date, a range as date_from/date_to", calls[0].Values)
	}
	if p := e.fake.Problems(); len(p) != 0 {
		t.Errorf("the fake refused or warned: %+v", p)
	}
	if len(e.ex) != 2 || e.ex[0].Kind != channel.KindAvailability || e.ex[0].From != "2027-01-05" || e.ex[0].To != "2027-01-10" ||
		e.ex[1].Kind != channel.KindRestrictions || e.ex[1].HTTPStatus != 200 || e.ex[1].Err != nil || e.ex[1].Warning != "" {
		t.Errorf("exchanges %+v", e.ex)
	}
	if strings.Join(e.waits, ",") != "availability,restrictions" || len(e.sent) != 2 || e.sent[0] != [2]int{2, 0} || e.sent[1] != [2]int{0, 5} {
		t.Errorf("waits %v, sent %v", e.waits, e.sent)
	}
}

func show(r fakechannex.Restrictions) string {
	f := func(p any) string {
		switch v := p.(type) {
		case *int:
			if v != nil {
				return strconv.Itoa(*v)
			}
		case *string:
			if v != nil {
				return *v
			}
		case *bool:
			if v != nil {
				if *v {
					return "true"
				}
				return "false"
			}
		}
		return "-"
	}
	return strings.Join([]string{r.Date, f(r.Rate), f(r.MinStayArrival), f(r.MinStayThrough), f(r.MaxStay),
		f(r.ClosedToArrival), f(r.ClosedToDeparture), f(r.StopSell)}, " ")
}

// TestPushARISplits: a batch larger than the body limit goes in several requests, each under
// it, every range in exactly one, sent called per request with that request's ranges.
func TestPushARISplits(t *testing.T) {
	e := newEnv(t, Options{MaxBody: 700})
	bar := e.m.RatePlans[0].RemoteRatePlanID
	var av []channel.Availability
	var rates []channel.Rate
	day := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 30; n++ {
		d := day.AddDate(0, 0, n).Format("2006-01-02")
		av = append(av, channel.Availability{From: d, To: d, Available: n % 2})
		rates = append(rates, rate(bar, d, d, strconv.Itoa(100+n)+".00"))
	}
	if err := e.push(context.Background(), channel.Batch{Availability: av, Rates: rates}); err != nil {
		t.Fatal(err)
	}
	calls := e.fake.Calls()
	if len(calls) < 4 {
		t.Fatalf("%d requests for 30+30 values in 700-byte bodies", len(calls))
	}
	var nav, nrates int
	for i, c := range calls {
		if len(c.Body) > 700 {
			t.Errorf("request %d is %d bytes", i, len(c.Body))
		}
		if c.Kind == fakechannex.KindAvailability {
			nav += len(c.Values)
			if nrates > 0 {
				t.Error("an availability request after a restrictions request")
			}
		} else {
			nrates += len(c.Values)
		}
	}
	var sav, srates int
	for _, s := range e.sent {
		sav, srates = sav+s[0], srates+s[1]
	}
	if nav != 30 || nrates != 30 || sav != 30 || srates != 30 || len(e.sent) != len(calls) {
		t.Errorf("values sent %d/%d, reported %d/%d in %d sent calls for %d requests", nav, nrates, sav, srates, len(e.sent), len(calls))
	}
	for n := 0; n < 30; n++ {
		d := day.AddDate(0, 0, n).Format("2006-01-02")
		if got, _, _ := e.fake.Availability(e.prop.ID, e.m.RoomTypeID, d); got != n%2 {
			t.Errorf("%s: availability %d", d, got)
		}
	}

	// MaxValues bounds the change objects per request.
	e2 := newEnv(t, Options{MaxValues: 7})
	if err := e2.push(context.Background(), channel.Batch{Availability: av}); err != nil {
		t.Fatal(err)
	}
	if n := len(e2.fake.Calls()); n != 5 {
		t.Errorf("30 values by 7: %d requests, want 5", n)
	}
}

// TestOwnRateLimit: 25 requests of one property's availability are spread so that Channex's
// 10 a minute is never exceeded: the fake (same clock) answers no 429, the adapter slept.
func TestOwnRateLimit(t *testing.T) {
	e := newEnv(t, Options{MaxValues: 1})
	var av []channel.Availability
	day := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 25; n++ {
		d := day.AddDate(0, 0, n).Format("2006-01-02")
		av = append(av, channel.Availability{From: d, To: d, Available: 1})
	}
	if err := e.push(context.Background(), channel.Batch{Availability: av}); err != nil {
		t.Fatal(err)
	}
	if p := e.fake.Problems(); len(p) != 0 {
		t.Errorf("the fake refused %d requests: %+v", len(p), p[0])
	}
	if got := e.clock.slept(); got < 2*time.Minute {
		t.Errorf("slept %v for 25 requests at 10 a minute, want ≥ 2m", got)
	}
	// Another property is not held by the first one's limit.
	q := e.fake.CertificationProperty("key-1")
	before := e.clock.slept()
	m := e.m
	m.RemotePropertyID, m.RoomTypeID = q.ID, q.RoomTypes[0].ID
	if err := e.ad.PushARI(context.Background(), channel.Batch{Connection: e.conn, Mapping: m, Availability: av[:5]}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if e.clock.slept() != before {
		t.Error("a second property waited for the first one's limit")
	}
}

// TestRemoteErrors: which answers are retryable, with what wait and message.
func TestRemoteErrors(t *testing.T) {
	batch := func(e *env) channel.Batch {
		return channel.Batch{Availability: []channel.Availability{{From: "2027-01-05", To: "2027-01-06", Available: 1}}}
	}
	t.Run("429 with Retry-After, then success after the wait", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.fake.FailNext(1, fakechannex.Fault{Status: 429, RetryAfter: 30 * time.Second})
		err := e.push(context.Background(), batch(e))
		var re *channel.RemoteError
		if !errors.As(err, &re) || re.Status != 429 || !re.Retryable || re.RetryAfter != 30*time.Second {
			t.Fatalf("err %#v", err)
		}
		if len(e.sent) != 0 || len(e.ex) != 1 || e.ex[0].HTTPStatus != 429 || e.ex[0].Err == nil {
			t.Errorf("sent %v exchanges %+v", e.sent, e.ex)
		}
		if err := e.push(context.Background(), batch(e)); err != nil {
			t.Fatal(err)
		}
		if got := e.clock.slept(); got < 30*time.Second {
			t.Errorf("the retry slept %v, want ≥ the 30s asked", got)
		}
		calls := e.fake.Calls()
		if gap := calls[1].At.Sub(calls[0].At); gap < 30*time.Second {
			t.Errorf("the retry came %v after the 429", gap)
		}
	})
	t.Run("429 without Retry-After pauses a minute", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.fake.FailNext(1, fakechannex.Fault{Status: 429})
		var re *channel.RemoteError
		if err := e.push(context.Background(), batch(e)); !errors.As(err, &re) || !re.Retryable || re.RetryAfter != 0 {
			t.Fatalf("err %#v", err)
		}
		if err := e.push(context.Background(), batch(e)); err != nil {
			t.Fatal(err)
		}
		if got := e.clock.slept(); got < time.Minute {
			t.Errorf("slept %v", got)
		}
	})
	t.Run("500 is retryable", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.fake.FailNext(1, fakechannex.Fault{Status: 500})
		var re *channel.RemoteError
		if err := e.push(context.Background(), batch(e)); !errors.As(err, &re) || re.Status != 500 || !re.Retryable {
			t.Fatalf("err %#v", err)
		}
	})
	t.Run("422 is final, with Channex's message", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.fake.FailNext(1, fakechannex.Fault{Status: 422})
		var re *channel.RemoteError
		if err := e.push(context.Background(), batch(e)); !errors.As(err, &re) || re.Status != 422 || re.Retryable ||
			!strings.Contains(re.Message, "injected refusal") {
			t.Fatalf("err %#v", err)
		}
	})
	t.Run("401 is final", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.conn.APIKey = "wrong"
		var re *channel.RemoteError
		if err := e.push(context.Background(), batch(e)); !errors.As(err, &re) || re.Status != 401 || re.Retryable || re.Message != "Unauthorized" {
			t.Fatalf("err %#v", err)
		}
	})
	t.Run("a slow answer is a retryable timeout", func(t *testing.T) {
		e := newEnv(t, Options{Timeout: 300 * time.Millisecond})
		e.fake.FailNext(1, fakechannex.Fault{Delay: 5 * time.Second})
		var re *channel.RemoteError
		if err := e.push(context.Background(), batch(e)); !errors.As(err, &re) || re.Status != 0 || !re.Retryable {
			t.Fatalf("err %#v", err)
		}
	})
	t.Run("an unreachable endpoint is retryable", func(t *testing.T) {
		e := newEnv(t, Options{})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		e.conn.Endpoint = "http://" + ln.Addr().String()
		ln.Close()
		var re *channel.RemoteError
		if err := e.push(context.Background(), batch(e)); !errors.As(err, &re) || !re.Retryable {
			t.Fatalf("err %#v", err)
		}
	})
	t.Run("warnings are logged, the request is ok", func(t *testing.T) {
		e := newEnv(t, Options{})
		err := e.push(context.Background(), channel.Batch{Rates: []channel.Rate{rate(fakechannex.NewID(), "2027-01-05", "2027-01-05", "10.00")}})
		if err != nil || len(e.ex) != 1 || e.ex[0].Err != nil || !strings.Contains(e.ex[0].Warning, "rate_plan_id") {
			t.Fatalf("err %v exchanges %+v", err, e.ex)
		}
	})
	t.Run("a wait error stops the push before any request", func(t *testing.T) {
		e := newEnv(t, Options{})
		stop := errors.New("lease lost")
		err := e.ad.PushARI(context.Background(), channel.Batch{Connection: e.conn, Mapping: e.m, Availability: batch(e).Availability},
			func(context.Context, string) error { return stop }, nil, nil)
		if !errors.Is(err, stop) || len(e.fake.Calls()) != 0 {
			t.Fatalf("err %v, %d calls", err, len(e.fake.Calls()))
		}
	})
}

// TestRevisions: the feed read over its pages, each revision mapped with its card dropped
// (not in Raw, not in the log), Order from inserted_at; an ack removes one.
func TestRevisions(t *testing.T) {
	e := newEnv(t, Options{})
	var ids []string
	for n := 0; n < 150; n++ {
		r := e.fake.EnqueueRevision(fakechannex.Revision{PropertyID: e.prop.ID, ArrivalDate: "2027-02-01", DepartureDate: "2027-02-04",
			Amount: "450.00", Notes: "late arrival",
			Customer: fakechannex.Customer{Name: "Ada", Surname: "Lovelace", Mail: "ada@example.com", Phone: "+441234", Country: "gb"}})
		ids = append(ids, r.ID)
	}
	revs, err := e.ad.PullRevisions(context.Background(), e.conn, e.record)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 150 || len(e.ex) != 2 || e.ex[0].Kind != channel.KindRevisionsFeed {
		t.Fatalf("%d revisions in %d exchanges", len(revs), len(e.ex))
	}
	first, _ := e.fake.Revision(ids[0])
	r := revs[0]
	want := channel.Revision{ConnectionID: 7, RevisionID: ids[0], ReservationID: first.BookingID, Channel: "BookingCom",
		Status: "new", Order: first.InsertedAt.UnixNano(), RemotePropertyID: e.prop.ID, RoomTypeID: e.prop.RoomTypes[0].ID,
		RemoteRatePlanID: e.prop.RoomTypes[0].RatePlans[0], Checkin: "2027-02-01", Checkout: "2027-02-04", Adults: 2,
		Currency: "USD", Total: "450.00", Notes: "late arrival",
		Guest: channel.Guest{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone: "+441234", Country: "GB"}}
	r.Raw = nil
	if r.RevisionID != want.RevisionID || r.ReservationID != want.ReservationID || r.Order != want.Order || r.Guest != want.Guest ||
		r.Checkin != want.Checkin || r.Total != want.Total || r.RoomTypeID != want.RoomTypeID || r.RemoteRatePlanID != want.RemoteRatePlanID ||
		r.Adults != 2 || r.Currency != "USD" || r.Channel != "BookingCom" || r.Status != "new" || r.Notes != want.Notes || r.ConnectionID != 7 {
		t.Errorf("revision\n%+v\nwant\n%+v", r, want)
	}
	for i := 1; i < len(revs); i++ {
		if revs[i].Order <= revs[i-1].Order || revs[i].RevisionID != ids[i] {
			t.Fatalf("revision %d out of the feed's order", i)
		}
	}
	card := fakechannex.TestCard
	for _, b := range [][]byte{revs[0].Raw, e.ex[0].Response, e.ex[1].Response} {
		if bytes.Contains(b, []byte(card.CardNumber)) || bytes.Contains(b, []byte(`"`+card.CVV+`"`)) || bytes.Contains(b, []byte(card.ExpirationDate)) {
			t.Errorf("card data in %s", cut(string(b), 400))
		}
	}
	if !bytes.Contains(revs[0].Raw, []byte(ids[0])) || !bytes.Contains(revs[0].Raw, []byte("Lovelace")) {
		t.Errorf("Raw %s", revs[0].Raw)
	}
	if err := e.ad.Ack(context.Background(), e.conn, revs[0], e.record); err != nil {
		t.Fatal(err)
	}
	if acks := e.fake.Acks(); len(acks) != 1 || acks[0].RevisionID != ids[0] || !acks[0].Known {
		t.Errorf("acks %+v", acks)
	}
	if e.ex[2].Kind != channel.KindAck || e.ex[2].HTTPStatus != 200 {
		t.Errorf("ack exchange %+v", e.ex[2])
	}
	revs, err = e.ad.PullRevisions(context.Background(), e.conn, nil)
	if err != nil || len(revs) != 149 || revs[0].RevisionID != ids[1] {
		t.Errorf("after the ack: %d revisions, %v", len(revs), err)
	}
	// An ack of a revision Channex does not know is a final error.
	var re *channel.RemoteError
	if err := e.ad.Ack(context.Background(), e.conn, channel.Revision{RevisionID: fakechannex.NewID()}, nil); !errors.As(err, &re) || re.Status != 404 || re.Retryable {
		t.Errorf("ack of an unknown revision: %#v", err)
	}
}

func TestTestAndWebhook(t *testing.T) {
	e := newEnv(t, Options{})
	if err := e.ad.Test(context.Background(), e.conn, e.record); err != nil || len(e.ex) != 1 || e.ex[0].Kind != channel.KindTest {
		t.Fatalf("test: %v %+v", err, e.ex)
	}
	if e.fake.Calls()[0].Path != "/api/v1/properties" {
		t.Errorf("test read %s", e.fake.Calls()[0].Path)
	}
	bad := e.conn
	bad.APIKey = "nope"
	var re *channel.RemoteError
	if err := e.ad.Test(context.Background(), bad, nil); !errors.As(err, &re) || re.Status != 401 || re.Retryable {
		t.Errorf("test with a wrong key: %#v", err)
	}
	// The endpoint may name /api/v1 or not.
	withAPI := e.conn
	withAPI.Endpoint = e.fake.URL() + "/api/v1/"
	if err := e.ad.Test(context.Background(), withAPI, nil); err != nil {
		t.Errorf("endpoint with /api/v1: %v", err)
	}

	// Options.Client picks the client per connection; its failure is a retryable error.
	var asked []string
	picky := New(Options{Client: func(_ context.Context, c channel.Connection) (*http.Client, error) {
		asked = append(asked, c.Account)
		if c.Account == "down" {
			return nil, errors.New("policy store down")
		}
		return http.DefaultClient, nil
	}})
	if err := picky.Test(context.Background(), e.conn, nil); err != nil || len(asked) != 1 || asked[0] != "a" {
		t.Errorf("client hook: %v %v", err, asked)
	}
	down := e.conn
	down.Account = "down"
	if err := picky.Test(context.Background(), down, nil); !errors.As(err, &re) || !re.Retryable {
		t.Errorf("client hook failing: %#v", err)
	}

	for _, tc := range []struct {
		name string
		body string
		pull bool
		bad  string
	}{
		{"booking", `{"event":"booking","payload":{"booking_id":"b","property_id":"p","revision_id":"r"},"property_id":"p","timestamp":"2027-01-05T09:00:00Z","user_id":null}`, true, ""},
		{"booking_new", `{"event":"booking_new","payload":{"revision_id":"r"}}`, true, ""},
		{"booking_cancellation", `{"event":"booking_cancellation","payload":{}}`, true, ""},
		{"non_acked_booking", `{"event":"non_acked_booking"}`, true, ""},
		{"ari is taken and ignored", `{"event":"ari","payload":[{"date":"2027-01-05"}]}`, false, ""},
		{"not JSON", `event=booking`, false, "body"},
		{"no event", `{"payload":{}}`, false, "event"},
		{"event not a string", `{"event":5}`, false, "body"},
		{"payload a string", `{"event":"booking","payload":"x"}`, false, "payload"},
	} {
		in, err := e.ad.Receive(context.Background(), e.conn, []byte(tc.body))
		var ie *channel.InboundError
		switch {
		case tc.bad != "" && (!errors.As(err, &ie) || ie.Field != tc.bad):
			t.Errorf("%s: err %v, want an InboundError on %s", tc.name, err, tc.bad)
		case tc.bad == "" && (err != nil || in.Pull != tc.pull || in.Kind != channel.KindWebhook):
			t.Errorf("%s: %+v %v", tc.name, in, err)
		}
	}
	ct, body, status := e.ad.Reply(channel.Inbound{Pull: true, Kind: channel.KindWebhook}, nil, nil)
	if ct != "application/json" || status != 200 || !bytes.Contains(body, []byte("received")) {
		t.Errorf("reply %s %d %s", ct, status, body)
	}
	if _, _, status := e.ad.Reply(channel.Inbound{}, nil, errors.New("store down")); status != 503 {
		t.Errorf("reply on error: %d", status)
	}
	// An unreadable webhook is refused for good (400), not retried (503).
	if _, body, status := e.ad.Reply(channel.Inbound{}, nil, &channel.InboundError{Field: "event", Message: "required"}); status != 400 ||
		!bytes.Contains(body, []byte("event")) {
		t.Errorf("reply on an unreadable webhook: %d %s", status, body)
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"guarantee keys", `{"guarantee":{"card_number":"4111111111111111","cvv":"737","expiration_date":"12/2030","card_type":"visa"}}`,
			`{"guarantee":{"card_number":"***","card_type":"visa","cvv":"***","expiration_date":"***"}}`},
		{"a card number elsewhere keeps its last four", `{"notes":"card 4111 1111 1111 1111 thanks"}`, `{"notes":"card ************1111 thanks"}`},
		{"not JSON", `pan=5555555555554444&x=1`, `pan=************4444&x=1`},
		{"a phone number is no card", `{"phone":"+441234567890123"}`, `{"phone":"+441234567890123"}`},
		{"uuids untouched", `{"id":"0b0a6b1e-1234-4abc-8def-123456789012"}`, `{"id":"0b0a6b1e-1234-4abc-8def-123456789012"}`},
	} {
		if got := string(Mask([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestRevisionCommission: a revision's ota_commission (what the OTA keeps) is read as a
// decimal ≥ 0, written as a number or a string; null, absent, negative or not a decimal is
// "not reported", never a reason to refuse the revision. Through the fake, the wire's string.
func TestRevisionCommission(t *testing.T) {
	for _, tc := range []struct{ attr, want string }{
		{`"ota_commission":"67.50"`, "67.50"},
		{`"ota_commission":67.5`, "67.5"},
		{`"ota_commission":0`, "0"},
		{`"ota_commission":null`, ""},
		{`"other":1`, ""},
		{`"ota_commission":"-3.00"`, ""},
		{`"ota_commission":"1e3"`, ""},
		{`"ota_commission":"lots"`, ""},
		{`"ota_commission":{"amount":"1"}`, ""},
		{`"ota_commission":"450.00"`, "450.00"},
		{`"ota_commission":"450.01"`, ""},
	} {
		r, err := revision(channel.Connection{ID: 7}, feedItem{ID: "rev1", Type: "booking_revision",
			Attributes: json.RawMessage(`{"booking_id":"b1","status":"new","amount":"450.00",` + tc.attr + `}`)})
		if err != nil || r.Commission != tc.want || r.Total != "450.00" {
			t.Errorf("%s: commission %q (%v), want %q", tc.attr, r.Commission, err, tc.want)
		}
	}
	e := newEnv(t, Options{})
	e.fake.EnqueueRevision(fakechannex.Revision{PropertyID: e.prop.ID, ArrivalDate: "2027-02-01", DepartureDate: "2027-02-04",
		Amount: "450.00", OTACommission: "67.50"})
	e.fake.EnqueueRevision(fakechannex.Revision{PropertyID: e.prop.ID, ArrivalDate: "2027-03-01", DepartureDate: "2027-03-04", Amount: "300.00"})
	revs, err := e.ad.PullRevisions(context.Background(), e.conn, e.record)
	if err != nil || len(revs) != 2 || revs[0].Commission != "67.50" || revs[1].Commission != "" {
		t.Fatalf("%d revisions (%v): %+v", len(revs), err, revs)
	}
}
