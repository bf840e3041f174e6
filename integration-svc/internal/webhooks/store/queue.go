package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/mongostore"
)

// The queue: one document per pending delivery (Queue) in its lane, and one schedule per
// lane that has queued deliveries (Lanes). The deliverer reads due lanes, leases their
// heads and records each attempt's outcome (Finish); holds follow the endpoint's enabling
// and disabling (setHold), and RepairHolds mends what a stop left between two writes.

// queueDoc is a pending delivery's place in the queue: its lane, order and scheduling
// state. It exists exactly while its delivery is pending (a stale one, left by a stop
// between two writes, is removed when it is next leased).
type queueDoc struct {
	ID            string     `bson:"_id"`
	AccountID     string     `bson:"account_id"`
	WebhookID     int64      `bson:"webhook_id"`
	MessageID     string     `bson:"message_id"`
	Lane          string     `bson:"lane"`
	EventAt       time.Time  `bson:"event_at"`
	Seq           int        `bson:"seq"`
	Hold          bool       `bson:"hold"`
	Attempts      int        `bson:"attempts"`
	NextAttemptAt *time.Time `bson:"next_attempt_at"`
	LeaseUntil    time.Time  `bson:"lease_until"`
	// LeaseToken names the lease under which an attempt runs; a redelivery clears it, so the
	// attempt's outcome no longer overwrites the delivery (Finish).
	LeaseToken string `bson:"lease_token"`
}

func (q queueDoc) due() hooks.Due {
	return hooks.Due{Delivery: webhook.Delivery{Account: q.AccountID, WebhookID: q.WebhookID, MessageID: q.MessageID,
		EventAt: q.EventAt.UTC(), Status: webhook.StatusPending, Attempts: q.Attempts, NextAttemptAt: utc(q.NextAttemptAt)},
		Lane: q.Lane, Hold: q.Hold, LeaseUntil: q.LeaseUntil.UTC()}
}

// laneDoc is a lane's scheduling state (Lanes).
type laneDoc struct {
	ID        string    `bson:"_id"` // the lane
	AccountID string    `bson:"account_id"`
	WebhookID int64     `bson:"webhook_id"`
	Endpoint  string    `bson:"ep"` // account:webhook
	NextAt    time.Time `bson:"next_at"`
	Hold      bool      `bson:"hold"`
}

// enqueue queues pending delivery d and makes sure its lane is scheduled; reset (a
// redelivery) also resets an existing queue document's schedule and lease, and makes its lane
// due now (the delivery may now be its head), else an existing one is left as it is. The
// queue document is written before the lane's, so that a lane found empty and removed
// meanwhile is seen to have it (LaneDone).
func (s *Store) enqueue(ctx context.Context, d deliveryDoc, reset bool) error {
	sched := bson.D{{Key: "hold", Value: d.Hold}, {Key: "attempts", Value: d.Attempts},
		{Key: "next_attempt_at", Value: d.NextAttemptAt}, {Key: "lease_until", Value: time.Time{}}, {Key: "lease_token", Value: ""}}
	ident := bson.D{{Key: "account_id", Value: d.AccountID}, {Key: "webhook_id", Value: d.WebhookID},
		{Key: "message_id", Value: d.MessageID}, {Key: "lane", Value: d.Lane}, {Key: "event_at", Value: d.EventAt}, {Key: "seq", Value: d.Seq}}
	var err error
	if reset {
		_, err = s.queue.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, bson.D{{Key: "$setOnInsert", Value: ident}, {Key: "$set", Value: sched}},
			options.UpdateOne().SetUpsert(true))
	} else {
		// an insert is one write where FerretDB runs an upsert as a read and a write
		_, err = s.queue.InsertOne(ctx, append(bson.D{{Key: "_id", Value: d.ID}}, append(ident, sched...)...))
	}
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("queue delivery %s: %w", d.ID, err)
	}
	next := time.Now().UTC()
	if d.NextAttemptAt != nil {
		next = *d.NextAttemptAt
	}
	lane := laneDoc{ID: d.Lane, AccountID: d.AccountID, WebhookID: d.WebhookID, Endpoint: endpointKey(d.AccountID, d.WebhookID), NextAt: next, Hold: d.Hold}
	if reset {
		_, err = s.lanes.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.Lane}}, bson.D{
			{Key: "$set", Value: bson.D{{Key: "next_at", Value: next}}},
			{Key: "$setOnInsert", Value: bson.D{{Key: "account_id", Value: lane.AccountID}, {Key: "webhook_id", Value: lane.WebhookID},
				{Key: "ep", Value: lane.Endpoint}, {Key: "hold", Value: lane.Hold}}}}, options.UpdateOne().SetUpsert(true))
	} else {
		// A lane already scheduled keeps its time: its head is older than d. Read first: a
		// failed insert is a rolled-back write on the embedded store. A lane removed right
		// after the read (LaneDone) looks at the queue again after its removal and finds d,
		// queued before the read.
		err = s.lanes.FindOne(ctx, bson.D{{Key: "_id", Value: d.Lane}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			_, err = s.lanes.InsertOne(ctx, lane)
		}
	}
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("schedule lane %s: %w", d.Lane, err)
	}
	return nil
}

