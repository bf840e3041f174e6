// Package kept keeps catalog-svc's answers at edge and serves them again without asking the
// catalog, for as long as nothing they were computed from can have changed
// (docs/catalog.md, "Answers kept at edge"): a website asks the same searches and property
// pages far more often than its account changes, and an answer edge sends itself costs the
// client's round trip alone instead of two.
//
// Feed reads the catalog's topics (their keys only) to hear every change of every account;
// Store holds the answers and drops an account's as soon as the Feed hears a change the
// answer does not hold.
package kept

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
)

// Tick is how often a Feed asks the broker where the partitions end; a Feed is live while
// it has read, at each tick, every message that was in the partitions at the tick before.
const Tick = 250 * time.Millisecond

// liveFor is how long a Feed stays live after a tick found it caught up: past it, with no
// tick since (the broker unreachable, the reading behind), edge answers nothing kept.
const liveFor = 3 * Tick

// Feed hears the messages of the topics catalog-svc reads, from the moment it starts, and
// tells Heard the account (the key's first part) and position of each. Safe for concurrent
// use.
type Feed struct {
	brokers []string
	topics  []string
	// Heard is told every message heard; set before Run.
	Heard func(account string, p events.Partition, offset int64)
	// Now is the clock (tests).
	Now func() time.Time

	mu sync.Mutex
	// start holds, for each partition read, the offset of the last message before the
	// Feed's start (-1: none): the catalog must have applied it before any answer of its is
	// kept, since the Feed never hears it.
	start events.Positions
	// next is, per partition, the offset of the next message to read.
	next map[events.Partition]*atomic.Int64
	// ends are the partitions' ends at the last tick.
	ends events.Positions

	liveUntil atomic.Int64 // Unix nanoseconds
}

// NewFeed returns the Feed of topics on brokers.
func NewFeed(brokers, topics []string) *Feed {
	return &Feed{brokers: brokers, topics: topics, Now: time.Now, start: events.Positions{},
		next: map[events.Partition]*atomic.Int64{}}
}

// Live reports whether the Feed has heard, lately, everything the partitions held: only then
// may a kept answer be served.
func (f *Feed) Live() bool { return f.Now().UnixNano() < f.liveUntil.Load() }

// Covers reports whether applied (a catalog answer's positions) reaches, on every partition
// the Feed reads, the last message before the Feed's start. A partition it does not read
// yet makes it false.
func (f *Feed) Covers(applied events.Positions) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.start) > 0 && applied.Covers(f.start)
}

// Run reads until ctx ends; warn is told why the Feed is not live when asking the broker
// fails.
func (f *Feed) Run(ctx context.Context, warn func(error)) {
	c := &kafka.Client{Addr: kafka.TCP(f.brokers...), Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(Tick)
	defer t.Stop()
	failing := false
	for n := 0; ; n++ {
		// A partition added to a topic is read from its first message; the partitions are
		// listed again every few seconds.
		err := f.tick(ctx, c, n%40 == 0, &wg)
		if err != nil && ctx.Err() == nil && !failing && warn != nil {
			warn(err)
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick asks where the partitions end; the Feed is live until liveFor from now when it had
// read every partition up to where it ended at the previous tick. list lists the partitions
// first (and starts reading those not read yet).
func (f *Feed) tick(ctx context.Context, c *kafka.Client, list bool, wg *sync.WaitGroup) error {
	if list || len(f.parts()) == 0 {
		parts, err := events.PartitionsOf(ctx, c, f.topics)
		if err != nil {
			return err
		}
		if err := f.begin(ctx, c, parts, wg); err != nil {
			return err
		}
	}
	parts := f.parts()
	ends, err := events.NextOffsets(ctx, c, parts)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	caught := f.ends != nil
	for p, end := range f.ends {
		if nx, ok := f.next[p]; !ok || nx.Load() < end {
			caught = false
		}
	}
	for _, p := range parts {
		if _, ok := ends[p]; !ok {
			caught = false
		}
	}
	f.ends = ends
	if caught {
		f.liveUntil.Store(f.Now().Add(liveFor).UnixNano())
	}
	return nil
}

func (f *Feed) parts() []events.Partition {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]events.Partition, 0, len(f.next))
	for p := range f.next {
		out = append(out, p)
	}
	return out
}

// begin starts reading the partitions not read yet: at their ends when the Feed starts
// (what came before, the catalog must have applied: start), from their first message when
// they are added later.
func (f *Feed) begin(ctx context.Context, c *kafka.Client, parts []events.Partition, wg *sync.WaitGroup) error {
	f.mu.Lock()
	first := len(f.next) == 0
	var fresh []events.Partition
	for _, p := range parts {
		if _, ok := f.next[p]; !ok {
			fresh = append(fresh, p)
		}
	}
	f.mu.Unlock()
	if len(fresh) == 0 {
		return nil
	}
	from := events.Positions{}
	if first {
		var err error
		if from, err = events.NextOffsets(ctx, c, fresh); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range fresh {
		off, ok := from[p]
		if first && !ok {
			return errors.New("the end of " + p.Topic + " was not told")
		}
		next := new(atomic.Int64)
		next.Store(off)
		f.next[p] = next
		f.start[p] = off - 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.read(ctx, p, off, next)
		}()
	}
	return nil
}

// read hears partition p from offset on until ctx ends.
func (f *Feed) read(ctx context.Context, p events.Partition, offset int64, next *atomic.Int64) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: f.brokers, Topic: p.Topic, Partition: p.ID,
		MinBytes: 1, MaxBytes: 4 << 20, MaxWait: Tick, ReadLagInterval: -1,
		ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: time.Second,
	})
	defer func() { _ = r.Close() }()
	if err := r.SetOffset(offset); err != nil {
		return
	}
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// kafka-go's reader reconnects by itself; until it reads again the Feed falls
			// behind the partition's end and is not live.
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		if acc, _, ok := strings.Cut(string(m.Key), ":"); ok && acc != "" && f.Heard != nil {
			f.Heard(acc, p, m.Offset)
		}
		next.Store(m.Offset + 1)
	}
}
