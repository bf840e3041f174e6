// Package propertyview is booking-svc's property view: its copy of what it needs of
// property-svc's data, each property's pricing configuration and each account's settings,
// kept from the snapshots on vros.property.v1 (idempotent by version) and cached in memory
// in front of MongoDB (Store); the booking domain reads it as booking.PropertyView, in its
// own terms (Reader).
package propertyview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/pricing"
)

// Collections of the view.
const (
	collProperties = "view_properties"
	collCodes      = "view_codes"
	collSettings   = "view_settings"
)

// ErrNotFound: no live property with that id or code in the account.
var ErrNotFound = errors.New("property not found")

// Property is what booking-svc knows of one property.
type Property struct {
	AccountID    string
	PropertyID   int64
	InternalCode string
	Name         string
	Version      int64
	Pricing      pricing.Property
}

// Settings is what booking-svc knows of an account's settings.
type Settings struct {
	Currency string
	Timezone string
	// WeekendNights is 2 (Friday and Saturday nights get the weekend price) or 3 (and Sunday).
	WeekendNights int
	LeadSources   map[int]string
	Brands        map[int]contract.Brand
	// DefaultLeadSource is the lead source of a booking created without one.
	DefaultLeadSource int
	// ExchangeRates: currency code → units of it per unit of Currency (decimal strings).
	ExchangeRates map[string]string
	// Promotions are the account's promotion codes.
	Promotions []contract.Promotion
	// Location is Timezone loaded; nil when it is not a known zone.
	Location *time.Location

	event contract.Settings // what they came from, to price with
}

// Store keeps the view.
type Store struct {
	props, codes, settings *mongo.Collection

	mu       sync.RWMutex
	cache    map[string]Property // by "<account>:<propertyId>", parsed snapshots
	settingC map[string]Settings // by account
	// gen counts the invalidations of each property, epoch those of whole accounts (settings).
	// A read that loaded a snapshot from MongoDB caches it only if neither moved since it
	// started: otherwise an apply that landed in between would be hidden behind the older
	// snapshot until the property's next event.
	gen   map[string]uint64
	epoch uint64
	// writing counts the writes in flight of each property id and of each account's settings
	// ("<account>:settings"). While one is, the cache is neither read nor filled for it:
	// once a write is visible in MongoDB no reader may still be answered from the copy it
	// replaces (a client that saw the new version must be priced with it).
	writing map[string]int
	// written, when set (tests), runs after a write of key is visible, before it ends.
	written func(key string)
	// erased, when set, says which accounts are erased (IgnoreErased).
	erased Erased
}

// New returns the view in db.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	if err := mongostore.Ensure(ctx, db, mongostore.WithLocks(collProperties, collCodes, collSettings), nil); err != nil {
		return nil, err
	}
	return &Store{props: db.Collection(collProperties), codes: db.Collection(collCodes), settings: db.Collection(collSettings),
		cache: map[string]Property{}, settingC: map[string]Settings{}, gen: map[string]uint64{}, writing: map[string]int{}}, nil
}

// Erased tells whether an account is erased: its events are then ignored.
type Erased func(ctx context.Context, account string) (bool, error)

// IgnoreErased makes the view ignore the events of the accounts erased says are erased.
func (s *Store) IgnoreErased(erased Erased) { s.erased = erased }

// Apply is the consumer handler of vros.property.v1. An event older than what the view
// holds is ignored, so redelivery and reordering are harmless. A tombstone forgets its key;
// an erased account's events are ignored.
func (s *Store) Apply(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) {
		return s.forgetKey(ctx, string(m.Key))
	}
	var data json.RawMessage
	e, err := events.Decode(m.Value, &data)
	if err != nil {
		return events.Permanent(err)
	}
	if e.Type() == contract.SettingsUpdated {
		return s.applySettings(ctx, data)
	}
	if !strings.HasPrefix(e.Type(), contract.PropertyTypePrefix) {
		return nil
	}
	var h contract.Property
	if err := json.Unmarshal(data, &h); err != nil {
		return events.Permanent(fmt.Errorf("property snapshot: %w", err))
	}
	if h.AccountID == "" || h.PropertyID == 0 {
		return events.Permanent(errors.New("property snapshot without identity"))
	}
	if gone, err := s.erasedAccount(ctx, h.AccountID); err != nil || gone {
		return err
	}
	if !h.Deleted {
		if _, err := pricing.FromEvent(h); err != nil {
			return events.Permanent(err)
		}
	}
	id := h.AccountID + ":" + strconv.FormatInt(h.PropertyID, 10)
	// Every replica forgets its cached copy, also when another replica (same database) has
	// stored this version first and this one finds nothing newer to write.
	s.begin(id)
	defer s.end(id)
	_, newer, err := mongostore.KeepNewer(ctx, s.props, id, h.Version, string(data))
	if err != nil {
		return err
	}
	if s.written != nil {
		s.written(id)
	}
	if !newer {
		return nil
	}
	code := bson.D{{Key: "_id", Value: h.AccountID + ":" + h.InternalCode}}
	if h.Deleted {
		// The code may already belong to a newer property; only remove it if it is ours.
		var c struct {
			PropertyID int64 `bson:"property_id"`
		}
		if err := s.codes.FindOne(ctx, code).Decode(&c); err == nil && c.PropertyID == h.PropertyID {
			if _, err := s.codes.DeleteOne(ctx, code); err != nil {
				return err
			}
		}
	} else if _, err := s.codes.ReplaceOne(ctx, code, bson.D{{Key: "property_id", Value: h.PropertyID}}, options.Replace().SetUpsert(true)); err != nil {
		return err
	}
	return nil
}

