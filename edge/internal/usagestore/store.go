// Package usagestore keeps edge's request counts in MongoDB (vros_edge.usage): one record
// per account, UTC hour and edge replica, which only that replica writes.
package usagestore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/libs/mongostore"
)

const collUsage = "usage"

// Store is usage.Store over MongoDB.
type Store struct {
	usage *mongo.Collection
}

// New returns the store over db, creating its collection and index at start-up.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	err := mongostore.Ensure(ctx, db, []string{collUsage}, []mongostore.Index{
		// One account's hours (the report).
		{Collection: collUsage, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "hour", Value: 1}}},
	})
	if err != nil {
		return nil, err
	}
	return &Store{usage: db.Collection(collUsage)}, nil
}

// record is one account's hour as counted by one replica. Batch is the number of the last
// batch of that replica added to it.
type record struct {
	ID      string                      `bson:"_id"`
	Account string                      `bson:"account_id"`
	Hour    time.Time                   `bson:"hour"`
	Replica string                      `bson:"replica"`
	Batch   int64                       `bson:"batch"`
	Counts  map[string]map[string]int64 `bson:"counts"`
}

// Add $inc-s the counts into the record of (replica, bucket) if batch is newer than the
// last batch added to it, upserting it. When the record already holds batch, the filter
// matches nothing and the upsert's insert collides with the record's id: that duplicate key
// says the batch was added before, and is success.
func (s *Store) Add(ctx context.Context, replica string, batch int64, b usage.Bucket, c usage.Counts) error {
	id := b.Account + "|" + strconv.FormatInt(b.Hour.Unix(), 10) + "|" + replica
	inc := bson.D{}
	for i, m := range c.Map() {
		for o, n := range m {
			if n != 0 {
				inc = append(inc, bson.E{Key: "counts." + i + "." + o, Value: n})
			}
		}
	}
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "account_id", Value: b.Account}, {Key: "hour", Value: b.Hour}, {Key: "replica", Value: replica}, {Key: "batch", Value: batch}}}}
	if len(inc) > 0 {
		update = append(update, bson.E{Key: "$inc", Value: inc})
	}
	_, err := s.usage.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "batch", Value: bson.D{{Key: "$lt", Value: batch}}}}, update,
		options.UpdateOne().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("add usage counts: %w", err)
	}
	return nil
}

// Requests sums the account's records of the hours starting within [from, to).
func (s *Store) Requests(ctx context.Context, account string, from, to time.Time) (usage.Counts, error) {
	var out usage.Counts
	cur, err := s.usage.Find(ctx, bson.D{{Key: "account_id", Value: account}, {Key: "hour", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}}})
	if err != nil {
		return out, fmt.Errorf("read usage: %w", err)
	}
	var recs []record
	if err := cur.All(ctx, &recs); err != nil {
		return out, fmt.Errorf("read usage: %w", err)
	}
	for _, r := range recs {
		out.Add(usage.FromMap(r.Counts))
	}
	return out, nil
}
