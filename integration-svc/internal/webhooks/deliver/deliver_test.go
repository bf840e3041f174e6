package deliver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/integration-svc/internal/webhooks/deliver"
	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "deliver", &db, nil) }

const hmacKey = "test-internal-key-0123456789abcdef"

// receiver records what an endpoint receives; answer decides the status per request.
type receiver struct {
	mu     sync.Mutex
	got    []received
	answer func(r received) int
	srv    *httptest.Server
}

type received struct {
	ID, Type string
	Data     map[string]any
	Header   http.Header
	Body     []byte
	At       time.Time
}

func newReceiver(t *testing.T, answer func(r received) int) *receiver {
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		_ = json.Unmarshal(body, &p)
		rv := received{ID: r.Header.Get("webhook-id"), Type: p.Type, Data: p.Data, Header: r.Header.Clone(), Body: body, At: time.Now()}
		code := 200
		if rc.answer != nil {
			code = rc.answer(rv)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, rv)
		rc.mu.Unlock()
		w.WriteHeader(code)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

type env struct {
	st      *store.Store
	h       *hooks.Hooks
	d       *deliver.Deliverer
	account string
	// failNotices: that many recordings of a webhook.disabled notice fail (a store error).
	failNotices atomic.Int32
}

var accounts int

func start(t *testing.T, cfg deliver.Config) *env { t.Helper(); return startWith(t, cfg, nil) }

// startWith is start with the deliverer counting in meter.
func startWith(t *testing.T, cfg deliver.Config, meter metric.Meter) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	accounts++
	e := &env{st: st, h: hooks.New(st), account: fmt.Sprintf("acc%d%d", time.Now().UnixNano()%100000, accounts)}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Poll == 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.Schedule == nil {
		cfg.Schedule = []time.Duration{0}
	}
	if cfg.DisableMinFailures == 0 {
		cfg.DisableMinFailures = 1000
	}
	cfg.AllowHTTP = true
	notify := func(ctx context.Context, ev webhook.Event, except int64) error {
		if e.failNotices.Add(-1) >= 0 {
			return errors.New("the store failed")
		}
		return e.h.EmitExcept(ctx, ev, except)
	}
	e.d = deliver.New(cfg, st, st, tenancy.NewSigner(tenancy.CallerIntegration, hmacKey), slog.New(slog.DiscardHandler), meter, notify)
	e.h.SetWake(e.d.Wake)
	done := make(chan struct{})
	go func() { _ = e.d.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		eps, _ := st.ListEndpoints(context.Background(), e.account, 0)
		for _, ep := range eps {
			_ = st.DeleteEndpoint(context.Background(), e.account, ep.ID)
		}
	})
	if err := st.SetAllowsPrivate(ctx, e.account, true); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) endpoint(t *testing.T, url string, types ...string) webhook.Endpoint {
	t.Helper()
	ep, err := e.h.Create(context.Background(), webhook.Endpoint{Account: e.account, URL: url, EventTypes: types})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func (e *env) emit(t *testing.T, id string, property int64, typ string, at time.Time) {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"property_id": property, "n": id})
	if err := e.h.Emit(context.Background(), webhook.Event{ID: id, Account: e.account, Type: typ, PropertyID: property, At: at, Data: data}); err != nil {
		t.Fatal(err)
	}
}

