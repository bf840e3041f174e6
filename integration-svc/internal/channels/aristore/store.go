// Package aristore keeps ARI out's state in integration-svc's MongoDB database
// (docs/channels.md, "ARI out"): the projection of the property and booking events
// (chan_snaps, chan_holds, chan_holders), the dirty marks (chan_dirty), the values last sent
// (chan_sent); erased accounts are marked in integration-svc's erased_accounts. It implements ari.Projection, ari.Marks
// and ari.Sent.
//
// Every document is addressed by a string _id that begins with its account, and updated
// with a filter on _id (FerretDB scans a collection for any other filter: docs/embedded.md);
// the marks' claim is the one query on other fields, over a collection that holds only the
// properties waiting to be sent.
package aristore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

// Collections.
const (
	SnapsCollection   = "chan_snaps"   // property and settings snapshots, by Kafka key
	HoldsCollection   = "chan_holds"   // per property: the nights each booking and block holds
	HoldersCollection = "chan_holders" // per booking and block: its version and property
	DirtyCollection   = "chan_dirty"   // the dirty marks
	SentCollection    = "chan_sent"    // per connection, property and month: the values sent
	// ErasedCollection is integration-svc's one marker collection of erased accounts,
	// {_id, at}, shared with the webhooks' store (docs/erasure.md).
	ErasedCollection = "erased_accounts"
)

// Store is ARI out's MongoDB side.
type Store struct {
	snaps, holds, holders, dirty, sent, erased *mongo.Collection
	// locks serialize this process's updates of one document (FerretDB applies an update as
	// a read and a write: mongostore.DocLocks).
	locks *mongostore.DocLocks
	// Now is the clock (past nights are pruned from the holds at it).
	Now func() time.Time
}

// Open declares the collections and returns the store.
func Open(ctx context.Context, db *mongo.Database) (*Store, error) {
	cols := append(mongostore.WithLocks(SnapsCollection, HoldersCollection), HoldsCollection, DirtyCollection,
		SentCollection, ErasedCollection)
	// The claim's query: the due marks in claimOrder (MongoDB; FerretDB scans the small
	// collection anyway).
	ix := []mongostore.Index{{Collection: DirtyCollection, Keys: claimOrder}}
	if err := mongostore.Ensure(ctx, db, cols, ix); err != nil {
		return nil, err
	}
	return &Store{snaps: db.Collection(SnapsCollection), holds: db.Collection(HoldsCollection),
		holders: db.Collection(HoldersCollection), dirty: db.Collection(DirtyCollection),
		sent: db.Collection(SentCollection), erased: db.Collection(ErasedCollection),
		locks: mongostore.NewDocLocks(), Now: time.Now}, nil
}

func propKey(account string, property int64) string {
	return account + ":" + strconv.FormatInt(property, 10)
}

func byID(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// KeepProperty implements ari.Projection.
func (s *Store) KeepProperty(ctx context.Context, p contract.Property, data []byte) (bool, error) {
	return s.keep(ctx, propKey(p.AccountID, p.PropertyID), p.Version, data)
}

// KeepSettings implements ari.Projection.
func (s *Store) KeepSettings(ctx context.Context, st contract.Settings, data []byte) (bool, error) {
	return s.keep(ctx, st.AccountID+":settings", st.Version, data)
}

func (s *Store) keep(ctx context.Context, id string, version int64, data []byte) (bool, error) {
	kept, _, err := mongostore.KeepNewer(ctx, s.snaps, id, version, string(data))
	if err != nil {
		return false, err
	}
	return kept.Version == version, nil
}

// holdsDoc is one property's held nights: holder key → entry.
type holdsDoc struct {
	ID string               `bson:"_id"`
	H  map[string]holdEntry `bson:"h"`
}

type holdEntry struct {
	V int64    `bson:"v"`
	N []string `bson:"n"`
}

// holderDoc is the version and property of a booking or block last kept.
type holderDoc struct {
	ID string `bson:"_id"`
	V  int64  `bson:"v"`
	P  int64  `bson:"p"`
}

// KeepHolder implements ari.Projection. Under the holder's lease (one writer per booking or
// block, in every replica): its old property loses its nights when it moved, its property
// gets them, then the holder's version is kept. A stop halfway is redone by the redelivery
// (the holder's version is written last).
func (s *Store) KeepHolder(ctx context.Context, h ari.Holder) ([]int64, error) {
	id := h.Account + ":" + h.Key
	var touched []int64
	err := mongostore.WithLease(ctx, s.holders, id, func() error {
		var cur holderDoc
		err := s.holders.FindOne(ctx, byID(id)).Decode(&cur)
		found := err == nil
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return err
		}
		if found && cur.V > h.Version {
			return nil
		}
		if found && cur.P != h.PropertyID {
			if err := s.setHold(ctx, h.Account, cur.P, h.Key, nil); err != nil {
				return err
			}
			touched = append(touched, cur.P)
		}
		if err := s.setHold(ctx, h.Account, h.PropertyID, h.Key, &holdEntry{V: h.Version, N: h.Nights}); err != nil {
			return err
		}
		touched = append(touched, h.PropertyID)
		_, err = s.holders.ReplaceOne(ctx, byID(id), holderDoc{ID: id, V: h.Version, P: h.PropertyID},
			optionsUpsert())
		return err
	})
	return touched, err
}

