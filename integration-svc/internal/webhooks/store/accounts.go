package store

import (
	"context"
	"encoding/json"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

// The accounts collection holds the operator's private-targets switch of each account; the
// account's brands are read from its settings snapshot, as the consumer keeps it.

// BrandProperties reads the account's brands from its kept settings snapshot: each brand's
// properties (none listed: all, docs/brands.md).
func (s *Store) BrandProperties(ctx context.Context, account string) (map[int64][]int64, error) {
	snap, ok, err := mongostore.GetSnapshot(ctx, s.snaps, account+":settings")
	out := map[int64][]int64{}
	if err != nil || !ok {
		return out, err
	}
	var st contract.Settings
	if err := json.Unmarshal([]byte(snap.Data), &st); err != nil {
		return nil, err
	}
	for _, b := range st.Brands {
		out[int64(b.ID)] = b.Properties
	}
	return out, nil
}

type accountDoc struct {
	ID           string `bson:"_id"`
	AccountID    string `bson:"account_id"`
	AllowPrivate bool   `bson:"allow_private_targets"`
}

// AllowsPrivate reports the account's switch (off unless an operator turned it on).
func (s *Store) AllowsPrivate(ctx context.Context, account string) (bool, error) {
	var d accountDoc
	err := s.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return d.AllowPrivate, err
}

// SetAllowsPrivate sets the account's switch.
func (s *Store) SetAllowsPrivate(ctx context.Context, account string, allow bool) error {
	_, err := s.accounts.UpdateOne(ctx, bson.D{{Key: "_id", Value: account}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "account_id", Value: account}, {Key: "allow_private_targets", Value: allow}}}},
		options.UpdateOne().SetUpsert(true))
	return err
}
