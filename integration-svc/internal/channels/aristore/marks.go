package aristore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
)

// markDoc is a dirty mark: _id "<account>:<connection>:<property>".
type markDoc struct {
	ID         string    `bson:"_id"`
	Account    string    `bson:"account"`
	Connection int64     `bson:"connection"`
	Property   int64     `bson:"property"`
	Gen        int64     `bson:"gen"`
	Fulls      int64     `bson:"fulls"`
	FullsDone  int64     `bson:"fulls_done"`
	NextAt     time.Time `bson:"next_at"`
	LeaseUntil time.Time `bson:"lease_until"`
	Owner      string    `bson:"owner"`
	Attempts   int       `bson:"attempts"`
	MarkedAt   time.Time `bson:"marked_at"`
}

func (d markDoc) mark() ari.Mark {
	return ari.Mark{Account: d.Account, ConnectionID: d.Connection, PropertyID: d.Property, Generation: d.Gen,
		Full: d.Fulls > d.FullsDone, Fulls: d.Fulls, Attempts: d.Attempts, MarkedAt: d.MarkedAt,
		Owner: d.Owner, LeaseUntil: d.LeaseUntil}
}

func markID(account string, connection, property int64) string {
	return account + ":" + strconv.FormatInt(connection, 10) + ":" + strconv.FormatInt(property, 10)
}

func optionsUpsert() *options.ReplaceOptionsBuilder { return options.Replace().SetUpsert(true) }

func optionsUpsertUpdate() *options.UpdateOneOptionsBuilder {
	return options.UpdateOne().SetUpsert(true)
}

// lockMark serializes this process's updates of one mark.
func (s *Store) lockMark(id string) func() { return s.locks.Lock(DirtyCollection + "|" + id) }

// Mark implements ari.Marks.
func (s *Store) Mark(ctx context.Context, account string, connection, property int64, full, now bool, at time.Time) error {
	id := markID(account, connection, property)
	var fulls int64
	if full {
		fulls = 1
	}
	onInsert := bson.D{{Key: "account", Value: account}, {Key: "connection", Value: connection},
		{Key: "property", Value: property}, {Key: "fulls_done", Value: int64(0)},
		{Key: "lease_until", Value: time.Unix(0, 0).UTC()}, {Key: "owner", Value: ""}, {Key: "attempts", Value: 0}}
	upd := bson.D{{Key: "$inc", Value: bson.D{{Key: "gen", Value: int64(1)}, {Key: "fulls", Value: fulls}}},
		{Key: "$min", Value: bson.D{{Key: "marked_at", Value: at.UTC()}}}}
	if now {
		upd = append(upd, bson.E{Key: "$set", Value: bson.D{{Key: "next_at", Value: at.UTC()}}})
	} else {
		onInsert = append(onInsert, bson.E{Key: "next_at", Value: at.UTC()})
	}
	upd = append(upd, bson.E{Key: "$setOnInsert", Value: onInsert})
	defer s.lockMark(id)()
	if _, err := s.dirty.UpdateOne(ctx, byID(id), upd, optionsUpsertUpdate()); err != nil {
		return fmt.Errorf("mark %s: %w", id, err)
	}
	return nil
}

// claimBatch is how many due marks one claim looks at.
const claimBatch = 8

// claimOrder takes the marks that never asked for a full sync (fulls 0: a booking, a price, a
// restriction) before those that did, each kind oldest first: a change made while a large
// full sync is being sent waits for one push, not for the whole sync (docs/channels.md).
// A mark is deleted once sent, so fulls counts only the full syncs of its present life.
var claimOrder = bson.D{{Key: "fulls", Value: 1}, {Key: "next_at", Value: 1}}

// Claim implements ari.Marks: the due marks in claimOrder, each taken with an update
// conditional on still being due (atomic on MongoDB; serialized in this process by the
// mark's lock on FerretDB, where several replicas are not supported).
func (s *Store) Claim(ctx context.Context, at time.Time, lease time.Duration) (ari.Mark, bool, error) {
	at = at.UTC()
	due := bson.D{{Key: "next_at", Value: bson.D{{Key: "$lte", Value: at}}},
		{Key: "lease_until", Value: bson.D{{Key: "$lte", Value: at}}}}
	cur, err := s.dirty.Find(ctx, due, options.Find().SetSort(claimOrder).
		SetLimit(claimBatch).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return ari.Mark{}, false, fmt.Errorf("due marks: %w", err)
	}
	var ids []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &ids); err != nil {
		return ari.Mark{}, false, fmt.Errorf("due marks: %w", err)
	}
	token := rand.Text()
	for _, c := range ids {
		m, ok, err := s.claim(ctx, c.ID, due, at, lease, token)
		if err != nil || ok {
			return m, ok, err
		}
	}
	return ari.Mark{}, false, nil
}

