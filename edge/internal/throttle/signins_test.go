package throttle

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// clock is a test's clock: it moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newSignIns() (*SignIns, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := NewSignIns()
	s.SetClock(c.now)
	return s, c
}

// try begins an attempt and ends it as failed or not; it reports whether it was admitted.
func try(s *SignIns, email, addr string, failed bool) (bool, time.Duration) {
	a, wait := s.Begin(email, addr)
	if a == nil {
		return false, wait
	}
	a.Done(failed)
	return true, 0
}

// TestSignInsNeverLockOutTheOwner: guessing from some addresses slows those addresses down
// for the email, never the owner signing in from another; a slowed address tries again
// once SignInEvery has passed.
func TestSignInsNeverLockOutTheOwner(t *testing.T) {
	const email = "ops@example.com"
	for _, tt := range []struct {
		name      string
		attackers []string
	}{
		{"one address", []string{"203.0.113.7"}},
		{"three addresses", []string{"203.0.113.7", "203.0.113.8", "2001:db8:9::/64"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, clk := newSignIns()
			for i := range 3 * SignInFreeFailures {
				try(s, email, tt.attackers[i%len(tt.attackers)], true)
			}
			for _, a := range tt.attackers {
				if ok, wait := try(s, email, a, true); ok || wait <= 0 || wait > SignInEvery {
					t.Fatalf("attacker %s after %d failures: admitted %v, wait %v; want refused for at most %v", a, 3*SignInFreeFailures, ok, wait, SignInEvery)
				}
			}
			// The owner, from its own address: checked at once, now and on every try.
			for i := range 3 {
				if ok, _ := try(s, email, "198.51.100.9", false); !ok {
					t.Fatalf("the owner's sign-in %d from another address refused", i+1)
				}
			}
			// An unknown email is slowed the same way (nothing tells them apart).
			for i := range SignInFreeFailures {
				try(s, "nobody@example.com", tt.attackers[0], true)
				_ = i
			}
			if ok, _ := try(s, "nobody@example.com", tt.attackers[0], true); ok {
				t.Fatal("an unknown email is not slowed down")
			}
			// The slowed address may try again once SignInEvery has passed: one try.
			clk.add(SignInEvery)
			if ok, _ := try(s, email, tt.attackers[0], true); !ok {
				t.Fatalf("attacker %s refused after %v", tt.attackers[0], SignInEvery)
			}
			if ok, _ := try(s, email, tt.attackers[0], true); ok {
				t.Fatal("two tries within one SignInEvery")
			}
		})
	}
}

// TestSignInsFreeFailures: the first SignInFreeFailures failures of an email cost nothing
// but themselves, and they come back at one per SignInEvery; a success counts nothing.
func TestSignInsFreeFailures(t *testing.T) {
	s, clk := newSignIns()
	for i := range 50 {
		if ok, _ := try(s, "a@example.com", "192.0.2.1", false); !ok {
			t.Fatalf("success %d refused", i+1)
		}
	}
	for i := range SignInFreeFailures {
		if ok, _ := try(s, "a@example.com", "192.0.2."+strconv.Itoa(i+1), true); !ok {
			t.Fatalf("free failure %d refused", i+1)
		}
	}
	if ok, _ := try(s, "a@example.com", "192.0.2.1", true); ok {
		t.Fatal("an address that failed is not slowed once the free failures are spent")
	}
	clk.add(SignInEvery)
	if ok, _ := try(s, "a@example.com", "192.0.2.1", true); !ok {
		t.Fatal("refused after a free failure came back")
	}
}

// TestSignInsConcurrent: many attempts at once are all counted, and no more of them are
// checked than the failures there are to spend: ten for the email plus one for the address.
func TestSignInsConcurrent(t *testing.T) {
	for _, tt := range []struct {
		name      string
		addresses int
		admitted  int
	}{
		{"one address", 1, SignInFreeFailures + 1},
		{"each from its own address", 100, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newSignIns()
			const n = 100
			var wg sync.WaitGroup
			begun := make(chan *Attempt, n)
			for i := range n {
				wg.Go(func() {
					a, _ := s.Begin("owner@example.com", "192.0.2."+strconv.Itoa(i%tt.addresses))
					begun <- a
				})
			}
			wg.Wait() // every attempt begun before any ends: all are in flight at once
			close(begun)
			admitted := 0
			for a := range begun {
				if a != nil {
					admitted++
					wg.Go(func() { a.Done(true) })
				}
			}
			wg.Wait()
			if admitted != tt.admitted {
				t.Errorf("%d of %d attempts at once checked, want %d", admitted, n, tt.admitted)
			}
			// Every failure counted: the email owes all of them beyond its free ones.
			if got, want := s.email.tokens("owner@example.com"), float64(SignInFreeFailures-tt.admitted); got > want+0.01 || got < want-0.01 {
				t.Errorf("the email's bucket holds %.2f after %d failures, want %.0f", got, tt.admitted, want)
			}
			if ok, _ := try(s, "owner@example.com", "198.51.100.1", false); !ok {
				t.Error("the owner from a fresh address refused")
			}
		})
	}
}