// queueOrder is a lane's order: event time, then the order of the events derived from one
// message, then the message id.
var queueOrder = bson.D{{Key: "event_at", Value: 1}, {Key: "seq", Value: 1}, {Key: "_id", Value: 1}}

// DueLanes returns at most limit lanes not held whose time has come, the longest waiting
// first, leaving out the endpoints in busy (account:webhook keys: those this process sends to
// as much as it may). A lane is one entry however many deliveries wait in it, and a lane
// whose head waits for a retry is not among them, so one endpoint's backlog never crowds out
// other endpoints' deliveries.
func (s *Store) DueLanes(ctx context.Context, now time.Time, busy []string, limit int64) ([]hooks.DueLane, error) {
	f := bson.D{{Key: "hold", Value: false}, {Key: "next_at", Value: bson.D{{Key: "$lte", Value: now}}}}
	if len(busy) > 0 {
		f = append(f, bson.E{Key: "ep", Value: bson.D{{Key: "$nin", Value: busy}}})
	}
	cur, err := s.lanes.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "next_at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(limit))
	if err != nil {
		return nil, err
	}
	var docs []laneDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]hooks.DueLane, 0, len(docs))
	for _, d := range docs {
		out = append(out, hooks.DueLane{Lane: d.ID, Account: d.AccountID, WebhookID: d.WebhookID})
	}
	return out, nil
}

// LaneHead returns the lane's oldest queued delivery, held or not (a held head holds its
// lane: nothing behind it goes first); false when the lane has none.
func (s *Store) LaneHead(ctx context.Context, lane string) (hooks.Due, bool, error) {
	var d queueDoc
	err := s.queue.FindOne(ctx, bson.D{{Key: "lane", Value: lane}}, options.FindOne().SetSort(queueOrder)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return hooks.Due{}, false, nil
	}
	if err != nil {
		return hooks.Due{}, false, err
	}
	return d.due(), true, nil
}

// SetLaneNext makes the lane's rounds wait until at (its head waits for a retry, or is
// held: hold).
func (s *Store) SetLaneNext(ctx context.Context, lane string, at time.Time, hold bool) error {
	_, err := s.lanes.UpdateOne(ctx, bson.D{{Key: "_id", Value: lane}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "next_at", Value: at}, {Key: "hold", Value: hold}}}})
	return err
}

// LaneDone removes the lane's schedule once it has no queued delivery. A delivery queued
// meanwhile wrote its queue document before it found the lane scheduled, so it is seen by
// the look that follows the removal, and the lane is scheduled again.
func (s *Store) LaneDone(ctx context.Context, lane string) error {
	var l laneDoc
	err := s.lanes.FindOne(ctx, bson.D{{Key: "_id", Value: lane}}).Decode(&l)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := s.lanes.DeleteOne(ctx, bson.D{{Key: "_id", Value: lane}}); err != nil {
		return err
	}
	h, ok, err := s.LaneHead(ctx, lane)
	if err != nil || !ok {
		return err
	}
	l.NextAt, l.Hold = time.Now().UTC(), h.Hold
	if _, err := s.lanes.InsertOne(ctx, l); err != nil && !mongostore.IsDuplicate(err) {
		return err
	}
	return nil
}

