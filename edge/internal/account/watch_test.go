package account_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
)

// watched starts a replica whose Watch polls every 100ms, with a credential cache far
// longer than any test: only the poll can make it see another replica's changes.
func watched(t *testing.T) *account.Service {
	t.Helper()
	svc := account.NewService(store, account.Options{CacheTTL: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Watch(ctx, 100*time.Millisecond, func(err error) { t.Errorf("poll: %v", err) })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return svc
}

// propagated bounds how long the tests wait for the other replica to apply a change: a
// bound on liveness, far below the hour the replica caches credentials (so a change seen
// within it came through the watch, not an expiry), generous for a loaded machine. How
// fast changes really travel is logged (about 100 ms on a quiet machine); a 1 s bound
// failed CI once while fuzzers loaded both cores.
const propagated = 30 * time.Second

// within waits until ok holds, failing after limit; it returns how long that took.
func within(t *testing.T, limit time.Duration, what string, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestChangesReachTheOtherReplica: whatever one replica changes of an account (suspension,
// reinstatement, plan, rotation, settings) the other, which cached the account's every
// credential for an hour, applies without waiting for the cache.
func TestChangesReachTheOtherReplica(t *testing.T) {
	ctx := context.Background()
	one, two := watched(t), watched(t)
	acc, secrets, err := one.Create(ctx, "watched", false)
	if err != nil {
		t.Fatal(err)
	}
	all := func(want error) func() bool {
		return func() bool {
			for _, s := range secrets {
				if _, err := two.Authenticate(ctx, s.Kind, s.Identifier, s.Secret); !errors.Is(err, want) {
					return false
				}
			}
			return true
		}
	}
	if !all(nil)() {
		t.Fatal("a new account's credentials are refused")
	}
	if _, err := one.SetStatus(ctx, acc.ID, account.Suspended); err != nil {
		t.Fatal(err)
	}
	t.Logf("suspension seen by the other replica in %v", within(t, propagated, "suspension on the other replica", all(account.ErrSuspended)))
	if _, err := one.SetStatus(ctx, acc.ID, account.Active); err != nil {
		t.Fatal(err)
	}
	t.Logf("reinstatement seen in %v", within(t, propagated, "reinstatement on the other replica", all(nil)))

	plan := account.Plan{RateRPS: 5, RateBurst: 10, MaxConcurrent: 2, BodyLimit: 4096, MaxProperties: 3}
	if _, err := one.SetPlan(ctx, acc.ID, plan); err != nil {
		t.Fatal(err)
	}
	within(t, propagated, "plan on the other replica", func() bool {
		c, err := two.AuthenticateCaller(ctx, secrets[2].Kind, secrets[2].Identifier, secrets[2].Secret)
		return err == nil && c.Plan == plan && c.Tenant.AccountID == acc.ID
	})
	if c, err := two.AuthenticatePairCaller(ctx, secrets[1].Identifier, secrets[1].Secret); err != nil || c.Plan != plan {
		t.Fatalf("service pair: plan %+v, %v", c.Plan, err)
	}

	_, rotated, err := one.Rotate(ctx, acc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	within(t, propagated, "rotation on the other replica", all(account.ErrUnauthorized))
	secrets = rotated
	if !all(nil)() {
		t.Fatal("rotated credentials refused by the other replica")
	}

	if _, err := one.SetLegacy(ctx, acc.ID, false); err != nil {
		t.Fatal(err)
	}
	key := secrets[2]
	within(t, propagated, "legacy_credentials off on the other replica", func() bool {
		_, err := two.AuthenticatePair(ctx, key.Identifier, key.Secret)
		return errors.Is(err, account.ErrUnauthorized)
	})
}

// TestPollIsWhatTellsTheOtherReplica: the other replica, which cached the credential, keeps
// accepting it after the suspension until its next Poll, and refuses it right after.
func TestPollIsWhatTellsTheOtherReplica(t *testing.T) {
	ctx := context.Background()
	one := account.NewService(store, account.Options{CacheTTL: time.Hour})
	two := account.NewService(store, account.Options{CacheTTL: time.Hour})
	acc, secrets, err := one.Create(ctx, "poll", false)
	if err != nil {
		t.Fatal(err)
	}
	key := secrets[2]
	if err := two.Poll(ctx); err != nil { // the creation
		t.Fatal(err)
	}
	if _, err := two.Authenticate(ctx, key.Kind, key.Identifier, key.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := two.Authenticate(ctx, key.Kind, key.Identifier, "wrong"); !errors.Is(err, account.ErrUnauthorized) {
		t.Fatal(err)
	}
	if _, err := one.SetStatus(ctx, acc.ID, account.Suspended); err != nil {
		t.Fatal(err)
	}
	if _, err := two.Authenticate(ctx, key.Kind, key.Identifier, key.Secret); err != nil {
		t.Fatalf("before the poll the cached credential is still trusted (the TTL bound): %v", err)
	}
	if err := two.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := two.Authenticate(ctx, key.Kind, key.Identifier, key.Secret); !errors.Is(err, account.ErrSuspended) {
		t.Fatalf("after the poll: %v, want ErrSuspended", err)
	}
	if _, err := two.Authenticate(ctx, key.Kind, key.Identifier, "wrong"); !errors.Is(err, account.ErrUnauthorized) {
		t.Fatalf("wrong secret after the poll: %v", err)
	}
}

// TestNoAcceptanceAfterSuspensionIsVisible: goroutines authenticate with every credential
// kind through both replicas while the account is suspended and reinstated over and over.
// Through the replica that suspends, no authentication that starts after SetStatus returned
// succeeds; through the other, none that starts a second after it (its poll interval
// and then some) succeeds, until the reinstatement begins.
func TestNoAcceptanceAfterSuspensionIsVisible(t *testing.T) {
	ctx := context.Background()
	one, two := watched(t), watched(t)
	acc, secrets, err := one.Create(ctx, "suspension race", false)
	if err != nil {
		t.Fatal(err)
	}
	// phase: odd while the suspension is visible through one (from SetStatus's return to
	// the reinstatement's start); otherSuspended: while it must be visible through two too.
	var phase atomic.Int64
	var otherSuspended atomic.Bool
	var accepted, refused atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				s := secrets[(g+i)%len(secrets)]
				if g%2 == 0 {
					p0 := phase.Load()
					_, err := one.Authenticate(ctx, s.Kind, s.Identifier, s.Secret)
					if err == nil && p0%2 == 1 && phase.Load() == p0 {
						t.Errorf("%s accepted by the suspending replica after the suspension returned", s.Kind)
					}
					count(err, &accepted, &refused)
					continue
				}
				p0, must := phase.Load(), otherSuspended.Load()
				_, err := two.Authenticate(ctx, s.Kind, s.Identifier, s.Secret)
				if err == nil && must && phase.Load() == p0 {
					t.Errorf("%s accepted by the other replica over a second after the suspension", s.Kind)
				}
				count(err, &accepted, &refused)
			}
		})
	}
	for range 3 {
		time.Sleep(150 * time.Millisecond)
		if _, err := one.SetStatus(ctx, acc.ID, account.Suspended); err != nil {
			t.Fatal(err)
		}
		phase.Add(1)
		time.Sleep(time.Second)
		otherSuspended.Store(true)
		time.Sleep(300 * time.Millisecond)
		otherSuspended.Store(false)
		phase.Add(1)
		if _, err := one.SetStatus(ctx, acc.ID, account.Active); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if accepted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d accepted, %d refused: the test did not exercise both states", accepted.Load(), refused.Load())
	}
	t.Logf("%d authentications accepted, %d refused as suspended", accepted.Load(), refused.Load())
}

func count(err error, accepted, refused *atomic.Int64) {
	switch {
	case err == nil:
		accepted.Add(1)
	case errors.Is(err, account.ErrSuspended):
		refused.Add(1)
	}
}

// TestAuditRecordsEveryChange: each change appends one record naming the action, the
// fields changed old→new (the plan only its changed fields), the actor the context carries,
// and for rotations only the kinds.
func TestAuditRecordsEveryChange(t *testing.T) {
	actor := account.Actor{Fingerprint: "abcd1234", Address: "192.0.2.7", RequestID: "req-1"}
	ctx := account.WithActor(context.Background(), actor)
	svc := account.NewService(store, account.Options{CacheTTL: time.Minute})
	acc, _, err := svc.Create(ctx, "audited", true)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error {
			_, _, err := svc.Rotate(ctx, acc.ID, []account.Kind{account.Key, account.OwnerToken})
			return err
		},
		func() error { _, err := svc.SetStatus(ctx, acc.ID, account.Suspended); return err },
		func() error { _, err := svc.SetStatus(ctx, acc.ID, account.Active); return err },
		func() error { _, err := svc.SetLegacy(ctx, acc.ID, false); return err },
		func() error {
			_, err := svc.SetPlan(ctx, acc.ID, account.Plan{RateRPS: 2.5, MaxProperties: 10})
			return err
		},
		func() error {
			_, err := svc.SetPlan(ctx, acc.ID, account.Plan{RateRPS: 2.5, MaxProperties: 20})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := svc.Audit(context.Background(), account.AuditQuery{AccountID: acc.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		action  string
		changes []account.FieldChange
		kinds   []account.Kind
	}
	wants := []want{ // newest first
		{account.ActionPlan, []account.FieldChange{{Field: "max_properties", Old: 10, New: 20}}, nil},
		{account.ActionPlan, []account.FieldChange{{Field: "rate_rps", Old: 0.0, New: 2.5}, {Field: "max_properties", Old: 0, New: 10}}, nil},
		{account.ActionSettings, []account.FieldChange{{Field: "legacy_credentials", Old: true, New: false}}, nil},
		{account.ActionReinstate, []account.FieldChange{{Field: "status", Old: "suspended", New: "active"}}, nil},
		{account.ActionSuspend, []account.FieldChange{{Field: "status", Old: "active", New: "suspended"}}, nil},
		{account.ActionRotate, nil, []account.Kind{account.Key, account.OwnerToken}},
		{account.ActionCreate, []account.FieldChange{{Field: "name", New: "audited"}, {Field: "sandbox", New: true}, {Field: "status", New: "active"}}, account.Kinds},
	}
	if len(recs) != len(wants) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(wants), recs)
	}
	for i, w := range wants {
		r := recs[i]
		if r.Action != w.action || r.AccountID != acc.ID || r.Actor != actor || r.At.IsZero() {
			t.Errorf("record %d: %+v, want action %s by %+v", i, r, w.action, actor)
		}
		if !sameChanges(r.Changes, w.changes) {
			t.Errorf("record %d (%s): changes %+v, want %+v", i, w.action, r.Changes, w.changes)
		}
		if len(r.Credentials) != len(w.kinds) {
			t.Errorf("record %d (%s): credentials %v, want %v", i, w.action, r.Credentials, w.kinds)
		}
	}
	// Paging: after the third record come the rest, in the same order.
	page, err := svc.Audit(context.Background(), account.AuditQuery{AccountID: acc.ID, After: recs[2].ID, Limit: 2})
	if err != nil || len(page) != 2 || page[0].ID != recs[3].ID || page[1].ID != recs[4].ID {
		t.Fatalf("page after %s: %+v, %v", recs[2].ID, page, err)
	}
}

// sameChanges compares changes by their values' text: the store gives numbers back as
// int32, int64 or float64.
func sameChanges(got, want []account.FieldChange) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Field != want[i].Field || text(got[i].Old) != text(want[i].Old) || text(got[i].New) != text(want[i].New) {
			return false
		}
	}
	return true
}

func text(v any) string {
	switch n := v.(type) {
	case nil:
		return "nil"
	case int32:
		return text(float64(n))
	case int64:
		return text(float64(n))
	case int:
		return text(float64(n))
	}
	return fmt.Sprint(v)
}
