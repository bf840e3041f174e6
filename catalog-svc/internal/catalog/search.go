package catalog

import (
	"sync"
	"sync/atomic"
)

// The website search (search-rental, get-property-related) reads every live property of an
// account on each request, so what it needs of a property is computed once per published
// property value and kept beside the catalog, keyed by the *Property pointer: a Property is
// never changed once published (an update, and a settings change that reprices it, replace
// the pointer), so a record can never be stale. Records of replaced properties are dropped
// by the next sweep.

// Nights answers, inside Scan only, whether a property's nights are free: the nights Held
// reports (bookings and live blocks), read in place without building a map.
type Nights struct {
	a   *account
	pid int64
}

// Free reports whether none of the nights from … to-1 is held. from and to are dates
// written YYYY-MM-DD (compared as text, which orders such dates as the calendar does).
func (n Nights) Free(from, to string) bool {
	if bk := n.a.propBook[n.pid]; len(bk) > 0 {
		for id := range bk {
			for _, night := range n.a.bookings[id].Nights {
				if len(night) == len(from) && night >= from && night < to {
					return false
				}
			}
		}
	}
	blocks := n.a.propBlocks[n.pid]
	if len(blocks) == 0 {
		return true
	}
	for id := range blocks {
		b := n.a.blocks[id]
		if b.Deleted || len(b.StartDate) != len(from) || len(b.EndDate) != len(from) {
			continue
		}
		// Both dates of a block are nights of it: it overlaps when it starts before `to`
		// and ends on or after `from`.
		if b.StartDate < to && b.EndDate >= from {
			return false
		}
	}
	return true
}

// Scan calls fn for each live property of the account, in no particular order, under the
// catalog's read lock: fn must be quick (no pricing) and must not keep n.
func (s *Catalog) Scan(acc string, fn func(p *Property, n Nights)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[acc]
	if a == nil {
		return
	}
	for pid, p := range a.props {
		if !p.Snap.Deleted {
			fn(p, Nights{a: a, pid: pid})
		}
	}
}

// ScanIDs is Scan over the live properties among ids only (a brand's): a brand's website
// reads its own properties, not every property of the account. Each id is visited once per
// time it is listed: the caller lists each once.
func (s *Catalog) ScanIDs(acc string, ids []int64, fn func(p *Property, n Nights)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[acc]
	if a == nil {
		return
	}
	for _, pid := range ids {
		if p := a.props[pid]; p != nil && !p.Snap.Deleted {
			fn(p, Nights{a: a, pid: pid})
		}
	}
}

// Memo keeps one value per published property value, by account. Readers take an
// account's immutable snapshot (one atomic load, then plain map lookups: a search reads
// every property of an account); new values are added by copying that account's snapshot,
// which happens only after its properties change. Its zero value is ready to use; it is
// safe for concurrent use.
type Memo[T any] struct {
	accounts sync.Map // account id → *memoShard[T]
}

type memoShard[T any] struct {
	snap atomic.Pointer[map[*Property]T]
	mu   sync.Mutex // serialises writers
	kept int        // values kept by the last sweep
	gone bool       // forgotten (Forget): nothing is added any more
}

// Snapshot returns the values held for the account's properties; the map must not be
// changed.
func (m *Memo[T]) Snapshot(acc string) map[*Property]T {
	sh, ok := m.accounts.Load(acc)
	if !ok {
		return nil
	}
	if p := sh.(*memoShard[T]).snap.Load(); p != nil {
		return *p
	}
	return nil
}

// Add stores new values of the account's properties, those live still reports served (a
// value of a property replaced or erased meanwhile is not kept). Once the account's memo
// holds more than twice what its last sweep kept (plus slack), the values of properties
// live no longer reports served are dropped, so a memo's size follows the catalog's.
func (m *Memo[T]) Add(acc string, vals map[*Property]T, live func(*Property) bool) {
	if len(vals) == 0 {
		return
	}
	v, _ := m.accounts.LoadOrStore(acc, &memoShard[T]{})
	sh := v.(*memoShard[T])
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone {
		return
	}
	var old map[*Property]T
	if p := sh.snap.Load(); p != nil {
		old = *p
	}
	next := make(map[*Property]T, len(old)+len(vals))
	sweep := len(old)+len(vals) > 2*sh.kept+64
	for k, v := range old {
		if !sweep || live(k) {
			next[k] = v
		}
	}
	for k, v := range vals {
		if live(k) {
			next[k] = v
		}
	}
	if len(next) == 0 {
		// Nothing of the account is served (it was erased while its values were built):
		// keep no entry for it.
		sh.gone = true
		m.accounts.CompareAndDelete(acc, sh)
		return
	}
	if sweep {
		sh.kept = len(next)
	}
	sh.snap.Store(&next)
}

// Forget drops every value of the account (it was erased); an Add already under way keeps
// nothing either, because the catalog no longer serves its properties.
func (m *Memo[T]) Forget(acc string) {
	v, ok := m.accounts.LoadAndDelete(acc)
	if !ok {
		return
	}
	sh := v.(*memoShard[T])
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.gone = true
	sh.snap.Store(nil)
}

// Live reports whether p is the value the catalog serves now for its property.
func (s *Catalog) Live(p *Property) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[p.Snap.AccountID]
	return a != nil && a.props[p.Snap.PropertyID] == p && !p.Snap.Deleted
}
