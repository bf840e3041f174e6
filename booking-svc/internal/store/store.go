// Package store keeps bookings, blocks, booking payments and guest users in MongoDB
// (database vros_booking), as the booking domain's Repository, Blocks and UserRepository:
// it converts the domain's types to its own documents and back (convert.go). Every
// document's `_id` holds its account; every change of a booking or block is one update
// filtered on `_id` and goes through the outbox, so its event reaches vros.booking.v1.
package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/erasure/erasurestore"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
)

// Collections of vros_booking (the ledger and the view have their own).
const (
	collBookings   = "bookings"
	collBlocks     = "blocks"
	collPayments   = "payment_index"
	collUsers      = "users"
	collUserEmails = "user_emails"
	collCounters   = "counters"
	collFailed     = "failed_attempts"
)

// Store answers the domain's errors: booking.ErrNotFound for a document that does not
// exist, booking.ErrEmailTaken for an email another user has.

// Event types on vros.booking.v1: the contract's (docs/events.md).
const (
	BookingReserved  = contract.BookingReserved
	BookingUpdated   = contract.BookingUpdated
	BookingCancelled = contract.BookingCancelled
	BlockCreated     = contract.BlockCreated
	BlockDeleted     = contract.BlockDeleted
	BlockUpdated     = contract.BlockUpdated
	eventSource      = "/vros/booking-svc"
)

// Store is booking-svc's repository of bookings, blocks and guest users.
type Store struct {
	db                                        *mongo.Database
	bookings, blocks, payments, users, emails *mongo.Collection
	failed, counters                          *mongo.Collection
	bookingIDs, blockIDs, paymentIDs, userIDs *mongostore.Sequence
	outbox                                    *outbox.Outbox
	now                                       func() time.Time
	// locks serialize this process's updates of one document (mongostore.DocLocks);
	// listLocks its writes of one list entry, apart: Update holds a booking's lock while it
	// takes its entry's, and striped locks of one set would wait for each other.
	locks, listLocks *mongostore.DocLocks
	// erased are the erased accounts (WatchErasures); nil: none is watched.
	erased *erasurestore.Marks
	// StoppedFeedLease is how long the feed lease of a sync that stopped before finishing
	// outlives it (EndFeedLease): a write the stopped sync sent may still land meanwhile.
	// Tests whose stopped syncs have surely returned shorten it; New sets 1 s.
	StoppedFeedLease time.Duration
}

