package store

import (
	"context"
	"errors"
	"fmt"
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

// FeedBlocks returns the live blocks of account's property pid imported from feed.
func (s *Store) FeedBlocks(ctx context.Context, account string, pid, feed int64) ([]booking.Block, error) {
	cur, err := s.blocks.Find(ctx, bson.D{{Key: "account_id", Value: account}, {Key: "property_id", Value: pid},
		{Key: "feed_id", Value: feed}, {Key: "deleted", Value: false}}, options.Find().SetSort(bson.D{{Key: "block_id", Value: 1}}))
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
func (s *Store) TakeFeedLease(ctx context.Context, account string, feed int64, holder string, until time.Time) ([]int64, error) {
	id := feedSyncID(account, feed)
	_, err := s.db.Collection(collFeedSyncs).InsertOne(ctx, feedSyncRec{ID: id, AccountID: account, Holder: holder, Until: until, Blocks: []int64{}})
	if err == nil {
		return nil, nil
	}
	if !mongostore.IsDuplicate(err) {
		return nil, fmt.Errorf("take feed %d's lease: %w", feed, err)
	}
	var prev feedSyncRec
	err = s.db.Collection(collFeedSyncs).FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}, {Key: "until", Value: bson.D{{Key: "$lt", Value: s.now()}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "holder", Value: holder}, {Key: "until", Value: until}}}}).Decode(&prev)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, booking.ErrBusy
	}
	if err != nil {
		return nil, fmt.Errorf("take feed %d's lease: %w", feed, err)
	}
	return prev.Blocks, nil
}

// NoteFeedBlock records, before holder's sync touches block id, that it does: a stop after
// that leaves the block's repair to the next holder.
func (s *Store) NoteFeedBlock(ctx context.Context, account string, feed int64, holder string, id int64) error {
	r, err := s.db.Collection(collFeedSyncs).UpdateOne(ctx, bson.D{{Key: "_id", Value: feedSyncID(account, feed)}, {Key: "holder", Value: holder}},
		bson.D{{Key: "$addToSet", Value: bson.D{{Key: "blocks", Value: id}}}})
	if err != nil {
		return fmt.Errorf("note block %d of feed %d: %w", id, feed, err)
	}
	if r.MatchedCount == 0 {
		return fmt.Errorf("note block %d of feed %d: %w", id, feed, booking.ErrBusy)
	}
	return nil
}

// EndFeedLease gives holder's lease up: removed when its sync finished everything it began
// (done), else left with its blocks to expire a second from now (a write the stopped sync
// sent may still land meanwhile), for the next sync to repair.
func (s *Store) EndFeedLease(ctx context.Context, account string, feed int64, holder string, done bool) error {
	filter := bson.D{{Key: "_id", Value: feedSyncID(account, feed)}, {Key: "holder", Value: holder}}
	var err error
	if done {
		_, err = s.db.Collection(collFeedSyncs).DeleteOne(ctx, filter)
	} else {
		_, err = s.db.Collection(collFeedSyncs).UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "until", Value: s.now().Add(time.Second)}}}})
	}
	if err != nil {
		return fmt.Errorf("end feed %d's lease: %w", feed, err)
	}
	return nil
}
