package gateway

import (
	"sync"

	"golang.org/x/time/rate"
)

// limiter is a token bucket per account. It lives in each edge replica's memory, so the
// cluster-wide rate is the configured rate times the number of replicas.
type limiter struct {
	rps   rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newLimiter(rps float64, burst int) *limiter {
	if rps <= 0 {
		return &limiter{rps: rate.Inf}
	}
	return &limiter{rps: rate.Limit(rps), burst: max(burst, 1), buckets: map[string]*rate.Limiter{}}
}

func (l *limiter) allow(account string) bool {
	if l.rps == rate.Inf {
		return true
	}
	l.mu.Lock()
	b := l.buckets[account]
	if b == nil {
		b = rate.NewLimiter(l.rps, l.burst)
		l.buckets[account] = b
	}
	l.mu.Unlock()
	return b.Allow()
}
