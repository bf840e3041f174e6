package mongostore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/testkit/together"
)

// TestSequencesOfManyProcessesNeverRepeat: twenty processes (a Sequence each) share one
// counter and draw ids at once, in blocks of 1 and of 5. No id is handed out twice.
func TestSequencesOfManyProcessesNeverRepeat(t *testing.T) {
	for _, block := range []int64{1, 5} {
		coll := fresh("counters")
		var mu sync.Mutex
		seen := map[int64]int{}
		together.Run(20, func(int) {
			seq := mongostore.NewSequence(coll, "booking", block)
			for range 15 {
				id, err := seq.Next(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[id]++
				mu.Unlock()
			}
		})
		for id, n := range seen {
			if n > 1 {
				t.Errorf("block %d: id %d handed out %d times", block, id, n)
			}
		}
		if len(seen) != 20*15 {
			t.Errorf("block %d: %d distinct ids, want %d", block, len(seen), 20*15)
		}
	}
}

// TestSequenceReservesAhead: a sequence that reserves ahead costs its callers the store only
// for the first block: once half a block is handed out the next one is reserved in the
// background, so that every later id is handed out to a caller whose context is already
// cancelled (it could not reach the store). Ids never repeat across processes.
func TestSequenceReservesAhead(t *testing.T) {
	coll := fresh("counters")
	seq := mongostore.NewSequence(coll, "booking", 10).ReserveAhead()
	other := mongostore.NewSequence(coll, "booking", 10)
	seen := map[int64]bool{}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	draw := func(s *mongostore.Sequence, ctx context.Context) {
		t.Helper()
		id, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("after %d ids: %v", len(seen), err)
		}
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if _, err := seq.Next(gone); err == nil {
		t.Fatal("the first block was reserved without the store")
	}
	draw(seq, context.Background())
	for block := range 5 {
		for i := range 10 {
			if block == 0 && i == 9 {
				break // the first id was drawn above
			}
			if i == 5 {
				for !mongostore.SequenceSpare(seq) {
					time.Sleep(time.Millisecond) // the background reservation lands
				}
				draw(other, context.Background()) // another process's draws interleave
			}
			draw(seq, gone)
		}
	}
}
