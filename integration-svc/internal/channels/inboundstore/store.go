// Package inboundstore keeps, in integration-svc's MongoDB, the channel reservation
// revisions received (inbound.Revisions) and the processors' holds on connections
// (inbound.Leases). Every document is read and written by `_id` ("<account>:…": FerretDB
// pushes down nothing else, docs/booking.md "Listing bookings"); the revisions of a
// reservation still to apply are listed in one document per reservation.
package inboundstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
	"github.com/vros/vros/libs/mongostore"
)

// Collections.
const (
	// Revisions: one document per connection and revision id, `_id`
	// "<account>:<connection>:<revision id>" (insert-once: the uniqueness).
	Revisions = "chan_revisions"
	// Pending: the revisions of a reservation not final yet, `_id`
	// "<account>:<connection>:<reservation id>".
	Pending = "chan_pending"
	// Pulls: a processor's hold on a connection, `_id` "<account>:<connection>".
	Pulls = "chan_pulls"
)

// Store is inbound.Revisions and inbound.Leases.
type Store struct {
	revs, pending, pulls *mongo.Collection
}

var (
	_ inbound.Revisions = (*Store)(nil)
	_ inbound.Leases    = (*Store)(nil)
)

// Open prepares db's collections.
func Open(ctx context.Context, db *mongo.Database) (*Store, error) {
	if err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(Pending, Pulls), Revisions), nil); err != nil {
		return nil, fmt.Errorf("channel revision collections: %w", err)
	}
	return &Store{revs: db.Collection(Revisions), pending: db.Collection(Pending), pulls: db.Collection(Pulls)}, nil
}

func connKey(account string, connection int64) string {
	return account + ":" + strconv.FormatInt(connection, 10)
}

func revKey(account string, connection int64, revision string) string {
	return connKey(account, connection) + ":" + revision
}

type guestDoc struct {
	FirstName string `bson:"first_name,omitempty"`
	LastName  string `bson:"last_name,omitempty"`
	Email     string `bson:"email,omitempty"`
	Phone     string `bson:"phone,omitempty"`
	Country   string `bson:"country,omitempty"`
}

// revDoc is one revision. Its content (guest, notes, the raw message) is dropped once the
// revision is final: applied or a conflict, its outcome is in booking-svc or the conflict.
type revDoc struct {
	ID               string    `bson:"_id"`
	AccountID        string    `bson:"account_id"`
	ConnectionID     int64     `bson:"connection_id"`
	RevisionID       string    `bson:"revision_id"`
	ReservationID    string    `bson:"reservation_id"`
	Channel          string    `bson:"channel"`
	Status           string    `bson:"status"`
	Order            int64     `bson:"order"`
	RemotePropertyID string    `bson:"remote_property_id"`
	RoomTypeID       string    `bson:"room_type_id"`
	RemoteRatePlanID string    `bson:"remote_rate_plan_id"`
	Checkin          string    `bson:"checkin"`
	Checkout         string    `bson:"checkout"`
	Adults           int       `bson:"adults"`
	Children         int       `bson:"children"`
	Currency         string    `bson:"currency"`
	Total            string    `bson:"total"`
	Commission       string    `bson:"commission,omitempty"`
	Guest            *guestDoc `bson:"guest,omitempty"`
	Notes            string    `bson:"notes,omitempty"`
	Raw              string    `bson:"raw,omitempty"`
	State            string    `bson:"state"`
	BookingID        int64     `bson:"booking_id,omitempty"`
	ConflictID       int64     `bson:"conflict_id,omitempty"`
	ReceivedAt       time.Time `bson:"received_at"`
	UpdatedAt        time.Time `bson:"updated_at"`
}

func docOf(account string, r channel.Revision, at time.Time) revDoc {
	g := r.Guest
	return revDoc{ID: revKey(account, r.ConnectionID, r.RevisionID), AccountID: account, ConnectionID: r.ConnectionID, RevisionID: r.RevisionID,
		ReservationID: r.ReservationID, Channel: r.Channel, Status: r.Status, Order: r.Order, RemotePropertyID: r.RemotePropertyID,
		RoomTypeID: r.RoomTypeID, RemoteRatePlanID: r.RemoteRatePlanID, Checkin: r.Checkin, Checkout: r.Checkout, Adults: r.Adults,
		Children: r.Children, Currency: r.Currency, Total: r.Total, Commission: r.Commission,
		Guest: &guestDoc{FirstName: g.FirstName, LastName: g.LastName, Email: g.Email, Phone: g.Phone, Country: g.Country},
		Notes: r.Notes, Raw: string(r.Raw), State: inbound.StateReceived, ReceivedAt: at, UpdatedAt: at}
}