// pruneBefore is how far back held nights are kept (a night before it is past everywhere).
const pruneBefore = 3 * 24 * time.Hour

// setHold sets (or, e nil or holding no night from yesterday on, removes) a holder's entry in
// a property's holds.
func (s *Store) setHold(ctx context.Context, account string, property int64, key string, e *holdEntry) error {
	id := propKey(account, property)
	field := "h." + key
	var upd bson.D
	if e != nil {
		cutoff := s.Now().Add(-pruneBefore).UTC().Format(time.DateOnly)
		var keep []string
		for _, n := range e.N {
			if n >= cutoff {
				keep = append(keep, n)
			}
		}
		if len(keep) > 0 {
			upd = bson.D{{Key: "$set", Value: bson.D{{Key: field, Value: holdEntry{V: e.V, N: keep}}}}}
		}
	}
	if upd == nil {
		upd = bson.D{{Key: "$unset", Value: bson.D{{Key: field, Value: ""}}}}
	}
	defer s.locks.Lock(HoldsCollection + "|" + id)()
	_, err := s.holds.UpdateOne(ctx, byID(id), upd, optionsUpsertUpdate())
	if err != nil {
		return fmt.Errorf("holds %s: %w", id, err)
	}
	return nil
}

// Forget implements ari.Projection.
func (s *Store) Forget(ctx context.Context, account, rest string) ([]int64, error) {
	id := account + ":" + rest
	if rest == "settings" {
		_, err := s.snaps.DeleteOne(ctx, byID(id))
		return nil, err
	}
	if p, err := strconv.ParseInt(rest, 10, 64); err == nil {
		_, err := s.snaps.DeleteOne(ctx, byID(id))
		return []int64{p}, err
	}
	var touched []int64
	err := mongostore.WithLease(ctx, s.holders, id, func() error {
		var cur holderDoc
		err := s.holders.FindOne(ctx, byID(id)).Decode(&cur)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.setHold(ctx, account, cur.P, rest, nil); err != nil {
			return err
		}
		touched = append(touched, cur.P)
		_, err = s.holders.DeleteOne(ctx, byID(id))
		return err
	})
	return touched, err
}

// Load implements ari.Projection.
func (s *Store) Load(ctx context.Context, account string, property int64) (ari.State, error) {
	st := ari.State{Settings: contract.DefaultSettings(account), Held: map[string]bool{}}
	snap, ok, err := mongostore.GetSnapshot(ctx, s.snaps, propKey(account, property))
	if err != nil {
		return st, err
	}
	if ok {
		var p contract.Property
		if err := json.Unmarshal([]byte(snap.Data), &p); err != nil {
			return st, fmt.Errorf("property snapshot %s: %w", snap.ID, err)
		}
		st.Property = &p
	}
	snap, ok, err = mongostore.GetSnapshot(ctx, s.snaps, account+":settings")
	if err != nil {
		return st, err
	}
	if ok {
		if err := json.Unmarshal([]byte(snap.Data), &st.Settings); err != nil {
			return st, fmt.Errorf("settings snapshot %s: %w", snap.ID, err)
		}
	}
	var h holdsDoc
	err = s.holds.FindOne(ctx, byID(propKey(account, property))).Decode(&h)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return st, err
	}
	cutoff := s.Now().Add(-pruneBefore).UTC().Format(time.DateOnly)
	for key, e := range h.H {
		past := true
		for _, n := range e.N {
			st.Held[n] = true
			past = past && n < cutoff
		}
		if past {
			// A booking or block whose every night is past: its entry goes, so that a
			// property's holds do not grow with its history.
			if err := s.prunePast(ctx, account, property, key, cutoff); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// prunePast removes a holder's entry from a property's holds if every night of it is before
// cutoff, under the holder's lease (KeepHolder's), so that a newer version written meanwhile
// is never removed.
func (s *Store) prunePast(ctx context.Context, account string, property int64, key, cutoff string) error {
	return mongostore.WithLease(ctx, s.holders, account+":"+key, func() error {
		var h holdsDoc
		err := s.holds.FindOne(ctx, byID(propKey(account, property))).Decode(&h)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return err
		}
		e, ok := h.H[key]
		if !ok {
			return nil
		}
		for _, n := range e.N {
			if n >= cutoff {
				return nil
			}
		}
		return s.setHold(ctx, account, property, key, nil)
	})
}

// Erase implements ari.Projection: the marker first, so that an event applied meanwhile
// sees it and drops what it kept.
func (s *Store) Erase(ctx context.Context, account string) error {
	_, err := s.erased.InsertOne(ctx, bson.D{{Key: "_id", Value: account}, {Key: "at", Value: s.Now().UTC()}})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("mark account erased: %w", err)
	}
	owned := bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}
	for _, c := range []*mongo.Collection{s.snaps, s.holds, s.holders, s.dirty, s.sent} {
		if _, err := c.DeleteMany(ctx, owned); err != nil {
			return fmt.Errorf("erase %s of %s: %w", c.Name(), account, err)
		}
	}
	return nil
}

// Erased implements ari.Projection.
func (s *Store) Erased(ctx context.Context, account string) (bool, error) {
	err := s.erased.FindOne(ctx, byID(account)).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

var (
	_ ari.Projection = (*Store)(nil)
	_ ari.Marks      = (*Store)(nil)
	_ ari.Sent       = (*Store)(nil)
)
