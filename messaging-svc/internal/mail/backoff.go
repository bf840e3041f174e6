package mail

import (
	"math/rand/v2"
	"time"
)

// Backoff is the retry schedule of temporary failures: the wait doubles from Base with each
// attempt up to Max, jittered so that the messages a server refused together do not come
// back together; after MaxAttempts attempts the message fails.
type Backoff struct {
	Base        time.Duration
	Max         time.Duration
	MaxAttempts int
	// Jitter maps the computed wait to the one used; nil: a uniform draw in [wait/2, wait].
	// Tests set it to return its argument.
	Jitter func(time.Duration) time.Duration
}

// DefaultBackoff: 1, 2, 4 … minutes, at most an hour apart, 12 attempts (about 7 hours).
var DefaultBackoff = Backoff{Base: time.Minute, Max: time.Hour, MaxAttempts: 12}

// Next is when to try again after attempts failed attempts (1 after the first), counted
// from now; ok is false when no attempt is left.
func (b Backoff) Next(now time.Time, attempts int) (at time.Time, ok bool) {
	if attempts < 1 {
		return now, true
	}
	if b.MaxAttempts > 0 && attempts >= b.MaxAttempts {
		return time.Time{}, false
	}
	wait := b.Base
	for i := 1; i < attempts && wait < b.Max; i++ {
		wait *= 2
	}
	if wait > b.Max {
		wait = b.Max
	}
	jitter := b.Jitter
	if jitter == nil {
		jitter = halfJitter
	}
	return now.Add(jitter(wait)), true
}

func halfJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}
