// Package store is messaging-svc's MongoDB side. Its files are split by owner: messages.go
// and suppressions.go (the outbox: the delivery log and the suppression list), views.go and
// snapshots.go (intake), templates.go and settings.go (the API). Every document carries its
// account and every query an account filter, except the sender's due query (Due), which
// serves every account.
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

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// Status is where a message is in its life (docs/messaging.md, "Exactly once").
type Status string

const (
	StatusScheduled  Status = "scheduled"  // a scheduled trigger not yet due
	StatusPending    Status = "pending"    // due, waiting for a sender
	StatusSending    Status = "sending"    // a sender holds its lease
	StatusSent       Status = "sent"       // the server accepted it
	StatusFailed     Status = "failed"     // permanent error or retries exhausted
	StatusBounced    Status = "bounced"    // the address bounced (now suppressed)
	StatusCancelled  Status = "cancelled"  // never sent: stay moved, booking cancelled, trigger off
	StatusSuppressed Status = "suppressed" // never sent: the address is on the suppression list
)

// Final tells whether a message in status s stays so: nothing sends or cancels it again.
func (s Status) Final() bool {
	switch s {
	case StatusSent, StatusFailed, StatusBounced, StatusCancelled, StatusSuppressed:
		return true
	}
	return false
}

// Cancellable tells whether a message in status s can still be cancelled: it is waiting,
// not being sent and not done.
func (s Status) Cancellable() bool { return s == StatusScheduled || s == StatusPending }

// Message is the `messages` document, _id = the natural id (trigger.ID).
type Message struct {
	ID         string            `bson:"_id"`
	Account    string            `bson:"account"`
	Trigger    string            `bson:"trigger"`
	BookingID  int64             `bson:"booking_id"`
	PropertyID int64             `bson:"property_id"`
	BrandID    int64             `bson:"brand_id"`
	Occurrence string            `bson:"occurrence"`
	To         trigger.Recipient `bson:"to"`
	Lang       trigger.Lang      `bson:"lang"`
	Scheduled  bool              `bson:"scheduled"`
	// Detail is what an event trigger carries that the booking does not (payment.failed:
	// the charge attempt; owner.channel_conflict: channel and reason). Keys are the
	// template's .Message fields' names, values strings.
	Detail   map[string]string `bson:"detail,omitempty"`
	Status   Status            `bson:"status"`
	SendAt   time.Time         `bson:"send_at"` // due instant (UTC); next attempt after a retry
	Attempts int               `bson:"attempts"`
	// What was (last) sent: filled by the sender.
	Address   string    `bson:"address,omitempty"`
	Language  string    `bson:"language,omitempty"`
	Subject   string    `bson:"subject,omitempty"`
	MessageID string    `bson:"message_id,omitempty"`
	Answer    string    `bson:"answer,omitempty"` // the provider's last answer / error text
	Opens     int       `bson:"opens,omitempty"`
	SentAt    time.Time `bson:"sent_at,omitempty"`
	Created   time.Time `bson:"created"`
	Updated   time.Time `bson:"updated"`

	// The lease (the outbox's own). Claim is the number of the message's last claim: each
	// change of a waiting or sending message (a sender's claim, a cancel) first inserts the
	// claim document "<id>#<Claim+1>" in message_claims, which only one writer can, and then
	// writes the message conditioned on Claim (claimNext). LeaseOwner and LeaseUntil name the sender
	// holding a `sending` message and when its lease expires.
	Claim      int64     `bson:"claim"`
	LeaseOwner string    `bson:"lease_owner,omitempty"`
	LeaseUntil time.Time `bson:"lease_until,omitempty"`
}

const (
	messagesColl = "messages"
	claimsColl   = "message_claims"
)

// ErrLeaseLost is answered by the writes a sender makes under its lease when it holds it no
// more: the lease expired and another sender claimed the message (or it was erased).
var ErrLeaseLost = errors.New("store: the message's lease is lost")

// Messages is the delivery log and the outbox: one document per message, inserted once by
// its natural id.
type Messages struct {
	coll   *mongo.Collection
	claims *mongo.Collection
}

