package apitest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Clock is a clock for booking-svc's Config.Clock in tests: the real time moved on by what
// the tests advanced it.
type Clock struct{ ahead atomic.Int64 }

// Now is the clock's time.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Advance moves the clock on by d until t ends (the other tests run on the real time).
func (c *Clock) Advance(t *testing.T, d time.Duration) {
	c.ahead.Add(int64(d))
	t.Cleanup(func() { c.ahead.Add(-int64(d)) })
}

// Crasher is booking-svc's Crash hook (booking.Service.Crash) for the crash suites: the next
// request or worker run of an account that reaches the step armed for that account stops
// there for good, and its step is sent on Frozen. When the test "kills" booking-svc (Kill),
// every stopped goroutine ends without running another line of the change
// (runtime.Goexit), as if the process had died at that step.
type Crasher struct {
	// Frozen receives the step of each change stopped.
	Frozen chan string

	mu    sync.Mutex
	armed map[string]string // account → step
	dead  chan struct{}
}

// NewCrasher returns a Crasher with nothing armed.
func NewCrasher() *Crasher {
	return &Crasher{armed: map[string]string{}, Frozen: make(chan string), dead: make(chan struct{})}
}

// Hook is the Crash hook.
func (c *Crasher) Hook(step, account string) {
	c.mu.Lock()
	want, ok := c.armed[account]
	if ok && want == step {
		delete(c.armed, account)
	}
	dead := c.dead
	c.mu.Unlock()
	if !ok || want != step {
		return
	}
	c.Frozen <- step
	<-dead
	runtime.Goexit()
}

// Arm makes the next change of account that reaches step stop there.
func (c *Crasher) Arm(account, step string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed[account] = step
}

// Stopped waits up to within until a change stops at step.
func (c *Crasher) Stopped(t *testing.T, step string, within time.Duration) {
	t.Helper()
	select {
	case got := <-c.Frozen:
		if got != step {
			t.Fatalf("stopped at %s, armed %s", got, step)
		}
	case <-time.After(within):
		t.Fatalf("nothing reached %s", step)
	}
}

// Kill ends every stopped change and disarms every account: a new life of the process.
func (c *Crasher) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.dead)
	c.dead = make(chan struct{})
	c.armed = map[string]string{}
}
