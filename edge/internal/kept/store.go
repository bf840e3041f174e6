package kept

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

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
	acc, key string
	ans      Answer
	until    time.Time
	applied  events.Positions // where the catalog stood before it read the answer
	size     int
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

// Store is a least-recently-used set of answers bounded in bytes, by account. Safe for
// concurrent use.
type Store struct {
	feed Source
	max  int

	mu    sync.Mutex
	size  int
	order list.List // of *entry, most recently used first
	byKey map[string]*list.Element
	byAcc map[string]map[*list.Element]struct{}
	// heard is, per account, the last message of it the Feed heard on each partition.
	heard  map[string]events.Positions
	served atomic.Int64
}

// NewStore returns a Store of at most max bytes whose answers are served while feed is live
// and until Heard is told a change they do not hold (give it the Feed's messages: Feed.Heard).
func NewStore(max int, feed Source) *Store {
	return &Store{feed: feed, max: max, byKey: map[string]*list.Element{}, byAcc: map[string]map[*list.Element]struct{}{},
		heard: map[string]events.Positions{}}
}

// Get returns the answer kept under key when the Feed is live and the answer holds at now.
func (s *Store) Get(key string, now time.Time) (Answer, bool) {
	if !s.feed.Live() {
		return Answer{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[key]
	if !ok {
		return Answer{}, false
	}
	e := el.Value.(*entry)
	if !now.Before(e.until) {
		s.remove(el)
		return Answer{}, false
	}
	s.order.MoveToFront(el)
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
	e := &entry{acc: acc, key: key, ans: ans, until: until, applied: applied,
		size: len(acc) + len(key) + len(ans.Body) + entryOverhead}
	for _, h := range ans.Headers {
		e.size += len(h)
	}
	if e.size > s.max/8 || !s.feed.Live() || !s.feed.Covers(applied) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !applied.Covers(s.heard[acc]) {
		return
	}
	if old, ok := s.byKey[key]; ok {
		s.remove(old)
	}
	el := s.order.PushFront(e)
	s.byKey[key] = el
	if s.byAcc[acc] == nil {
		s.byAcc[acc] = map[*list.Element]struct{}{}
	}
	s.byAcc[acc][el] = struct{}{}
	s.size += e.size
	for s.size > s.max {
		s.remove(s.order.Back())
	}
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
	for el := range s.byAcc[acc] {
		if at, ok := el.Value.(*entry).applied[p]; !ok || at < offset {
			s.remove(el)
		}
	}
}

// remove drops an entry; s.mu must be held.
func (s *Store) remove(el *list.Element) {
	e := s.order.Remove(el).(*entry)
	delete(s.byKey, e.key)
	if m := s.byAcc[e.acc]; m != nil {
		delete(m, el)
		if len(m) == 0 {
			delete(s.byAcc, e.acc)
		}
	}
	s.size -= e.size
}

// Held is the number of answers kept and their cost in bytes.
func (s *Store) Held() (n, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len(), s.size
}
