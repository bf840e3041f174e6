package booking

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/periodic"
)

// Janitor finishes what stopped requests left: it repairs the ledger changes a crash
// interrupted (their ops older than Lease), ends the booking engine's checkouts whose window
// is over, runs the other sweeps it is given and deletes failed booking attempts past
// Retention. It passes every quarter of the lease.
type Janitor struct {
	Bookings *Service
	// Lease is how old an unfinished change must be before it is repaired; it outlasts any
	// request (twice its deadline).
	Lease     time.Duration
	Retention time.Duration
	// Sweeps are other expiries run at each pass, by name (the idempotency keys').
	Sweeps map[string]func(context.Context) error
	Log    *slog.Logger
	// Meter counts the repairs in vros.janitor.repairs by kind (RepairKinds); nil: none.
	Meter metric.Meter

	repairs metric.Int64Counter
}

// The kinds of repair the janitor counts: an unfinished ledger change of a booking (its
// nights released as its document says; a booking its creator abandoned marked failed), or
// of a block.
const (
	RepairBooking = "booking"
	RepairBlock   = "block"
	RepairOther   = "other" // an op whose owner is neither (never written by this service)
)

// RepairKinds are the values of vros.janitor.repairs' label kind.
var RepairKinds = []string{RepairBooking, RepairBlock, RepairOther}

var repairKindSets = func() map[string]metric.MeasurementOption {
	out := map[string]metric.MeasurementOption{}
	for _, k := range RepairKinds {
		out[k] = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", k)))
	}
	return out
}()

// counter is the repairs counter: the one Run made, else one from Meter (a Pass called on
// its own), else nil.
func (j Janitor) counter() metric.Int64Counter {
	if j.repairs != nil || j.Meter == nil {
		return j.repairs
	}
	c, _ := j.Meter.Int64Counter("vros.janitor.repairs", metric.WithUnit("{repair}"),
		metric.WithDescription("Unfinished changes the janitor repaired, by kind (booking, block): each a request that stopped before it finished."))
	if c != nil {
		for _, set := range repairKindSets { // exported at 0 from the start
			c.Add(context.Background(), 0, set)
		}
	}
	return c
}

// Run passes until ctx ends.
func (j Janitor) Run(ctx context.Context) error {
	j.repairs = j.counter()
	periodic.Run(ctx, j.Lease/4, func(ctx context.Context) error { j.Pass(ctx); return nil }, nil)
	return nil
}

// Pass runs every chore once; a failed chore is logged, and tried again at the next pass.
func (j Janitor) Pass(ctx context.Context) {
	s := j.Bookings
	// The ledger asks current once for each op it repairs, in order, before it releases
	// anything: the first n owners asked are the n ops repaired (a failure stops it).
	var owners []string
	current := func(ctx context.Context, account, owner string) ([]ledger.Stay, error) {
		owners = append(owners, owner)
		return s.Current(ctx, account, owner)
	}
	n, err := s.ledger.Repair(ctx, j.Lease, current)
	if c := j.counter(); c != nil {
		for _, owner := range owners[:min(n, len(owners))] {
			kind, _, perr := parseOwner(owner)
			if perr != nil || (kind != RepairBooking && kind != RepairBlock) {
				kind = RepairOther
			}
			c.Add(ctx, 1, repairKindSets[kind])
		}
	}
	if err != nil {
		j.Log.Warn("ledger repair failed", "err", err)
	} else if n > 0 {
		j.Log.Info("ledger repaired unfinished changes", "count", n)
	}
	// After the repair: a checkout whose creator or confirm stopped is held again by then.
	if n, err := s.ExpireCheckouts(ctx); err != nil {
		j.Log.Warn("checkout expiry failed", "err", err, "ended", n)
	} else if n > 0 {
		j.Log.Info("checkouts ended after their window", "count", n)
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
