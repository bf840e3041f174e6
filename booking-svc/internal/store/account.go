package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/erasure/erasurestore"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/pricing"
)

// What the store keeps of one account as a whole: its records for the export and the usage
// report, the anonymisation of one guest, and the erasure of everything (docs/booking.md,
// "Export and erasure"). These read the account's documents with a filter on account_id,
// which FerretDB evaluates over the whole collection: they are operator actions, rare, and
// never on a guest's path.

var _ booking.AccountRecords = (*Store)(nil)

// WatchErasures makes the store refuse to publish anything of an erased account: the outbox
// loader answers a tombstone for its aggregates instead, and a writer's snapshot of one is
// not handed over (the relay loads the tombstone).
func (s *Store) WatchErasures(a *erasurestore.Marks) { s.erased = a }

// erasedAccount reports whether account is erased (never, without WatchErasures).
func (s *Store) erasedAccount(ctx context.Context, account string) (bool, error) {
	if s.erased == nil {
		return false, nil
	}
	return s.erased.Is(ctx, account)
}

// tombstone is the message that erases aggregate's key from the compacted topic.
func tombstone(aggregate string) []events.Message {
	return []events.Message{{Topic: events.TopicBooking, Key: aggregate, Tombstone: true}}
}

// byAccount is the filter of every document of account in a collection whose documents
// carry account_id.
func byAccount(account string) bson.D { return bson.D{{Key: "account_id", Value: account}} }

// idPrefix is the filter of every document whose `_id` begins with "<account>:".
func idPrefix(account string) bson.D {
	return bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}
}

// AccountBookings returns every booking document of account, in any status, by id.
func (s *Store) AccountBookings(ctx context.Context, account string) ([]booking.Booking, error) {
	cur, err := s.bookings.Find(ctx, byAccount(account), options.Find().SetSort(bson.D{{Key: "booking_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read account bookings: %w", err)
	}
	var recs []BookingRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read account bookings: %w", err)
	}
	out := make([]booking.Booking, len(recs))
	for i, r := range recs {
		out[i] = bookingOf(r)
	}
	return out, nil
}

// AccountBlocks returns every block of account, deleted ones too, by id.
func (s *Store) AccountBlocks(ctx context.Context, account string) ([]booking.Block, error) {
	cur, err := s.blocks.Find(ctx, byAccount(account), options.Find().SetSort(bson.D{{Key: "block_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read account blocks: %w", err)
	}
	var recs []BlockRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read account blocks: %w", err)
	}
	out := make([]booking.Block, len(recs))
	for i, r := range recs {
		out[i] = blockOf(r)
	}
	return out, nil
}

// AccountUsers returns every guest user of account, by id.
func (s *Store) AccountUsers(ctx context.Context, account string) ([]guest.User, error) {
	cur, err := s.users.Find(ctx, byAccount(account), options.Find().SetSort(bson.D{{Key: "user_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read account users: %w", err)
	}
	var recs []UserRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read account users: %w", err)
	}
	out := make([]guest.User, len(recs))
	for i, r := range recs {
		out[i] = userOf(r)
	}
	return out, nil
}

// Usage counts account's bookings and blocks over [from, to) from the stored records:
// bookings (reserved or cancelled: attempts that never became bookings are not counted)
// created and cancelled in the period, the nights of those created, and the blocks created.
func (s *Store) Usage(ctx context.Context, account string, from, to time.Time) (booking.Usage, error) {
	var u booking.Usage
	in := bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}
	cur, err := s.bookings.Find(ctx, bson.D{{Key: "account_id", Value: account},
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{booking.StatusReserved, booking.StatusCancelled}}}},
		{Key: "$or", Value: bson.A{bson.D{{Key: "created_at", Value: in}}, bson.D{{Key: "cancelled_at", Value: in}}}}},
		options.Find().SetProjection(bson.D{{Key: "created_at", Value: 1}, {Key: "cancelled_at", Value: 1},
			{Key: "checkin", Value: 1}, {Key: "checkout", Value: 1}}))
	if err != nil {
		return u, fmt.Errorf("count bookings: %w", err)
	}
	var recs []struct {
		CreatedAt   time.Time  `bson:"created_at"`
		CancelledAt *time.Time `bson:"cancelled_at"`
		Checkin     string     `bson:"checkin"`
		Checkout    string     `bson:"checkout"`
	}
	if err := cur.All(ctx, &recs); err != nil {
		return u, fmt.Errorf("count bookings: %w", err)
	}
	within := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	for _, r := range recs {
		if within(r.CreatedAt) {
			u.BookingsCreated++
			ci, err1 := pricing.ParseDate(r.Checkin)
			co, err2 := pricing.ParseDate(r.Checkout)
			if err1 == nil && err2 == nil {
				u.Nights += int64(pricing.DaysBetween(ci, co))
			}
		}
		if r.CancelledAt != nil && within(*r.CancelledAt) {
			u.BookingsCancelled++
		}
	}
	n, err := s.blocks.CountDocuments(ctx, bson.D{{Key: "account_id", Value: account}, {Key: "created_at", Value: in}})
	if err != nil {
		return u, fmt.Errorf("count blocks: %w", err)
	}
	u.BlocksCreated = n
	return u, nil
}

