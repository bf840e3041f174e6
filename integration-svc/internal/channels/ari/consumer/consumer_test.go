package consumer

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/integration-svc/internal/channels/aristore"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

var (
	mongoURI string
	brokers  []string
)

// TestMain runs the package on the servers VROS_MONGO_URI and VROS_KAFKA_BROKERS name, else
// on embedded ones of its own.
func TestMain(m *testing.M) {
	if s := servers.FromEnv(); s != nil && s.MongoURI != "" && len(s.KafkaBrokers) > 0 {
		mongoURI, brokers = s.MongoURI, s.KafkaBrokers
		os.Exit(m.Run())
	}
	in, err := testinfra.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mongoURI, brokers = in.MongoURI, in.KafkaBrokers
	code := m.Run()
	in.Close()
	os.Exit(code)
}

// mappings is the part of channel.Connections the projector reads.
type mappings struct {
	channel.Connections
	ms []channel.Mapping
}

func (c mappings) Mappings(_ context.Context, account string, _, property int64) ([]channel.Mapping, error) {
	var out []channel.Mapping
	for _, m := range c.ms {
		if m.Account == account && (property == 0 || m.PropertyID == property) {
			out = append(out, m)
		}
	}
	return out, nil
}

// TestConsume: events of both topics, read in the channels' group, keep the property, the
// settings and the held nights of a booking and a block, and mark the mapped property (and
// not the unmapped one); a malformed event is parked, not retried for ever.
func TestConsume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(mongoURI))
	if err != nil {
		t.Fatal(err)
	}
	db := client.Database(fmt.Sprintf("ari_consumer_%d", time.Now().UnixNano()))
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = client.Disconnect(context.Background()) })
	st, err := aristore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	account := fmt.Sprintf("c%d", time.Now().UnixNano())
	var mu sync.Mutex
	var marked []string
	h := &Handler{Projector: &ari.Projector{Store: st,
		Connections: mappings{ms: []channel.Mapping{{Account: account, ConnectionID: 1, PropertyID: 7, Enabled: true}}},
		Mark: func(_ context.Context, a string, c, p int64) error {
			mu.Lock()
			defer mu.Unlock()
			marked = append(marked, fmt.Sprintf("%s:%d:%d", a, c, p))
			return nil
		}}}

	msg := func(topic, rest, typ string, data any) events.Message {
		v, err := events.Encode("test", typ, rest, time.Now(), data)
		if err != nil {
			t.Fatal(err)
		}
		return events.Message{Topic: topic, Key: account + ":" + rest, Value: v}
	}
	pub := events.NewPublisher(brokers)
	defer func() { _ = pub.Close() }()
	settings := contract.DefaultSettings(account)
	settings.Version = 1
	if err := pub.Publish(ctx,
		msg(events.TopicProperty, "7", contract.PropertyCreated, contract.Property{AccountID: account, PropertyID: 7, Version: 1}),
		msg(events.TopicProperty, "8", contract.PropertyCreated, contract.Property{AccountID: account, PropertyID: 8, Version: 1}),
		msg(events.TopicProperty, "settings", contract.SettingsUpdated, settings),
		msg(events.TopicBooking, "booking:5", contract.BookingReserved, contract.Booking{AccountID: account, BookingID: 5,
			PropertyID: 7, Status: "reserved", Version: 1, Nights: []string{"2099-01-01"}}),
		msg(events.TopicBooking, "block:2", contract.BlockCreated, contract.Block{AccountID: account, BlockID: 2,
			PropertyID: 7, StartDate: "2099-02-01", EndDate: "2099-02-02", Version: 1}),
		events.Message{Topic: events.TopicBooking, Key: account + ":booking:6", Value: []byte("not an event")},
	); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: "ari-test-" + account,
			Topics: []string{events.TopicProperty, events.TopicBooking},
			Park:   events.ParkIn(db.Collection(events.ParkedCollection))}, h.Handle)
	}()
	eventually.Holds(t, "the projection", time.Minute, func() bool {
		s, err := st.Load(ctx, account, 7)
		if err != nil || s.Property == nil || s.Settings.Version != 1 || len(s.Held) != 3 {
			return false
		}
		n, err := db.Collection(events.ParkedCollection).CountDocuments(ctx, bson.D{{Key: "key", Value: account + ":booking:6"}})
		if err != nil || n != 1 {
			return false
		}
		// Each event marks after it is stored: the last mark may follow the projection.
		mu.Lock()
		defer mu.Unlock()
		return len(marked) >= 4
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := account + ":1:7"
	if len(marked) < 4 || slices.ContainsFunc(marked, func(m string) bool { return m != want }) {
		t.Errorf("marked %v: want %s for the property, the settings, the booking and the block", marked, want)
	}
}