func (s *Store) claim(ctx context.Context, id string, due bson.D, at time.Time, lease time.Duration, token string) (ari.Mark, bool, error) {
	defer s.lockMark(id)()
	var d markDoc
	err := s.dirty.FindOneAndUpdate(ctx, append(byID(id), due...),
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: at.Add(lease)}, {Key: "owner", Value: token}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ari.Mark{}, false, nil
	}
	if err != nil {
		return ari.Mark{}, false, fmt.Errorf("claim %s: %w", id, err)
	}
	return d.mark(), true, nil
}

func owned(m ari.Mark) bson.D {
	return bson.D{{Key: "_id", Value: markID(m.Account, m.ConnectionID, m.PropertyID)}, {Key: "owner", Value: m.Owner}}
}

// Renew implements ari.Marks.
func (s *Store) Renew(ctx context.Context, m *ari.Mark, until time.Time) error {
	id := markID(m.Account, m.ConnectionID, m.PropertyID)
	defer s.lockMark(id)()
	res, err := s.dirty.UpdateOne(ctx, owned(*m), bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: until.UTC()}}}})
	if err != nil {
		return fmt.Errorf("renew %s: %w", id, err)
	}
	if res.MatchedCount == 0 {
		return ari.ErrLeaseLost
	}
	m.LeaseUntil = until
	return nil
}

// Next implements ari.Marks.
func (s *Store) Next(ctx context.Context, m ari.Mark, fullDone bool) (ari.Mark, bool, error) {
	id := markID(m.Account, m.ConnectionID, m.PropertyID)
	defer s.lockMark(id)()
	res, err := s.dirty.DeleteOne(ctx, append(owned(m), bson.E{Key: "gen", Value: m.Generation}))
	if err != nil {
		return ari.Mark{}, false, fmt.Errorf("done %s: %w", id, err)
	}
	if res.DeletedCount == 1 {
		return ari.Mark{}, true, nil
	}
	upd := bson.D{{Key: "$set", Value: bson.D{{Key: "attempts", Value: 0}}}}
	if fullDone {
		upd = append(upd, bson.E{Key: "$max", Value: bson.D{{Key: "fulls_done", Value: m.Fulls}}})
	}
	var d markDoc
	err = s.dirty.FindOneAndUpdate(ctx, owned(m), upd, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		// Gone (the account erased) or taken over.
		if err := s.dirty.FindOne(ctx, byID(id)).Err(); errors.Is(err, mongo.ErrNoDocuments) {
			return ari.Mark{}, true, nil
		}
		return ari.Mark{}, false, ari.ErrLeaseLost
	}
	if err != nil {
		return ari.Mark{}, false, fmt.Errorf("next %s: %w", id, err)
	}
	return d.mark(), false, nil
}

// Retry implements ari.Marks.
func (s *Store) Retry(ctx context.Context, m ari.Mark, next time.Time) error {
	id := markID(m.Account, m.ConnectionID, m.PropertyID)
	defer s.lockMark(id)()
	res, err := s.dirty.UpdateOne(ctx, owned(m), bson.D{
		{Key: "$set", Value: bson.D{{Key: "next_at", Value: next.UTC()}, {Key: "lease_until", Value: time.Unix(0, 0).UTC()},
			{Key: "owner", Value: ""}}},
		{Key: "$inc", Value: bson.D{{Key: "attempts", Value: 1}}}})
	if err != nil {
		return fmt.Errorf("retry %s: %w", id, err)
	}
	if res.MatchedCount == 0 {
		return ari.ErrLeaseLost
	}
	return nil
}

// Drop implements ari.Marks: the mark is deleted if no newer mark came meanwhile, else let
// go at once (its next claim looks at the connection and mapping again).
func (s *Store) Drop(ctx context.Context, m ari.Mark) error {
	id := markID(m.Account, m.ConnectionID, m.PropertyID)
	defer s.lockMark(id)()
	res, err := s.dirty.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "gen", Value: m.Generation}})
	if err != nil || res.DeletedCount == 1 {
		return err
	}
	_, err = s.dirty.UpdateOne(ctx, owned(m), bson.D{{Key: "$set", Value: bson.D{
		{Key: "lease_until", Value: time.Unix(0, 0).UTC()}, {Key: "owner", Value: ""}}}})
	return err
}

// Pending implements ari.Marks.
func (s *Store) Pending(ctx context.Context) (int64, error) {
	return s.dirty.CountDocuments(ctx, bson.D{})
}
