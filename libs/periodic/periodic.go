// Package periodic runs a background chore at a fixed interval: the account poll, deletion
// retries and usage flushes of edge, booking-svc's janitor.
package periodic

import (
	"context"
	"time"
)

// Run calls f every interval until ctx ends, the first call an interval after the start.
// An error of f goes to onError (if not nil) unless ctx has ended; the chore is simply
// tried again at the next tick.
func Run(ctx context.Context, interval time.Duration, f func(context.Context) error, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := f(ctx); err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
	}
}
