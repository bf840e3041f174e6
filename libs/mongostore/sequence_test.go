package mongostore_test

import (
	"context"
	"sync"
	"testing"

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
