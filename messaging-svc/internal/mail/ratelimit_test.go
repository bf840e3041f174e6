package mail

import (
	"testing"
	"time"
)

// clock is a test's clock, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLimiter(t *testing.T) {
	// One message every 10 s per account, 3 at once.
	type step struct {
		advance time.Duration
		key     string
		want    time.Duration // 0: sent now; otherwise the wait the sender is told
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the burst passes at once, the next waits a period", []step{
			{0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 10 * time.Second},
		}},
		{"a refused message takes no token", []step{
			{0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 0},
			{0, "acc1", 10 * time.Second}, {0, "acc1", 10 * time.Second}, {4 * time.Second, "acc1", 6 * time.Second},
			{6 * time.Second, "acc1", 0}, {0, "acc1", 10 * time.Second},
		}},
		{"accounts do not share a bucket", []step{
			{0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 0}, {0, "acc2", 0}, {0, "acc1", 10 * time.Second}, {0, "acc2", 0},
		}},
		{"tokens come back with time, up to the burst", []step{
			{0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 0},
			{time.Hour, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 10 * time.Second},
		}},
		{"a steady rate passes", []step{
			{0, "acc1", 0}, {0, "acc1", 0}, {0, "acc1", 0},
			{10 * time.Second, "acc1", 0}, {10 * time.Second, "acc1", 0}, {5 * time.Second, "acc1", 5 * time.Second},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)}
			l := NewLimiter(10*time.Second, 3, c.now)
			for i, s := range tc.steps {
				c.t = c.t.Add(s.advance)
				if got := l.Reserve(s.key); got != s.want {
					t.Fatalf("step %d (%s after %v): wait %v, want %v", i, s.key, s.advance, got, s.want)
				}
			}
		})
	}
}
