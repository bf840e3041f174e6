package together_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vros/vros/testkit/together"
)

// TestRun: every index runs exactly once, and Run returns only after the last call.
func TestRun(t *testing.T) {
	for _, n := range []int{0, 1, 2, 64} {
		var calls [64]atomic.Int32
		var done atomic.Int32
		together.Run(n, func(i int) {
			calls[i].Add(1)
			done.Add(1)
		})
		if got := int(done.Load()); got != n {
			t.Fatalf("n=%d: Run returned after %d calls", n, got)
		}
		for i := range n {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d: f(%d) ran %d times", n, i, c)
			}
		}
	}
}

// TestRunStartsTogether: no call runs before every goroutine has been started, so a call
// that waits for all n to be running at once is released.
func TestRunStartsTogether(t *testing.T) {
	const n = 16
	var arrived sync.WaitGroup
	arrived.Add(n)
	together.Run(n, func(int) {
		arrived.Done()
		arrived.Wait() // deadlocks (test timeout) unless all n run at the same time
	})
}
