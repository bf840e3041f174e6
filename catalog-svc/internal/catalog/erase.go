package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

// erasedError is what put answers for a snapshot of an erased account.
type erasedError struct{ account string }

func (e erasedError) Error() string { return "account " + e.account + " is erased" }

// Erased reports whether the account has been erased.
func (s *Catalog) Erased(acc string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, gone := s.erased[acc]
	return gone
}

// OnErase registers fn to be called, once the catalog has forgotten an erased account, for what
// else holds of it (the API's search records). fn must be quick and idempotent: a redelivered
// erasure calls it again.
func (s *Catalog) OnErase(fn func(acc string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onErase = append(s.onErase, fn)
}

// erasureOf reads the data of a contract.AccountErased event: Apply's and Load's.
func erasureOf(data []byte) (contract.AccountErasure, error) {
	var er contract.AccountErasure
	if err := json.Unmarshal(data, &er); err != nil {
		return er, err
	}
	if er.AccountID == "" {
		return er, errors.New("erasure without account")
	}
	return er, nil
}

// eraseAccount applies contract.AccountErased. The mark is written first, so that an
// erasure stopped half-way (the process killed, a write failing) is finished by the event's
// redelivery (the consumer commits only after Apply succeeded) or, for the snapshots, by the
// next start (New); every step after it is idempotent.
func (s *Catalog) eraseAccount(ctx context.Context, acc string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	if err := s.store.MarkErased(ctx, acc, at); err != nil {
		return fmt.Errorf("catalog: mark account erased: %w", err)
	}
	s.forgetAccount(acc)
	return s.store.Purge(ctx, acc)
}

// forgetAccount drops the account from memory, remembers that it is erased, and tells the
// OnErase functions.
func (s *Catalog) forgetAccount(acc string) {
	s.mu.Lock()
	if a := s.accounts[acc]; a != nil {
		for _, p := range a.props {
			s.indexICal(p, nil)
		}
	}
	delete(s.accounts, acc)
	s.erased[acc] = struct{}{}
	hooks := s.onErase
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(acc)
	}
}

// aggregateKey is what a message key names in the catalog: the kind and, for a property,
// booking or block, its id.
type aggregateKey struct {
	account string
	kind    Kind
	id      int64
}

// parseKey reads a message key (docs/events.md, "Topics and keys"); ok is false for a key
// that names nothing the catalog holds (the erasure event's own key among them).
func parseKey(key string) (k aggregateKey, ok bool) {
	acc, rest, found := strings.Cut(key, ":")
	if !found || acc == "" {
		return k, false
	}
	k.account = acc
	num := rest
	switch {
	case rest == "settings":
		k.kind = KindSettings
		return k, true
	case strings.HasPrefix(rest, "booking:"):
		k.kind, num = KindBooking, strings.TrimPrefix(rest, "booking:")
	case strings.HasPrefix(rest, "block:"):
		k.kind, num = KindBlock, strings.TrimPrefix(rest, "block:")
	default:
		k.kind = KindProperty
	}
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 {
		return k, false
	}
	k.id = id
	return k, true
}

// ForgetKey applies a tombstone: the key's snapshot is forgotten, stored and in memory. A key
// naming nothing the catalog holds changes nothing (a tombstone is never a malformed event).
func (s *Catalog) ForgetKey(ctx context.Context, key string) error {
	k, ok := parseKey(key)
	if !ok {
		return nil
	}
	if err := s.store.Remove(ctx, k.kind, key); err != nil {
		return fmt.Errorf("catalog: forget %s: %w", key, err)
	}
	s.drop(k)
	return nil
}

// drop forgets one aggregate in memory.
func (s *Catalog) drop(k aggregateKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[k.account]
	if a == nil {
		return
	}
	switch k.kind {
	case KindSettings:
		a.setSettings(contract.DefaultSettings(k.account))
		s.touch(a)
	case KindProperty:
		s.indexICal(a.props[k.id], nil)
		delete(a.props, k.id)
		s.changed(a, k.id)
	case KindBooking:
		if b := a.bookings[k.id]; b != nil {
			delete(a.propBook[b.PropertyID], k.id)
			delete(a.bookings, k.id)
			s.changed(a, b.PropertyID)
		}
	case KindBlock:
		if b := a.blocks[k.id]; b != nil {
			delete(a.propBlocks[b.PropertyID], k.id)
			delete(a.blocks, k.id)
			s.changed(a, b.PropertyID)
		}
	}
}