// New prepares db and returns a store.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	// One booking list per account: metrics name them all booking_list.*, never the account.
	mongostore.PerKeyCollections(listPrefix)
	err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(collUserEmails, collFeedSyncs, collRefundsDue), collBookings, collBlocks, collPayments, collUsers, collCounters, collFailed, collFeedTombstones, collCheckouts, collHolds, collChannelRes, outbox.Collection),
		[]mongostore.Index{
			{Collection: collBlocks, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "property_id", Value: 1}}},
			{Collection: collBlocks, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "feed_id", Value: 1}}},
			{Collection: collBookings, Keys: bson.D{{Key: "payment_auto", Value: 1}, {Key: "status", Value: 1}}},
			// An account's records as a whole: its usage, export, guest and account erasure.
			{Collection: collBookings, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "created_at", Value: 1}}},
			{Collection: collUsers, Keys: bson.D{{Key: "account_id", Value: 1}}},
			// The outbox's intents by age: its sweep and its oldest-age gauge.
			outbox.Index,
		})
	if err != nil {
		return nil, fmt.Errorf("booking collections: %w", err)
	}
	c := db.Collection(collCounters)
	s := &Store{
		db:       db,
		bookings: db.Collection(collBookings), blocks: db.Collection(collBlocks), payments: db.Collection(collPayments),
		users: db.Collection(collUsers), emails: db.Collection(collUserEmails), failed: db.Collection(collFailed), counters: c,
		bookingIDs: mongostore.NewSequence(c, "booking", 10).ReserveAhead(), blockIDs: mongostore.NewSequence(c, "block", 10),
		paymentIDs: mongostore.NewSequence(c, "payment", 10), userIDs: mongostore.NewSequence(c, "user", 10),
		now:              func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
		locks:            mongostore.NewDocLocks(),
		listLocks:        mongostore.NewDocLocks(),
		StoppedFeedLease: time.Second,
	}
	if err := s.setupLists(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

var (
	_ booking.Repository     = (*Store)(nil)
	_ booking.Blocks         = (*Store)(nil)
	_ booking.UserRepository = (*Store)(nil)
)

// Attach connects the outbox the store records its changes in.
func (s *Store) Attach(ob *outbox.Outbox) { s.outbox = ob }

// Now is the store's clock (UTC, milliseconds).
func (s *Store) Now() time.Time { return s.now() }

func docID(account string, id int64) string { return account + ":" + strconv.FormatInt(id, 10) }

// BookingAggregate and BlockAggregate name the outbox aggregates.
func BookingAggregate(account string, id int64) string {
	return account + ":booking:" + strconv.FormatInt(id, 10)
}

func blockAggregate(account string, id int64) string {
	return account + ":block:" + strconv.FormatInt(id, 10)
}

// NextBookingID allocates a booking id.
func (s *Store) NextBookingID(ctx context.Context) (int64, error) { return s.bookingIDs.Next(ctx) }

// NextPaymentID allocates a payment id.
func (s *Store) NextPaymentID(ctx context.Context) (int64, error) { return s.paymentIDs.Next(ctx) }

// InsertPending stores a booking before its nights are claimed. Pending bookings are not
// published.
func (s *Store) InsertPending(ctx context.Context, b booking.Booking) error {
	r := recOf(b)
	r.Status = booking.StatusPending
	if _, err := s.bookings.InsertOne(ctx, r); err != nil {
		return fmt.Errorf("insert booking %d: %w", b.BookingID, err)
	}
	return nil
}

// InsertReserved stores a new booking, reserved at version 1, and its list entry, then hands
// its event to the relay under the publish op that holds its nights (rel, key): no outbox
// intent, the op stands for it (booking.Service.createPlain). It never reads back what it
// wrote.
func (s *Store) InsertReserved(ctx context.Context, b booking.Booking, rel ledger.Releaser, key string) (booking.Booking, error) {
	r := recOf(b)
	r.Status, r.Version, r.LastChange, r.UpdatedAt = booking.StatusReserved, 1, BookingReserved, s.now()
	if _, err := s.bookings.InsertOne(ctx, r); err != nil {
		return booking.Booking{}, fmt.Errorf("insert booking %d: %w", b.BookingID, err)
	}
	faults.At(ctx, "written")
	s.outbox.Hand(ctx, BookingAggregate(r.AccountID, r.BookingID), s.listThen(ctx, r, s.insertEntry), rel, key)
	return bookingOf(r), nil
}

// listThen writes b's list entry with list, then returns what the relay is handed: b's
// snapshot, or nil when the entry was not written (the relay then reads the booking and
// writes its entry: Snapshot). The booking is written and the answer will say so: its entry
// is written even once the request's deadline has passed (a loaded machine), so that the
// next list shows what the answer said; only a failing store leaves it to the relay.
func (s *Store) listThen(ctx context.Context, b BookingRec, list func(context.Context, BookingRec) error) *outbox.Snapshot {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listAfterWrite)
	defer cancel()
	if err := list(lctx, b); err != nil {
		return nil
	}
	m, err := bookingMessage(b)
	return s.snapshot(b.AccountID, b.Version, m, err)
}

// Republish records an outbox intent for booking id, so that its current state is published
// (the relay reads it): for a booking whose publish op a repair ends.
func (s *Store) Republish(ctx context.Context, account string, id int64) error {
	in, err := s.outbox.Begin(ctx, BookingAggregate(account, id))
	if err != nil {
		return fmt.Errorf("republish booking %d: %w", id, err)
	}
	s.outbox.Done(in, nil)
	return nil
}

// Booking returns a booking of account in any status.
func (s *Store) Booking(ctx context.Context, account string, id int64) (booking.Booking, error) {
	r, err := s.booking(ctx, account, id)
	if err != nil {
		return booking.Booking{}, err
	}
	return bookingOf(r), nil
}

func (s *Store) booking(ctx context.Context, account string, id int64) (BookingRec, error) {
	var b BookingRec
	err := s.bookings.FindOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}).Decode(&b)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return b, fmt.Errorf("booking %d: %w", id, booking.ErrNotFound)
	}
	if err != nil {
		return b, fmt.Errorf("read booking %d: %w", id, err)
	}
	return b, nil
}

// eventTypes are the event types of the domain's changes, as last_change keeps them.
var eventTypes = map[booking.Change]string{booking.Updated: BookingUpdated, booking.Reserved: BookingReserved,
	booking.Cancelled: BookingCancelled}

