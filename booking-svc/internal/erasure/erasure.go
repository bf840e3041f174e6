// Package erasure erases a whole account from booking-svc when vros.account.erased arrives
// (docs/booking.md, "Export and erasure"): the account is marked erased first, then every
// store forgets it, bookings and blocks each leaving an outbox intent whose tombstone the
// relay publishes. Every step can run again, so an erasure stopped anywhere is finished when
// the event is applied again (the consumer retries until the handler succeeds) or by the
// janitor's sweep, which also runs it once more after every request of the account that
// could have been running when it began has stopped.
//
// The markers of the erased accounts (Marks, marks.go) live here too: the erasure writes
// them first, and the store, the property view and the API read them to refuse or ignore
// what still arrives for an erased account.
package erasure

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

// Part is one store that keeps data of accounts.
type Part struct {
	Name  string
	Erase func(ctx context.Context, account string) error
}

// Eraser erases accounts.
type Eraser struct {
	Marks *Marks
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
	// Next handles every message that is not an erasure (the property view).
	Next events.Handler
	Log  *slog.Logger
	now  func() time.Time
}

func (e *Eraser) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// Apply is the consumer handler of vros.property.v1: an account's erasure event erases it,
// every other message goes to Next.
func (e *Eraser) Apply(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) || !strings.HasSuffix(string(m.Key), ":account") {
		return e.Next(ctx, m)
	}
	var d contract.AccountErasure
	ev, err := events.Decode(m.Value, &d)
	if err != nil {
		return events.Permanent(err)
	}
	if ev.Type() != contract.AccountErased {
		return e.Next(ctx, m)
	}
	if d.AccountID == "" || events.AccountKey(d.AccountID) != string(m.Key) {
		return events.Permanent(fmt.Errorf("account erasure event for %q under key %q", d.AccountID, m.Key))
	}
	return e.Erase(ctx, d.AccountID)
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

// ParkedEvents is the part that deletes the account's parked events (`parked_events`, whose
// key begins with "<account>:"): they hold its snapshots.
func ParkedEvents(parked *mongo.Collection) Part {
	return Part{Name: "parked events", Erase: func(ctx context.Context, account string) error {
		_, err := parked.DeleteMany(ctx, bson.D{{Key: "key", Value: mongostore.OwnedBy(account)}})
		return err
	}}
}
