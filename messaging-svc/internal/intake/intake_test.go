package intake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
	"github.com/vros/vros/messaging-svc/internal/trigger"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

var (
	testDB  *mongo.Database
	brokers []string
	dbs     atomic.Int64 // the tests' databases so far
)

// TestMain runs the package on the servers VROS_MONGO_URI and VROS_KAFKA_BROKERS name, else on
// embedded ones (FerretDB and kfake) of its own; one database for every test, each test on
// its own accounts.
func TestMain(m *testing.M) {
	uri := ""
	var infra *testinfra.Infra
	if s := servers.FromEnv(); s != nil && s.MongoURI != "" && len(s.KafkaBrokers) > 0 {
		uri, brokers = s.MongoURI, s.KafkaBrokers
	} else {
		in, err := testinfra.Start(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		infra, uri, brokers = in, in.MongoURI, in.KafkaBrokers
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDB = client.Database(fmt.Sprintf("messaging_intake_%d", time.Now().UnixNano()))
	code := m.Run()
	_ = testDB.Drop(context.Background())
	_ = client.Disconnect(context.Background())
	if infra != nil {
		infra.Close()
	}
	os.Exit(code)
}

// clock is the test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type harness struct {
	in        *Intake
	msgs      *store.Messages
	sups      *store.Suppressions
	views     *store.Views
	snaps     *store.Snapshots
	settings  *store.Settings
	templates *store.Templates
	clock     *clock
}

// setTriggers saves the account's trigger settings.
func (h *harness) setTriggers(t testing.TB, account string, changes ...trigger.Change) {
	t.Helper()
	s, err := trigger.Settings{}.With(changes...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.settings.SetTriggers(context.Background(), account, s, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{clock: &clock{t: time.Date(2027, 5, 1, 12, 0, 0, 0, time.UTC)}}
	// A database of its own for each test run (go test -count=N runs a test again in the
	// same process), dropped when it ends.
	db := testDB.Client().Database(fmt.Sprintf("%s_%d", testDB.Name(), dbs.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	var err error
	if h.settings, err = store.NewSettings(ctx, db); err != nil {
		t.Fatal(err)
	}
	if h.templates, err = store.NewTemplates(ctx, db); err != nil {
		t.Fatal(err)
	}
	if h.msgs, err = store.NewMessages(ctx, db); err != nil {
		t.Fatal(err)
	}
	if h.sups, err = store.NewSuppressions(ctx, db); err != nil {
		t.Fatal(err)
	}
	if h.views, err = store.NewViews(ctx, db); err != nil {
		t.Fatal(err)
	}
	if h.snaps, err = store.NewSnapshots(ctx, db); err != nil {
		t.Fatal(err)
	}
	h.in = New(Deps{Messages: h.msgs, Suppressions: h.sups, Views: h.views, Snapshots: h.snaps, Settings: h.settings,
		Templates: h.templates, Now: h.clock.Now})
	return h
}

// bookingMsg is the vros.booking.v1 message of b.
func bookingMsg(t testing.TB, b contract.Booking) kafka.Message {
	t.Helper()
	m, err := bookingMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func bookingMessage(b contract.Booking) (kafka.Message, error) {
	typ := contract.BookingUpdated
	switch {
	case b.Status == "cancelled":
		typ = contract.BookingCancelled
	case b.Version == 1:
		typ = contract.BookingReserved
	}
	v, err := events.Encode("/vros/booking-svc", typ, b.AccountID, time.Now(), b)
	return kafka.Message{Topic: events.TopicBooking, Key: []byte(b.AccountID + ":booking:" + strconv.FormatInt(b.BookingID, 10)), Value: v}, err
}

func propertyMsg(t testing.TB, key, typ string, data any) kafka.Message {
	t.Helper()
	v, err := events.Encode("/vros/property-svc", typ, key, time.Now(), data)
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Topic: events.TopicProperty, Key: []byte(key), Value: v}
}

func (h *harness) booking(t testing.TB, b contract.Booking) {
	t.Helper()
	if err := h.in.Booking(context.Background(), bookingMsg(t, b)); err != nil {
		t.Fatalf("booking %d v%d: %v", b.BookingID, b.Version, err)
	}
}

func (h *harness) property(t testing.TB, m kafka.Message) {
	t.Helper()
	if err := h.in.Property(context.Background(), m); err != nil {
		t.Fatalf("property event %s: %v", m.Key, err)
	}
}

// messages answers the account's messages by id.
func (h *harness) messages(t testing.TB, account string) map[string]store.Message {
	t.Helper()
	out := map[string]store.Message{}
	for page := 1; ; page++ {
		ms, total, err := h.msgs.List(context.Background(), account, store.MessageFilter{Page: page, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out[m.ID] = m
		}
		if int64(len(out)) >= total || len(ms) == 0 {
			return out
		}
	}
}

// statuses answers "<trigger>:<occurrence>" → status of the account's messages.
func (h *harness) statuses(t testing.TB, account string) map[string]store.Status {
	return h.statusesOf(t, account, 0)
}

// statusesOf is statuses of one booking's messages (0: every booking's).
func (h *harness) statusesOf(t testing.TB, account string, booking int64) map[string]store.Status {
	t.Helper()
	out := map[string]store.Status{}
	for id, m := range h.messages(t, account) {
		if !strings.HasPrefix(id, account+":") || m.Account != account {
			t.Fatalf("account %s holds %s of %s", account, id, m.Account)
		}
		if booking == 0 || m.BookingID == booking {
			out[m.Trigger+":"+m.Occurrence] = m.Status
		}
	}
	return out
}

// reserved is a booking of 4 nights from 2027-06-10, of property 3, version 1, unpaid.
func reserved(account string, id int64) contract.Booking {
	return contract.Booking{AccountID: account, BookingID: id, PropertyID: 3, BrandID: 2, Status: "reserved", Version: 1,
		Checkin: "2027-06-10", Checkout: "2027-06-14", Nights: []string{"2027-06-10", "2027-06-11", "2027-06-12", "2027-06-13"},
		Adults: 2, Currency: "EUR", TotalRent: "800.00", GrandTotal: "900.00"}
}

func paidIn(b contract.Booking, version int64) contract.Booking {
	b.Version = version
	at := time.Date(2027, 5, 1, 11, 0, 0, 0, time.UTC)
	b.Payments = []contract.BookingPayment{{PaymentID: 901, Amount: b.GrandTotal, Currency: "EUR", Method: "card", PaidAt: at, CreatedAt: at}}
	return b
}

func moved(b contract.Booking, version int64, in, out string) contract.Booking {
	b.Version, b.Checkin, b.Checkout = version, in, out
	return b
}

func cancelled(b contract.Booking, version int64) contract.Booking {
	b.Version, b.Status, b.Nights = version, "cancelled", []string{}
	at := time.Date(2027, 5, 2, 9, 0, 0, 0, time.UTC)
	b.CancelledAt = &at
	return b
}

const (
	S = store.StatusScheduled
	P = store.StatusPending
	C = store.StatusCancelled
)

// TestBookingPlans: each planning path through the handler, from the events' snapshots to the
// messages stored (trigger:occurrence → status), in UTC (no view of the property or account).
func TestBookingPlans(t *testing.T) {
	h := newHarness(t)
	b := reserved("", 42)
	paid := paidIn(b, 1)
	first := map[string]store.Status{
		"booking.confirmed:once": P, "owner.booking:once": P, "payment.received:901": P,
		"stay.arrival:2027-06-07T10:00": S, "stay.checkout:2027-06-13T18:00": S, "stay.thanks:2027-06-15T10:00": S,
	}
	with := func(base map[string]store.Status, kv ...any) map[string]store.Status {
		out := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1].(store.Status)
		}
		return out
	}
	tests := []struct {
		name   string
		now    time.Time // zero: the harness's 2027-05-01 12:00 UTC
		events []contract.Booking
		want   map[string]store.Status
	}{
		{"confirmed unpaid", time.Time{}, []contract.Booking{b}, map[string]store.Status{
			"booking.confirmed:once": P, "owner.booking:once": P, "payment.due_soon:2027-06-07T10:00": S,
			"stay.arrival:2027-06-07T10:00": S, "stay.checkout:2027-06-13T18:00": S, "stay.thanks:2027-06-15T10:00": S}},
		{"confirmed paid", time.Time{}, []contract.Booking{paid}, first},
		{"balance paid later", time.Time{}, []contract.Booking{b, paidIn(b, 2)}, map[string]store.Status{
			"booking.confirmed:once": P, "owner.booking:once": P, "payment.received:901": P, "payment.due_soon:2027-06-07T10:00": C,
			"stay.arrival:2027-06-07T10:00": S, "stay.checkout:2027-06-13T18:00": S, "stay.thanks:2027-06-15T10:00": S}},
		{"stay moved", time.Time{}, []contract.Booking{paid, moved(paid, 2, "2027-06-20", "2027-06-24")}, with(first,
			"booking.modified:2", P, "stay.arrival:2027-06-07T10:00", C, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C,
			"stay.arrival:2027-06-17T10:00", S, "stay.checkout:2027-06-23T18:00", S, "stay.thanks:2027-06-25T10:00", S)},
		{"check-out moved keeps the arrival", time.Time{}, []contract.Booking{paid, moved(paid, 2, "2027-06-10", "2027-06-16")}, with(first,
			"booking.modified:2", P, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C,
			"stay.checkout:2027-06-15T18:00", S, "stay.thanks:2027-06-17T10:00", S)},
		{"cancelled", time.Time{}, []contract.Booking{paid, cancelled(paid, 2)}, with(first,
			"booking.cancelled:once", P, "owner.cancellation:once", P,
			"stay.arrival:2027-06-07T10:00", C, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C)},
		{"replay of the same events", time.Time{}, []contract.Booking{paid, moved(paid, 2, "2027-06-20", "2027-06-24"),
			paid, moved(paid, 2, "2027-06-20", "2027-06-24"), paid}, with(first,
			"booking.modified:2", P, "stay.arrival:2027-06-07T10:00", C, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C,
			"stay.arrival:2027-06-17T10:00", S, "stay.checkout:2027-06-23T18:00", S, "stay.thanks:2027-06-25T10:00", S)},
		{"out of order: an older version after a newer one", time.Time{}, []contract.Booking{paid, cancelled(paid, 3),
			moved(paid, 2, "2027-06-20", "2027-06-24")}, with(first,
			"booking.cancelled:once", P, "owner.cancellation:once", P,
			"stay.arrival:2027-06-07T10:00", C, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C)},
		{"booked two days before arrival: the reminder at once", time.Date(2027, 6, 8, 12, 0, 0, 0, time.UTC), []contract.Booking{paid}, with(first,
			"stay.arrival:2027-06-07T10:00", P)},
		{"booked on arrival day: no reminder", time.Date(2027, 6, 10, 8, 0, 0, 0, time.UTC), []contract.Booking{paid}, map[string]store.Status{
			"booking.confirmed:once": P, "owner.booking:once": P, "payment.received:901": P,
			"stay.checkout:2027-06-13T18:00": S, "stay.thanks:2027-06-15T10:00": S}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			account := fmt.Sprintf("plan%d", i)
			now := tc.now
			if now.IsZero() {
				now = time.Date(2027, 5, 1, 12, 0, 0, 0, time.UTC)
			}
			h.clock.Set(now)
			for _, e := range tc.events {
				e.AccountID = account
				h.booking(t, e)
			}
			got := h.statuses(t, account)
			if !maps.Equal(got, tc.want) {
				t.Fatalf("messages\n%s\nwant\n%s", dump(got), dump(tc.want))
			}
			snap, err := h.snaps.Get(context.Background(), account, 42)
			last := slices.MaxFunc(tc.events, func(a, b contract.Booking) int { return int(a.Version - b.Version) })
			if err != nil || snap == nil || snap.Version != last.Version {
				t.Fatalf("snapshot %+v %v, want version %d", snap, err, last.Version)
			}
		})
	}
}

func dump(m map[string]store.Status) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, "  "+k+" "+string(m[k]))
	}
	return strings.Join(lines, "\n")
}

