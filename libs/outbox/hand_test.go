package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/outbox"
)

// releases records what the relay released, and can refuse.
type releases struct {
	mu     sync.Mutex
	calls  [][]string
	refuse int // this many calls fail first
	got    chan string
}

func newReleases() *releases { return &releases{got: make(chan string, 100)} }

func (r *releases) Release(_ context.Context, keys []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse > 0 {
		r.refuse--
		return errors.New("store unavailable")
	}
	r.calls = append(r.calls, slices.Clone(keys))
	for _, k := range keys {
		r.got <- k
	}
	return nil
}

// wait returns the keys released, once n have been, or fails after timeout.
func (r *releases) wait(t *testing.T, n int, timeout time.Duration) []string {
	t.Helper()
	var keys []string
	deadline := time.After(timeout)
	for len(keys) < n {
		select {
		case k := <-r.got:
			keys = append(keys, k)
		case <-deadline:
			t.Fatalf("released %v, want %d keys", keys, n)
		}
	}
	return keys
}

// TestHandReleasesOncePublished: a write handed without an intent is published from its
// snapshot, and its key released only after; no intent is ever written for it.
func TestHandReleasesOncePublished(t *testing.T) {
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			return []events.Message{message(agg, "loaded")}, nil
		}
	})
	rel := newReleases()
	var want []string
	for i := range 5 {
		a := h.agg(fmt.Sprintf("handed-%d", i))
		want = append(want, a)
		h.box.Hand(context.Background(), a, &outbox.Snapshot{Version: 1, Messages: []events.Message{message(a, "handed")}}, rel, "key-"+a)
	}
	got := h.published(want, 20*time.Second)
	for _, a := range want {
		if got[a] != `{"state":"handed"}` {
			t.Errorf("%s published %q, want the handed snapshot", a, got[a])
		}
	}
	keys := rel.wait(t, len(want), 20*time.Second)
	for _, a := range want {
		if !slices.Contains(keys, "key-"+a) {
			t.Errorf("key of %s not released: %v", a, keys)
		}
	}
	if n := len(h.intents()); n != 0 {
		t.Errorf("%d aggregates with intents, want none", n)
	}
}

// TestHandNotReleasedUntilPublished: a handed write whose state is not ready is not
// released; once it is, it is published and released. A release the store refuses is
// logged and not retried by the relay (the writer's own repair publishes again).
func TestHandNotReleasedUntilPublished(t *testing.T) {
	var mu sync.Mutex
	ready := false
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			mu.Lock()
			defer mu.Unlock()
			if !ready {
				return nil, fmt.Errorf("not yet: %w", outbox.ErrNotReady)
			}
			return []events.Message{message(agg, "ready")}, nil
		}
	})
	rel := newReleases()
	a := h.agg("waits")
	h.box.Hand(context.Background(), a, nil, rel, "key-waits")
	// The relay asks the loader several times (RetryMin 20 ms, doubling): nothing released.
	for !strings.Contains(h.log.String(), "not ready") {
		time.Sleep(10 * time.Millisecond)
	}
	if len(rel.got) != 0 {
		t.Fatal("released before it was published")
	}
	mu.Lock()
	ready = true
	mu.Unlock()
	if got := h.published([]string{a}, 20*time.Second); got[a] != `{"state":"ready"}` {
		t.Fatalf("published %q", got[a])
	}
	if keys := rel.wait(t, 1, 20*time.Second); keys[0] != "key-waits" {
		t.Fatalf("released %v", keys)
	}

	refused := newReleases()
	refused.refuse = 1
	b := h.agg("refused")
	h.box.Hand(context.Background(), b, &outbox.Snapshot{Version: 1, Messages: []events.Message{message(b, "x")}}, refused, "key-refused")
	if got := h.published([]string{b}, 20*time.Second); got[b] == "" {
		t.Fatal("not published")
	}
	for !strings.Contains(h.log.String(), "not released") {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHandConcurrently: 16 writers hand 50 writes each of a few aggregates while the relay
// flushes: every key is released once its aggregate is published, none twice, none lost,
// whatever a flush takes between a write's parts.
func TestHandConcurrently(t *testing.T) {
	h := newHarness(t, func(string) outbox.Loader {
		return func(_ context.Context, agg string) ([]events.Message, error) {
			return []events.Message{message(agg, "loaded")}, nil
		}
	})
	rel := newReleases()
	rel.got = make(chan string, 16*50)
	const writers, each = 16, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				a := h.agg(fmt.Sprintf("busy-%d", i%4))
				h.box.Hand(context.Background(), a, &outbox.Snapshot{Version: int64(i), Messages: []events.Message{message(a, "x")}},
					rel, fmt.Sprintf("key-%d-%d", w, i))
			}
		}()
	}
	wg.Wait()
	keys := rel.wait(t, writers*each, 30*time.Second)
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %s released twice", k)
		}
		seen[k] = true
	}
}
