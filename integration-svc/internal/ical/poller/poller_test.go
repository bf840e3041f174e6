package poller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/integration-svc/internal/ical/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "icalpoller_test", &db, nil) }

// fakeBooking stands in for booking-svc's iCal routes. With booked set, it plays the
// sync as booking-svc does for one feed: the feed's blocks become exactly the wanted
// nights no booking holds, and the nights bookings hold are conflicts; else it blocks
// every night and answers conflicts.
type fakeBooking struct {
	mu        sync.Mutex
	syncs     [][]feed.Event
	fail      error
	conflicts []feed.Conflict
	booked    map[string]int64 // night → booking id
	blocked   map[string]bool  // the feed's blocked nights after the last sync
	// incomplete is how many of the next answers say the sync stopped early (-1: all).
	incomplete int
	// finals counts the delete's final syncs; removeErr is their answer. gone: every
	// sync answers 410 (the feed was removed).
	finals    int
	removeErr error
	gone      bool
	// removeIncomplete: how many of the next final syncs stop early (-1: all).
	removeIncomplete int
}

func (b *fakeBooking) Remove(context.Context, string, *feed.Feed) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	b.finals++
	if b.removeIncomplete != 0 {
		if b.removeIncomplete > 0 {
			b.removeIncomplete--
		}
		return ErrIncomplete
	}
	if b.removeErr == nil {
		b.blocked = nil
	}
	return b.removeErr
}

func (b *fakeBooking) finalSyncs() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.finals
}

func (b *fakeBooking) PropertyID(context.Context, string, string) (int64, error) { return 17, nil }

func (b *fakeBooking) Sync(_ context.Context, _ string, _ *feed.Feed, events []feed.Event) (SyncResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return SyncResult{}, b.fail
	}
	if b.gone {
		return SyncResult{}, ErrFeedGone
	}
	b.syncs = append(b.syncs, events)
	var res SyncResult
	if b.booked != nil {
		res = b.play(events)
	} else {
		res = SyncResult{NightsBlocked: nightsOf(events), Conflicts: b.conflicts}
	}
	if b.incomplete != 0 {
		res.Incomplete = true
		if b.incomplete > 0 {
			b.incomplete--
		}
	}
	return res, nil
}

func nightsOf(events []feed.Event) int {
	n := 0
	for _, e := range events {
		s, _ := time.Parse(time.DateOnly, e.Start)
		en, _ := time.Parse(time.DateOnly, e.End)
		n += int(en.Sub(s).Hours() / 24)
	}
	return n
}

// play is the sync against booked: one conflict per event holding booked nights (their
// first and last night, the bookings in order).
func (b *fakeBooking) play(events []feed.Event) SyncResult {
	b.blocked = map[string]bool{}
	res := SyncResult{Conflicts: []feed.Conflict{}}
	for _, e := range events {
		s, _ := time.Parse(time.DateOnly, e.Start)
		en, _ := time.Parse(time.DateOnly, e.End)
		var c *feed.Conflict
		for d := s; d.Before(en); d = d.AddDate(0, 0, 1) {
			night := d.Format(time.DateOnly)
			id, held := b.booked[night]
			if !held {
				b.blocked[night] = true
				continue
			}
			if c == nil {
				c = &feed.Conflict{UID: e.UID, StartDate: night}
			}
			c.EndDate = night
			if !slices.Contains(c.BookingIDs, id) {
				c.BookingIDs = append(c.BookingIDs, id)
			}
		}
		if c != nil {
			res.Conflicts = append(res.Conflicts, *c)
		}
	}
	res.NightsBlocked = len(b.blocked)
	return res
}

func (b *fakeBooking) nights() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Collect(maps.Keys(b.blocked))
	slices.Sort(out)
	return out
}

func (b *fakeBooking) calls() [][]feed.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]feed.Event(nil), b.syncs...)
}

type fakeHooks struct {
	mu     sync.Mutex
	events []webhook.Event
}

func (h *fakeHooks) Emit(_ context.Context, e webhook.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
	return nil
}

type fakePolicy bool

func (p fakePolicy) AllowsPrivate(context.Context, string) (bool, error) { return bool(p), nil }

// clock is a settable time shared by the pollers of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

const calendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:ev1\r\nSUMMARY:Guest Name\r\nDTSTART;VALUE=DATE:20270110\r\nDTEND;VALUE=DATE:20270113\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

type env struct {
	store   *store.Store
	booking *fakeBooking
	hooks   *fakeHooks
	clock   *clock
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	for _, c := range []string{store.Feeds, store.Leases, store.Fetches} {
		if _, err := db.Collection(c).DeleteMany(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: s, booking: &fakeBooking{}, hooks: &fakeHooks{},
		clock: &clock{t: time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)}}
}

func (e *env) poller(private bool) *Poller {
	return &Poller{Store: e.store, Booking: e.booking, Hooks: e.hooks, Policy: fakePolicy(private), Now: e.clock.Now,
		Cfg: Config{Period: time.Second, Lease: 2 * time.Minute, Timeout: 5 * time.Second, MaxBody: 5 << 20, Workers: 3, AllowHTTP: true}}
}

func (e *env) create(t *testing.T, account, url string) *feed.Feed {
	t.Helper()
	now := e.clock.Now()
	f := &feed.Feed{AccountID: account, PropertyID: 17, InternalCode: "V1", URL: url, Name: "Airbnb", IntervalMinutes: 15,
		Enabled: true, CreatedAt: now, UpdatedAt: now, Status: feed.Status{NextPollAt: now}}
	if err := e.store.Create(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return f
}

func (e *env) get(t *testing.T, f *feed.Feed) *feed.Feed {
	t.Helper()
	g, err := e.store.Get(context.Background(), f.AccountID, f.FeedID)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestConditionalGET: the second poll sends the ETag back; the 304 is a success and the
// events of the last full answer are synced again (booking-svc changes a feed's blocks only
// during a sync, so nights held by something else when the file came are claimed only then).
func TestConditionalGET(t *testing.T) {
	e := setup(t)
	var full, notModified atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(calendar))
	}))
	defer srv.Close()
	f := e.create(t, "acc1", srv.URL+"/cal.ics")
	p := e.poller(true)
	ctx := context.Background()
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	g := e.get(t, f)
	if g.Status.EventsImported != 1 || g.Status.NightsBlocked != 3 || g.Status.LastSuccessAt == nil {
		t.Fatalf("after first poll: %+v", g.Status)
	}
	if !g.Status.NextPollAt.Equal(e.clock.Now().Add(15 * time.Minute)) {
		t.Fatalf("next poll %s", g.Status.NextPollAt)
	}
	// Not due yet: nothing happens.
	if err := p.RunDue(ctx); err != nil || full.Load()+notModified.Load() != 1 {
		t.Fatalf("polled before due: %v", err)
	}
	e.clock.Set(e.clock.Now().Add(15 * time.Minute))
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if full.Load() != 1 || notModified.Load() != 1 {
		t.Fatalf("full %d, 304 %d", full.Load(), notModified.Load())
	}
	calls := e.booking.calls()
	if len(calls) != 2 {
		t.Fatalf("%d syncs after the 304, want 2 (the kept events again)", len(calls))
	}
	g = e.get(t, f)
	if g.Status.ConsecutiveFailures != 0 || !g.Status.LastSuccessAt.Equal(e.clock.Now()) || g.Status.EventsImported != 1 {
		t.Fatalf("after 304: %+v", g.Status)
	}
	want := []feed.Event{{UID: "ev1", Start: "2027-01-10", End: "2027-01-13"}}
	if !slices.Equal(calls[0], want) || !slices.Equal(calls[1], want) {
		t.Fatalf("synced %+v", calls)
	}
}

// TestNewLinkSendsNoValidators: the answer kept for 304s names its link; a feed whose link
// changed asks the new one for the whole file.
func TestNewLinkSendsNoValidators(t *testing.T) {
	e := setup(t)
	var conditional atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") != "" {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(calendar))
	}))
	defer srv.Close()
	f := e.create(t, "acc13", srv.URL+"/a.ics")
	p := e.poller(true)
	ctx := context.Background()
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	link := srv.URL + "/b.ics"
	if _, err := e.store.Update(ctx, f.AccountID, f.FeedID, feed.Change{URL: &link}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if conditional.Load() != 0 || len(e.booking.calls()) != 2 {
		t.Fatalf("%d conditional requests, %d syncs", conditional.Load(), len(e.booking.calls()))
	}
	kept, err := e.store.LastFetched(ctx, f.ID, true)
	if err != nil || kept == nil || kept.URL != link || kept.ETag != `"v1"` || len(kept.Events) != 1 {
		t.Fatalf("%+v %v", kept, err)
	}
}

