// Package idempotency makes retried writes safe: a request carrying an Idempotency-Key
// header is executed once per account, action and key; a retry gets the first answer back
// and changes nothing.
//
// An attempt owns its key for a lease (Keys.Lease), longer than its request may run
// (Keys.Deadline, applied here). A retry within the lease answers 409 "in progress". A key
// whose attempt stopped without an answer (the process died, or it answered 5xx or
// "busy") is taken over by the first retry after the lease: that retry becomes a new
// attempt, recorded as a new document with a unique `_id` ("<key>#<n>"), so that two
// retries can never both take over, even on a store without atomic conditional updates.
// Before running again, the new attempt asks the action's Resolver to settle what the
// earlier attempts left and to answer with what they committed, if they did: each attempt
// records the id it reserved (the booking a create was going to write) before writing it.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// Header is the request header clients set.
const Header = "Idempotency-Key"

// Collection keeps the answers.
const Collection = "idempotency"

// TTL is how long an answer is kept for replay.
const TTL = 24 * time.Hour

// Defaults of Keys.
const (
	DefaultDeadline = 25 * time.Second
	DefaultLease    = time.Minute
)

// Keys stores first answers.
type Keys struct {
	coll *mongo.Collection
	now  func() time.Time
	// Deadline bounds the request of each attempt.
	Deadline time.Duration
	// Lease is how long an attempt owns its key; at least twice Deadline, so that an
	// attempt whose lease is over has stopped and whatever it wrote has landed.
	Lease     time.Duration
	resolvers map[string]Resolver
	// replays counts the requests answered from a stored answer (Instrument; nil: none).
	replays metric.Int64Counter
}

// Instrument counts, in meter, the requests answered from a stored answer
// (vros.idempotency.replays). Call it once, before serving; a nil meter counts nothing.
func (k *Keys) Instrument(meter metric.Meter) {
	if meter == nil {
		return
	}
	k.replays, _ = meter.Int64Counter("vros.idempotency.replays", metric.WithUnit("{request}"),
		metric.WithDescription("Requests with an Idempotency-Key answered from the stored answer of an earlier one."))
	if k.replays != nil {
		k.replays.Add(context.Background(), 0) // exported at 0 from the start
	}
}

// New returns Keys over db.
func New(ctx context.Context, db *mongo.Database) (*Keys, error) {
	if err := mongostore.Ensure(ctx, db, mongostore.WithLocks(Collection), nil); err != nil {
		return nil, err
	}
	return &Keys{coll: db.Collection(Collection), now: time.Now, Deadline: DefaultDeadline, Lease: DefaultLease,
		resolvers: map[string]Resolver{}}, nil
}

// record is one attempt of a key: the first is "<account>:<action>:<key>", the n-th
// takeover "<account>:<action>:<key>#<n>".
type record struct {
	ID          string    `bson:"_id"`
	Hash        string    `bson:"hash"`
	Attempt     int       `bson:"attempt"`
	Done        bool      `bson:"done"`
	Status      int       `bson:"status,omitempty"`
	ContentType string    `bson:"content_type,omitempty"`
	Body        []byte    `bson:"body,omitempty"`
	At          time.Time `bson:"at"` // of the first attempt: the TTL counts from it
	Started     time.Time `bson:"started,omitempty"`
	LeaseUntil  time.Time `bson:"lease_until,omitempty"`
	// Ref is what the attempt reserved before writing it (a booking id, a payment id).
	Ref int64 `bson:"ref,omitempty"`
}

func attemptID(base string, n int) string {
	if n == 0 {
		return base
	}
	return base + "#" + strconv.Itoa(n)
}

// Attempt is the running attempt of a request with a key; handlers find it with From.
type Attempt struct {
	keys *Keys
	base string
	id   string
	// N is 0 for the first attempt, n for the n-th takeover.
	N int
	// Refs are what the earlier attempts reserved, oldest first.
	Refs []int64
}

type attemptKey struct{}

// From returns the attempt of the request, or nil when it carries no key.
func From(c *fiber.Ctx) *Attempt {
	a, _ := c.Locals(attemptKey{}).(*Attempt)
	return a
}

// Reserve records ref (an id the attempt is about to write under) before it is written,
// so that a later attempt can find what this one did.
func (a *Attempt) Reserve(ctx context.Context, ref int64) error {
	_, err := a.keys.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: a.id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "ref", Value: ref}}}})
	if err != nil {
		return fmt.Errorf("idempotency reserve: %w", err)
	}
	return nil
}

// Token is stable across the attempts of one key: an idempotency key for what the request
// asks of a third party (the card gateway).
func (a *Attempt) Token() string {
	sum := sha256.Sum256([]byte(a.base))
	return "idem-" + hex.EncodeToString(sum[:12])
}

