// Package erasurestore is the MongoDB side of the account erasure: the erased accounts'
// markers (Marks, erasure.Marks) and the part that deletes an account's parked events.
package erasurestore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/erasure"
	"github.com/vros/vros/libs/mongostore"
)

// MarksCollection holds the markers: one permanent marker per erased account,
// `erased_accounts` {_id: account, at, settled}, holding nothing but the id. The marker is
// written before anything of the account is deleted, so that an erasure stopped half-way is
// finished when it runs again, the outbox loader answers a tombstone for any aggregate of the
// account, and the account's later events are ignored.
const MarksCollection = "erased_accounts"

// mark is the document of one marker (erasure.Mark).
type mark struct {
	Account string    `bson:"_id"`
	At      time.Time `bson:"at"`
	Settled bool      `bson:"settled,omitempty"`
}

func (m mark) domain() erasure.Mark {
	return erasure.Mark{Account: m.Account, At: m.At, Settled: m.Settled}
}

func marksOf(docs []mark) []erasure.Mark {
	out := make([]erasure.Mark, 0, len(docs))
	for _, m := range docs {
		out = append(out, m.domain())
	}
	return out
}

// Marks are the erased accounts' markers (erasure.Marks), in MongoDB and remembered in memory (a marker is
// never removed, so what this process once read stays true).
type Marks struct {
	coll *mongo.Collection
	mu   sync.RWMutex
	seen map[string]bool
}

// NewMarks returns the markers of db, every one of them read into memory.
func NewMarks(ctx context.Context, db *mongo.Database) (*Marks, error) {
	if err := mongostore.Ensure(ctx, db, []string{MarksCollection}, nil); err != nil {
		return nil, fmt.Errorf("erased accounts: %w", err)
	}
	a := &Marks{coll: db.Collection(MarksCollection), seen: map[string]bool{}}
	if err := a.Reload(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// Reload reads every marker into memory: those another replica wrote are then known here
// too (each replica also learns them from the erasure event it consumes).
func (a *Marks) Reload(ctx context.Context) error {
	cur, err := a.coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("read erased accounts: %w", err)
	}
	var marks []mark
	if err := cur.All(ctx, &marks); err != nil {
		return fmt.Errorf("read erased accounts: %w", err)
	}
	a.mu.Lock()
	for _, m := range marks {
		a.seen[m.Account] = true
	}
	a.mu.Unlock()
	return nil
}

// Mark records account as erased at at (kept if it already is) and returns its marker.
func (a *Marks) Mark(ctx context.Context, account string, at time.Time) (erasure.Mark, error) {
	m := mark{Account: account, At: at.UTC()}
	_, err := a.coll.InsertOne(ctx, m)
	if err != nil && !mongostore.IsDuplicate(err) {
		return m.domain(), fmt.Errorf("mark account erased: %w", err)
	}
	a.remember(account)
	if err == nil {
		return m.domain(), nil
	}
	err = a.coll.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&m)
	if err != nil {
		return m.domain(), fmt.Errorf("read erased account: %w", err)
	}
	return m.domain(), nil
}

func (a *Marks) remember(account string) {
	a.mu.Lock()
	a.seen[account] = true
	a.mu.Unlock()
}

// Known reports, from memory only, whether account is erased: a marker another replica
// wrote is known here once this replica consumed the erasure event or reloaded.
func (a *Marks) Known(account string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.seen[account]
}

// Is reports whether account is erased, reading MongoDB when memory does not know it.
func (a *Marks) Is(ctx context.Context, account string) (bool, error) {
	if a.Known(account) {
		return true, nil
	}
	err := a.coll.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read erased account: %w", err)
	}
	a.remember(account)
	return true, nil
}

// Get returns the marker of account, false when it is not erased.
func (a *Marks) Get(ctx context.Context, account string) (erasure.Mark, bool, error) {
	var m mark
	err := a.coll.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return m.domain(), false, nil
	}
	if err != nil {
		return m.domain(), false, fmt.Errorf("read erased account: %w", err)
	}
	a.remember(account)
	return m.domain(), true, nil
}

// Unsettled lists the markers not yet settled.
func (a *Marks) Unsettled(ctx context.Context) ([]erasure.Mark, error) {
	cur, err := a.coll.Find(ctx, bson.D{{Key: "settled", Value: bson.D{{Key: "$ne", Value: true}}}})
	if err != nil {
		return nil, fmt.Errorf("read erased accounts: %w", err)
	}
	var marks []mark
	if err := cur.All(ctx, &marks); err != nil {
		return nil, fmt.Errorf("read erased accounts: %w", err)
	}
	return marksOf(marks), nil
}

// Settle marks the erasure of account as settled.
func (a *Marks) Settle(ctx context.Context, account string) error {
	_, err := a.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: account}}, bson.D{{Key: "$set", Value: bson.D{{Key: "settled", Value: true}}}})
	if err != nil {
		return fmt.Errorf("settle erased account: %w", err)
	}
	return nil
}

var _ erasure.Marks = (*Marks)(nil)
