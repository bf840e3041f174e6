// Package store keeps catalog-svc's snapshots in MongoDB (database vros_catalog, one document
// per aggregate through libs/mongostore, `_id` the aggregate's key, which starts with its
// account): the catalog.SnapshotStore the catalog is loaded from at start.
package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/mongostore"
)

// Collections of the store.
const (
	collProperties = "properties"      // _id "<account>:<propertyId>"
	collSettings   = "settings"        // _id "<account>:settings"
	collBookings   = "bookings"        // _id "<account>:booking:<bookingId>"
	collBlocks     = "blocks"          // _id "<account>:block:<blockId>"
	collErased     = "erased_accounts" // _id "<account>", at: the erasure's time; nothing else
)

// collOf is the collection of each kind of snapshot.
var collOf = map[catalog.Kind]string{
	catalog.KindProperty: collProperties,
	catalog.KindSettings: collSettings,
	catalog.KindBooking:  collBookings,
	catalog.KindBlock:    collBlocks,
}

// snapshotColls are the collections holding the accounts' snapshots.
var snapshotColls = []string{collProperties, collSettings, collBookings, collBlocks}

// Store is the catalog's snapshots in a database.
type Store struct {
	colls  map[string]*mongo.Collection
	parked *mongo.Collection // the consumer's parked events (events.ParkedCollection)
}

var _ catalog.SnapshotStore = (*Store)(nil)

// New returns the store in db, creating its collections.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	names := append(mongostore.WithLocks(snapshotColls...), collErased, events.ParkedCollection)
	if err := mongostore.Ensure(ctx, db, names, nil); err != nil {
		return nil, err
	}
	s := &Store{colls: map[string]*mongo.Collection{}, parked: db.Collection(events.ParkedCollection)}
	for _, n := range append(slices.Clone(snapshotColls), collErased) {
		s.colls[n] = db.Collection(n)
	}
	return s, nil
}

// coll is the collection of a kind of snapshot.
func (s *Store) coll(kind catalog.Kind) (*mongo.Collection, error) {
	if c := s.colls[collOf[kind]]; c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("store: no collection for %q", kind)
}

// Erased lists the erased accounts' marks.
func (s *Store) Erased(ctx context.Context) ([]string, error) {
	cur, err := s.colls[collErased].Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store: read erased accounts: %w", err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store: read erased accounts: %w", err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out, nil
}

// Snapshots reads every snapshot, a collection at a time (the only scans: once at start).
func (s *Store) Snapshots(ctx context.Context, fn func(kind catalog.Kind, key string, data []byte) error) error {
	for _, kind := range catalog.Kinds {
		c, err := s.coll(kind)
		if err != nil {
			return err
		}
		cur, err := c.Find(ctx, bson.D{})
		if err != nil {
			return err
		}
		var docs []mongostore.Snapshot
		if err := cur.All(ctx, &docs); err != nil {
			return err
		}
		for _, d := range docs {
			if err := fn(kind, d.ID, []byte(d.Data)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Keep stores a snapshot through mongostore.KeepNewer (KeepNewerFresh when fresh), which
// keeps the newest version of each key whichever replica writes it.
func (s *Store) Keep(ctx context.Context, kind catalog.Kind, key string, version int64, data []byte, fresh bool) ([]byte, error) {
	c, err := s.coll(kind)
	if err != nil {
		return nil, err
	}
	keep := mongostore.KeepNewer
	if fresh {
		keep = mongostore.KeepNewerFresh
	}
	stored, _, err := keep(ctx, c, key, version, string(data))
	if err != nil || stored.Data == "" {
		return nil, err
	}
	return []byte(stored.Data), nil
}

// Remove deletes a snapshot.
func (s *Store) Remove(ctx context.Context, kind catalog.Kind, key string) error {
	c, err := s.coll(kind)
	if err != nil {
		return err
	}
	_, err = c.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
	return err
}

// MarkErased writes the account's erasure mark, which holds nothing but the account's id
// and the time of its first erasure.
func (s *Store) MarkErased(ctx context.Context, acc string, at time.Time) error {
	_, err := s.colls[collErased].UpdateOne(ctx, bson.D{{Key: "_id", Value: acc}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "at", Value: at.UTC()}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil && !mongostore.IsDuplicate(err) { // a duplicate: another replica's upsert won
		return err
	}
	return nil
}

// Purge deletes every stored document of the account: its snapshots, their leases and the
// events of the account the consumer parked (which hold whole snapshots).
func (s *Store) Purge(ctx context.Context, acc string) error {
	own := mongostore.OwnedBy(acc)
	db := s.parked.Database()
	for _, c := range mongostore.WithLocks(snapshotColls...) {
		if _, err := db.Collection(c).DeleteMany(ctx, bson.D{{Key: "_id", Value: own}}); err != nil {
			return fmt.Errorf("store: erase account from %s: %w", c, err)
		}
	}
	if _, err := s.parked.DeleteMany(ctx, bson.D{{Key: "key", Value: own}}); err != nil {
		return fmt.Errorf("store: erase account's parked events: %w", err)
	}
	return nil
}
