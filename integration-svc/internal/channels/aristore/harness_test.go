package aristore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/integration-svc/internal/channels/aristore"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "aristore", &db, nil) }

var dbSeq atomic.Int64

// clock is the tests' clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// conns is channel.Connections over maps (a port implementation of the test's own).
type conns struct {
	mu       sync.Mutex
	conns    map[string]channel.Connection // "<account>:<id>"
	mappings map[string]channel.Mapping    // "<account>:<conn>:<property>"
}

var errUnused = errors.New("not used by ARI out")

func (c *conns) put(conn channel.Connection, ms ...channel.Mapping) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conns[fmt.Sprintf("%s:%d", conn.Account, conn.ID)] = conn
	for _, m := range ms {
		c.mappings[fmt.Sprintf("%s:%d:%d", m.Account, m.ConnectionID, m.PropertyID)] = m
	}
}

func (c *conns) NextID(context.Context) (int64, error)                   { return 0, errUnused }
func (c *conns) AddConnection(context.Context, channel.Connection) error { return errUnused }
func (c *conns) Connection(_ context.Context, account string, id int64) (channel.Connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.conns[fmt.Sprintf("%s:%d", account, id)]
	if !ok {
		return x, channel.ErrNotFound
	}
	return x, nil
}
func (c *conns) ConnectionByToken(context.Context, string, string) (channel.Connection, error) {
	return channel.Connection{}, errUnused
}
func (c *conns) ListConnections(context.Context, string) ([]channel.Connection, error) {
	return nil, errUnused
}
func (c *conns) EnabledConnections(_ context.Context, adapter string) ([]channel.Connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []channel.Connection
	for _, x := range c.conns {
		if x.Adapter == adapter && x.Enabled {
			out = append(out, x)
		}
	}
	return out, nil
}
func (c *conns) ModifyConnection(context.Context, string, int64, func(*channel.Connection) error) (channel.Connection, error) {
	return channel.Connection{}, errUnused
}
func (c *conns) DeleteConnection(context.Context, string, int64) error { return errUnused }
func (c *conns) AddMapping(context.Context, channel.Mapping) error     { return errUnused }
func (c *conns) Mapping(_ context.Context, account string, connection, property int64) (channel.Mapping, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.mappings[fmt.Sprintf("%s:%d:%d", account, connection, property)]
	if !ok {
		return m, channel.ErrNotFound
	}
	return m, nil
}
func (c *conns) Mappings(_ context.Context, account string, connection, property int64) ([]channel.Mapping, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []channel.Mapping
	for _, m := range c.mappings {
		if m.Account == account && (connection == 0 || m.ConnectionID == connection) && (property == 0 || m.PropertyID == property) {
			out = append(out, m)
		}
	}
	return out, nil
}
func (c *conns) MappingByRoom(context.Context, string, int64, string, string) (channel.Mapping, error) {
	return channel.Mapping{}, errUnused
}
func (c *conns) ModifyMapping(context.Context, string, int64, int64, func(*channel.Mapping) error) (channel.Mapping, error) {
	return channel.Mapping{}, errUnused
}
func (c *conns) DeleteMapping(context.Context, string, int64, int64) error { return errUnused }
func (c *conns) Erase(context.Context, string) error                       { return errUnused }

// memLog is channel.Log in memory.
type memLog struct {
	mu      sync.Mutex
	entries []channel.LogEntry
}

func (l *memLog) Append(_ context.Context, e channel.LogEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
	return nil
}
func (l *memLog) List(context.Context, string, channel.LogFilter) ([]channel.LogEntry, error) {
	return nil, errUnused
}
func (l *memLog) Get(context.Context, string, int64) (channel.LogEntry, error) {
	return channel.LogEntry{}, errUnused
}

func (l *memLog) statuses() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.entries {
		out = append(out, e.Kind+":"+e.Status)
	}
	return out
}

// request is one request a recorder accepted.
type request struct {
	Account  string
	Property int64
	Kind     string
	Avail    []channel.Availability
	Rates    []channel.Rate
}

// recorder is a channel.Adapter that plays a channel manager: each batch is two requests
// (availability, then rates and restrictions), each accepted into its state unless before
// refuses it.
type recorder struct {
	mu       sync.Mutex
	requests []request
	// state: "<account>:<property>" → date → availability; → plan|date → rate value.
	avail map[string]map[string]int
	rates map[string]map[string]ari.RateValue
	// before, when set, is called before each request is accepted (after wait); an error
	// fails the request.
	before func(ctx context.Context, r request) error
}