// Anonymise rewrites booking id of account with apply. A booking (reserved or cancelled)
// changes like any update: a new version, its list entry and its event (which carries no
// contact data). An attempt that never became a booking (pending, failed) is rewritten in
// place, unpublished and without a new version, as its creator or the janitor still may
// decide it; only the fields apply changed are written, so nothing of theirs is undone.
func (s *Store) Anonymise(ctx context.Context, account string, id int64, apply func(*booking.Booking) error) error {
	cur, err := s.booking(ctx, account, id)
	if err != nil {
		return err
	}
	b := bookingOf(cur)
	if err := apply(&b); err != nil {
		return err
	}
	set, unset := changes(recOf(bookingOf(cur)), recOf(b))
	if len(set) == 0 && len(unset) == 0 {
		return nil // already anonymised: no new version
	}
	if cur.Status == booking.StatusReserved || cur.Status == booking.StatusCancelled {
		_, err := s.Update(ctx, account, id, booking.Updated, apply)
		return err
	}
	upd := bson.D{}
	if len(set) > 0 {
		upd = append(upd, bson.E{Key: "$set", Value: set})
	}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	unlock := s.locks.Lock(collBookings + "/" + docID(account, id))
	_, err = s.bookings.UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}, upd)
	unlock()
	if err != nil {
		return fmt.Errorf("anonymise booking %d: %w", id, err)
	}
	return nil
}

// EraseUser replaces user id's personal data with anon's and gives up its claim of email
// (the address it was found by: its record may already hold anon's, when a run stopped
// between the two is retried): the user keeps its id (bookings name it) but can no longer
// sign in, and anon's email is claimed by nobody, so that any number of erased users share it.
func (s *Store) EraseUser(ctx context.Context, account string, id int64, email string, anon guest.User) error {
	if _, err := s.user(ctx, account, id); err != nil {
		return err
	}
	set := bson.D{{Key: "name", Value: anon.Name}, {Key: "email", Value: anon.Email}, {Key: "updated_at", Value: s.now()},
		{Key: "country", Value: anon.Country}}
	unset := bson.D{{Key: "company", Value: ""}, {Key: "address", Value: ""}, {Key: "phone1", Value: ""}, {Key: "phone2", Value: ""},
		{Key: "password_hash", Value: ""}}
	unlock := s.locks.Lock(collUsers + "/" + docID(account, id))
	_, err := s.users.UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}, bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: unset}})
	unlock()
	if err != nil {
		return fmt.Errorf("erase user %d: %w", id, err)
	}
	// After the user no longer holds it: a retry finds the user by the claim until then.
	if _, err := s.emails.DeleteOne(ctx, bson.D{{Key: "_id", Value: emailID(account, email)}, {Key: "user_id", Value: id}}); err != nil {
		return fmt.Errorf("release erased user's email: %w", err)
	}
	if _, err := s.db.Collection(collUserEmails+"_locks").DeleteMany(ctx, bson.D{{Key: "_id", Value: emailID(account, email)}}); err != nil {
		return fmt.Errorf("release erased user's email: %w", err)
	}
	return nil
}

