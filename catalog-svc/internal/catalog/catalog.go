// Package catalog is catalog-svc's domain: its read model of the property snapshots and
// account settings of vros.property.v1 and the booking and block snapshots of
// vros.booking.v1, each applied only when its version is newer than the one held (so
// redelivery and reordering are harmless), and the queries interface B's reads and the
// website search answer from it.
//
// Every snapshot is kept in a SnapshotStore (internal/store: MongoDB) and in memory.
// Requests read memory only; the store is read whole once at start (the only scans), so a
// restart does not need Kafka's history although the consumer group's offsets have moved on.
// internal/consumer feeds it the topics' events.
//
// An erased account (contract.AccountErased) is forgotten everywhere and remembered only by
// its id, so that its events arriving later, in any partition order, are ignored; a
// tombstone forgets its key's snapshot (erase.go).
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// account is everything the catalog holds of one account.
type account struct {
	settings   Settings
	props      map[int64]*Property // deleted properties are kept (as a version marker) with Snap.Deleted
	bookings   map[int64]*Booking
	blocks     map[int64]*Block
	propBook   map[int64]map[int64]struct{} // property → its bookings
	propBlocks map[int64]map[int64]struct{} // property → its blocks
	calGen     map[int64]uint64             // property → its calendar's generation (ical.go)
	// gen is the account's generation (Generation): it changes with every change applied
	// to anything of the account, its settings included.
	gen uint64
}

func newAccount(id string) *account {
	return &account{settings: contract.DefaultSettings(id), props: map[int64]*Property{}, bookings: map[int64]*Booking{},
		blocks: map[int64]*Block{}, propBook: map[int64]map[int64]struct{}{}, propBlocks: map[int64]map[int64]struct{}{},
		calGen: map[int64]uint64{}}
}

// Catalog is the read model.
type Catalog struct {
	store SnapshotStore // nil for a catalog in memory only (NewMemory)

	mu       sync.RWMutex
	accounts map[string]*account
	erased   map[string]struct{} // accounts erased: their events are ignored
	onErase  []func(acc string)  // what else forgets an erased account (OnErase)
	icals    icalIndex           // iCal export token hash → property (ical.go)
	gens     uint64              // the last generation given, a calendar's or an account's (touch)
}

