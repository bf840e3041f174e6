// Package outbox makes sure that every successful write's change event reaches Kafka, even
// when Kafka is down at the time, without multi-document transactions.
//
// A write first records an intent (its own document, `_id` "<aggregate>|<nonce>"), then
// changes the aggregate in one single-document update, then tells the relay. The relay
// loads the aggregate's current snapshot, publishes it and only then deletes the intents it
// covered. Because events are full snapshots with a version, publishing the current state
// covers every write that finished before it was read. An intent whose writer crashed or
// whose publish failed stays, and the sweep picks it up once it is older than the lease.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"

	"github.com/vros/vros/libs/events"
)

// Collection is the name of the intents collection in each service's database.
const Collection = "outbox"

// Loader returns the messages that describe the current state of aggregate.
type Loader func(ctx context.Context, aggregate string) ([]events.Message, error)

// Publisher is where the relay writes (events.Publisher in production).
type Publisher interface {
	Publish(ctx context.Context, msgs ...events.Message) error
}

// Options tune the relay.
type Options struct {
	// Lease is how long an intent belongs to its writer before the sweep takes it over.
	Lease time.Duration
	// Sweep is how often intents left behind are looked for.
	Sweep time.Duration
	Meter metric.Meter
	Log   *slog.Logger
	// Propagator captures the writer's trace context into the intent.
	Propagator propagation.TextMapPropagator
}

// Outbox records intents and relays them.
type Outbox struct {
	coll *mongo.Collection
	pub  Publisher
	load Loader
	opt  Options

	wake    chan struct{}
	mu      sync.Mutex
	pending map[string]*pendingAgg
	backlog metric.Int64UpDownCounter
}

type intentDoc struct {
	ID        string            `bson:"_id"`
	Aggregate string            `bson:"aggregate"`
	At        time.Time         `bson:"at"`
	Trace     map[string]string `bson:"trace,omitempty"`
}

// Intent is a recorded intent to change one aggregate.
type Intent struct {
	id, aggregate string
	trace         map[string]string
}

// Snapshot is the state a write produced, as the messages that describe it.
type Snapshot struct {
	Version  int64
	Messages []events.Message
}

// pendingAgg is what the relay has to publish for one aggregate.
type pendingAgg struct {
	ids   []string
	trace map[string]string // of the latest write, carried in the Kafka headers
	// snap is the newest snapshot handed over by the writers; it covers every intent only
	// if each came with one (load is false), otherwise the relay reads the aggregate.
	snap *Snapshot
	load bool
}

// New returns an outbox over db's intents collection.
func New(db *mongo.Database, pub Publisher, load Loader, opt Options) *Outbox {
	if opt.Lease == 0 {
		opt.Lease = 10 * time.Second
	}
	if opt.Sweep == 0 {
		opt.Sweep = 2 * time.Second
	}
	o := &Outbox{coll: db.Collection(Collection), pub: pub, load: load, opt: opt,
		wake: make(chan struct{}, 1), pending: map[string]*pendingAgg{}}
	if opt.Meter != nil {
		o.backlog, _ = opt.Meter.Int64UpDownCounter("vros.outbox.backlog",
			metric.WithDescription("Change events recorded but not yet acknowledged by Kafka."))
	}
	return o
}

// Begin records the intent to change aggregate. Call it before the state write.
func (o *Outbox) Begin(ctx context.Context, aggregate string) (Intent, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	in := Intent{id: aggregate + "|" + hex.EncodeToString(b[:]), aggregate: aggregate}
	doc := intentDoc{ID: in.id, Aggregate: aggregate, At: time.Now().UTC()}
	if o.opt.Propagator != nil {
		doc.Trace = events.TraceOf(ctx, o.opt.Propagator)
		in.trace = doc.Trace
	}
	if _, err := o.coll.InsertOne(ctx, doc); err != nil {
		return Intent{}, fmt.Errorf("outbox intent: %w", err)
	}
	o.count(ctx, 1)
	return in, nil
}

