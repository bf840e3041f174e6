package account_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
)

// eraser records the accounts it was asked to erase; failing makes it fail (the service
// down), block makes it wait for its context (the DELETE interrupted while it runs).
type eraser struct {
	mu      sync.Mutex
	calls   []string
	failing atomic.Bool
	block   atomic.Bool
	delay   time.Duration
	// onBlock, when set, is called as a blocked erase begins (edge stopping while the
	// service erases: at that step, whatever the machine's speed).
	onBlock func()
}

func (e *eraser) EraseAccount(ctx context.Context, id string) error {
	e.mu.Lock()
	e.calls = append(e.calls, id)
	e.mu.Unlock()
	if e.block.Load() {
		if e.onBlock != nil {
			e.onBlock()
		}
		<-ctx.Done()
		return ctx.Err()
	}
	time.Sleep(e.delay)
	if e.failing.Load() {
		return errors.New("property-svc is down")
	}
	return nil
}

func (e *eraser) asked(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.calls {
		if c == id {
			n++
		}
	}
	return n
}

// failingRepo fails the deletion's steps on demand, as a store gone away would.
type failingRepo struct {
	account.Repository
	failFinish atomic.Bool
	failAudit  atomic.Bool
}

var errStoreGone = errors.New("store gone")

func (r *failingRepo) FinishDeletion(ctx context.Context, id string, at time.Time) (account.Account, error) {
	if r.failFinish.Load() {
		return account.Account{}, errStoreGone
	}
	return r.Repository.FinishDeletion(ctx, id, at)
}

func (r *failingRepo) AppendAudit(ctx context.Context, rec account.AuditRecord) error {
	if r.failAudit.Load() {
		return errStoreGone
	}
	return r.Repository.AppendAudit(ctx, rec)
}

// wantDeleted asserts what is left of a deleted account: nothing that answers, no
// credential, no name in its audit records, not listed, and a second deletion is 404.
func wantDeleted(t *testing.T, svc *account.Service, id string, secrets []account.Secret) {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.Get(ctx, id); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("Get after deletion: %v, want ErrNotFound", err)
	}
	raw, err := store.Get(ctx, id)
	if err != nil || raw.Status != account.Deleted || raw.Name != "" || raw.DeletedAt.IsZero() || len(raw.Identifiers) != 0 || raw.TokenHash != "" {
		t.Errorf("the record kept: %+v (%v), want only the id, status deleted and deleted_at", raw, err)
	}
	for _, s := range secrets {
		if _, err := svc.Authenticate(ctx, s.Kind, s.Identifier, s.Secret); !errors.Is(err, account.ErrUnauthorized) {
			t.Errorf("%s after deletion: %v, want ErrUnauthorized", s.Kind, err)
		}
		ident := s.Identifier
		if s.Kind == account.OwnerToken {
			ident = account.Hash(s.Secret)
		}
		if _, err := store.Credential(ctx, s.Kind, ident); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("%s credential still stored: %v", s.Kind, err)
		}
	}
	recs, err := svc.Audit(ctx, account.AuditQuery{AccountID: id, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		for _, c := range r.Changes {
			if c.Field == "name" && (c.New != "" && c.New != nil || c.Old != "" && c.Old != nil) {
				t.Errorf("audit record %s (%s) still holds the name: %v → %v", r.ID, r.Action, c.Old, c.New)
			}
		}
	}
	if !slices.ContainsFunc(recs, func(r account.AuditRecord) bool { return r.Action == account.ActionDelete }) {
		t.Errorf("no %q audit record: %+v", account.ActionDelete, recs)
	}
	list, err := svc.List(ctx, account.ListQuery{Q: id, Limit: 10})
	if err != nil || len(list) != 0 {
		t.Errorf("List still shows the deleted account: %+v (%v)", list, err)
	}
	if _, err := svc.Delete(ctx, id); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("a second deletion: %v, want ErrNotFound", err)
	}
}

// wantRefusedWhileDeleting asserts that a Deleting account's credentials are refused and
// that nothing but the deletion changes it.
func wantRefusedWhileDeleting(t *testing.T, svc *account.Service, id string, secrets []account.Secret) {
	t.Helper()
	ctx := context.Background()
	a, err := svc.Get(ctx, id)
	if err != nil || a.Status != account.Deleting {
		t.Fatalf("after the interrupted deletion: %+v (%v), want status deleting", a, err)
	}
	for _, s := range secrets {
		if _, err := svc.Authenticate(ctx, s.Kind, s.Identifier, s.Secret); !errors.Is(err, account.ErrUnauthorized) {
			t.Errorf("%s while deleting: %v, want ErrUnauthorized", s.Kind, err)
		}
	}
	if _, _, err := svc.Rotate(ctx, id, nil); !errors.Is(err, account.ErrDeleting) {
		t.Errorf("rotation while deleting: %v, want ErrDeleting", err)
	}
	if _, err := svc.SetStatus(ctx, id, account.Active); !errors.Is(err, account.ErrDeleting) {
		t.Errorf("reinstatement while deleting: %v, want ErrDeleting", err)
	}
	if _, err := svc.SetPlan(ctx, id, account.Plan{RateRPS: 5}); !errors.Is(err, account.ErrDeleting) {
		t.Errorf("plan change while deleting: %v, want ErrDeleting", err)
	}
}

