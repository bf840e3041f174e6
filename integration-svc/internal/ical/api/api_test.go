package api

import (
	"context"
	"encoding/json"
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

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/integration-svc/internal/ical/poller"
	"github.com/vros/vros/integration-svc/internal/ical/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/fields/fieldstest"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "icalfeedapi_test", &db, nil) }

const testKey = "feedapi-test-key-0123"

type fakeBooking struct {
	mu    sync.Mutex
	syncs int
	// removeDelay: how long the delete's final sync takes.
	removeDelay time.Duration
}

func (b *fakeBooking) PropertyID(_ context.Context, _, code string) (int64, error) {
	if code == "V1" {
		return 17, nil
	}
	return 0, poller.ErrNoProperty
}

func (b *fakeBooking) Sync(_ context.Context, _ string, _ *feed.Feed, events []feed.Event) (poller.SyncResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.syncs++
	return poller.SyncResult{NightsBlocked: 3 * len(events)}, nil
}

func (b *fakeBooking) Remove(context.Context, string, *feed.Feed) error {
	b.mu.Lock()
	d := b.removeDelay
	b.syncs++
	b.mu.Unlock()
	time.Sleep(d)
	return nil
}

type nopHooks struct{}

func (nopHooks) Emit(context.Context, webhook.Event) error { return nil }

// policy allows private addresses to the accounts it lists.
type policy map[string]bool

func (p policy) AllowsPrivate(_ context.Context, account string) (bool, error) {
	return p[account], nil
}

var accounts atomic.Int64

func newApp(t *testing.T) (*fiber.App, string, string) {
	t.Helper()
	app, open, shut, _ := newAppWith(t, nil)
	return app, open, shut
}