// Done hands a finished write to the relay. Call it after the state write, whether or not
// it succeeded: a failed write is published as the unchanged state, which is harmless.
// snap, when the writer has it, is the state its write produced; the relay then publishes
// it without reading the aggregate again.
func (o *Outbox) Done(in Intent, snap *Snapshot) {
	o.add(in.aggregate, []string{in.id}, in.trace, snap)
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Run relays until ctx ends.
func (o *Outbox) Run(ctx context.Context) error {
	sweep := time.NewTicker(o.opt.Sweep)
	defer sweep.Stop()
	backoff := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-o.wake:
		case <-sweep.C:
			if err := o.sweep(ctx); err != nil {
				o.logWarn(ctx, "outbox sweep failed", err)
			}
		}
		if err := o.flush(ctx); err != nil {
			o.logWarn(ctx, "outbox relay failed; will retry", err)
			backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			select { // retry promptly, without waiting for the next sweep
			case o.wake <- struct{}{}:
			default:
			}
			continue
		}
		backoff = 0
	}
}

// drain publishes what is pending, for a graceful shutdown.
func (o *Outbox) drain(ctx context.Context) error { return o.flush(ctx) }

// sweep adopts intents older than the lease: their writer crashed or their publish failed.
func (o *Outbox) sweep(ctx context.Context) error {
	cur, err := o.coll.Find(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: time.Now().UTC().Add(-o.opt.Lease)}}}},
		options.Find().SetLimit(1000))
	if err != nil {
		return err
	}
	var docs []intentDoc
	if err := cur.All(ctx, &docs); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	for _, d := range docs {
		o.add(d.Aggregate, []string{d.ID}, d.Trace, nil)
	}
	return nil
}

// add marks intents of agg as ready to relay, once each.
func (o *Outbox) add(agg string, ids []string, trace map[string]string, snap *Snapshot) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.pending[agg]
	if p == nil {
		p = &pendingAgg{}
		o.pending[agg] = p
	}
	if trace != nil {
		p.trace = trace
	}
	switch {
	case snap == nil:
		p.load = true
	case p.snap == nil || snap.Version > p.snap.Version:
		p.snap = snap
	}
next:
	for _, id := range ids {
		for _, x := range p.ids {
			if x == id {
				continue next
			}
		}
		p.ids = append(p.ids, id)
	}
}

// flush publishes the current snapshot of every pending aggregate, then deletes the
// intents that snapshot covers. Aggregates that fail stay pending.
func (o *Outbox) flush(ctx context.Context) error {
	o.mu.Lock()
	batch := o.pending
	o.pending = map[string]*pendingAgg{}
	o.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}

	var msgs []events.Message
	var done []string
	var failed error
	for agg, p := range batch {
		var m []events.Message
		if p.load || p.snap == nil {
			var err error
			if m, err = o.load(ctx, agg); err != nil {
				failed = fmt.Errorf("load %s: %w", agg, err)
				o.requeue(agg, p)
				continue
			}
		} else {
			m = slices.Clone(p.snap.Messages)
		}
		for i := range m {
			if m[i].Trace == nil {
				m[i].Trace = p.trace
			}
		}
		msgs = append(msgs, m...)
		done = append(done, p.ids...)
	}
	if len(msgs) > 0 {
		if err := o.pub.Publish(ctx, msgs...); err != nil {
			for agg, p := range batch {
				o.requeue(agg, p)
			}
			return fmt.Errorf("publish: %w", err)
		}
	}
	if len(done) > 0 {
		if _, err := o.coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: done}}}}); err != nil {
			// Published but not forgotten: the sweep publishes again, which consumers ignore
			// by version.
			return fmt.Errorf("delete intents: %w", err)
		}
		o.count(ctx, -int64(len(done)))
	}
	return failed
}

// requeue puts back what a failed flush took.
func (o *Outbox) requeue(agg string, p *pendingAgg) {
	if p.load || p.snap == nil {
		o.add(agg, p.ids, p.trace, nil)
	} else {
		o.add(agg, p.ids, p.trace, p.snap)
	}
}

func (o *Outbox) count(ctx context.Context, n int64) {
	if o.backlog != nil {
		o.backlog.Add(ctx, n)
	}
}

func (o *Outbox) logWarn(ctx context.Context, msg string, err error) {
	if o.opt.Log != nil {
		o.opt.Log.WarnContext(ctx, msg, "err", err)
	}
}

// Serve runs the relay beside serve (the service's HTTP server) until serve returns; then,
// with every request answered, it gives the relay up to grace to publish what is pending.
// What it cannot publish stays in MongoDB for the next start.
func (o *Outbox) Serve(serve func() error, grace time.Duration) error {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = o.Run(ctx) }()
	err := serve()
	stop()
	<-done
	dctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if derr := o.drain(dctx); derr != nil {
		o.logWarn(dctx, "outbox not drained at shutdown; the next start publishes it", derr)
	}
	return err
}
