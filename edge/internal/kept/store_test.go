package kept

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/eventually"
)

var (
	p0 = events.Partition{Topic: "vros.property.v1", ID: 0}
	p1 = events.Partition{Topic: "vros.booking.v1", ID: 0}
	t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
)

// liveFeed is a Feed that started with p0 at offset 10 and p1 at 20 (the last messages
// before it: 9 and 19) and is live at t0 for as long as live says.
func liveFeed(live *bool) *Feed {
	f := NewFeed(nil, nil)
	f.start = events.Positions{p0: 9, p1: 19}
	f.Now = func() time.Time {
		if *live {
			f.liveUntil.Store(t0.Add(time.Hour).UnixNano())
		} else {
			f.liveUntil.Store(0)
		}
		return t0
	}
	return f
}

func answer(body string) Answer {
	return Answer{Status: 200, Headers: []string{"Content-Type", "application/json"}, Body: []byte(body)}
}

// TestKeptAnswerRules: an answer is kept only when the catalog that computed it had applied
// everything before the Feed's start and every message of its account the Feed heard; it is
// served while the Feed is live and until its time; a message of its account it does not
// hold drops it, one of another account or one it holds does not.
func TestKeptAnswerRules(t *testing.T) {
	full := events.Positions{p0: 12, p1: 19}
	for _, c := range []struct {
		name    string
		heard   []func(*Store) // before the answer is put
		applied events.Positions
		live    bool
		after   func(*Store) // after it is put
		at      time.Time
		served  bool
	}{
		{name: "kept and served", applied: full, live: true, at: t0, served: true},
		{name: "the catalog behind the Feed's start", applied: events.Positions{p0: 8, p1: 19}, live: true, at: t0},
		{name: "a partition the catalog does not tell", applied: events.Positions{p0: 12}, live: true, at: t0},
		{name: "the Feed not live when put", applied: full, at: t0},
		{name: "a change of the account heard, not applied",
			heard: []func(*Store){func(s *Store) { s.Heard("acc", p0, 13) }}, applied: full, live: true, at: t0},
		{name: "a change of the account heard and applied",
			heard: []func(*Store){func(s *Store) { s.Heard("acc", p0, 12) }}, applied: full, live: true, at: t0, served: true},
		{name: "a change of another account heard, not applied",
			heard: []func(*Store){func(s *Store) { s.Heard("other", p0, 50) }}, applied: full, live: true, at: t0, served: true},
		{name: "a change of the account after it was kept", applied: full, live: true,
			after: func(s *Store) { s.Heard("acc", p1, 20) }, at: t0},
		{name: "a change of the account it holds, heard late", applied: full, live: true,
			after: func(s *Store) { s.Heard("acc", p0, 11) }, at: t0, served: true},
		{name: "a change of another account after it was kept", applied: full, live: true,
			after: func(s *Store) { s.Heard("accx", p0, 99) }, at: t0, served: true},
		{name: "a change on a partition the answer does not tell", applied: full, live: true,
			after: func(s *Store) { s.Heard("acc", events.Partition{Topic: "vros.booking.v1", ID: 1}, 0) }, at: t0},
		{name: "its time passed", applied: full, live: true, at: t0.Add(time.Minute)},
	} {
		t.Run(c.name, func(t *testing.T) {
			live := c.live
			s := NewStore(1<<20, liveFeed(&live))
			for _, h := range c.heard {
				h(s)
			}
			s.Put("acc", "acc\x00search", answer(`{"a":1}`), t0.Add(time.Minute), c.applied)
			if c.after != nil {
				c.after(s)
			}
			live = true
			got, ok := s.Get("acc\x00search", c.at)
			if ok != c.served {
				t.Fatalf("served %v, want %v", ok, c.served)
			}
			if ok && string(got.Body) != `{"a":1}` {
				t.Fatalf("served %q", got.Body)
			}
		})
	}
}

// TestKeptAnswersNotServedWhileTheFeedIsNotLive: an answer kept while the Feed was live is
// not served while it is not (it may have missed a change), and is again once it is.
func TestKeptAnswersNotServedWhileTheFeedIsNotLive(t *testing.T) {
	live := true
	s := NewStore(1<<20, liveFeed(&live))
	s.Put("acc", "k", answer("x"), t0.Add(time.Minute), events.Positions{p0: 9, p1: 19})
	live = false
	if _, ok := s.Get("k", t0); ok {
		t.Fatal("served while the Feed is not live")
	}
	live = true
	if _, ok := s.Get("k", t0); !ok {
		t.Fatal("not served once the Feed is live again")
	}
	if s.Served() != 1 {
		t.Fatalf("Served = %d, want 1", s.Served())
	}
}

