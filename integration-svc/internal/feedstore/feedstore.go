// Package feedstore keeps the iCal feeds of every account in MongoDB (collection "feeds";
// docs/ical.md, "Import").
package feedstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/feed"
	"github.com/vros/vros/libs/mongostore"
)

// Collections.
const (
	Feeds    = "feeds"
	Leases   = "feed_leases"
	Counters = "feed_counters"
)

// Errors.
var (
	ErrNotFound = errors.New("no such feed")
	// ErrTooMany: the property already has feed.MaxPerProperty feeds.
	ErrTooMany = errors.New("too many feeds")
)

// Store holds the feeds.
type Store struct {
	feeds  *mongo.Collection
	leases *mongo.Collection
	ids    *mongostore.Sequence
}

// Open declares the collections and indexes and returns the store.
func Open(ctx context.Context, db *mongo.Database) (*Store, error) {
	err := mongostore.Ensure(ctx, db, []string{Feeds, Leases, Counters}, []mongostore.Index{
		{Collection: Feeds, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "property_id", Value: 1}}},
		{Collection: Feeds, Keys: bson.D{{Key: "status.next_poll_at", Value: 1}}},
	})
	if err != nil {
		return nil, err
	}
	return &Store{feeds: db.Collection(Feeds), leases: db.Collection(Leases), ids: mongostore.NewSequence(db.Collection(Counters), "feed", 10)}, nil
}

// DocID is the document id of an account's feed.
func DocID(account string, feedID int64) string {
	return account + ":" + strconv.FormatInt(feedID, 10)
}

// Create stores a new feed, due at once, unless its property already has
// feed.MaxPerProperty feeds (ErrTooMany). The count and the insert are not one
// transaction: two creates at the same moment may exceed the limit by one each.
func (s *Store) Create(ctx context.Context, f *feed.Feed) error {
	n, err := s.feeds.CountDocuments(ctx, bson.D{{Key: "account_id", Value: f.AccountID},
		{Key: "property_id", Value: f.PropertyID}, {Key: "deleting", Value: false}})
	if err != nil {
		return err
	}
	if n >= feed.MaxPerProperty {
		return ErrTooMany
	}
	id, err := s.ids.Next(ctx)
	if err != nil {
		return err
	}
	f.FeedID = id
	f.ID = DocID(f.AccountID, id)
	_, err = s.feeds.InsertOne(ctx, f)
	return err
}

// Get returns an account's feed (not one being deleted).
func (s *Store) Get(ctx context.Context, account string, feedID int64) (*feed.Feed, error) {
	var f feed.Feed
	err := s.feeds.FindOne(ctx, bson.D{{Key: "_id", Value: DocID(account, feedID)}, {Key: "deleting", Value: false}}).Decode(&f)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
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

// Change is an update of a feed's settings; nil members are left as they are.
type Change struct {
	URL             *string
	Name            *string
	IntervalMinutes *int
	Enabled         *bool
}

// Update applies c. A new link or a feed enabled again is due at once (and a new link
// forgets the old link's validators); a new interval moves the next poll of a healthy
// feed to the last poll plus the interval.
func (s *Store) Update(ctx context.Context, account string, feedID int64, c Change, now time.Time) (*feed.Feed, error) {
	f, err := s.Get(ctx, account, feedID)
	if err != nil {
		return nil, err
	}
	set := bson.D{{Key: "updated_at", Value: now}}
	due := false
	if c.URL != nil && *c.URL != f.URL {
		set = append(set, bson.E{Key: "url", Value: *c.URL}, bson.E{Key: "etag", Value: ""}, bson.E{Key: "last_modified", Value: ""},
			bson.E{Key: "status.consecutive_failures", Value: 0})
		due = true
	}
	if c.Name != nil {
		set = append(set, bson.E{Key: "name", Value: *c.Name})
	}
	if c.IntervalMinutes != nil {
		set = append(set, bson.E{Key: "interval_minutes", Value: *c.IntervalMinutes})
		if !due && f.Status.ConsecutiveFailures == 0 && f.Status.LastPolledAt != nil {
			set = append(set, bson.E{Key: "status.next_poll_at", Value: f.Status.LastPolledAt.Add(time.Duration(*c.IntervalMinutes) * time.Minute)})
		}
	}
	if c.Enabled != nil {
		set = append(set, bson.E{Key: "enabled", Value: *c.Enabled})
		if *c.Enabled && !f.Enabled {
			due = true
			set = append(set, bson.E{Key: "status.consecutive_failures", Value: 0})
		}
	}
	if due {
		set = append(set, bson.E{Key: "status.next_poll_at", Value: now})
	}
	res, err := s.feeds.UpdateOne(ctx, bson.D{{Key: "_id", Value: f.ID}, {Key: "deleting", Value: false}}, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return nil, err
	}
	if res.MatchedCount == 0 {
		return nil, ErrNotFound
	}
	return s.Get(ctx, account, feedID)
}

// MarkDeleting marks a feed deleted: it is no longer listed nor polled, and the poller
// removes its blocks (at once) and then the document.
func (s *Store) MarkDeleting(ctx context.Context, account string, feedID int64, now time.Time) (*feed.Feed, error) {
	var f feed.Feed
	err := s.feeds.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: DocID(account, feedID)}, {Key: "deleting", Value: false}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "deleting", Value: true}, {Key: "updated_at", Value: now},
			{Key: "status.next_poll_at", Value: now}, {Key: "status.consecutive_failures", Value: 0}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&f)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// Remove deletes the document of a deleted feed, if the lease token still holds it.
