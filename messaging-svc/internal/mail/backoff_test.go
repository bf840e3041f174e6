package mail

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	now := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	b := Backoff{Base: time.Minute, Max: 30 * time.Minute, MaxAttempts: 8, Jitter: func(d time.Duration) time.Duration { return d }}
	for _, tc := range []struct {
		attempts int
		wait     time.Duration
		ok       bool
	}{
		{0, 0, true},
		{1, time.Minute, true},
		{2, 2 * time.Minute, true},
		{3, 4 * time.Minute, true},
		{5, 16 * time.Minute, true},
		{6, 30 * time.Minute, true}, // 32 capped
		{7, 30 * time.Minute, true},
		{8, 0, false}, // the eighth attempt failed: no ninth
	} {
		at, ok := b.Next(now, tc.attempts)
		if ok != tc.ok || (ok && at.Sub(now) != tc.wait) {
			t.Errorf("after %d attempts: %v %v, want +%v %v", tc.attempts, at.Sub(now), ok, tc.wait, tc.ok)
		}
	}

	// A huge attempt count does not overflow past the cap.
	unlimited := Backoff{Base: time.Second, Max: time.Hour, Jitter: b.Jitter}
	if at, ok := unlimited.Next(now, 500); !ok || at.Sub(now) != time.Hour {
		t.Errorf("after 500 attempts: %v %v", at.Sub(now), ok)
	}

	// The default jitter stays in [wait/2, wait] and draws different values.
	seen := map[time.Duration]bool{}
	for range 200 {
		at, _ := DefaultBackoff.Next(now, 3)
		d := at.Sub(now)
		if d < 2*time.Minute || d > 4*time.Minute {
			t.Fatalf("jittered wait %v outside [2m, 4m]", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Error("the default jitter always draws the same wait")
	}
}
