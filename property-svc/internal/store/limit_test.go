package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/together"
)

// liveProperties counts the account's property documents that are not deleted.
func liveProperties(t *testing.T, account string) int64 {
	t.Helper()
	return count(t, collProperties, bson.D{{Key: "account_id", Value: account}, {Key: "deleted", Value: false}})
}

func isLimit(err error, max int) bool {
	le, ok := errors.AsType[*property.LimitError](err)
	return ok && le.Max == max
}

// TestCreateLimitRules: the plan's most properties counts the live properties only.
func TestCreateLimitRules(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		name          string
		live, deleted int
		max           int
		refused       bool
	}{
		{"no limit, 6 live → created", 6, 0, 0, false},
		{"limit 1, none → created", 0, 0, 1, false},
		{"limit 1, 1 live → refused", 1, 0, 1, true},
		{"limit 3, 2 live → created", 2, 0, 3, false},
		{"limit 3, 3 live → refused", 3, 0, 3, true},
		{"limit 3, 2 live and 4 deleted → created", 2, 4, 3, false},
		{"limit 2 below 4 live (plan lowered) → refused", 4, 0, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			acct := newAccount()
			for i := range c.live + c.deleted {
				h.create(t, acct, fmt.Sprintf("P%d", i))
				if i >= c.live {
					must(t, h.repo.Delete(ctx, acct, fmt.Sprintf("P%d", i)))
				}
			}
			_, err := h.repo.Create(ctx, acct, villa("NEW"), c.max)
			switch {
			case c.refused && !isLimit(err, c.max):
				t.Fatalf("create: %v, want the limit of %d", err, c.max)
			case c.refused && err.Error() != fmt.Sprintf("the account's plan allows at most %d properties", c.max):
				t.Errorf("message %q", err)
			case !c.refused && err != nil:
				t.Fatalf("create: %v", err)
			}
			want := int64(c.live)
			if !c.refused {
				want++
			}
			if n := liveProperties(t, acct); n != want {
				t.Errorf("%d live properties, want %d", n, want)
			}
			if _, err := h.repo.Find(ctx, acct, code("NEW")); c.refused && !errors.Is(err, property.ErrNotFound) {
				t.Errorf("a refused create left its code claimed: %v", err)
			}
		})
	}
}

// TestCreateLimitConcurrent: twenty creates at once at a limit of five leave exactly five
// properties, the others refused with the limit; the same with the creates split between
// two stores (two processes: only the lease in the database orders them).
func TestCreateLimitConcurrent(t *testing.T) {
	const n, max = 20, 5
	for _, stores := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d stores", stores), func(t *testing.T) {
			hs := []*harness{newHarness(t), newHarness(t)}
			acct := newAccount()
			errs := make([]error, n)
			together.Run(n, func(i int) {
				_, errs[i] = hs[i%stores].repo.Create(ctx, acct, villa(fmt.Sprintf("C%d", i)), max)
			})
			created := 0
			for i, err := range errs {
				switch {
				case err == nil:
					created++
				case !isLimit(err, max):
					t.Errorf("create %d: %v", i, err)
				}
			}
			if created != max {
				t.Errorf("%d creates succeeded, want %d", created, max)
			}
			if live := liveProperties(t, acct); live != max {
				t.Errorf("%d live properties, want %d", live, max)
			}
		})
	}
}

// TestCreateLimitInterrupted: creates stopped at every point of their work (their context
// ends after a growing delay, as when the process is killed) never hold a slot: afterwards
// the account still gets exactly up to its limit.
func TestCreateLimitInterrupted(t *testing.T) {
	const max = 3
	h := newHarness(t)
	acct := newAccount()
	for i := range 40 {
		cctx, cancel := context.WithTimeout(ctx, time.Duration(i)*250*time.Microsecond)
		_, _ = h.repo.Create(cctx, acct, villa(fmt.Sprintf("I%d", i)), 100)
		cancel()
	}
	// Each interrupted create either stored its property or stored nothing: delete what
	// they stored, so that the account is back to none. The server may finish a write its
	// client gave up on a moment later: deleted until none is left for a while.
	quiet := 0
	eventually.Holds(t, "the interrupted creates settled", 10*time.Second, func() bool {
		// Errors are tried again: the embedded store may answer "database is locked" while
		// it finishes the abandoned writes.
		cur, err := db.Collection(collProperties).Find(ctx, bson.D{{Key: "account_id", Value: acct}, {Key: "deleted", Value: false}})
		var recs []Record
		if err == nil {
			err = cur.All(ctx, &recs)
		}
		if err != nil {
			quiet = 0
			return false
		}
		for _, r := range recs {
			_ = h.repo.Delete(ctx, acct, r.InternalCode)
		}
		if len(recs) > 0 {
			quiet = 0
		} else {
			quiet++
		}
		return quiet >= 10
	})
	start := time.Now()
	for i := range max {
		if _, err := h.repo.Create(ctx, acct, villa(fmt.Sprintf("A%d", i)), max); err != nil {
			t.Fatalf("create %d after the interrupted ones: %v", i, err)
		}
	}
	if took := time.Since(start); took > createLease/3 {
		t.Errorf("the creates after the interrupted ones took %v: an interrupted create left its lease", took)
	}
	if _, err := h.repo.Create(ctx, acct, villa("OVER"), max); !isLimit(err, max) {
		t.Errorf("create over the limit: %v", err)
	}
}

