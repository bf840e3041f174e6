package usage

import (
	"context"
	"errors"
	"testing"
	"time"
)

// batchStore is a Store in memory with the real one's rule (a batch is added to a record
// once) whose next Adds can be made to fail, before or after the write.
type batchStore struct {
	counts  map[Bucket]Counts
	last    map[Bucket]int64
	batches []int64 // the batch number of every Add tried
	// fail is what the next Adds do, one per Add: 0 write, 1 fail before, 2 fail after.
	fail []int
}

func (s *batchStore) Add(_ context.Context, _ string, batch int64, b Bucket, c Counts) error {
	s.batches = append(s.batches, batch)
	mode := 0
	if len(s.fail) > 0 {
		mode, s.fail = s.fail[0], s.fail[1:]
	}
	if mode == 1 {
		return errors.New("lost before")
	}
	if s.last[b] < batch {
		s.last[b] = batch
		n := s.counts[b]
		n.Add(c)
		s.counts[b] = n
	}
	if mode == 2 {
		return errors.New("lost after")
	}
	return nil
}

func (s *batchStore) Requests(context.Context, string, time.Time, time.Time) (Counts, error) {
	return Counts{}, nil
}

// TestFailedFlushKeepsItsBatch: a failed flush's unwritten counts are written first by the
// next flush under the same batch number (a write whose answer was lost is not added
// twice); counts taken while flushes fail wait in one further batch, never more.
func TestFailedFlushKeepsItsBatch(t *testing.T) {
	ctx := context.Background()
	s := &batchStore{counts: map[Bucket]Counts{}, last: map[Bucket]int64{}}
	c := NewCounter(s, "r")
	hour := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return hour.Add(10 * time.Minute) }
	b := Bucket{Account: "1001", Hour: hour}

	c.Add("1001", A, OK)
	c.Add("1001", A, OK)
	s.fail = []int{2} // written, but the answer lost
	if err := c.Flush(ctx); err == nil {
		t.Fatal("the flush did not report its failure")
	}
	for range 5 { // more counts, while every flush fails before writing
		c.Add("1001", B, Refused)
		s.fail = []int{1}
		if err := c.Flush(ctx); err == nil {
			t.Fatal("the flush did not report its failure")
		}
		if len(c.pending) > 2 {
			t.Fatalf("%d batches pending, want at most 2", len(c.pending))
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var want Counts
	want[A][OK] = 2
	want[B][Refused] = 5
	if got := s.counts[b]; got != want {
		t.Errorf("stored %v, want %v", got.Map(), want.Map())
	}
	// Batch 1 was tried every time until it went through; the five refusals went as batch 2.
	for i, n := range s.batches {
		if i < len(s.batches)-1 && n != 1 {
			t.Errorf("Add %d: batch %d, want 1 until batch 1 is stored: %v", i, n, s.batches)
			break
		}
	}
	if last := s.batches[len(s.batches)-1]; last != 2 {
		t.Errorf("last Add: batch %d, want 2: %v", last, s.batches)
	}
	if len(c.pending) != 0 || len(c.cur) != 0 {
		t.Errorf("after a successful flush: %d batches pending, %d buckets counting", len(c.pending), len(c.cur))
	}
}

// TestCountsMap: the report's form names every interface and outcome, and reads back.
func TestCountsMap(t *testing.T) {
	var c Counts
	c[Read][ServerError] = 7
	c[A][ClientError] = 1
	c[Engine][Refused] = 3
	m := c.Map()
	if len(m) != 4 || len(m["a"]) != 4 || m["read"]["server_error"] != 7 || m["a"]["client_error"] != 1 || m["engine"]["refused"] != 3 {
		t.Errorf("Map %v", m)
	}
	if FromMap(m) != c {
		t.Errorf("FromMap(Map) = %v, want %v", FromMap(m).Map(), m)
	}
}
