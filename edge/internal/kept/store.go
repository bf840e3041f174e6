package kept

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/vros/vros/libs/bytelru"
	"github.com/vros/vros/libs/events"
)

// Answer is a kept answer as edge sends it: its status, the headers edge passes on, and
// its body. Nothing of it is ever changed once kept: the bytes are edge's own copy.
type Answer struct {
	Status  int
	Headers []string // name, value pairs
	Body    []byte
}

// entryOverhead is what an entry costs beside its key and body, roughly.
const entryOverhead = 512

type entry struct {
	acc     string
	ans     Answer
	until   time.Time
	applied events.Positions // where the catalog stood before it read the answer
}

// Store is a least-recently-used set of answers bounded in bytes, by account. Safe for
// concurrent use.
type Store struct {
	feed Source

	mu      sync.Mutex
	answers *bytelru.Cache[string, entry]
	byAcc   map[string]map[string]struct{} // the keys of each account's answers
	// heard is, per account, the last message of it the Feed heard on each partition.
	heard  map[string]events.Positions
	served atomic.Int64
}

// Source is what a Store needs of the Feed that tells it the changes (Feed; tests give their
// own).
type Source interface {
	// Live reports whether every change is being heard (a kept answer may be served).
	Live() bool
	// Covers reports whether a catalog that had applied the topics up to these positions
	// holds everything that was published before the changes were first heard.
	Covers(applied events.Positions) bool
}

// NewStore returns a Store of at most max bytes whose answers are served while feed is live
// and until Heard is told a change they do not hold (give it the Feed's messages: Feed.Heard).
func NewStore(max int, feed Source) *Store {
	s := &Store{feed: feed, byAcc: map[string]map[string]struct{}{}, heard: map[string]events.Positions{}}
	s.answers = bytelru.New(max, s.left)
	return s
}

// left forgets the key of an answer that left the cache; s.mu is held.
func (s *Store) left(key string, e entry) {
	if keys := s.byAcc[e.acc]; keys != nil {
		delete(keys, key)
		if len(keys) == 0 {
			delete(s.byAcc, e.acc)
		}
	}
}

// Get returns the answer kept under key when the Feed is live and the answer holds at now.
func (s *Store) Get(key string, now time.Time) (Answer, bool) {
	if !s.feed.Live() {
		return Answer{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.answers.Get(key)
	if !ok {
		return Answer{}, false
	}
	if !now.Before(e.until) {
		s.answers.Remove(key)
		return Answer{}, false
	}
	s.served.Add(1)
	return e.ans, true
}

// Served is how many answers Get has given since the Store was made.
func (s *Store) Served() int64 { return s.served.Load() }

// Put keeps ans, the answer to key of account acc, until until, computed by a catalog that
// had applied the topics up to applied. It is not kept unless the Feed is live, has heard
// every message the catalog had not applied at its start, and has heard no message of the
// account the catalog had not applied; an answer over an eighth of the bound is not kept.
func (s *Store) Put(acc, key string, ans Answer, until time.Time, applied events.Positions) {
	if !s.feed.Live() || !s.feed.Covers(applied) {
		return
	}
	size := len(acc) + len(key) + len(ans.Body) + entryOverhead
	for _, h := range ans.Headers {
		size += len(h)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !applied.Covers(s.heard[acc]) {
		return
	}
	if !s.answers.Add(key, entry{acc: acc, ans: ans, until: until, applied: applied}, size) {
		return
	}
	if s.byAcc[acc] == nil {
		s.byAcc[acc] = map[string]struct{}{}
	}
	s.byAcc[acc][key] = struct{}{}
}

// Heard is told by the Feed each message of an account: every answer of the account
// computed before the catalog applied it is dropped, and none is kept from now on unless
// its catalog had applied it.
func (s *Store) Heard(acc string, p events.Partition, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.heard[acc]
	if h == nil {
		h = events.Positions{}
		s.heard[acc] = h
	}
	if cur, ok := h[p]; !ok || cur < offset {
		h[p] = offset
	}
	for key := range s.byAcc[acc] {
		e, _ := s.answers.Peek(key)
		if at, ok := e.applied[p]; !ok || at < offset {
			s.answers.Remove(key) // left deletes it from byAcc: allowed while ranging
		}
	}
}

// Held is the number of answers kept and their cost in bytes.
func (s *Store) Held() (n, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answers.Len(), s.answers.Size()
}
