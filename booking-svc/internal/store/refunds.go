package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/mongostore"
)

// collRefundsDue indexes the bookings whose refund has parts to attempt (docs/money.md,
// "Refunds"): one tiny document per booking, `_id` "<account>:<booking>", written before the
// cancellation that decides the refund and removed once no part is pending, so that the
// refund worker reads this small collection, never the bookings. The document also holds the
// booking's refund lease: the one process attempting its parts.
//
// Every write but the first insert reads the document, changes it and writes it back by
// `_id` alone under its lease (mongostore.WithLease), as the feed leases do: FerretDB applies
// a conditional update as a read then a whole-document write, so two replicas could both take
// an expired lease over with one.
const collRefundsDue = "refunds_due"

var _ booking.RefundsDue = (*Store)(nil)

type refundDueRec struct {
	ID        string    `bson:"_id"`
	AccountID string    `bson:"account_id"`
	BookingID int64     `bson:"booking_id"`
	MarkedAt  time.Time `bson:"marked_at"`
	Holder    string    `bson:"holder,omitempty"`
	Until     time.Time `bson:"until,omitempty"`
}

func refundDueID(account string, id int64) string { return account + ":" + strconv.FormatInt(id, 10) }

func (s *Store) refundsDue() *mongo.Collection { return s.db.Collection(collRefundsDue) }

// readRefundDue reads document id (ok false: none).
func (s *Store) readRefundDue(ctx context.Context, id string) (refundDueRec, bool, error) {
	var r refundDueRec
	err := s.refundsDue().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&r)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("read refund due %s: %w", id, err)
	}
	return r, true, nil
}

// MarkRefundDue records that booking id of account has (or is about to have) refund parts to
// attempt, marked at at; again moves the mark on, keeping the lease.
func (s *Store) MarkRefundDue(ctx context.Context, account string, id int64, at time.Time) error {
	key := refundDueID(account, id)
	fresh := refundDueRec{ID: key, AccountID: account, BookingID: id, MarkedAt: at.UTC()}
	_, err := s.refundsDue().InsertOne(ctx, fresh)
	if err == nil {
		return nil
	}
	if !mongostore.IsDuplicate(err) {
		return fmt.Errorf("mark refund due %s: %w", key, err)
	}
	err = mongostore.WithLease(ctx, s.refundsDue(), key, func() error {
		cur, ok, err := s.readRefundDue(ctx, key)
		if err != nil {
			return err
		}
		if !ok {
			_, err := s.refundsDue().InsertOne(ctx, fresh)
			if mongostore.IsDuplicate(err) {
				return nil
			}
			return err
		}
		cur.MarkedAt = at.UTC()
		_, err = s.refundsDue().ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, cur)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark refund due %s: %w", key, err)
	}
	return nil
}

// RefundsDue lists the bookings marked as having refund parts to attempt (at most 1000 a
// pass), from their own small collection.
func (s *Store) RefundsDue(ctx context.Context) ([]booking.DueRefund, error) {
	cur, err := s.refundsDue().Find(ctx, bson.D{}, options.Find().SetLimit(1000))
	if err != nil {
		return nil, fmt.Errorf("list refunds due: %w", err)
	}
	var recs []refundDueRec
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("list refunds due: %w", err)
	}
	out := make([]booking.DueRefund, len(recs))
	for i, r := range recs {
		out[i] = booking.DueRefund{AccountID: r.AccountID, BookingID: r.BookingID, MarkedAt: r.MarkedAt}
	}
	return out, nil
}

// TakeRefundLease makes holder the only process attempting booking id's refund parts until
// until: it takes a lease no one holds, or one whose holder's time is up at now. It answers
// booking.ErrBusy while another holds it and booking.ErrNotFound when the booking is not
// marked.
func (s *Store) TakeRefundLease(ctx context.Context, account string, id int64, holder string, now, until time.Time) error {
	key := refundDueID(account, id)
	busy := false
	err := mongostore.WithLease(ctx, s.refundsDue(), key, func() error {
		cur, ok, err := s.readRefundDue(ctx, key)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("refund due %s: %w", key, booking.ErrNotFound)
		case cur.Holder != "" && cur.Holder != holder && !cur.Until.Before(now):
			busy = true
			return nil
		}
		cur.Holder, cur.Until = holder, until.UTC()
		_, err = s.refundsDue().ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, cur)
		return err
	})
	if errors.Is(err, booking.ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("take refund lease %s: %w", key, err)
	}
	if busy {
		return booking.ErrBusy
	}
	return nil
}

// EndRefundLease gives holder's lease of booking id up. When dropMarkedBefore is set and the
// booking was last marked before it, the document is removed (no part is pending, and no
// marker's write is still to land); otherwise it stays, free. A lease another holds is left
// alone.
func (s *Store) EndRefundLease(ctx context.Context, account string, id int64, holder string, dropMarkedBefore time.Time) error {
	key := refundDueID(account, id)
	err := mongostore.WithLease(ctx, s.refundsDue(), key, func() error {
		cur, ok, err := s.readRefundDue(ctx, key)
		if err != nil || !ok || cur.Holder != holder {
			return err
		}
		if !dropMarkedBefore.IsZero() && cur.MarkedAt.Before(dropMarkedBefore) {
			_, err := s.refundsDue().DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
			return err
		}
		cur.Holder, cur.Until = "", time.Time{}
		_, err = s.refundsDue().ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, cur)
		return err
	})
	if err != nil {
		return fmt.Errorf("end refund lease %s: %w", key, err)
	}
	return nil
}
