package throttle

import (
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrencyRules: each rule of the limit, from an empty limiter.
func TestConcurrencyRules(t *testing.T) {
	const wait = 50 * time.Millisecond
	tests := []struct {
		name string
		// limit is the default, plan the key's own (0: the default); hold requests take
		// a slot first and keep it.
		limit, plan, hold int
		// freeAfter releases one held slot after this long (0: never).
		freeAfter time.Duration
		wantOK    bool
		// minWait/maxWait bound how long the extra request took.
		minWait, maxWait time.Duration
	}{
		{name: "under the limit: admitted at once", limit: 3, hold: 2, wantOK: true, maxWait: wait / 2},
		{name: "at the limit: refused after the queue wait", limit: 3, hold: 3, wantOK: false, minWait: wait, maxWait: 10 * wait},
		{name: "at the limit, a slot frees in time: admitted", limit: 3, hold: 3, freeAfter: wait / 5, wantOK: true, minWait: wait / 5, maxWait: wait},
		{name: "disabled: always admitted", limit: 0, hold: 1000, wantOK: true, maxWait: wait / 2},
		{name: "plan raises the limit", limit: 1, plan: 5, hold: 4, wantOK: true, maxWait: wait / 2},
		{name: "plan lowers the limit", limit: 10, plan: 2, hold: 2, wantOK: false, minWait: wait, maxWait: 10 * wait},
		{name: "plan applies when the default is off", limit: 0, plan: 2, hold: 2, wantOK: false, minWait: wait, maxWait: 10 * wait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConcurrency(tt.limit, wait)
			var held []Release
			for i := range tt.hold {
				r, ok := c.Acquire("a", tt.plan)
				if !ok {
					t.Fatalf("request %d of %d refused", i+1, tt.hold)
				}
				held = append(held, r)
			}
			// start before the timer: the wait measured is then never shorter than freeAfter
			// (a goroutine paused between the two made it look so under load).
			start := time.Now()
			if tt.freeAfter > 0 {
				time.AfterFunc(tt.freeAfter, held[0])
			}
			r, ok := c.Acquire("a", tt.plan)
			took := time.Since(start)
			if ok != tt.wantOK {
				t.Fatalf("admitted = %v, want %v", ok, tt.wantOK)
			}
			if took < tt.minWait || took > tt.maxWait {
				t.Errorf("took %v, want %v–%v", took, tt.minWait, tt.maxWait)
			}
			if other, ok := c.Acquire("b", tt.plan); !ok {
				t.Error("another key refused")
			} else {
				other()
			}
			if ok {
				r()
			}
			for _, r := range held {
				r()
			}
			if c.Len() != 0 || c.InFlight("a") != 0 {
				t.Errorf("after every release: %d keys kept, %d of a in flight", c.Len(), c.InFlight("a"))
			}
		})
	}
}

// TestConcurrencyQueue: the queue holds at most limit waiters (more are refused at once),
// hands slots out first come first served, and nothing is refused without a queue wait
// of zero.
func TestConcurrencyQueue(t *testing.T) {
	c := NewConcurrency(2, time.Second)
	r1, _ := c.Acquire("a", 0)
	r2, _ := c.Acquire("a", 0)
	order := make(chan int, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok := c.Acquire("a", 0)
			if !ok {
				t.Errorf("waiter %d refused", i)
				return
			}
			order <- i
			r()
		}()
		time.Sleep(20 * time.Millisecond) // waiter 0 queues first
	}
	start := time.Now()
	if _, ok := c.Acquire("a", 0); ok || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("a third waiter over a queue of 2: admitted %v after %v, want refused at once", ok, time.Since(start))
	}
	r1()
	if first := <-order; first != 0 {
		t.Errorf("waiter %d served first, want 0", first)
	}
	r2()
	wg.Wait()
	if c.Len() != 0 {
		t.Errorf("%d keys kept after every release", c.Len())
	}

	noQueue := NewConcurrency(1, 0)
	r, _ := noQueue.Acquire("a", 0)
	start = time.Now()
	if _, ok := noQueue.Acquire("a", 0); ok || time.Since(start) > 20*time.Millisecond {
		t.Error("with no queue wait, a request over the limit must be refused at once")
	}
	r()
}