func (d revDoc) stored() inbound.Stored {
	r := channel.Revision{ConnectionID: d.ConnectionID, RevisionID: d.RevisionID, ReservationID: d.ReservationID, Channel: d.Channel,
		Status: d.Status, Order: d.Order, RemotePropertyID: d.RemotePropertyID, RoomTypeID: d.RoomTypeID, RemoteRatePlanID: d.RemoteRatePlanID,
		Checkin: d.Checkin, Checkout: d.Checkout, Adults: d.Adults, Children: d.Children, Currency: d.Currency, Total: d.Total,
		Commission: d.Commission, Notes: d.Notes}
	if d.Raw != "" {
		r.Raw = []byte(d.Raw)
	}
	if g := d.Guest; g != nil {
		r.Guest = channel.Guest{FirstName: g.FirstName, LastName: g.LastName, Email: g.Email, Phone: g.Phone, Country: g.Country}
	}
	return inbound.Stored{Account: d.AccountID, Revision: r, State: d.State, BookingID: d.BookingID, ConflictID: d.ConflictID, ReceivedAt: d.ReceivedAt}
}

// Add implements inbound.Revisions. A revision found not final is listed as pending again
// (its first Add may have stopped between the two writes).
func (s *Store) Add(ctx context.Context, account string, r channel.Revision, at time.Time) (inbound.Stored, bool, error) {
	d := docOf(account, r, at)
	_, err := s.revs.InsertOne(ctx, d)
	added := err == nil
	switch {
	case mongostore.IsDuplicate(err):
		if err := s.revs.FindOne(ctx, bson.D{{Key: "_id", Value: d.ID}}).Decode(&d); err != nil {
			return inbound.Stored{}, false, fmt.Errorf("read revision %s: %w", d.ID, err)
		}
	case err != nil:
		return inbound.Stored{}, false, fmt.Errorf("store revision %s: %w", d.ID, err)
	}
	st := d.stored()
	if !st.Final() {
		if err := s.listPending(ctx, account, r.ConnectionID, d.ReservationID, d.RevisionID, true); err != nil {
			return st, added, err
		}
	}
	return st, added, nil
}

type pendingDoc struct {
	ID        string   `bson:"_id"`
	AccountID string   `bson:"account_id"`
	Revisions []string `bson:"revisions"`
}

// listPending adds revision to (or removes it from) its reservation's pending list, under
// the list's lease.
func (s *Store) listPending(ctx context.Context, account string, connection int64, reservation, revision string, add bool) error {
	id := revKey(account, connection, reservation)
	return mongostore.WithLease(ctx, s.pending, id, func() error {
		var d pendingDoc
		err := s.pending.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("read pending revisions %s: %w", id, err)
		}
		has := slices.Contains(d.Revisions, revision)
		switch {
		case add && has, !add && !has:
			return nil
		case add:
			d.Revisions = append(d.Revisions, revision)
		default:
			d.Revisions = slices.DeleteFunc(d.Revisions, func(r string) bool { return r == revision })
		}
		if len(d.Revisions) == 0 {
			_, err = s.pending.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
		} else {
			d.ID, d.AccountID = id, account
			_, err = s.pending.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, d, options.Replace().SetUpsert(true))
		}
		if err != nil {
			return fmt.Errorf("write pending revisions %s: %w", id, err)
		}
		return nil
	})
}

// Get implements inbound.Revisions.
func (s *Store) Get(ctx context.Context, account string, connection int64, revision string) (inbound.Stored, error) {
	var d revDoc
	id := revKey(account, connection, revision)
	err := s.revs.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return inbound.Stored{}, fmt.Errorf("revision %s: %w", id, channel.ErrNotFound)
	}
	if err != nil {
		return inbound.Stored{}, fmt.Errorf("read revision %s: %w", id, err)
	}
	return d.stored(), nil
}

