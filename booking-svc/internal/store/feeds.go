package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/mongostore"
)

// collFeedSyncs holds one lease per iCal feed being synced (`_id` "<account>:feed:<feedId>"):
// the sync that holds it, until when, and the blocks it (or a holder before it that stopped)
// touched, so that the next holder repairs their unfinished ledger changes first.
const collFeedSyncs = "ical_syncs"

type feedSyncRec struct {
	ID        string    `bson:"_id"`
	AccountID string    `bson:"account_id"`
	Holder    string    `bson:"holder"`
	Until     time.Time `bson:"until"`
	Blocks    []int64   `bson:"blocks"`
}

func feedSyncID(account string, feed int64) string {
	return account + ":feed:" + strconv.FormatInt(feed, 10)
}

// collFeedTombstones holds one permanent document per deleted iCal feed
// (`_id` "<account>:feed:<feedId>"): a feed id is never synced again once its final sync
// removed its blocks.
const collFeedTombstones = "ical_tombstones"

type feedTombstoneRec struct {
	ID        string    `bson:"_id"`
	AccountID string    `bson:"account_id"`
	FeedID    int64     `bson:"feed_id"`
	At        time.Time `bson:"at"`
}

// BuryFeed records account's feed as deleted for good (insert-once: a duplicate is a
// tombstone recorded before).
func (s *Store) BuryFeed(ctx context.Context, account string, feed int64) error {
	_, err := s.db.Collection(collFeedTombstones).InsertOne(ctx, feedTombstoneRec{ID: feedSyncID(account, feed), AccountID: account, FeedID: feed, At: s.now()})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("tombstone feed %d: %w", feed, err)
	}
	return nil
}

// FeedGone reports whether account's feed has a tombstone.
func (s *Store) FeedGone(ctx context.Context, account string, feed int64) (bool, error) {
	err := s.db.Collection(collFeedTombstones).FindOne(ctx, bson.D{{Key: "_id", Value: feedSyncID(account, feed)}}).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read feed %d's tombstone: %w", feed, err)
	}
	return true, nil
}

// FeedBlocks returns the live blocks of account's property pid (0: of every property)
// imported from feed.
func (s *Store) FeedBlocks(ctx context.Context, account string, pid, feed int64) ([]booking.Block, error) {
	filter := bson.D{{Key: "account_id", Value: account}, {Key: "feed_id", Value: feed}, {Key: "deleted", Value: false}}
	if pid != 0 {
		filter = append(filter, bson.E{Key: "property_id", Value: pid})
	}
	cur, err := s.blocks.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "block_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read feed %d's blocks: %w", feed, err)
	}
	var recs []BlockRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read feed %d's blocks: %w", feed, err)
	}
	out := make([]booking.Block, len(recs))
	for i, r := range recs {
		out[i] = blockOf(r)
	}
	return out, nil
}

// MoveBlock gives a live block new dates (a new version, published as vros.block.updated);
// the caller has claimed the nights it gains and releases those it loses after.
func (s *Store) MoveBlock(ctx context.Context, account string, id int64, start, end string) (booking.Block, error) {
	return s.changeBlock(ctx, account, id, "move", bson.D{{Key: "deleted", Value: false}},
		bson.D{{Key: "start_date", Value: start}, {Key: "end_date", Value: end}})
}