func newRecorder() *recorder {
	return &recorder{avail: map[string]map[string]int{}, rates: map[string]map[string]ari.RateValue{}}
}

func (r *recorder) Name() string { return channel.Channex }

func (r *recorder) PushARI(ctx context.Context, b channel.Batch, wait func(context.Context, string) error,
	sent func([]channel.Availability, []channel.Rate) error, record func(channel.Exchange)) error {
	var reqs []request
	if len(b.Availability) > 0 {
		reqs = append(reqs, request{Account: b.Connection.Account, Property: b.Mapping.PropertyID, Kind: channel.KindAvailability, Avail: b.Availability})
	}
	if len(b.Rates) > 0 {
		reqs = append(reqs, request{Account: b.Connection.Account, Property: b.Mapping.PropertyID, Kind: channel.KindRestrictions, Rates: b.Rates})
	}
	for _, q := range reqs {
		if err := wait(ctx, q.Kind); err != nil {
			return err
		}
		if r.before != nil {
			if err := r.before(ctx, q); err != nil {
				ex := channel.Exchange{Kind: q.Kind, Err: err}
				var re *channel.RemoteError
				if errors.As(err, &re) {
					ex.HTTPStatus = re.Status
				}
				record(ex)
				return err
			}
		}
		r.accept(q)
		record(channel.Exchange{Kind: q.Kind, HTTPStatus: 200, Request: []byte("{}"), Response: []byte("{}")})
		if err := sent(q.Avail, q.Rates); err != nil {
			return err
		}
	}
	return nil
}

func (r *recorder) accept(q request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, q)
	key := fmt.Sprintf("%s:%d", q.Account, q.Property)
	if r.avail[key] == nil {
		r.avail[key], r.rates[key] = map[string]int{}, map[string]ari.RateValue{}
	}
	each := func(from, to string, f func(d string)) {
		for d := pricing.MustDate(from); !d.After(pricing.MustDate(to)); d = d.AddDays(1) {
			f(d.String())
		}
	}
	for _, a := range q.Avail {
		each(a.From, a.To, func(d string) { r.avail[key][d] = a.Available })
	}
	for _, x := range q.Rates {
		each(x.From, x.To, func(d string) { r.rates[key][x.RemoteRatePlanID+"|"+d] = ari.RateValueOf(x) })
	}
}

func (r *recorder) PullRevisions(context.Context, channel.Connection, func(channel.Exchange)) ([]channel.Revision, error) {
	return nil, nil
}
func (r *recorder) Ack(context.Context, channel.Connection, channel.Revision, func(channel.Exchange)) error {
	return nil
}
func (r *recorder) Test(context.Context, channel.Connection, func(channel.Exchange)) error {
	return nil
}

func (r *recorder) taken() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.requests
	r.requests = nil
	return out
}

// holds reports whether the channel manager holds exactly want for the account's property.
func (r *recorder) holds(account string, property int64, want ari.Values) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := fmt.Sprintf("%s:%d", account, property)
	for i := range want.Days {
		d := want.From.AddDays(i).String()
		if a, ok := r.avail[key][d]; !ok || a != int(want.Avail[i]) {
			return fmt.Errorf("%s availability %d (%v), want %d", d, a, ok, want.Avail[i])
		}
		for pi, plan := range want.Plans {
			if got := r.rates[key][plan+"|"+d]; got != want.Rates[pi][i] {
				return fmt.Errorf("%s %s: %+v, want %+v", d, plan, got, want.Rates[pi][i])
			}
		}
	}
	return nil
}

// env is ARI out over a fresh database, with a connection and mapping per account given.
type env struct {
	dbName string
	st     *aristore.Store
	conns  *conns
	rec    *recorder
	log    *memLog
	clock  *clock
	proj   *ari.Projector
	snd    *ari.Sender
	cfg    ari.Config
}

