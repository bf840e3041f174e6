package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// Erasing an account (docs/interface-a.md, "property-svc's account routes"; docs/erasure.md
// for the whole deletion across the services). The marker is written first and never
// removed: from then on every write of the account is refused, and the outbox loader
// answers every aggregate of the account with a tombstone (and the account's own aggregate
// with its erasure event), so that whatever the outbox still holds of the account, or
// records later, publishes no data. Then an intent is recorded for every key the account
// ever published, before anything is deleted, so that a crash half-way loses no key to
// tombstone: the relay's sweep publishes the intents recorded, and a retry deletes what is
// left. Once the data is gone and the account's events are published, the tombstones are
// recorded once more, to come after any snapshot another replica was still publishing.

// collErased holds one marker per erased account: its id and when, nothing else.
const collErased = "erased_accounts"

// accountAggregate is the outbox aggregate ("<account>:account") of an account's erasure
// event, keyed events.AccountKey.
const accountAggregate = "account"

type erasedDoc struct {
	ID string    `bson:"_id"`
	At time.Time `bson:"at"`
}

// erasedAt returns when account was erased, or ok false when it was not.
func (s *Store) erasedAt(ctx context.Context, account string) (at time.Time, ok bool, err error) {
	if v, ok := s.erased.Load(account); ok {
		return v.(time.Time), true, nil
	}
	var d erasedDoc
	err = s.erasedAccounts.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the erasure marker of %s: %w", account, err)
	}
	s.erased.Store(account, d.At)
	return d.At, true, nil
}

// refuseErased answers ErrAccountErased for an erased account.
func (s *Store) refuseErased(ctx context.Context, account string) error {
	_, erased, err := s.erasedAt(ctx, account)
	if err == nil && erased {
		err = property.ErrAccountErased
	}
	return err
}

// knownErased tells, without a read, whether this process knows account to be erased.
func (s *Store) knownErased(account string) bool {
	_, ok := s.erased.Load(account)
	return ok
}

// Erase erases account (property.Accounts). Each step can be repeated, so a retry after a
// failure at any point finishes the erasure.
func (s *Store) Erase(ctx context.Context, account string) error {
	if err := s.markErased(ctx, account); err != nil {
		return err
	}
	s.hints.forgetAccount(account)
	recs, err := s.accountProperties(ctx, account, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	aggs := []string{account + ":" + settingsAggregate, account + ":" + accountAggregate}
	for _, r := range recs {
		aggs = append(aggs, r.ID)
	}
	intents, err := s.recordTombstones(ctx, aggs)
	defer func() {
		// Handed to the relay whatever happens: the loader answers them from the marker.
		for _, in := range intents {
			s.outbox.Done(in, nil)
		}
	}()
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := s.eraseProperty(ctx, r.ID); err != nil {
			return err
		}
	}
	if err := s.eraseFiles(ctx, bson.D{{Key: "metadata.account", Value: account}}); err != nil {
		return err
	}
	prefix := bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}
	own := bson.D{{Key: "_id", Value: account}}
	for _, d := range []struct {
		coll   string
		filter bson.D
	}{
		{collCodes, prefix}, {collCodes + "_locks", prefix},
		{collSettings, own}, {collSettings + "_locks", own},
		{collCreateLeases, own},
	} {
		if _, err := s.props.Database().Collection(d.coll).DeleteMany(ctx, d.filter); err != nil {
			return fmt.Errorf("erase %s of %s: %w", d.coll, account, err)
		}
	}
	// The tombstones go to the relay now. A write of another replica that landed before
	// its document was deleted may still be publishing its snapshot through that
	// replica's relay, and could land on the topic after them: once the outbox holds no
	// intent of the account any more (every snapshot of it published), the tombstones are
	// recorded once more, to come last. Bounded: an intent that stays (Kafka down, a
	// writer that died) is published by the sweep through the loader, as a tombstone.
	for _, in := range intents {
		s.outbox.Done(in, nil)
	}
	intents = nil
	if err := s.awaitPublished(ctx, account); err != nil {
		return err
	}
	intents, err = s.recordTombstones(ctx, aggs)
	return err
}

// publishWait bounds how long an erasure waits for the account's pending events to be
// published before it records its tombstones again; under the outbox lease, so that the
// first ones are not yet swept meanwhile when Kafka is down.
const publishWait = 3 * time.Second

