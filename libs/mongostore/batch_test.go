package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/together"
)

// batches records the batches an Inserter writes and can hold the first one in flight.
type batches struct {
	mu    sync.Mutex
	sizes []int // documents per batch, in order
	bytes []int
	held  chan struct{} // closed when the first batch is in flight, held
	go_   chan struct{} // closed to let it go
}

// watch hooks ins; with hold, its first batch waits in flight until release.
func watch(ins *mongostore.Inserter, hold bool) *batches {
	b := &batches{held: make(chan struct{}), go_: make(chan struct{})}
	mongostore.SetInserterHook(ins, func(docs, bytes int) {
		b.mu.Lock()
		b.sizes = append(b.sizes, docs)
		b.bytes = append(b.bytes, bytes)
		first := len(b.sizes) == 1
		b.mu.Unlock()
		if hold && first {
			close(b.held)
			<-b.go_
		}
	})
	if !hold {
		close(b.held)
		close(b.go_)
	}
	return b
}

func (b *batches) release() { close(b.go_) }

func (b *batches) seen() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes...)
}

// behind holds a first batch (one blocker document) in flight, then has n callers queue
// doc(k) behind it, in order, releases the first batch and returns the callers' outcomes: the n
// documents go out in the next batch, together.
func behind(t *testing.T, ins *mongostore.Inserter, b *batches, n int, doc func(k int) any) []error {
	return queueBehind(t, ins, b, n, true, doc)
}

// queueBehind is behind, the callers queued in any order unless inOrder.
func queueBehind(t *testing.T, ins *mongostore.Inserter, b *batches, n int, inOrder bool, doc func(k int) any) []error {
	t.Helper()
	first := make(chan error, 1)
	go func() { first <- ins.Insert(context.Background(), bson.D{{Key: "_id", Value: "blocker"}}) }()
	<-b.held
	out := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() { out[k] = ins.Insert(context.Background(), doc(k)) })
		if inOrder || k == n-1 { // one after the other, so that the batch holds them in this order
			eventually.Holds(t, fmt.Sprintf("%d inserts queued", k+1), 30*time.Second, func() bool { return mongostore.InserterQueued(ins) == k+1 })
		}
	}
	b.release()
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("the first batch: %v", err)
	}
	return out
}

type doc struct {
	ID   string `bson:"_id"`
	Code string `bson:"code"`
	By   int    `bson:"by"`
}

