package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
)

// Concurrent A1 updates of one property, made as one store update ("group commit").
//
// The updates of one property are serialized (DocLocks: FerretDB would lose one of two
// concurrent updates), so a property changed by many clients at once is bound by one update
// at a time. The updates that arrive while one is made wait together, and the next store
// update makes them all: their fields set in the order they arrived (a later one's value of
// a field replaces an earlier one's, as if made one after the other), the version bumped
// once for each (every write still counts), every intent handed to the relay with the one
// snapshot. A lone update is made at once: nothing waits for company. The relay publishes
// the newest snapshot of a property anyway, so consumers see what they would have seen.
//
// Each caller has recorded its own intent first (outbox.Begin, itself shared with the other
// writers' intents). Its answer comes when the update that holds its fields is stored. A
// caller whose ctx ends first returns ctx.Err(): its fields may still be stored (as when an
// update's answer is lost), unless it gave up before its turn came — then they are not, and
// its intent is handed over unchanged (the relay publishes the current state).

// contentTimeout bounds one combined update; no caller's deadline applies to it.
const contentTimeout = 30 * time.Second

// contentWrites holds the updates waiting, per property and internal code.
type contentWrites struct {
	mu sync.Mutex
	q  map[string]*contentQueue
}

// contentQueue is one property's updates waiting for their turn; it exists while a
// goroutine makes them (drainContent).
type contentQueue struct {
	id, code string
	waiting  []*contentWrite
}

// contentWrite is one caller's update.
type contentWrite struct {
	ctx  context.Context
	in   outbox.Intent
	set  bson.D
	done chan error // receives the outcome, once
}

// updateContent sets the fields set of the live property id whose internal code is code,
// with the concurrent updates of the same property (ErrNotFound if there is none).
func (s *Store) updateContent(ctx context.Context, id, code string, set bson.D) error {
	in, err := s.outbox.Begin(ctx, id)
	if err != nil {
		return fmt.Errorf("record %s in the outbox: %w", PropertyUpdated, err)
	}
	mongostore.CountOp(ctx) // the update it waits for, however many share it
	w := &contentWrite{ctx: ctx, in: in, set: set, done: make(chan error, 1)}
	key := id + "\x00" + code
	s.content.mu.Lock()
	if s.content.q == nil {
		s.content.q = map[string]*contentQueue{}
	}
	q := s.content.q[key]
	start := q == nil
	if start {
		q = &contentQueue{id: id, code: code}
		s.content.q[key] = q
	}
	q.waiting = append(q.waiting, w)
	s.content.mu.Unlock()
	if start {
		go s.drainContent(key, q)
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drainContent makes q's updates, all those waiting at a time, until none is left.
func (s *Store) drainContent(key string, q *contentQueue) {
	for {
		s.content.mu.Lock()
		batch := q.waiting
		q.waiting = nil
		if len(batch) == 0 {
			delete(s.content.q, key)
			s.content.mu.Unlock()
			return
		}
		s.content.mu.Unlock()
		live := batch[:0]
		for _, w := range batch {
			if w.ctx.Err() != nil { // gave up before its turn: not made
				s.outbox.Done(w.in, nil)
				continue
			}
			live = append(live, w)
		}
		if len(live) == 0 {
			continue
		}
		err := s.writeContent(q, live)
		for _, w := range live {
			w.done <- err
		}
	}
}

// writeContent makes batch's updates of q's property as one.
func (s *Store) writeContent(q *contentQueue, batch []*contentWrite) error {
	ctx, cancel := context.WithTimeout(mongostore.Detached(batch[0].ctx), contentTimeout)
	defer cancel()
	ins := make([]outbox.Intent, len(batch))
	sets := make([]bson.D, len(batch))
	for i, w := range batch {
		ins[i], sets[i] = w.in, w.set
	}
	unlock := s.locks.Lock(q.id)
	defer unlock()
	_, err := s.apply(ctx, ins, q.id, PropertyUpdated, bson.D{{Key: "internal_code", Value: q.code}},
		bson.D{{Key: "$set", Value: mergeSets(sets)}}, false)
	return err
}

// mergeSets is the $set of sets made one after the other: every field once, with the last
// value given to it. The fields are those of contentSet, none a path within another.
func mergeSets(sets []bson.D) bson.D {
	if len(sets) == 1 {
		return sets[0]
	}
	var out bson.D
	at := map[string]int{}
	for _, set := range sets {
		for _, e := range set {
			if i, ok := at[e.Key]; ok {
				out[i].Value = e.Value
				continue
			}
			at[e.Key] = len(out)
			out = append(out, e)
		}
	}
	return out
}