// newAppWith is newApp with the API and booking-svc's fake changed by change first; it
// also returns the poller.
func newAppWith(t *testing.T, change func(*API, *fakeBooking)) (*fiber.App, string, string, *poller.Poller) {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "feedapi-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	open := fmt.Sprintf("acc%d", 100+accounts.Add(1))
	shut := fmt.Sprintf("acc%d", 100+accounts.Add(1))
	pol := policy{open: true}
	b := &fakeBooking{}
	p := &poller.Poller{Store: st, Booking: b, Hooks: nopHooks{}, Policy: pol,
		Cfg: poller.Config{Period: time.Second, Lease: time.Minute, Timeout: 5 * time.Second, MaxBody: 5 << 20, AllowHTTP: true}}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	api := &API{Store: st, Poller: p, Booking: b, Policy: pol, AllowHTTP: true}
	if change != nil {
		change(api, b)
	}
	api.Register(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	t.Cleanup(p.Wait)
	return app, open, shut, p
}

func call(t *testing.T, app *fiber.App, acc, body string) (int, map[string]any) {
	t.Helper()
	const path = "/internal/a/ical-feed"
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

func violations(out map[string]any) string {
	var list []string
	errs, _ := out["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		list = append(list, fmt.Sprint(m["field"], ": ", m["message"]))
	}
	return strings.Join(list, "\n")
}

func feedServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART;VALUE=DATE:20990110\r\nDTEND;VALUE=DATE:20990113\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRules: every field and rule of every action, named in the A envelope; a refused
// request changes nothing.
func TestRules(t *testing.T) {
	app, acc, shut := newApp(t)
	srv := feedServer(t)
	base := fmt.Sprintf(`{"action":"create","feed":{"internal_code":"V1","url":%q,"name":"Airbnb","interval_minutes":15}}`, srv.URL+"/a.ics")
	rows := []struct {
		name  string
		acc   string
		code  int
		want  string
		edits []fieldstest.Edit
	}{
		{"valid", acc, 200, "", nil},
		// Interface A's common reading rule: unknown members are ignored (docs/interface-a.md).
		{"unknown member ignored", acc, 200, "", []fieldstest.Edit{fieldstest.Set("feed.colour", "red"), fieldstest.Set("extra", 1)}},
		{"action missing", acc, 400, "action: is required", []fieldstest.Edit{fieldstest.Set("action", fieldstest.Del)}},
		{"action unknown", acc, 400, "action: must be one of create, list, get, update, delete, sync", []fieldstest.Edit{fieldstest.Set("action", "poll")}},
		{"feed missing", acc, 400, "feed: is required", []fieldstest.Edit{fieldstest.Set("feed", fieldstest.Del)}},
		{"internal_code missing", acc, 400, "feed.internal_code: is required", []fieldstest.Edit{fieldstest.Set("feed.internal_code", fieldstest.Del)}},
		{"internal_code too long", acc, 400, "feed.internal_code: must be at most 10 characters", []fieldstest.Edit{fieldstest.Set("feed.internal_code", fieldstest.Chars(11))}},
		{"internal_code unknown", acc, 404, "", []fieldstest.Edit{fieldstest.Set("feed.internal_code", "V9")}},
		{"url missing", acc, 400, "feed.url: is required", []fieldstest.Edit{fieldstest.Set("feed.url", fieldstest.Del)}},
		{"url not a link", acc, 400, "feed.url: must be an absolute http(s) link", []fieldstest.Edit{fieldstest.Set("feed.url", "calendar.ics")}},
		{"url ftp", acc, 400, "feed.url: must be an http or https link", []fieldstest.Edit{fieldstest.Set("feed.url", "ftp://example.com/a.ics")}},
		{"url private without the switch", shut, 400, "feed.url: must not be a private, loopback or link-local address", nil},
		{"name too long", acc, 400, "feed.name: must be at most 100 characters", []fieldstest.Edit{fieldstest.Set("feed.name", fieldstest.Chars(101))}},
		{"interval too small", acc, 400, "feed.interval_minutes: must be between 5 and 1440", []fieldstest.Edit{fieldstest.Set("feed.interval_minutes", 4)}},
		{"interval too large", acc, 400, "feed.interval_minutes: must be between 5 and 1440", []fieldstest.Edit{fieldstest.Set("feed.interval_minutes", 1441)}},
		{"interval not whole", acc, 400, "feed.interval_minutes: must be a whole number", []fieldstest.Edit{fieldstest.Set("feed.interval_minutes", 15.5)}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			body := string(fieldstest.Apply(t, base, r.edits...))
			_, before := call(t, app, r.acc, `{"action":"list"}`)
			code, out := call(t, app, r.acc, body)
			if code != r.code || violations(out) != r.want {
				t.Fatalf("%d %v, want %d %q", code, out, r.code, r.want)
			}
			if code != 200 {
				if _, after := call(t, app, r.acc, `{"action":"list"}`); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Fatalf("refused create changed the list: %v", after)
				}
			}
		})
	}
	// The message names a bad value in the A envelope.
	if _, out := call(t, app, acc, `{"action":"create","feed":{"internal_code":"V1","url":"x"}}`); out["error_type"] != "validation_error" || out["code"] != float64(400) {
		t.Fatal(out)
	}
	_, created := call(t, app, acc, base)
	id := created["data"].(map[string]any)["feed_id"]
	upd := []struct {
		name, body, want string
		code             int
	}{
		{"update feed_id missing", `{"action":"update","feed":{"name":"x"}}`, "feed.feed_id: is required", 400},
		{"get feed_id not a number", `{"action":"get","feed":{"feed_id":"abc"}}`, "feed.feed_id: must be a number", 400},
		{"get unknown feed", `{"action":"get","feed":{"feed_id":999999}}`, "", 404},
		{"update url", fmt.Sprintf(`{"action":"update","feed":{"feed_id":%v,"url":"nope"}}`, id), "feed.url: must be an absolute http(s) link", 400},
		{"update interval", fmt.Sprintf(`{"action":"update","feed":{"feed_id":%v,"interval_minutes":0}}`, id), "feed.interval_minutes: must be between 5 and 1440", 400},
		{"update enabled", fmt.Sprintf(`{"action":"update","feed":{"feed_id":%v,"enabled":"maybe"}}`, id), "feed.enabled: must be a boolean", 400},
		{"update name", fmt.Sprintf(`{"action":"update","feed":{"feed_id":%v,"name":%q}}`, id, fieldstest.Chars(101)), "feed.name: must be at most 100 characters", 400},
		{"update property", fmt.Sprintf(`{"action":"update","feed":{"feed_id":%v,"internal_code":"V2"}}`, id), "feed.internal_code: cannot be changed; an update takes url, name, interval_minutes and enabled", 400},
		{"list unknown property", `{"action":"list","feed":{"internal_code":"V9"}}`, "", 404},
	}
	for _, r := range upd {
		t.Run(r.name, func(t *testing.T) {
			code, out := call(t, app, acc, r.body)
			if code != r.code || violations(out) != r.want {
				t.Fatalf("%d %v, want %d %q", code, out, r.code, r.want)
			}
		})
	}
	// Another account does not see the feed.
	if code, _ := call(t, app, shut, fmt.Sprintf(`{"action":"get","feed":{"feed_id":%v}}`, id)); code != 404 {
		t.Fatalf("another account's feed: %d", code)
	}
}

