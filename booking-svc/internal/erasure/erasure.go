// Package erasure erases a whole account from booking-svc when vros.account.erased arrives
// (docs/booking.md, "Export and erasure"): the account is marked erased first, then every
// store forgets it, bookings and blocks each leaving an outbox intent whose tombstone the
// relay publishes. Every step can run again, so an erasure stopped anywhere is finished when
// the event is applied again (the consumer retries until the handler succeeds) or by the
// janitor's sweep, which also runs it once more after every request of the account that
// could have been running when it began has stopped.
//
// The package holds the policy only, over its ports (ports.go): the markers of the erased
// accounts are erasurestore.Marks in MongoDB, which the store, the property view and the API
// also read to refuse or ignore what still arrives for an erased account; the parts are the
// stores' EraseAccount functions (erasurestore.ParkedEvents for the parked events); the
// Kafka message is decoded by package consumer, which calls Erase.
package erasure

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Eraser erases accounts.
type Eraser struct {
	Marks Marks
	// View is erased first, so that nothing of the account can be priced while the rest
	// goes.
	View Part
	// Forget drops what this process keeps of the account in memory (the view's cache): a
	// settled erasure applied again does only that.
	Forget func(account string)
	// Parts are the other stores, erased in order.
	Parts []Part
	// Settle is how long after an erasure began its last pass runs: longer than any request
	// of the account may still run (the janitor's lease).
	Settle time.Duration
	Log    *slog.Logger
	now    func() time.Time
}

func (e *Eraser) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// Erase erases account: marker first, then every part. An account whose erasure has settled
// is only forgotten in memory: its documents are gone, and a replica that starts reads every
// erasure event of the topic again, which must cost it nothing more.
func (e *Eraser) Erase(ctx context.Context, account string) error {
	m, err := e.Marks.Mark(ctx, account, e.clock())
	if err != nil {
		return err
	}
	if m.Settled {
		if e.Forget != nil {
			e.Forget(account)
		}
		return nil
	}
	return e.erase(ctx, account)
}

func (e *Eraser) erase(ctx context.Context, account string) error {
	for _, p := range append([]Part{e.View}, e.Parts...) {
		if err := p.Erase(ctx, account); err != nil {
			return fmt.Errorf("erase account from %s: %w", p.Name, err)
		}
	}
	return nil
}

// Sweep finishes the erasures not yet settled: each runs again, and is settled once it ran
// after Settle had passed since it began. It also reads the markers other replicas wrote.
func (e *Eraser) Sweep(ctx context.Context) error {
	if err := e.Marks.Reload(ctx); err != nil {
		return err
	}
	marks, err := e.Marks.Unsettled(ctx)
	if err != nil {
		return err
	}
	for _, m := range marks {
		due := !e.clock().Before(m.At.Add(e.Settle))
		if err := e.erase(ctx, m.Account); err != nil {
			return err
		}
		if due {
			if err := e.Marks.Settle(ctx, m.Account); err != nil {
				return err
			}
			if e.Log != nil {
				e.Log.Info("account erasure settled", "account", m.Account)
			}
		}
	}
	return nil
}
