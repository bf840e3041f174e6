package mongostore

import (
	"context"
	"fmt"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Sequence hands out increasing integer ids. It reserves them from a counter document in
// blocks, so most calls cost no round trip; ids lost with a stopped process leave gaps,
// never duplicates.
type Sequence struct {
	coll  *mongo.Collection
	name  string
	block int64

	mu         sync.Mutex
	next, last int64
}

// NewSequence returns the sequence name stored in coll, reserving block ids at a time.
func NewSequence(coll *mongo.Collection, name string, block int64) *Sequence {
	if block < 1 {
		block = 1
	}
	return &Sequence{coll: coll, name: name, block: block}
}

// Next returns the next id (the first is 1).
func (s *Sequence) Next(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == 0 || s.next > s.last {
		var doc struct {
			N int64 `bson:"n"`
		}
		err := s.coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: s.name}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: s.block}}}},
			options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
		if err != nil {
			return 0, fmt.Errorf("sequence %s: %w", s.name, err)
		}
		s.last = doc.N
		s.next = doc.N - s.block + 1
	}
	id := s.next
	s.next++
	return id, nil
}