// TestLifecycle: create, sync (polled now), update, disable, list by property, delete;
// ids as numbers or numeric strings.
func TestLifecycle(t *testing.T) {
	app, acc, _ := newApp(t)
	srv := feedServer(t)
	code, out := call(t, app, acc, fmt.Sprintf(`{"action":"create","feed":{"internal_code":"V1","url":%q}}`, srv.URL+"/a.ics"))
	if code != 200 {
		t.Fatal(out)
	}
	f := out["data"].(map[string]any)
	if f["property_id"] != float64(17) || f["interval_minutes"] != float64(15) || f["enabled"] != true || f["name"] != "" {
		t.Fatal(f)
	}
	id := int64(f["feed_id"].(float64))
	code, out = call(t, app, acc, fmt.Sprintf(`{"action":"sync","feed":{"feed_id":"%d"}}`, id))
	st := out["data"].(map[string]any)["status"].(map[string]any)
	if code != 200 || st["events_imported"] != float64(1) || st["nights_blocked"] != float64(3) || st["last_success_at"] == nil || st["last_error"] != "" {
		t.Fatal(code, out)
	}
	code, out = call(t, app, acc, fmt.Sprintf(`{"action":"update","feed":{"feed_id":%d,"enabled":false,"interval_minutes":60,"name":"VRBO"}}`, id))
	d := out["data"].(map[string]any)
	if code != 200 || d["enabled"] != false || d["interval_minutes"] != float64(60) || d["name"] != "VRBO" || d["status"].(map[string]any)["next_poll_at"] != nil {
		t.Fatal(code, out)
	}
	// Enabled again with a new interval in one update: due at once (both rules move the next
	// poll; one wins, not a 500).
	code, out = call(t, app, acc, fmt.Sprintf(`{"action":"update","feed":{"feed_id":%d,"enabled":true,"interval_minutes":30}}`, id))
	if code != 200 {
		t.Fatal(code, out)
	}
	if d := out["data"].(map[string]any); d["enabled"] != true || d["interval_minutes"] != float64(30) ||
		d["status"].(map[string]any)["next_poll_at"] == nil || d["status"].(map[string]any)["next_poll_at"].(string) > time.Now().UTC().Format(time.RFC3339) {
		t.Fatal(out)
	}
	// Disabled, then enabled again with a new link in one update (both rules reset the
	// failure streak; once, not a 500).
	if code, out = call(t, app, acc, fmt.Sprintf(`{"action":"update","feed":{"feed_id":%d,"enabled":false}}`, id)); code != 200 {
		t.Fatal(code, out)
	}
	code, out = call(t, app, acc, fmt.Sprintf(`{"action":"update","feed":{"feed_id":%d,"enabled":true,"url":%q}}`, id, srv.URL+"/b.ics"))
	if code != 200 || out["data"].(map[string]any)["url"] != srv.URL+"/b.ics" {
		t.Fatal(code, out)
	}
	_, out = call(t, app, acc, `{"action":"list","feed":{"internal_code":"V1"}}`)
	if l := out["data"].(map[string]any)["feeds"].([]any); len(l) != 1 {
		t.Fatal(out)
	}
	code, out = call(t, app, acc, fmt.Sprintf(`{"action":"delete","feed":{"feed_id":%d}}`, id))
	if code != 200 || out["data"].(map[string]any)["deleted"] != true {
		t.Fatal(out)
	}
	if code, _ := call(t, app, acc, fmt.Sprintf(`{"action":"get","feed":{"feed_id":%d}}`, id)); code != 404 {
		t.Fatal(code)
	}
	if _, out = call(t, app, acc, `{"action":"list"}`); len(out["data"].(map[string]any)["feeds"].([]any)) != 0 {
		t.Fatal(out)
	}
}

