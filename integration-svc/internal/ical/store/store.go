// Package store keeps the iCal feeds of every account in MongoDB (collection "feeds";
// docs/ical.md, "Import").
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/libs/mongostore"
)

// Collections.
const (
	Feeds    = "feeds"
	Leases   = "feed_leases"
	Counters = "feed_counters"
	Fetches  = "feed_fetches"
)

// Store holds the feeds.
type Store struct {
	feeds   *mongo.Collection
	leases  *mongo.Collection
	fetches *mongo.Collection
	ids     *mongostore.Sequence
}

// fetchedDoc is a feed's feed.Fetched (collection Fetches, _id the feed's). It is apart
// from the feed so that the account's reads never carry up to a few MB of events. A poll
// writes it only while it holds the feed (Finish).
type fetchedDoc struct {
	ID           string       `bson:"_id"`
	URL          string       `bson:"url"`
	ETag         string       `bson:"etag"`
	LastModified string       `bson:"last_modified"`
	Events       []feed.Event `bson:"events"`
	Skipped      int          `bson:"skipped"`
	At           time.Time    `bson:"at"`
}

// Open declares the collections and indexes and returns the store.
func Open(ctx context.Context, db *mongo.Database) (*Store, error) {
	err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(Feeds, Leases), Counters, Fetches), []mongostore.Index{
		{Collection: Feeds, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "property_id", Value: 1}}},
		{Collection: Feeds, Keys: bson.D{{Key: "status.next_poll_at", Value: 1}}},
	})
	if err != nil {
		return nil, err
	}
	return &Store{feeds: db.Collection(Feeds), leases: db.Collection(Leases), fetches: db.Collection(Fetches),
		ids: mongostore.NewSequence(db.Collection(Counters), "feed", 10)}, nil
}

// The store implements the feed domain's port.
var _ feed.Repository = (*Store)(nil)

// Create stores a new feed, due at once, unless its property already has
// feed.MaxPerProperty feeds (feed.ErrTooMany). The count and the insert are not one
// transaction: two creates at the same moment may exceed the limit by one each.
func (s *Store) Create(ctx context.Context, f *feed.Feed) error {
	n, err := s.feeds.CountDocuments(ctx, bson.D{{Key: "account_id", Value: f.AccountID},
		{Key: "property_id", Value: f.PropertyID}, {Key: "deleting", Value: false}})
	if err != nil {
		return err
	}
	if n >= feed.MaxPerProperty {
		return feed.ErrTooMany
	}
	id, err := s.ids.Next(ctx)
	if err != nil {
		return err
	}
	f.FeedID = id
	f.ID = feed.Key(f.AccountID, id)
	_, err = s.feeds.InsertOne(ctx, f)
	return err
}

// Get returns an account's feed (not one being deleted).
func (s *Store) Get(ctx context.Context, account string, feedID int64) (*feed.Feed, error) {
	f, err := s.read(ctx, feed.Key(account, feedID))
	if err != nil {
		return nil, err
	}
	if f == nil || f.Deleting {
		return nil, feed.ErrNotFound
	}
	return f, nil
}

// read returns feed document id as stored, deleting or not; nil when there is none. Its
// filter is the _id alone: FerretDB on SQLite reads any other filter by decoding every
// document of the collection.
func (s *Store) read(ctx context.Context, id string) (*feed.Feed, error) {
	var f feed.Feed
	err := s.feeds.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&f)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// change runs fn on feed document id as stored now (nil when there is none) and sets the
// fields fn returns (none: nothing is written), holding the feed's lease
// (mongostore.WithLease) from the read to the write.
//
// Every read-change-write of a feed document goes through here or holds that lease: the
// account's update and delete and the polls' lease and outcome run in several replicas at
// once, and FerretDB applies an update as a read and a write of the whole document (a
// condition in the filter is checked on that read), so without the lease a poll's outcome
// wrote deleting:false back over a delete, or an old name over an update, and an update
// undid a poll's outcome. The lease is short (one read and one write); the poll's own hold
// on the feed is the Leases document.
func (s *Store) change(ctx context.Context, id string, fn func(f *feed.Feed) (bson.D, error)) error {
	return mongostore.WithLease(ctx, s.feeds, id, func() error {
		taken := time.Now()
		f, err := s.read(ctx, id)
		if err != nil {
			return err
		}
		set, err := fn(f)
		if err != nil || len(set) == 0 {
			return err
		}
		return s.write(ctx, id, taken, set)
	})
}