// listAfterWrite bounds the list entry's write after its booking's, which the request's
// deadline no longer cuts.
const listAfterWrite = 5 * time.Second

// Update reads booking id, lets apply change it and writes the fields apply changed (one
// update filtered on `_id`, so every store finds it by its key), stamps the change, bumps
// the version and publishes the result through the outbox.
func (s *Store) Update(ctx context.Context, account string, id int64, change booking.Change, apply func(*booking.Booking) error) (booking.Booking, error) {
	in, err := s.outbox.Begin(ctx, BookingAggregate(account, id))
	if err != nil {
		return booking.Booking{}, fmt.Errorf("update booking %d: %w", id, err)
	}
	faults.At(ctx, "intent")
	b, snap, err := s.updateListed(ctx, account, id, change, apply)
	if err != nil {
		s.outbox.Done(in, nil)
		return booking.Booking{}, err
	}
	faults.At(ctx, "written")
	s.outbox.Done(in, snap)
	return bookingOf(b), nil
}

// updateListed makes Update's write and its list entry's, under the booking's lock: this
// process's changes of one booking wait for each other up to the entry's write, so the entry
// is written from the document the update answered, never read again (no later change of
// this process can come between). Those of other replicas touch other fields or hold the
// booking's ledger op. The lock is given back by a deferred call, so that a request stopped
// inside (a crash test's runtime.Goexit at "listing", a panic) never leaves it held: the
// locks are striped, and a held one would stop every later write of its stripe.
func (s *Store) updateListed(ctx context.Context, account string, id int64, change booking.Change, apply func(*booking.Booking) error) (BookingRec, *outbox.Snapshot, error) {
	defer s.locks.Lock(collBookings + "/" + docID(account, id))()
	b, err := s.update(ctx, account, id, eventTypes[change], apply)
	if err != nil {
		return b, nil, err
	}
	// A step between the two writes: for a deadline that ends there, and a stop.
	faults.At(ctx, "listing")
	return b, s.listThen(ctx, b, s.listedAs), nil
}

func (s *Store) update(ctx context.Context, account string, id int64, change string, apply func(*booking.Booking) error) (BookingRec, error) {
	cur, err := s.booking(ctx, account, id)
	if err != nil {
		return cur, err
	}
	b := bookingOf(cur)
	if err := apply(&b); err != nil {
		return cur, err
	}
	set, unset := changes(recOf(bookingOf(cur)), recOf(b))
	set = append(set, bson.E{Key: "last_change", Value: change}, bson.E{Key: "updated_at", Value: s.now()})
	upd := bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	var out BookingRec
	err = s.bookings.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}, upd,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return out, fmt.Errorf("booking %d: %w", id, booking.ErrNotFound)
	}
	if err != nil {
		return out, fmt.Errorf("update booking %d: %w", id, err)
	}
	return out, nil
}

// MarkFailed ends a booking attempt that never became a booking (its nights were taken, its
// card declined, or its creator stopped): status failed, without publishing — a pending
// booking never was — and without its card, which is removed at once. The rest of the
// document is kept for the failed-attempt retention period (PurgeFailed).
func (s *Store) MarkFailed(ctx context.Context, account string, id int64) error {
	now := s.now()
	// Noted first, so that no failed attempt escapes the purge.
	_, err := s.failed.InsertOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}, {Key: "account_id", Value: account},
		{Key: "booking_id", Value: id}, {Key: "at", Value: now}})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("note failed booking %d: %w", id, err)
	}
	unlock := s.locks.Lock(collBookings + "/" + docID(account, id))
	res, err := s.bookings.UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: booking.StatusFailed}, {Key: "updated_at", Value: now}}},
			{Key: "$unset", Value: bson.D{{Key: "card", Value: ""}}}})
	unlock()
	if err != nil {
		return fmt.Errorf("mark booking %d failed: %w", id, err)
	}
	if res.MatchedCount == 0 {
		// The note is dropped by the next purge, which finds no booking.
		return fmt.Errorf("booking %d: %w", id, booking.ErrNotFound)
	}
	return nil
}

