package throttle

import (
	"sync"
	"time"
)

// The sign-in slow-down's numbers (docs/panel.md): an email's first SignInFreeFailures
// failures cost nothing; then each client address (AddressKey) may try that email once per
// SignInEvery, and the email's free failures come back at one per SignInEvery.
const (
	SignInFreeFailures = 10
	SignInEvery        = 30 * time.Second
)

// SignIns slows down password guessing against one email (the panel's sign-in) without
// locking its user out. Every failure for an email counts in the email's bucket
// (SignInFreeFailures, refilled at one per SignInEvery; failures beyond it are owed, so
// that all of them count however many arrive at once). While the email's bucket holds a
// failure to spend, an attempt from any address is checked. Once it is spent the email is
// slowed: an attempt is checked only if its client address has not failed for that email
// within the last SignInEvery (a bucket of one per email and address); others are refused
// before the password is looked at. So whoever guesses from some addresses slows down
// those addresses, not the email's owner signing in from another one; and an address that
// failed waits at most SignInEvery for its next try.
//
// Begin counts admitted attempts still running as spent, so that many attempts at once
// are never all checked against one remaining failure. It knows nothing of users: an
// unknown email is throttled exactly like a known one.
type SignIns struct {
	mu       sync.Mutex // makes the check and the count of an attempt one step
	email    *Buckets
	pair     *Buckets
	inflight map[string]int // attempts begun and not yet done, by the key that admitted them
}

// NewSignIns returns the slow-down, its buckets bounded as edge's others (DefaultKeys).
func NewSignIns() *SignIns {
	every := 1 / SignInEvery.Seconds()
	return &SignIns{email: New(every, SignInFreeFailures, DefaultKeys), pair: New(every, 1, DefaultKeys), inflight: map[string]int{}}
}

// SetClock makes the slow-down read the time from now (tests); call it before use.
func (s *SignIns) SetClock(now func() time.Time) {
	s.email.SetClock(now)
	s.pair.SetClock(now)
}

// Attempt is a sign-in attempt that Begin admitted; Done ends it.
type Attempt struct {
	s            *SignIns
	email, pair  string
	admittedBy   string
	done         bool
	admittedPair bool
}

// Begin admits an attempt to sign in as email (lower case) from the client address key
// addr, or refuses it with how long until that address may try this email again.
func (s *SignIns) Begin(email, addr string) (*Attempt, time.Duration) {
	pair := email + "\x00" + addr
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.email.tokens(email)-float64(s.inflight["e"+email]) >= 1:
		s.inflight["e"+email]++
		return &Attempt{s: s, email: email, pair: pair, admittedBy: "e" + email}, 0
	case s.pair.tokens(pair)-float64(s.inflight["p"+pair]) >= 1:
		s.inflight["p"+pair]++
		return &Attempt{s: s, email: email, pair: pair, admittedBy: "p" + pair, admittedPair: true}, 0
	}
	return nil, max(s.pair.Wait(pair), time.Second)
}

// Done ends the attempt: failed, a wrong email or password, counts for the email and for
// its client address and email; a success (or an error that checked nothing) counts nothing.
func (a *Attempt) Done(failed bool) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.done {
		return
	}
	a.done = true
	if s.inflight[a.admittedBy]--; s.inflight[a.admittedBy] <= 0 {
		delete(s.inflight, a.admittedBy)
	}
	if !failed {
		return
	}
	s.email.Take(a.email)
	if a.admittedPair {
		s.pair.Take(a.pair)
	} else {
		// Spent if there is one, never owed: the address then waits at most SignInEvery.
		s.pair.Allow(a.pair)
	}
}
