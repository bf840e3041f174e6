package events_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/eventually"
)

// TestConsumerRetriesParksAndKeepsOrder: one partition carries two keys' events. A failure
// that passes is retried, holding back everything after it; a permanent failure and a
// panicking handler are parked with their reason and the partition moves on. Each key's
// events are applied in the order they were written, each exactly once (no restart here, so
// no redelivery either).
func TestConsumerRetriesParksAndKeepsOrder(t *testing.T) {
	topic := newTopic(t, 1)
	type step struct {
		key, value string
		fail       func(attempt int) error // nil: applies at once
		parked     string                  // the reason it is parked with, if it is
	}
	steps := []step{
		{key: "a", value: "a1"},
		{key: "b", value: "b1", fail: func(n int) error {
			if n < 3 {
				return errors.New("store unreachable") // transient: retried
			}
			return nil
		}},
		{key: "a", value: "a2"},
		{key: "b", value: "b2", fail: func(int) error { return events.Permanent(errors.New("no account in event")) },
			parked: "no account in event"},
		{key: "a", value: "a3", fail: func(int) error { panic("nil map") }, parked: "handler panicked: nil map"},
		{key: "b", value: "b3"},
		{key: "a", value: "a4"},
	}
	byValue := map[string]step{}
	msgs := make([]events.Message, len(steps))
	for i, s := range steps {
		byValue[s.value] = s
		msgs[i] = events.Message{Topic: topic, Key: s.key, Value: []byte(s.value)}
	}
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	if err := pub.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	attempts := map[string]int{}
	var appliedOrder []string
	parked := map[string]string{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = events.Consume(ctx, events.ConsumerOptions{
			Brokers: brokers, GroupID: "order-" + topic, Topics: []string{topic},
			Park: func(_ context.Context, m kafka.Message, reason error) error {
				mu.Lock()
				defer mu.Unlock()
				parked[string(m.Value)] = reason.Error()
				return nil
			},
		}, func(_ context.Context, m kafka.Message) error {
			v := string(m.Value)
			mu.Lock()
			attempts[v]++
			n := attempts[v]
			mu.Unlock()
			if s := byValue[v]; s.fail != nil {
				if err := s.fail(n); err != nil {
					return err
				}
			}
			mu.Lock()
			appliedOrder = append(appliedOrder, v)
			mu.Unlock()
			return nil
		})
	}()
	defer func() { cancel(); <-done }()

	want := []string{"a1", "b1", "a2", "b3", "a4"}
	eventually.Holds(t, "every event applied or parked", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(appliedOrder)+len(parked) >= len(steps)
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(appliedOrder, want) {
		t.Errorf("applied %v, want %v (in order, once each)", appliedOrder, want)
	}
	if attempts["b1"] != 3 {
		t.Errorf("b1 tried %d times, want 3 (two transient failures, then applied)", attempts["b1"])
	}
	for _, s := range steps {
		got, ok := parked[s.value]
		switch {
		case s.parked == "" && ok:
			t.Errorf("%s parked (%s), want applied", s.value, got)
		case s.parked != "" && !strings.Contains(got, s.parked):
			t.Errorf("%s parked with %q, want %q", s.value, got, s.parked)
		case s.parked != "" && attempts[s.value] != 1:
			t.Errorf("%s tried %d times, want 1 (a permanent failure is not retried)", s.value, attempts[s.value])
		}
	}
	if t.Failed() {
		t.Logf("attempts %v, parked %v", attempts, fmt.Sprint(parked))
	}
}

// storeCall is what a handler's or parker's store call does once the consumer's context has
// ended: it fails with the context's error, wrapped as a driver wraps it.
func storeCall(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	return nil
}

// committedOffset is group's committed offset of partition 0 of topic (-1: none).
func committedOffset(t *testing.T, group, topic string) int64 {
	return committedOffsetOf(t, group, topic, 0)
}

// committedOffsetOf is group's committed offset of a partition of topic (-1: none).
func committedOffsetOf(t *testing.T, group, topic string, partition int) int64 {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	res, err := cl.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {partition}}})
	if err != nil || res.Error != nil || len(res.Topics[topic]) != 1 {
		t.Fatalf("offsets of %s: %v %v %v", group, err, res.Error, res.Topics)
	}
	return res.Topics[topic][0].CommittedOffset
}

