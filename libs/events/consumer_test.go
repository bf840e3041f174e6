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
	"github.com/vros/vros/libs/eventually"
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
