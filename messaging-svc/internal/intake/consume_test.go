package intake

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
	"github.com/vros/vros/testkit/eventually"
)

// TestConsume: the handlers under libs/events' consumer, fed by the broker: a property in
// Pacific/Kiritimati, its booking confirmed then moved, an event delivered twice, a block and
// a malformed event (parked, the partition goes on): the moved stay's arrival reminder is
// planned at 20:00 UTC the day before its local date, the old one cancelled.
func TestConsume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newHarness(t)
	h.clock.Set(time.Now())
	acc := fmt.Sprintf("consume%d", time.Now().UnixNano())
	var (
		mu     sync.Mutex
		parked []string
	)
	park := func(_ context.Context, m kafka.Message, _ error) error {
		mu.Lock()
		if strings.HasPrefix(string(m.Key), acc+":") { // not an earlier run's (go test -count)
			parked = append(parked, string(m.Key))
		}
		mu.Unlock()
		return nil
	}
	var wg sync.WaitGroup
	for topic, handler := range map[string]events.Handler{events.TopicProperty: h.in.Property, events.TopicBooking: h.in.Booking} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: acc + "-" + topic, Topics: []string{topic}, Park: park}, handler)
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	pub := events.NewPublisher(brokers)
	t.Cleanup(func() { _ = pub.Close() })
	publish := func(ms ...kafka.Message) {
		t.Helper()
		out := make([]events.Message, len(ms))
		for i, m := range ms {
			out[i] = events.Message{Topic: m.Topic, Key: string(m.Key), Value: m.Value, Tombstone: m.Value == nil}
		}
		if err := pub.Publish(ctx, out...); err != nil {
			t.Fatal(err)
		}
	}

	publish(propertyMsg(t, acc+":3", contract.PropertyCreated,
		contract.Property{AccountID: acc, PropertyID: 3, Version: 1, Content: contract.Content{Name: "Atoll", Timezone: "Pacific/Kiritimati"}}))
	eventually.Holds(t, "the property's view", 30*time.Second, func() bool {
		p, ok, err := h.views.Property(ctx, acc, 3)
		return err == nil && ok && p.Timezone == "Pacific/Kiritimati"
	})
	// A stay far enough ahead that the test clock (now) never makes it past due.
	in := time.Now().UTC().AddDate(1, 0, 0)
	day := func(d time.Time) string { return d.Format("2006-01-02") }
	b := paidIn(reserved(acc, 1), 1)
	b.Checkin, b.Checkout = day(in), day(in.AddDate(0, 0, 4))
	movedB := moved(b, 2, day(in.AddDate(0, 0, 10)), day(in.AddDate(0, 0, 14)))
	block, _ := events.Encode("/vros/booking-svc", contract.BlockCreated, acc, time.Now(), contract.Block{AccountID: acc, BlockID: 1, Version: 1})
	publish(bookingMsg(t, b), bookingMsg(t, b),
		kafka.Message{Topic: events.TopicBooking, Key: []byte(acc + ":block:1"), Value: block},
		kafka.Message{Topic: events.TopicBooking, Key: []byte(acc + ":booking:1"), Value: []byte("{broken")},
		bookingMsg(t, movedB))

	newArrival := in.AddDate(0, 0, 7) // 3 days before the moved check-in
	newID := trigger.ID(acc, trigger.StayArrival, 1, day(newArrival)+"T10:00")
	eventually.Holds(t, "the moved stay's snapshot", 30*time.Second, func() bool {
		s, err := h.snaps.Get(ctx, acc, 1)
		return err == nil && s != nil && s.Version == 2
	})
	m, ok, err := h.msgs.Get(ctx, acc, newID)
	y, mo, d := newArrival.Date()
	want := time.Date(y, mo, d, 10, 0, 0, 0, time.UTC).Add(-14 * time.Hour)
	if err != nil || !ok || m.Status != store.StatusScheduled || !m.SendAt.Equal(want) {
		t.Fatalf("%s: %+v ok %v err %v, want scheduled at %v", newID, m, ok, err, want)
	}
	oldID := trigger.ID(acc, trigger.StayArrival, 1, day(in.AddDate(0, 0, -3))+"T10:00")
	if m, ok, _ := h.msgs.Get(ctx, acc, oldID); !ok || m.Status != store.StatusCancelled {
		t.Fatalf("%s: %+v ok %v, want cancelled", oldID, m, ok)
	}
	if got := h.statuses(t, acc); len(got) != 10 || got["booking.confirmed:once"] != store.StatusPending || got["booking.modified:2"] != store.StatusPending {
		t.Fatalf("messages:\n%s", dump(got))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(parked) != 1 || parked[0] != acc+":booking:1" {
		t.Fatalf("parked %v, want the malformed event", parked)
	}
}