// Lease claims a pending delivery until until; false when it is no longer pending, is
// held, is leased by another, or was tried since it was read (attempts differ). The
// returned delivery carries its data and the lease's token.
//
// A queue document whose last lease's outcome is already in the log (a stop came between
// Finish's two writes) is dropped: the log names the lease it was written under. A
// redelivered one carries no lease yet, so whatever an attempt in flight wrote to the log
// meanwhile, it is sent (with a fresh schedule: its attempts start again).
func (s *Store) Lease(ctx context.Context, d hooks.Due, now, until time.Time) (webhook.Delivery, bool, error) {
	key := DeliveryKey(d.Account, d.WebhookID, d.MessageID)
	var prev queueDoc
	token := rand.Text()
	err := s.queue.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: key}, {Key: "hold", Value: false},
		{Key: "attempts", Value: d.Attempts}, {Key: "lease_until", Value: bson.D{{Key: "$lte", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: until}, {Key: "lease_token", Value: token}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&prev)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return webhook.Delivery{}, false, nil
	}
	if err != nil {
		return webhook.Delivery{}, false, err
	}
	var doc deliveryDoc
	err = s.deliv.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&doc)
	finished := prev.LeaseToken != "" && doc.LastToken == prev.LeaseToken
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && finished && doc.Status != webhook.StatusPending {
		// deleted, or finished by an attempt whose queue update a stop cut short.
		_, err = s.queue.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "lease_token", Value: token}})
		return webhook.Delivery{}, false, err
	}
	if err != nil {
		return webhook.Delivery{}, false, err
	}
	out := doc.delivery()
	out.Status, out.Attempts, out.Lease = webhook.StatusPending, prev.Attempts, token
	if finished { // the log is one attempt ahead of the queue (a stop between the two)
		out.Attempts = max(doc.Attempts, prev.Attempts)
	}
	return out, true, nil
}

// Finish records attempt a of delivery d (leased as d.Lease) and its outcome: delivered,
// retried at next (nil: failed, given up), releasing the lease. The attempt is logged first,
// then the delivery (with the lease's token), then the queue document, only if it still
// carries this lease: a redelivery meanwhile (which clears the lease) is not undone, and a
// stop in between leaves the queue document, whose next lease finds its outcome in the log
// and drops it.
func (s *Store) Finish(ctx context.Context, d webhook.Delivery, a webhook.Attempt, ok bool, next *time.Time) error {
	key := DeliveryKey(d.Account, d.WebhookID, d.MessageID)
	_, err := s.attempts.InsertOne(ctx, attemptDoc{ID: key + ":" + strconv.Itoa(a.Attempt) + ":" + strconv.FormatInt(a.At.UnixNano(), 36),
		AccountID: d.Account, WebhookID: d.WebhookID, Delivery: key, Attempt: a.Attempt, At: a.At,
		StatusCode: a.StatusCode, LatencyMS: a.LatencyMS, Error: a.Error, ResponseExcerpt: a.ResponseExcerpt, OK: ok})
	if err != nil {
		return err
	}
	// A redelivery meanwhile (it cleared the lease) owns the delivery now: the log keeps
	// showing it pending. (A redelivery landing between this look and the writes below only
	// shows this attempt's outcome in the log until its own attempt: the queue write is
	// conditional on the lease, so the redelivery is sent either way.)
	var q queueDoc
	err = s.queue.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&q)
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && q.LeaseToken != d.Lease {
		return nil
	}
	if err != nil {
		return err
	}
	set := bson.D{{Key: "attempts", Value: a.Attempt}, {Key: "lease_until", Value: time.Time{}}, {Key: "last_token", Value: d.Lease}}
	switch {
	case ok:
		set = append(set, bson.E{Key: "status", Value: webhook.StatusDelivered}, bson.E{Key: "delivered_at", Value: a.At},
			bson.E{Key: "next_attempt_at", Value: nil})
	case next == nil:
		set = append(set, bson.E{Key: "status", Value: webhook.StatusFailed}, bson.E{Key: "next_attempt_at", Value: nil})
	default:
		set = append(set, bson.E{Key: "next_attempt_at", Value: *next})
	}
	// by _id alone: FerretDB reads only the one document then (any other condition makes
	// it scan the collection); the lease keeps other attempts off this delivery.
	if _, err = s.deliv.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}}, bson.D{{Key: "$set", Value: set}}); err != nil {
		return err
	}
	mine := bson.D{{Key: "_id", Value: key}, {Key: "lease_token", Value: d.Lease}}
	if next == nil || ok {
		_, err = s.queue.DeleteOne(ctx, mine)
		return err
	}
	_, err = s.queue.UpdateOne(ctx, mine, bson.D{{Key: "$set", Value: bson.D{
		{Key: "attempts", Value: a.Attempt}, {Key: "next_attempt_at", Value: *next}, {Key: "lease_until", Value: time.Time{}}}}})
	return err
}

