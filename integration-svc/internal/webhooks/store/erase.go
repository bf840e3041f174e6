package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/mongostore"
)

// An account's erasure (docs/erasure.md): a permanent mark, then everything of the account
// deleted.

// Erased reports whether the account was erased (its later events are ignored).
func (s *Store) Erased(ctx context.Context, account string) (bool, error) {
	err := s.erased.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

// EraseAccount marks the account erased, then deletes everything of it: the mark (its id
// and the time) is all that stays, so that its events read later, from another partition,
// change nothing, and an erasure stopped half-way is finished when its event is read again.
func (s *Store) EraseAccount(ctx context.Context, account string, at time.Time) error {
	_, err := s.erased.InsertOne(ctx, bson.D{{Key: "_id", Value: account}, {Key: "at", Value: at.UTC()}})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("mark account erased: %w", err)
	}
	s.epMu.Lock()
	clear(s.epCache) // rare: simpler than finding the account's entries
	s.epMu.Unlock()
	byAccount := bson.D{{Key: "account_id", Value: account}}
	for _, c := range []*mongo.Collection{s.endpoints, s.queue, s.lanes, s.deliv, s.attempts, s.accounts} {
		if _, err := c.DeleteMany(ctx, byAccount); err != nil {
			return err
		}
	}
	_, err = s.snaps.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}})
	return err
}
