// Package store keeps property configuration in MongoDB (database vros_property): one
// document per property, `_id` "<accountId>:<propertyId>", changed only by single-document
// updates filtered on `_id`, each recorded through the outbox so that its snapshot event
// reaches Kafka.
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/property-svc/internal/property"
)

// Collections of vros_property.
const (
	collProperties = "properties"
	collCodes      = "codes"
	collSettings   = "settings"
	collCounters   = "counters"
	mediaBucket    = "media"
)

// What the store publishes its changes as (event types: event.go).
const (
	eventSource       = "/vros/property-svc"
	settingsAggregate = "settings"
)

// Store is the property repository: it satisfies the domain's property.Repository,
// converting the domain's values to and from its documents (record.go).
type Store struct {
	props    *mongo.Collection
	codes    *mongo.Collection
	settings *mongo.Collection
	media    *mongo.GridFSBucket
	ids      *mongostore.Sequence
	photoIDs *mongostore.Sequence
	// categoryIDs and tagIDs number the accounts' categories and tags.
	categoryIDs, tagIDs *mongostore.Sequence
	box                 *seal.Box
	outbox              *outbox.Outbox
	now                 func() time.Time
	// locks serialize this process's updates of one property or settings document
	// (mongostore.DocLocks: the embedded store would lose one of two concurrent updates).
	locks *mongostore.DocLocks
	// leases, createLocks and createLease hold an account's creates one at a time while it
	// has a limit (limit.go).
	leases      *mongo.Collection
	createLocks *accountLocks
	createLease time.Duration
	// erasedAccounts holds the marker of every erased account (erase.go); erased caches
	// the accounts known to be erased (a marker is never removed).
	erasedAccounts *mongo.Collection
	erased         sync.Map
	// hints remembers which property an internal code named when last looked up, so that
	// an update by code need not look it up again (UpdateContent).
	hints codeHints
	// content combines the concurrent A1 updates of one property (content.go).
	content contentWrites
}

// New prepares the collections of db and returns a store. Its Loader feeds ob.
func New(ctx context.Context, db *mongo.Database, box *seal.Box) (*Store, error) {
	err := mongostore.Ensure(ctx, db,
		append(mongostore.WithLocks(collCodes, collSettings), collProperties, collCounters, outbox.Collection, mediaBucket+".files", mediaBucket+".chunks",
			collCreateLeases, collErased),
		[]mongostore.Index{
			{Collection: mediaBucket + ".chunks", Keys: bson.D{{Key: "files_id", Value: 1}, {Key: "n", Value: 1}}, Unique: true},
			// An account's properties: the plan's limit counts them, usage, export and
			// erasure read them.
			{Collection: collProperties, Keys: bson.D{{Key: "account_id", Value: 1}}},
			// ... and /api/property list pages them by internal code (read.go).
			{Collection: collProperties, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "internal_code", Value: 1}}},
			// The outbox's intents by age: its sweep and its oldest-age gauge.
			outbox.Index,
		})
	if err != nil {
		return nil, err
	}
	counters := db.Collection(collCounters)
	return &Store{
		props:          db.Collection(collProperties),
		codes:          db.Collection(collCodes),
		settings:       db.Collection(collSettings),
		media:          db.GridFSBucket(options.GridFSBucket().SetName(mediaBucket).SetChunkSizeBytes(2 << 20)),
		ids:            mongostore.NewSequence(counters, "property", 10),
		photoIDs:       mongostore.NewSequence(counters, "photo", 10),
		categoryIDs:    mongostore.NewSequence(counters, "category", 10),
		tagIDs:         mongostore.NewSequence(counters, "tag", 10),
		locks:          mongostore.NewDocLocks(),
		leases:         db.Collection(collCreateLeases),
		createLocks:    newAccountLocks(),
		createLease:    createLease,
		erasedAccounts: db.Collection(collErased),
		box:            box,
		now:            func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
	}, nil
}

var _ property.Repository = (*Store)(nil)

// Attach connects the outbox the store records its changes in.
func (s *Store) Attach(ob *outbox.Outbox) { s.outbox = ob }