// A Resolver runs before a takeover attempt: it settles what the earlier attempts left and,
// if one of them committed its change, answers with that outcome (answered true); otherwise
// the request runs again. An error is answered like a handler's (wrap it in Transient to let
// the next retry resolve again).
type Resolver func(c *fiber.Ctx, a *Attempt) (answered bool, err error)

// Resolve sets the resolver of action.
func (k *Keys) Resolve(action string, r Resolver) { k.resolvers[action] = r }

// transient marks an answer that is not kept.
type transient struct{ error }

func (t transient) Unwrap() error { return t.error }

// Transient marks err as an answer a retry may change (another change of the same booking
// is in progress): it is not kept, and the next retry runs again.
func Transient(err error) error { return transient{err} }

// Middleware guards the action the route serves. Without the header it does nothing.
func (k *Keys) Middleware(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get(Header)
		if key == "" {
			return c.Next()
		}
		if len(key) > 255 {
			return httpapi.InvalidField(Header, "must be at most 255 characters")
		}
		ctx, cancel := context.WithTimeout(c.UserContext(), k.Deadline)
		defer cancel()
		c.SetUserContext(ctx)
		sum := sha256.Sum256(c.Body())
		base := tenancyfiber.From(c).AccountID + ":" + action + ":" + key
		att, replay, err := k.acquire(ctx, base, hex.EncodeToString(sum[:]))
		if errors.Is(err, context.DeadlineExceeded) {
			// The key could not even be read in time: nothing ran, and the client may retry.
			c.Set(fiber.HeaderRetryAfter, "1")
			return httpapi.Unavailable("the service is busy; retry with the same Idempotency-Key")
		}
		if err != nil {
			var ra *retryAfter
			if errors.As(err, &ra) {
				c.Set(fiber.HeaderRetryAfter, strconv.Itoa(ra.seconds))
			}
			return err
		}
		if replay != nil {
			if k.replays != nil {
				k.replays.Add(ctx, 1)
			}
			c.Set("Idempotent-Replayed", "true")
			c.Set(fiber.HeaderContentType, replay.ContentType)
			return c.Status(replay.Status).Send(replay.Body)
		}
		c.Locals(attemptKey{}, att)

		answered := false
		if r := k.resolvers[action]; r != nil && att.N > 0 {
			answered, err = r(c, att)
		}
		if err == nil && !answered {
			err = c.Next()
		}
		keep := true
		if err != nil {
			var t transient
			keep = !errors.As(err, &t)
			// Write the error answer now, so that it can be kept like any other.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		wctx := context.WithoutCancel(ctx)
		if !keep || status >= 500 {
			// Nothing was promised: give the key up at once, so that the next retry takes over,
			// settles what this attempt left and runs again.
			_, uerr := k.coll.UpdateOne(wctx, bson.D{{Key: "_id", Value: att.id}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: k.now().UTC()}}}})
			return uerr
		}
		_, uerr := k.coll.UpdateOne(wctx, bson.D{{Key: "_id", Value: att.id}}, bson.D{{Key: "$set", Value: bson.D{
			{Key: "done", Value: true}, {Key: "status", Value: status},
			{Key: "content_type", Value: string(c.Response().Header.ContentType())},
			{Key: "body", Value: append([]byte(nil), c.Response().Body()...)},
		}}})
		return uerr
	}
}

// acquire makes this request the running attempt of base, or returns the answer to replay,
// or the error to answer (422 another body, 409 in progress).
func (k *Keys) acquire(ctx context.Context, base, hash string) (*Attempt, *record, error) {
	now := k.now().UTC()
	first := record{ID: base, Hash: hash, At: now, Started: now, LeaseUntil: now.Add(k.Lease)}
	for tries := 0; ; tries++ {
		_, err := k.coll.InsertOne(ctx, first)
		if err == nil {
			return &Attempt{keys: k, base: base, id: base}, nil, nil
		}
		if !mongostore.IsDuplicate(err) {
			return nil, nil, fmt.Errorf("idempotency: %w", err)
		}
		chain, err := k.chain(ctx, base)
		if err != nil {
			return nil, nil, err
		}
		if len(chain) == 0 {
			if tries == 0 {
				continue // expired in between
			}
			return nil, nil, httpapi.Conflict(httpapi.StatusConflict, "a request with this Idempotency-Key is in progress; retry")
		}
		if chain[0].Hash != hash {
			return nil, nil, &httpapi.Error{HTTP: fiber.StatusUnprocessableEntity, Type: "idempotency_key_reused", Status: httpapi.StatusInvalid,
				Message: "Idempotency-Key was already used with a different request"}
		}
		last := chain[len(chain)-1]
		if last.Done {
			return nil, &last, nil
		}
		end := last.LeaseUntil
		if end.IsZero() { // written before leases existed
			end = last.At.Add(k.Lease)
		}
		if now.Before(end) {
			return nil, nil, inProgress(end.Sub(now))
		}
		// The running attempt stopped without an answer: take the key over, as attempt n+1.
		next := record{ID: attemptID(base, last.Attempt+1), Hash: hash, Attempt: last.Attempt + 1, At: chain[0].At, Started: now,
			LeaseUntil: now.Add(k.Lease)}
		if _, err := k.coll.InsertOne(ctx, next); err != nil {
			if mongostore.IsDuplicate(err) {
				return nil, nil, inProgress(k.Lease) // another retry took it over first
			}
			return nil, nil, fmt.Errorf("idempotency: %w", err)
		}
		att := &Attempt{keys: k, base: base, id: next.ID, N: next.Attempt}
		for _, r := range chain {
			if r.Ref != 0 {
				att.Refs = append(att.Refs, r.Ref)
			}
		}
		return att, nil, nil
	}
}