// TestKeptAnswersBounded: the answers are held within the bound, the least recently used
// leaving first; an answer over an eighth of the bound is not kept; an account's answers
// all leave on its change, the other account's stay.
func TestKeptAnswersBounded(t *testing.T) {
	live := true
	s := NewStore(64<<10, liveFeed(&live))
	applied := events.Positions{p0: 9, p1: 19}
	body := strings.Repeat("x", 1000)
	for i := range 100 {
		acc := fmt.Sprintf("acc%d", i%2)
		s.Put(acc, fmt.Sprint(acc, i), answer(body), t0.Add(time.Minute), applied)
		s.Get("acc00", t0) // the first answer, used again and again: it stays
	}
	n, size := s.Held()
	if size > 64<<10 || n == 0 || n >= 100 {
		t.Fatalf("%d answers in %d bytes", n, size)
	}
	if _, ok := s.Get("acc00", t0); !ok {
		t.Error("the answer used again left before older ones")
	}
	if _, ok := s.Get("acc02", t0); ok {
		t.Error("the least recently used answer stayed")
	}
	s.Put("acc0", "big", answer(strings.Repeat("y", 9<<10)), t0.Add(time.Minute), applied)
	if _, ok := s.Get("big", t0); ok {
		t.Error("an answer over an eighth of the bound was kept")
	}
	s.Heard("acc0", p0, 10)
	if _, ok := s.Get("acc00", t0); ok {
		t.Error("an answer of the account changed stayed")
	}
	if _, ok := s.Get("acc199", t0); !ok {
		t.Error("an answer of the other account left")
	}
	for i := 0; i < 100; i += 2 {
		if _, ok := s.Get(fmt.Sprint("acc0", i), t0); ok {
			t.Fatalf("answer %d of the account changed stayed", i)
		}
	}
	n, size = s.Held()
	if want := n * (len("acc1") + len("acc199") + 1000 + len("Content-Type") + len("application/json") + entryOverhead); size > want {
		t.Fatalf("%d answers cost %d bytes, want at most %d", n, size, want)
	}
}

// TestKeptAnswersUnderConcurrentChanges: catalogs keep putting the answer they computed at
// the offset they had applied, readers keep asking, and the Feed hears the account's changes
// one after another — sometimes before the catalog applies them, sometimes after. No reader
// is ever given an answer older than a change heard before it asked, and the other account's
// answer is never dropped by them nor given in their place.
func TestKeptAnswersUnderConcurrentChanges(t *testing.T) {
	live := true
	s := NewStore(1<<20, liveFeed(&live))
	s.Put("other", "other\x00k", answer("other"), t0.Add(time.Minute), events.Positions{p0: 9, p1: 19})
	var catalog, heard atomic.Int64
	catalog.Store(9)
	heard.Store(9)
	const last = 3000
	var stop atomic.Bool
	var wg sync.WaitGroup
	// newest is the newest answer a reader was given.
	var served, stale, newest atomic.Int64
	for range 4 { // catalogs
		wg.Go(func() {
			for !stop.Load() {
				a := catalog.Load()
				s.Put("acc", "acc\x00k", answer(strconv.FormatInt(a, 10)), t0.Add(time.Minute), events.Positions{p0: a, p1: 19})
			}
		})
	}
	for range 8 { // readers
		wg.Go(func() {
			for !stop.Load() {
				h := heard.Load()
				if got, ok := s.Get("acc\x00k", t0); ok {
					served.Add(1)
					a, _ := strconv.ParseInt(string(got.Body), 10, 64)
					if a < h {
						stale.Add(1)
					}
					for n := newest.Load(); a > n && !newest.CompareAndSwap(n, a); n = newest.Load() {
					}
				}
				if got, ok := s.Get("other\x00k", t0); !ok || string(got.Body) != "other" {
					t.Errorf("the other account's answer: %q, %v", got.Body, ok)
					return
				}
			}
		})
	}
	for o := int64(10); o <= last; o++ { // the Feed, and the catalog applying
		if o%2 == 0 {
			s.Heard("acc", p0, o)
			heard.Store(o)
			catalog.Store(o)
		} else {
			catalog.Store(o)
			s.Heard("acc", p0, o)
			heard.Store(o)
		}
		if o%100 == 0 {
			// Readers are given the answer of this change before the next ones come: the
			// test then checks answers served between changes, not only after the last.
			eventually.Holds(t, fmt.Sprintf("a reader given the answer at %d", o), 10*time.Second,
				func() bool { return newest.Load() >= o })
		}
	}
	eventually.Holds(t, "a reader given the last answer", 10*time.Second, func() bool { return newest.Load() >= last })
	stop.Store(true)
	wg.Wait()
	if stale.Load() != 0 {
		t.Fatalf("%d of %d answers served were older than a change heard before they were asked", stale.Load(), served.Load())
	}
	if served.Load() == 0 {
		t.Fatal("no answer was ever served: the test proves nothing")
	}
	if got, ok := s.Get("acc\x00k", t0); !ok || string(got.Body) != strconv.Itoa(last) {
		t.Fatalf("after the last change: %q, %v; want the answer at %d", got.Body, ok, last)
	}
}
