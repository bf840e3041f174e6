package kept

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
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