// TakeFeedLease makes holder the only sync of account's feed until until: it inserts the
// lease, or takes over one whose holder's time is up (a sync that stopped). It answers the
// blocks the earlier holders touched without finishing (to repair), or booking.ErrBusy while
// another sync holds the lease.
//
// Only the insert is one write; every other write of the lease (a takeover, a note, the end)
// reads it, changes it and writes it back by _id alone under the document's lease
// (mongostore.WithLease), so that none is interleaved with another: a conditional update
// would not do, since FerretDB applies it as a read then a whole-document write, so that two
// syncs could both take an expired lease over, or a note undo a takeover. The stopped
// holder's notes stay in the lease until its taker finishes, so that a taker that stops
// too leaves them to the next one.
func (s *Store) TakeFeedLease(ctx context.Context, account string, feed int64, holder string, until time.Time) ([]int64, error) {
	id := feedSyncID(account, feed)
	coll := s.db.Collection(collFeedSyncs)
	fresh := feedSyncRec{ID: id, AccountID: account, Holder: holder, Until: until, Blocks: []int64{}}
	_, err := coll.InsertOne(ctx, fresh)
	if err == nil {
		return nil, nil
	}
	if !mongostore.IsDuplicate(err) {
		return nil, fmt.Errorf("take feed %d's lease: %w", feed, err)
	}
	var left []int64
	took := false
	err = mongostore.WithLease(ctx, coll, id, func() error {
		prev, ok, err := s.feedLease(ctx, id)
		switch {
		case err != nil:
			return err
		case !ok: // given up meanwhile
			if _, err := coll.InsertOne(ctx, fresh); err != nil {
				if mongostore.IsDuplicate(err) {
					return nil
				}
				return err
			}
			took = true
			return nil
		case !prev.Until.Before(s.now()):
			return nil // its holder's time is not up
		}
		taken := fresh
		taken.Blocks = append([]int64{}, prev.Blocks...)
		if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, taken); err != nil {
			return err
		}
		left, took = prev.Blocks, true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take feed %d's lease: %w", feed, err)
	}
	if !took {
		return nil, booking.ErrBusy
	}
	return left, nil
}

// feedLease reads lease id.
func (s *Store) feedLease(ctx context.Context, id string) (feedSyncRec, bool, error) {
	var r feedSyncRec
	err := s.db.Collection(collFeedSyncs).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return r, false, nil
	}
	return r, err == nil, err
}

// changeFeedLease runs change on holder's lease of account's feed under the document's lease
// and writes it back by _id (deletes it when change answers false); booking.ErrBusy when the
// lease is not holder's.
func (s *Store) changeFeedLease(ctx context.Context, account string, feed int64, holder string, change func(*feedSyncRec) bool) error {
	id := feedSyncID(account, feed)
	coll := s.db.Collection(collFeedSyncs)
	return mongostore.WithLease(ctx, coll, id, func() error {
		r, ok, err := s.feedLease(ctx, id)
		if err != nil {
			return err
		}
		if !ok || r.Holder != holder {
			return booking.ErrBusy
		}
		if !change(&r) {
			_, err = coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
			return err
		}
		_, err = coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, r)
		return err
	})
}

// NoteFeedBlock records, before holder's sync touches blocks ids, that it does: a stop after
// that leaves the blocks' repair to the next holder.
func (s *Store) NoteFeedBlock(ctx context.Context, account string, feed int64, holder string, ids ...int64) error {
	err := s.changeFeedLease(ctx, account, feed, holder, func(r *feedSyncRec) bool {
		for _, id := range ids {
			if !slices.Contains(r.Blocks, id) {
				r.Blocks = append(r.Blocks, id)
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("note blocks %v of feed %d: %w", ids, feed, err)
	}
	return nil
}

// EndFeedLease gives holder's lease up: removed when its sync finished everything it began
// (done), else left with its blocks to expire StoppedFeedLease (a second) from now (a write
// the stopped sync sent may still land meanwhile), for the next sync to repair. A lease no
// longer holder's is left alone.
func (s *Store) EndFeedLease(ctx context.Context, account string, feed int64, holder string, done bool) error {
	err := s.changeFeedLease(ctx, account, feed, holder, func(r *feedSyncRec) bool {
		r.Until = s.now().Add(s.StoppedFeedLease)
		return !done
	})
	if err != nil && !errors.Is(err, booking.ErrBusy) {
		return fmt.Errorf("end feed %d's lease: %w", feed, err)
	}
	return nil
}
