package mongostore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Sequence hands out increasing integer ids. It reserves them from a counter document in
// blocks, so most calls cost no round trip; ids lost with a stopped process leave gaps,
// never duplicates.
//
// MongoDB increments the counter atomically. FerretDB runs the increment as a read and a
// write, so two processes can be handed the same block: each block is therefore also
// claimed with an insert of a claim document ("<name>@<last id>") into the same collection,
// which only one can make, and the loser reserves again. Claims are kept: a process whose
// increment was read long ago writes it late and moves the counter back (SQLite let one
// waiting writer be passed by over 64 others in the test), and its next blocks must still
// find their claims. A claim is one small document per block, written and read by _id only.
// (The same collection: FerretDB on PostgreSQL can hang when processes create one
// collection at the same moment, so nothing here creates any.)
type Sequence struct {
	coll  *mongo.Collection
	name  string
	block int64

	mu         sync.Mutex
	next, last int64
	// ahead: the next block is reserved in the background once half of the current one
	// is handed out (ReserveAhead); spare is that block's last id (0: none yet), reserving
	// is true while it is being reserved.
	ahead     bool
	spare     int64
	reserving bool
}

// NewSequence returns the sequence name stored in coll, reserving block ids at a time.
func NewSequence(coll *mongo.Collection, name string, block int64) *Sequence {
	if block < 1 {
		block = 1
	}
	return &Sequence{coll: coll, name: name, block: block}
}

// ReserveAhead makes s reserve its next block in the background once half of the current
// one is handed out, so that a caller of Next waits for the store only for the first block
// (or when ids are drawn faster than a block is reserved): a booking's create then costs no
// round trip for its id. A stopped process loses up to two blocks of ids (gaps, never
// duplicates). It returns s.
func (s *Sequence) ReserveAhead() *Sequence {
	s.mu.Lock()
	s.ahead = true
	s.mu.Unlock()
	return s
}

// aheadTimeout bounds a background reservation.
const aheadTimeout = 30 * time.Second

// Next returns the next id (the first is 1).
func (s *Sequence) Next(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == 0 || s.next > s.last {
		if s.spare != 0 {
			s.last, s.spare = s.spare, 0
		} else {
			last, err := s.reserve(ctx)
			if err != nil {
				return 0, err
			}
			s.last = last
		}
		s.next = s.last - s.block + 1
	}
	id := s.next
	s.next++
	if s.ahead && s.spare == 0 && !s.reserving && s.last-id <= s.block/2 {
		s.reserving = true
		go s.reserveAhead()
	}
	return id, nil
}

// reserveAhead reserves the spare block; a failure leaves none (Next then reserves one).
func (s *Sequence) reserveAhead() {
	// Not the caller's context: the reservation is no request's work (and no round trip of
	// its tally).
	ctx, cancel := context.WithTimeout(context.Background(), aheadTimeout)
	defer cancel()
	last, err := s.reserve(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserving = false
	if err == nil {
		s.spare = last
	}
}

// reserve reserves the next block of ids and returns its last.
func (s *Sequence) reserve(ctx context.Context) (int64, error) {
	var doc struct {
		N int64 `bson:"n"`
	}
	for {
		err := s.coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: s.name}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: s.block}}}},
			options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
		if IsDuplicate(err) {
			continue // another process created the counter at the same moment: increment it
		}
		if err != nil {
			return 0, fmt.Errorf("sequence %s: %w", s.name, err)
		}
		claimed, err := s.claim(ctx, doc.N)
		if err != nil {
			return 0, err
		}
		if claimed {
			return doc.N, nil
		}
	}
}

// claim makes the block ending at n this process's, or reports that another one has it.
func (s *Sequence) claim(ctx context.Context, n int64) (bool, error) {
	_, err := s.coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("%s@%d", s.name, n)},
		{Key: "seq", Value: s.name}, {Key: "n", Value: n}})
	switch {
	case IsDuplicate(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sequence %s: claim block %d: %w", s.name, n, err)
	}
	return true, nil
}