// TestReplayChangesNothing: the events of a booking's life applied again, one by one and from
// the latest snapshot alone (a consumer starting over, its snapshots lost), change no
// message: not a status, not an instant, not an update time.
func TestReplayChangesNothing(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	acc := "replay1"
	b := paidIn(reserved(acc, 7), 1)
	life := []contract.Booking{b, moved(b, 2, "2027-06-20", "2027-06-24")}
	for _, e := range life {
		h.booking(t, e)
	}
	before := h.messages(t, acc)
	h.clock.Set(h.clock.Now().Add(time.Hour))
	for _, e := range life {
		h.booking(t, e)
	}
	if err := h.snaps.Delete(ctx, acc, 7); err != nil {
		t.Fatal(err)
	}
	h.booking(t, life[1])
	after := h.messages(t, acc)
	if len(after) != len(before) {
		t.Fatalf("%d messages after the replay, %d before", len(after), len(before))
	}
	for id, m := range before {
		a := after[id]
		if a.Status != m.Status || !a.SendAt.Equal(m.SendAt) || !a.Updated.Equal(m.Updated) {
			t.Fatalf("%s changed: %+v\nwas %+v", id, a, m)
		}
	}
}

// TestCrashAndRedelivery: a handler stopped after any step of its plan (messages inserted,
// cancels done, snapshot saved), then given the event again, ends where one uninterrupted
// run ends: the stay moved (inserts and cancels) and the booking cancelled (cancel of every
// scheduled message).
func TestCrashAndRedelivery(t *testing.T) {
	h := newHarness(t)
	crashed := errors.New("crash")
	for _, step := range []string{"", "inserted", "cancelled", "saved"} {
		for _, c := range []struct {
			name string
			next func(contract.Booking) contract.Booking
		}{
			{"moved", func(b contract.Booking) contract.Booking { return moved(b, 2, "2027-06-20", "2027-06-24") }},
			{"cancelled", func(b contract.Booking) contract.Booking { return cancelled(b, 2) }},
		} {
			acc := "crash-" + c.name + "-" + step
			if step == "" {
				acc = "crash-" + c.name + "-none"
			}
			first := paidIn(reserved(acc, 1), 1)
			h.booking(t, first)
			h.in.crash = func(s string) error {
				if s == step {
					return crashed
				}
				return nil
			}
			err := h.in.Booking(context.Background(), bookingMsg(t, c.next(first)))
			h.in.crash = nil
			if step != "" && !errors.Is(err, crashed) {
				t.Fatalf("%s: the crash at %s did not stop the handler: %v", acc, step, err)
			}
			h.booking(t, c.next(first)) // the redelivery
			got, want := h.statuses(t, acc), h.statuses(t, "crash-"+c.name+"-none")
			if !maps.Equal(got, want) {
				t.Fatalf("%s: after a crash at %q and the redelivery\n%s\nwant\n%s", acc, step, dump(got), dump(want))
			}
		}
	}
}