func recordID(account string, pid int64) string { return account + ":" + strconv.FormatInt(pid, 10) }
func codeID(account, code string) string        { return account + ":" + code }

type codeDoc struct {
	ID         string `bson:"_id"`
	PropertyID int64  `bson:"property_id"`
	// ClaimedAt is when the claim was made; zero in claims older than the field.
	ClaimedAt time.Time `bson:"claimed_at,omitempty"`
}

// claimLease is how long a claim whose property does not exist is left to its create.
const claimLease = time.Minute

// Find reads a live property of account by internal code or id.
func (s *Store) Find(ctx context.Context, account string, ref property.PropertyRef) (property.Stored, error) {
	rec, err := s.resolve(ctx, account, ref)
	if err != nil {
		return property.Stored{}, err
	}
	return rec.stored(), nil
}

// resolve finds a live property of account by internal code or id.
func (s *Store) resolve(ctx context.Context, account string, ref property.PropertyRef) (Record, error) {
	pid := int64(ref.ID)
	if ref.InternalCode != "" {
		var err error
		if pid, err = s.lookupCode(ctx, account, ref.InternalCode); err != nil {
			return Record{}, err
		}
	}
	rec, err := s.get(ctx, recordID(account, pid))
	if err != nil {
		return Record{}, err
	}
	if rec.Deleted || (ref.InternalCode != "" && rec.InternalCode != ref.InternalCode) {
		return Record{}, property.ErrNotFound
	}
	return rec, nil
}

// Locate returns the property id of a live property of account, reading no more than it
// must: by internal code one small lookup (codes are removed when their property is
// deleted); by property id the property itself, to see that it is not deleted.
func (s *Store) Locate(ctx context.Context, account string, ref property.PropertyRef) (int64, error) {
	if ref.InternalCode != "" {
		return s.lookupCode(ctx, account, ref.InternalCode)
	}
	rec, err := s.resolve(ctx, account, ref)
	return rec.PropertyID, err
}

// lookupCode returns the id of the live property of account with internal code code. Codes
// are removed when their property is deleted. The answer is remembered as a hint.
func (s *Store) lookupCode(ctx context.Context, account, code string) (int64, error) {
	var c codeDoc
	id := codeID(account, code)
	err := s.codes.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&c)
	if errors.Is(err, mongo.ErrNoDocuments) {
		s.hints.forget(id)
		return 0, property.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("look up internal_code %q: %w", code, err)
	}
	s.hints.remember(id, c.PropertyID)
	return c.PropertyID, nil
}

func (s *Store) get(ctx context.Context, id string) (Record, error) {
	var rec Record
	err := s.props.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&rec)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Record{}, property.ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("read property %s: %w", id, err)
	}
	return rec, nil
}

// Create stores a new property and returns its property id. The internal code is claimed
// first (a unique `_id` per account), so two creates with one code cannot both succeed.
// With a limit (max > 0) the create holds the account's create lease (limit.go).
func (s *Store) Create(ctx context.Context, account string, p property.Property, max int) (int64, error) {
	if err := s.refuseErased(ctx, account); err != nil {
		return 0, err
	}
	if max > 0 {
		return s.createWithin(ctx, account, max, func(ctx context.Context) (int64, error) { return s.create(ctx, account, p) })
	}
	return s.create(ctx, account, p)
}

// create stores a new property. An erasure of the account that began before the property
// was stored may not have seen it: the marker, read again afterwards, tells, and the
// property is then erased as the erasure would have (its event, loaded from the marker, is
// a tombstone).
func (s *Store) create(ctx context.Context, account string, p property.Property) (int64, error) {
	pid, err := s.insert(ctx, account, p)
	if err != nil {
		return 0, err
	}
	if err := s.refuseErased(ctx, account); err != nil {
		if errors.Is(err, property.ErrAccountErased) {
			s.eraseLate(ctx, recordID(account, pid), codeID(account, p.InternalCode))
		}
		return 0, err
	}
	return pid, nil
}

