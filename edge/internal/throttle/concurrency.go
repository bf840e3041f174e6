package throttle

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// Concurrency bounds how many requests of one key (an account) are in flight at once in
// this replica. A request over the limit waits in a short FIFO queue of the key (at most
// as many waiters as the limit, at most the queue wait), then is refused.
//
// Only keys with a request in flight or waiting are kept: a key's entry is dropped as its
// last request ends, so memory follows the requests in flight, never the number of keys
// ever seen. The keys are spread over shards, each with its own mutex held for a few
// instructions, so there is no global lock on the hot path.
type Concurrency struct {
	limit  int
	wait   time.Duration
	seed   maphash.Seed
	shards [shards]shard
}

const shards = 64

type shard struct {
	mu   sync.Mutex
	keys map[string]*inFlight
	_    [40]byte // keep shards on separate cache lines
}

// inFlight is one key's requests: n hold a slot, waiters queue for one (FIFO); limit is the
// key's limit as its latest request gave it (a plan may change between requests).
type inFlight struct {
	n       int
	limit   int
	waiters []chan struct{}
}

// NewConcurrency allows limit requests in flight per key, a request over it waiting at
// most wait for a slot; limit ≤ 0 disables the limit (every request is admitted).
func NewConcurrency(limit int, wait time.Duration) *Concurrency {
	c := &Concurrency{limit: max(limit, 0), wait: max(wait, 0), seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].keys = map[string]*inFlight{}
	}
	return c
}

// Release gives a slot back. It may be called any number of times: only the first counts,
// so a deferred release and an explicit one never free two slots.
type Release func()

// Acquire takes one of key's slots, waiting at most the queue wait for one. limit replaces
// the default limit for this key when > 0 (an account's plan); with no limit at all every
// request is admitted. ok is false when the request is refused: key is at its limit and
// its queue is full, or no slot came free in time. The caller must call release once the
// request ends, whatever way it ends (defer it).
func (c *Concurrency) Acquire(key string, limit int) (release Release, ok bool) {
	if limit <= 0 {
		limit = c.limit
	}
	if limit <= 0 {
		return func() {}, true
	}
	s := &c.shards[maphash.String(c.seed, key)%shards]
	s.mu.Lock()
	e := s.keys[key]
	if e == nil {
		e = &inFlight{}
		s.keys[key] = e
	}
	e.limit = limit
	// A raised limit first serves those already waiting, in order.
	for e.n < limit && len(e.waiters) > 0 {
		e.n++
		e.pop()
	}
	if e.n < limit {
		e.n++
		s.mu.Unlock()
		return c.release(s, key, e), true
	}
	if c.wait <= 0 || len(e.waiters) >= limit {
		s.mu.Unlock()
		return nil, false
	}
	ready := make(chan struct{})
	e.waiters = append(e.waiters, ready)
	s.mu.Unlock()

	timer := time.NewTimer(c.wait)
	defer timer.Stop()
	select {
	case <-ready:
		return c.release(s, key, e), true
	case <-timer.C:
	}
	s.mu.Lock()
	for i, w := range e.waiters {
		if w == ready {
			e.waiters = append(e.waiters[:i], e.waiters[i+1:]...)
			s.mu.Unlock()
			return nil, false
		}
	}
	s.mu.Unlock()
	// A releaser handed this request its slot just as the wait ended: use it.
	<-ready
	return c.release(s, key, e), true
}

// pop hands the first waiter its slot (already counted in n). The shard's mutex is held.
func (e *inFlight) pop() {
	w := e.waiters[0]
	e.waiters[0] = nil
	e.waiters = e.waiters[1:]
	close(w)
}

// release returns the Release of one slot of key (entry e, which stays in the map while
// it holds a slot).
func (c *Concurrency) release(s *shard, key string, e *inFlight) Release {
	var done atomic.Bool
	return func() {
		if done.Swap(true) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		// Hand the slot to the first waiter, unless the key is over its limit (a plan
		// lowered meanwhile): then the slot goes and the waiter waits on.
		if len(e.waiters) > 0 && e.n <= e.limit {
			e.pop()
			return
		}
		e.n--
		if e.n == 0 && len(e.waiters) == 0 {
			delete(s.keys, key)
		}
	}
}

// InFlight is the number of key's requests holding a slot.
func (c *Concurrency) InFlight(key string) int {
	s := &c.shards[maphash.String(c.seed, key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.keys[key]; e != nil {
		return e.n
	}
	return 0
}

// Len is the number of keys kept (with a request in flight or waiting).
func (c *Concurrency) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.keys)
		s.mu.Unlock()
	}
	return n
}
