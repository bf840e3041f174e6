package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/libs/mongostore"
)

// The ledger's store (docs/money.md, "The ledger"), on every store alike (FerretDB pushes
// down only a lone `_id` equality): each account's entries are kept in a collection of its
// own, "journal.<accountId>", so that a statement's query reads that account's entries only;
// a source's entries are read by `_id` ("<account>:<source>:<seq>", seq 1, 2, … up to the
// first missing one), so a sync never scans. An entry is inserted once: its `_id` is
// unique, and a second writer of the same id gets the first one's entry back. The marks of
// sources being synced are in the small "journal_marks" (`_id` "<account>:<source>"),
// removed once synced.

const (
	journalPrefix    = "journal."
	collJournalMarks = "journal_marks"
)

// Journal is the ledger's store (journal.Store) in the booking database.
type Journal struct {
	db    *mongo.Database
	marks *mongo.Collection
	now   func() time.Time
	// made are the per-account collections this process created (or found).
	made sync.Map
}

var _ journal.Store = (*Journal)(nil)

// NewJournal prepares db for the ledger.
func NewJournal(ctx context.Context, db *mongo.Database) (*Journal, error) {
	mongostore.PerKeyCollections(journalPrefix)
	if err := mongostore.Ensure(ctx, db, []string{collJournalMarks}, nil); err != nil {
		return nil, fmt.Errorf("journal collections: %w", err)
	}
	return &Journal{db: db, marks: db.Collection(collJournalMarks),
		now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}, nil
}

type postingRec struct {
	Account    string `bson:"account"`
	Amount     string `bson:"amount"`
	OwnerID    int64  `bson:"owner_id,omitempty"`
	PropertyID int64  `bson:"property_id,omitempty"`
	BookingID  int64  `bson:"booking_id,omitempty"`
	Line       string `bson:"line,omitempty"`
	Label      string `bson:"label,omitempty"`
}

type entryRec struct {
	ID        string       `bson:"_id"`
	AccountID string       `bson:"account_id"`
	Source    string       `bson:"source"`
	Seq       int64        `bson:"seq"`
	Date      string       `bson:"date"`
	Currency  string       `bson:"currency"`
	PostedAt  time.Time    `bson:"posted_at"`
	Postings  []postingRec `bson:"postings"`
}

func entryRecOf(e journal.Entry) entryRec {
	r := entryRec{ID: e.ID, AccountID: e.AccountID, Source: e.Source, Seq: e.Seq, Date: e.Date, Currency: e.Currency,
		PostedAt: e.PostedAt.UTC().Truncate(time.Millisecond)}
	for _, p := range e.Postings {
		r.Postings = append(r.Postings, postingRec{Account: p.Account, Amount: p.Amount.String(), OwnerID: p.OwnerID,
			PropertyID: p.PropertyID, BookingID: p.BookingID, Line: p.Line, Label: p.Label})
	}
	return r
}

func entryOfRec(r entryRec) (journal.Entry, error) {
	e := journal.Entry{ID: r.ID, AccountID: r.AccountID, Source: r.Source, Seq: r.Seq, Date: r.Date, Currency: r.Currency,
		PostedAt: r.PostedAt.UTC()}
	for _, p := range r.Postings {
		a, err := decimal.NewFromString(p.Amount)
		if err != nil {
			return e, fmt.Errorf("entry %s: amount %q: %w", r.ID, p.Amount, err)
		}
		e.Postings = append(e.Postings, journal.Posting{Date: r.Date, Currency: r.Currency, Account: p.Account, Amount: a,
			OwnerID: p.OwnerID, PropertyID: p.PropertyID, BookingID: p.BookingID, Line: p.Line, Label: p.Label})
	}
	return e, nil
}

func (j *Journal) entries(ctx context.Context, account string) (*mongo.Collection, error) {
	name := journalPrefix + collectionSafe(account)
	if _, ok := j.made.Load(name); !ok {
		// Made before its first entry, so that its `_id` is unique from the first insert on.
		if err := mongostore.Ensure(ctx, j.db, []string{name}, nil); err != nil {
			return nil, fmt.Errorf("journal of %s: %w", account, err)
		}
		j.made.Store(name, true)
	}
	return j.db.Collection(name), nil
}

func (j *Journal) get(ctx context.Context, c *mongo.Collection, id string) (journal.Entry, bool, error) {
	var r entryRec
	err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return journal.Entry{}, false, nil
	}
	if err != nil {
		return journal.Entry{}, false, fmt.Errorf("read entry %s: %w", id, err)
	}
	e, err := entryOfRec(r)
	return e, err == nil, err
}

