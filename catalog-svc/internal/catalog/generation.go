package catalog

// An account's generation names one state of everything the catalog holds of it: its
// settings (brands, categories, tags, languages, currency, time zone), its properties (every
// published value: content, rates, plans, restrictions, markups, photos, deletion), its
// bookings' nights and its blocks. Every change applied to any of them, by put (an event,
// or a snapshot read at start) or drop (a tombstone), gives the account a new generation
// under the catalog's write lock, in the same critical section as the change; an erasure
// forgets the account with its generation. Generations are drawn from one counter of the
// catalog, so an account's never repeats: an answer computed entirely after reading
// generation g holds no state older than g, and one kept under g is never served once the
// account has moved past it (the API's answer cache, internal/api/answers.go).

// touch gives the account a new generation; s.mu must be held for writing.
func (s *Catalog) touch(a *account) {
	s.gens++
	a.gen = s.gens
}

// Generation is the account's generation: it changes whenever anything the catalog holds of
// the account does. 0 for an account the catalog holds nothing of, or has forgotten (erased):
// such an account's answers are not to be kept.
func (s *Catalog) Generation(acc string) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if a := s.accounts[acc]; a != nil {
		return a.gen
	}
	return 0
}
