package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// How listbooking reads one account's bookings without reading any other account's
// (docs/booking.md, "Listing bookings"), on every store alike: FerretDB evaluates every
// filter but a lone `_id` in Go over the whole collection, so a query on the bookings
// collection would read every tenant's bookings there. Each account's bookings are listed
// in a collection of its own, "booking_list.<accountId>": one small entry per listed
// booking (the fields a list filters on and the version), written with every change of the
// booking. The filter runs over that collection only, and the page is then read from the
// bookings by `_id`; an entry found older than its booking is rewritten on the spot. One
// path for every store, so the one `make test` runs is the one production runs.
//
// An entry is written after its booking changed, by the writer or, if the writer stopped in
// between, by the outbox relay, which reads the booking again (Snapshot): a crash leaves an
// entry stale for no longer than the outbox lease.

const (
	listPrefix = "booking_list."
	// listMarker in counters records that every booking has its list entry.
	listMarker = "booking_list_filled"
)

// listEntry is what the per-account list keeps of a booking: the fields a list filters on,
// under the names of the booking document, so that one filter serves both collections.
type listEntry struct {
	ID         string     `bson:"_id"` // the booking id, as text
	AccountID  string     `bson:"account_id"`
	BookingID  int64      `bson:"booking_id"`
	Status     string     `bson:"status"`
	Version    int64      `bson:"version"`
	UserID     int64      `bson:"user_id,omitempty"`
	PropertyID int64      `bson:"property_id"`
	BrandID    int64      `bson:"brand_id,omitempty"`
	Checkin    string     `bson:"checkin"`
	Checkout   string     `bson:"checkout"`
	Guest      guestEntry `bson:"guest"`
}

type guestEntry struct {
	FirstName string `bson:"first_name"`
	LastName  string `bson:"last_name"`
	Email     string `bson:"email"`
}

func entryOf(b BookingRec) listEntry {
	return listEntry{ID: strconv.FormatInt(b.BookingID, 10), AccountID: b.AccountID, BookingID: b.BookingID, Status: b.Status,
		Version: b.Version, UserID: b.UserID, PropertyID: b.PropertyID, BrandID: b.BrandID, Checkin: b.Checkin, Checkout: b.Checkout,
		Guest: guestEntry{FirstName: b.Guest.FirstName, LastName: b.Guest.LastName, Email: b.Guest.Email}}
}

// setupLists fills the list entries of bookings written before the lists existed (once per
// database).
func (s *Store) setupLists(ctx context.Context) error {
	err := s.counters.FindOne(ctx, bson.D{{Key: "_id", Value: listMarker}}).Err()
	if err == nil {
		return nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("booking lists: %w", err)
	}
	// One pass over every booking, at the first start with per-account lists.
	cur, err := s.bookings.Find(ctx, bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{booking.StatusReserved, booking.StatusCancelled}}}}})
	if err != nil {
		return fmt.Errorf("booking lists: %w", err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var b BookingRec
		if err := cur.Decode(&b); err != nil {
			return fmt.Errorf("booking lists: %w", err)
		}
		if err := s.putEntry(ctx, entryOf(b)); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("booking lists: %w", err)
	}
	_, err = s.counters.InsertOne(ctx, bson.D{{Key: "_id", Value: listMarker}})
	if err != nil && !isDuplicate(err) {
		return fmt.Errorf("booking lists: %w", err)
	}
	return nil
}

func (s *Store) listOf(account string) *mongo.Collection {
	return s.db.Collection(listPrefix + collectionSafe(account))
}

// collectionSafe keeps an account id usable in a collection name.
func collectionSafe(account string) string {
	for _, r := range account {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return fmt.Sprintf("x%x", account)
		}
	}
	return account
}

// listed writes the list entry of b. Pending and failed attempts are not listed.
func (s *Store) listed(ctx context.Context, b BookingRec) error {
	if b.Status != booking.StatusReserved && b.Status != booking.StatusCancelled {
		return nil
	}
	// Read again under the entry's lock: the entry is then the newest state, whatever order
	// the writers of this booking reach here in (the embedded store rewrites a document
	// whole, so the last write must carry the newest state).
	unlock := s.listLocks.Lock(listPrefix + docID(b.AccountID, b.BookingID))
	defer unlock()
	cur, err := s.booking(ctx, b.AccountID, b.BookingID)
	if err != nil {
		return fmt.Errorf("list entry of booking %d: %w", b.BookingID, err)
	}
	return s.putEntry(ctx, entryOf(cur))
}

// listedAs writes the list entry of b as it is: for a writer that holds b's document lock
// from its write to here (Update), so that no newer state of this process can have been
// written in between; a relay's listed, which reads the booking under the entry's lock,
// runs before or after it and writes what it read, never older than b.
func (s *Store) listedAs(ctx context.Context, b BookingRec) error {
	if b.Status != booking.StatusReserved && b.Status != booking.StatusCancelled {
		return nil
	}
	unlock := s.listLocks.Lock(listPrefix + docID(b.AccountID, b.BookingID))
	defer unlock()
	return s.putEntry(ctx, entryOf(b))
}

