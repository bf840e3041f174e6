package mail

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter holds one token bucket per key (an account, or an account and its transport):
// Every apart on average, Burst at once. A sender asks before each message and, told to wait,
// schedules the message again rather than sleeping with a lease held.
type Limiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewLimiter allows, per key, one message every `every` on average and burst at once; now is
// the clock (time.Now when nil; a test's clock in tests).
func NewLimiter(every time.Duration, burst int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	if burst < 1 {
		burst = 1
	}
	return &Limiter{limit: rate.Every(every), burst: burst, now: now, buckets: map[string]*rate.Limiter{}}
}

// Reserve takes a token for key and returns 0 when one was there; otherwise it takes nothing
// and returns how long until one will be.
func (l *Limiter) Reserve(key string) time.Duration {
	now := l.now()
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if !r.OK() {
		return rate.InfDuration
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		// Up to the millisecond: the bucket counts in floating point, and a wait a
		// nanosecond short would be refused again when it ends.
		if rest := d % time.Millisecond; rest != 0 {
			d += time.Millisecond - rest
		}
		return d
	}
	return 0
}
