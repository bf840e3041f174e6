package mongostore

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Snapshot is a consumer's stored copy of an aggregate: the data of its newest event.
type Snapshot struct {
	ID      string `bson:"_id"`
	Version int64  `bson:"version"`
	Data    string `bson:"data"`
}

// KeepNewer stores data as snapshot id at version unless coll already holds that version or
// a newer one, so redelivered and reordered events change nothing. It returns the snapshot
// coll holds afterwards and whether it is the one given. Only `_id` filters are used.
func KeepNewer(ctx context.Context, coll *mongo.Collection, id string, version int64, data string) (Snapshot, bool, error) {
	var cur Snapshot
	err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&cur)
	switch {
	case err == nil && cur.Version >= version:
		return cur, false, nil
	case err != nil && !errors.Is(err, mongo.ErrNoDocuments):
		return cur, false, err
	}
	s := Snapshot{ID: id, Version: version, Data: data}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, s, options.Replace().SetUpsert(true)); err != nil {
		return s, false, err
	}
	return s, true, nil
}

// GetSnapshot returns snapshot id of coll, or ok false when there is none.
func GetSnapshot(ctx context.Context, coll *mongo.Collection, id string) (Snapshot, bool, error) {
	var s Snapshot
	err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&s)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return s, false, nil
	}
	return s, err == nil, err
}