// New returns the catalog kept in store, loaded from it. Snapshots an erasure interrupted
// before it removed them are not loaded, and are removed now.
func New(ctx context.Context, store SnapshotStore) (*Catalog, error) {
	s := NewMemory()
	s.store = store
	erased, err := store.Erased(ctx)
	if err != nil {
		return nil, err
	}
	for _, acc := range erased {
		s.erased[acc] = struct{}{}
	}
	leftovers := map[string]bool{}
	err = store.Snapshots(ctx, func(kind Kind, key string, data []byte) error {
		err := s.put(kind, data)
		var gone erasedError
		switch {
		case errors.As(err, &gone):
			leftovers[gone.account] = true
		case err != nil:
			return fmt.Errorf("catalog: stored %s %s: %w", kind, key, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for acc := range leftovers {
		if err := store.Purge(ctx, acc); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Apply applies the data of an event of type typ of vros.property.v1 or vros.booking.v1,
// kept in the store first. An event that can never be applied answers a *MalformedError;
// one of a type the catalog does not hold changes nothing.
func (s *Catalog) Apply(ctx context.Context, typ string, data []byte) error {
	if typ == contract.AccountErased {
		er, err := erasureOf(data)
		if err != nil {
			return malformed(fmt.Errorf("event %s: %w", typ, err))
		}
		return s.eraseAccount(ctx, er.AccountID, er.ErasedAt)
	}
	var head struct {
		AccountID  string `json:"account_id"`
		PropertyID int64  `json:"property_id"`
		BookingID  int64  `json:"booking_id"`
		BlockID    int64  `json:"block_id"`
		Version    int64  `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return malformed(fmt.Errorf("event %s: %w", typ, err))
	}
	if head.AccountID == "" {
		return malformed(fmt.Errorf("event %s without account", typ))
	}
	if s.Erased(head.AccountID) {
		return nil // a late event of an erased account
	}
	var kind Kind
	var key string
	switch {
	case typ == contract.SettingsUpdated:
		kind, key = KindSettings, head.AccountID+":settings"
	case strings.HasPrefix(typ, contract.PropertyTypePrefix):
		kind, key = KindProperty, head.AccountID+":"+strconv.FormatInt(head.PropertyID, 10)
	case strings.HasPrefix(typ, contract.BookingTypePrefix):
		kind, key = KindBooking, head.AccountID+":booking:"+strconv.FormatInt(head.BookingID, 10)
	case strings.HasPrefix(typ, contract.BlockTypePrefix):
		kind, key = KindBlock, head.AccountID+":block:"+strconv.FormatInt(head.BlockID, 10)
	default:
		return nil
	}
	held := s.version(kind, head.AccountID, head.PropertyID, head.BookingID, head.BlockID)
	if held >= head.Version {
		return nil // already applied
	}
	if err := check(kind, data); err != nil {
		return malformed(err)
	}
	// Another replica may have stored a newer one meanwhile: serve whatever is stored.
	// Holding none, most events of a catch-up (a booking's first) are stored in one write.
	stored, err := s.store.Keep(ctx, kind, key, head.Version, data, held == 0)
	if err != nil {
		return err
	}
	switch {
	case stored != nil:
		if err := s.put(kind, stored); !errors.As(err, new(erasedError)) {
			return err
		}
	case !s.Erased(head.AccountID):
		// A newer one was stored, then removed (a tombstone) before it could be read: the
		// event is applied again, from the start.
		return fmt.Errorf("catalog: %s removed while it was stored", key)
	}
	// The account was erased while this event was being stored: take back what it wrote.
	if err := s.store.Remove(ctx, kind, key); err != nil {
		return fmt.Errorf("catalog: remove %s of an erased account: %w", key, err)
	}
	return nil
}

// check refuses what put could not hold, before it is stored.
func check(kind Kind, data []byte) error {
	switch kind {
	case KindProperty:
		var snap Snapshot
		if err := json.Unmarshal(data, &snap); err != nil {
			return err
		}
		if snap.PropertyID == 0 {
			return errors.New("property snapshot without property_id")
		}
	case KindBooking:
		var b Booking
		return json.Unmarshal(data, &b)
	case KindBlock:
		var b Block
		return json.Unmarshal(data, &b)
	case KindSettings:
		var st Settings
		return json.Unmarshal(data, &st)
	}
	return nil
}

// version is the version the memory holds of an aggregate (0: none).
func (s *Catalog) version(kind Kind, acc string, pid, bid, blk int64) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[acc]
	if a == nil {
		return 0
	}
	switch kind {
	case KindSettings:
		return a.settings.Version
	case KindProperty:
		if p := a.props[pid]; p != nil {
			return p.Snap.Version
		}
	case KindBooking:
		if b := a.bookings[bid]; b != nil {
			return b.Version
		}
	case KindBlock:
		if b := a.blocks[blk]; b != nil {
			return b.Version
		}
	}
	return 0
}

// put applies a snapshot to memory when it is newer than what memory holds. It returns an
// erasedError, and changes nothing, when the snapshot's account is erased.
func (s *Catalog) put(kind Kind, data []byte) error {
	switch kind {
	case KindSettings:
		var st Settings
		if err := json.Unmarshal(data, &st); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		a, err := s.live(st.AccountID)
		if err != nil {
			return err
		}
		if a.settings.Version >= st.Version && a.settings.Version > 0 {
			return nil
		}
		a.setSettings(st.WithDefaults())
		s.touch(a)
	case KindProperty:
		var snap Snapshot
		if err := json.Unmarshal(data, &snap); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		a, err := s.live(snap.AccountID)
		if err != nil {
			return err
		}
		cur := a.props[snap.PropertyID]
		if cur != nil && cur.Snap.Version >= snap.Version {
			return nil
		}
		a.props[snap.PropertyID] = priced(snap, a.settings)
		s.indexICal(cur, &snap)
		s.changed(a, snap.PropertyID)
	case KindBooking:
		var b Booking
		if err := json.Unmarshal(data, &b); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		a, err := s.live(b.AccountID)
		if err != nil {
			return err
		}
		if cur := a.bookings[b.BookingID]; cur != nil {
			if cur.Version >= b.Version {
				return nil
			}
			delete(a.propBook[cur.PropertyID], b.BookingID)
			s.changed(a, cur.PropertyID)
		}
		a.bookings[b.BookingID] = &b
		index(a.propBook, b.PropertyID, b.BookingID)
		s.changed(a, b.PropertyID)
	case KindBlock:
		var b Block
		if err := json.Unmarshal(data, &b); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		a, err := s.live(b.AccountID)
		if err != nil {
			return err
		}
		if cur := a.blocks[b.BlockID]; cur != nil {
			if cur.Version >= b.Version {
				return nil
			}
			delete(a.propBlocks[cur.PropertyID], b.BlockID)
			s.changed(a, cur.PropertyID)
		}
		a.blocks[b.BlockID] = &b
		index(a.propBlocks, b.PropertyID, b.BlockID)
		s.changed(a, b.PropertyID)
	}
	return nil
}

func index(m map[int64]map[int64]struct{}, pid, id int64) {
	if m[pid] == nil {
		m[pid] = map[int64]struct{}{}
	}
	m[pid][id] = struct{}{}
}

// live returns the account's entry, creating it, or an erasedError when the account is
// erased; s.mu must be held for writing.
func (s *Catalog) live(id string) (*account, error) {
	if _, gone := s.erased[id]; gone {
		return nil, erasedError{account: id}
	}
	a := s.accounts[id]
	if a == nil {
		a = newAccount(id)
		s.accounts[id] = a
	}
	return a, nil
}

// setSettings replaces the account's settings and prices its properties again with them
// (currency, time zone and weekend may have changed); s.mu must be held for writing.
func (a *account) setSettings(st Settings) {
	a.settings = st
	for id, p := range a.props {
		a.props[id] = priced(p.Snap, st)
	}
}

// priced builds the served property: the snapshot's pricing with the account's settings.
func priced(snap Snapshot, st Settings) *Property {
	p := &Property{Snap: snap}
	if !snap.Deleted {
		p.Pricing, p.PricingErr = pricing.Priced(snap, st)
	}
	return p
}

// Settings returns an account's settings (defaults until its first settings event).
func (s *Catalog) Settings(acc string) Settings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if a := s.accounts[acc]; a != nil {
		return a.settings
	}
	return contract.DefaultSettings(acc)
}

// Property returns a live property of the account.
func (s *Catalog) Property(acc string, pid int64) (*Property, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if a := s.accounts[acc]; a != nil {
		if p := a.props[pid]; p != nil && !p.Snap.Deleted {
			return p, true
		}
	}
	return nil, false
}

// Properties lists the account's live properties by id.
func (s *Catalog) Properties(acc string) []*Property {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Property
	if a := s.accounts[acc]; a != nil {
		for _, p := range a.props {
			if !p.Snap.Deleted {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Snap.PropertyID < out[j].Snap.PropertyID })
	return out
}

// Bookings lists the bookings of a property (every status) by id.
func (s *Catalog) Bookings(acc string, pid int64) []*Booking {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Booking
	if a := s.accounts[acc]; a != nil {
		for id := range a.propBook[pid] {
			out = append(out, a.bookings[id])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BookingID < out[j].BookingID })
	return out
}

// Blocks lists the live blocks of the account by id, of one property when pid is not 0.
func (s *Catalog) Blocks(acc string, pid int64) []*Block {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Block
	if a := s.accounts[acc]; a != nil {
		for _, b := range a.blocks {
			if !b.Deleted && (pid == 0 || b.PropertyID == pid) {
				out = append(out, b)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BlockID < out[j].BlockID })
	return out
}

// Held returns the nights of a property held by bookings and live blocks.
func (s *Catalog) Held(acc string, pid int64) map[pricing.Date]bool {
	out := map[pricing.Date]bool{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[acc]
	if a == nil {
		return out
	}
	for id := range a.propBook[pid] {
		for _, n := range a.bookings[id].Nights {
			if d, err := pricing.ParseDate(n); err == nil {
				out[d] = true
			}
		}
	}
	for id := range a.propBlocks[pid] {
		b := a.blocks[id]
		if b.Deleted {
			continue
		}
		start, err1 := pricing.ParseDate(b.StartDate)
		end, err2 := pricing.ParseDate(b.EndDate)
		if err1 != nil || err2 != nil {
			continue
		}
		for d := start; !d.After(end); d = d.AddDays(1) {
			out[d] = true
		}
	}
	return out
}

// Holding counts what memory holds of an account, deleted properties' version markers and
// every booking included: what tests and diagnostics check an erasure by.
type Holding struct {
	Properties, Bookings, Blocks int
	SettingsVersion              int64
}

// Holds returns what memory holds of the account; false when it holds nothing.
func (s *Catalog) Holds(acc string) (Holding, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[acc]
	if a == nil {
		return Holding{}, false
	}
	return Holding{Properties: len(a.props), Bookings: len(a.bookings), Blocks: len(a.blocks), SettingsVersion: a.settings.Version}, true
}