// NewMessages returns the messages of db, creating their collections and indexes.
func NewMessages(ctx context.Context, db *mongo.Database) (*Messages, error) {
	err := mongostore.Ensure(ctx, db, []string{messagesColl, claimsColl}, []mongostore.Index{
		// the sender's due query: waiting messages by due instant, sending ones by lease
		{Collection: messagesColl, Keys: bson.D{{Key: "status", Value: 1}, {Key: "send_at", Value: 1}}},
		{Collection: messagesColl, Keys: bson.D{{Key: "status", Value: 1}, {Key: "lease_until", Value: 1}}},
		// the log's lists: the account's newest first, or a booking's
		{Collection: messagesColl, Keys: bson.D{{Key: "account", Value: 1}, {Key: "created", Value: -1}}},
		{Collection: messagesColl, Keys: bson.D{{Key: "account", Value: 1}, {Key: "booking_id", Value: 1}, {Key: "created", Value: -1}}},
		{Collection: claimsColl, Keys: bson.D{{Key: "account", Value: 1}, {Key: "booking", Value: 1}}},
	})
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return &Messages{coll: db.Collection(messagesColl), claims: db.Collection(claimsColl)}, nil
}

// messagesTime is t as stored: UTC, to the millisecond (what BSON dates keep), so that a
// time read back equals the one written.
func messagesTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// Insert inserts each message once (by _id): a message whose id exists is left as it is,
// except a scheduled one that was cancelled, which waits again (revive). inserted counts
// both. Status: StatusScheduled when m.Scheduled and SendAt > now, else StatusPending.
func (s *Messages) Insert(ctx context.Context, msgs []trigger.Message, detail map[string]string, now time.Time) (inserted int, err error) {
	now = messagesTime(now)
	for _, m := range msgs {
		if m.ID == "" || m.Account == "" {
			return inserted, fmt.Errorf("messages: insert %q: no id or account", m.ID)
		}
		doc := Message{
			ID: m.ID, Account: m.Account, Trigger: m.Trigger, BookingID: m.BookingID,
			PropertyID: m.PropertyID, BrandID: m.BrandID, Occurrence: m.Occurrence, To: m.To,
			Lang: m.Lang, Scheduled: m.Scheduled, Detail: detail, Status: StatusPending,
			SendAt: messagesTime(m.SendAt), Created: now, Updated: now,
		}
		if m.Scheduled && doc.SendAt.After(now) {
			doc.Status = StatusScheduled
		}
		if doc.SendAt.IsZero() {
			doc.SendAt = now
		}
		_, err := s.coll.InsertOne(ctx, doc)
		switch {
		case mongostore.IsDuplicate(err) && m.Scheduled:
			// already there: a replay or another replica inserted it, or the plan asks again
			// for a reminder it cancelled (a stay moved back, a trigger switched on again)
			revived, err := s.revive(ctx, doc)
			if err != nil {
				return inserted, err
			}
			if revived {
				inserted++
			}
		case mongostore.IsDuplicate(err):
			// already there: a replayed event or another replica inserted it
		case err != nil:
			return inserted, fmt.Errorf("messages: insert %s: %w", m.ID, err)
		default:
			inserted++
		}
	}
	return inserted, nil
}

// revive makes a cancelled scheduled message doc names wait again, due at doc's SendAt: a
// plan asks again for a reminder it had cancelled (the stay moved away and back, its trigger
// switched off and on). A message that was sent, failed or is waiting stays as it is, so a
// replay changes nothing. The write takes the message's next claim first, as a cancel does.
func (s *Messages) revive(ctx context.Context, doc Message) (bool, error) {
	q := bson.D{{Key: "_id", Value: doc.ID}, {Key: "account", Value: doc.Account}}
	var m Message
	err := s.coll.FindOne(ctx, q).Decode(&m)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("messages: revive %s: %w", doc.ID, err)
	}
	if m.Status != StatusCancelled || !m.Scheduled {
		return false, nil
	}
	n, err := s.claimNext(ctx, m, "revive", doc.Updated, doc.Updated.Add(messagesCancelHold))
	if err != nil || n == 0 {
		// another writer holds it (a second replica reviving it too): its write stands
		return false, err
	}
	res, err := s.coll.UpdateOne(ctx, append(q, bson.E{Key: "claim", Value: m.Claim},
		bson.E{Key: "status", Value: string(StatusCancelled)}),
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: string(doc.Status)},
			{Key: "send_at", Value: doc.SendAt}, {Key: "claim", Value: n}, {Key: "updated", Value: doc.Updated}}}})
	if err != nil {
		return false, fmt.Errorf("messages: revive %s: %w", doc.ID, err)
	}
	if res.MatchedCount == 0 {
		return false, s.withdrawClaim(ctx, m, n, "revive")
	}
	return true, nil
}

// Get answers the account's message id; ok is false when the account has none of that id.
func (s *Messages) Get(ctx context.Context, account, id string) (Message, bool, error) {
	var m Message
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "account", Value: account}}).Decode(&m)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return Message{}, false, nil
	case err != nil:
		return Message{}, false, fmt.Errorf("messages: get %s: %w", id, err)
	}
	return m, true, nil
}