// TestCreateLeaseOfADeadCreate: a create that died holding its account's lease (and one
// that left only its internal-code claim) delays the next create until the lease ends, and
// holds no slot.
func TestCreateLeaseOfADeadCreate(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	until := time.Now().Add(300 * time.Millisecond).Truncate(time.Millisecond) // as stored
	_, err := db.Collection(collCreateLeases).InsertOne(ctx, createLeaseDoc{ID: acct, Token: "dead", Until: until})
	must(t, err)
	_, err = db.Collection(collCodes).InsertOne(ctx, codeDoc{ID: codeID(acct, "GONE"), PropertyID: 999999, ClaimedAt: time.Now()})
	must(t, err)
	if _, err := h.repo.Create(ctx, acct, villa("ONE"), 1); err != nil {
		t.Fatalf("create after a dead create: %v", err)
	}
	if early := time.Until(until); early > 0 {
		t.Errorf("the create took a lease %v before its end", early)
	}
	if _, err := h.repo.Create(ctx, acct, villa("TWO"), 1); !isLimit(err, 1) {
		t.Errorf("second create at limit 1: %v", err)
	}
	if n := count(t, collCreateLeases, bson.D{{Key: "_id", Value: acct}}); n != 0 {
		t.Errorf("%d leases left after the creates", n)
	}
}

// TestCreateLeaseHoldsUpItsAccountOnly: while one account's creates wait out a dead create's
// lease, other accounts create at once.
func TestCreateLeaseHoldsUpItsAccountOnly(t *testing.T) {
	h := newHarness(t)
	stuck := newAccount()
	_, err := db.Collection(collCreateLeases).InsertOne(ctx, createLeaseDoc{ID: stuck, Token: "dead", Until: time.Now().Add(time.Hour)})
	must(t, err)
	wctx, cancel := context.WithCancel(ctx)
	waiting := make(chan error, 1)
	go func() { _, err := h.repo.Create(wctx, stuck, villa("W"), 5); waiting <- err }()
	time.Sleep(20 * time.Millisecond)
	for i := range 5 {
		if _, err := h.repo.Create(ctx, newAccount(), villa("F"), 5); err != nil {
			t.Fatalf("create %d of another account: %v", i, err)
		}
	}
	// Enough accounts to share any stripe of a striped lock with the stuck one: none waits.
	for i := range 2000 {
		done := make(chan struct{})
		go func() {
			if unlock, err := h.st.createLocks.Lock(ctx, "other-"+strconv.Itoa(i)); err == nil {
				unlock()
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second): // the stuck lease lasts an hour: a wait for it, not a slow machine
			t.Fatalf("account other-%d waits for the stuck account's creates", i)
		}
	}
	// A second create of the stuck account, waiting behind the first in this process,
	// gives up when its own context ends.
	sctx, scancel := context.WithCancel(ctx)
	second := make(chan error, 1)
	go func() { _, err := h.repo.Create(sctx, stuck, villa("W2"), 5); second <- err }()
	time.Sleep(20 * time.Millisecond)
	scancel()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the second create of the stuck account: %v, want it canceled", err)
		}
	case <-time.After(30 * time.Second): // the stuck lease lasts an hour: a wait for it, not a slow machine
		t.Errorf("the second create of the stuck account waits on after its context ended")
	}
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("the stuck account's create: %v, want it still waiting", err)
	}
	unlock, err := h.st.createLocks.Lock(ctx, stuck)
	must(t, err)
	unlock()
	h.st.createLocks.mu.Lock()
	n := len(h.st.createLocks.held)
	h.st.createLocks.mu.Unlock()
	if n != 0 {
		t.Errorf("%d account locks left once no create is under way", n)
	}
}

// TestCreateLimitInterruptedNeverOver: a create whose client gives up once it holds the
// lease still finishes (or fails) before it lets the lease go, so that the next create
// counts its property: a write the server made after its client gave up cannot land
// uncounted, and no account ends over its limit.
func TestCreateLimitInterruptedNeverOver(t *testing.T) {
	h := newHarness(t)
	accts := make([]string, 40)
	var wg sync.WaitGroup
	for i := range accts {
		accts[i] = newAccount()
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, time.Duration(i)*250*time.Microsecond)
			_, _ = h.repo.Create(cctx, accts[i], villa("CUT"), 1)
			cancel()
			_, _ = h.repo.Create(ctx, accts[i], villa("NEXT"), 1)
		})
	}
	wg.Wait()
	// The server may finish a write its client gave up on a moment later: counted once the
	// counts stay put for a while.
	var live map[string]int
	quiet := 0
	eventually.Holds(t, "the interrupted creates settled", 10*time.Second, func() bool {
		cur, err := db.Collection(collProperties).Find(ctx, bson.D{{Key: "account_id", Value: bson.D{{Key: "$in", Value: accts}}}, {Key: "deleted", Value: false}})
		var recs []Record
		if err == nil {
			err = cur.All(ctx, &recs)
		}
		if err != nil {
			quiet = 0
			return false
		}
		now := map[string]int{}
		for _, r := range recs {
			now[r.AccountID]++
		}
		if maps.Equal(now, live) {
			quiet++
		} else {
			live, quiet = now, 0
		}
		return quiet >= 10
	})
	for _, a := range accts {
		if live[a] > 1 {
			t.Errorf("account %s has %d live properties, over its limit of 1", a, live[a])
		}
	}
}
