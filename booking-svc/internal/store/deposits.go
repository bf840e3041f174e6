package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// The damage-deposit holds' index (booking.DepositsDue, docs/money.md): `deposits_due` keeps
// one small document per booking whose hold has a step to come, `_id` `<account>:<booking>`,
// with the time its next step is due. The money worker reads it whole, never the bookings
// (FerretDB pushes down only a lone `_id` equality, docs/booking.md "Listing bookings").
// `seq` counts the writes of a document, so that the worker drops only the entry it read.
const collDepositsDue = "deposits_due"

var _ booking.DepositsDue = (*Store)(nil)

type depositDueRec struct {
	ID  string    `bson:"_id"`
	At  time.Time `bson:"at"`
	Seq int64     `bson:"seq"`
}

func depositDueID(account string, id int64) string { return account + ":" + strconv.FormatInt(id, 10) }

// ScheduleDeposit records that booking id of account has a step due at at, or earlier if
// its entry says so already (an earlier time is only a read too many).
func (s *Store) ScheduleDeposit(ctx context.Context, account string, id int64, at time.Time) error {
	upd := bson.D{{Key: "$min", Value: bson.D{{Key: "at", Value: at.UTC()}}}, {Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}}
	_, err := s.db.Collection(collDepositsDue).UpdateOne(ctx, bson.D{{Key: "_id", Value: depositDueID(account, id)}}, upd,
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("schedule the deposit of booking %d: %w", id, err)
	}
	return nil
}

// SetDepositDue sets the time of the next step of entry e (read by DepositsDue), unless it
// was written since.
func (s *Store) SetDepositDue(ctx context.Context, e booking.DepositDue, at time.Time) error {
	_, err := s.db.Collection(collDepositsDue).UpdateOne(ctx, bson.D{{Key: "_id", Value: depositDueID(e.AccountID, e.BookingID)}, {Key: "seq", Value: e.Seq}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: at.UTC()}}}})
	if err != nil {
		return fmt.Errorf("reschedule the deposit of booking %d: %w", e.BookingID, err)
	}
	return nil
}

// DropDepositDue forgets entry e (read by DepositsDue), unless it was written since.
func (s *Store) DropDepositDue(ctx context.Context, e booking.DepositDue) error {
	_, err := s.db.Collection(collDepositsDue).DeleteOne(ctx, bson.D{{Key: "_id", Value: depositDueID(e.AccountID, e.BookingID)}, {Key: "seq", Value: e.Seq}})
	if err != nil {
		return fmt.Errorf("drop the deposit of booking %d: %w", e.BookingID, err)
	}
	return nil
}

// DepositsDue lists every entry.
func (s *Store) DepositsDue(ctx context.Context) ([]booking.DepositDue, error) {
	cur, err := s.db.Collection(collDepositsDue).Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list deposits due: %w", err)
	}
	var recs []depositDueRec
	if err := cur.All(ctx, &recs); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("list deposits due: %w", err)
	}
	out := make([]booking.DepositDue, 0, len(recs))
	for _, r := range recs {
		i := strings.LastIndexByte(r.ID, ':')
		id, err := strconv.ParseInt(r.ID[i+1:], 10, 64)
		if i < 0 || err != nil {
			continue
		}
		out = append(out, booking.DepositDue{AccountID: r.ID[:i], BookingID: id, At: r.At, Seq: r.Seq})
	}
	return out, nil
}