// MessageFilter selects messages of the log; zero fields select all.
type MessageFilter struct {
	BookingID int64
	Trigger   string
	Status    Status
	Address   string // the address sent to (any case)
	Page      int    // ≥ 1 (0: 1)
	Limit     int    // 1–100 (0: 20; more: 100)
}

// List answers a page of the account's messages matching f, newest first, and how many
// match in all.
func (s *Messages) List(ctx context.Context, account string, f MessageFilter) (msgs []Message, total int64, err error) {
	q := bson.D{{Key: "account", Value: account}}
	if f.BookingID != 0 {
		q = append(q, bson.E{Key: "booking_id", Value: f.BookingID})
	}
	if f.Trigger != "" {
		q = append(q, bson.E{Key: "trigger", Value: f.Trigger})
	}
	if f.Status != "" {
		q = append(q, bson.E{Key: "status", Value: string(f.Status)})
	}
	if f.Address != "" {
		q = append(q, bson.E{Key: "address", Value: strings.ToLower(strings.TrimSpace(f.Address))})
	}
	page, limit := max(f.Page, 1), f.Limit
	switch {
	case limit <= 0:
		limit = 20
	case limit > 100:
		limit = 100
	}
	total, err = s.coll.CountDocuments(ctx, q)
	if err != nil {
		return nil, 0, fmt.Errorf("messages: count: %w", err)
	}
	cur, err := s.coll.Find(ctx, q, options.Find().
		SetSort(bson.D{{Key: "created", Value: -1}, {Key: "_id", Value: -1}}).
		SetSkip(int64(page-1)*int64(limit)).SetLimit(int64(limit)))
	if err != nil {
		return nil, 0, fmt.Errorf("messages: list: %w", err)
	}
	msgs = []Message{}
	if err := cur.All(ctx, &msgs); err != nil {
		return nil, 0, fmt.Errorf("messages: list: %w", err)
	}
	return msgs, total, nil
}

// Cancel cancels the messages named that are still scheduled or pending (never one sending
// or done). Ids of other accounts, or unknown, are passed over.
func (s *Messages) Cancel(ctx context.Context, account string, ids []string, now time.Time) error {
	for _, id := range ids {
		if err := s.cancelOne(ctx, account, id, now); err != nil {
			return err
		}
	}
	return nil
}

// CancelScheduled cancels every scheduled/pending SCHEDULED-trigger message of the booking
// whose id is not in keep (keep nil: all).
func (s *Messages) CancelScheduled(ctx context.Context, account string, booking int64, keep []string, now time.Time) error {
	q := bson.D{{Key: "account", Value: account}, {Key: "booking_id", Value: booking},
		{Key: "scheduled", Value: true}, {Key: "status", Value: bson.D{{Key: "$in", Value: messagesCancellable}}}}
	if len(keep) > 0 {
		q = append(q, bson.E{Key: "_id", Value: bson.D{{Key: "$nin", Value: keep}}})
	}
	cur, err := s.coll.Find(ctx, q, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("messages: cancel scheduled of %d: %w", booking, err)
	}
	var ids []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &ids); err != nil {
		return fmt.Errorf("messages: cancel scheduled of %d: %w", booking, err)
	}
	for _, m := range ids {
		if err := s.cancelOne(ctx, account, m.ID, now); err != nil {
			return err
		}
	}
	return nil
}

var messagesCancellable = bson.A{string(StatusScheduled), string(StatusPending)}

// cancelOne cancels the account's message id if it is cancellable, taking the next claim on it
// first, so that a sender claiming it at the same moment and this cancel cannot both win
// (docs/messaging.md, "Exactly once").
func (s *Messages) cancelOne(ctx context.Context, account, id string, now time.Time) error {
	now = messagesTime(now)
	q := bson.D{{Key: "_id", Value: id}, {Key: "account", Value: account}}
	for try := range messagesCancelTries {
		var m Message
		err := s.coll.FindOne(ctx, q).Decode(&m)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return nil
		case err != nil:
			return fmt.Errorf("messages: cancel: %w", err)
		}
		if !m.Status.Cancellable() {
			return nil
		}
		n, err := s.claimNext(ctx, m, "cancel", now, now.Add(messagesCancelHold))
		if err != nil {
			return err
		}
		if n == 0 {
			// a sender or another cancel is writing it: look again once it has
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(min(try+1, 10)) * 10 * time.Millisecond):
			}
			continue
		}
		res, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: m.ID}, {Key: "account", Value: m.Account},
			{Key: "claim", Value: m.Claim}, {Key: "status", Value: string(m.Status)}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: string(StatusCancelled)},
				{Key: "claim", Value: n}, {Key: "updated", Value: now}}}})
		if err != nil {
			return fmt.Errorf("messages: cancel %s: %w", m.ID, err)
		}
		if res.MatchedCount == 0 {
			if err := s.withdrawClaim(ctx, m, n, "cancel"); err != nil {
				return err
			}
			continue // it changed since it was read: look again
		}
		return nil
	}
	return fmt.Errorf("messages: cancel %s: it stays claimed by a writer that does not write", id)
}