// Hold holds one delivery (its endpoint turned out disabled at send time).
func (s *Store) Hold(ctx context.Context, d webhook.Delivery) error {
	_, err := s.queue.UpdateOne(ctx, bson.D{{Key: "_id", Value: DeliveryKey(d.Account, d.WebhookID, d.MessageID)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "hold", Value: true}, {Key: "lease_until", Value: time.Time{}}}}})
	return err
}

// Release gives up a lease without an attempt (the attempt could not be made: booking-svc
// did not answer); the delivery is due again at next.
func (s *Store) Release(ctx context.Context, d webhook.Delivery, next time.Time) error {
	_, err := s.queue.UpdateOne(ctx, bson.D{{Key: "_id", Value: DeliveryKey(d.Account, d.WebhookID, d.MessageID)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: time.Time{}}, {Key: "next_attempt_at", Value: next}}}})
	return err
}

// Drop deletes a delivery whose endpoint no longer exists (recorded just after its
// deletion), with its queue document.
func (s *Store) Drop(ctx context.Context, d webhook.Delivery) error {
	key := DeliveryKey(d.Account, d.WebhookID, d.MessageID)
	if _, err := s.queue.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}}); err != nil {
		return err
	}
	_, err := s.deliv.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
	return err
}

// setHold holds (endpoint disabled or paused) or releases the endpoint's pending deliveries
// and its lanes; a release makes the held ones due now, and leaves a delivery that waits for
// a retry (not held) at its time. Only called with the endpoint's lease held.
//
// The queue alone, not the log: the log's pending entries are written by their attempts
// only. Writing them here too raced the attempts that re-enabling lets go at once: FerretDB
// applies an update as a read and a write of the whole document, so an entry just recorded
// delivered was put back to pending (systest/hookcrash TestAutoDisable).
func (s *Store) setHold(ctx context.Context, account string, id int64, hold bool, now time.Time) error {
	ep := bson.D{{Key: "account_id", Value: account}, {Key: "webhook_id", Value: id}}
	set := bson.D{{Key: "hold", Value: hold}}
	laneSet := bson.D{{Key: "hold", Value: hold}}
	if !hold {
		set = append(set, bson.E{Key: "next_attempt_at", Value: now})
		laneSet = append(laneSet, bson.E{Key: "next_at", Value: now})
	}
	if _, err := s.queue.UpdateMany(ctx, append(slices.Clone(ep), bson.E{Key: "hold", Value: !hold}),
		bson.D{{Key: "$set", Value: set}}); err != nil {
		return err
	}
	_, err := s.lanes.UpdateMany(ctx, ep, bson.D{{Key: "$set", Value: laneSet}})
	return err
}

