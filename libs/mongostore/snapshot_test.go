package mongostore_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/testkit/testinfra"
	"github.com/vros/vros/testkit/together"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "mongostore_test", &db, nil) }

// fresh is a collection no earlier run (-count) has written, created with its lease sibling
// before the test writes, as a service's Ensure does at start-up.
func fresh(name string) *mongo.Collection {
	coll := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	if err := mongostore.Ensure(context.Background(), db, mongostore.WithLocks(coll), nil); err != nil {
		panic(err)
	}
	return db.Collection(coll)
}

// TestKeepNewerRules: a newer version replaces, an equal or older one changes nothing — the
// same with KeepNewerFresh, which a caller holding no version uses (it inserts first).
func TestKeepNewerRules(t *testing.T) {
	for name, keep := range map[string]func(context.Context, *mongo.Collection, string, int64, string) (mongostore.Snapshot, bool, error){
		"KeepNewer": mongostore.KeepNewer, "KeepNewerFresh": mongostore.KeepNewerFresh,
	} {
		t.Run(name, func(t *testing.T) { keepNewerRules(t, keep) })
	}
}

func keepNewerRules(t *testing.T, keep func(context.Context, *mongo.Collection, string, int64, string) (mongostore.Snapshot, bool, error)) {
	ctx := context.Background()
	coll := fresh("rules-" + strings.ToLower(t.Name()[len("TestKeepNewerRules/"):]))
	for _, step := range []struct {
		name      string
		version   int64
		stored    bool
		holdsNext int64
	}{
		{"first version seen", 2, true, 2},
		{"redelivered", 2, false, 2},
		{"older, late", 1, false, 2},
		{"newer", 5, true, 5},
	} {
		got, stored, err := keep(ctx, coll, "a", step.version, fmt.Sprintf("v%d", step.version))
		if err != nil {
			t.Fatal(err)
		}
		held, _, err := mongostore.GetSnapshot(ctx, coll, "a")
		if err != nil {
			t.Fatal(err)
		}
		if stored != step.stored || got.Version != step.holdsNext || held.Version != step.holdsNext || held.Data != fmt.Sprintf("v%d", step.holdsNext) {
			t.Errorf("%s (v%d): stored=%v, returned v%d, coll holds v%d %q; want stored=%v, v%d",
				step.name, step.version, stored, got.Version, held.Version, held.Data, step.stored, step.holdsNext)
		}
	}
}

// TestReplicasApplyingConcurrentlyKeepTheNewest: two replicas apply versions 2 and 1 of
// many snapshots at the same moment, half of them over a stored version 0 and half over
// nothing, each through KeepNewer or KeepNewerFresh in turn. Every snapshot ends at version 2.
func TestReplicasApplyingConcurrentlyKeepTheNewest(t *testing.T) {
	ctx := context.Background()
	coll := fresh("replicas")
	const snapshots = 100
	for i := range snapshots {
		id := fmt.Sprintf("p%d", i)
		if i%2 == 1 {
			if _, _, err := mongostore.KeepNewer(ctx, coll, id, 0, "v0"); err != nil {
				t.Fatal(err)
			}
		}
		versions := []int64{2, 1}
		together.Run(len(versions), func(j int) {
			v := versions[j]
			keep := mongostore.KeepNewer
			if (i/2+j)%2 == 0 {
				keep = mongostore.KeepNewerFresh // a replica holding no version inserts first
			}
			if _, _, err := keep(ctx, coll, id, v, fmt.Sprintf("v%d", v)); err != nil {
				t.Error(err)
			}
		})
	}
	wrong := 0
	for i := range snapshots {
		s, _, err := mongostore.GetSnapshot(ctx, coll, fmt.Sprintf("p%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if s.Version != 2 || s.Data != "v2" {
			wrong++
		}
	}
	if wrong > 0 {
		t.Fatalf("%d of %d snapshots ended older than version 2", wrong, snapshots)
	}
}

// TestStoppedWriterHoldsNobodyUp: a lease left by a writer that stopped (its end passed) is
// taken over at once, and a writer whose context ended still lets its lease go.
func TestStoppedWriterHoldsNobodyUp(t *testing.T) {
	ctx := context.Background()
	coll := fresh("stopped")
	locks := db.Collection(coll.Name() + "_locks")
	// Stored, so that the next version is a replace, which takes the lease (a snapshot not
	// stored yet is inserted without one).
	if _, stored, err := mongostore.KeepNewer(ctx, coll, "a", 1, "v1"); err != nil || !stored {
		t.Fatalf("first version: stored=%v, %v", stored, err)
	}
	if _, err := locks.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "token", Value: "gone"},
		{Key: "until", Value: time.Now().Add(-time.Second)}}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, stored, err := mongostore.KeepNewer(wctx, coll, "a", 2, "v2"); err != nil || !stored {
		t.Fatalf("over an expired lease: stored=%v, %v", stored, err)
	}
	if n, err := locks.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Fatalf("%d leases left after the write (%v), want 0", n, err)
	}
}

// TestReplaceIfHasOneWinner: twenty writers take over one claim they all read with the same
// owner (a crashed claimer's, say): exactly one replaces it, over many rounds.
func TestReplaceIfHasOneWinner(t *testing.T) {
	ctx := context.Background()
	coll := fresh("claims")
	for round := range 20 {
		id := fmt.Sprintf("c%d", round)
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "owner", Value: -1}}); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int64
		together.Run(20, func(w int) {
			took, err := mongostore.ReplaceIf(ctx, coll, id, bson.D{{Key: "owner", Value: -1}},
				bson.D{{Key: "_id", Value: id}, {Key: "owner", Value: w}})
			if err != nil {
				t.Error(err)
			}
			if took {
				wins.Add(1)
			}
		})
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d writers took the claim over, want 1", round, n)
		}
	}
}

// BenchmarkKeepNewer keeps new versions of one snapshot beside none and beside 5000 others
// (about 2 KB each, a booking's size): the cost should not grow with the others.
// go test -run '^$' -bench KeepNewer ./mongostore/
func BenchmarkKeepNewer(b *testing.B) {
	ctx := context.Background()
	data := strings.Repeat("x", 2000)
	for _, others := range []int{0, 5000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			coll := fresh("bench")
			if others > 0 {
				docs := make([]any, others)
				for i := range docs {
					docs[i] = mongostore.Snapshot{ID: fmt.Sprintf("o%d", i), Version: 1, Data: data}
				}
				if _, err := coll.InsertMany(ctx, docs); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				if _, _, err := mongostore.KeepNewer(ctx, coll, "k", int64(i+1), data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