// chain reads the attempts of base, first to last.
func (k *Keys) chain(ctx context.Context, base string) ([]record, error) {
	var out []record
	for n := 0; ; n++ {
		var r record
		err := k.coll.FindOne(ctx, bson.D{{Key: "_id", Value: attemptID(base, n)}}).Decode(&r)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("idempotency: %w", err)
		}
		r.Attempt = n
		out = append(out, r)
	}
}

// inProgress is the answer while an attempt owns the key.
func inProgress(left time.Duration) error {
	secs := int((left + time.Second - 1) / time.Second)
	return &retryAfter{err: httpapi.Conflict(httpapi.StatusConflict, "a request with this Idempotency-Key is still in progress"),
		seconds: max(secs, 1)}
}

// retryAfter is an answer that tells the client when to retry.
type retryAfter struct {
	err     *httpapi.Error
	seconds int
}

func (r *retryAfter) Error() string { return r.err.Error() }
func (r *retryAfter) Unwrap() error { return r.err }

// Expire deletes answers older than TTL.
func (k *Keys) Expire(ctx context.Context) error {
	_, err := k.coll.DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: k.now().UTC().Add(-TTL)}}}})
	if err != nil {
		return fmt.Errorf("expire idempotency keys: %w", err)
	}
	return nil
}

// accountKeys is the filter of every record of account.
func accountKeys(account string) bson.D {
	return bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}
}

// EraseAccount deletes every record of account (an erased account).
func (k *Keys) EraseAccount(ctx context.Context, account string) error {
	for _, c := range []*mongo.Collection{k.coll, k.coll.Database().Collection(Collection + "_locks")} {
		if _, err := c.DeleteMany(ctx, accountKeys(account)); err != nil {
			return fmt.Errorf("erase account's idempotency keys: %w", err)
		}
	}
	return nil
}

// RewriteAnswers passes the stored answer of every record of account to rewrite and stores
// what it returns when it reports a change (a guest's erasure anonymises the copies of
// their bookings that replays would answer).
func (k *Keys) RewriteAnswers(ctx context.Context, account string, rewrite func(body []byte) ([]byte, bool, error)) error {
	cur, err := k.coll.Find(ctx, accountKeys(account))
	if err != nil {
		return fmt.Errorf("read idempotency answers: %w", err)
	}
	var recs []record
	if err := cur.All(ctx, &recs); err != nil {
		return fmt.Errorf("read idempotency answers: %w", err)
	}
	for _, r := range recs {
		if err := k.rewriteAnswer(ctx, r, rewrite); err != nil {
			return err
		}
	}
	return nil
}

// rewriteAnswer rewrites r's answer on the condition that it is still the one read, and
// reads it again when another rewrite (another guest's erasure) came first.
func (k *Keys) rewriteAnswer(ctx context.Context, r record, rewrite func(body []byte) ([]byte, bool, error)) error {
	for try := 0; ; try++ {
		if len(r.Body) == 0 {
			return nil
		}
		if try == 10 {
			return fmt.Errorf("rewrite idempotency answer %s: changed by others %d times in a row", r.ID, try)
		}
		body, changed, err := rewrite(r.Body)
		if err != nil || !changed {
			return err
		}
		// Conditional on the answer read, atomically on every store (FerretDB applies a
		// conditional update as a read and a write: ReplaceIf holds the record's lease).
		next := r
		next.Body = body
		done, err := mongostore.ReplaceIf(ctx, k.coll, r.ID, bson.D{{Key: "body", Value: r.Body}}, next)
		if err != nil {
			return fmt.Errorf("rewrite idempotency answer: %w", err)
		}
		if done {
			return nil
		}
		err = k.coll.FindOne(ctx, bson.D{{Key: "_id", Value: r.ID}}).Decode(&r)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil // expired meanwhile
		}
		if err != nil {
			return fmt.Errorf("rewrite idempotency answer: %w", err)
		}
	}
}
