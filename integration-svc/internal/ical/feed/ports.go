package feed

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// The port of the iCal feed domain: what it needs kept, declared here and implemented by
// the feed store over MongoDB. The poller and the HTTP adapter see Repository and these
// errors, never the store.

// Errors of the repository.
var (
	// ErrNotFound: the account has no such feed (or it is being deleted).
	ErrNotFound = errors.New("no such feed")
	// ErrTooMany: the property already has MaxPerProperty feeds.
	ErrTooMany = errors.New("too many feeds")
)

// Key is the id of an account's feed (Feed.ID): "<account>:<feed_id>".
func Key(account string, feedID int64) string {
	return account + ":" + strconv.FormatInt(feedID, 10)
}

// Repository keeps the accounts' feeds, the leases of their polls and the last answer of
// each feed's link.
type Repository interface {
	// Create stores a new feed, due at once, giving it its FeedID and ID; ErrTooMany when
	// its property already has MaxPerProperty feeds.
	Create(ctx context.Context, f *Feed) error
	// Get returns an account's feed; ErrNotFound when it has none (or it is being deleted).
	Get(ctx context.Context, account string, feedID int64) (*Feed, error)
	// List lists the account's feeds (propertyID > 0: that property's only).
	List(ctx context.Context, account string, propertyID int64) ([]Feed, error)
	// Update applies c to the feed's settings; ErrNotFound when there is no such feed.
	Update(ctx context.Context, account string, feedID int64, c Change, now time.Time) (*Feed, error)
	// MarkDeleting marks the feed deleted, its removal due at once; ErrNotFound when there
	// is no such feed.
	MarkDeleting(ctx context.Context, account string, feedID int64, now time.Time) (*Feed, error)
	// Remove deletes a deleted feed the caller holds the lease of, with its kept answer.
	Remove(ctx context.Context, f *Feed) error
	// Lease takes feed key (Key) for a poll until now+d unless another poll holds it; nil
	// when it is held or gone.
	Lease(ctx context.Context, key string, now time.Time, d time.Duration) (*Feed, error)
	// LeaseDue takes one feed that is due, or returns nil when none is.
	LeaseDue(ctx context.Context, now time.Time, d time.Duration) (*Feed, error)
	// Finish records a poll's outcome (and, fetched not nil, the answer kept for the next
	// 304) and releases the lease, if the poll still holds it; it reports whether the
	// outcome was recorded.
	Finish(ctx context.Context, f *Feed, polledURL string, fetched *Fetched) (bool, error)
	// LastFetched returns the answer kept for feed key, without its events unless
	// withEvents; nil when none is kept.
	LastFetched(ctx context.Context, key string, withEvents bool) (*Fetched, error)
	// Erase deletes every feed of an account, with its kept answers and leases.
	Erase(ctx context.Context, account string) error
}

// Change is an update of a feed's settings; nil members are left as they are.
type Change struct {
	URL             *string
	Name            *string
	IntervalMinutes *int
	Enabled         *bool
}

// Fetched is the last answer of a feed's link that a poll synced: its validators, sent back
// as If-None-Match and If-Modified-Since, and its current events with their dates as
// written (at most MaxEvents), synced again when the link answers 304. It names the link
// it came from, so that a new link starts without validators.
type Fetched struct {
	URL          string
	ETag         string
	LastModified string
	Events       []Event
	Skipped      int // the file's unusable events (Calendar.Skipped)
	At           time.Time
}
