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
	"errors"
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
	"github.com/vros/vros/libs/mongostore"
)

// Collection is the name of the intents collection in each service's database.
const Collection = "outbox"

// Loader returns the messages that describe the current state of aggregate. No messages
// (and no error) means there is nothing to publish for it — say, a booking that was never
// confirmed: the intents are then done. An error wrapping ErrNotReady means the aggregate
// is in a transient state that must not be published yet; the relay asks again later,
// without counting it as a failure.
type Loader func(ctx context.Context, aggregate string) ([]events.Message, error)

// ErrNotReady is wrapped by a Loader's error for an aggregate to publish later.
var ErrNotReady = errors.New("aggregate not ready to publish")

// errUnpublishable marks a message that Kafka could never take (no topic, no value).
var errUnpublishable = errors.New("unpublishable message")

// unclear is a publish failure that may be Kafka's rather than the aggregate's.
type unclear struct{ error }

func (u unclear) Unwrap() error { return u.error }

// outageRetry bounds the delay after a failure that may be an outage, as Run's backoff does.
const outageRetry = 5 * time.Second

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
	// RetryMin and RetryMax bound the delay before an aggregate that failed is tried
	// again; it doubles with each failure in a row (defaults 1s and 5m).
	RetryMin, RetryMax time.Duration
	// ParkAfter is how many failures in a row park an aggregate (default 5).
	ParkAfter int
	Meter     metric.Meter
	Log       *slog.Logger
	// Propagator captures the writer's trace context into the intent.
	Propagator propagation.TextMapPropagator
}

// Outbox records intents and relays them.
type Outbox struct {
	coll *mongo.Collection
	// ins records the intents: the intents of concurrent writes share one insert.
	ins  *mongostore.Inserter
	pub  Publisher
	load Loader
	opt  Options

	wake    chan struct{}
	mu      sync.Mutex
	pending map[string]*pendingAgg
	health  map[string]*aggHealth // aggregates that failed, until they publish
	backlog metric.Int64UpDownCounter
	parked  metric.Int64UpDownCounter
	// lastFull is when the sweep last adopted parked intents too.
	lastFull time.Time
	now      func() time.Time
}

type intentDoc struct {
	ID        string            `bson:"_id"`
	Aggregate string            `bson:"aggregate"`
	At        time.Time         `bson:"at"`
	Trace     map[string]string `bson:"trace,omitempty"`
	// Parked, Error and ParkedAt are set on the intents of a parked aggregate, for whoever
	// looks into the collection; the relay keeps retrying them.
	Parked   bool      `bson:"parked,omitempty"`
	Error    string    `bson:"error,omitempty"`
	ParkedAt time.Time `bson:"parked_at,omitempty"`
}

// aggHealth is the failure record of one aggregate.
type aggHealth struct {
	failures int       // failures in a row
	waits    int       // not-ready answers in a row
	next     time.Time // not tried before
	parked   bool
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
	// held are the writes handed over without an intent (Hand), by their Releaser: once
	// published, their records are released instead of intents deleted.
	held map[Releaser][]string
}

// New returns an outbox over db's intents collection.
func New(db *mongo.Database, pub Publisher, load Loader, opt Options) *Outbox {
	if opt.Lease == 0 {
		opt.Lease = 10 * time.Second
	}
	if opt.Sweep == 0 {
		opt.Sweep = 2 * time.Second
	}
	if opt.RetryMin == 0 {
		opt.RetryMin = time.Second
	}
	if opt.RetryMax == 0 {
		opt.RetryMax = 5 * time.Minute
	}
	if opt.ParkAfter == 0 {
		opt.ParkAfter = 5
	}
	coll := db.Collection(Collection)
	o := &Outbox{coll: coll, ins: mongostore.NewInserter(coll), pub: pub, load: load, opt: opt,
		wake: make(chan struct{}, 1), pending: map[string]*pendingAgg{}, health: map[string]*aggHealth{}, now: time.Now}
	if opt.Meter != nil {
		o.backlog, _ = opt.Meter.Int64UpDownCounter("vros.outbox.backlog",
			metric.WithDescription("Change events recorded but not yet acknowledged by Kafka."))
		o.parked, _ = opt.Meter.Int64UpDownCounter("vros.outbox.parked",
			metric.WithDescription("Aggregates whose change events could not be published after repeated tries (logged; retried)."))
		// Exported at 0 from the start (an alert on parked aggregates has a series).
		if o.backlog != nil {
			o.backlog.Add(context.Background(), 0)
		}
		if o.parked != nil {
			o.parked.Add(context.Background(), 0)
		}
		age, err := opt.Meter.Float64ObservableGauge("vros.outbox.oldest_pending_age", metric.WithUnit("s"),
			metric.WithDescription("Age of the oldest change event not yet published (parked ones aside; 0 when none), read from the intents at each scrape."))
		if err == nil {
			_, _ = opt.Meter.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
				if a, ok := o.oldestAge(ctx); ok {
					obs.ObserveFloat64(age, a)
				}
				return nil
			}, age)
		}
	}
	return o
}

