package periodic

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestRun: f runs at every tick, its errors reach onError while ctx lives, and Run returns
// once ctx ends.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls, errs atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, time.Millisecond, func(context.Context) error {
			if calls.Add(1) == 3 {
				cancel()
				return errors.New("after the end") // not reported: ctx has ended
			}
			return errors.New("tick")
		}, func(error) { errs.Add(1) })
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once ctx ended")
	}
	if calls.Load() != 3 || errs.Load() != 2 {
		t.Fatalf("calls %d, errors reported %d; want 3 and 2", calls.Load(), errs.Load())
	}
}