// erasedAccount reports whether account is erased (never, without IgnoreErased).
func (s *Store) erasedAccount(ctx context.Context, account string) (bool, error) {
	if s.erased == nil {
		return false, nil
	}
	return s.erased(ctx, account)
}

// forgetKey forgets what a message key of vros.property.v1 held: "<account>:settings" the
// account's settings, "<account>:<propertyId>" a property and its internal code.
func (s *Store) forgetKey(ctx context.Context, key string) error {
	account, rest, ok := strings.Cut(key, ":")
	if !ok || account == "" {
		return nil // not a key of ours: nothing was kept under it
	}
	if rest == "settings" {
		if _, err := s.settings.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}}); err != nil {
			return fmt.Errorf("forget settings: %w", err)
		}
		s.forgetAccount(account)
		return nil
	}
	pid, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return nil
	}
	defer s.forget(key)
	doc, found, err := mongostore.GetSnapshot(ctx, s.props, key)
	if err != nil {
		return err
	}
	if found {
		var h contract.Property
		if json.Unmarshal([]byte(doc.Data), &h) == nil && h.InternalCode != "" {
			code := bson.D{{Key: "_id", Value: account + ":" + h.InternalCode}, {Key: "property_id", Value: pid}}
			if _, err := s.codes.DeleteOne(ctx, code); err != nil {
				return fmt.Errorf("forget property code: %w", err)
			}
		}
	}
	if _, err := s.props.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}}); err != nil {
		return fmt.Errorf("forget property: %w", err)
	}
	return nil
}

// EraseAccount deletes everything the view holds of account (an erased account), in MongoDB
// and in memory.
func (s *Store) EraseAccount(ctx context.Context, account string) error {
	prefix := bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}
	db := s.props.Database()
	for _, d := range []struct {
		coll   string
		filter bson.D
	}{
		{collProperties, prefix}, {collProperties + "_locks", prefix},
		{collCodes, prefix}, {collCodes + "_locks", prefix},
		{collSettings, bson.D{{Key: "_id", Value: account}}}, {collSettings + "_locks", bson.D{{Key: "_id", Value: account}}},
	} {
		if _, err := db.Collection(d.coll).DeleteMany(ctx, d.filter); err != nil {
			return fmt.Errorf("erase account from %s: %w", d.coll, err)
		}
	}
	s.forgetAccount(account)
	return nil
}

// ForgetAccount drops what the memory cache holds of account (an erased account whose
// documents are gone already).
func (s *Store) ForgetAccount(account string) { s.forgetAccount(account) }

// forget drops the cached copy of property id.
func (s *Store) forget(id string) {
	s.mu.Lock()
	delete(s.cache, id)
	s.gen[id]++
	s.mu.Unlock()
}

// begin marks a write of key (a property id, or "<account>:settings") in flight and drops
// what the cache holds of it; end, once the write is done, drops it again and ends the mark.
func (s *Store) begin(key string) {
	s.mu.Lock()
	s.writing[key]++
	s.mu.Unlock()
	s.drop(key)
}

func (s *Store) end(key string) {
	s.drop(key)
	s.mu.Lock()
	if s.writing[key]--; s.writing[key] <= 0 {
		delete(s.writing, key)
	}
	s.mu.Unlock()
}

func (s *Store) drop(key string) {
	if account, rest, _ := strings.Cut(key, ":"); rest == "settings" {
		s.forgetAccount(account)
		return
	}
	s.forget(key)
}

// writingFor reports whether a write of property id or of its account's settings is in
// flight; s.mu is held.
func (s *Store) writingFor(account, id string) bool {
	return s.writing[id] > 0 || s.writing[account+":settings"] > 0
}

