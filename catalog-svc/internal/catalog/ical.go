package catalog

import "sort"

// The iCal export (docs/ical.md, "Export"): a property's feed is found by the hash of its
// link's token (contract.Property.ICalTokenSHA256; the token never reaches the catalog), and
// every change of what the feed shows — the property, its bookings, its blocks — gives the
// property's calendar a new generation, so that a rendered feed is reused until then.

type icalRef struct {
	account string
	pid     int64
}

// icalIndex maps the hash of a live property's export token to the property.
type icalIndex map[string]icalRef

// indexICal moves the index from old's link to now's (either may be nil: no property, or
// forgotten); s.mu must be held for writing. A rotated, revoked or deleted property's old hash
// is forgotten at once, so the old link answers 404 from the event on.
func (s *Catalog) indexICal(old *Property, now *Snapshot) {
	if old != nil && old.Snap.ICalTokenSHA256 != "" {
		if r, ok := s.icals[old.Snap.ICalTokenSHA256]; ok && r.account == old.Snap.AccountID && r.pid == old.Snap.PropertyID {
			delete(s.icals, old.Snap.ICalTokenSHA256)
		}
	}
	if now != nil && !now.Deleted && now.ICalTokenSHA256 != "" {
		if s.icals == nil {
			s.icals = icalIndex{}
		}
		s.icals[now.ICalTokenSHA256] = icalRef{account: now.AccountID, pid: now.PropertyID}
	}
}

// changed gives the property's calendar, and its account, a new generation; s.mu must be
// held for writing.
func (s *Catalog) changed(a *account, pid int64) {
	s.touch(a)
	if a.calGen == nil {
		a.calGen = map[int64]uint64{}
	}
	a.calGen[pid] = s.gens
}

// Gen is the generation of a property's calendar: it changes whenever the property's
// snapshot, bookings or blocks do (0 for a property of no account held).
func (s *Catalog) Gen(acc string, pid int64) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if a := s.accounts[acc]; a != nil {
		return a.calGen[pid]
	}
	return 0
}

// Calendar is what a property's iCal feed shows, read at one moment.
type Calendar struct {
	Account  string
	Property *Property
	Bookings []*Booking // every status, by id
	Blocks   []*Block   // live blocks, by id
	// Gen changes whenever any of the above does: equal generations, equal calendars.
	Gen uint64
}

// resolveICal finds the live property whose token hashes to hash; s.mu must be held.
func (s *Catalog) resolveICal(hash string) (*account, *Property, bool) {
	r, ok := s.icals[hash]
	if !ok || hash == "" {
		return nil, nil, false
	}
	a := s.accounts[r.account]
	if a == nil {
		return nil, nil, false
	}
	p := a.props[r.pid]
	if p == nil || p.Snap.Deleted || p.Snap.ICalTokenSHA256 != hash {
		return nil, nil, false
	}
	return a, p, true
}

// CalendarGen returns the property whose export token hashes to hash and its calendar's
// generation, without copying the calendar: what a cached feed is checked against; false
// when no live property has that link.
func (s *Catalog) CalendarGen(hash string) (*Property, uint64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, p, ok := s.resolveICal(hash)
	if !ok {
		return nil, 0, false
	}
	return p, a.calGen[p.Snap.PropertyID], true
}

// CalendarOf returns the calendar whose export token hashes to hash; false when no live
// property has that link.
func (s *Catalog) CalendarOf(hash string) (Calendar, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, p, ok := s.resolveICal(hash)
	if !ok {
		return Calendar{}, false
	}
	pid := p.Snap.PropertyID
	c := Calendar{Account: p.Snap.AccountID, Property: p, Gen: a.calGen[pid]}
	for id := range a.propBook[pid] {
		c.Bookings = append(c.Bookings, a.bookings[id])
	}
	for id := range a.propBlocks[pid] {
		if b := a.blocks[id]; !b.Deleted {
			c.Blocks = append(c.Blocks, b)
		}
	}
	sort.Slice(c.Bookings, func(i, j int) bool { return c.Bookings[i].BookingID < c.Bookings[j].BookingID })
	sort.Slice(c.Blocks, func(i, j int) bool { return c.Blocks[i].BlockID < c.Blocks[j].BlockID })
	return c, true
}
