// Package usage counts the requests edge serves, per account, interface and outcome, in
// memory, and flushes the counts into hourly records (docs/usage.md).
package usage

import (
	"context"
	"sync"
	"time"

	"github.com/vros/vros/libs/periodic"
)

// Interface is what a request used: interface A, interface B's actions, its owner-token
// reads, or the public booking API (docs/booking-engine.md).
type Interface int

// Interfaces, as the usage report names them (Interface.String).
const (
	A Interface = iota
	B
	Read
	Engine
	nInterfaces
)

func (i Interface) String() string { return [...]string{"a", "b", "read", "engine"}[i] }

// Outcome is how edge answered a request.
type Outcome int

// Outcomes, as the usage report names them (Outcome.String).
const (
	// OK: a 2xx (or 3xx) answer, and interface B's answers without an application error.
	OK Outcome = iota
	// ClientError: a 4xx answer, and interface B's application errors sent on HTTP 200.
	ClientError
	// ServerError: a 5xx answer (the service failed, was unreachable or timed out).
	ServerError
	// Refused: refused by edge itself once the caller was known: rate limit, concurrency
	// limit, body limit.
	Refused
	nOutcomes
)

func (o Outcome) String() string {
	return [...]string{"ok", "client_error", "server_error", "refused"}[o]
}

// Counts are request counts by interface and outcome.
type Counts [nInterfaces][nOutcomes]int64

// Add adds o's counts to c.
func (c *Counts) Add(o Counts) {
	for i := range c {
		for j := range c[i] {
			c[i][j] += o[i][j]
		}
	}
}

// Map is c as the usage report shows it: {"a": {"ok": n, "client_error": n, …}, "b": …,
// "read": …, "engine": …}, every interface and outcome present.
func (c Counts) Map() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for i := range Interface(nInterfaces) {
		m := map[string]int64{}
		for o := range Outcome(nOutcomes) {
			m[o.String()] = c[i][o]
		}
		out[i.String()] = m
	}
	return out
}

// Bucket is one account's hour (UTC, truncated).
type Bucket struct {
	Account string
	Hour    time.Time
}

// Store keeps the counts.
type Store interface {
	// Add adds c to b's record for replica, exactly once for each (replica, batch): batches
	// of one replica come in increasing order, and a batch already added to b's record is
	// not added again (an Add retried after an error that hid its success).
	Add(ctx context.Context, replica string, batch int64, b Bucket, c Counts) error
	// Requests sums the counts of the account's hours that start within [from, to).
	Requests(ctx context.Context, account string, from, to time.Time) (Counts, error)
}

// Counter counts requests in memory and flushes them to a Store.
type Counter struct {
	store   Store
	replica string
	now     func() time.Time

	mu  sync.Mutex
	cur map[Bucket]*Counts

	// flushing orders flushes; pending (only flushes touch it) holds the batches not yet
	// wholly stored, oldest first: at most one that a flush has tried, and one gathering
	// the counts taken since.
	flushing sync.Mutex
	pending  []*batch
	seq      int64
}

type batch struct {
	seq   int64
	tried bool
	docs  map[Bucket]*Counts
}

// NewCounter returns a Counter flushing to store as replica (an id of this process, unique
// among edge's replicas: each replica's batches are numbered on their own).
func NewCounter(store Store, replica string) *Counter {
	return &Counter{store: store, replica: replica, now: time.Now, cur: map[Bucket]*Counts{}}
}

// Add counts one request of account.
func (c *Counter) Add(account string, i Interface, o Outcome) {
	b := Bucket{Account: account, Hour: c.now().UTC().Truncate(time.Hour)}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.cur[b]
	if n == nil {
		n = &Counts{}
		c.cur[b] = n
	}
	n[i][o]++
}

// Flush stores the counts taken so far. Each record it writes is written once: a failed
// flush keeps what it did not store, as it was, for the next flush, which stores it first
// and under the same batch number (so a write that failed after all is not counted twice).
func (c *Counter) Flush(ctx context.Context) error {
	c.flushing.Lock()
	defer c.flushing.Unlock()
	c.mu.Lock()
	taken := c.cur
	c.cur = map[Bucket]*Counts{}
	c.mu.Unlock()
	if len(taken) > 0 {
		// Counts join a batch no flush has tried yet, else a new one.
		if last := len(c.pending) - 1; last >= 0 && !c.pending[last].tried {
			for b, n := range taken {
				if have := c.pending[last].docs[b]; have != nil {
					have.Add(*n)
				} else {
					c.pending[last].docs[b] = n
				}
			}
		} else {
			c.seq++
			c.pending = append(c.pending, &batch{seq: c.seq, docs: taken})
		}
	}
	for len(c.pending) > 0 {
		bt := c.pending[0]
		bt.tried = true
		for b, n := range bt.docs {
			if err := c.store.Add(ctx, c.replica, bt.seq, b, *n); err != nil {
				return err
			}
			delete(bt.docs, b)
		}
		c.pending = c.pending[1:]
	}
	return nil
}

// Run flushes every interval until ctx ends, reporting failed flushes to onError (their
// counts are kept for the next). The caller flushes once more at shutdown, after the last
// request.
func (c *Counter) Run(ctx context.Context, every time.Duration, onError func(error)) {
	periodic.Run(ctx, every, c.Flush, onError)
}

// FlushInterval is how often edge flushes its counts.
const FlushInterval = 5 * time.Second

// FromMap reads counts in Map's form; names it does not know are left out.
func FromMap(m map[string]map[string]int64) Counts {
	var c Counts
	for i := range Interface(nInterfaces) {
		for o := range Outcome(nOutcomes) {
			c[i][o] = m[i.String()][o.String()]
		}
	}
	return c
}
