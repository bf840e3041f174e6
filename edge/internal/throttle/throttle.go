// Package throttle keeps token buckets by key (an account, a client address) in a bounded,
// expiring LRU, so that edge's memory stays bounded whatever keys its clients bring.
package throttle

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/time/rate"
)

// Buckets is a token bucket of Rate per second and Burst per key; a key may have its own
// rate and burst instead (an account's plan, AllowPlan). It lives in one edge replica's
// memory. At most Size keys are kept; a key unused for longer than twice a full refill at
// the default rate (at least ten minutes) is forgotten (its bucket would be full again
// anyway), and when more than Size keys are in use the least recently used is forgotten,
// which gives it a full bucket again.
type Buckets struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex // makes get-or-create one step
	buckets *expirable.LRU[string, *rate.Limiter]
	// now is the buckets' clock (time.Now; tests set their own with SetClock).
	now func() time.Time
}

// minTTL is the least time an idle key's bucket is kept.
const minTTL = 10 * time.Minute

// New returns buckets of rps and burst per key, at most size keys. rps ≤ 0 disables the
// default: a call is allowed unless its key has a rate of its own (AllowPlan).
func New(rps float64, burst, size int) *Buckets {
	burst = max(burst, 1)
	ttl := minTTL
	r := rate.Inf
	if rps > 0 {
		r = rate.Limit(rps)
		// An idle bucket is full again after burst/rps; keep it a while longer, so that
		// expiry never hands out tokens the bucket would not have had.
		ttl = max(2*time.Duration(float64(burst)/rps*float64(time.Second)), minTTL)
	}
	return &Buckets{rate: r, burst: burst, buckets: expirable.NewLRU[string, *rate.Limiter](size, nil, ttl), now: time.Now}
}

// SetClock makes the buckets read the time from now instead of time.Now (tests); call it
// before the buckets are used. Only the refills follow it: idle keys expire in real time.
func (b *Buckets) SetClock(now func() time.Time) { b.now = now }

// Disabled reports whether every call is allowed by default.
func (b *Buckets) Disabled() bool { return b.rate == rate.Inf }

// Allow takes a token from key's bucket, reporting whether there was one.
func (b *Buckets) Allow(key string) bool { return b.AllowPlan(key, 0, 0) }

// AllowPlan is Allow with key's own rate and burst, each replacing the default when > 0
// (an account's plan). A changed rate or burst applies to key's bucket at once: the bucket
// keeps its tokens (at most the new burst) and refills at the new rate from now on.
func (b *Buckets) AllowPlan(key string, rps float64, burst int) bool {
	r, n := b.rate, b.burst
	if rps > 0 {
		r = rate.Limit(rps)
	}
	if burst > 0 {
		n = burst
	}
	if r == rate.Inf {
		return true
	}
	l := b.bucket(key, r, n)
	if l.Limit() != r {
		l.SetLimit(r)
	}
	if l.Burst() != n {
		l.SetBurst(n)
	}
	return l.AllowN(b.now(), 1)
}

// Take takes a token from key's bucket even when it is empty (the bucket then owes it).
func (b *Buckets) Take(key string) {
	if b.Disabled() {
		return
	}
	b.bucket(key, b.rate, b.burst).ReserveN(b.now(), 1)
}

// Wait reports how long until key's bucket holds a token again: zero when it holds one
// now. It takes nothing, and creates no bucket for a key that has none.
func (b *Buckets) Wait(key string) time.Duration {
	l, ok := b.buckets.Get(key)
	if !ok {
		return 0
	}
	tokens := l.TokensAt(b.now())
	if tokens >= 1 || l.Limit() == rate.Inf {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.Limit()) * float64(time.Second))
}

// tokens is how many tokens key's bucket holds now (a full bucket for a key that has none);
// it creates no bucket.
func (b *Buckets) tokens(key string) float64 {
	if b.Disabled() {
		return float64(b.burst)
	}
	l, ok := b.buckets.Get(key)
	if !ok {
		return float64(b.burst)
	}
	return l.TokensAt(b.now())
}

// Len is the number of keys kept.
func (b *Buckets) Len() int { return b.buckets.Len() }

// bucket returns key's bucket, creating it full (r, burst), and renews its expiry.
func (b *Buckets) bucket(key string, r rate.Limit, burst int) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.buckets.Get(key)
	if !ok {
		l = rate.NewLimiter(r, burst)
	}
	b.buckets.Add(key, l)
	return l
}