// TestInserterOutcomes: documents queued together go out in one batch, and each caller gets
// its own document's outcome — nil, or a duplicate key error when its `_id` (or another
// unique key) existed before or was taken by an earlier document of the same batch; the
// others of the batch are written regardless.
func TestInserterOutcomes(t *testing.T) {
	const ok, dup, refused = "ok", "duplicate", "refused"
	for _, tc := range []struct {
		name   string
		before []doc
		docs   []any
		want   []string
		stored map[string]int // _id → by (-1: written before)
	}{
		{"new documents", nil,
			[]any{doc{"a", "a", 0}, doc{"b", "b", 1}, doc{"c", "c", 2}}, []string{ok, ok, ok},
			map[string]int{"a": 0, "b": 1, "c": 2}},
		{"an _id that existed", []doc{{"b", "b", -1}},
			[]any{doc{"a", "a", 0}, doc{"b", "b2", 1}, doc{"c", "c", 2}}, []string{ok, dup, ok},
			map[string]int{"a": 0, "b": -1, "c": 2}},
		{"one _id twice in the batch", nil,
			[]any{doc{"a", "a1", 0}, doc{"b", "b", 1}, doc{"a", "a2", 2}}, []string{ok, ok, dup},
			map[string]int{"a": 0, "b": 1}},
		{"a unique code taken before and in the batch", []doc{{"x", "taken", -1}},
			[]any{doc{"a", "taken", 0}, doc{"b", "b", 1}, doc{"c", "b", 2}, doc{"d", "d", 3}}, []string{dup, ok, dup, ok},
			map[string]int{"x": -1, "b": 1, "d": 3}},
		{"every document a duplicate", []doc{{"a", "a", -1}, {"b", "b", -1}},
			[]any{doc{"a", "a2", 0}, doc{"b", "b2", 1}}, []string{dup, dup},
			map[string]int{"a": -1, "b": -1}},
		{"a document the server refuses (an array _id)", nil,
			[]any{doc{"a", "a", 0}, bson.D{{Key: "_id", Value: bson.A{1, 2}}, {Key: "code", Value: "r"}}, doc{"c", "c", 2}},
			[]string{ok, refused, ok}, map[string]int{"a": 0, "c": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			coll := freshUnique(t, "outcomes")
			for _, d := range tc.before {
				if _, err := coll.InsertOne(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			ins := mongostore.NewInserter(coll)
			b := watch(ins, true)
			got := behind(t, ins, b, len(tc.docs), func(k int) any { return tc.docs[k] })
			if s := b.seen(); len(s) != 2 || s[1] != len(tc.docs) {
				t.Errorf("batches %v, want [1 %d]", s, len(tc.docs))
			}
			for k, err := range got {
				switch {
				case tc.want[k] == ok && err != nil:
					t.Errorf("doc %d: %v, want nil", k, err)
				case tc.want[k] == dup && !mongo.IsDuplicateKeyError(err):
					t.Errorf("doc %d: %v, want a duplicate key error", k, err)
				case tc.want[k] == refused && (err == nil || mongo.IsDuplicateKeyError(err)):
					t.Errorf("doc %d: %v, want its own write error", k, err)
				}
			}
			checkStored(t, coll, tc.stored)
		})
	}
}

// freshUnique is a fresh collection with a unique index on code.
func freshUnique(t *testing.T, name string) *mongo.Collection {
	t.Helper()
	coll := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	err := mongostore.Ensure(context.Background(), db, []string{coll},
		[]mongostore.Index{{Collection: coll, Keys: bson.D{{Key: "code", Value: 1}}, Unique: true}})
	if err != nil {
		t.Fatal(err)
	}
	return db.Collection(coll)
}

// checkStored: coll holds exactly want (_id → by), the blocker aside.
func checkStored(t *testing.T, coll *mongo.Collection, want map[string]int) {
	t.Helper()
	cur, err := coll.Find(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$ne", Value: "blocker"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []doc
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, d := range docs {
		got[d.ID] = d.By
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(docs) != len(want) {
		t.Errorf("stored %v (%d documents), want %v", got, len(docs), want)
	}
}

// TestInserterCommandError: when the server refuses the whole command, every caller of the
// batch gets its error, and it is not a duplicate key error.
func TestInserterCommandError(t *testing.T) {
	ins := mongostore.NewInserter(db.Collection("no$such"))
	errs := make([]error, 3)
	together.Run(3, func(k int) {
		errs[k] = ins.Insert(context.Background(), doc{ID: fmt.Sprint(k)})
	})
	for k, err := range errs {
		if err == nil || mongo.IsDuplicateKeyError(err) {
			t.Errorf("caller %d: %v, want the command's error", k, err)
		}
		if k == 0 {
			t.Logf("caller 0: %v", err)
		}
	}
}

// TestInserterIdleSendsAtOnce: a call to an idle Inserter goes out alone, at once, and
// counts one round trip in its caller's tally.
func TestInserterIdleSendsAtOnce(t *testing.T) {
	coll := fresh("idle")
	ins := mongostore.NewInserter(coll)
	b := watch(ins, false)
	for k := range 3 {
		ctx, tally := mongostore.WithTally(context.Background())
		if err := ins.Insert(ctx, doc{ID: fmt.Sprint(k), By: k}); err != nil {
			t.Fatal(err)
		}
		if n := tally.Count(); n != 1 {
			t.Errorf("insert %d: %d round trips counted, want 1", k, n)
		}
	}
	if s := b.seen(); fmt.Sprint(s) != "[1 1 1]" {
		t.Errorf("batches %v, want [1 1 1]", s)
	}
	checkStored(t, coll, map[string]int{"0": 0, "1": 1, "2": 2})
}

// TestInserterConcurrentCallers: 64 goroutines insert 8 documents each, their ids
// overlapping (every id is tried by four callers) and some written before. For every id,
// exactly one caller succeeds if it was new and none if it existed, the others get a
// duplicate key error; every document is written once, by the caller told it succeeded.
func TestInserterConcurrentCallers(t *testing.T) {
	ctx := context.Background()
	coll := fresh("concurrent")
	const callers, each = 64, 8
	const ids = callers * each / 4
	existed := map[string]bool{}
	for k := 0; k < ids; k += 10 {
		id := fmt.Sprintf("id%03d", k)
		existed[id] = true
		if _, err := coll.InsertOne(ctx, doc{ID: id, By: -1}); err != nil {
			t.Fatal(err)
		}
	}
	ins := mongostore.NewInserter(coll)
	b := watch(ins, false)
	type outcome struct {
		by  int
		err error
	}
	var mu sync.Mutex
	got := map[string][]outcome{}
	together.Run(callers, func(c int) {
		for j := range each {
			id := fmt.Sprintf("id%03d", (c*each+j*ids/each*3+j)%ids)
			err := ins.Insert(ctx, doc{ID: id, By: c*each + j})
			mu.Lock()
			got[id] = append(got[id], outcome{c*each + j, err})
			mu.Unlock()
		}
	})
	want := map[string]int{}
	tries := 0
	for id, outs := range got {
		tries += len(outs)
		winners := 0
		for _, o := range outs {
			switch {
			case o.err == nil:
				winners++
				want[id] = o.by
			case !mongo.IsDuplicateKeyError(o.err):
				t.Errorf("%s by %d: %v, want nil or a duplicate key error", id, o.by, o.err)
			}
		}
		if existed[id] {
			want[id] = -1
		}
		if w := map[bool]int{true: 0, false: 1}[existed[id]]; winners != w {
			t.Errorf("%s (existed %v): %d callers succeeded, want %d", id, existed[id], winners, w)
		}
	}
	if tries != callers*each || len(got) != ids {
		t.Fatalf("%d inserts of %d ids, want %d of %d", tries, len(got), callers*each, ids)
	}
	checkStored(t, coll, want)
	t.Logf("%d inserts in %d batches", tries, len(b.seen()))
}

// TestInserterCancelledCaller: a caller whose context ends while its document waits for a
// batch returns at once, and its document is not sent; one whose context ends while its
// batch is in flight returns at once too, and the batch's outcome stands (its document is
// written). The others of both batches are unaffected.
func TestInserterCancelledCaller(t *testing.T) {
	coll := fresh("cancelled")
	ins := mongostore.NewInserter(coll)
	b := watch(ins, true)

	inFlight, cancelInFlight := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- ins.Insert(inFlight, doc{ID: "in-flight"}) }()
	<-b.held

	waiting, cancelWaiting := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() { queued <- ins.Insert(waiting, doc{ID: "gave-up"}) }()
	other := make(chan error, 1)
	go func() { other <- ins.Insert(context.Background(), doc{ID: "other", By: 1}) }()
	eventually.Holds(t, "two inserts queued", 30*time.Second, func() bool { return mongostore.InserterQueued(ins) == 2 })

	cancelInFlight()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("caller cancelled in flight: %v, want context.Canceled", err)
	}
	cancelWaiting()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Errorf("caller cancelled while queued: %v, want context.Canceled", err)
	}
	b.release()
	if err := <-other; err != nil {
		t.Errorf("the other caller: %v", err)
	}
	if s := b.seen(); fmt.Sprint(s) != "[1 1]" {
		t.Errorf("batches %v, want [1 1]: the cancelled waiting document left out", s)
	}
	checkStored(t, coll, map[string]int{"in-flight": 0, "other": 1})

	if err := ins.Insert(waiting, doc{ID: "late"}); !errors.Is(err, context.Canceled) {
		t.Errorf("insert with an ended context: %v, want context.Canceled", err)
	}
}

// TestInserterBatchBounds: a queue longer than a batch's bounds goes out in several
// batches, each within 256 documents and 8 MiB, every document once.
func TestInserterBatchBounds(t *testing.T) {
	t.Run("documents", func(t *testing.T) {
		coll := fresh("bound_docs")
		ins := mongostore.NewInserter(coll)
		b := watch(ins, true)
		errs := queueBehind(t, ins, b, 300, false, func(k int) any { return doc{ID: fmt.Sprintf("%03d", k), By: k} })
		want := map[string]int{}
		for k, err := range errs {
			if err != nil {
				t.Errorf("doc %d: %v", k, err)
			}
			want[fmt.Sprintf("%03d", k)] = k
		}
		if s := b.seen(); fmt.Sprint(s) != "[1 256 44]" {
			t.Errorf("batches %v, want [1 256 44]", s)
		}
		checkStored(t, coll, want)
	})
	t.Run("bytes", func(t *testing.T) {
		coll := fresh("bound_bytes")
		ins := mongostore.NewInserter(coll)
		b := watch(ins, true)
		pad := strings.Repeat("x", 1<<20)
		errs := behind(t, ins, b, 10, func(k int) any {
			return bson.D{{Key: "_id", Value: fmt.Sprint(k)}, {Key: "code", Value: pad}, {Key: "by", Value: k}}
		})
		want := map[string]int{}
		for k, err := range errs {
			if err != nil {
				t.Errorf("doc %d: %v", k, err)
			}
			want[fmt.Sprint(k)] = k
		}
		b.mu.Lock()
		sizes, bytes := b.sizes, b.bytes
		b.mu.Unlock()
		docs := 0
		for k, n := range bytes {
			if n > 8<<20 {
				t.Errorf("batch %d: %d bytes, over 8 MiB", k, n)
			}
			docs += sizes[k]
		}
		if fmt.Sprint(sizes) != "[1 7 3]" || docs != 11 {
			t.Errorf("batches %v, want [1 7 3]", sizes)
		}
		checkStored(t, coll, want)
	})
}