// TestPropertyZone: the property's zone decides the day and the instant (Pacific/Kiritimati,
// UTC+14: 3 days before a 06-10 check-in at 10:00 is 06-06 20:00 UTC), else the account's
// (America/Adak, UTC-9 in June: 06-07 19:00 UTC), else UTC; views come through the handler.
func TestPropertyZone(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	acc := "zone1"
	h.property(t, propertyMsg(t, acc+":settings", contract.SettingsUpdated,
		contract.Settings{AccountID: acc, Version: 1, Timezone: "America/Adak", Languages: []string{"en"}}))
	far := contract.Property{AccountID: acc, PropertyID: 3, Version: 1, Content: contract.Content{Name: "Atoll", Timezone: "Pacific/Kiritimati"}}
	h.property(t, propertyMsg(t, acc+":3", contract.PropertyCreated, far))
	h.property(t, propertyMsg(t, acc+":4", contract.PropertyCreated, contract.Property{AccountID: acc, PropertyID: 4, Version: 1}))
	// An older version of property 3 without its zone, delivered late, changes nothing.
	h.property(t, propertyMsg(t, acc+":3", contract.PropertyCreated, contract.Property{AccountID: acc, PropertyID: 3, Version: 0}))

	b3 := reserved(acc, 1)
	b4 := reserved(acc, 2)
	b4.PropertyID = 4
	h.booking(t, b3)
	h.booking(t, b4)
	other := reserved("zone2", 1) // no views at all: UTC
	h.booking(t, other)
	for _, c := range []struct {
		account string
		booking int64
		want    time.Time
	}{
		{acc, 1, time.Date(2027, 6, 6, 20, 0, 0, 0, time.UTC)},
		{acc, 2, time.Date(2027, 6, 7, 19, 0, 0, 0, time.UTC)},
		{"zone2", 1, time.Date(2027, 6, 7, 10, 0, 0, 0, time.UTC)},
	} {
		id := trigger.ID(c.account, trigger.StayArrival, c.booking, "2027-06-07T10:00")
		m, ok, err := h.msgs.Get(ctx, c.account, id)
		if err != nil || !ok || !m.SendAt.Equal(c.want) || m.Status != S {
			t.Fatalf("%s: %+v ok %v err %v, want scheduled at %v", id, m, ok, err, c.want)
		}
	}
	// The property deleted: its zone no longer applies to a new booking (the account's does).
	far.Version, far.Deleted = 2, true
	h.property(t, propertyMsg(t, acc+":3", contract.PropertyDeleted, far))
	h.booking(t, reserved(acc, 5))
	m, ok, _ := h.msgs.Get(ctx, acc, trigger.ID(acc, trigger.StayArrival, 5, "2027-06-07T10:00"))
	if !ok || !m.SendAt.Equal(time.Date(2027, 6, 7, 19, 0, 0, 0, time.UTC)) {
		t.Fatalf("after the delete: %+v ok %v", m, ok)
	}
}