// TestNotModifiedClaimsFreedNights: a feed's event overlaps a vros booking (a conflict,
// those nights not blocked); the booking is cancelled; the channel's next answer is a 304,
// and the freed nights are blocked by that poll, not left for vros to sell.
func TestNotModifiedClaimsFreedNights(t *testing.T) {
	e := setup(t)
	e.booking.booked = map[string]int64{"2027-01-11": 9}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(calendar))
	}))
	defer srv.Close()
	f := e.create(t, "acc12", srv.URL+"/cal.ics")
	p := e.poller(true)
	if err := p.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.booking.nights(); !slices.Equal(got, []string{"2027-01-10", "2027-01-12"}) {
		t.Fatalf("blocked %v", got)
	}
	if g := e.get(t, f); len(g.Status.Conflicts) != 1 {
		t.Fatalf("%+v", g.Status)
	}
	e.booking.mu.Lock()
	delete(e.booking.booked, "2027-01-11") // the booking is cancelled
	e.booking.mu.Unlock()
	e.clock.Set(e.clock.Now().Add(15 * time.Minute))
	if err := p.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.booking.nights(); !slices.Equal(got, []string{"2027-01-10", "2027-01-11", "2027-01-12"}) {
		t.Fatalf("after the 304: blocked %v, want the freed night too", got)
	}
	if g := e.get(t, f); len(g.Status.Conflicts) != 0 || g.Status.NightsBlocked != 3 || g.Status.LastError != "" {
		t.Fatalf("%+v", g.Status)
	}
}

// TestFailures: every kind of failure counts, backs off interval × 2^(n−1) up to a day and
// never touches what was imported (no sync call).
func TestFailures(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		booking error
		maxBody int64
		want    string
	}{
		{"status 500", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, nil, 0, "the feed answered HTTP 500"},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/x", http.StatusFound) }, nil, 0, "HTTP 302"},
		{"garbage", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }, nil, 0, "not an iCal calendar"},
		{"over size", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(calendar + strings.Repeat("X-PAD:0123456789\r\n", 200)))
		}, nil, 2048, "feed larger than 2 KiB"},
		{"booking-svc down", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }, errors.New("connection refused"), 0, "writing the feed's blocks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			e.booking.fail = c.booking
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			f := e.create(t, "acc2", srv.URL+"/cal.ics")
			p := e.poller(true)
			if c.maxBody > 0 {
				p.Cfg.MaxBody = c.maxBody
			}
			for i, wait := range []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
				if err := p.RunDue(context.Background()); err != nil {
					t.Fatal(err)
				}
				g := e.get(t, f)
				if g.Status.ConsecutiveFailures != i+1 || !strings.Contains(g.Status.LastError, c.want) {
					t.Fatalf("poll %d: %+v", i+1, g.Status)
				}
				if got := g.Status.NextPollAt.Sub(e.clock.Now()); got != wait {
					t.Fatalf("poll %d: next in %s, want %s", i+1, got, wait)
				}
				e.clock.Set(g.Status.NextPollAt)
			}
			if n := len(e.booking.calls()); n != 0 {
				t.Fatalf("%d syncs on failed polls", n)
			}
		})
	}
}

// TestIncompleteSyncGoesOn: booking-svc answers "complete": false twice (it stopped at its
// deadline after making progress), then complete: the poll sends the same sync again at
// once until it is complete, and the poll is an ordinary success.
func TestIncompleteSyncGoesOn(t *testing.T) {
	e := setup(t)
	e.booking.incomplete = 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer srv.Close()
	f := e.create(t, "acc15", srv.URL+"/cal.ics")
	e.booking.conflicts = []feed.Conflict{{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{9}}}
	if err := e.poller(true).RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := e.booking.calls()
	if len(calls) != 3 || !slices.Equal(calls[0], calls[2]) {
		t.Fatalf("%d syncs, want 3 of the same events", len(calls))
	}
	g := e.get(t, f)
	if g.Status.ConsecutiveFailures != 0 || g.Status.LastError != "" || g.Status.Note != "" || g.Status.LastSuccessAt == nil ||
		!g.Status.NextPollAt.Equal(e.clock.Now().Add(15*time.Minute)) || len(e.hooks.events) != 1 {
		t.Fatalf("%+v, %d events", g.Status, len(e.hooks.events))
	}
}

