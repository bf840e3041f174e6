package events_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/eventually"
)

func TestPositionsEncodeParseCover(t *testing.T) {
	p := events.Positions{{Topic: "vros.booking.v1", ID: 2}: 41, {Topic: "vros.booking.v1", ID: 0}: -1, {Topic: "a", ID: 10}: 7}
	s := p.String()
	if want := "a/10=7,vros.booking.v1/0=-1,vros.booking.v1/2=41"; s != want {
		t.Fatalf("String = %q, want %q", s, want)
	}
	back, err := events.ParsePositions(s)
	if err != nil || back.String() != s {
		t.Fatalf("ParsePositions(%q) = %v, %v", s, back, err)
	}
	for _, bad := range []string{"x", "t/1", "t=1", "/1=2", "t/x=1", "t/-1=1", "t/1=x", "t/1=-2", "t/1=1,"} {
		if _, err := events.ParsePositions(bad); err == nil {
			t.Errorf("ParsePositions(%q) accepted", bad)
		}
	}
	if got, err := events.ParsePositions(""); err != nil || len(got) != 0 {
		t.Errorf(`ParsePositions("") = %v, %v`, got, err)
	}
	a, b := events.Partition{Topic: "t", ID: 0}, events.Partition{Topic: "t", ID: 1}
	for _, c := range []struct {
		have, want events.Positions
		covers     bool
	}{
		{events.Positions{a: 5, b: 3}, events.Positions{a: 5}, true},
		{events.Positions{a: 5, b: 3}, events.Positions{a: 5, b: 4}, false},
		{events.Positions{a: 5}, events.Positions{b: -1}, false}, // a partition not known covers nothing
		{events.Positions{a: -1}, events.Positions{a: -1}, true},
		{events.Positions{}, nil, true},
	} {
		if got := c.have.Covers(c.want); got != c.covers {
			t.Errorf("%v.Covers(%v) = %v, want %v", c.have, c.want, got, c.covers)
		}
	}
}

func TestAppliedMovesForwardOnly(t *testing.T) {
	var a events.Applied
	if a.String() != "" {
		t.Fatalf("zero Applied = %q", a.String())
	}
	a.Mark("t", 0, 4)
	a.Mark("t", 0, 2) // a redelivery after a rebalance
	a.Mark("t", 1, 0)
	if got := a.String(); got != "t/0=4,t/1=0" {
		t.Fatalf("String = %q", got)
	}
}

// TestAppliedFollowsTheConsumer: a consumer's Applied names each message once its handler
// returned — applied or parked, never one still being applied — and a consumer of the same
// group started again knows, before it applies anything, what the group committed.
func TestAppliedFollowsTheConsumer(t *testing.T) {
	topic := newTopic(t, 2)
	group := topic + ".group"
	pub := events.NewPublisher(brokers)
	defer pub.Close()
	var msgs []events.Message
	for i := range 6 {
		msgs = append(msgs, events.Message{Topic: topic, Key: fmt.Sprintf("acc:%d", i%3), Value: []byte(fmt.Sprint(i))})
	}
	if err := pub.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	ends, err := events.NextOffsets(context.Background(), client, []events.Partition{{Topic: topic, ID: 0}, {Topic: topic, ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := events.Positions{}
	for p, end := range ends {
		want[p] = end - 1
	}

	applied := &events.Applied{}
	var mu sync.Mutex
	handled := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: group, Topics: []string{topic},
			Applied: applied, CommitEvery: 10 * time.Millisecond,
			Park: func(context.Context, kafka.Message, error) error { return nil }},
			func(_ context.Context, m kafka.Message) error {
				// While a message is applied its position is not told yet.
				p, _ := events.ParsePositions(applied.String())
				if at, ok := p[events.Partition{Topic: topic, ID: m.Partition}]; ok && at >= m.Offset {
					t.Errorf("offset %d of partition %d told applied before its handler returned", m.Offset, m.Partition)
				}
				mu.Lock()
				handled++
				mu.Unlock()
				if string(m.Value) == "4" {
					return events.Permanent(errors.New("never applicable")) // parked: told as well
				}
				return nil
			})
	}()
	eventually.Holds(t, "every message told applied", 30*time.Second, func() bool { return applied.String() == want.String() })
	// The commits (every 10 ms) have reached the group before the consumer stops.
	eventually.Holds(t, "the offsets committed", 30*time.Second, func() bool {
		for p, end := range ends {
			if committedOffsetOf(t, group, topic, p.ID) != end {
				return false
			}
		}
		return true
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	again := &events.Applied{}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: group, Topics: []string{topic}, Applied: again},
			func(context.Context, kafka.Message) error {
				t.Error("a committed message applied again")
				return nil
			})
	}()
	eventually.Holds(t, "the committed offsets told applied after a restart", 30*time.Second, func() bool { return again.String() == want.String() })
}