// Pending implements inbound.Revisions.
func (s *Store) Pending(ctx context.Context, account string, connection int64, reservation string) ([]inbound.Stored, error) {
	var d pendingDoc
	id := revKey(account, connection, reservation)
	err := s.pending.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pending revisions %s: %w", id, err)
	}
	var out []inbound.Stored
	for _, rev := range d.Revisions {
		st, err := s.Get(ctx, account, connection, rev)
		if errors.Is(err, channel.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !st.Final() {
			out = append(out, st)
		}
	}
	slices.SortStableFunc(out, func(a, b inbound.Stored) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), a.ReceivedAt.Compare(b.ReceivedAt))
	})
	return out, nil
}

// Settle implements inbound.Revisions: the state first, then (final) the pending list.
func (s *Store) Settle(ctx context.Context, account string, connection int64, revision, state string, bookingID, conflictID int64) error {
	id := revKey(account, connection, revision)
	set := bson.D{{Key: "state", Value: state}, {Key: "updated_at", Value: time.Now().UTC()}}
	upd := bson.D{}
	final := state == inbound.StateApplied || state == inbound.StateConflict
	if final {
		set = append(set, bson.E{Key: "booking_id", Value: bookingID}, bson.E{Key: "conflict_id", Value: conflictID})
		upd = append(upd, bson.E{Key: "$unset", Value: bson.D{{Key: "guest", Value: ""}, {Key: "notes", Value: ""}, {Key: "raw", Value: ""}}})
	}
	upd = append(bson.D{{Key: "$set", Value: set}}, upd...)
	var d revDoc
	err := s.revs.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}}, upd).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("revision %s: %w", id, channel.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("settle revision %s: %w", id, err)
	}
	if final {
		return s.listPending(ctx, account, connection, d.ReservationID, revision, false)
	}
	return nil
}

// Erase implements inbound.Revisions and inbound.Leases.
func (s *Store) Erase(ctx context.Context, account string) error {
	for _, c := range []*mongo.Collection{s.revs, s.pending, s.pulls} {
		if _, err := c.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
			return fmt.Errorf("erase account from %s: %w", c.Name(), err)
		}
	}
	return nil
}

// holdDoc is a processor's hold on a connection. The hold is the insert of this document,
// which only one processor can make; taking over an expired one and releasing read it and
// delete it under its lease (mongostore.WithLease), as the iCal poller's feed holds do.
type holdDoc struct {
	ID     string    `bson:"_id"`
	Holder string    `bson:"holder"`
	Until  time.Time `bson:"until"`
}

// Take implements inbound.Leases.
func (s *Store) Take(ctx context.Context, account string, connection int64, holder string, until time.Time) (bool, error) {
	id := connKey(account, connection)
	for range 2 {
		_, err := s.pulls.InsertOne(ctx, holdDoc{ID: id, Holder: holder, Until: until})
		if err == nil {
			return true, nil
		}
		if !mongostore.IsDuplicate(err) {
			return false, fmt.Errorf("hold connection %s: %w", id, err)
		}
		free := false
		err = mongostore.WithLease(ctx, s.pulls, id, func() error {
			var h holdDoc
			err := s.pulls.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&h)
			switch {
			case errors.Is(err, mongo.ErrNoDocuments):
				free = true
				return nil
			case err != nil:
				return err
			case h.Until.After(time.Now()):
				return nil
			}
			free = true
			_, err = s.pulls.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
			return err
		})
		if err != nil {
			return false, fmt.Errorf("hold connection %s: %w", id, err)
		}
		if !free {
			return false, nil
		}
	}
	return false, nil
}

// Renew implements inbound.Leases.
func (s *Store) Renew(ctx context.Context, account string, connection int64, holder string, until time.Time) (bool, error) {
	id := connKey(account, connection)
	mine := false
	err := mongostore.WithLease(ctx, s.pulls, id, func() error {
		var h holdDoc
		err := s.pulls.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&h)
		if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && h.Holder != holder) {
			return nil
		}
		if err != nil {
			return err
		}
		mine, h.Until = true, until
		_, err = s.pulls.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, h)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("renew the hold of connection %s: %w", id, err)
	}
	return mine, nil
}

// Release implements inbound.Leases.
func (s *Store) Release(ctx context.Context, account string, connection int64, holder string) error {
	id := connKey(account, connection)
	return mongostore.WithLease(ctx, s.pulls, id, func() error {
		var h holdDoc
		err := s.pulls.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&h)
		if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && h.Holder != holder) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = s.pulls.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
		return err
	})
}