// TestIncompleteSyncIsNoFailure: a sync still incomplete when the poll must end (its
// continuations used up, or no time left before its lease ends for another booking-svc
// call) is no failure: no backoff, no streak, no error, a note, and the next poll soon;
// conflicts are raised once the sync is complete. The poll after completes it.
func TestIncompleteSyncIsNoFailure(t *testing.T) {
	for _, c := range []struct {
		name      string
		bookingTO time.Duration
		syncs     int
	}{
		{"continuations used up", time.Second, 1 + MaxContinuations},
		{"no time left in the lease", 2 * time.Minute, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			e.booking.incomplete = -1
			e.booking.conflicts = []feed.Conflict{{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{9}}}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
			defer srv.Close()
			f := e.create(t, "acc16", srv.URL+"/cal.ics")
			p := e.poller(true)
			p.Cfg.BookingTimeout = c.bookingTO
			if err := p.RunDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := len(e.booking.calls()); n != c.syncs {
				t.Fatalf("%d syncs, want %d", n, c.syncs)
			}
			g := e.get(t, f)
			next := g.Status.NextPollAt.Sub(e.clock.Now())
			if g.Status.ConsecutiveFailures != 0 || g.Status.LastError != "" || g.Status.LastErrorAt != nil ||
				!strings.Contains(g.Status.Note, "import in progress") || next <= 0 || next > time.Minute || len(e.hooks.events) != 0 {
				t.Fatalf("%+v, next in %s, %d events", g.Status, next, len(e.hooks.events))
			}
			e.booking.mu.Lock()
			e.booking.incomplete = 0
			e.booking.mu.Unlock()
			e.clock.Set(g.Status.NextPollAt)
			if err := p.RunDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			g = e.get(t, f)
			if g.Status.Note != "" || !g.Status.NextPollAt.Equal(e.clock.Now().Add(15*time.Minute)) || len(e.hooks.events) != 1 {
				t.Fatalf("after: %+v, %d events", g.Status, len(e.hooks.events))
			}
		})
	}
}