// TestDeletionInterruptedThenFinished: a deletion interrupted at each step leaves the
// account refused and unchangeable, and is finished by a retried Delete or by the loop
// (FinishStale, once DeletionRetry has passed).
func TestDeletionInterruptedThenFinished(t *testing.T) {
	steps := []struct {
		name string
		// interrupt sets up the failure; the first Delete runs with ctx.
		interrupt func(e *eraser, r *failingRepo, cancel context.CancelFunc)
		// finished: the first Delete did finish (only its last audit record was lost).
		finished bool
	}{
		{"the service's erase fails", func(e *eraser, _ *failingRepo, _ context.CancelFunc) { e.failing.Store(true) }, false},
		{"edge stops while the service erases", func(e *eraser, _ *failingRepo, cancel context.CancelFunc) {
			e.block.Store(true)
			e.onBlock = cancel
		}, false},
		{"the store fails after the erase", func(_ *eraser, r *failingRepo, _ context.CancelFunc) { r.failFinish.Store(true) }, false},
		{"the first audit record fails after the mark", func(_ *eraser, r *failingRepo, _ context.CancelFunc) { r.failAudit.Store(true) }, false},
	}
	for _, step := range steps {
		for _, how := range []string{"retried DELETE", "edge's own loop"} {
			t.Run(step.name+", then "+how, func(t *testing.T) {
				ctx := context.Background()
				e := &eraser{}
				repo := &failingRepo{Repository: store}
				svc := account.NewService(repo, account.Options{CacheTTL: time.Minute, Eraser: e})
				acc, secrets, err := svc.Create(ctx, "Jane Owner", false)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range secrets { // cached: the deletion must drop them
					if _, err := svc.Authenticate(ctx, s.Kind, s.Identifier, s.Secret); err != nil {
						t.Fatal(err)
					}
				}
				if how == "edge's own loop" {
					// The deletion began longer ago than DeletionRetry. (Stamps in the past, not
					// a clock moved forward: a future changed_at would hold back the polls of
					// the other tests' replicas, which share the store.)
					svc.SetClock(func() time.Time { return time.Now().Add(-account.DeletionRetry - time.Second) })
				}
				dctx, cancel := context.WithCancel(ctx)
				defer cancel()
				step.interrupt(e, repo, cancel)
				if _, err := svc.Delete(dctx, acc.ID); err == nil {
					t.Fatal("the interrupted deletion reported success")
				}
				e.failing.Store(false)
				e.block.Store(false)
				repo.failFinish.Store(false)
				repo.failAudit.Store(false)
				wantRefusedWhileDeleting(t, svc, acc.ID, secrets)

				if how == "retried DELETE" {
					got, err := svc.Delete(ctx, acc.ID)
					if err != nil || got.Status != account.Deleted || got.ID != acc.ID {
						t.Fatalf("retried deletion: %+v, %v", got, err)
					}
				} else {
					// Not yet (at the time it began): the loop leaves a deletion younger than
					// DeletionRetry alone.
					if err := svc.FinishStale(ctx); err != nil {
						t.Fatal(err)
					}
					if a, _ := svc.Get(ctx, acc.ID); a.Status != account.Deleting {
						t.Fatalf("the loop drove a fresh deletion on: %+v", a)
					}
					svc.SetClock(time.Now)
					if err := svc.FinishStale(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if e.asked(acc.ID) < 1 {
					t.Error("the services were never asked to erase the account")
				}
				wantDeleted(t, svc, acc.ID, secrets)
			})
		}
	}
}

// TestConcurrentDeletes: DELETEs of one account at once, through two replicas, while
// rotations race them: each deletion answers success or not-found, the account ends
// deleted, and no credential of it is left, not even one a racing rotation issued.
func TestConcurrentDeletes(t *testing.T) {
	ctx := context.Background()
	e := &eraser{delay: 20 * time.Millisecond}
	a := account.NewService(store, account.Options{CacheTTL: time.Minute, Eraser: e})
	b := account.NewService(store, account.Options{CacheTTL: time.Minute, Eraser: e})
	acc, first, err := a.Create(ctx, "Race Owner", false)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	all := append([]account.Secret(nil), first...)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		svc := []*account.Service{a, b}[i%2]
		wg.Go(func() {
			got, err := svc.Delete(ctx, acc.ID)
			switch {
			case err == nil && got.Status == account.Deleted:
				ok.Add(1)
			case errors.Is(err, account.ErrNotFound):
			default:
				t.Errorf("concurrent deletion: %+v, %v", got, err)
			}
		})
		wg.Go(func() {
			_, s, err := svc.Rotate(ctx, acc.ID, nil)
			if err == nil {
				mu.Lock()
				all = append(all, s...)
				mu.Unlock()
			} else if !errors.Is(err, account.ErrDeleting) && !errors.Is(err, account.ErrNotFound) {
				t.Errorf("racing rotation: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() == 0 {
		t.Fatal("no deletion succeeded")
	}
	wantDeleted(t, a, acc.ID, all)
	wantDeleted(t, b, acc.ID, all)
}