// write sets fields of feed document id under its lease taken at taken. A writer that finds
// half the lease gone gives up rather than write after it passed to another writer.
func (s *Store) write(ctx context.Context, id string, taken time.Time, set bson.D) error {
	if time.Since(taken) > mongostore.SnapshotLease/2 {
		return fmt.Errorf("feed %s: its lease is running out; not written", id)
	}
	_, err := s.feeds.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}})
	return err
}

// List returns an account's feeds, of one property when propertyID > 0, by feed id.
func (s *Store) List(ctx context.Context, account string, propertyID int64) ([]feed.Feed, error) {
	filter := bson.D{{Key: "account_id", Value: account}, {Key: "deleting", Value: false}}
	if propertyID > 0 {
		filter = append(filter, bson.E{Key: "property_id", Value: propertyID})
	}
	cur, err := s.feeds.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "feed_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	out := []feed.Feed{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Update applies c. A new link or a feed enabled again is due at once (a new link has no
// validators: the kept answer names the old link); a new interval moves the next poll of a healthy
// feed to the last poll plus the interval.
func (s *Store) Update(ctx context.Context, account string, feedID int64, c feed.Change, now time.Time) (*feed.Feed, error) {
	err := s.change(ctx, feed.Key(account, feedID), func(f *feed.Feed) (bson.D, error) {
		if f == nil || f.Deleting {
			return nil, feed.ErrNotFound
		}
		set := bson.D{{Key: "updated_at", Value: now}}
		due := false
		if c.URL != nil && *c.URL != f.URL {
			set = append(set, bson.E{Key: "url", Value: *c.URL})
			due = true
		}
		if c.Name != nil {
			set = append(set, bson.E{Key: "name", Value: *c.Name})
		}
		if c.IntervalMinutes != nil {
			set = append(set, bson.E{Key: "interval_minutes", Value: *c.IntervalMinutes})
		}
		if c.Enabled != nil {
			set = append(set, bson.E{Key: "enabled", Value: *c.Enabled})
			due = due || (*c.Enabled && !f.Enabled)
		}
		// Each path once: MongoDB refuses an update that sets one path twice.
		switch {
		case due:
			set = append(set, bson.E{Key: "status.next_poll_at", Value: now}, bson.E{Key: "status.consecutive_failures", Value: 0})
		case c.IntervalMinutes != nil && f.Status.ConsecutiveFailures == 0 && f.Status.LastPolledAt != nil:
			set = append(set, bson.E{Key: "status.next_poll_at", Value: f.Status.LastPolledAt.Add(time.Duration(*c.IntervalMinutes) * time.Minute)})
		}
		return set, nil
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, account, feedID)
}

// MarkDeleting marks a feed deleted: it is no longer listed nor polled, and the poller
// removes its blocks (at once) and then the document.
func (s *Store) MarkDeleting(ctx context.Context, account string, feedID int64, now time.Time) (*feed.Feed, error) {
	var out *feed.Feed
	err := s.change(ctx, feed.Key(account, feedID), func(f *feed.Feed) (bson.D, error) {
		if f == nil || f.Deleting {
			return nil, feed.ErrNotFound
		}
		f.Deleting, f.UpdatedAt, f.Status.NextPollAt, f.Status.ConsecutiveFailures = true, now, now, 0
		out = f
		return bson.D{{Key: "deleting", Value: true}, {Key: "updated_at", Value: now},
			{Key: "status.next_poll_at", Value: now}, {Key: "status.consecutive_failures", Value: 0}}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Remove deletes the document of a feed whose poll holds it (a deleted feed whose blocks
// are removed, or a feed booking-svc says was removed), and releases the poll's hold.
func (s *Store) Remove(ctx context.Context, f *feed.Feed) error {
	err := mongostore.WithLease(ctx, s.feeds, f.ID, func() error {
		cur, err := s.read(ctx, f.ID)
		if err != nil || cur == nil || cur.LeaseToken != f.LeaseToken {
			return err
		}
		if _, err := s.fetches.DeleteOne(ctx, bson.D{{Key: "_id", Value: f.ID}}); err != nil {
			return err
		}
		_, err = s.feeds.DeleteOne(ctx, bson.D{{Key: "_id", Value: f.ID}})
		return err
	})
	if err != nil {
		return err
	}
	return s.unlock(ctx, f.ID, f.LeaseToken)
}

// Lease takes the feed for a poll until now+d unless another poll holds it; it returns
// the feed with its lease token, or nil when the feed is held (or gone).
func (s *Store) Lease(ctx context.Context, docID string, now time.Time, d time.Duration) (*feed.Feed, error) {
	token, err := s.lock(ctx, docID, now, d)
	if err != nil || token == "" {
		return nil, err
	}
	return s.leased(ctx, docID, false, token, now, d)
}

// dueFilter selects the feeds due at now: enabled with next_poll_at reached, or deleted
// with their removal due.
func dueFilter(now time.Time) bson.D {
	return bson.D{
		{Key: "status.next_poll_at", Value: bson.D{{Key: "$lte", Value: now}}},
		{Key: "$or", Value: bson.A{bson.D{{Key: "enabled", Value: true}}, bson.D{{Key: "deleting", Value: true}}}},
	}
}

// isDue is dueFilter for a feed read.
func isDue(f *feed.Feed, now time.Time) bool {
	return !f.Status.NextPollAt.After(now) && (f.Enabled || f.Deleting)
}

// LeaseDue takes one feed that is due (enabled and next_poll_at reached, or deleted and
// its removal due), or returns nil when none is.
func (s *Store) LeaseDue(ctx context.Context, now time.Time, d time.Duration) (*feed.Feed, error) {
	filter := append(bson.D{{Key: "lease_until", Value: bson.D{{Key: "$lt", Value: now}}}}, dueFilter(now)...)
	cur, err := s.feeds.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "status.next_poll_at", Value: 1}}).
		SetLimit(20).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var ids []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &ids); err != nil {
		return nil, err
	}
	for _, c := range ids {
		token, err := s.lock(ctx, c.ID, now, d)
		if err != nil {
			return nil, err
		}
		if token == "" {
			continue
		}
		f, err := s.leased(ctx, c.ID, true, token, now, d)
		if err != nil || f != nil {
			return f, err
		}
	}
	return nil, nil
}

// leaseDoc is a poll's exclusive hold on one feed (collection Leases, _id the feed's).
// The hold is the insert of this document, which only one poller can make: a conditional
// update is not enough, as FerretDB runs it as a read and a write.
type leaseDoc struct {
	ID    string    `bson:"_id"`
	Token string    `bson:"token"`
	Until time.Time `bson:"until"`
}

// lock takes the hold on a feed, taking over one past its end; "" when another holds it.
// Taking over and releasing read a hold and delete it, so both run under the hold
// document's lease (mongostore.WithLease): FerretDB checks a delete's filter on a read made
// before, and a takeover that read an expired hold could otherwise delete the hold another
// poller had just taken over (two polls of one feed at once, TestLease about 1 run in 20).
func (s *Store) lock(ctx context.Context, docID string, now time.Time, d time.Duration) (string, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	for range 2 {
		_, err := s.leases.InsertOne(ctx, leaseDoc{ID: docID, Token: token, Until: now.Add(d)})
		if err == nil {
			return token, nil
		}
		if !mongostore.IsDuplicate(err) {
			return "", err
		}
		free := false
		err = mongostore.WithLease(ctx, s.leases, docID, func() error {
			var held leaseDoc
			err := s.leases.FindOne(ctx, bson.D{{Key: "_id", Value: docID}}).Decode(&held)
			switch {
			case errors.Is(err, mongo.ErrNoDocuments):
				free = true
				return nil
			case err != nil || !held.Until.Before(now):
				return err
			}
			free = true
			_, err = s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: docID}})
			return err
		})
		if err != nil || !free {
			return "", err
		}
	}
	return "", nil
}