// TestSkippedEventsCounted: events the parse leaves out as unusable (no UID, an
// unreadable DTSTART) are counted in the status, and the count stays through a 304.
func TestSkippedEventsCounted(t *testing.T) {
	e := setup(t)
	body := strings.Replace(calendar, "END:VCALENDAR", "BEGIN:VEVENT\r\nUID:bad\r\nDTSTART:next friday\r\nEND:VEVENT\r\n"+
		"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20270120\r\nEND:VEVENT\r\nEND:VCALENDAR", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	f := e.create(t, "acc19", srv.URL+"/a.ics")
	p := e.poller(true)
	for range 2 {
		if err := p.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if g := e.get(t, f); g.Status.EventsSkipped != 2 || g.Status.EventsImported != 1 {
			t.Fatalf("%+v", g.Status)
		}
		e.clock.Set(e.clock.Now().Add(15 * time.Minute))
	}
}

// TestPrivateRefusedAtPoll: without the account's switch a loopback link is refused before
// any connection.
func TestPrivateRefusedAtPoll(t *testing.T) {
	e := setup(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	f := e.create(t, "acc3", srv.URL+"/cal.ics")
	if err := e.poller(false).RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := e.get(t, f)
	if !strings.Contains(g.Status.LastError, "private, loopback or link-local") || hits.Load() != 0 {
		t.Fatalf("%+v, %d hits", g.Status, hits.Load())
	}
}

// TestLease: two pollers, one due feed: it is polled once; a poller that took the lease
// and died leaves the feed to another once the lease is over.
func TestLease(t *testing.T) {
	e := setup(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		time.Sleep(200 * time.Millisecond)
		_, _ = w.Write([]byte(calendar))
	}))
	defer srv.Close()
	f := e.create(t, "acc4", srv.URL+"/cal.ics")
	var wg sync.WaitGroup
	for range 2 {
		p := e.poller(true)
		wg.Go(func() {
			if err := p.RunDue(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if hits.Load() != 1 || len(e.booking.calls()) != 1 {
		t.Fatalf("%d fetches, %d syncs; want 1 each", hits.Load(), len(e.booking.calls()))
	}
	// A poller takes the due feed and dies.
	e.clock.Set(e.clock.Now().Add(15 * time.Minute))
	dead, err := e.store.LeaseDue(context.Background(), e.clock.Now(), 2*time.Minute)
	if err != nil || dead == nil || dead.FeedID != f.FeedID {
		t.Fatal(dead, err)
	}
	p := e.poller(true)
	e.clock.Set(e.clock.Now().Add(time.Minute))
	if err := p.RunDue(context.Background()); err != nil || hits.Load() != 1 {
		t.Fatalf("polled under another's lease: %v, %d", err, hits.Load())
	}
	e.clock.Set(e.clock.Now().Add(61 * time.Second))
	if err := p.RunDue(context.Background()); err != nil || hits.Load() != 2 {
		t.Fatalf("not taken over after the lease: %v, %d", err, hits.Load())
	}
	// The dead poller's late finish changes nothing: its lease token is gone.
	dead.Status.LastError = "late"
	if ok, err := e.store.Finish(context.Background(), dead, dead.URL, nil); ok || err != nil {
		t.Fatal(ok, err)
	}
	if g := e.get(t, f); g.Status.LastError != "" {
		t.Fatal(g.Status)
	}
}

// TestDeleteInterrupted: a delete whose block removal fails is gone for the account at
// once, and the loop finishes it (empty sync, then the document) once booking-svc answers.
func TestDeleteInterrupted(t *testing.T) {
	e := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer srv.Close()
	f := e.create(t, "acc5", srv.URL+"/cal.ics")
	p := e.poller(true)
	ctx := context.Background()
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	e.booking.mu.Lock()
	e.booking.fail = errors.New("booking-svc down")
	e.booking.mu.Unlock()
	if err := p.Delete(ctx, f.AccountID, f.FeedID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Get(ctx, f.AccountID, f.FeedID); !errors.Is(err, feed.ErrNotFound) {
		t.Fatalf("deleted feed still readable: %v", err)
	}
	if n, _ := db.Collection(store.Feeds).CountDocuments(ctx, bson.D{{Key: "_id", Value: f.ID}}); n != 1 {
		t.Fatalf("document gone before its blocks: %d", n)
	}
	e.booking.mu.Lock()
	e.booking.fail = nil
	e.booking.mu.Unlock()
	e.clock.Set(e.clock.Now().Add(time.Minute))
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if calls := e.booking.calls(); len(calls) != 1 || e.booking.finalSyncs() != 1 {
		t.Fatalf("syncs %+v, %d final; want the poll then one final", calls, e.booking.finalSyncs())
	}
	if n, _ := db.Collection(store.Feeds).CountDocuments(ctx, bson.D{{Key: "_id", Value: f.ID}}); n != 0 {
		t.Fatalf("document left: %d", n)
	}
}

// TestDeleteFinalSync: a delete sends booking-svc the final sync; the feed's document goes
// only once booking-svc removed the blocks: its 200, its 410 (removed already) or its "no
// such property" (the property and its blocks are gone). Any other answer — a 404 from a
// route missing during a deploy among them — keeps the feed deleting, retried later.
func TestDeleteFinalSync(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		gone bool
	}{
		{"removed", nil, true},
		{"removed before (410)", ErrFeedGone, true},
		{"no such property", ErrNoProperty, true},
		{"route missing (404)", errors.New("booking-svc answered 404: no such route: POST /internal/ical/sync"), false},
		{"booking-svc down", errors.New("connection refused"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			ctx := context.Background()
			f := e.create(t, "acc17", "http://127.0.0.1:1/a.ics")
			e.booking.removeErr = c.err
			if err := e.poller(true).Delete(ctx, f.AccountID, f.FeedID, 0); err != nil {
				t.Fatal(err)
			}
			n, _ := db.Collection(store.Feeds).CountDocuments(ctx, bson.D{{Key: "_id", Value: f.ID}})
			if e.booking.finalSyncs() != 1 || len(e.booking.calls()) != 0 || (n == 0) != c.gone {
				t.Fatalf("%d final syncs, %d syncs, document left: %d", e.booking.finalSyncs(), len(e.booking.calls()), n)
			}
			if _, err := e.store.Get(ctx, f.AccountID, f.FeedID); !errors.Is(err, feed.ErrNotFound) {
				t.Fatal(err)
			}
			if c.gone {
				return
			}
			g := raw(t, f.ID)
			if !g.Deleting || !strings.Contains(g.Status.LastError, "removing the feed's blocks") {
				t.Fatalf("%+v", g)
			}
			e.booking.mu.Lock()
			e.booking.removeErr = nil
			e.booking.mu.Unlock()
			e.clock.Set(g.Status.NextPollAt)
			if err := e.poller(true).RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := db.Collection(store.Feeds).CountDocuments(ctx, bson.D{{Key: "_id", Value: f.ID}}); n != 0 || e.booking.finalSyncs() != 2 {
				t.Fatalf("not retried: %d final syncs, document left %d", e.booking.finalSyncs(), n)
			}
		})
	}
}

// TestDeleteFinalSyncIncomplete: booking-svc may stop a final sync early ("complete":
// false, some blocks left): the feed's document stays until a final sync is complete. The
// delete sends it again at once while it has time; a removal still incomplete is no
// failure and goes on soon.
func TestDeleteFinalSyncIncomplete(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	count := func(f *feed.Feed) int64 {
		n, _ := db.Collection(store.Feeds).CountDocuments(ctx, bson.D{{Key: "_id", Value: f.ID}})
		return n
	}
	f := e.create(t, "acc20", "http://127.0.0.1:1/a.ics")
	e.booking.removeIncomplete = 2
	if err := e.poller(true).Delete(ctx, f.AccountID, f.FeedID, 0); err != nil {
		t.Fatal(err)
	}
	if e.booking.finalSyncs() != 3 || count(f) != 0 {
		t.Fatalf("%d final syncs, document left %d; want 3 and none", e.booking.finalSyncs(), count(f))
	}
	g := e.create(t, "acc20", "http://127.0.0.1:1/b.ics")
	e.booking.removeIncomplete = -1
	p := e.poller(true)
	if err := p.Delete(ctx, g.AccountID, g.FeedID, 0); err != nil {
		t.Fatal(err)
	}
	d := raw(t, g.ID)
	next := d.Status.NextPollAt.Sub(e.clock.Now())
	if count(g) != 1 || !d.Deleting || d.Status.ConsecutiveFailures != 0 || d.Status.LastError != "" ||
		!strings.Contains(d.Status.Note, "in progress") || next <= 0 || next > time.Minute {
		t.Fatalf("incomplete removal: %+v, next in %s", d, next)
	}
	e.booking.mu.Lock()
	e.booking.removeIncomplete = 0
	e.booking.mu.Unlock()
	e.clock.Set(d.Status.NextPollAt)
	if err := p.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if count(g) != 0 {
		t.Fatal("the removal did not go on")
	}
}

// TestFeedGoneStopsPolling: booking-svc answers 410 to a feed's sync (the feed was removed,
// say by another replica's delete while this poll outlived its lease): the feed is not
// polled again and its document goes.
func TestFeedGoneStopsPolling(t *testing.T) {
	e := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer srv.Close()
	ctx := context.Background()
	f := e.create(t, "acc18", srv.URL+"/a.ics")
	e.booking.gone = true
	if err := e.poller(true).RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.Collection(store.Feeds).CountDocuments(ctx, bson.D{{Key: "_id", Value: f.ID}}); n != 0 {
		t.Fatalf("document left: %+v", raw(t, f.ID))
	}
}

// raw is a feed's stored document, deleting or not.
func raw(t *testing.T, id string) feed.Feed {
	t.Helper()
	var f feed.Feed
	if err := db.Collection(store.Feeds).FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestConflictRaisedOnce: a conflict becomes one ical.conflict event; the same conflict at
// the next poll raises none; one that goes and comes back, or that gets other bookings, is
// raised again under a new id (the webhook store records one delivery per id, so a reused
// id would be dropped there).
func TestConflictRaisedOnce(t *testing.T) {
	e := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer srv.Close()
	f := e.create(t, "acc6", srv.URL+"/cal.ics")
	c9 := []feed.Conflict{{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{9}}}
	p := e.poller(true)
	poll := func(conflicts []feed.Conflict) {
		t.Helper()
		e.booking.mu.Lock()
		e.booking.conflicts = conflicts
		e.booking.mu.Unlock()
		if err := p.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(e.clock.Now().Add(15 * time.Minute))
	}
	poll(c9)
	poll(c9)
	if len(e.hooks.events) != 1 {
		t.Fatalf("%d events, want 1", len(e.hooks.events))
	}
	ev := e.hooks.events[0]
	want := fmt.Sprintf(`{"property_id":17,"feed_id":%d,"uid":"ev1","start_date":"2027-01-11","end_date":"2027-01-12","booking_ids":[9]}`, f.FeedID)
	if ev.Type != "ical.conflict" || ev.PropertyID != 17 || ev.Account != "acc6" || string(ev.Data) != want || !strings.HasPrefix(ev.ID, "ical_") {
		t.Fatalf("%+v %s", ev, ev.Data)
	}
	if g := e.get(t, f); len(g.Status.Conflicts) != 1 {
		t.Fatal(g.Status)
	}
	poll(nil) // the booking went: no conflict
	poll(c9)  // and came back
	poll([]feed.Conflict{{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{10, 9}}})
	poll([]feed.Conflict{{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{9, 10}}})
	if len(e.hooks.events) != 3 {
		t.Fatalf("%d events, want 3", len(e.hooks.events))
	}
	ids := map[string]bool{}
	for _, ev := range e.hooks.events {
		ids[ev.ID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("ids %v: a conflict raised again reused an id", ids)
	}
}

// TestConflictReportedBeforeUpgrade: a feed written before conflicts were kept with their
// occurrence has the raised keys in "reported"; those are not raised again.
func TestConflictReportedBeforeUpgrade(t *testing.T) {
	e := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer srv.Close()
	f := e.create(t, "acc14", srv.URL+"/cal.ics")
	c := feed.Conflict{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{9}}
	ctx := context.Background()
	if _, err := db.Collection(store.Feeds).UpdateOne(ctx, bson.D{{Key: "_id", Value: f.ID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "reported", Value: bson.A{c.Key()}}}}, {Key: "$unset", Value: bson.D{{Key: "seen_conflicts", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	e.booking.conflicts = []feed.Conflict{c}
	if err := e.poller(true).RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if len(e.hooks.events) != 0 {
		t.Fatalf("raised again: %+v", e.hooks.events)
	}
	if g := e.get(t, f); len(g.Seen) != 1 || g.Seen[0].Key != c.Key() || !g.Seen[0].Raised || len(g.Reported) != 0 {
		t.Fatalf("%+v %+v", g.Seen, g.Reported)
	}
}

// TestInterruptedPollIsRetried: a poll stopped mid-fetch (its process ended) leaves the
// feed as it was; another poller polls it once the lease is over.
func TestInterruptedPollIsRetried(t *testing.T) {
	e := setup(t)
	var hang atomic.Bool
	hang.Store(true)
	started := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			started <- struct{}{}
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(calendar))
	}))
	defer srv.Close()
	f := e.create(t, "acc7", srv.URL+"/cal.ics")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.poller(true).RunDue(ctx) }()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if g := e.get(t, f); g.Status.LastPolledAt != nil || g.Status.ConsecutiveFailures != 0 {
		t.Fatalf("stopped poll recorded: %+v", g.Status)
	}
	hang.Store(false)
	p := e.poller(true)
	if err := p.RunDue(context.Background()); err != nil || len(e.booking.calls()) != 0 {
		t.Fatalf("polled under the dead poll's lease: %v", err)
	}
	e.clock.Set(e.clock.Now().Add(2*time.Minute + time.Second))
	if err := p.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := e.get(t, f); g.Status.LastSuccessAt == nil || len(e.booking.calls()) != 1 {
		t.Fatalf("not retried: %+v", g.Status)
	}
}

type failingHooks struct{ fakeHooks }

func (h *failingHooks) Emit(ctx context.Context, ev webhook.Event) error {
	if err := h.fakeHooks.Emit(ctx, ev); err != nil {
		return err
	}
	if len(h.events) == 1 {
		return errors.New("store down")
	}
	return nil
}

// TestConflictEmitRetried: a failed Emit fails the poll; the next poll raises the conflict
// again under the same id.
func TestConflictEmitRetried(t *testing.T) {
	e := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer srv.Close()
	f := e.create(t, "acc8", srv.URL+"/cal.ics")
	e.booking.conflicts = []feed.Conflict{{UID: "ev1", StartDate: "2027-01-11", EndDate: "2027-01-12", BookingIDs: []int64{9}}}
	h := &failingHooks{}
	p := e.poller(true)
	p.Hooks = h
	if err := p.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := e.get(t, f); g.Status.ConsecutiveFailures != 1 || !strings.Contains(g.Status.LastError, "ical.conflict") {
		t.Fatal(g.Status)
	}
	e.clock.Set(e.clock.Now().Add(15 * time.Minute))
	if err := p.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(h.events) != 2 || h.events[0].ID != h.events[1].ID {
		t.Fatalf("%+v", h.events)
	}
	if g := e.get(t, f); g.Status.ConsecutiveFailures != 0 {
		t.Fatal(g.Status)
	}
}

// TestPollNowWaits: a sync while the loop polls the feed waits for that poll, then polls.
func TestPollNowWaits(t *testing.T) {
	e := setup(t)
	release := make(chan struct{})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			<-release
		}
		_, _ = w.Write([]byte(calendar))
	}))
	defer srv.Close()
	f := e.create(t, "acc9", srv.URL+"/cal.ics")
	done := make(chan error, 1)
	go func() { done <- e.poller(true).RunDue(context.Background()) }()
	for hits.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := e.poller(true).PollNow(context.Background(), f.AccountID, f.FeedID, 0, 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("no wait: %v, want ErrBusy", err)
	}
	go func() { time.Sleep(300 * time.Millisecond); close(release) }()
	g, err := e.poller(true).PollNow(context.Background(), f.AccountID, f.FeedID, 10*time.Second, 0)
	if err != nil || hits.Load() != 2 || len(e.booking.calls()) != 2 || g.Status.LastSuccessAt == nil {
		t.Fatalf("%v, %d fetches, %d syncs", err, hits.Load(), len(e.booking.calls()))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestErase: an account's erasure deletes its feeds and their leases, and nothing of
// another account (whose id shares a prefix).
func TestErase(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	a := e.create(t, "acc10", "http://127.0.0.1:1/a.ics")
	e.create(t, "acc10", "http://127.0.0.1:1/b.ics")
	other := e.create(t, "acc100", "http://127.0.0.1:1/c.ics")
	if f, err := e.store.Lease(ctx, a.ID, e.clock.Now(), time.Minute); err != nil || f == nil {
		t.Fatal(f, err)
	}
	if _, err := db.Collection(store.Fetches).InsertOne(ctx, bson.D{{Key: "_id", Value: a.ID}}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Erase(ctx, "acc10"); err != nil {
		t.Fatal(err)
	}
	for coll, want := range map[string]int64{store.Feeds: 1, store.Leases: 0, store.Fetches: 0} {
		if n, _ := db.Collection(coll).CountDocuments(ctx, bson.D{}); n != want {
			t.Fatalf("%s: %d documents left, want %d", coll, n, want)
		}
	}
	if _, err := e.store.Get(ctx, "acc100", other.FeedID); err != nil {
		t.Fatal(err)
	}
}

// TestSlowFeedHoldsNoOther: while one feed's link hangs, the poller's other workers poll
// the other due feeds.
func TestSlowFeedHoldsNoOther(t *testing.T) {
	e := setup(t)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		<-release
		_, _ = w.Write([]byte(calendar))
	}))
	defer slow.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(calendar)) }))
	defer fast.Close()
	e.create(t, "acc11", slow.URL+"/slow.ics")
	e.create(t, "acc11", fast.URL+"/a.ics")
	e.create(t, "acc11", fast.URL+"/b.ics")
	done := make(chan error, 1)
	go func() { done <- e.poller(true).RunDue(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.booking.calls()) < 2 {
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d fast feeds synced while the slow one hangs, want 2", len(e.booking.calls()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if err := <-done; err != nil || len(e.booking.calls()) != 3 {
		t.Fatalf("%v, %d syncs", err, len(e.booking.calls()))
	}
}