// Index is the index of the intents by time that the sweep and the oldest-age gauge read: a service
// declares it with its collections (mongostore.Ensure).
var Index = mongostore.Index{Collection: Collection, Keys: bson.D{{Key: "at", Value: 1}}}

// ageTimeout bounds the query behind the oldest-age gauge, so that a scrape never waits on
// an unreachable store for long (it then has no value).
const ageTimeout = 2 * time.Second

// oldestAge is how long ago the oldest intent that is not parked was recorded, in seconds: 0
// when there is none; ok is false when the store did not answer. One query, along Index.
func (o *Outbox) oldestAge(ctx context.Context) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, ageTimeout)
	defer cancel()
	var doc struct {
		At time.Time `bson:"at"`
	}
	err := o.coll.FindOne(ctx, bson.D{{Key: "parked", Value: bson.D{{Key: "$ne", Value: true}}}},
		options.FindOne().SetSort(bson.D{{Key: "at", Value: 1}}).SetProjection(bson.D{{Key: "at", Value: 1}})).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return 0, true
	case err != nil:
		o.logDebug(ctx, "outbox oldest intent not read", err)
		return 0, false
	}
	return max(o.now().Sub(doc.At).Seconds(), 0), true
}

// Begin records the intent to change aggregate. Call it before the state write. The intents
// of concurrent writers are inserted together (mongostore.Inserter): under load, one insert
// records many. After an error (ctx ended, the store did not answer) the intent may still be
// recorded, as with a single insert that timed out: the sweep then adopts it and publishes
// the unchanged state, which is harmless.
func (o *Outbox) Begin(ctx context.Context, aggregate string) (Intent, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	in := Intent{id: aggregate + "|" + hex.EncodeToString(b[:]), aggregate: aggregate}
	doc := intentDoc{ID: in.id, Aggregate: aggregate, At: time.Now().UTC()}
	if o.opt.Propagator != nil {
		doc.Trace = events.TraceOf(ctx, o.opt.Propagator)
		in.trace = doc.Trace
	}
	if err := o.ins.Insert(ctx, doc); err != nil {
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
	o.add(in.aggregate, []string{in.id}, in.trace, snap, nil)
	o.wakeFor(in.aggregate)
}

// wakeFor wakes the relay for a new write of agg, at once even if agg failed lately: a new
// write may be what repairs it.
func (o *Outbox) wakeFor(agg string) {
	o.mu.Lock()
	if h := o.health[agg]; h != nil {
		h.next = time.Time{}
	}
	o.mu.Unlock()
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
// The intents of parked aggregates are left out, so that they never crowd out the others,
// except once every RetryMax (and at the first sweep, after a restart).
func (o *Outbox) sweep(ctx context.Context) error {
	now := o.now()
	filter := bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: now.UTC().Add(-o.opt.Lease)}}}}
	full := now.Sub(o.lastFull) >= o.opt.RetryMax
	if !full {
		filter = append(filter, bson.E{Key: "parked", Value: bson.D{{Key: "$ne", Value: true}}})
	}
	cur, err := o.coll.Find(ctx, filter, options.Find().SetLimit(1000))
	if err != nil {
		return fmt.Errorf("outbox sweep: %w", err)
	}
	var docs []intentDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("outbox sweep: %w", err)
	}
	if full {
		o.lastFull = now
	}
	for _, d := range docs {
		o.add(d.Aggregate, []string{d.ID}, d.Trace, nil, nil)
	}
	return nil
}