// BackfillQueue queues every pending delivery that has no queue document (recorded before
// the queue existed, or left by a redelivery that failed half-way); at every start and once
// an hour (deliver), idempotent. It reads the log's pending deliveries.
func (s *Store) BackfillQueue(ctx context.Context) error {
	cur, err := s.deliv.Find(ctx, bson.D{{Key: "status", Value: webhook.StatusPending}}, options.Find().SetProjection(bson.D{{Key: "data", Value: 0}}))
	if err != nil {
		return err
	}
	var docs []deliveryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return err
	}
	for _, d := range docs {
		if err := s.enqueue(ctx, d, false); err != nil {
			return err
		}
	}
	return nil
}

// RepairHolds schedules the lanes that lost their schedule (ensureLanes), releases the held
// deliveries and lanes of every endpoint that is enabled, and drops what is left of an
// endpoint that no longer exists; it returns how many lanes and endpoints it repaired. A
// delivery takes its hold from a copy of its endpoint read a moment earlier (the consumer
// recording it, a redelivery, the deliverer holding it at send time), so one written just
// after its endpoint was enabled elsewhere would wait behind an enabled endpoint for good.
// Each endpoint is read under its lease, as ModifyEndpoint writes it, so a disabling cannot
// come between the read and the release.
func (s *Store) RepairHolds(ctx context.Context, now time.Time) (int, error) {
	repaired, err := s.ensureLanes(ctx, now)
	if err != nil {
		return repaired, err
	}
	held := map[string][2]any{} // endpoint key → account, webhook id
	for _, c := range []*mongo.Collection{s.queue, s.lanes} {
		cur, err := c.Find(ctx, bson.D{{Key: "hold", Value: true}},
			options.Find().SetProjection(bson.D{{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}}))
		if err != nil {
			return repaired, err
		}
		var docs []queueDoc
		if err := cur.All(ctx, &docs); err != nil {
			return repaired, err
		}
		for _, d := range docs {
			held[endpointKey(d.AccountID, d.WebhookID)] = [2]any{d.AccountID, d.WebhookID}
		}
	}
	for key, ep := range held {
		account, id := ep[0].(string), ep[1].(int64)
		err := mongostore.WithLease(ctx, s.endpoints, key, func() error {
			e, err := s.Endpoint(ctx, account, id)
			switch {
			case errors.Is(err, hooks.ErrNotFound):
				repaired++
				return s.dropDeliveries(ctx, account, id)
			case err != nil || !e.Enabled:
				return err
			}
			repaired++
			return s.setHold(ctx, account, id, false, now)
		})
		if err != nil {
			return repaired, err
		}
	}
	return repaired, nil
}

// ensureLanes schedules, due at now, every lane that has queued deliveries and no schedule
// (one queued while its lane was being removed as empty, if LaneDone's second look missed
// it; or queued before lanes were kept); it returns how many.
func (s *Store) ensureLanes(ctx context.Context, now time.Time) (int, error) {
	cur, err := s.queue.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "lane", Value: 1},
		{Key: "account_id", Value: 1}, {Key: "webhook_id", Value: 1}, {Key: "hold", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var queued []queueDoc
	if err := cur.All(ctx, &queued); err != nil {
		return 0, err
	}
	if len(queued) == 0 {
		return 0, nil
	}
	lcur, err := s.lanes.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var lanes []laneDoc
	if err := lcur.All(ctx, &lanes); err != nil {
		return 0, err
	}
	scheduled := make(map[string]bool, len(lanes))
	for _, l := range lanes {
		scheduled[l.ID] = true
	}
	n := 0
	for _, q := range queued {
		if scheduled[q.Lane] {
			continue
		}
		scheduled[q.Lane] = true
		l := laneDoc{ID: q.Lane, AccountID: q.AccountID, WebhookID: q.WebhookID, Endpoint: endpointKey(q.AccountID, q.WebhookID), NextAt: now, Hold: q.Hold}
		if _, err := s.lanes.InsertOne(ctx, l); err != nil && !mongostore.IsDuplicate(err) {
			return n, err
		}
		n++
	}
	return n, nil
}
