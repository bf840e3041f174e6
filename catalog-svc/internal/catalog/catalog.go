// Package catalog is catalog-svc's read model: the property snapshots and account settings of
// vros.property.v1 and the booking and block snapshots of vros.booking.v1, each applied only
// when its version is newer than the one held (so redelivery and reordering are harmless).
//
// Every snapshot is kept in MongoDB (database vros_catalog, one document per aggregate,
// `_id` a string holding the account) and in memory. Requests read memory only; MongoDB is
// read whole once at start (the only scans), so a restart does not need Kafka's history
// although the consumer group's offsets have moved on.
//
// An erased account (contract.AccountErased) is forgotten everywhere and remembered only by
// its id in erased_accounts, so that its events arriving later, in any partition order, are
// ignored; a tombstone forgets its key's snapshot (erase.go).
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/pricing"
)

// Collections of the view.
const (
	collProperties = "properties"      // _id "<account>:<propertyId>"
	collSettings   = "settings"        // _id "<account>:settings"
	collBookings   = "bookings"        // _id "<account>:booking:<bookingId>"
	collBlocks     = "blocks"          // _id "<account>:block:<blockId>"
	collErased     = "erased_accounts" // _id "<account>", at: the erasure's time; nothing else
)

// snapshotColls are the collections holding the accounts' snapshots.
var snapshotColls = []string{collProperties, collSettings, collBookings, collBlocks}

// account is everything the view holds of one account.
type account struct {
	settings   Settings
	props      map[int64]*Property // deleted properties are kept (as a version marker) with Snap.Deleted
	bookings   map[int64]*Booking
	blocks     map[int64]*Block
	propBook   map[int64]map[int64]struct{} // property → its bookings
	propBlocks map[int64]map[int64]struct{} // property → its blocks
	calGen     map[int64]uint64             // property → its calendar's generation (ical.go)
}

func newAccount(id string) *account {
	return &account{settings: contract.DefaultSettings(id), props: map[int64]*Property{}, bookings: map[int64]*Booking{},
		blocks: map[int64]*Block{}, propBook: map[int64]map[int64]struct{}{}, propBlocks: map[int64]map[int64]struct{}{},
		calGen: map[int64]uint64{}}
}

// Catalog is the read model.
type Catalog struct {
	colls  map[string]*mongo.Collection
	parked *mongo.Collection // the consumer's parked events (events.ParkedCollection)

	mu       sync.RWMutex
	accounts map[string]*account
	erased   map[string]struct{} // accounts erased: their events are ignored
	onErase  []func(acc string)  // what else forgets an erased account (OnErase)
	icals    icalIndex           // iCal export token hash → property (ical.go)
	gens     uint64              // the last calendar generation given (ical.go)
}