// awaitPublished waits, up to publishWait, until the outbox holds no intent of account
// (an intent's id starts with its aggregate, "<account>:…").
func (s *Store) awaitPublished(ctx context.Context, account string) error {
	mine := bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}
	intents := s.props.Database().Collection(outbox.Collection)
	deadline := time.Now().Add(publishWait)
	for {
		n, err := intents.CountDocuments(ctx, mine)
		if err != nil {
			return fmt.Errorf("look for pending events of %s: %w", account, err)
		}
		if n == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// recordTombstones records an outbox intent for each of aggs; the loader answers each with
// a tombstone (or the erasure event). It returns those it recorded.
func (s *Store) recordTombstones(ctx context.Context, aggs []string) ([]outbox.Intent, error) {
	intents := make([]outbox.Intent, 0, len(aggs))
	for _, agg := range aggs {
		in, err := s.outbox.Begin(ctx, agg)
		if err != nil {
			return intents, fmt.Errorf("record the tombstone of %s: %w", agg, err)
		}
		intents = append(intents, in)
	}
	return intents, nil
}

// markErased records that account is erased, once: a retry keeps the first time.
func (s *Store) markErased(ctx context.Context, account string) error {
	_, err := s.erasedAccounts.InsertOne(ctx, erasedDoc{ID: account, At: s.now()})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("mark %s erased: %w", account, err)
	}
	_, _, err = s.erasedAt(ctx, account) // caches it
	return err
}

// eraseProperty deletes one property document, then the files of the photos it held: the
// document's last state, read as it is deleted, names every photo, even one added while
// the erasure ran. The document lock orders the deletion after any write of this process
// that is handing its snapshot to the relay (update), so that the tombstone follows it.
func (s *Store) eraseProperty(ctx context.Context, id string) error {
	unlock := s.locks.Lock(id)
	var rec Record
	err := s.props.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&rec)
	unlock()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("erase property %s: %w", id, err)
	}
	ids := bson.A{}
	for _, ph := range rec.Photos {
		for _, name := range photo.Names() {
			ids = append(ids, renditionID(ph.Key, name))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return s.eraseFiles(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
}

// eraseLate erases a property stored after its account's erasure began, and its code
// claim, and records its tombstone (its snapshot may have been handed to the relay). An
// error leaves it to a retry of the erasure, which finds the document.
func (s *Store) eraseLate(ctx context.Context, id, codeID string) {
	in, err := s.outbox.Begin(ctx, id)
	if err != nil {
		return
	}
	defer s.outbox.Done(in, nil)
	if s.eraseProperty(ctx, id) == nil {
		_, _ = s.codes.DeleteOne(ctx, bson.D{{Key: "_id", Value: codeID}})
	}
}

// eraseFiles deletes the media files filter selects: their chunks first, then the file
// document, so that a file cut short keeps the document (and its account) that finds it
// again.
func (s *Store) eraseFiles(ctx context.Context, filter bson.D) error {
	cur, err := s.media.GetFilesCollection().Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("find media files: %w", err)
	}
	var files []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &files); err != nil {
		return fmt.Errorf("find media files: %w", err)
	}
	for _, f := range files {
		if _, err := s.media.GetChunksCollection().DeleteMany(ctx, bson.D{{Key: "files_id", Value: f.ID}}); err != nil {
			return fmt.Errorf("erase media file %s: %w", f.ID, err)
		}
		if _, err := s.media.GetFilesCollection().DeleteOne(ctx, bson.D{{Key: "_id", Value: f.ID}}); err != nil {
			return fmt.Errorf("erase media file %s: %w", f.ID, err)
		}
	}
	return nil
}

// accountProperties reads the account's property documents, deleted ones included.
func (s *Store) accountProperties(ctx context.Context, account string, opts ...options.Lister[options.FindOptions]) ([]Record, error) {
	cur, err := s.props.Find(ctx, bson.D{{Key: "account_id", Value: account}}, opts...)
	if err != nil {
		return nil, fmt.Errorf("read the properties of %s: %w", account, err)
	}
	var recs []Record
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read the properties of %s: %w", account, err)
	}
	return recs, nil
}

// erasedMessages is what the loader publishes for an aggregate of an erased account: the
// erasure event for the account's own aggregate, a tombstone for any other.
func erasedMessages(account, rest, aggregate string, at time.Time) ([]events.Message, error) {
	if rest == accountAggregate {
		key := events.AccountKey(account)
		v, err := events.Encode(eventSource, contract.AccountErased, key, at, contract.AccountErasure{AccountID: account, ErasedAt: at})
		if err != nil {
			return nil, err
		}
		return []events.Message{{Topic: events.TopicProperty, Key: key, Value: v}}, nil
	}
	// Property aggregates are keyed as their events are ("<account>:<propertyId>"), and the
	// settings aggregate too ("<account>:settings").
	return []events.Message{{Topic: events.TopicProperty, Key: aggregate, Tombstone: true}}, nil
}
