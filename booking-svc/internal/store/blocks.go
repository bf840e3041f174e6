package store

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// NextBlockID allocates a block id.
func (s *Store) NextBlockID(ctx context.Context) (int64, error) { return s.blockIDs.Next(ctx) }

// InsertBlock stores a block whose nights are already claimed, and publishes it.
func (s *Store) InsertBlock(ctx context.Context, blk booking.Block) (booking.Block, error) {
	b := blockRec(blk)
	b.Version = 1
	b.CreatedAt = s.now()
	in, err := s.outbox.Begin(ctx, blockAggregate(b.AccountID, b.BlockID))
	if err != nil {
		return blockOf(b), fmt.Errorf("insert block %d: %w", b.BlockID, err)
	}
	if _, err := s.blocks.InsertOne(ctx, b); err != nil {
		s.outbox.Done(in, nil)
		return blockOf(b), fmt.Errorf("insert block %d: %w", b.BlockID, err)
	}
	m, merr := blockMessage(b)
	s.outbox.Done(in, s.snapshot(b.AccountID, b.Version, m, merr))
	return blockOf(b), nil
}

// Block returns a live block of account.
func (s *Store) Block(ctx context.Context, account string, id int64) (booking.Block, error) {
	b, err := s.block(ctx, account, id)
	if err == nil && b.Deleted {
		return blockOf(b), fmt.Errorf("block %d is deleted: %w", id, booking.ErrNotFound)
	}
	return blockOf(b), err
}

func (s *Store) block(ctx context.Context, account string, id int64) (BlockRec, error) {
	var b BlockRec
	err := s.blocks.FindOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}).Decode(&b)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return b, fmt.Errorf("block %d: %w", id, booking.ErrNotFound)
	}
	if err != nil {
		return b, fmt.Errorf("read block %d: %w", id, err)
	}
	return b, nil
}

// DeleteBlock marks a block deleted and publishes it; the caller then frees its nights.
func (s *Store) DeleteBlock(ctx context.Context, account string, id int64) (booking.Block, error) {
	return s.changeBlock(ctx, account, id, "delete", nil, bson.D{{Key: "deleted", Value: true}})
}

// changeBlock sets fields of block id, if it also matches cond, as a new version that the
// outbox publishes; verb names the change in errors.
func (s *Store) changeBlock(ctx context.Context, account string, id int64, verb string, cond, set bson.D) (booking.Block, error) {
	in, err := s.outbox.Begin(ctx, blockAggregate(account, id))
	if err != nil {
		return booking.Block{}, fmt.Errorf("%s block %d: %w", verb, id, err)
	}
	var b BlockRec
	unlock := s.locks.Lock(collBlocks + "/" + docID(account, id))
	err = s.blocks.FindOneAndUpdate(ctx, append(bson.D{{Key: "_id", Value: docID(account, id)}}, cond...),
		bson.D{{Key: "$set", Value: append(set, bson.E{Key: "updated_at", Value: s.now().UTC()})}, {Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&b)
	unlock()
	if err != nil {
		s.outbox.Done(in, nil)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return blockOf(b), fmt.Errorf("block %d: %w", id, booking.ErrNotFound)
		}
		return blockOf(b), fmt.Errorf("%s block %d: %w", verb, id, err)
	}
	m, merr := blockMessage(b)
	s.outbox.Done(in, s.snapshot(b.AccountID, b.Version, m, merr))
	return blockOf(b), nil
}

// blockMessage is a block's event: the record mapped to contract.Block.
func blockMessage(b BlockRec) (events.Message, error) {
	// A block is created (version 1), moved (an imported block following its feed event:
	// every later version while it lives) and deleted.
	typ := BlockCreated
	switch {
	case b.Deleted:
		typ = BlockDeleted
	case b.Version > 1:
		typ = BlockUpdated
	}
	agg := blockAggregate(b.AccountID, b.BlockID)
	// the change's time: consumers order a property's events by it (webhooks' lanes).
	at := b.CreatedAt
	if !b.UpdatedAt.IsZero() {
		at = b.UpdatedAt
	}
	v, err := events.Encode(eventSource, typ, agg, at, contract.Block{AccountID: b.AccountID, BlockID: b.BlockID,
		PropertyID: b.PropertyID, StartDate: b.StartDate, EndDate: b.EndDate, Memo: b.Memo, FeedID: b.FeedID, Deleted: b.Deleted, Version: b.Version,
		CreatedAt: b.CreatedAt.Format("2006-01-02 15:04:05")})
	if err != nil {
		return events.Message{}, fmt.Errorf("block event %s: %w", agg, err)
	}
	return events.Message{Topic: events.TopicBooking, Key: agg, Value: v}, nil
}
