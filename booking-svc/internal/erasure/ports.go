package erasure

import (
	"context"
	"time"
)

// Part is one store that keeps data of accounts.
type Part struct {
	Name  string
	Erase func(ctx context.Context, account string) error
}

// Mark is one erased account's marker. Settled is set once a pass of the erasure ran after
// every request of the account that could still have been running when it began had stopped.
type Mark struct {
	Account string
	At      time.Time
	Settled bool
}

// Marks are the erased accounts' markers (erasurestore.Marks): one permanent marker per
// account, written before anything of it is deleted, so that an erasure stopped half-way is
// finished when it runs again and the account's later events are ignored.
type Marks interface {
	// Mark records account as erased at at (kept if it already is) and returns its marker.
	Mark(ctx context.Context, account string, at time.Time) (Mark, error)
	// Reload reads the markers other replicas wrote.
	Reload(ctx context.Context) error
	// Unsettled lists the markers not yet settled.
	Unsettled(ctx context.Context) ([]Mark, error)
	// Settle marks the erasure of account as settled.
	Settle(ctx context.Context, account string) error
}