// PurgeFailed deletes the failed attempts noted before before and reports how many. It
// reads only the small collection of noted failures, then each booking by `_id`.
func (s *Store) PurgeFailed(ctx context.Context, before time.Time) (int, error) {
	cur, err := s.failed.Find(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: before}}}}, options.Find().SetLimit(1000))
	if err != nil {
		return 0, fmt.Errorf("list failed bookings: %w", err)
	}
	var notes []struct {
		ID        string `bson:"_id"`
		AccountID string `bson:"account_id"`
		BookingID int64  `bson:"booking_id"`
	}
	if err := cur.All(ctx, &notes); err != nil {
		return 0, fmt.Errorf("list failed bookings: %w", err)
	}
	purged := 0
	for _, n := range notes {
		b, err := s.booking(ctx, n.AccountID, n.BookingID)
		switch {
		case err != nil && !errors.Is(err, booking.ErrNotFound):
			return purged, err
		case err == nil && b.Status == booking.StatusPending:
			continue // noted, but not yet marked: the next pass
		case err == nil && b.Status == booking.StatusFailed:
			if b.Engine != nil {
				if err := s.forgetCheckout(ctx, b.Engine.ID); err != nil {
					return purged, err
				}
			}
			if _, err := s.bookings.DeleteOne(ctx, bson.D{{Key: "_id", Value: n.ID}}); err != nil {
				return purged, fmt.Errorf("purge failed booking %d: %w", n.BookingID, err)
			}
			purged++
		}
		if _, err := s.failed.DeleteOne(ctx, bson.D{{Key: "_id", Value: n.ID}}); err != nil {
			return purged, fmt.Errorf("purge failed booking %d: %w", n.BookingID, err)
		}
	}
	return purged, nil
}