// insertEntry writes the entry of a booking just inserted: one insert, no read (the entry
// of a new booking cannot exist, but for a retry that wrote it: then as listed).
func (s *Store) insertEntry(ctx context.Context, b BookingRec) error {
	_, err := s.listOf(b.AccountID).InsertOne(ctx, entryOf(b))
	if isDuplicate(err) {
		return s.listed(ctx, b)
	}
	if err != nil {
		return fmt.Errorf("list entry of booking %d: %w", b.BookingID, err)
	}
	return nil
}

// Relist rewrites the list entry of b, whose writer may have stopped before writing it.
func (s *Store) Relist(ctx context.Context, b booking.Booking) error { return s.listed(ctx, recOf(b)) }

func (s *Store) putEntry(ctx context.Context, e listEntry) error {
	_, err := s.listOf(e.AccountID).ReplaceOne(ctx, bson.D{{Key: "_id", Value: e.ID}}, e, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("list entry of booking %d: %w", e.BookingID, err)
	}
	return nil
}

// query is the filter f of account's list entries.
func query(account string, f booking.ListFilter) bson.D {
	q := bson.D{{Key: "account_id", Value: account},
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{booking.StatusReserved, booking.StatusCancelled}}}}}
	for _, c := range []struct {
		key string
		v   int64
	}{{"user_id", f.UserID}, {"booking_id", f.BookingID}, {"property_id", f.PropertyID}, {"brand_id", f.BrandID}} {
		if c.v != 0 {
			q = append(q, bson.E{Key: c.key, Value: c.v})
		}
	}
	if f.To != "" {
		q = append(q, bson.E{Key: "checkin", Value: bson.D{{Key: "$lt", Value: f.To}}})
	}
	if f.From != "" {
		q = append(q, bson.E{Key: "checkout", Value: bson.D{{Key: "$gt", Value: f.From}}})
	}
	if f.Keyword != "" {
		// A literal substring, case-insensitive: the keyword is quoted, never a pattern.
		re := bson.Regex{Pattern: quoteMeta(f.Keyword), Options: "i"}
		q = append(q, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "guest.first_name", Value: re}}, bson.D{{Key: "guest.last_name", Value: re}}, bson.D{{Key: "guest.email", Value: re}},
		}})
	}
	return q
}

// matches is query in Go, to check a booking read after its entry matched.
func matches(f booking.ListFilter, b BookingRec) bool {
	kw := strings.ToLower(f.Keyword)
	return (b.Status == booking.StatusReserved || b.Status == booking.StatusCancelled) &&
		(f.UserID == 0 || b.UserID == f.UserID) && (f.BookingID == 0 || b.BookingID == f.BookingID) &&
		(f.PropertyID == 0 || b.PropertyID == f.PropertyID) && (f.BrandID == 0 || b.BrandID == f.BrandID) &&
		(f.To == "" || b.Checkin < f.To) && (f.From == "" || b.Checkout > f.From) &&
		(kw == "" || strings.Contains(strings.ToLower(b.Guest.FirstName), kw) ||
			strings.Contains(strings.ToLower(b.Guest.LastName), kw) || strings.Contains(strings.ToLower(b.Guest.Email), kw))
}

// List returns the account's bookings that match f, newest first, and how many match.
// Pending and failed attempts are not bookings and never listed.
func (s *Store) List(ctx context.Context, account string, f booking.ListFilter) ([]booking.Booking, int64, error) {
	cur, err := s.listOf(account).Find(ctx, query(account, f))
	if err != nil {
		return nil, 0, fmt.Errorf("list bookings: %w", err)
	}
	var entries []listEntry
	if err := cur.All(ctx, &entries); err != nil {
		return nil, 0, fmt.Errorf("list bookings: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].BookingID > entries[j].BookingID })
	total := int64(len(entries))
	from := min(f.Skip, total)
	to := total
	if f.Limit > 0 {
		to = min(from+f.Limit, total)
	}
	out := make([]booking.Booking, 0, to-from)
	for _, e := range entries[from:to] {
		b, err := s.booking(ctx, account, e.BookingID)
		if errors.Is(err, booking.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if b.Version != e.Version {
			// Behind its booking (a writer stopped before writing it): repair it now.
			if err := s.listed(ctx, b); err != nil {
				return nil, 0, err
			}
			if !matches(f, b) {
				total--
				continue
			}
		}
		out = append(out, bookingOf(b))
	}
	return out, total, nil
}

func isDuplicate(err error) bool { return mongo.IsDuplicateKeyError(err) }
