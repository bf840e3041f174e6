package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/vros/vros/libs/periodic"
)

// DefaultMoneyInterval is how often the money worker passes (VROS_BOOKING_MONEY_INTERVAL).
const DefaultMoneyInterval = 30 * time.Second

// Money is the money worker (docs/money.md): every Interval it attempts the refund parts due
// (refund.go) and runs the damage-deposit steps due (deposit.go). Each pass reads small
// collections of its own (refunds_due…), never the bookings, and each step runs once across
// replicas and restarts (a lease and a gateway idempotency key per step).
type Money struct {
	Bookings *Service
	Interval time.Duration // 0: DefaultMoneyInterval
	Log      *slog.Logger
}

// Run passes until ctx ends.
func (m Money) Run(ctx context.Context) error {
	interval := m.Interval
	if interval <= 0 {
		interval = DefaultMoneyInterval
	}
	periodic.Run(ctx, interval, m.Pass, func(err error) { m.Log.Warn("money worker pass failed", "err", err) })
	return nil
}

// Pass runs each of the worker's passes once; one failing does not keep the others from
// running.
func (m Money) Pass(ctx context.Context) error {
	var errs []error
	// Refunds: the card parts whose attempt is due.
	if n, err := m.Bookings.RefundPass(ctx); err != nil {
		errs = append(errs, fmt.Errorf("refunds: %w", err))
	} else if n > 0 {
		m.Log.Info("refunds attempted", "bookings", n)
	}
	// Damage-deposit holds (deposit.go): the steps due.
	if n, err := m.Bookings.DepositPass(ctx); err != nil {
		errs = append(errs, fmt.Errorf("deposits: %w", err))
	} else if n > 0 {
		m.Log.Info("deposit steps done", "steps", n)
	}
	return errors.Join(errs...)
}

// ParseRetrySchedule reads a retry schedule ("1m,5m,30m,2h,12h": the wait before each retry,
// VROS_BOOKING_REFUND_RETRY_SCHEDULE): at least one positive duration, at most 20.
func ParseRetrySchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("retry schedule %q: %q is not a positive duration (such as 1m, 2h)", s, f)
		}
		out = append(out, d)
	}
	if len(out) > 20 {
		return nil, fmt.Errorf("retry schedule %q: at most 20 retries", s)
	}
	return out, nil
}