func TestSignedAndVerifiedWithTheLibrary(t *testing.T) {
	// booking-svc's check: integration-svc's own key, on its hooks route.
	auth := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerIntegration, Key: hmacKey, Routes: []string{"GET /internal/hooks/booking/:id"}})
	booking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, _, err := auth.Verify(r.Header.Get, r.Method, r.URL.Path, r.URL.RawQuery, body); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get(tenancy.HeaderAccount) == "" || r.URL.Path != "/internal/hooks/booking/9" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"booking":{"booking_id":9,"guest":"filled at send time"}}`))
	}))
	defer booking.Close()
	rc := newReceiver(t, nil)
	e := start(t, deliver.Config{BookingURL: booking.URL})
	ep := e.endpoint(t, rc.srv.URL, "*")
	data, _ := json.Marshal(map[string]any{"booking_id": 9, "property_id": 1})
	if err := e.h.Emit(context.Background(), webhook.Event{ID: "msg_signed1", Account: e.account, Type: webhook.BookingCreated,
		PropertyID: 1, BookingID: 9, At: time.Now(), Data: data}); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "condition", 10*time.Second, func() bool { return len(rc.all()) == 1 })
	got := rc.all()[0]
	wh, _ := standardwebhooks.NewWebhook(ep.Secret)
	if err := wh.Verify(got.Body, got.Header); err != nil {
		t.Fatalf("the library refuses the signature: %v", err)
	}
	other, _ := standardwebhooks.NewWebhook(hooks.NewSecret())
	if other.Verify(got.Body, got.Header) == nil {
		t.Fatal("another secret verifies too")
	}
	if got.ID != "msg_signed1" || got.Header.Get("user-agent") != deliver.UserAgent || got.Header.Get("content-type") != "application/json" {
		t.Fatalf("headers %v", got.Header)
	}
	b, _ := got.Data["booking"].(map[string]any)
	if got.Type != webhook.BookingCreated || b["guest"] != "filled at send time" {
		t.Fatalf("payload %s", got.Body)
	}
	stored, _ := e.st.Data(context.Background(), webhook.Delivery{Account: e.account, WebhookID: ep.ID, MessageID: "msg_signed1"})
	if strings.Contains(string(stored), "guest") {
		t.Fatalf("the store holds the booking: %s", stored)
	}
	// rotation: for the overlap both secrets sign.
	rot, err := e.h.RotateSecret(context.Background(), e.account, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.emit(t, "msg_signed2", 1, webhook.PropertyUpdated, time.Now())
	eventually.Holds(t, "condition", 10*time.Second, func() bool { return len(rc.all()) == 2 })
	got = rc.all()[1]
	for _, s := range []string{ep.Secret, rot.Secret} {
		wh, _ := standardwebhooks.NewWebhook(s)
		if err := wh.Verify(got.Body, got.Header); err != nil {
			t.Fatalf("secret %s… does not verify after rotation: %v", s[:10], err)
		}
	}
}

func TestLaneOrderingByProperty(t *testing.T) {
	var mu sync.Mutex
	down := true
	rc := newReceiver(t, func(r received) int {
		mu.Lock()
		defer mu.Unlock()
		if down && r.Data["property_id"] == float64(1) {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e := start(t, deliver.Config{Schedule: []time.Duration{0, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
		100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}})
	e.endpoint(t, rc.srv.URL, webhook.PropertyUpdated)
	base := time.Now()
	for i := range 5 {
		e.emit(t, fmt.Sprintf("msg_a%d", i), 1, webhook.PropertyUpdated, base.Add(time.Duration(i)*time.Millisecond))
		e.emit(t, fmt.Sprintf("msg_b%d", i), 2, webhook.PropertyUpdated, base.Add(time.Duration(i)*time.Millisecond))
	}
	okOf := func(prefix string) []string {
		var ids []string
		for _, r := range rc.all() {
			if strings.HasPrefix(r.ID, prefix) && !(prefix == "msg_a" && r.At.IsZero()) {
				ids = append(ids, r.ID)
			}
		}
		return ids
	}
	// lane B flows while lane A's head keeps failing; A sends nothing but its head.
	eventually.Holds(t, "condition", 10*time.Second, func() bool { return len(okOf("msg_b")) == 5 })
	for i, id := range okOf("msg_b") {
		if id != fmt.Sprintf("msg_b%d", i) {
			t.Fatalf("lane B order %v", okOf("msg_b"))
		}
	}
	for _, id := range okOf("msg_a") {
		if id != "msg_a0" {
			t.Fatalf("lane A sent %s while its head was failing", id)
		}
	}
	mu.Lock()
	down = false
	mu.Unlock()
	eventually.Holds(t, "condition", 10*time.Second, func() bool {
		seen := map[string]bool{}
		for _, id := range okOf("msg_a") {
			seen[id] = true
		}
		return len(seen) == 5
	})
	// in order: after the retries of msg_a0, a1..a4 each once, in order.
	var after []string
	for _, id := range okOf("msg_a") {
		if id != "msg_a0" {
			after = append(after, id)
		}
	}
	if strings.Join(after, ",") != "msg_a1,msg_a2,msg_a3,msg_a4" {
		t.Fatalf("lane A after recovery: %v", after)
	}
}

func TestRetryScheduleThenFailedThenRedeliverKeepsID(t *testing.T) {
	var mu sync.Mutex
	fail := true
	rc := newReceiver(t, func(received) int {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	sched := []time.Duration{0, 300 * time.Millisecond, 600 * time.Millisecond}
	e := start(t, deliver.Config{Schedule: sched})
	ep := e.endpoint(t, rc.srv.URL, "*")
	e.emit(t, "msg_retry", 1, webhook.RatesUpdated, time.Now())
	eventually.Holds(t, "condition", 10*time.Second, func() bool {
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
		return len(ds) == 1 && ds[0].Status == webhook.StatusFailed
	})
	got := rc.all()
	if len(got) != 3 {
		t.Fatalf("%d attempts, want 3 (the schedule's length)", len(got))
	}
	for i := 1; i < 3; i++ {
		if gap := got[i].At.Sub(got[i-1].At); gap < sched[i] {
			t.Fatalf("attempt %d came %v after the previous, want ≥ %v", i+1, gap, sched[i])
		}
	}
	_, atts, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
	if a := atts["msg_retry"]; len(a) != 3 || a[2].StatusCode != 500 || a[2].Attempt != 3 || a[2].Error == "" {
		t.Fatalf("attempt log %+v", a)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	n, err := e.st.Redeliver(context.Background(), e.account, ep.ID, "msg_retry", time.Time{}, time.Time{}, false, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("redeliver %d %v", n, err)
	}
	e.h.Wake()
	eventually.Holds(t, "condition", 10*time.Second, func() bool { return len(rc.all()) == 4 })
	if id := rc.all()[3].ID; id != "msg_retry" {
		t.Fatalf("redelivered under %s", id)
	}
	// by range: every delivery created in it, ids kept.
	e.emit(t, "msg_range", 1, webhook.RatesUpdated, time.Now())
	// redelivered as a user does, once the log shows it delivered (a redelivery within
	// milliseconds of the attempt's end may be lost on FerretDB: docs/webhooks.md)
	eventually.Holds(t, "msg_range delivered in the log", 10*time.Second, func() bool {
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
		for _, d := range ds {
			if d.MessageID == "msg_range" {
				return d.Status == webhook.StatusDelivered && len(rc.all()) == 5
			}
		}
		return false
	})
	n, err = e.st.Redeliver(context.Background(), e.account, ep.ID, "", time.Now().Add(-time.Hour), time.Now().Add(time.Second), false, time.Now())
	if err != nil || n != 2 {
		t.Fatalf("redeliver range %d %v", n, err)
	}
	e.h.Wake()
	eventually.Holds(t, "condition", 10*time.Second, func() bool { return len(rc.all()) == 7 })
	ids := map[string]int{}
	for _, r := range rc.all()[5:] {
		ids[r.ID]++
	}
	if ids["msg_retry"] != 1 || ids["msg_range"] != 1 {
		t.Fatalf("range redelivery ids %v", ids)
	}
}

func TestDisableAfterStreakThenReenableResumes(t *testing.T) {
	var mu sync.Mutex
	fail := true
	bad := newReceiver(t, func(received) int {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	watcher := newReceiver(t, nil)
	e := start(t, deliver.Config{Schedule: []time.Duration{0}, DisableMinFailures: 3, DisableAfter: 0})
	ep := e.endpoint(t, bad.srv.URL, webhook.PropertyUpdated, webhook.WebhookDisabled)
	e.endpoint(t, watcher.srv.URL, webhook.WebhookDisabled)
	for i := range 3 {
		e.emit(t, fmt.Sprintf("msg_d%d", i), int64(10+i), webhook.PropertyUpdated, time.Now())
	}
	eventually.Holds(t, "the notice of the disabled endpoint", 10*time.Second, func() bool {
		got, _ := e.st.Endpoint(context.Background(), e.account, ep.ID)
		t.Logf("streak %d first %v enabled %v received %d", got.FailureStreak, got.FirstFailureAt, got.Enabled, len(bad.all()))
		return len(watcher.all()) == 1
	})
	notice := watcher.all()[0]
	if notice.Type != webhook.WebhookDisabled || notice.Data["webhook_id"] != float64(ep.ID) || notice.Data["failure_streak"] != float64(3) {
		t.Fatalf("notice %s", notice.Body)
	}
	got, _ := e.st.Endpoint(context.Background(), e.account, ep.ID)
	if got.Enabled || got.DisabledAt == nil || got.DisabledReason == "" {
		t.Fatalf("endpoint %+v", got)
	}
	// while disabled, new events wait.
	e.emit(t, "msg_waiting", 20, webhook.PropertyUpdated, time.Now())
	time.Sleep(300 * time.Millisecond)
	for _, r := range bad.all() {
		if r.ID == "msg_waiting" || r.Type == webhook.WebhookDisabled {
			t.Fatalf("a disabled endpoint received %s (%s)", r.ID, r.Type)
		}
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	on := true
	if _, err := e.h.Update(context.Background(), e.account, ep.ID, hooks.Change{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "the waiting delivery sent after re-enabling", 10*time.Second, func() bool {
		ds, atts, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
		for _, d := range ds {
			t.Logf("%s %s attempts %d %+v next %v", d.MessageID, d.Status, d.Attempts, atts[d.MessageID], d.NextAttemptAt)
		}
		for _, r := range bad.all() {
			if r.ID == "msg_waiting" {
				return true
			}
		}
		return false
	})
	got, _ = e.st.Endpoint(context.Background(), e.account, ep.ID)
	if !got.Enabled || got.FailureStreak != 0 || got.DisabledAt != nil {
		t.Fatalf("re-enabled endpoint %+v", got)
	}
}

func TestPrivateAddressRefusedAtConnectOnceSwitchedOff(t *testing.T) {
	rc := newReceiver(t, nil)
	e := start(t, deliver.Config{})
	ep := e.endpoint(t, rc.srv.URL, "*") // saved while the account was allowed loopback
	if err := e.st.SetAllowsPrivate(context.Background(), e.account, false); err != nil {
		t.Fatal(err)
	}
	e.emit(t, "msg_private", 1, webhook.PropertyUpdated, time.Now())
	eventually.Holds(t, "condition", 10*time.Second, func() bool {
		ds, atts, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
		return len(ds) == 1 && len(atts["msg_private"]) == 1
	})
	_, atts, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
	if a := atts["msg_private"][0]; !strings.Contains(a.Error, "forbidden address") {
		t.Fatalf("attempt %+v", a)
	}
	if len(rc.all()) != 0 {
		t.Fatal("the receiver was reached")
	}
}

func TestResponseExcerptCapped(t *testing.T) {
	big := strings.Repeat("é", 200<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "x"+big)
	}))
	defer srv.Close()
	e := start(t, deliver.Config{})
	ep := e.endpoint(t, srv.URL, "*")
	e.emit(t, "msg_big", 1, webhook.PropertyUpdated, time.Now())
	var a webhook.Attempt
	eventually.Holds(t, "condition", 10*time.Second, func() bool {
		_, atts, _ := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Limit: 10})
		if len(atts["msg_big"]) == 1 {
			a = atts["msg_big"][0]
			return true
		}
		return false
	})
	if len(a.ResponseExcerpt) > deliver.MaxExcerpt || len(a.ResponseExcerpt) < deliver.MaxExcerpt-1 || !utf8.ValidString(a.ResponseExcerpt) || a.StatusCode != 200 {
		t.Fatalf("excerpt of %d bytes, valid %v, status %d", len(a.ResponseExcerpt), utf8.ValidString(a.ResponseExcerpt), a.StatusCode)
	}
}

// A burst on one lane is drained by the worker that took its head, in order, without a
// round per delivery: with the store's periodic read turned off (an hour), every event
// still arrives, in event order, while events keep being recorded during the drain.
func TestBurstOnOneLaneDrainedInOrder(t *testing.T) {
	rc := newReceiver(t, nil)
	e := start(t, deliver.Config{Poll: time.Hour})
	ep := e.endpoint(t, rc.srv.URL, webhook.PropertyUpdated)
	const n = 60
	base := time.Now()
	for i := range n {
		e.emit(t, fmt.Sprintf("msg_burst%03d", i), 7, webhook.PropertyUpdated, base.Add(time.Duration(i)*time.Millisecond))
	}
	eventually.Holds(t, "every event of the burst", 30*time.Second, func() bool { return len(rc.all()) >= n })
	got := rc.all()
	if len(got) != n {
		t.Fatalf("%d received, want %d (a duplicate?)", len(got), n)
	}
	for i, r := range got {
		if r.ID != fmt.Sprintf("msg_burst%03d", i) {
			t.Fatalf("receipt %d is %s: out of order", i, r.ID)
		}
	}
	eventually.Holds(t, "every delivery recorded as delivered", 10*time.Second, func() bool {
		dels, _, err := e.st.ListDeliveries(context.Background(), e.account, ep.ID, hooks.DeliveryFilter{Status: webhook.StatusPending, Limit: 500})
		return err == nil && len(dels) == 0
	})
}

// A delivery held by a copy of its endpoint read just before the endpoint was enabled is
// released by the deliverer's repair and arrives; one recorded just after its endpoint was
// deleted is dropped, not tried again and again.
func TestHeldBehindEnabledEndpointArrivesAndOrphanIsDropped(t *testing.T) {
	ctx := context.Background()
	rc := newReceiver(t, nil)
	e := start(t, deliver.Config{Repair: 100 * time.Millisecond})
	ep := e.endpoint(t, rc.srv.URL, "*")
	stale := ep
	stale.Enabled = false
	record := func(id string, to webhook.Endpoint) {
		t.Helper()
		ev := webhook.Event{ID: id, Account: e.account, Type: webhook.PropertyUpdated, PropertyID: 1, At: time.Now(), Data: []byte(`{"property_id":1}`)}
		if err := e.st.AddDeliveries(ctx, ev, []webhook.Endpoint{to}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		e.d.Wake()
	}
	record("msg_stale", stale)
	eventually.Holds(t, "the delivery held behind an enabled endpoint arrives", 10*time.Second, func() bool {
		return len(rc.all()) == 1 && rc.all()[0].ID == "msg_stale"
	})
	gone := e.endpoint(t, rc.srv.URL, "*")
	if err := e.st.DeleteEndpoint(ctx, e.account, gone.ID); err != nil {
		t.Fatal(err)
	}
	record("msg_gone", gone)
	eventually.Holds(t, "the deleted endpoint's delivery dropped", 10*time.Second, func() bool {
		_, err := e.st.Data(ctx, webhook.Delivery{Account: e.account, WebhookID: gone.ID, MessageID: "msg_gone"})
		return errors.Is(err, hooks.ErrNotFound)
	})
	n, err := db.Collection(store.Queue).CountDocuments(ctx, bson.D{{Key: "account_id", Value: e.account}, {Key: "webhook_id", Value: gone.ID}})
	if err != nil || n != 0 || len(rc.all()) != 1 {
		t.Fatalf("after the drop: %d queued (%v), %d received", n, err, len(rc.all()))
	}
}

// One endpoint's backlog, longer than a round's window and waiting for a retry, does not keep
// another endpoint's new delivery waiting (the window holds lanes whose time has come, not
// the oldest deliveries).
func TestBacklogOfOneEndpointStarvesNoOther(t *testing.T) {
	down := newReceiver(t, func(received) int { return http.StatusServiceUnavailable })
	up := newReceiver(t, nil)
	e := start(t, deliver.Config{Window: 5, Schedule: []time.Duration{0, time.Hour}})
	e.endpoint(t, down.srv.URL, webhook.PropertyUpdated)
	e.endpoint(t, up.srv.URL, webhook.RatesUpdated)
	base := time.Now().Add(-time.Minute)
	for i := range 20 {
		e.emit(t, fmt.Sprintf("msg_back%d", i), 1, webhook.PropertyUpdated, base.Add(time.Duration(i)*time.Millisecond))
	}
	eventually.Holds(t, "the failing endpoint's head tried", 10*time.Second, func() bool { return len(down.all()) >= 1 })
	e.emit(t, "msg_other", 2, webhook.RatesUpdated, time.Now())
	eventually.Holds(t, "the other endpoint's delivery arrives", 10*time.Second, func() bool { return len(up.all()) == 1 })
	if n := len(down.all()); n != 1 {
		t.Fatalf("the failing endpoint got %d attempts, want its head once (the rest waits behind it)", n)
	}
}

// A held delivery at the head of its lane holds the lane: a newer delivery of the same
// property, not held, waits until the head is released (by the repair) and sent first.
func TestHeldHeadHoldsItsLane(t *testing.T) {
	ctx := context.Background()
	rc := newReceiver(t, nil)
	e := start(t, deliver.Config{Repair: 300 * time.Millisecond})
	ep := e.endpoint(t, rc.srv.URL, "*")
	stale := ep
	stale.Enabled = false
	base := time.Now()
	for i, to := range []webhook.Endpoint{stale, ep} {
		ev := webhook.Event{ID: fmt.Sprintf("msg_h%d", i), Account: e.account, Type: webhook.PropertyUpdated, PropertyID: 1,
			At: base.Add(time.Duration(i) * time.Millisecond), Data: []byte(`{"property_id":1}`)}
		if err := e.st.AddDeliveries(ctx, ev, []webhook.Endpoint{to}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	e.d.Wake()
	eventually.Holds(t, "both delivered", 10*time.Second, func() bool { return len(rc.all()) == 2 })
	if got := []string{rc.all()[0].ID, rc.all()[1].ID}; got[0] != "msg_h0" || got[1] != "msg_h1" {
		t.Fatalf("order %v, want the held head first", got)
	}
}

// Events derived from one message share their time: they arrive in the order derived
// (Seq), not in the order of their message ids.
func TestEventsOfOneMessageInDerivedOrder(t *testing.T) {
	ctx := context.Background()
	rc := newReceiver(t, nil)
	e := start(t, deliver.Config{})
	e.endpoint(t, rc.srv.URL, "*")
	at := time.Now()
	// ids sort against the derived order
	evs := []webhook.Event{
		{ID: "msg_z", Account: e.account, Type: webhook.BookingCreated, PropertyID: 1, At: at, Seq: 0, Data: []byte(`{"property_id":1}`)},
		{ID: "msg_m", Account: e.account, Type: webhook.PaymentAdded, PropertyID: 1, At: at, Seq: 1, Data: []byte(`{"property_id":1}`)},
		{ID: "msg_a", Account: e.account, Type: webhook.ArrivalFormCompleted, PropertyID: 1, At: at, Seq: 2, Data: []byte(`{"property_id":1}`)},
	}
	if err := e.h.EmitAll(ctx, evs); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "all three", 10*time.Second, func() bool { return len(rc.all()) == 3 })
	var got []string
	for _, r := range rc.all() {
		got = append(got, r.ID)
	}
	if strings.Join(got, ",") != "msg_z,msg_m,msg_a" {
		t.Fatalf("order %v, want msg_z,msg_m,msg_a", got)
	}
}

// The notice of a disabling whose recording failed right after the disabling is recorded by
// the repair: the account's other endpoint still gets it, once.
func TestDisabledNoticeRecordedAfterAFailure(t *testing.T) {
	bad := newReceiver(t, func(received) int { return http.StatusBadGateway })
	watcher := newReceiver(t, nil)
	e := start(t, deliver.Config{Schedule: []time.Duration{0}, DisableMinFailures: 2, Repair: 200 * time.Millisecond})
	e.failNotices.Store(1)
	ep := e.endpoint(t, bad.srv.URL, webhook.PropertyUpdated)
	e.endpoint(t, watcher.srv.URL, webhook.WebhookDisabled)
	for i := range 2 {
		e.emit(t, fmt.Sprintf("msg_n%d", i), int64(10+i), webhook.PropertyUpdated, time.Now())
	}
	eventually.Holds(t, "the notice after the failed recording", 10*time.Second, func() bool { return len(watcher.all()) == 1 })
	if n := watcher.all()[0]; n.Type != webhook.WebhookDisabled || n.Data["webhook_id"] != float64(ep.ID) {
		t.Fatalf("notice %s", n.Body)
	}
	got, _ := e.st.Endpoint(context.Background(), e.account, ep.ID)
	if got.Enabled || got.Notice != nil {
		t.Fatalf("endpoint after the notice: enabled %v, pending notice %v", got.Enabled, got.Notice)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(watcher.all()); n != 1 {
		t.Fatalf("the notice arrived %d times", n)
	}
}

// TestExcerpt: at most MaxExcerpt bytes of valid UTF-8, no rune cut, invalid bytes replaced
// rather than costing the rest.
func TestExcerpt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		min, max int
		prefix   string
	}{
		{"short, as it is", "ok", 2, 2, "ok"},
		{"ASCII cut at the cap", strings.Repeat("a", 2000), deliver.MaxExcerpt, deliver.MaxExcerpt, "aaa"},
		{"two-byte runes, none cut", strings.Repeat("é", 1000), deliver.MaxExcerpt, deliver.MaxExcerpt, "é"},
		{"three-byte runes, none cut", strings.Repeat("€", 1000), deliver.MaxExcerpt - 2, deliver.MaxExcerpt, "€"},
		{"Latin-1 (invalid) bytes replaced, the rest kept", strings.Repeat("caf\xe9 ", 400), deliver.MaxExcerpt - 2, deliver.MaxExcerpt, "caf\uFFFD caf\uFFFD "},
		{"short invalid replaced", "a\xffb", 5, 5, "a\uFFFDb"},
	} {
		got := deliver.Excerpt([]byte(tc.in))
		if len(got) < tc.min || len(got) > tc.max || !utf8.ValidString(got) || !strings.HasPrefix(got, tc.prefix) {
			t.Errorf("%s: %d bytes (want %d..%d), valid %v, starts %q", tc.name, len(got), tc.min, tc.max, utf8.ValidString(got), got[:min(len(got), 16)])
		}
	}
}
