package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/eventually"
)

// waiting is how many updates of property id wait for their turn; -1 when none is being
// made.
func (s *Store) waiting(id, code string) int {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	q := s.content.q[id+"\x00"+code]
	if q == nil {
		return -1
	}
	return len(q.waiting)
}

// TestConcurrentUpdatesOfOnePropertyMadeTogether: while an update of a property waits for
// its lock, eight more arrive, and one more whose caller gives up before its turn. The
// eight are stored as one update, as if made one after the other in the order they came:
// the last value of each field stands, the fields only earlier ones set too, the version
// counts each of them, and no version between is ever published. The one that gave up is
// not stored, and its intent is handed over like the others': the outbox ends empty.
func TestConcurrentUpdatesOfOnePropertyMadeTogether(t *testing.T) {
	const n = 8
	h := newHarness(t)
	h.relay(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	_, err := h.repo.UpdateContent(ctx, acct, villa("V1")) // the code's hint learnt: version 2
	must(t, err)
	id := recordID(acct, pid)
	update := func(i int) property.Property {
		p := villa("V1")
		p.Name = fmt.Sprintf("Villa %d", i)
		if i%2 == 1 {
			p.Brief = sp(fmt.Sprintf("brief %d", i))
		}
		if i%3 == 0 {
			p.Phone = sp(fmt.Sprint(100 + i))
		}
		return p
	}

	unlock := h.st.locks.Lock(id)
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	wg.Go(func() { _, errs[0] = h.repo.UpdateContent(ctx, acct, update(0)) })
	eventually.Holds(t, "the first update taken, waiting for the lock", 30*time.Second, func() bool { return h.st.waiting(id, "V1") == 0 })
	for i := 1; i <= n; i++ {
		wg.Go(func() { _, errs[i] = h.repo.UpdateContent(ctx, acct, update(i)) })
		eventually.Holds(t, fmt.Sprintf("update %d waiting", i), 30*time.Second, func() bool { return h.st.waiting(id, "V1") == i })
	}
	gaveUp, cancel := context.WithCancel(ctx)
	late := make(chan error, 1)
	go func() {
		p := villa("V1")
		p.Name, p.Floor = "given up", sp("7")
		_, err := h.repo.UpdateContent(gaveUp, acct, p)
		late <- err
	}()
	eventually.Holds(t, "the update that gives up waiting", 30*time.Second, func() bool { return h.st.waiting(id, "V1") == n+1 })
	cancel()
	if err := <-late; !errors.Is(err, context.Canceled) {
		t.Errorf("the update that gave up: %v, want context.Canceled", err)
	}
	unlock()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("update %d: %v", i, err)
		}
	}

	p := h.state(t, acct, pid)
	c := p.Content
	if p.Version != 2+1+n || c.Name != fmt.Sprintf("Villa %d", n) || c.Brief != "brief 7" || c.Phone != "106" || c.Floor != "Ground" {
		t.Errorf("stored version %d, name %q, brief %q, phone %q, floor %q; want version %d, %q, %q, %q, %q",
			p.Version, c.Name, c.Brief, c.Phone, c.Floor, 2+1+n, fmt.Sprintf("Villa %d", n), "brief 7", "106", "Ground")
	}
	key := events.Key(acct, fmt.Sprint(pid))
	final := int64(2 + 1 + n)
	h.pub.awaitVersion(t, key, final)
	for _, p := range h.pub.published(t, key) {
		if p.Version > 3 && p.Version < final {
			t.Errorf("published version %d: the %d updates that waited together were stored one by one", p.Version, n)
		}
	}
	intents := db.Collection(outbox.Collection)
	eventually.Holds(t, "every intent of the property done", 10*time.Second, func() bool {
		left, err := intents.CountDocuments(ctx, bson.D{{Key: "aggregate", Value: id}})
		return err == nil && left == 0
	})
}

// TestUpdateByCodeFollowsTheCode: an update by internal code changes the live property the
// code names, even when the process last saw it name another — a property deleted since,
// here or by another replica, its code given to a new property. The property deleted is
// never changed; a code that names nothing is not found.
func TestUpdateByCodeFollowsTheCode(t *testing.T) {
	a, b := newHarness(t), newHarness(t) // two replicas of property-svc
	acct := newAccount()
	named := func(name string) property.Property {
		p := villa("V1")
		p.Name = name
		return p
	}
	first := a.create(t, acct, "V1")
	for _, h := range []*harness{a, b} { // both learn that V1 is first
		if got, err := h.repo.UpdateContent(ctx, acct, named("first")); err != nil || got != first {
			t.Fatalf("update of V1: %d, %v; want %d", got, err, first)
		}
	}
	steps := []struct {
		name          string
		by, recreator *harness
	}{
		{"deleted and created again by another replica", a, b},
		{"deleted and created again by the same replica", a, a},
	}
	prev := first
	for i, step := range steps {
		must(t, step.recreator.repo.Delete(ctx, acct, "V1"))
		before := raw(t, acct, prev)
		next := step.recreator.create(t, acct, "V1")
		name := fmt.Sprintf("update %d", i)
		got, err := step.by.repo.UpdateContent(ctx, acct, named(name))
		if err != nil || got != next {
			t.Fatalf("%s: update of V1: %d, %v; want %d", step.name, got, err, next)
		}
		if c := step.by.state(t, acct, next).Content; c.Name != name {
			t.Errorf("%s: the new V1 is named %q, want %q", step.name, c.Name, name)
		}
		unchanged(t, step.name+": the deleted V1", before, raw(t, acct, prev))
		prev = next
	}
	must(t, b.repo.Delete(ctx, acct, "V1"))
	before := raw(t, acct, prev)
	_, err := a.repo.UpdateContent(ctx, acct, named("nobody"))
	isNotFound(t, "update of a deleted code", err)
	unchanged(t, "the deleted V1", before, raw(t, acct, prev))
}
