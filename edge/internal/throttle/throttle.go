// Package throttle keeps token buckets by key (an account, a client address) in a bounded,
// expiring LRU, so that edge's memory stays bounded whatever keys its clients bring.
package throttle

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/time/rate"
)

// Buckets is a token bucket of Rate per second and Burst per key. It lives in one edge
// replica's memory. At most Size keys are kept; a key unused for longer than a full refill
// is forgotten (its bucket would be full again anyway), and when more than Size keys are in
// use the least recently used is forgotten, which gives it a full bucket again.
type Buckets struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex // makes get-or-create one step
	buckets *expirable.LRU[string, *rate.Limiter]
}

// New returns buckets of rps and burst per key, at most size keys. rps ≤ 0 disables them:
// every call is allowed.
func New(rps float64, burst, size int) *Buckets {
	if rps <= 0 {
		return &Buckets{rate: rate.Inf}
	}
	burst = max(burst, 1)
	// An idle bucket is full again after burst/rps; keep it a while longer, so that
	// expiry never hands out tokens the bucket would not have had.
	ttl := max(2*time.Duration(float64(burst)/rps*float64(time.Second)), time.Minute)
	return &Buckets{rate: rate.Limit(rps), burst: burst, buckets: expirable.NewLRU[string, *rate.Limiter](size, nil, ttl)}
}

// Disabled reports whether every call is allowed.
func (b *Buckets) Disabled() bool { return b.rate == rate.Inf }

// Allow takes a token from key's bucket, reporting whether there was one.
func (b *Buckets) Allow(key string) bool {
	if b.Disabled() {
		return true
	}
	return b.bucket(key).Allow()
}

// Take takes a token from key's bucket even when it is empty (the bucket then owes it).
func (b *Buckets) Take(key string) {
	if b.Disabled() {
		return
	}
	b.bucket(key).ReserveN(time.Now(), 1)
}

// Wait reports how long until key's bucket holds a token again: zero when it holds one
// now. It takes nothing, and creates no bucket for a key that has none.
func (b *Buckets) Wait(key string) time.Duration {
	if b.Disabled() {
		return 0
	}
	l, ok := b.buckets.Get(key)
	if !ok {
		return 0
	}
	tokens := l.Tokens()
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(b.rate) * float64(time.Second))
}

// Len is the number of keys kept.
func (b *Buckets) Len() int {
	if b.Disabled() {
		return 0
	}
	return b.buckets.Len()
}

// bucket returns key's bucket, creating it full, and renews its expiry.
func (b *Buckets) bucket(key string) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.buckets.Get(key)
	if !ok {
		l = rate.NewLimiter(b.rate, b.burst)
	}
	b.buckets.Add(key, l)
	return l
}
