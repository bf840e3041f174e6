package derive

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "derive", &db, nil) }

var runs atomic.Int64

// consumer is a Consumer over a fresh snapshot collection, recording what it emits; erased
// answers whether the account is erased at each call.
type consumer struct {
	c       *Consumer
	mu      sync.Mutex
	emitted []webhook.Event
}

func newConsumer(t *testing.T, erased func() bool) *consumer {
	t.Helper()
	name := fmt.Sprintf("snaps_%d", runs.Add(1))
	if err := mongostore.Ensure(context.Background(), db, mongostore.WithLocks(name), nil); err != nil {
		t.Fatal(err)
	}
	k := &consumer{}
	k.c = &Consumer{Snaps: db.Collection(name),
		Emit: func(_ context.Context, evs []webhook.Event) error {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.emitted = append(k.emitted, evs...)
			return nil
		},
		Erased: func(context.Context, string) (bool, error) { return erased(), nil },
		Erase:  func(context.Context, string) error { return nil }}
	return k
}

func (k *consumer) message(t *testing.T, key string, b *contract.Booking) kafka.Message {
	t.Helper()
	v, err := events.Encode("booking-svc", contract.BookingUpdated, key, time.Now(), b)
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Key: []byte(key), Value: v}
}

func (k *consumer) kept(t *testing.T, key string) (int64, bool) {
	t.Helper()
	s, ok, err := mongostore.GetSnapshot(context.Background(), k.c.Snaps, key)
	if err != nil {
		t.Fatal(err)
	}
	return s.Version, ok
}

// TestConsumerHandle: a message derives its events and keeps its snapshot; read again
// (redelivered after the commit was lost) it derives nothing; a newer one derives from the
// kept one; a tombstone forgets the key; and a message of an account erased before or while
// it is handled leaves no snapshot (the account is looked at after the keep).
func TestConsumerHandle(t *testing.T) {
	ctx := context.Background()
	n3 := []string{"2027-01-10", "2027-01-11", "2027-01-12"}
	const key = "a1:booking:7"

	k := newConsumer(t, func() bool { return false })
	first := k.message(t, key, booking(1, "reserved", n3, nil))
	if err := k.c.Handle(ctx, first); err != nil {
		t.Fatal(err)
	}
	if g := types(k.emitted); len(g) != 2 || g[0] != webhook.BookingCreated {
		t.Fatalf("first message derived %v", g)
	}
	if v, ok := k.kept(t, key); !ok || v != 1 {
		t.Fatalf("kept v%d %v", v, ok)
	}
	if err := k.c.Handle(ctx, first); err != nil || len(k.emitted) != 2 {
		t.Fatalf("the same message again derived %v (%v)", types(k.emitted[2:]), err)
	}
	if err := k.c.Handle(ctx, k.message(t, key, booking(2, "cancelled", []string{}, nil))); err != nil {
		t.Fatal(err)
	}
	if g := types(k.emitted[2:]); len(g) != 2 || g[0] != webhook.BookingCancelled {
		t.Fatalf("the cancellation derived %v", g)
	}
	if err := k.c.Handle(ctx, kafka.Message{Key: []byte(key)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.kept(t, key); ok {
		t.Fatal("a tombstone left the snapshot")
	}

	gone := newConsumer(t, func() bool { return true })
	if err := gone.c.Handle(ctx, gone.message(t, key, booking(1, "reserved", n3, nil))); err != nil {
		t.Fatal(err)
	}
	if _, ok := gone.kept(t, key); ok {
		t.Fatal("an erased account's message kept its snapshot")
	}
}