func quoteMeta(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// PaymentBooking returns the booking a payment id belongs to.
func (s *Store) PaymentBooking(ctx context.Context, account string, paymentID int64) (int64, error) {
	var d struct {
		BookingID int64 `bson:"booking_id"`
	}
	err := s.payments.FindOne(ctx, bson.D{{Key: "_id", Value: docID(account, paymentID)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, fmt.Errorf("payment %d: %w", paymentID, booking.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("read payment %d: %w", paymentID, err)
	}
	return d.BookingID, nil
}

// IndexPayment records which booking a payment belongs to.
func (s *Store) IndexPayment(ctx context.Context, account string, paymentID, bookingID int64) error {
	_, err := s.payments.InsertOne(ctx, bson.D{{Key: "_id", Value: docID(account, paymentID)}, {Key: "booking_id", Value: bookingID}})
	return err
}

// UnindexPayment forgets a removed payment.
func (s *Store) UnindexPayment(ctx context.Context, account string, paymentID int64) error {
	_, err := s.payments.DeleteOne(ctx, bson.D{{Key: "_id", Value: docID(account, paymentID)}})
	return err
}

// Snapshot is the outbox loader of booking-svc's aggregates. A booking still pending is not
// ready (its creator or the janitor decides it); a failed attempt that was never published,
// or a document that no longer exists, has nothing to publish.
func (s *Store) Snapshot(ctx context.Context, aggregate string) ([]events.Message, error) {
	parts := strings.Split(aggregate, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("aggregate %q", aggregate)
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("aggregate %q: %w", aggregate, err)
	}
	if parts[1] != "booking" && parts[1] != "block" {
		return nil, fmt.Errorf("aggregate %q", aggregate)
	}
	// An erased account's keys are erased from the topic, whatever is left of the aggregate.
	if gone, err := s.erasedAccount(ctx, parts[0]); err != nil || gone {
		if err != nil {
			return nil, err
		}
		return tombstone(aggregate), nil
	}
	switch parts[1] {
	case "booking":
		b, err := s.booking(ctx, parts[0], id)
		if errors.Is(err, booking.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case b.Status == booking.StatusPending || b.Status == booking.StatusHeld:
			// A held checkout is not published either: its confirm (reserved) or its end
			// (failed, never published) decides it.
			return nil, fmt.Errorf("booking %s is %s: %w", aggregate, b.Status, outbox.ErrNotReady)
		case b.Status == booking.StatusFailed && b.Version == 0:
			return nil, nil
		}
		if err := s.listed(ctx, b); err != nil {
			return nil, err
		}
		m, err := bookingMessage(b)
		if err != nil {
			return nil, err
		}
		return []events.Message{m}, nil
	case "block":
		b, err := s.block(ctx, parts[0], id)
		if errors.Is(err, booking.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		m, err := blockMessage(b)
		if err != nil {
			return nil, err
		}
		return []events.Message{m}, nil
	}
	return nil, fmt.Errorf("aggregate %q", aggregate)
}

// snapshot is what a writer hands the relay: nil (the relay loads) if the message could
// not be built or the account is erased (the loader answers its tombstone).
func (s *Store) snapshot(account string, version int64, m events.Message, err error) *outbox.Snapshot {
	if err != nil || s.erased != nil && s.erased.Known(account) {
		return nil
	}
	return &outbox.Snapshot{Version: version, Messages: []events.Message{m}}
}

// bookingMessage is a booking's event: the record mapped to contract.Booking, never the
// guest's contact data or card. Only a reserved booking holds nights.
func bookingMessage(b BookingRec) (events.Message, error) {
	nights := b.Nights
	if b.Status != booking.StatusReserved {
		nights = []string{}
	}
	ev := contract.Booking{AccountID: b.AccountID, BookingID: b.BookingID, PropertyID: b.PropertyID, Status: b.Status, Version: b.Version,
		Checkin: b.Checkin, Checkout: b.Checkout, Nights: nights, Adults: b.Adults, Children: b.Children, Currency: b.Quote.Currency,
		TotalRent: b.Quote.TotalRent, GrandTotal: b.Quote.GrandTotal, UserID: b.UserID, BrandID: b.BrandID,
		CreatedAt: b.CreatedAt, CancelledAt: b.CancelledAt, Payments: eventPayments(b.Payments),
		ArrivalFormCompleted: b.Arrival != nil && b.Arrival.IsCompleted,
		RatePlanID:           b.RatePlanID, RatePlanName: b.RatePlanName, Cancellation: eventCancellation(b.Cancellation), Channel: b.Channel,
		Refund: eventRefund(b.Refund, b.Quote.Currency), Deposit: eventDeposit(b.Deposit), ChargeFailures: eventChargeFailures(b.ChargeFailures)}
	agg := BookingAggregate(b.AccountID, b.BookingID)
	typ := b.LastChange
	if typ == "" {
		typ = BookingUpdated
	}
	v, err := events.Encode(eventSource, typ, agg, b.UpdatedAt, ev)
	if err != nil {
		return events.Message{}, fmt.Errorf("booking event %s: %w", agg, err)
	}
	return events.Message{Topic: events.TopicBooking, Key: agg, Value: v}, nil
}

// eventCancellation is a booking's policy as its events carry it (contract.Cancellation):
// the policy's name, and its tiers for a custom policy only (a named policy's tiers are
// the contract's, docs/rate-plans.md). nil: not recorded (a booking made before rate plans).
func eventCancellation(c *CancellationRec) *contract.Cancellation {
	if c == nil {
		return nil
	}
	out := &contract.Cancellation{Policy: c.Policy}
	if c.Policy == contract.CancelCustom {
		for _, t := range c.Tiers {
			out.Tiers = append(out.Tiers, contract.CancellationTier{DaysBefore: t.DaysBefore, Percent: t.Percent})
		}
	}
	return out
}

// eventPayments are a booking's payments as its events carry them, by payment id: never the
// description (free text that may name the guest) nor the gateway's charge.
func eventPayments(ps map[string]PaymentRec) []contract.BookingPayment {
	if len(ps) == 0 {
		return nil
	}
	out := make([]contract.BookingPayment, 0, len(ps))
	for _, p := range ps {
		out = append(out, contract.BookingPayment{PaymentID: p.PaymentID, Amount: p.Amount, Currency: p.Currency, Method: p.Method,
			PaidAt: p.Time, CreatedAt: p.CreatedAt, Kind: p.Kind, RefundOf: p.RefundOf})
	}
	slices.SortFunc(out, func(a, b contract.BookingPayment) int { return cmp.Compare(a.PaymentID, b.PaymentID) })
	return out
}

// Autopay lists reserved bookings whose card is kept for automatic payments. It is the one
// background scan of the bookings (index account_id, payment_auto, status on MongoDB).
func (s *Store) Autopay(ctx context.Context) ([]booking.Booking, error) {
	cur, err := s.bookings.Find(ctx, bson.D{{Key: "payment_auto", Value: true}, {Key: "status", Value: booking.StatusReserved}})
	if err != nil {
		return nil, err
	}
	var recs []BookingRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, err
	}
	out := make([]booking.Booking, len(recs))
	for i, r := range recs {
		out[i] = bookingOf(r)
	}
	return out, nil
}
