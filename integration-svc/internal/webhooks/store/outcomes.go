package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// Endpoint outcomes: several deliveries of one endpoint end at once, in several replicas.
// The failure streak lives in the attempt log alone (Streak); a success and a disabling
// are written to the endpoint under its lease (ModifyEndpoint).

// Succeeded records the time of a successful attempt, which ends the failure streak (the
// streak is counted from the attempt log after it: Streak); an earlier time than the one
// stored (attempts end out of order) changes nothing.
func (s *Store) Succeeded(ctx context.Context, account string, id int64, at time.Time) error {
	_, _, err := s.ModifyEndpoint(ctx, account, id, at, func(e *webhook.Endpoint) bool {
		if e.LastSuccessAt != nil && !at.After(*e.LastSuccessAt) {
			return false
		}
		e.LastSuccessAt = &at
		return true
	})
	if errors.Is(err, hooks.ErrNotFound) {
		return nil // deleted meanwhile
	}
	return err
}

// Failed is the endpoint after a failed attempt (already in the attempt log, Finish), its
// streak filled in (Streak). It writes nothing: the streak lives in the attempt log alone,
// so no update of the endpoint document can race a Disable (FerretDB applies an update as a
// read and a write of the whole document, and a concurrent one is lost), and attempts
// ending at once in several replicas all count.
func (s *Store) Failed(ctx context.Context, account string, id int64) (webhook.Endpoint, error) {
	e, err := s.Endpoint(ctx, account, id)
	if err != nil {
		return e, err
	}
	return s.Streak(ctx, e)
}

// Streak fills in e's failure streak from the attempt log: the failed attempts since the
// later of its last success and its re-enabling, the first and the last of them.
func (s *Store) Streak(ctx context.Context, e webhook.Endpoint) (webhook.Endpoint, error) {
	q := bson.D{{Key: "account_id", Value: e.Account}, {Key: "webhook_id", Value: e.ID}, {Key: "ok", Value: false}}
	from := e.LastSuccessAt
	if e.StreakFrom != nil && (from == nil || e.StreakFrom.After(*from)) {
		from = e.StreakFrom
	}
	if from != nil {
		q = append(q, bson.E{Key: "at", Value: bson.D{{Key: "$gt", Value: *from}}})
	}
	cur, err := s.attempts.Find(ctx, q, options.Find().SetProjection(bson.D{{Key: "at", Value: 1}}))
	if err != nil {
		return e, err
	}
	var docs []struct {
		At time.Time `bson:"at"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return e, err
	}
	e.FailureStreak, e.FirstFailureAt, e.LastFailureAt = len(docs), nil, nil
	for _, d := range docs {
		at := d.At.UTC()
		if e.FirstFailureAt == nil || at.Before(*e.FirstFailureAt) {
			e.FirstFailureAt = &at
		}
		if e.LastFailureAt == nil || at.After(*e.LastFailureAt) {
			e.LastFailureAt = &at
		}
	}
	return e, nil
}

// Disable disables the endpoint for reason and holds its deliveries, if it is still as seen
// when its failure streak was counted: enabled, with no success and no re-enabling since.
// False when it was not (another replica disabled it first, the account paused or
// re-enabled it, or an attempt succeeded meanwhile) or was deleted.
//
// notice is the webhook.disabled event to record for the account's other endpoints: it is
// kept on the endpoint with the disabling (PendingNotices) until NoticeRecorded.
func (s *Store) Disable(ctx context.Context, account string, id int64, at time.Time, reason string, seen webhook.Endpoint, notice webhook.Event) (bool, error) {
	_, disabled, err := s.ModifyEndpoint(ctx, account, id, at, func(e *webhook.Endpoint) bool {
		if !e.Enabled || !sameTime(e.LastSuccessAt, seen.LastSuccessAt) || !sameTime(e.StreakFrom, seen.StreakFrom) {
			return false
		}
		e.Enabled, e.DisabledAt, e.DisabledReason, e.UpdatedAt, e.Notice = false, &at, reason, at, &notice
		return true
	})
	if errors.Is(err, hooks.ErrNotFound) {
		return false, nil
	}
	return disabled, err
}

// PendingNotices lists the endpoints whose disabling's notice is not recorded yet (a store
// error right after the disabling), with their notices.
func (s *Store) PendingNotices(ctx context.Context) ([]webhook.Endpoint, error) {
	eps, err := s.findEndpoints(ctx, bson.D{{Key: "notice", Value: bson.D{{Key: "$ne", Value: nil}}}})
	return slices.DeleteFunc(eps, func(e webhook.Endpoint) bool { return e.Notice == nil }), err
}

// NoticeRecorded clears the endpoint's pending notice msg (recorded for the other endpoints).
func (s *Store) NoticeRecorded(ctx context.Context, account string, id int64, msg string) error {
	_, _, err := s.ModifyEndpoint(ctx, account, id, time.Now().UTC(), func(e *webhook.Endpoint) bool {
		if e.Notice == nil || e.Notice.ID != msg {
			return false
		}
		e.Notice = nil
		return true
	})
	if errors.Is(err, hooks.ErrNotFound) {
		return nil
	}
	return err
}

func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}