// claimNext takes m's next claim, inserting the claim document "<id>#<n>" (n = m.Claim+1),
// which only one writer can; the writer then writes m conditioned on m.Claim. A claim
// document whose hold has expired and whose writer never wrote (it stopped in between) is
// passed over for the next n. It answers the n taken, 0 when another writer holds the claim.
func (s *Messages) claimNext(ctx context.Context, m Message, owner string, now, until time.Time) (int64, error) {
	n := m.Claim + 1
	for range messagesClaimTries {
		_, err := s.claims.InsertOne(ctx, bson.D{{Key: "_id", Value: messagesClaimID(m.ID, n)},
			{Key: "account", Value: m.Account}, {Key: "booking", Value: m.BookingID},
			{Key: "owner", Value: owner}, {Key: "at", Value: now}, {Key: "until", Value: until}})
		if err == nil {
			return n, nil
		}
		if !mongostore.IsDuplicate(err) {
			return 0, fmt.Errorf("messages: claim %s: %w", m.ID, err)
		}
		var held struct {
			Until time.Time `bson:"until"`
		}
		err = s.claims.FindOne(ctx, bson.D{{Key: "_id", Value: messagesClaimID(m.ID, n)}}).Decode(&held)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue // its writer withdrew it: try n again
		case err != nil:
			return 0, fmt.Errorf("messages: claim %s: %w", m.ID, err)
		case held.Until.After(now):
			return 0, nil
		}
		n++
	}
	return 0, nil
}

// withdrawClaim deletes the claim document n that owner took and could not apply (m had
// changed since it was read), so that it holds nobody up.
func (s *Messages) withdrawClaim(ctx context.Context, m Message, n int64, owner string) error {
	_, err := s.claims.DeleteOne(ctx, bson.D{{Key: "_id", Value: messagesClaimID(m.ID, n)}, {Key: "owner", Value: owner}})
	if err != nil {
		return fmt.Errorf("messages: withdraw claim %s: %w", m.ID, err)
	}
	return nil
}

const (
	// messagesCancelTries bounds the looks of a cancel at a message other writers hold
	// (about 5 s in all).
	messagesCancelTries = 60
	// messagesClaimTries bounds the claim documents one claim looks at.
	messagesClaimTries = 8
	// messagesCancelHold is how long a cancel's claim holds off other writers: the time it
	// takes to write the cancel.
	messagesCancelHold = time.Minute
)

func messagesClaimID(id string, n int64) string { return id + "#" + strconv.FormatInt(n, 10) }

// Due answers up to limit messages a sender may claim at now, of every account, the
// earliest due first: scheduled or pending ones whose SendAt has come, and sending ones
// whose lease has expired (their sender stopped).
func (s *Messages) Due(ctx context.Context, now time.Time, limit int) ([]Message, error) {
	now = messagesTime(now)
	q := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: messagesCancellable}}},
			{Key: "send_at", Value: bson.D{{Key: "$lte", Value: now}}}},
		bson.D{{Key: "status", Value: string(StatusSending)},
			{Key: "lease_until", Value: bson.D{{Key: "$lte", Value: now}}}},
	}}}
	cur, err := s.coll.Find(ctx, q, options.Find().SetSort(bson.D{{Key: "send_at", Value: 1}}).SetLimit(int64(max(limit, 1))))
	if err != nil {
		return nil, fmt.Errorf("messages: due: %w", err)
	}
	var msgs []Message
	if err := cur.All(ctx, &msgs); err != nil {
		return nil, fmt.Errorf("messages: due: %w", err)
	}
	return msgs, nil
}