func (s *Store) insert(ctx context.Context, account string, p property.Property) (int64, error) {
	pid, err := s.ids.Next(ctx)
	if err != nil {
		return 0, fmt.Errorf("allocate property id: %w", err)
	}
	if err := s.claimCode(ctx, account, p.InternalCode, pid); err != nil {
		return 0, err
	}
	id := recordID(account, pid)
	_, err = s.update(ctx, id, PropertyCreated, bson.D{
		{Key: "$setOnInsert", Value: bson.D{
			{Key: "account_id", Value: account}, {Key: "property_id", Value: pid}, {Key: "internal_code", Value: p.InternalCode},
			{Key: "deleted", Value: false}, {Key: "created_at", Value: s.now()},
			{Key: "photos", Value: bson.D{}},
		}},
		// The empty lists in $set: FerretDB drops an empty array from $setOnInsert, and the
		// id is new, so $set sets them on the insert only.
		{Key: "$set", Value: append(contentSet(p), bson.E{Key: "taxes", Value: bson.A{}}, bson.E{Key: "services", Value: bson.A{}})},
	}, true)
	return pid, err
}

// claimCode reserves code for pid. A claim left by a property that no longer exists (a
// crash between claim and insert) is taken over once older than claimLease, so that a
// create still between its claim and its insert keeps it; the take-over is conditional on
// the claim it read, so that of two creates taking one over only one wins.
func (s *Store) claimCode(ctx context.Context, account, code string, pid int64) error {
	id := codeID(account, code)
	_, err := s.codes.InsertOne(ctx, codeDoc{ID: id, PropertyID: pid, ClaimedAt: s.now()})
	if err == nil {
		s.hints.remember(id, pid)
		return nil
	}
	if !mongostore.IsDuplicate(err) {
		return fmt.Errorf("claim internal_code %q: %w", code, err)
	}
	var c codeDoc
	if err := s.codes.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&c); err != nil {
		return fmt.Errorf("read the claim of internal_code %q: %w", code, err)
	}
	rec, err := s.get(ctx, recordID(account, c.PropertyID))
	switch {
	case err == nil && !rec.Deleted:
		return property.ErrCodeTaken
	case errors.Is(err, property.ErrNotFound) && s.now().Sub(c.ClaimedAt) < claimLease:
		return property.ErrCodeTaken // its create is under way
	case err != nil && !errors.Is(err, property.ErrNotFound):
		return err
	}
	took, err := mongostore.ReplaceIf(ctx, s.codes, id, bson.D{{Key: "property_id", Value: c.PropertyID}},
		codeDoc{ID: id, PropertyID: pid, ClaimedAt: s.now()})
	if err != nil {
		return fmt.Errorf("take over internal_code %q: %w", code, err)
	}
	if !took {
		return property.ErrCodeTaken
	}
	s.hints.remember(id, pid)
	return nil
}

// UpdateContent applies an A1 update: the fields it carries replace the stored ones, in one
// update that needs no read of the property first, nor, most of the time, of its code.
//
// The property is the one the code's hint names, if the update finds it live with that
// internal code: then it is the one the code names in the store too (codes.go). Otherwise —
// no hint, or the property was deleted, its code freed and perhaps claimed by a new property,
// by this process or another — the code is looked up and the update made on what it names,
// as it always was. Concurrent updates of one property are made together (content.go).
func (s *Store) UpdateContent(ctx context.Context, account string, p property.Property) (int64, error) {
	upd := func(pid int64) error {
		return s.updateContent(ctx, recordID(account, pid), p.InternalCode, contentSet(p))
	}
	id := codeID(account, p.InternalCode)
	if pid, ok := s.hints.lookup(id); ok {
		err := upd(pid)
		if !errors.Is(err, property.ErrNotFound) {
			return pid, err
		}
		s.hints.forgetIf(id, pid)
	}
	pid, err := s.lookupCode(ctx, account, p.InternalCode)
	if err != nil {
		return 0, err
	}
	return pid, upd(pid)
}