// EraseAccount deletes everything the store keeps of account: its bookings and blocks, each
// after an outbox intent, so that the relay publishes a tombstone for its key (the loader
// answers tombstones for an erased account's aggregates: mark the account erased first),
// its payment index, users, email claims, failed-attempt notes, checkouts and booking list. Running it
// again finishes what a stopped run left.
func (s *Store) EraseAccount(ctx context.Context, account string) error {
	if ok, err := s.erasedAccount(ctx, account); err != nil || !ok {
		if err == nil {
			err = errors.New("the account is not marked erased: its tombstones would not be published")
		}
		return fmt.Errorf("erase account: %w", err)
	}
	// Events of the account still on their way (another replica's write that landed before
	// the erasure, a run stopped before): their tombstones are recorded again once they are
	// published, so that the tombstone comes last on the topic.
	contested, err := s.pendingAggregates(ctx, account)
	if err != nil {
		return err
	}
	for _, k := range []struct {
		coll *mongo.Collection
		id   string
		agg  func(string, int64) string
	}{{s.bookings, "booking_id", BookingAggregate}, {s.blocks, "block_id", blockAggregate}} {
		c, err := s.eraseAggregates(ctx, account, k.coll, k.id, k.agg)
		if err != nil {
			return err
		}
		contested = append(contested, c...)
	}
	for _, d := range []struct {
		coll   *mongo.Collection
		filter bson.D
	}{
		{s.payments, idPrefix(account)},
		{s.emails, idPrefix(account)},
		{s.db.Collection(collFeedSyncs), idPrefix(account)},
		{s.db.Collection(collUserEmails + "_locks"), idPrefix(account)},
		{s.db.Collection(collFeedSyncs + "_locks"), idPrefix(account)},
		{s.db.Collection(collFeedTombstones), idPrefix(account)},
		{s.db.Collection(collChannelRes), idPrefix(account)},
		{s.users, byAccount(account)},
		{s.failed, byAccount(account)},
		{s.db.Collection(collCheckouts), byAccount(account)},
		{s.db.Collection(collHolds), byAccount(account)},
	} {
		if _, err := d.coll.DeleteMany(ctx, d.filter); err != nil {
			return fmt.Errorf("erase account from %s: %w", d.coll.Name(), err)
		}
	}
	if err := s.listOf(account).Drop(ctx); err != nil {
		return fmt.Errorf("erase account's booking list: %w", err)
	}
	if len(contested) == 0 {
		return nil
	}
	if err := s.awaitPublished(ctx, contested); err != nil {
		return err
	}
	for _, agg := range contested {
		in, err := s.outbox.Begin(ctx, agg)
		if err != nil {
			return fmt.Errorf("record the tombstone of %s again: %w", agg, err)
		}
		s.outbox.Done(in, nil)
	}
	return nil
}

// PublishWait bounds how long an erasure waits for events of the account on their way to be
// published before it records their tombstones again: under the outbox lease, and an intent
// that outlasts it (Kafka down) is published by the sweep through the loader, as a tombstone.
const PublishWait = 3 * time.Second

// intents is the outbox's collection.
func (s *Store) intents() *mongo.Collection { return s.db.Collection(outbox.Collection) }

// pendingAggregates lists the account's aggregates that have intents in the outbox, parked
// ones aside (they are retried through the loader, which answers tombstones now).
func (s *Store) pendingAggregates(ctx context.Context, account string) ([]string, error) {
	cur, err := s.intents().Find(ctx, bson.D{{Key: "aggregate", Value: mongostore.OwnedBy(account)},
		{Key: "parked", Value: bson.D{{Key: "$ne", Value: true}}}})
	if err != nil {
		return nil, fmt.Errorf("read the account's pending events: %w", err)
	}
	var docs []struct {
		Aggregate string `bson:"aggregate"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read the account's pending events: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range docs {
		if !seen[d.Aggregate] {
			seen[d.Aggregate] = true
			out = append(out, d.Aggregate)
		}
	}
	return out, nil
}

// awaitPublished waits, up to PublishWait, until the outbox holds no intent of aggs but
// parked ones.
func (s *Store) awaitPublished(ctx context.Context, aggs []string) error {
	filter := bson.D{{Key: "aggregate", Value: bson.D{{Key: "$in", Value: aggs}}}, {Key: "parked", Value: bson.D{{Key: "$ne", Value: true}}}}
	deadline := time.Now().Add(PublishWait)
	for {
		n, err := s.intents().CountDocuments(ctx, filter)
		if err != nil {
			return fmt.Errorf("read the account's pending events: %w", err)
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

// eraseAggregates deletes the account's documents of coll one by one, each after recording
// its intent, so that a run stopped after the delete still leaves the intent whose tombstone
// the relay publishes. It returns the aggregates that another writer's intent still held
// when their document was deleted: that writer's snapshot may reach the topic after the
// tombstone (its replica had not yet learnt of the erasure). A writer's snapshot published
// before the check is ordered before the tombstone, which the relay publishes only after
// Done; a writer that begins after the delete finds no document and publishes through the
// loader, a tombstone.
func (s *Store) eraseAggregates(ctx context.Context, account string, coll *mongo.Collection, idField string, agg func(string, int64) string) ([]string, error) {
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("erase account from %s: %w", coll.Name(), err)
	}
	cur, err := coll.Find(ctx, byAccount(account), options.Find().SetProjection(bson.D{{Key: idField, Value: 1}}))
	if err != nil {
		return fail(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		return fail(err)
	}
	var contested []string
	for _, d := range docs {
		docID, _ := d["_id"].(string)
		id, ok := d[idField].(int64)
		if !ok {
			return fail(fmt.Errorf("document %q has no %s", docID, idField))
		}
		a := agg(account, id)
		in, err := s.outbox.Begin(ctx, a)
		if err != nil {
			return fail(err)
		}
		_, err = coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: docID}})
		var n int64
		if err == nil {
			n, err = s.intents().CountDocuments(ctx, bson.D{{Key: "aggregate", Value: a}})
		}
		s.outbox.Done(in, nil)
		if err != nil {
			return fail(err)
		}
		if n > 1 { // another writer's besides this one
			contested = append(contested, a)
		}
	}
	return contested, nil
}
