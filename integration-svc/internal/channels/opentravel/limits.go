package opentravel

import (
	"context"
	"sync"
	"time"
)

// Limits are pmsXchange's throttle on one connection (its endpoint and username, the PMS's
// credentials): requests per minute, requests at once, messages (AvailStatusMessage,
// RateAmountMessage) per request and bytes per request. Beyond them pmsXchange answers a SOAP
// Fault "Throttle limit reached" (docs/channels.md, OpenTravel (pmsXchange)). The adapter
// keeps them in the process: each request is counted in the minute from when its answer
// arrived, so pmsXchange's minute never sees more.
type Limits struct {
	RequestsPerMinute int // 0: no limit
	Concurrent        int // 0: no limit
	MaxMessages       int // 0: DefaultLimits'
	MaxBytes          int // 0: DefaultLimits'
	// Window is the length of the "minute" (0: a minute; shorter only in tests).
	Window time.Duration
}

// DefaultLimits are the throttle parameters pmsXchange gives a certified PMS (raised by its
// operations team on request): 40 requests a minute, 3 at once, 500 messages per request,
// 2 MB per message.
var DefaultLimits = Limits{RequestsPerMinute: 40, Concurrent: 3, MaxMessages: 500, MaxBytes: 2 << 20}

func (l Limits) maxMessages() int {
	if l.MaxMessages > 0 {
		return l.MaxMessages
	}
	return DefaultLimits.MaxMessages
}

func (l Limits) maxBytes() int {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultLimits.MaxBytes
}

// limiter keeps Limits per connection key.
type limiter struct {
	mu    sync.Mutex
	slots map[string]*slot
}

type slot struct {
	inflight int
	answered []time.Time // answers within the window, oldest first
	changed  chan struct{}
}

// acquire waits until a request may be made on key; release(true) when its answer arrived
// (or it failed after being sent), release(false) when it was not sent after all.
func (l *limiter) acquire(ctx context.Context, key string, lim Limits) (release func(sent bool), err error) {
	if lim.RequestsPerMinute <= 0 && lim.Concurrent <= 0 {
		return func(bool) {}, nil
	}
	window := lim.Window
	if window <= 0 {
		window = time.Minute
	}
	for {
		l.mu.Lock()
		if l.slots == nil {
			l.slots = map[string]*slot{}
		}
		s := l.slots[key]
		if s == nil {
			s = &slot{changed: make(chan struct{})}
			l.slots[key] = s
		}
		now := time.Now()
		i := 0
		for i < len(s.answered) && now.Sub(s.answered[i]) >= window {
			i++
		}
		s.answered = s.answered[i:]
		okConcurrent := lim.Concurrent <= 0 || s.inflight < lim.Concurrent
		okRate := lim.RequestsPerMinute <= 0 || len(s.answered)+s.inflight < lim.RequestsPerMinute
		if okConcurrent && okRate {
			s.inflight++
			l.mu.Unlock()
			var once sync.Once
			return func(sent bool) {
				once.Do(func() {
					l.mu.Lock()
					s.inflight--
					if sent {
						s.answered = append(s.answered, time.Now())
					}
					close(s.changed)
					s.changed = make(chan struct{})
					l.mu.Unlock()
				})
			}, nil
		}
		changed := s.changed
		var timer *time.Timer
		var expired <-chan time.Time
		if okConcurrent && len(s.answered) > 0 {
			// the oldest answer leaves the window
			timer = time.NewTimer(window - now.Sub(s.answered[0]))
			expired = timer.C
		}
		l.mu.Unlock()
		select {
		case <-changed:
		case <-expired:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}
