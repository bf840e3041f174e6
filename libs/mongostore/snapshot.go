package mongostore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Snapshot is a consumer's stored copy of an aggregate: the data of its newest event.
type Snapshot struct {
	ID      string `bson:"_id"`
	Version int64  `bson:"version"`
	Data    string `bson:"data"`
}

// SnapshotLease bounds how long a writer that stopped halfway (a crash between taking a
// snapshot's lease and letting it go) keeps other writers of that snapshot waiting.
const SnapshotLease = 10 * time.Second

// KeepNewer stores data as snapshot id at version unless coll already holds that version or
// a newer one, so redelivered and reordered events change nothing. It returns the snapshot
// coll holds afterwards and whether it is the one given.
//
// Replicas of a consumer apply the same events each at its own pace into one database, so
// versions 2 and 1 of a snapshot can arrive at the same moment. A snapshot not stored yet is
// inserted: an insert by _id is atomic, it fails rather than overwrite one that another writer
// stored meanwhile, and it takes one operation (most events of a view's catch-up are new
// keys — every booking's first). A stored snapshot is replaced only by a writer holding its
// lease (WithLease), which reads it again and replaces it by _id alone if its own is newer;
// one that vanished meanwhile (a tombstone, an erasure) is inserted again, as an upsert would,
// and one inserted meanwhile is compared again.
// The version is not a condition of the replace: MongoDB would apply one atomically, but
// FerretDB applies it as a read and a write anyway, and on SQLite (the embedded store) any
// filter beyond a lone _id reads and decodes every document of the collection, so each
// event scanned every snapshot ever kept. A writer that finds half its lease gone before it
// writes gives up (the consumer retries), so that it cannot write after its lease ran out and
// passed to a newer version's writer. Nothing is written, and no lease taken, when a version
// at least as new is already stored. Declare coll with WithLocks.
func KeepNewer(ctx context.Context, coll *mongo.Collection, id string, version int64, data string) (Snapshot, bool, error) {
	cur, ok, err := GetSnapshot(ctx, coll, id)
	if err != nil || (ok && cur.Version >= version) {
		return cur, false, err
	}
	s := Snapshot{ID: id, Version: version, Data: data}
	if !ok {
		_, err := coll.InsertOne(ctx, s)
		switch {
		case err == nil:
			return s, true, nil
		case !IsDuplicate(err):
			return cur, false, fmt.Errorf("store snapshot %s v%d: %w", id, version, err)
		}
		// Another writer stored it meanwhile: compare under the lease.
	}
	kept := false
	err = WithLease(ctx, coll, id, func() error {
		taken := time.Now()
		// Writers without the lease only insert, so the snapshot can appear (an insert) or
		// vanish (a tombstone, an erasure) under this writer's feet, never change: it reads
		// again and retries the write that fits, a few times.
		for range 5 {
			if cur, ok, err = GetSnapshot(ctx, coll, id); err != nil || (ok && cur.Version >= version) {
				return err
			}
			if time.Since(taken) > SnapshotLease/2 {
				return fmt.Errorf("store snapshot %s v%d: the lease is running out", id, version)
			}
			if ok {
				res, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, s)
				if err != nil {
					return fmt.Errorf("store snapshot %s v%d: %w", id, version, err)
				}
				if kept = res.MatchedCount == 1; kept {
					return nil
				}
				continue // removed meanwhile: stored again, as an upsert would
			}
			_, err := coll.InsertOne(ctx, s)
			if kept = err == nil; kept {
				return nil
			}
			if !IsDuplicate(err) {
				return fmt.Errorf("store snapshot %s v%d: %w", id, version, err)
			}
			// Inserted meanwhile by a writer without the lease: compare again.
		}
		return fmt.Errorf("store snapshot %s v%d: it kept appearing and vanishing", id, version)
	})
	if !kept {
		return cur, false, err
	}
	return s, true, nil
}

