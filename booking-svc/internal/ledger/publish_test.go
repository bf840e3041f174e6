package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/ledger"
)

// TestPublishOp: a publish op (a booking's create) has a key of its own: the owner's next
// change begins beside it, and a second publish op of the owner is busy. Its repair —
// janitor's or a retried request's — releases the nights the owner should not hold, asks
// Published before it ends the op, and keeps the op if Published fails. Handoff's release
// ends it without a repair.
func TestPublishOp(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	kept, dropped := dates("2027-09-01", 2), dates("2027-09-10", 2)
	var asked []string
	fail := true
	l.OnPublish(func(_ context.Context, account, owner string) error {
		asked = append(asked, account+"/"+owner)
		if fail {
			return context.DeadlineExceeded
		}
		return nil
	})
	t0 := time.Now()
	l.Now = func() time.Time { return t0 }
	dl, cancel := context.WithDeadline(ctx, t0.Add(time.Minute))
	defer cancel()
	for _, o := range []struct {
		owner string
		days  []string
	}{{"booking:1", kept}, {"booking:2", dropped}} {
		op := ledger.Op{Owner: o.owner, Account: "p1", Claim: []ledger.Stay{{PropertyID: 3, Dates: o.days}}, Publish: true}
		if err := l.Begin(dl, op); err != nil {
			t.Fatal(err)
		}
		if err := l.Begin(dl, op); err != ledger.ErrBusy {
			t.Fatalf("second publish op of %s: %v, want ErrBusy", o.owner, err)
		}
		if err := l.Claim(dl, ledger.Stay{Account: "p1", PropertyID: 3, Dates: o.days}, o.owner); err != nil {
			t.Fatal(err)
		}
	}
	// The owner's next change does not wait for the relay.
	if err := l.Begin(ctx, ledger.Op{Owner: "booking:1", Account: "p1"}); err != nil {
		t.Fatalf("a change beside a publish op: %v", err)
	}
	if err := l.End(ctx, "p1", "booking:1"); err != nil {
		t.Fatal(err)
	}
	// booking:1 was written (it holds its nights); booking:2 never was.
	current := func(_ context.Context, _, owner string) ([]ledger.Stay, error) {
		if owner == "booking:1" {
			return []ledger.Stay{{Account: "p1", PropertyID: 3, Dates: kept}}, nil
		}
		return nil, nil
	}
	if _, err := l.RepairOwner(ctx, "p1", "booking:1", time.Second, time.Hour, current); err != ledger.ErrBusy {
		t.Fatalf("repair of a create within its deadline: %v, want ErrBusy", err)
	}
	l.Now = func() time.Time { return t0.Add(2 * time.Hour) }
	if n, err := l.Repair(ctx, time.Hour, current); err == nil || n != 0 {
		t.Fatalf("repair with Published failing: %d, %v; want the error and no op ended", n, err)
	}
	fail = false
	asked = nil
	for range 2 { // the op of the failed pass is still there: repaired now
		if _, err := l.RepairOwner(ctx, "p1", "booking:1", time.Second, time.Hour, current); err != nil {
			t.Fatal(err)
		}
	}
	if len(asked) != 1 || asked[0] != "p1/booking:1" {
		t.Fatalf("Published asked for %v, want booking:1 once", asked)
	}
	if n, err := l.Repair(ctx, time.Hour, current); err != nil || n != 1 {
		t.Fatalf("janitor's repair: %d, %v; want booking:2's op", n, err)
	}
	for d, o := range owners(t, l, "p1", 3, append(append([]string{}, kept...), dropped...)) {
		want := "booking:1"
		if d >= "2027-09-10" {
			want = ""
		}
		if o != want {
			t.Errorf("night %s held by %q, want %q", d, o, want)
		}
	}
	// Both ended: new publish ops of the owners begin; Handoff's release ends one.
	for _, owner := range []string{"booking:1", "booking:2"} {
		if err := l.Begin(ctx, ledger.Op{Owner: owner, Account: "p1", Publish: true}); err != nil {
			t.Fatalf("publish op of %s after its repair: %v", owner, err)
		}
	}
	rel, key := l.Handoff("p1", "booking:1")
	if err := rel.Release(ctx, []string{key}); err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(ctx, ledger.Op{Owner: "booking:1", Account: "p1", Publish: true}); err != nil {
		t.Fatalf("publish op after its release: %v", err)
	}
	if err := l.Begin(ctx, ledger.Op{Owner: "booking:2", Account: "p1", Publish: true}); err != ledger.ErrBusy {
		t.Fatalf("booking:2's op was released with booking:1's key: %v", err)
	}
}