// start is the tests' now: 23:30 UTC on 2027-03-10, already the 11th in Rome.
var start = time.Date(2027, 3, 10, 23, 30, 0, 0, time.UTC)

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	d := db.Client().Database(fmt.Sprintf("%s_%d", db.Name(), dbSeq.Add(1)))
	t.Cleanup(func() { _ = d.Drop(context.Background()) })
	st, err := aristore.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{dbName: d.Name(), st: st, conns: &conns{conns: map[string]channel.Connection{}, mappings: map[string]channel.Mapping{}},
		rec: newRecorder(), log: &memLog{}, clock: &clock{t: start},
		cfg: ari.Config{Workers: 2, Lease: 2 * time.Minute, RequestTimeout: 30 * time.Second, ErrorRetry: 10 * time.Minute,
			Poll: 20 * time.Millisecond}}
	st.Now = e.clock.Now
	e.snd = ari.NewSender(e.cfg, ari.Deps{Projection: st, Marks: st, Sent: st, Connections: e.conns, Log: e.log,
		Adapters: map[string]channel.Adapter{channel.Channex: e.rec}, Now: e.clock.Now,
		Jitter: func(d time.Duration) time.Duration { return d }})
	e.proj = &ari.Projector{Store: st, Connections: e.conns, Mark: e.snd.Touch}
	return e
}

// connect gives the account connection 1 and maps property 7 to it (plans 0 and 1).
func (e *env) connect(account string, days int) (channel.Connection, channel.Mapping) {
	c := channel.Connection{Account: account, ID: 1, Adapter: channel.Channex, Channel: "channex", Enabled: true, Days: days}
	m := channel.Mapping{Account: account, ConnectionID: 1, PropertyID: 7, RemotePropertyID: "P-" + account, RoomTypeID: "R",
		RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: "STD"}, {RatePlanID: 1, RemoteRatePlanID: "NR"}}, Enabled: true}
	e.conns.put(c, m)
	return c, m
}

func intp(v int) *int    { return &v }
func boolp(v bool) *bool { return &v }

// property is property 7 in Rome: 100.00 a night, 150.00 on weekend nights, arrivals on
// Saturdays, a plan 1 at -10 %, a channex markup of 15 %, stop-sell on 2027-03-15.
func property(account string, version int64, daily string) contract.Property {
	return contract.Property{AccountID: account, PropertyID: 7, InternalCode: "V7", Version: version,
		Content: contract.Content{Timezone: "Europe/Rome"},
		Rates: &contract.Rates{Rate: contract.Prices{Daily: daily, Weekend: "150.00"}, MinimumStay: 2,
			Setting: contract.Setting{ApplyWeekendPrice: true, DefaultAllowCheckin: "Saturday", DefaultAllowCheckout: "All"}},
		RatePlans: []contract.RatePlan{{ID: 1, PlanTerms: contract.PlanTerms{Name: "Non-refundable"},
			Adjustment: contract.Adjustment{Type: contract.AdjustPercent, Value: "-10"}, SoldOn: contract.SoldOn{Direct: true}}},
		Restrictions:   []contract.Restriction{{StartDate: "2027-03-15", EndDate: "2027-03-15", StopSell: boolp(true)}},
		ChannelMarkups: []contract.Markup{{Channel: "channex", Adjustment: contract.Adjustment{Type: contract.AdjustPercent, Value: "15"}}},
	}
}

func (e *env) apply(t testing.TB, account, rest, typ string, data any) {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.proj.Apply(context.Background(), ari.Event{Account: account, Rest: rest, Type: typ, Data: raw}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) putProperty(t testing.TB, p contract.Property) {
	t.Helper()
	e.apply(t, p.AccountID, strconv.FormatInt(p.PropertyID, 10), contract.RatesUpdated, p)
}

func (e *env) book(t *testing.T, account string, id, version int64, status string, nights ...string) {
	t.Helper()
	if nights == nil {
		nights = []string{}
	}
	e.apply(t, account, "booking:"+strconv.FormatInt(id, 10), contract.BookingReserved,
		contract.Booking{AccountID: account, BookingID: id, PropertyID: 7, Status: status, Version: version, Nights: nights})
}

// desired is what the channel manager should hold now for the account's property 7.
func (e *env) desired(t *testing.T, account string) ari.Values {
	t.Helper()
	ctx := context.Background()
	st, err := e.st.Load(ctx, account, 7)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := e.conns.Connection(ctx, account, 1)
	m, _ := e.conns.Mapping(ctx, account, 1, 7)
	v, err := ari.Compute(st, c, m, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// drain runs the sender until no mark is due.
func (e *env) drain(t testing.TB, ctx context.Context) {
	t.Helper()
	for range 1000 {
		did, err := e.snd.Once(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			return
		}
	}
	t.Fatal("marks kept coming")
}

func (e *env) pending(t *testing.T) int64 {
	t.Helper()
	n, err := e.st.Pending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func days(from, to string) int {
	return pricing.DaysBetween(pricing.MustDate(from), pricing.MustDate(to)) + 1
}