// New returns the view in db, loaded from it. Snapshots an erasure interrupted before it
// removed them are not loaded, and are removed now.
func New(ctx context.Context, db *mongo.Database) (*Catalog, error) {
	names := append(mongostore.WithLocks(snapshotColls...), collErased, events.ParkedCollection)
	if err := mongostore.Ensure(ctx, db, names, nil); err != nil {
		return nil, err
	}
	s := &Catalog{colls: map[string]*mongo.Collection{}, parked: db.Collection(events.ParkedCollection),
		accounts: map[string]*account{}, erased: map[string]struct{}{}}
	for _, n := range append(slices.Clone(snapshotColls), collErased) {
		s.colls[n] = db.Collection(n)
	}
	if err := s.loadErased(ctx); err != nil {
		return nil, err
	}
	leftovers := map[string]bool{}
	for _, n := range snapshotColls {
		cur, err := s.colls[n].Find(ctx, bson.D{})
		if err != nil {
			return nil, err
		}
		var docs []mongostore.Snapshot
		if err := cur.All(ctx, &docs); err != nil {
			return nil, err
		}
		for _, d := range docs {
			err := s.put(n, []byte(d.Data))
			var gone erasedError
			switch {
			case errors.As(err, &gone):
				leftovers[gone.account] = true
			case err != nil:
				return nil, fmt.Errorf("view: stored %s %s: %w", n, d.ID, err)
			}
		}
	}
	for acc := range leftovers {
		if err := s.purge(ctx, acc); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Apply is the consumer handler of vros.property.v1 and vros.booking.v1.
func (s *Catalog) Apply(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) {
		return s.forgetKey(ctx, string(m.Key))
	}
	var data json.RawMessage
	e, err := events.Decode(m.Value, &data)
	if err != nil {
		return events.Permanent(err)
	}
	if e.Type() == contract.AccountErased {
		er, err := erasureOf(data)
		if err != nil {
			return events.Permanent(fmt.Errorf("event %s: %w", e.Type(), err))
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
		return events.Permanent(fmt.Errorf("event %s: %w", e.Type(), err))
	}
	if head.AccountID == "" {
		return events.Permanent(fmt.Errorf("event %s without account", e.Type()))
	}
	if s.Erased(head.AccountID) {
		return nil // a late event of an erased account
	}
	var coll, id string
	switch t := e.Type(); {
	case t == contract.SettingsUpdated:
		coll, id = collSettings, head.AccountID+":settings"
	case strings.HasPrefix(t, contract.PropertyTypePrefix):
		coll, id = collProperties, head.AccountID+":"+strconv.FormatInt(head.PropertyID, 10)
	case strings.HasPrefix(t, contract.BookingTypePrefix):
		coll, id = collBookings, head.AccountID+":booking:"+strconv.FormatInt(head.BookingID, 10)
	case strings.HasPrefix(t, contract.BlockTypePrefix):
		coll, id = collBlocks, head.AccountID+":block:"+strconv.FormatInt(head.BlockID, 10)
	default:
		return nil
	}
	held := s.version(coll, head.AccountID, head.PropertyID, head.BookingID, head.BlockID)
	if held >= head.Version {
		return nil // already applied
	}
	if err := s.check(coll, data); err != nil {
		return events.Permanent(err)
	}
	keep := mongostore.KeepNewer
	if held == 0 {
		keep = mongostore.KeepNewerFresh // most events of a catch-up: a booking's first
	}
	// Another replica may have stored a newer one meanwhile: serve whatever is stored.
	stored, _, err := keep(ctx, s.colls[coll], id, head.Version, string(data))
	if err != nil {
		return err
	}
	switch {
	case stored.Data != "":
		if err := s.put(coll, []byte(stored.Data)); !errors.As(err, new(erasedError)) {
			return err
		}
	case !s.Erased(head.AccountID):
		// A newer one was stored, then removed (a tombstone) before it could be read: the
		// event is applied again, from the start.
		return fmt.Errorf("view: %s removed while it was stored", id)
	}
	// The account was erased while this event was being stored: take back what it wrote.
	if _, err := s.colls[coll].DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return fmt.Errorf("view: remove %s of an erased account: %w", id, err)
	}
	return nil
}

// check refuses what put could not hold, before it is stored.
func (s *Catalog) check(coll string, data []byte) error {
	switch coll {
	case collProperties:
		var snap Snapshot
		if err := json.Unmarshal(data, &snap); err != nil {
			return err
		}
		if snap.PropertyID == 0 {
			return errors.New("property snapshot without property_id")
		}
	case collBookings:
		var b Booking
		return json.Unmarshal(data, &b)
	case collBlocks:
		var b Block
		return json.Unmarshal(data, &b)
	case collSettings:
		var st Settings
		return json.Unmarshal(data, &st)
	}
	return nil
}

// version is the version the memory holds of an aggregate (0: none).
func (s *Catalog) version(coll, acc string, pid, bid, blk int64) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[acc]
	if a == nil {
		return 0
	}
	switch coll {
	case collSettings:
		return a.settings.Version
	case collProperties:
		if p := a.props[pid]; p != nil {
			return p.Snap.Version
		}
	case collBookings:
		if b := a.bookings[bid]; b != nil {
			return b.Version
		}
	case collBlocks:
		if b := a.blocks[blk]; b != nil {
			return b.Version
		}
	}
	return 0
}

// put applies a snapshot to memory when it is newer than what memory holds. It returns an
// erasedError, and changes nothing, when the snapshot's account is erased.
func (s *Catalog) put(coll string, data []byte) error {
	switch coll {
	case collSettings:
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
	case collProperties:
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
	case collBookings:
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
	case collBlocks:
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