func (s *Store) Remove(ctx context.Context, f *feed.Feed) error {
	if _, err := s.feeds.DeleteOne(ctx, bson.D{{Key: "_id", Value: f.ID}, {Key: "deleting", Value: true}, {Key: "lease_token", Value: f.LeaseToken}}); err != nil {
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
	return s.leased(ctx, bson.D{{Key: "_id", Value: docID}}, token, now, d)
}

// LeaseDue takes one feed that is due (enabled and next_poll_at reached, or deleted and
// its removal due), or returns nil when none is.
func (s *Store) LeaseDue(ctx context.Context, now time.Time, d time.Duration) (*feed.Feed, error) {
	due := bson.D{
		{Key: "status.next_poll_at", Value: bson.D{{Key: "$lte", Value: now}}},
		{Key: "$or", Value: bson.A{bson.D{{Key: "enabled", Value: true}}, bson.D{{Key: "deleting", Value: true}}}},
	}
	filter := append(bson.D{{Key: "lease_until", Value: bson.D{{Key: "$lt", Value: now}}}}, due...)
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
		f, err := s.leased(ctx, append(bson.D{{Key: "_id", Value: c.ID}}, due...), token, now, d)
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
		var held leaseDoc
		err = s.leases.FindOne(ctx, bson.D{{Key: "_id", Value: docID}}).Decode(&held)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
		case err != nil:
			return "", err
		case held.Until.Before(now):
			if _, err := s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: docID}, {Key: "token", Value: held.Token}}); err != nil {
				return "", err
			}
		default:
			return "", nil
		}
	}
	return "", nil
}

func (s *Store) unlock(ctx context.Context, docID, token string) error {
	_, err := s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: docID}, {Key: "token", Value: token}})
	return err
}

// leased records the hold in the feed (filter: the feed, still due when it was looked up
// as due) and returns it; when the feed no longer matches, the hold is released.
func (s *Store) leased(ctx context.Context, filter bson.D, token string, now time.Time, d time.Duration) (*feed.Feed, error) {
	var f feed.Feed
	err := s.feeds.FindOneAndUpdate(ctx, filter,
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: now.Add(d)}, {Key: "lease_token", Value: token}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&f)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, s.unlock(ctx, filter[0].Value.(string), token)
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// Finish records a poll's outcome and releases the lease, if the poll still holds it.
// When the feed's link changed during the poll, the outcome is dropped (the new link is
// due) and only the lease is released; so too when the feed was deleted during the poll
// (its removal is due at once). It reports whether the outcome was recorded.
func (s *Store) Finish(ctx context.Context, f *feed.Feed, polledURL string) (bool, error) {
	res, err := s.feeds.UpdateOne(ctx, bson.D{{Key: "_id", Value: f.ID}, {Key: "lease_token", Value: f.LeaseToken},
		{Key: "url", Value: polledURL}, {Key: "deleting", Value: f.Deleting}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: f.Status}, {Key: "etag", Value: f.ETag},
			{Key: "last_modified", Value: f.LastModified}, {Key: "reported", Value: f.Reported},
			{Key: "lease_until", Value: time.Time{}}, {Key: "lease_token", Value: ""}}}})
	if err != nil {
		return false, err
	}
	if res.MatchedCount == 0 {
		_, err = s.feeds.UpdateOne(ctx, bson.D{{Key: "_id", Value: f.ID}, {Key: "lease_token", Value: f.LeaseToken}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: time.Time{}}, {Key: "lease_token", Value: ""}}}})
		if err != nil {
			return false, err
		}
	}
	return res.MatchedCount == 1, s.unlock(ctx, f.ID, f.LeaseToken)
}

// Erase deletes every feed of an account.
func (s *Store) Erase(ctx context.Context, account string) error {
	if _, err := s.feeds.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
		return err
	}
	_, err := s.leases.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}})
	return err
}