// TestConcurrencyRelease: a slot comes back however the request ends, and only once.
func TestConcurrencyRelease(t *testing.T) {
	tests := []struct {
		name string
		run  func(release Release)
	}{
		{name: "returns", run: func(release Release) { defer release() }},
		{name: "panics", run: func(release Release) {
			defer func() { _ = recover() }()
			defer release()
			panic("handler panicked")
		}},
		{name: "released twice", run: func(release Release) { release(); release() }},
		{name: "released from another goroutine", run: func(release Release) {
			done := make(chan struct{})
			go func() { defer close(done); release() }()
			<-done
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConcurrency(2, 10*time.Millisecond)
			keep, _ := c.Acquire("a", 0)
			r, ok := c.Acquire("a", 0)
			if !ok {
				t.Fatal("refused under the limit")
			}
			tt.run(r)
			if n := c.InFlight("a"); n != 1 {
				t.Fatalf("%d in flight after one of two ended, want 1", n)
			}
			keep()
			if c.Len() != 0 {
				t.Errorf("%d keys kept after every release", c.Len())
			}
		})
	}
}

// TestConcurrencyIdleKeysForgotten: memory follows the requests in flight, not the keys
// ever seen.
func TestConcurrencyIdleKeysForgotten(t *testing.T) {
	c := NewConcurrency(4, time.Millisecond)
	for i := range 100_000 {
		r, ok := c.Acquire(strconv.Itoa(i), 0)
		if !ok {
			t.Fatal("refused")
		}
		r()
	}
	if c.Len() != 0 {
		t.Errorf("%d idle keys kept", c.Len())
	}
}

// TestConcurrencyManyClients: many goroutines of many keys, with random holding times and
// random panics: no key ever has more than its limit in flight, one saturated key never
// delays the others, and no slot leaks.
func TestConcurrencyManyClients(t *testing.T) {
	const limit, keys, perKey = 4, 20, 25
	c := NewConcurrency(limit, 5*time.Millisecond)
	var inFlight [keys]atomic.Int32
	var over atomic.Int32
	var wg sync.WaitGroup
	for k := range keys {
		for range perKey {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := strconv.Itoa(k)
				for range 40 {
					func() {
						defer func() { _ = recover() }()
						r, ok := c.Acquire(key, 0)
						if !ok {
							return
						}
						defer r()
						if inFlight[k].Add(1) > limit {
							over.Add(1)
						}
						defer inFlight[k].Add(-1)
						time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
						if rand.IntN(10) == 0 {
							panic("random failure")
						}
					}()
				}
			}()
		}
	}
	// Meanwhile a quiet key is admitted every time: were slots shared across keys, the
	// saturated ones' full queues would refuse it. (Not timed: on a busy 2-core machine a
	// goroutine can be descheduled for milliseconds, which says nothing about the limiter.)
	for range 50 {
		r, ok := c.Acquire("quiet", 0)
		if !ok {
			t.Fatal("the quiet key was refused while others were saturated")
		}
		r()
	}
	wg.Wait()
	if over.Load() != 0 {
		t.Errorf("%d times a key had more than %d in flight", over.Load(), limit)
	}
	if c.Len() != 0 {
		t.Errorf("%d keys kept after every request ended (a slot leaked)", c.Len())
	}
}

// TestConcurrencyPlanChanged: a key's limit is its latest request's: a lowered one holds
// back waiters until the key is under it, a raised one serves waiters at once.
func TestConcurrencyPlanChanged(t *testing.T) {
	c := NewConcurrency(0, 5*time.Second)
	r1, _ := c.Acquire("a", 3)
	r2, _ := c.Acquire("a", 3)
	r3, _ := c.Acquire("a", 3)
	admitted := make(chan Release, 2)
	for range 2 {
		go func() {
			if r, ok := c.Acquire("a", 2); ok { // the plan went down to 2
				admitted <- r
			}
		}()
	}
	for waiting(c, "a") < 2 {
		time.Sleep(time.Millisecond)
	}
	r1() // 3 in flight, limit 2: the slot goes, nobody is served
	select {
	case <-admitted:
		t.Fatal("a waiter was served while the key was at its lowered limit")
	case <-time.After(20 * time.Millisecond):
	}
	r2() // 2 in flight, limit 2: the first waiter gets the slot
	first := <-admitted
	// Raised to 4: the next request serves the remaining waiter, then itself.
	r4, ok := c.Acquire("a", 4)
	if !ok {
		t.Fatal("refused under a raised limit")
	}
	second := <-admitted
	if n := c.InFlight("a"); n != 4 {
		t.Errorf("%d in flight, want 4 (r3, both waiters, r4)", n)
	}
	for _, r := range []Release{first, second, r3, r4} {
		r()
	}
	if c.Len() != 0 {
		t.Errorf("%d keys kept", c.Len())
	}
}

// waiting is how many requests of key wait for a slot.
func waiting(c *Concurrency, key string) int {
	s := &c.shards[maphash.String(c.seed, key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.keys[key]; e != nil {
		return len(e.waiters)
	}
	return 0
}