// Posted returns source's entries, by seq: read by `_id` from seq 1 up to the first
// missing one.
func (j *Journal) Posted(ctx context.Context, account, source string) ([]journal.Entry, error) {
	c, err := j.entries(ctx, account)
	if err != nil {
		return nil, err
	}
	var out []journal.Entry
	for seq := int64(1); ; seq++ {
		e, ok, err := j.get(ctx, c, journal.EntryID(account, source, seq))
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, e)
	}
}

// Insert writes e unless an entry of its id exists, and answers the entry stored.
func (j *Journal) Insert(ctx context.Context, e journal.Entry) (journal.Entry, error) {
	c, err := j.entries(ctx, e.AccountID)
	if err != nil {
		return journal.Entry{}, err
	}
	r := entryRecOf(e)
	if _, err := c.InsertOne(ctx, r); err == nil {
		return entryOfRec(r)
	} else if !mongostore.IsDuplicate(err) {
		return journal.Entry{}, fmt.Errorf("insert entry %s: %w", e.ID, err)
	}
	got, ok, err := j.get(ctx, c, e.ID)
	if err == nil && !ok {
		err = fmt.Errorf("entry %s: refused as a duplicate, then not found", e.ID)
	}
	return got, err
}

type markRec struct {
	ID        string    `bson:"_id"`
	AccountID string    `bson:"account_id"`
	Source    string    `bson:"source"`
	At        time.Time `bson:"at"`
}

func markID(account, source string) string { return account + ":" + source }

// Mark records that source may have to be synced (again: its time moves on).
//
// Writers of one source mark it at the same moment (Touches of one booking at once). An
// upsert of a missing document is a read and then an insert: two of them can both find
// none, and the second insert fails on the duplicate _id (FerretDB on PostgreSQL does
// this; MongoDB retries such an upsert itself). The mark is there then, and the
// replace is tried again, which finds it; a few times, as the mark can be removed again
// (Unmark) in between.
func (j *Journal) Mark(ctx context.Context, account, source string) error {
	m := markRec{ID: markID(account, source), AccountID: account, Source: source, At: j.now()}
	var err error
	for range 5 {
		_, err = j.marks.ReplaceOne(ctx, bson.D{{Key: "_id", Value: m.ID}}, m, options.Replace().SetUpsert(true))
		if err == nil || !mongostore.IsDuplicate(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("mark %s: %w", source, err)
	}
	return nil
}

// Unmark forgets the mark of source.
func (j *Journal) Unmark(ctx context.Context, account, source string) error {
	if _, err := j.marks.DeleteOne(ctx, bson.D{{Key: "_id", Value: markID(account, source)}}); err != nil {
		return fmt.Errorf("unmark %s: %w", source, err)
	}
	return nil
}

// Marked lists the marks older than before, as (account, source), oldest first. The marks
// are few (a source is marked only while it is synced), so reading them all is cheap.
func (j *Journal) Marked(ctx context.Context, before time.Time) ([][2]string, error) {
	cur, err := j.marks.Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("journal marks: %w", err)
	}
	var ms []markRec
	if err := cur.All(ctx, &ms); err != nil {
		return nil, fmt.Errorf("journal marks: %w", err)
	}
	slices.SortFunc(ms, func(a, b markRec) int { return a.At.Compare(b.At) })
	var out [][2]string
	for _, m := range ms {
		if m.At.Before(before) {
			out = append(out, [2]string{m.AccountID, m.Source})
		}
	}
	return out, nil
}

// Entries returns account's entries with a posting matching q, by date then id. It reads
// the account's own collection only.
func (j *Journal) Entries(ctx context.Context, account string, q journal.Query) ([]journal.Entry, error) {
	c, err := j.entries(ctx, account)
	if err != nil {
		return nil, err
	}
	cur, err := c.Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("journal of %s: %w", account, err)
	}
	defer cur.Close(ctx)
	var out []journal.Entry
	for cur.Next(ctx) {
		var r entryRec
		if err := cur.Decode(&r); err != nil {
			return nil, fmt.Errorf("journal of %s: %w", account, err)
		}
		if (q.From != "" && r.Date < q.From) || (q.To != "" && r.Date > q.To) {
			continue
		}
		e, err := entryOfRec(r)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(e.Postings, func(p journal.Posting) bool { return q.Matches(e.Date, p) }) {
			out = append(out, e)
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("journal of %s: %w", account, err)
	}
	slices.SortFunc(out, func(a, b journal.Entry) int {
		if c := strings.Compare(a.Date, b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// EraseAccount removes account's journal and marks (account erasure).
func (j *Journal) EraseAccount(ctx context.Context, account string) error {
	if _, err := j.marks.DeleteMany(ctx, idPrefix(account)); err != nil {
		return fmt.Errorf("erase account's journal marks: %w", err)
	}
	name := journalPrefix + collectionSafe(account)
	if err := j.db.Collection(name).Drop(ctx); err != nil {
		return fmt.Errorf("erase account's journal: %w", err)
	}
	j.made.Delete(name)
	return nil
}
