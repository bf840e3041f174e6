// Package eventually is the tests' wait for a condition that becomes true on its own time (a
// consumer catching up, a broker coming back): poll, never a fixed sleep.
package eventually

import (
	"testing"
	"time"
)

// Holds polls f every 20 ms until it returns true, and fails t when it has not within.
func Holds(t testing.TB, what string, within time.Duration, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