// Delete marks a property deleted, frees its internal code and removes its photos' files.
func (s *Store) Delete(ctx context.Context, account, code string) error {
	rec, err := s.resolve(ctx, account, property.PropertyRef{InternalCode: code})
	if err != nil {
		return err
	}
	if _, err := s.write(ctx, rec.ID, PropertyDeleted, bson.D{{Key: "deleted", Value: true}, {Key: "deleted_at", Value: s.now()}}); err != nil {
		return err
	}
	s.hints.forget(codeID(account, code))
	if _, err := s.codes.DeleteOne(ctx, bson.D{{Key: "_id", Value: codeID(account, code)}}); err != nil {
		return fmt.Errorf("free internal_code %q: %w", code, err)
	}
	for _, ph := range rec.Photos {
		s.deleteRenditions(ctx, ph.Key)
	}
	return nil
}

// SetPolicy replaces the payment policy (A3).
func (s *Store) SetPolicy(ctx context.Context, account string, pid int64, p property.Policy) error {
	return s.set(ctx, account, pid, PolicyUpdated, "policy", policyRec(p))
}

// SetRates replaces the rate settings (A4).
func (s *Store) SetRates(ctx context.Context, account string, pid int64, r property.Rates) error {
	return s.set(ctx, account, pid, RatesUpdated, "rates", ratesRec(r))
}

// SetMethods replaces the payment methods (A5), their secrets sealed.
func (s *Store) SetMethods(ctx context.Context, account string, pid int64, m property.Methods) error {
	return s.set(ctx, account, pid, MethodsUpdated, "methods", s.methodsRec(account, m))
}

// SetTaxes replaces the tax list.
func (s *Store) SetTaxes(ctx context.Context, account string, pid int64, t property.Taxes) error {
	return s.set(ctx, account, pid, TaxesUpdated, "taxes", taxRecs(t))
}

// SetServices replaces the default services.
func (s *Store) SetServices(ctx context.Context, account string, pid int64, sv property.Services) error {
	return s.set(ctx, account, pid, ServicesUpdated, "services", serviceRecs(sv))
}

// set replaces one section of a property's configuration.
func (s *Store) set(ctx context.Context, account string, pid int64, change, section string, value any) error {
	_, err := s.write(ctx, recordID(account, pid), change, bson.D{{Key: section, Value: value}})
	return err
}

// SetAmenities replaces the amenity list and changes the display options sent.
func (s *Store) SetAmenities(ctx context.Context, account string, pid int64, a property.Amenities) error {
	_, err := s.write(ctx, recordID(account, pid), AmenitiesUpdated, amenitiesSet(a))
	return err
}

// write sets fields of the property id.
func (s *Store) write(ctx context.Context, id, change string, set bson.D) (Record, error) {
	return s.update(ctx, id, change, bson.D{{Key: "$set", Value: set}}, false)
}

// update applies upd to the property id (creating it when upsert), stamps the change and
// bumps the version, as one atomic update filtered on `_id` (and, but for a create, on not
// being deleted), with its intent recorded
// in the outbox first and the resulting snapshot handed to the relay.
func (s *Store) update(ctx context.Context, id, change string, upd bson.D, upsert bool) (Record, error) {
	return s.updateWhere(ctx, id, change, nil, upd, upsert)
}

// updateWhere is update applied only if the property also matches where (ErrNotFound
// otherwise).
func (s *Store) updateWhere(ctx context.Context, id, change string, where, upd bson.D, upsert bool) (Record, error) {
	// The intent is recorded before the lock is taken: the intents of concurrent writers of
	// one property are then recorded together (outbox.Begin shares one insert), and only
	// the update itself waits for the one before. An intent is only a note to publish the
	// property's current state, whenever it is recorded before the update.
	in, err := s.outbox.Begin(ctx, id)
	if err != nil {
		return Record{}, fmt.Errorf("record %s in the outbox: %w", change, err)
	}
	// The lock is held until the relay has the snapshot, so that an erasure, which deletes
	// the document under it, records its tombstone after the snapshot (erase.go).
	unlock := s.locks.Lock(id)
	defer unlock()
	return s.apply(ctx, []outbox.Intent{in}, id, change, where, upd, upsert)
}