func (s *Store) applySettings(ctx context.Context, data json.RawMessage) error {
	var d contract.Settings
	if err := json.Unmarshal(data, &d); err != nil {
		return events.Permanent(fmt.Errorf("settings snapshot: %w", err))
	}
	if d.AccountID == "" {
		return events.Permanent(errors.New("settings snapshot without account"))
	}
	if gone, err := s.erasedAccount(ctx, d.AccountID); err != nil || gone {
		return err
	}
	// As for properties: also when another replica stored it first.
	s.begin(d.AccountID + ":settings")
	defer s.end(d.AccountID + ":settings")
	_, _, err := mongostore.KeepNewer(ctx, s.settings, d.AccountID, d.Version, string(data))
	if err == nil && s.written != nil {
		s.written(d.AccountID + ":settings")
	}
	return err
}

// forgetAccount drops the cached properties of account: their currency and time zone may
// come from its settings.
func (s *Store) forgetAccount(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	delete(s.settingC, account)
	for k := range s.cache {
		if strings.HasPrefix(k, account+":") {
			delete(s.cache, k)
		}
	}
}

// Settings returns an account's settings (defaults until its first settings event).
func (s *Store) Settings(ctx context.Context, account string) (Settings, error) {
	s.mu.RLock()
	st, ok := s.settingC[account]
	epoch, writing := s.epoch, s.writing[account+":settings"] > 0
	s.mu.RUnlock()
	if ok && !writing {
		return st, nil
	}
	st, err := s.loadSettings(ctx, account)
	if err == nil {
		s.mu.Lock()
		if s.epoch == epoch && s.writing[account+":settings"] == 0 {
			s.settingC[account] = st
		}
		s.mu.Unlock()
	}
	return st, err
}

func (s *Store) loadSettings(ctx context.Context, account string) (Settings, error) {
	doc, ok, err := mongostore.GetSnapshot(ctx, s.settings, account)
	if err != nil || !ok {
		return settingsOf(contract.DefaultSettings(account)), err
	}
	var d contract.Settings
	if err := json.Unmarshal([]byte(doc.Data), &d); err != nil {
		return Settings{}, err
	}
	return settingsOf(d.WithDefaults()), nil
}

// settingsOf is booking-svc's projection of an account's settings.
func settingsOf(d contract.Settings) Settings {
	out := Settings{Currency: d.Currency, Timezone: d.Timezone, WeekendNights: d.WeekendNights,
		LeadSources: make(map[int]string, len(d.LeadSources)), Brands: make(map[int]contract.Brand, len(d.Brands)),
		DefaultLeadSource: d.DefaultLeadSource, ExchangeRates: d.ExchangeRates, Promotions: d.Promotions, event: d}
	if loc, err := time.LoadLocation(d.Timezone); err == nil && d.Timezone != "" && d.Timezone != "Local" {
		out.Location = loc
	}
	for _, l := range d.LeadSources {
		out.LeadSources[l.ID] = l.Name
	}
	for _, b := range d.Brands {
		out.Brands[b.ID] = b
	}
	return out
}

// Get returns a live property of account.
func (s *Store) Get(ctx context.Context, account string, pid int64) (Property, error) {
	id := account + ":" + strconv.FormatInt(pid, 10)
	s.mu.RLock()
	p, ok := s.cache[id]
	gen, epoch, writing := s.gen[id], s.epoch, s.writingFor(account, id)
	s.mu.RUnlock()
	if ok && !writing {
		return p, nil
	}
	doc, ok, err := mongostore.GetSnapshot(ctx, s.props, id)
	if err != nil {
		return Property{}, err
	}
	var h contract.Property
	if ok {
		if err := json.Unmarshal([]byte(doc.Data), &h); err != nil {
			return Property{}, err
		}
	}
	if !ok || h.Deleted {
		return Property{}, ErrNotFound
	}
	st, err := s.Settings(ctx, account)
	if err != nil {
		return Property{}, err
	}
	pp, err := pricing.Priced(h, st.event)
	if err != nil {
		return Property{}, err
	}
	p = Property{AccountID: account, PropertyID: pid, InternalCode: h.InternalCode, Name: h.Content.Name, Version: h.Version, Pricing: pp}
	s.mu.Lock()
	if s.gen[id] == gen && s.epoch == epoch && !s.writingFor(account, id) {
		s.cache[id] = p
	}
	s.mu.Unlock()
	return p, nil
}

// ByCode returns the live property of account with an internal code.
func (s *Store) ByCode(ctx context.Context, account, code string) (Property, error) {
	var c struct {
		PropertyID int64 `bson:"property_id"`
	}
	err := s.codes.FindOne(ctx, bson.D{{Key: "_id", Value: account + ":" + code}}).Decode(&c)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Property{}, ErrNotFound
	}
	if err != nil {
		return Property{}, err
	}
	return s.Get(ctx, account, c.PropertyID)
}
