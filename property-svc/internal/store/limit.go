package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/mongostore"

	"github.com/vros/vros/property-svc/internal/property"
)

// The plan's most properties (docs/limits.md, "Most properties"). A create of an account
// with a limit holds the account's create lease while it counts the account's live
// properties and inserts its own, so that of concurrent creates (in any process) each
// counts the ones before it: the count is of the property documents themselves, never of
// a counter beside them, so a create that dies half-way holds no slot once its lease is
// over, and nothing needs repairing.

// collCreateLeases holds one lease per account whose create is under way.
const collCreateLeases = "create_leases"

// createLease is how long a create holds its account's lease unless it releases it first:
// the longest a create that died holding it delays the account's next create. A create
// gives up before (createTimeout), so that it never outlives its lease.
const (
	createLease   = 30 * time.Second
	createTimeout = 20 * time.Second
)

type createLeaseDoc struct {
	ID    string    `bson:"_id"` // the account
	Token string    `bson:"token"`
	Until time.Time `bson:"until"`
}

// lockCreates takes account's create lease, waiting while another create holds it, and
// returns its release. A lease past its end (its create died) is taken over. This
// process's creates of the account also wait for each other in memory first, so that only
// one of them polls the store.
func (s *Store) lockCreates(ctx context.Context, account string) (release func(), err error) {
	unlock, err := s.createLocks.Lock(ctx, account)
	if err != nil {
		return nil, fmt.Errorf("wait for the create lease of %s: %w", account, err)
	}
	token := rand.Text()
	wait := 2 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			unlock()
			return nil, fmt.Errorf("wait for the create lease of %s: %w", account, err)
		}
		// The insert is not cut short by ctx: a client that gives up on an insert the
		// server then makes would leave a lease nobody releases (it would hold the
		// account's creates up for a whole lease).
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, err := s.leases.InsertOne(ictx, createLeaseDoc{ID: account, Token: token, Until: s.now().Add(s.createLease)})
		cancel()
		if err == nil {
			return func() {
				// Released even when ctx ended: the lease would otherwise hold the account's
				// creates up until it runs out.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_, _ = s.leases.DeleteOne(rctx, bson.D{{Key: "_id", Value: account}, {Key: "token", Value: token}})
				unlock()
			}, nil
		}
		if !mongostore.IsDuplicate(err) {
			// The insert may have landed all the same (it timed out): take back what would
			// otherwise hold the account's creates up for a whole lease.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = s.leases.DeleteOne(rctx, bson.D{{Key: "_id", Value: account}, {Key: "token", Value: token}})
			cancel()
			unlock()
			return nil, fmt.Errorf("take the create lease of %s: %w", account, err)
		}
		var held createLeaseDoc
		err = s.leases.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&held)
		if err == nil && s.now().After(held.Until) {
			_, _ = s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}, {Key: "token", Value: held.Token}})
			continue
		}
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			unlock()
			return nil, fmt.Errorf("read the create lease of %s: %w", account, err)
		}
		select {
		case <-ctx.Done():
			unlock()
			return nil, fmt.Errorf("wait for the create lease of %s: %w", account, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// accountLocks are one lock per account with a create under way: unlike striped locks, an
// account waiting out a dead create's lease holds up no other account. A waiter gives up
// when its context ends, rather than wait for the creates ahead of it.
type accountLocks struct {
	mu   sync.Mutex
	held map[string]*accountLock
}

type accountLock struct {
	token chan struct{} // holds one value while locked
	users int           // holders and waiters; the entry goes with the last
}

func newAccountLocks() *accountLocks { return &accountLocks{held: map[string]*accountLock{}} }

// Lock locks account and returns its unlock, or ctx's error once ctx ends first.
func (l *accountLocks) Lock(ctx context.Context, account string) (unlock func(), err error) {
	l.mu.Lock()
	e := l.held[account]
	if e == nil {
		e = &accountLock{token: make(chan struct{}, 1)}
		l.held[account] = e
	}
	e.users++
	l.mu.Unlock()
	leave := func() {
		l.mu.Lock()
		if e.users--; e.users == 0 {
			delete(l.held, account)
		}
		l.mu.Unlock()
	}
	select {
	case e.token <- struct{}{}:
		return func() { <-e.token; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// liveCount counts the account's properties that are not deleted.
func (s *Store) liveCount(ctx context.Context, account string) (int64, error) {
	n, err := s.props.CountDocuments(ctx, bson.D{{Key: "account_id", Value: account}, {Key: "deleted", Value: bson.D{{Key: "$ne", Value: true}}}})
	if err != nil {
		return 0, fmt.Errorf("count the properties of %s: %w", account, err)
	}
	return n, nil
}

// createWithin runs create once the account is under its limit max, holding the account's
// create lease throughout.
func (s *Store) createWithin(ctx context.Context, account string, max int, create func(ctx context.Context) (int64, error)) (int64, error) {
	release, err := s.lockCreates(ctx, account)
	if err != nil {
		return 0, err
	}
	defer release()
	if err := ctx.Err(); err != nil { // it ended while the lease was taken: nothing begun
		return 0, fmt.Errorf("wait for the create lease of %s: %w", account, err)
	}
	// Once the lease is held the create is not cut short by ctx, only by createTimeout: a
	// write its client gave up on but the server then made would land after the release,
	// uncounted by the next create, and the account would end over its limit.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	n, err := s.liveCount(ctx, account)
	if err != nil {
		return 0, err
	}
	if n >= int64(max) {
		return 0, &property.LimitError{Max: max}
	}
	return create(ctx)
}
