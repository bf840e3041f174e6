package usagestore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/edge/internal/usagestore"
	"github.com/vros/vros/testkit/testinfra"
)

var store *usagestore.Store

func TestMain(m *testing.M) {
	testinfra.RunWithDatabase(m, "edge_usage_test", nil, func(db *mongo.Database) (err error) {
		store, err = usagestore.New(context.Background(), db)
		return err
	})
}

// flaky fails some Adds: before writing (the write never happened) or after it (the write
// happened but its answer was lost), as a connection dropped either way would.
type flaky struct {
	*usagestore.Store
	calls atomic.Int64
	// fail decides for call n: 0 succeed, 1 fail before, 2 fail after.
	fail func(n int64) int
}

var errDropped = errors.New("connection dropped")

func (f *flaky) Add(ctx context.Context, replica string, batch int64, b usage.Bucket, c usage.Counts) error {
	switch f.fail(f.calls.Add(1)) {
	case 1:
		return errDropped
	case 2:
		if err := f.Store.Add(ctx, replica, batch, b, c); err != nil {
			return err
		}
		return errDropped
	}
	return f.Store.Add(ctx, replica, batch, b, c)
}

// TestAddOncePerBatch: a batch added twice to a record counts once; a newer batch adds.
func TestAddOncePerBatch(t *testing.T) {
	ctx := context.Background()
	hour := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	b := usage.Bucket{Account: "once", Hour: hour}
	var c usage.Counts
	c[usage.A][usage.OK] = 3
	c[usage.Read][usage.Refused] = 1
	for range 3 {
		if err := store.Add(ctx, "r1", 1, b, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Add(ctx, "r1", 2, b, c); err != nil {
		t.Fatal(err)
	}
	if err := store.Add(ctx, "r2", 1, b, c); err != nil { // another replica: its own record
		t.Fatal(err)
	}
	got, err := store.Requests(ctx, "once", hour, hour.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var want usage.Counts
	want[usage.A][usage.OK] = 9
	want[usage.Read][usage.Refused] = 3
	if got != want {
		t.Errorf("counts %v, want %v", got.Map(), want.Map())
	}
	// The period takes the hours that start within it.
	for _, p := range []struct {
		from, to time.Time
		want     int64
	}{
		{hour.Add(-time.Hour), hour, 0},
		{hour, hour.Add(time.Minute), 9},
		{hour.Add(time.Minute), hour.Add(2 * time.Hour), 0},
	} {
		got, err := store.Requests(ctx, "once", p.from, p.to)
		if err != nil {
			t.Fatal(err)
		}
		if got[usage.A][usage.OK] != p.want {
			t.Errorf("[%s, %s): a.ok %d, want %d", p.from, p.to, got[usage.A][usage.OK], p.want)
		}
	}
}

// TestFlushExactlyOnce: flushes that fail (before or after their write reached the store)
// keep their counts for the next flush, which stores them exactly once: after a successful
// flush every account's counts are exact, while requests were counted all along.
func TestFlushExactlyOnce(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		fail func(n int64) int
	}{
		{"every third write lost before it is made", func(n int64) int {
			if n%3 == 0 {
				return 1
			}
			return 0
		}},
		{"every third write made but its answer lost", func(n int64) int {
			if n%3 == 0 {
				return 2
			}
			return 0
		}},
		{"writes fail both ways at random", func(n int64) int { return int(n*7919) % 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &flaky{Store: store, fail: tc.fail}
			c := usage.NewCounter(st, tc.name)
			accounts := []string{tc.name + "/x", tc.name + "/y", tc.name + "/z"}
			const each = 200
			var wg sync.WaitGroup
			stop := make(chan struct{})
			var flushes sync.WaitGroup
			flushes.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						_ = c.Flush(ctx)
					}
				}
			})
			for i, acc := range accounts {
				wg.Go(func() {
					for j := range each {
						c.Add(acc, usage.Interface(j%3), usage.Outcome((i+j)%4))
					}
				})
			}
			wg.Wait()
			close(stop)
			flushes.Wait()
			st.fail = func(int64) int { return 0 }
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC().Truncate(time.Hour)
			for i, acc := range accounts {
				got, err := store.Requests(ctx, acc, now.Add(-time.Hour), now.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				var want usage.Counts
				for j := range each {
					want[j%3][(i+j)%4]++
				}
				if got != want {
					t.Errorf("%s: counts %v, want %v", acc, got.Map(), want.Map())
				}
			}
		})
	}
}