// KeepNewerFresh is KeepNewer for a caller that holds no version of id itself (its view has
// none in memory): the insert is tried first, without reading, which takes one operation for
// a snapshot not stored yet; one stored already (by another replica, or before a restart)
// fails the insert and goes through KeepNewer.
func KeepNewerFresh(ctx context.Context, coll *mongo.Collection, id string, version int64, data string) (Snapshot, bool, error) {
	s := Snapshot{ID: id, Version: version, Data: data}
	_, err := coll.InsertOne(ctx, s)
	switch {
	case err == nil:
		return s, true, nil
	case !IsDuplicate(err):
		return Snapshot{}, false, fmt.Errorf("store snapshot %s v%d: %w", id, version, err)
	}
	return KeepNewer(ctx, coll, id, version, data)
}

const locksSuffix = "_locks"

// WithLocks returns the snapshot collections names with the lease collections KeepNewer
// uses beside them, for Ensure to create at start-up: FerretDB on PostgreSQL can hang when
// replicas create one collection at the same moment on their first writes.
func WithLocks(names ...string) []string {
	out := slices.Clone(names)
	for _, n := range names {
		out = append(out, n+locksSuffix)
	}
	return out
}

// ReplaceIf replaces document id of coll with doc if it still matches cond (a claim as it was
// read), and reports whether it did. MongoDB applies the conditional replace atomically;
// FerretDB reads and then writes, so ReplaceIf holds the document's lease meanwhile
// (WithLease): of two writers taking over one document they read alike, exactly one
// succeeds. Declare coll with WithLocks.
func ReplaceIf(ctx context.Context, coll *mongo.Collection, id string, cond bson.D, doc any) (bool, error) {
	var took bool
	err := WithLease(ctx, coll, id, func() error {
		res, err := coll.ReplaceOne(ctx, append(bson.D{{Key: "_id", Value: id}}, cond...), doc)
		if err != nil {
			return fmt.Errorf("replace %s: %w", id, err)
		}
		took = res.MatchedCount == 1
		return nil
	})
	return took, err
}

// WithLease runs fn holding the lease on document id of coll, the one KeepNewer and ReplaceIf
// take: a read-modify-write of the document inside fn is not interleaved with another
// writer's that takes the lease too, in this process or in another replica. MongoDB applies
// one update atomically, but not a read followed by a write, and FerretDB applies even one
// update as a read and a write of the whole document, so writers of one document that
// change different fields of it lose each other's writes without it. Declare coll with
// WithLocks.
func WithLease(ctx context.Context, coll *mongo.Collection, id string, fn func() error) error {
	release, err := lease(ctx, coll.Database().Collection(coll.Name()+locksSuffix), id)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// GetSnapshot returns snapshot id of coll, or ok false when there is none.
func GetSnapshot(ctx context.Context, coll *mongo.Collection, id string) (Snapshot, bool, error) {
	var s Snapshot
	err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&s)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return s, false, nil
	case err != nil:
		return s, false, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	return s, true, nil
}

// leaseDoc is a writer's exclusive hold on one snapshot.
type leaseDoc struct {
	ID    string    `bson:"_id"`
	Token string    `bson:"token"`
	Until time.Time `bson:"until"`
}

// lease takes the lease on id in locks, waiting while another writer holds it, and returns
// its release. A lease past its end (its writer stopped) is taken over.
func lease(ctx context.Context, locks *mongo.Collection, id string) (release func(), err error) {
	token := rand.Text()
	wait := 2 * time.Millisecond
	for {
		_, err := locks.InsertOne(ctx, leaseDoc{ID: id, Token: token, Until: time.Now().Add(SnapshotLease)})
		if err == nil {
			return func() {
				// Released even when ctx ended: the lease would otherwise hold others up
				// until it runs out.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_, _ = locks.DeleteOne(rctx, bson.D{{Key: "_id", Value: id}, {Key: "token", Value: token}})
			}, nil
		}
		if !IsDuplicate(err) {
			return nil, fmt.Errorf("lease snapshot %s: %w", id, err)
		}
		var held leaseDoc
		if err := locks.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&held); err == nil && time.Now().After(held.Until) {
			_, _ = locks.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "token", Value: held.Token}})
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lease snapshot %s: %w", id, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