// TestConsumerStoppedInEveryPhaseReturnsNil: a consumer stopped by its context returns nil,
// whichever phase the stop finds it in (a phase hook stops it there, by construction): waiting
// for a message, a message just fetched, the handler's store call, the wait before a retry,
// the parker's store call, the commit. A message whose handler or parker the stop cut is
// neither parked nor committed: the group's next reader gets it again.
func TestConsumerStoppedInEveryPhaseReturnsNil(t *testing.T) {
	cases := []struct {
		name string
		// stopAt is the phase whose n-th entry (counting from 1) cancels the consumer ("":
		// the handler or the parker cancels it).
		stopAt string
		n      int
		apply  func(ctx context.Context, stop func()) error
		park   func(ctx context.Context, stop func()) error
		// cut: the message was not applied; want its offset uncommitted and nothing parked.
		cut bool
		// committed is the offset wanted committed after the stop (-2: not checked).
		committed int64
	}{
		{name: "waiting for the next message", stopAt: "fetch", n: 2,
			apply: func(ctx context.Context, _ func()) error { return storeCall(ctx) }, committed: 1},
		{name: "a message fetched as the stop comes", stopAt: "apply", n: 1,
			apply: func(ctx context.Context, _ func()) error { return storeCall(ctx) }, cut: true},
		{name: "the handler's store call cut", apply: func(ctx context.Context, stop func()) error {
			stop()
			return storeCall(ctx)
		}, cut: true},
		{name: "waiting to retry a transient failure", apply: func(_ context.Context, stop func()) error {
			stop()
			return errors.New("store unreachable")
		}, cut: true},
		{name: "the parker's store call cut", apply: func(context.Context, func()) error {
			return events.Permanent(errors.New("no account in event"))
		}, park: func(ctx context.Context, stop func()) error {
			stop()
			return storeCall(ctx)
		}, cut: true},
		{name: "applied, its offset not yet committed", stopAt: "commit", n: 1,
			apply: func(ctx context.Context, _ func()) error { return storeCall(ctx) }, committed: -2},
	}
	topics := make([]string, len(cases))
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	for i := range cases {
		topics[i] = newTopic(t, 1)
		if err := pub.Publish(context.Background(), events.Message{Topic: topics[i], Key: "a:1", Value: []byte("1")}); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic, group := topics[i], "stop-"+topics[i]
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			entered := map[string]int{}
			parked := 0
			o := events.WithPhaseHook(events.ConsumerOptions{Brokers: brokers, GroupID: group, Topics: []string{topic},
				Park: func(ctx context.Context, _ kafka.Message, _ error) error {
					mu.Lock()
					parked++
					mu.Unlock()
					if c.park != nil {
						return c.park(ctx, cancel)
					}
					return nil
				}}, func(phase string) {
				mu.Lock()
				entered[phase]++
				n := entered[phase]
				mu.Unlock()
				if phase == c.stopAt && n == c.n {
					cancel()
				}
			})
			done := make(chan error, 1)
			go func() {
				done <- events.Consume(ctx, o, func(ctx context.Context, _ kafka.Message) error { return c.apply(ctx, cancel) })
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("stopped, the consumer returned %v, want nil", err)
				}
			case <-time.After(30 * time.Second): // a hang, not a slow machine
				t.Fatal("the consumer did not stop")
			}
			if ctx.Err() == nil {
				t.Fatal("the consumer returned before it was stopped")
			}
			mu.Lock()
			defer mu.Unlock()
			if c.cut && (parked > 0 && c.park == nil) {
				t.Errorf("the cut message was parked")
			}
			want := c.committed
			if c.cut {
				want = -1
			}
			if got := committedOffset(t, group, topic); want != -2 && got != want {
				t.Errorf("committed offset %d, want %d", got, want)
			}
		})
	}
}