// add marks intents of agg, and writes handed over without one (held, by Releaser), as
// ready to relay, each once: in one step, so that a flush takes them all or none.
func (o *Outbox) add(agg string, ids []string, trace map[string]string, snap *Snapshot, held map[Releaser][]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.pending[agg]
	if p == nil {
		p = &pendingAgg{}
		o.pending[agg] = p
	}
	for rel, keys := range held {
		if p.held == nil {
			p.held = map[Releaser][]string{}
		}
		p.held[rel] = append(p.held[rel], keys...)
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

// ready is one aggregate's messages, about to be published.
type ready struct {
	agg  string
	p    *pendingAgg
	msgs []events.Message
}

// flush publishes the current snapshot of every pending aggregate that is due, then
// deletes the intents that snapshot covers. An aggregate that fails on its own is retried
// later on its own (see aggHealth); flush returns an error only when nothing could be
// published, as when Kafka is down, so that Run backs off.
func (o *Outbox) flush(ctx context.Context) error {
	o.mu.Lock()
	batch := o.pending
	o.pending = map[string]*pendingAgg{}
	o.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}

	now := o.now()
	var todo []ready
	var done []string
	var covered []string // aggregates with nothing (more) to publish
	for agg, p := range batch {
		if h := o.healthOf(agg); h != nil && now.Before(h.next) {
			o.requeue(agg, p)
			continue
		}
		m, err := o.messages(ctx, agg, p)
		if err != nil {
			o.failed(ctx, agg, p, err)
			continue
		}
		if len(m) == 0 {
			done = append(done, p.ids...)
			covered = append(covered, agg)
			continue
		}
		todo = append(todo, ready{agg: agg, p: p, msgs: m})
	}

	var outage error
	if len(todo) > 0 {
		var all []events.Message
		for _, r := range todo {
			all = append(all, r.msgs...)
		}
		if err := o.pub.Publish(ctx, all...); err == nil {
			for _, r := range todo {
				done = append(done, r.p.ids...)
				covered = append(covered, r.agg)
			}
		} else if len(todo) == 1 {
			// Kafka down, or this aggregate refused: nothing tells which. It is retried on its
			// own within 5 s, like after an outage, and not held against it.
			o.failed(ctx, todo[0].agg, todo[0].p, unclear{fmt.Errorf("publish: %w", err)})
		} else {
			// The batch failed: publish aggregate by aggregate, so that one whose messages
			// Kafka refuses cannot hold up the rest.
			var refused []ready
			var errs []error
			ok := 0
			for i, r := range todo {
				if ok == 0 && len(refused) >= 3 {
					// Three refusals and no success: Kafka is unavailable, not these aggregates.
					for _, rest := range todo[i:] {
						o.requeue(rest.agg, rest.p)
					}
					break
				}
				if perr := o.pub.Publish(ctx, r.msgs...); perr != nil {
					refused = append(refused, r)
					errs = append(errs, perr)
					continue
				}
				ok++
				done = append(done, r.p.ids...)
				covered = append(covered, r.agg)
			}
			for i, r := range refused {
				if ok == 0 {
					o.requeue(r.agg, r.p)
					continue
				}
				o.failed(ctx, r.agg, r.p, fmt.Errorf("publish: %w", errs[i]))
			}
			if ok == 0 {
				outage = fmt.Errorf("publish: %w", errors.Join(errs...))
			}
		}
	}
	for _, agg := range covered {
		o.succeeded(ctx, agg)
	}
	o.release(ctx, batch, covered)
	if len(done) > 0 {
		if _, err := o.coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: done}}}}); err != nil {
			// Published but not forgotten: the sweep publishes again, which consumers ignore
			// by version.
			return fmt.Errorf("delete intents: %w", err)
		}
		o.count(ctx, -int64(len(done)))
	}
	return outage
}

// messages returns what to publish for agg: the snapshot handed over, if every intent came
// with one and it is publishable, else the aggregate's current state from the loader.
func (o *Outbox) messages(ctx context.Context, agg string, p *pendingAgg) ([]events.Message, error) {
	if !p.load && p.snap != nil {
		m := slices.Clone(p.snap.Messages)
		if validate(m) == nil {
			o.trace(m, p)
			return m, nil
		}
		// A writer handed over something Kafka cannot take: repair it from the current state.
	}
	m, err := o.load(ctx, agg)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", agg, err)
	}
	if err := validate(m); err != nil {
		return nil, fmt.Errorf("load %s: %w", agg, err)
	}
	o.trace(m, p)
	return m, nil
}