// updateLocked is updateWhere for a caller that holds the property's lock.
func (s *Store) updateLocked(ctx context.Context, id, change string, where, upd bson.D, upsert bool) (Record, error) {
	in, err := s.outbox.Begin(ctx, id)
	if err != nil {
		return Record{}, fmt.Errorf("record %s in the outbox: %w", change, err)
	}
	return s.apply(ctx, []outbox.Intent{in}, id, change, where, upd, upsert)
}

// apply makes the update of updateWhere, its intents recorded and its lock held, and hands
// the outcome to the relay. upd may be the writes of several callers made as one (one
// intent each, content.go): the version counts each of them.
func (s *Store) apply(ctx context.Context, ins []outbox.Intent, id, change string, where, upd bson.D, upsert bool) (Record, error) {
	done := func(snap *outbox.Snapshot) {
		for _, in := range ins {
			s.outbox.Done(in, snap)
		}
	}
	meta := bson.D{{Key: "last_change", Value: change}, {Key: "updated_at", Value: s.now()}}
	found := false
	for i, op := range upd {
		if op.Key == "$set" {
			upd[i].Value = append(op.Value.(bson.D), meta...)
			found = true
		}
	}
	if !found {
		upd = append(upd, bson.E{Key: "$set", Value: meta})
	}
	upd = append(upd, bson.E{Key: "$inc", Value: bson.D{{Key: "version", Value: int64(len(ins))}}})
	filter := bson.D{{Key: "_id", Value: id}}
	if !upsert { // a deleted property is as missing as one that never existed
		filter = append(filter, bson.E{Key: "deleted", Value: bson.D{{Key: "$ne", Value: true}}})
	}
	filter = append(filter, where...)
	var rec Record
	err := s.props.FindOneAndUpdate(ctx, filter, upd,
		options.FindOneAndUpdate().SetReturnDocument(options.After).SetUpsert(upsert)).Decode(&rec)
	if err != nil {
		done(nil)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return Record{}, property.ErrNotFound
		}
		return Record{}, fmt.Errorf("%s of %s: %w", change, id, err)
	}
	if s.knownErased(rec.AccountID) {
		done(nil) // the loader answers a tombstone
		return rec, nil
	}
	done(s.snapshot(rec))
	return rec, nil
}

// Snapshot is the outbox loader: the current state of an aggregate as one event; for an
// erased account, a tombstone, or the account's erasure event (erase.go).
func (s *Store) Snapshot(ctx context.Context, aggregate string) ([]events.Message, error) {
	account, rest, _ := strings.Cut(aggregate, ":")
	at, erased, err := s.erasedAt(ctx, account)
	if err != nil {
		return nil, err
	}
	if erased {
		return erasedMessages(account, rest, aggregate, at)
	}
	if rest == accountAggregate { // recorded only after the marker: never the case
		return nil, nil
	}
	if rest == settingsAggregate {
		st, err := s.Settings(ctx, account)
		if err != nil {
			return nil, err
		}
		m, err := settingsMessage(st)
		if err != nil {
			return nil, err
		}
		return []events.Message{m}, nil
	}
	rec, err := s.get(ctx, aggregate)
	if err != nil {
		return nil, err
	}
	return propertyMessages(rec)
}

// snapshot is the event of the state a write produced, handed to the relay so that it
// need not read the property again; nil (the relay reads it) if it cannot be encoded.
func (s *Store) snapshot(rec Record) *outbox.Snapshot {
	msgs, err := propertyMessages(rec)
	if err != nil {
		return nil
	}
	return &outbox.Snapshot{Version: rec.Version, Messages: msgs}
}

// SetDailyPrices sets per-date prices and minimum stays; other dates keep theirs.
func (s *Store) SetDailyPrices(ctx context.Context, account string, pid int64, days []property.DayPrice) error {
	set := make(bson.D, 0, len(days))
	for _, d := range days {
		day := DayRec{Price: money(d.Price), WeeklyPrice: optMoney(d.Weekly), MonthPrice: optMoney(d.Monthly), MinNights: d.MinNights}
		set = append(set, bson.E{Key: "prices." + d.Date.Format(time.DateOnly), Value: day})
	}
	_, err := s.write(ctx, recordID(account, pid), PricesUpdated, set)
	return err
}
