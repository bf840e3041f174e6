package outbox

import (
	"context"

	"github.com/vros/vros/libs/events"
)

// A Releaser forgets the records that stood for handed writes (Hand) once the relay has
// published them: the writer's own record of a change in progress, which also guaranteed
// that its event would be published if the process stopped first.
type Releaser interface {
	// Release forgets the records of keys, all of them published. An error leaves them:
	// whoever keeps them publishes again later (a duplicate, which consumers ignore by
	// version) and forgets them then.
	Release(ctx context.Context, keys []string) error
}

// Hand gives the relay a write recorded without an intent: the writer keeps a record of its
// own (key, with rel) that outlives a stop of the process and leads to the aggregate being
// published again by the writer's own repair. snap is the state the write produced (nil: the
// relay loads it). Once that state, or a newer one, is published, the relay calls
// rel.Release with key, batched with the other keys of rel published in the same flush.
//
// It saves the intent's insert and delete where the writer already records its change
// before making it (booking-svc's ledger op: docs/booking.md, "What a booking costs the
// store").
func (o *Outbox) Hand(ctx context.Context, aggregate string, snap *Snapshot, rel Releaser, key string) {
	var trace map[string]string
	if o.opt.Propagator != nil {
		trace = events.TraceOf(ctx, o.opt.Propagator)
	}
	o.add(aggregate, nil, trace, snap, map[Releaser][]string{rel: {key}})
	o.count(ctx, 1)
	o.wakeFor(aggregate)
}

// release forgets the handed writes of the aggregates published (covered), one Release per
// Releaser.
func (o *Outbox) release(ctx context.Context, batch map[string]*pendingAgg, covered []string) {
	var all map[Releaser][]string
	for _, agg := range covered {
		for rel, keys := range batch[agg].held {
			if all == nil {
				all = map[Releaser][]string{}
			}
			all[rel] = append(all[rel], keys...)
		}
	}
	for rel, keys := range all {
		if err := rel.Release(ctx, keys); err != nil {
			o.logWarn(ctx, "outbox: published handed writes not released (their writer's repair publishes them again)", err)
		}
		o.count(ctx, -int64(len(keys)))
	}
}