// TestReplan: a settings change re-plans the live bookings: the arrival moved to 5 days
// before at 09:00 is inserted and the 3-days one cancelled, the thanks switched off is
// cancelled, the unchanged check-out reminder is the same document; a cancelled booking gets
// nothing; a second re-plan changes nothing.
func TestReplan(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	acc := "replan1"
	live := paidIn(reserved(acc, 1), 1)
	gone := paidIn(reserved(acc, 2), 1)
	h.booking(t, live)
	h.booking(t, gone)
	h.booking(t, cancelled(gone, 2))
	h.booking(t, paidIn(reserved("replan2", 1), 1)) // another account: untouched
	before := h.messages(t, acc)
	otherBefore := h.statuses(t, "replan2")

	five, at, off := 5, "09:00", false
	h.setTriggers(t, acc, trigger.Change{Trigger: trigger.StayArrival, Days: &five, At: &at},
		trigger.Change{Trigger: trigger.StayThanks, Enabled: &off})
	h.clock.Set(h.clock.Now().Add(time.Hour))
	if err := h.in.Replan(ctx, acc); err != nil {
		t.Fatal(err)
	}
	want1 := map[string]store.Status{
		"booking.confirmed:once": P, "owner.booking:once": P, "payment.received:901": P,
		"stay.arrival:2027-06-07T10:00": C, "stay.checkout:2027-06-13T18:00": S, "stay.thanks:2027-06-15T10:00": C,
		"stay.arrival:2027-06-05T09:00": S,
	}
	want2 := map[string]store.Status{
		"booking.confirmed:once": P, "owner.booking:once": P, "payment.received:901": P,
		"booking.cancelled:once": P, "owner.cancellation:once": P,
		"stay.arrival:2027-06-07T10:00": C, "stay.checkout:2027-06-13T18:00": C, "stay.thanks:2027-06-15T10:00": C,
	}
	if got := h.statusesOf(t, acc, 1); !maps.Equal(got, want1) {
		t.Fatalf("booking 1:\n%s\nwant\n%s", dump(got), dump(want1))
	}
	if got := h.statusesOf(t, acc, 2); !maps.Equal(got, want2) {
		t.Fatalf("booking 2 (cancelled):\n%s\nwant\n%s", dump(got), dump(want2))
	}
	checkout := trigger.ID(acc, trigger.StayCheckout, 1, "2027-06-13T18:00")
	if m := h.messages(t, acc)[checkout]; !m.Updated.Equal(before[checkout].Updated) || m.Status != S {
		t.Fatalf("the unchanged check-out reminder was touched: %+v", m)
	}
	again := h.messages(t, acc)
	if err := h.in.Replan(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if after := h.messages(t, acc); !maps.EqualFunc(after, again, func(a, b store.Message) bool {
		return a.Status == b.Status && a.Updated.Equal(b.Updated)
	}) {
		t.Fatal("a second re-plan changed messages")
	}
	if o := h.statuses(t, "replan2"); !maps.Equal(o, otherBefore) {
		t.Fatalf("another account's messages changed:\n%s", dump(o))
	}
}

// TestEvent: an event trigger's message is inserted once per occurrence with its detail and
// the booking's property and brand; a trigger switched off inserts nothing; a scheduled or
// unknown trigger is refused.
func TestEvent(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	acc := "event1"
	h.booking(t, reserved(acc, 9))
	detail := map[string]string{"Channel": "airbnb", "Reason": "dates taken"}
	for range 2 {
		if err := h.in.Event(ctx, acc, trigger.OwnerChannelConflict, 9, "c-77", detail); err != nil {
			t.Fatal(err)
		}
	}
	m, ok, err := h.msgs.Get(ctx, acc, trigger.ID(acc, trigger.OwnerChannelConflict, 9, "c-77"))
	if err != nil || !ok || m.Status != P || m.To != trigger.Owner || m.PropertyID != 3 || m.BrandID != 2 || !maps.Equal(m.Detail, detail) {
		t.Fatalf("conflict message %+v ok %v err %v", m, ok, err)
	}
	off := false
	h.setTriggers(t, acc, trigger.Change{Trigger: trigger.PaymentFailed, Enabled: &off})
	if err := h.in.Event(ctx, acc, trigger.PaymentFailed, 9, "a-1", nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := h.msgs.Get(ctx, acc, trigger.ID(acc, trigger.PaymentFailed, 9, "a-1")); ok {
		t.Fatal("a trigger switched off inserted its message")
	}
	for _, bad := range []string{trigger.StayArrival, "nope"} {
		if err := h.in.Event(ctx, acc, bad, 9, "x", nil); err == nil {
			t.Fatalf("%s accepted as an event trigger", bad)
		}
	}
}

// TestAccountErased: vros.account.erased erases the account's messages, suppressions,
// snapshots, settings, templates and views; its later events are ignored; another account
// keeps everything. A booking's tombstone erases that booking's messages and snapshot.
func TestAccountErased(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	for _, acc := range []string{"erase1", "erase2"} {
		h.property(t, propertyMsg(t, acc+":settings", contract.SettingsUpdated, contract.Settings{AccountID: acc, Version: 1, Timezone: "Europe/Rome"}))
		h.property(t, propertyMsg(t, acc+":3", contract.PropertyCreated, contract.Property{AccountID: acc, PropertyID: 3, Version: 1}))
		h.booking(t, reserved(acc, 1))
		h.booking(t, reserved(acc, 2))
		if err := h.sups.Add(ctx, store.Suppression{Account: acc, Address: "gone@example.com", Reason: "550", Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		off := false
		h.setTriggers(t, acc, trigger.Change{Trigger: trigger.StayThanks, Enabled: &off})
		if _, err := h.templates.Create(ctx, acc, template.Template{Trigger: trigger.BookingConfirmed, Language: "en",
			Subject: "Booked", HTML: "<p>Booked</p>"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	remains := func(acc string) (settings bool, templates int) {
		s, err := h.settings.Get(ctx, acc)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := h.templates.List(ctx, acc, store.TemplateFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Version > 0, len(ts)
	}
	// A booking's tombstone.
	if err := h.in.Booking(ctx, kafka.Message{Topic: events.TopicBooking, Key: []byte("erase2:booking:2")}); err != nil {
		t.Fatal(err)
	}
	if ms, _, _ := h.msgs.List(ctx, "erase2", store.MessageFilter{BookingID: 2}); len(ms) != 0 {
		t.Fatalf("the erased booking keeps %d messages", len(ms))
	}
	if b, _ := h.snaps.Get(ctx, "erase2", 2); b != nil {
		t.Fatal("the erased booking keeps its snapshot")
	}

	erased := propertyMsg(t, "erase1:account", contract.AccountErased, contract.AccountErasure{AccountID: "erase1", ErasedAt: time.Now()})
	for range 2 { // redelivered: harmless
		h.property(t, erased)
	}
	if n := len(h.messages(t, "erase1")); n != 0 {
		t.Fatalf("erased account keeps %d messages", n)
	}
	if has, _ := h.sups.Has(ctx, "erase1", "gone@example.com"); has {
		t.Fatal("erased account keeps its suppressions")
	}
	if b, _ := h.snaps.Get(ctx, "erase1", 1); b != nil {
		t.Fatal("erased account keeps its snapshots")
	}
	if _, ok, _ := h.views.Property(ctx, "erase1", 3); ok {
		t.Fatal("erased account keeps its property view")
	}
	if s, n := remains("erase1"); s || n != 0 {
		t.Fatalf("erased account keeps its settings (%v) or %d templates", s, n)
	}
	// Later events of the erased account: ignored.
	h.booking(t, moved(reserved("erase1", 1), 2, "2027-07-01", "2027-07-05"))
	h.property(t, propertyMsg(t, "erase1:3", contract.PropertyUpdated, contract.Property{AccountID: "erase1", PropertyID: 3, Version: 2}))
	if err := h.in.Event(ctx, "erase1", trigger.PaymentFailed, 1, "a", nil); err != nil {
		t.Fatal(err)
	}
	if n := len(h.messages(t, "erase1")); n != 0 {
		t.Fatalf("events after the erasure made %d messages", n)
	}
	if _, ok, _ := h.views.Property(ctx, "erase1", 3); ok {
		t.Fatal("a property event after the erasure made a view")
	}
	// The other account keeps everything.
	if n := len(h.messages(t, "erase2")); n != 6 {
		t.Fatalf("the other account has %d messages, want 6 (booking 1's)", n)
	}
	if s, n := remains("erase2"); !s || n != 1 {
		t.Fatalf("the other account's settings %v, templates %d", s, n)
	}
	if has, _ := h.sups.Has(ctx, "erase2", "gone@example.com"); !has {
		t.Fatal("the other account lost its suppression")
	}
	if _, ok, _ := h.views.Property(ctx, "erase2", 3); !ok {
		t.Fatal("the other account lost its property view")
	}
}

// TestMalformed: an event that cannot be read is permanent (parked, never retried); a
// block's events and tombstones are no business of messaging.
func TestMalformed(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	bad := kafka.Message{Topic: events.TopicBooking, Key: []byte("m1:booking:1"), Value: []byte("{not json")}
	if err := h.in.Booking(ctx, bad); !events.IsPermanent(err) {
		t.Fatalf("malformed booking event: %v", err)
	}
	noID := bookingMsg(t, contract.Booking{AccountID: "m1", Version: 1, Status: "reserved"})
	if err := h.in.Booking(ctx, noID); !events.IsPermanent(err) {
		t.Fatalf("booking without id: %v", err)
	}
	if err := h.in.Property(ctx, kafka.Message{Key: []byte("m1:3"), Value: []byte("[]")}); !events.IsPermanent(err) {
		t.Fatalf("malformed property event: %v", err)
	}
	block, _ := events.Encode("/vros/booking-svc", contract.BlockCreated, "m1", time.Now(), contract.Block{AccountID: "m1", BlockID: 1, Version: 1})
	if err := h.in.Booking(ctx, kafka.Message{Key: []byte("m1:block:1"), Value: block}); err != nil {
		t.Fatal(err)
	}
	if err := h.in.Booking(ctx, kafka.Message{Key: []byte("m1:block:1")}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.messages(t, "m1")); n != 0 {
		t.Fatalf("%d messages", n)
	}
}

// TestTenantsConcurrent: 24 accounts' handlers run at once (each account's booking 1 and 2,
// the same ids in every account, confirmed, then moved or cancelled, each event delivered
// twice, with a re-plan of every account midway): every account ends with exactly its own
// messages, as one account alone would.
func TestTenantsConcurrent(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	const accounts = 24
	var wg sync.WaitGroup
	errs := make(chan error, accounts)
	for i := range accounts {
		acc := fmt.Sprintf("tenant%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			b1, b2 := paidIn(reserved(acc, 1), 1), paidIn(reserved(acc, 2), 1)
			for _, e := range []contract.Booking{b1, b2, b1, moved(b1, 2, "2027-06-20", "2027-06-24"), cancelled(b2, 2), cancelled(b2, 2)} {
				m, err := bookingMessage(e)
				if err == nil {
					err = h.in.Booking(ctx, m)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- h.in.Replan(ctx, acc)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]store.Status{}
	add := func(booking int64, kv ...any) {
		for i := 0; i < len(kv); i += 2 {
			want[fmt.Sprintf("%d:%s", booking, kv[i])] = kv[i+1].(store.Status)
		}
	}
	add(1, "booking.confirmed:once", P, "owner.booking:once", P, "payment.received:901", P, "booking.modified:2", P,
		"stay.arrival:2027-06-07T10:00", C, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C,
		"stay.arrival:2027-06-17T10:00", S, "stay.checkout:2027-06-23T18:00", S, "stay.thanks:2027-06-25T10:00", S)
	add(2, "booking.confirmed:once", P, "owner.booking:once", P, "payment.received:901", P,
		"booking.cancelled:once", P, "owner.cancellation:once", P,
		"stay.arrival:2027-06-07T10:00", C, "stay.checkout:2027-06-13T18:00", C, "stay.thanks:2027-06-15T10:00", C)
	for i := range accounts {
		acc := fmt.Sprintf("tenant%02d", i)
		got := map[string]store.Status{}
		for id, m := range h.messages(t, acc) {
			if !strings.HasPrefix(id, acc+":") || m.Account != acc {
				t.Fatalf("%s holds %s of %s", acc, id, m.Account)
			}
			got[fmt.Sprintf("%d:%s:%s", m.BookingID, m.Trigger, m.Occurrence)] = m.Status
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%s:\n%s\nwant\n%s", acc, dump(got), dump(want))
		}
	}
}

// TestErasureDuringPlanning: an account erased while 20 of its bookings are being planned
// at once keeps nothing, whatever the interleaving: each planner looks for the erasure mark
// after its writes.
func TestErasureDuringPlanning(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	acc := "erase-race"
	var wg sync.WaitGroup
	errs := make(chan error, 21)
	start := make(chan struct{})
	for id := int64(1); id <= 20; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			b := paidIn(reserved(acc, id), 1)
			for _, e := range []contract.Booking{b, moved(b, 2, "2027-06-20", "2027-06-24")} {
				m, err := bookingMessage(e)
				if err == nil {
					err = h.in.Booking(ctx, m)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	erased := propertyMsg(t, acc+":account", contract.AccountErased, contract.AccountErasure{AccountID: acc})
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		errs <- h.in.Property(ctx, erased)
	}()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.messages(t, acc)); n != 0 {
		t.Fatalf("%d messages survive the erasure", n)
	}
	n := 0
	if err := h.snaps.Bookings(ctx, acc, func(contract.Booking) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d snapshots survive the erasure (%v)", n, err)
	}
}
