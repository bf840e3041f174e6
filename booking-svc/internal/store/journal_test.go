package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Marks of one source at once all succeed and leave one mark: an upsert that loses the race
// to insert the missing mark (FerretDB on PostgreSQL fails it on the duplicate _id) tries
// again. Before, one of twenty Touches of a booking at once could fail so.
func TestJournalConcurrentMarks(t *testing.T) {
	ctx := context.Background()
	j, err := NewJournal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	acc := fmt.Sprintf("marks%d", time.Now().UnixNano())
	const rounds, writers = 20, 16
	for round := range rounds {
		source := fmt.Sprintf("booking:%d", round)
		start := make(chan struct{})
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- j.Mark(ctx, acc, source)
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	marks, err := j.Marked(ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range marks {
		if m[0] == acc {
			seen[m[1]]++
		}
	}
	if len(seen) != rounds {
		t.Fatalf("%d sources marked, want %d: %v", len(seen), rounds, seen)
	}
	for s, n := range seen {
		if n != 1 {
			t.Errorf("%s marked %d times", s, n)
		}
	}
}