func (o *Outbox) trace(m []events.Message, p *pendingAgg) {
	for i := range m {
		if m[i].Trace == nil {
			m[i].Trace = p.trace
		}
	}
}

// validate refuses messages that no Kafka would accept, and a value that was meant to be a
// tombstone (or a tombstone by mistake: a nil value without Tombstone).
func validate(msgs []events.Message) error {
	for _, m := range msgs {
		if m.Topic == "" || (m.Value == nil) != m.Tombstone {
			return fmt.Errorf("%w: topic %q, key %q, %d bytes", errUnpublishable, m.Topic, m.Key, len(m.Value))
		}
	}
	return nil
}

func (o *Outbox) healthOf(agg string) *aggHealth {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.health[agg]
}

// failed records that agg could not be published this time, puts it back, and parks it
// once it has failed ParkAfter times in a row.
func (o *Outbox) failed(ctx context.Context, agg string, p *pendingAgg, cause error) {
	o.requeue(agg, p)
	o.mu.Lock()
	h := o.health[agg]
	if h == nil {
		h = &aggHealth{}
		o.health[agg] = h
	}
	notReady := errors.Is(cause, ErrNotReady)
	var u unclear
	soft := notReady || errors.As(cause, &u) // not counted towards parking
	var n int
	if soft {
		h.waits++
		n = h.waits
	} else {
		h.failures++
		n = h.failures
	}
	delay := o.opt.RetryMax
	if n < 32 {
		delay = min(o.opt.RetryMin<<(n-1), o.opt.RetryMax)
	}
	if !notReady && soft {
		delay = min(delay, outageRetry)
	}
	h.next = o.now().Add(delay)
	park := !soft && !h.parked && h.failures >= o.opt.ParkAfter
	if park {
		h.parked = true
	}
	parked, failures := h.parked, h.failures
	o.mu.Unlock()

	if parked && !soft {
		// Marked at every failure, so that intents adopted since are marked too.
		_, err := o.coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: p.ids}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "parked", Value: true}, {Key: "error", Value: cause.Error()},
				{Key: "parked_at", Value: o.now().UTC()}}}})
		if err != nil {
			o.logWarn(ctx, "outbox: marking parked intents failed", err)
		}
	}
	switch {
	case park:
		if o.parked != nil {
			o.parked.Add(ctx, 1)
		}
		if o.opt.Log != nil {
			o.opt.Log.ErrorContext(ctx, "outbox aggregate parked: its change events cannot be published; the others go on",
				"aggregate", agg, "failures", failures, "retry_every", o.opt.RetryMax.String(), "err", cause)
		}
	case notReady:
		if o.opt.Log != nil {
			o.opt.Log.DebugContext(ctx, "outbox aggregate not ready; will retry", "aggregate", agg, "retry_in", delay.String(), "err", cause)
		}
	case o.opt.Log != nil:
		o.opt.Log.WarnContext(ctx, "outbox aggregate not published; will retry", "aggregate", agg, "failures", failures,
			"retry_in", delay.String(), "err", cause)
	}
}

// succeeded forgets agg's failures; a parked aggregate is unparked.
func (o *Outbox) succeeded(ctx context.Context, agg string) {
	o.mu.Lock()
	h := o.health[agg]
	delete(o.health, agg)
	o.mu.Unlock()
	if h == nil || !h.parked {
		return
	}
	if o.parked != nil {
		o.parked.Add(ctx, -1)
	}
	if o.opt.Log != nil {
		o.opt.Log.InfoContext(ctx, "outbox aggregate published after being parked", "aggregate", agg)
	}
}

// requeue puts back what a flush took.
func (o *Outbox) requeue(agg string, p *pendingAgg) {
	snap := p.snap
	if p.load {
		snap = nil
	}
	o.add(agg, p.ids, p.trace, snap, p.held)
}

func (o *Outbox) count(ctx context.Context, n int64) {
	if o.backlog != nil {
		o.backlog.Add(ctx, n)
	}
}

func (o *Outbox) logDebug(ctx context.Context, msg string, err error) {
	if o.opt.Log != nil {
		o.opt.Log.DebugContext(ctx, msg, "err", err)
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