// unlock releases the hold token, if it is still the feed's.
func (s *Store) unlock(ctx context.Context, docID, token string) error {
	return mongostore.WithLease(ctx, s.leases, docID, func() error {
		var held leaseDoc
		err := s.leases.FindOne(ctx, bson.D{{Key: "_id", Value: docID}}).Decode(&held)
		if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && held.Token != token) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: docID}})
		return err
	})
}

// leased records the hold in the feed (still due, when due is set: it was looked up as
// due) and returns it; when the feed is gone or no longer due, the hold is released.
func (s *Store) leased(ctx context.Context, docID string, due bool, token string, now time.Time, d time.Duration) (*feed.Feed, error) {
	var out *feed.Feed
	err := s.change(ctx, docID, func(f *feed.Feed) (bson.D, error) {
		if f == nil || (due && !isDue(f, now)) {
			return nil, nil
		}
		f.LeaseUntil, f.LeaseToken = now.Add(d), token
		out = f
		return bson.D{{Key: "lease_until", Value: f.LeaseUntil}, {Key: "lease_token", Value: token}}, nil
	})
	if err == nil && out == nil {
		err = s.unlock(ctx, docID, token)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Finish records a poll's outcome and releases the lease, if the poll still holds it.
// When the feed's link changed during the poll, the outcome is dropped (the new link is
// due) and only the lease is released; so too when the feed was deleted during the poll
// (its removal is due at once). Only the poll's own fields are written (status, reported
// conflicts, lease) and, when fetched is not nil, the answer kept for the next 304: the
// account's settings stay as they are now. When the interval changed during the poll, a
// healthy feed's next poll follows the new one. It reports whether the outcome was
// recorded.
func (s *Store) Finish(ctx context.Context, f *feed.Feed, polledURL string, fetched *feed.Fetched) (bool, error) {
	recorded := false
	err := mongostore.WithLease(ctx, s.feeds, f.ID, func() error {
		taken := time.Now()
		cur, err := s.read(ctx, f.ID)
		if err != nil || cur == nil || cur.LeaseToken != f.LeaseToken {
			return err
		}
		release := bson.D{{Key: "lease_until", Value: time.Time{}}, {Key: "lease_token", Value: ""}}
		if cur.URL != polledURL || cur.Deleting != f.Deleting {
			return s.write(ctx, f.ID, taken, release)
		}
		st := f.Status
		if cur.IntervalMinutes != f.IntervalMinutes && st.LastPolledAt != nil &&
			st.NextPollAt.Equal(st.LastPolledAt.Add(time.Duration(f.IntervalMinutes)*time.Minute)) {
			st.NextPollAt = st.LastPolledAt.Add(time.Duration(cur.IntervalMinutes) * time.Minute)
		}
		seen := f.SeenConflicts()
		if seen == nil {
			seen = []feed.SeenConflict{}
		}
		if err := s.write(ctx, f.ID, taken, append(bson.D{{Key: "status", Value: st}, {Key: "seen_conflicts", Value: seen},
			{Key: "reported", Value: []string{}}}, release...)); err != nil {
			return err
		}
		if fetched != nil {
			if err := s.keep(ctx, f.ID, polledURL, fetched); err != nil {
				return err
			}
		}
		recorded = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return recorded, s.unlock(ctx, f.ID, f.LeaseToken)
}

// keep stores the answer kept for feed document id (one document: its validators always go
// with their events). Account erasure deletes feeds without their lease, so a feed erased
// just before the write is looked up after it, and the answer deleted with it then.
func (s *Store) keep(ctx context.Context, id, url string, fetched *feed.Fetched) error {
	doc := fetchedDoc{ID: id, URL: url, ETag: fetched.ETag, LastModified: fetched.LastModified,
		Events: fetched.Events, Skipped: fetched.Skipped, At: fetched.At}
	if doc.Events == nil {
		doc.Events = []feed.Event{}
	}
	if _, err := s.fetches.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, doc, options.Replace().SetUpsert(true)); err != nil {
		return err
	}
	if cur, err := s.read(ctx, id); err != nil || cur != nil {
		return err
	}
	_, err := s.fetches.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	return err
}

// LastFetched returns the answer kept for feed document id, without its events unless
// withEvents; nil when none is kept.
func (s *Store) LastFetched(ctx context.Context, id string, withEvents bool) (*feed.Fetched, error) {
	opts := options.FindOne()
	if !withEvents {
		opts.SetProjection(bson.D{{Key: "events", Value: 0}})
	}
	var d fetchedDoc
	err := s.fetches.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, opts).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &feed.Fetched{URL: d.URL, ETag: d.ETag, LastModified: d.LastModified, Events: d.Events, Skipped: d.Skipped, At: d.At}, nil
}

// Erase deletes every feed of an account, with its kept answers, leases and locks.
func (s *Store) Erase(ctx context.Context, account string) error {
	if _, err := s.feeds.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
		return err
	}
	for _, c := range []string{Fetches, Leases, Feeds + "_locks", Leases + "_locks"} {
		if _, err := s.feeds.Database().Collection(c).DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
			return err
		}
	}
	return nil
}