// Claim makes owner the sender of m (as Due answered it) until now+lease: m becomes
// `sending`. ok is false when m changed since it was read: another sender claimed it,
// it was cancelled, or it is not due any more.
func (s *Messages) Claim(ctx context.Context, m Message, owner string, now time.Time, lease time.Duration) (Message, bool, error) {
	now = messagesTime(now)
	switch {
	case m.Status.Cancellable() && !m.SendAt.After(now):
	case m.Status == StatusSending && !m.LeaseUntil.After(now):
	default:
		return Message{}, false, nil
	}
	until := messagesTime(now.Add(lease))
	n, err := s.claimNext(ctx, m, owner, now, until)
	if err != nil || n == 0 {
		return Message{}, false, err
	}
	q := bson.D{{Key: "_id", Value: m.ID}, {Key: "account", Value: m.Account},
		{Key: "claim", Value: m.Claim}, {Key: "status", Value: string(m.Status)}}
	if m.Status == StatusSending {
		q = append(q, bson.E{Key: "lease_until", Value: bson.D{{Key: "$lte", Value: now}}})
	}
	res, err := s.coll.UpdateOne(ctx, q, bson.D{{Key: "$set", Value: bson.D{
		{Key: "status", Value: string(StatusSending)}, {Key: "claim", Value: n},
		{Key: "lease_owner", Value: owner}, {Key: "lease_until", Value: until}, {Key: "updated", Value: now}}}})
	if err != nil {
		return Message{}, false, fmt.Errorf("messages: claim %s: %w", m.ID, err)
	}
	if res.MatchedCount == 0 {
		return Message{}, false, s.withdrawClaim(ctx, m, n, owner)
	}
	m.Status, m.Claim, m.LeaseOwner, m.LeaseUntil, m.Updated = StatusSending, n, owner, until, now
	return m, true, nil
}

// Outcome is what a sender records of a message it holds (Finish).
type Outcome struct {
	Status   Status    // where the message goes: pending (a retry or a wait) or a final status
	SendAt   time.Time // pending: when it is due again
	Attempts int       // the attempts made so far
	// What was sent or tried; empty fields leave the stored ones.
	Address, Language, Subject, MessageID, Answer string
	SentAt                                        time.Time // sent: when
}

// Finish records the outcome of m's send, conditioned on m's lease: ErrLeaseLost when its
// sender holds it no more. The lease is released.
func (s *Messages) Finish(ctx context.Context, m Message, o Outcome, now time.Time) error {
	if o.Status != StatusPending && !o.Status.Final() {
		return fmt.Errorf("messages: finish %s as %q", m.ID, o.Status)
	}
	now = messagesTime(now)
	set := bson.D{{Key: "status", Value: string(o.Status)}, {Key: "attempts", Value: o.Attempts},
		{Key: "updated", Value: now}}
	if o.Status == StatusPending {
		set = append(set, bson.E{Key: "send_at", Value: messagesTime(o.SendAt)})
	}
	for _, f := range []struct{ key, v string }{{"address", o.Address}, {"language", o.Language},
		{"subject", o.Subject}, {"message_id", o.MessageID}, {"answer", o.Answer}} {
		if f.v != "" {
			set = append(set, bson.E{Key: f.key, Value: f.v})
		}
	}
	if !o.SentAt.IsZero() {
		set = append(set, bson.E{Key: "sent_at", Value: messagesTime(o.SentAt)})
	}
	res, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: m.ID}, {Key: "account", Value: m.Account},
		{Key: "claim", Value: m.Claim}, {Key: "lease_owner", Value: m.LeaseOwner},
		{Key: "status", Value: string(StatusSending)}},
		bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: bson.D{{Key: "lease_until", Value: ""}}}})
	if err != nil {
		return fmt.Errorf("messages: finish %s: %w", m.ID, err)
	}
	if res.MatchedCount == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Erase deletes every message of the account (account erased).
func (s *Messages) Erase(ctx context.Context, account string) error {
	if _, err := s.coll.DeleteMany(ctx, bson.D{{Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("messages: erase %s: %w", account, err)
	}
	if _, err := s.claims.DeleteMany(ctx, bson.D{{Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("messages: erase claims of %s: %w", account, err)
	}
	return nil
}

// EraseBooking deletes the messages of a booking (guest erased).
func (s *Messages) EraseBooking(ctx context.Context, account string, booking int64) error {
	if _, err := s.coll.DeleteMany(ctx, bson.D{{Key: "account", Value: account}, {Key: "booking_id", Value: booking}}); err != nil {
		return fmt.Errorf("messages: erase booking %d: %w", booking, err)
	}
	if _, err := s.claims.DeleteMany(ctx, bson.D{{Key: "account", Value: account}, {Key: "booking", Value: booking}}); err != nil {
		return fmt.Errorf("messages: erase claims of booking %d: %w", booking, err)
	}
	return nil
}
