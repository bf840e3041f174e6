package mongostore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.opentelemetry.io/otel/trace"
)

// The bounds of one batch of an Inserter: MongoDB's own limit is 100 000 documents and
// 48 MB per message; these keep one batch's latency and memory small.
const (
	batchMaxDocs  = 256
	batchMaxBytes = 8 << 20
	// batchTimeout bounds one batch's write; no caller's deadline applies to it.
	batchTimeout = 30 * time.Second
)

// Inserter inserts documents into one collection, grouping the inserts of concurrent callers
// ("group commit"): a call that arrives while the Inserter is idle is sent at once, alone;
// the calls that arrive while a batch is in flight are sent together in the next one, a
// single unordered InsertMany. When the store admits one writer at a time (FerretDB on
// SQLite) or each write is a transaction (FerretDB on PostgreSQL), n inserts then cost one
// round trip and one commit instead of n. No timer: nothing waits for company.
//
// Each caller gets the outcome of its own document, as InsertOne would give it: nil, or a
// mongo.WriteException holding its write error (mongo.IsDuplicateKeyError is true when its
// `_id`, or another unique key, already existed — also when an earlier document of the same
// batch took it), or the error of the whole command, which every caller of the batch gets.
//
// A batch is written with a context of its own (Detached from the first caller's, and
// batchTimeout). A caller whose ctx ends first returns ctx.Err(); its
// document may still be written, as with an InsertOne that timed out after sending — except
// that a document whose caller has given up before its batch left is not sent.
type Inserter struct {
	coll *mongo.Collection

	mu    sync.Mutex
	busy  bool // a goroutine is writing batches
	queue []*queued
	hook  func(docs, bytes int) // tests: called before each write
}

// queued is one caller's document waiting for its batch.
type queued struct {
	ctx  context.Context
	doc  bson.Raw
	done chan error // receives the outcome, once
}

// NewInserter returns an Inserter into coll.
func NewInserter(coll *mongo.Collection) *Inserter { return &Inserter{coll: coll} }

// Insert inserts doc, within the next batch, and returns its outcome. It counts one store
// round trip in ctx's tally, however many documents share it.
func (i *Inserter) Insert(ctx context.Context, doc any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", i.coll.Name(), err)
	}
	CountOp(ctx)
	q := &queued{ctx: ctx, doc: raw, done: make(chan error, 1)}
	i.mu.Lock()
	i.queue = append(i.queue, q)
	start := !i.busy
	i.busy = true
	i.mu.Unlock()
	if start {
		go i.drain()
	}
	select {
	case err := <-q.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain writes batches until the queue is empty.
func (i *Inserter) drain() {
	for {
		batch := i.next()
		if batch == nil {
			return
		}
		i.write(batch)
	}
}

// next takes the next batch off the queue: the oldest documents, up to the bounds, leaving
// out those whose caller has given up. At least one document goes, however large. Nil when
// the queue is empty; the Inserter is then idle.
func (i *Inserter) next() []*queued {
	i.mu.Lock()
	defer i.mu.Unlock()
	for {
		n, size := 0, 0
		for n < len(i.queue) && n < batchMaxDocs && (n == 0 || size+len(i.queue[n].doc) <= batchMaxBytes) {
			size += len(i.queue[n].doc)
			n++
		}
		if n == 0 {
			i.busy = false
			i.queue = nil
			return nil
		}
		batch := make([]*queued, 0, n)
		for _, q := range i.queue[:n] {
			if q.ctx.Err() == nil {
				batch = append(batch, q)
			}
		}
		clear(i.queue[:n])
		i.queue = i.queue[n:]
		if len(batch) > 0 {
			return batch
		}
	}
}

// write sends batch as one unordered InsertMany and hands each caller its outcome.
func (i *Inserter) write(batch []*queued) {
	docs := make([]any, len(batch))
	size := 0
	for k, q := range batch {
		docs[k] = q.doc
		size += len(q.doc)
	}
	if i.hook != nil {
		i.hook(len(docs), size)
	}
	ctx, cancel := context.WithTimeout(Detached(batch[0].ctx), batchTimeout)
	defer cancel()
	_, err := i.coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	for k, e := range outcomes(err, len(batch)) {
		batch[k].done <- e
	}
}

// Detached is the context of a write made for several callers, first among them: first's
// trace, so that the write's span belongs to a request, but none of its cancellation nor its
// other values — in particular not its tally of store operations: every caller counts the
// round trip it waits for itself (as Insert does), none counts the write.
func Detached(first context.Context) context.Context {
	return trace.ContextWithSpan(context.Background(), trace.SpanFromContext(first))
}

// outcomes splits the error of an InsertMany of n documents into the outcome of each: its
// own write errors (as the mongo.WriteException InsertOne returns), the write concern error
// to all, and any other error — the command's — to all.
func outcomes(err error, n int) []error {
	out := make([]error, n)
	if err == nil {
		return out
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) {
		for k := range out {
			out[k] = err
		}
		return out
	}
	own := make([][]mongo.WriteError, n)
	for _, we := range bwe.WriteErrors {
		if we.Index < 0 || we.Index >= n {
			// Not one of ours: the server's answer cannot be mapped, so nobody's is known.
			for k := range out {
				out[k] = err
			}
			return out
		}
		e := we.WriteError
		e.Index = 0 // its place in a one-document insert, as InsertOne reports it
		own[we.Index] = append(own[we.Index], e)
	}
	for k := range out {
		if own[k] == nil && bwe.WriteConcernError == nil {
			continue
		}
		out[k] = mongo.WriteException{WriteErrors: own[k], WriteConcernError: bwe.WriteConcernError, Labels: bwe.Labels}
	}
	return out
}
