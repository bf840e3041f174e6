package outbox

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	netmail "net/mail"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
	"github.com/vros/vros/testkit/smtpcatcher"
	"github.com/vros/vros/testkit/testinfra"
)

// testDB is on the package's embedded FerretDB (or VROS_MONGO_URI's server); each test
// works in a database of its own on the same server, since the senders' due query serves
// every account.
var testDB *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "messaging_outbox", &testDB, nil) }

const domain = "mail.vros.test"

var t0 = time.Date(2027, 3, 20, 9, 0, 0, 0, time.UTC)

// clock is the service's clock the tests move.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one test's stores, on a database of its own.
type env struct {
	msgs *store.Messages
	sups *store.Suppressions
	clk  *clock
}

// dbs numbers the tests' databases.
var dbs atomic.Int64

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	db := testDB.Client().Database(fmt.Sprintf("%s_%d", testDB.Name(), dbs.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	msgs, err := store.NewMessages(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sups, err := store.NewSuppressions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return &env{msgs: msgs, sups: sups, clk: newClock()}
}

// sender is a sender of e's outbox; change its options with edit.
func (e *env) sender(c Composer, edit ...func(*Options)) *Sender {
	o := Options{Messages: e.msgs, Suppressions: e.sups, Composer: c, Domain: domain,
		Backoff: mail.Backoff{Base: time.Minute, Max: time.Hour, MaxAttempts: 3, Jitter: func(d time.Duration) time.Duration { return d }},
		Lease:   time.Minute, Now: e.clk.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, f := range edit {
		f(&o)
	}
	return New(o)
}

// insert inserts a message of account for booking, due at sendAt (scheduled when sched).
func (e *env) insert(t *testing.T, account string, booking int64, sched bool, sendAt time.Time) string {
	t.Helper()
	trig, occ := trigger.BookingConfirmed, trigger.Once
	if sched {
		trig, occ = trigger.StayArrival, sendAt.Format("2006-01-02T15:04")
	}
	m := trigger.Message{ID: trigger.ID(account, trig, booking, occ), Account: account, Trigger: trig,
		BookingID: booking, PropertyID: 1, Occurrence: occ, To: trigger.Guest, Lang: trigger.LangBooking,
		Scheduled: sched, SendAt: sendAt}
	if _, err := e.msgs.Insert(context.Background(), []trigger.Message{m}, nil, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func (e *env) get(t *testing.T, account, id string) store.Message {
	t.Helper()
	m, ok, err := e.msgs.Get(context.Background(), account, id)
	if err != nil || !ok {
		t.Fatalf("get %s: %v %v", id, ok, err)
	}
	return m
}

func once(t *testing.T, s *Sender) int {
	t.Helper()
	n, err := s.Once(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// composer is the tests' Composer: a message to guest-<booking>@guest.test (or the address
// to gives), through transport.
type composer struct {
	transport mail.Transport
	to        func(store.Message) string
	// answer, when set, answers instead (a *Skip, or a temporary error)
	answer func(store.Message) error
	calls  atomic.Int64
}

func (c *composer) Compose(_ context.Context, m store.Message) (Composed, error) {
	c.calls.Add(1)
	if c.answer != nil {
		if err := c.answer(m); err != nil {
			return Composed{}, err
		}
	}
	to := fmt.Sprintf("guest-%d@guest.test", m.BookingID)
	if c.to != nil {
		to = c.to(m)
	}
	return Composed{
		Mail: mail.Message{From: netmail.Address{Name: "Villa", Address: "stay@vros.test"},
			To: netmail.Address{Address: to}, Subject: "Booking " + m.ID, Text: "Hello", HTML: "<p>Hello</p>"},
		Transport: c.transport, RateKey: m.Account, Language: "en",
	}, nil
}

// catcher starts an SMTP server without AUTH and answers it and its transport.
func catcher(t *testing.T) (*smtpcatcher.Catcher, mail.Transport) {
	t.Helper()
	c := smtpcatcher.Start(t, smtpcatcher.NoAuth())
	tr, err := mail.NewSMTP(mail.SMTPConfig{Host: c.Host(), Port: c.Port(), TLS: mail.TLSNone, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// transportFunc wraps a transport's Send.
type transportFunc func(ctx context.Context, m mail.Message) (mail.Receipt, error)

func (f transportFunc) Send(ctx context.Context, m mail.Message) (mail.Receipt, error) {
	return f(ctx, m)
}