// TestPerPropertyLimit: the 21st feed of a property is refused, naming feed.
func TestPerPropertyLimit(t *testing.T) {
	app, acc, _ := newApp(t)
	srv := feedServer(t)
	body := fmt.Sprintf(`{"action":"create","feed":{"internal_code":"V1","url":%q}}`, srv.URL+"/a.ics")
	for i := range feed.MaxPerProperty {
		if code, out := call(t, app, acc, body); code != 200 {
			t.Fatal(i, out)
		}
	}
	code, out := call(t, app, acc, body)
	if code != 400 || violations(out) != "feed: a property may have at most 20 feeds" {
		t.Fatal(code, out)
	}
}

// TestAnswersInTime: an action that polls answers within the API's budget (edge gives up
// after 30 s): a sync whose poll is not done by then answers 409 "still being polled" and
// the poll goes on in the background; a sync while another poll holds the feed waits at
// most the shorter wait; an update of url answers the updated feed; a delete answers
// deleted while booking-svc is still removing the blocks, and the removal finishes.
func TestAnswersInTime(t *testing.T) {
	// An answer that waited for the slow poll (or removal) comes after slow: the bounds below are
	// slow, not the budget plus a guessed margin, so that a loaded machine has seconds to spare.
	const budget, wait, slow = 800 * time.Millisecond, 300 * time.Millisecond, 3 * time.Second
	app, acc, _, p := newAppWith(t, func(a *API, b *fakeBooking) {
		a.Budget, a.Wait = budget, wait
		b.removeDelay = slow
	})
	var hang atomic.Bool
	hang.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hang.Load() {
			time.Sleep(slow)
		}
		_, _ = w.Write([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART;VALUE=DATE:20990110\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
	}))
	t.Cleanup(srv.Close)
	code, out := call(t, app, acc, fmt.Sprintf(`{"action":"create","feed":{"internal_code":"V1","url":%q}}`, srv.URL+"/a.ics"))
	if code != 200 {
		t.Fatal(out)
	}
	id := int64(out["data"].(map[string]any)["feed_id"].(float64))
	timed := func(body string) (int, map[string]any, time.Duration) {
		t.Helper()
		start := time.Now()
		code, out := call(t, app, acc, body)
		return code, out, time.Since(start)
	}
	syncBody := fmt.Sprintf(`{"action":"sync","feed":{"feed_id":%d}}`, id)
	code, out, took := timed(syncBody)
	if code != 409 || !strings.Contains(fmt.Sprint(out["error_message"]), "still being polled") || took >= slow {
		t.Fatalf("slow sync: %d %v after %s, want 409 after the budget (%s), before the poll ends", code, out, took, budget)
	}
	// The poll goes on: a sync now waits for it only wait, then 409.
	code, _, took = timed(syncBody)
	if code != 409 || took >= slow-budget {
		t.Fatalf("sync while polled: %d after %s, want 409 after the wait (%s), before the poll ends", code, took, wait)
	}
	p.Wait()
	_, out = call(t, app, acc, fmt.Sprintf(`{"action":"get","feed":{"feed_id":%d}}`, id))
	if st := out["data"].(map[string]any)["status"].(map[string]any); st["last_success_at"] == nil || st["events_imported"] != float64(1) {
		t.Fatalf("the background poll was not recorded: %v", st)
	}
	code, out, took = timed(fmt.Sprintf(`{"action":"update","feed":{"feed_id":%d,"url":%q}}`, id, srv.URL+"/b.ics"))
	if code != 200 || out["data"].(map[string]any)["url"] != srv.URL+"/b.ics" || took >= slow {
		t.Fatalf("update of url: %d %v after %s", code, out, took)
	}
	p.Wait()
	hang.Store(false)
	code, out, took = timed(fmt.Sprintf(`{"action":"delete","feed":{"feed_id":%d}}`, id))
	if code != 200 || out["data"].(map[string]any)["deleted"] != true || took >= slow {
		t.Fatalf("delete: %d %v after %s", code, out, took)
	}
	p.Wait()
	if n, _ := db.Collection(store.Feeds).CountDocuments(context.Background(), bson.D{{Key: "_id", Value: feed.Key(acc, id)}}); n != 0 {
		t.Fatalf("the removal did not finish: %d", n)
	}
}
