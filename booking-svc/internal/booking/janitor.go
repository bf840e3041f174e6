package booking

import (
	"context"
	"log/slog"
	"time"

	"github.com/vros/vros/libs/periodic"
)

// Janitor finishes what stopped requests left: it repairs the ledger changes a crash
// interrupted (their ops older than Lease), runs the other sweeps it is given and deletes
// failed booking attempts past Retention. It passes every quarter of the lease.
type Janitor struct {
	Bookings *Service
	// Lease is how old an unfinished change must be before it is repaired; it outlasts any
	// request (twice its deadline).
	Lease     time.Duration
	Retention time.Duration
	// Sweeps are other expiries run at each pass, by name (the idempotency keys').
	Sweeps map[string]func(context.Context) error
	Log    *slog.Logger
}

// Run passes until ctx ends.
func (j Janitor) Run(ctx context.Context) error {
	periodic.Run(ctx, j.Lease/4, func(ctx context.Context) error { j.Pass(ctx); return nil }, nil)
	return nil
}

// Pass runs every chore once; a failed chore is logged, and tried again at the next pass.
func (j Janitor) Pass(ctx context.Context) {
	s := j.Bookings
	if n, err := s.ledger.Repair(ctx, j.Lease, s.Current); err != nil {
		j.Log.Warn("ledger repair failed", "err", err)
	} else if n > 0 {
		j.Log.Info("ledger repaired unfinished changes", "count", n)
	}
	for name, sweep := range j.Sweeps {
		if err := sweep(ctx); err != nil {
			j.Log.Warn(name+" failed", "err", err)
		}
	}
	if n, err := s.PurgeFailed(ctx, j.Retention); err != nil {
		j.Log.Warn("failed booking purge failed", "err", err)
	} else if n > 0 {
		j.Log.Info("failed booking attempts deleted after their retention", "count", n)
	}
}
