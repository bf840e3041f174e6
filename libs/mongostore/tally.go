package mongostore

import (
	"context"
	"sync/atomic"
)

// Tally counts the store round trips of one request: the commands issued with its context
// (the command monitor adds one for each, getMore and killCursors included) and the batched
// writes it waited for (Add, by whoever ran the batch on a context of its own). httpapi puts
// one in every request's context and records its count in vros.store.operations by request
// kind (docs/observability.md). Safe for concurrent use; a nil *Tally counts nothing.
type Tally struct{ n atomic.Int64 }

type tallyKey struct{}

// WithTally returns ctx carrying a new tally, and the tally.
func WithTally(ctx context.Context) (context.Context, *Tally) {
	t := &Tally{}
	return context.WithValue(ctx, tallyKey{}, t), t
}

// TallyOf is the tally of ctx, nil if it has none (work outside a request).
func TallyOf(ctx context.Context) *Tally {
	t, _ := ctx.Value(tallyKey{}).(*Tally)
	return t
}

// Add counts n round trips; for a batched write done on another goroutine's context, one per
// request that waited for it.
func (t *Tally) Add(n int) {
	if t != nil {
		t.n.Add(int64(n))
	}
}

// Count is the round trips counted so far.
func (t *Tally) Count() int {
	if t == nil {
		return 0
	}
	return int(t.n.Load())
}

// CountOp counts one round trip in ctx's tally, if it has one: for a store call the command
// monitor does not see.
func CountOp(ctx context.Context) { TallyOf(ctx).Add(1) }
