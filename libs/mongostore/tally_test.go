package mongostore

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// startedEvent is a command's start as the driver publishes it.
func startedEvent(t *testing.T, id int64, op, coll string) *event.CommandStartedEvent {
	t.Helper()
	cmd, err := bson.Marshal(bson.D{{Key: op, Value: coll}})
	if err != nil {
		t.Fatal(err)
	}
	return &event.CommandStartedEvent{Command: cmd, DatabaseName: "vros_booking", CommandName: op, RequestID: id}
}

// TestTallyCountsEveryCommand: the monitor adds one to the tally of a command's context for
// every command, getMore and failed ones included, whether or not it traces or times them;
// a command issued with a context derived from the request's counts in the request's tally;
// commands of other contexts (background work, another request) do not.
func TestTallyCountsEveryCommand(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	spans := telemetrytest.NewSpans(t)
	for name, mon := range map[string]*event.CommandMonitor{
		"bare":             commandMonitor(nil, nil),
		"traced and timed": commandMonitor(spans.Tracer(), metrics.Meter()),
	} {
		t.Run(name, func(t *testing.T) {
			req, tally := WithTally(context.Background())
			other, otherTally := WithTally(context.Background())
			derived, cancel := context.WithTimeout(context.WithoutCancel(req), time.Minute)
			defer cancel()
			var id int64
			run := func(ctx context.Context, op string, fail bool) {
				id++
				mon.Started(ctx, startedEvent(t, id, op, "bookings"))
				fin := event.CommandFinishedEvent{RequestID: id, CommandName: op, DatabaseName: "vros_booking"}
				if fail {
					mon.Failed(ctx, &event.CommandFailedEvent{CommandFinishedEvent: fin, Failure: context.DeadlineExceeded})
					return
				}
				mon.Succeeded(ctx, &event.CommandSucceededEvent{CommandFinishedEvent: fin})
			}
			run(req, "find", false)
			run(req, "getMore", false)
			run(derived, "insert", true)
			run(context.Background(), "update", false) // a sweep's: no request
			run(other, "delete", false)
			if n := tally.Count(); n != 3 {
				t.Errorf("request tally %d, want 3 (find, getMore, failed insert)", n)
			}
			if n := otherTally.Count(); n != 1 {
				t.Errorf("other request's tally %d, want 1", n)
			}
		})
	}
}

// TestTallyAddAndCountOp: Add counts a batched write for a request that waited for it,
// CountOp one round trip, from many goroutines at once; without a tally neither does
// anything, nor fails.
func TestTallyAddAndCountOp(t *testing.T) {
	ctx, tally := WithTally(context.Background())
	if TallyOf(ctx) != tally {
		t.Fatal("TallyOf does not find the tally WithTally made")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				CountOp(ctx)
				tally.Add(2)
			}
		})
	}
	wg.Wait()
	if n := tally.Count(); n != 8*500*3 {
		t.Errorf("count %d, want %d", n, 8*500*3)
	}
	bg := context.Background()
	if TallyOf(bg) != nil {
		t.Fatal("a context without a tally has one")
	}
	CountOp(bg)
	TallyOf(bg).Add(1)
	if n := TallyOf(bg).Count(); n != 0 {
		t.Errorf("nil tally counts %d", n)
	}
}

// TestTallyMonitorAllocs: counting costs the monitor no allocation, with a tally or without
// one (a command outside any request, untraced and untimed, allocates nothing at all).
func TestTallyMonitorAllocs(t *testing.T) {
	mon := commandMonitor(nil, nil)
	e := startedEvent(t, 1, "find", "bookings")
	req, tally := WithTally(context.Background())
	for name, ctx := range map[string]context.Context{"no tally": context.Background(), "tally": req} {
		if n := testing.AllocsPerRun(100, func() { mon.Started(ctx, e) }); n != 0 {
			t.Errorf("%s: %v allocations per command, want 0", name, n)
		}
	}
	if tally.Count() == 0 {
		t.Error("the tally counted nothing")
	}
}
