package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/catalog-svc/internal/consumer"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
)

// The erasure and tombstone tests run the catalog as the service does, over this store and
// fed through the consumer, against the servers VROS_MONGO_URI and VROS_KAFKA_BROKERS name
// (make test-real), else against embedded ones started on first use.
var (
	infraOnce sync.Once
	infraErr  error
	mongoURI  string
	brokers   []string
	embedInfa *testinfra.Infra
	dbSeq     atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if embedInfa != nil {
		embedInfa.Close()
	}
	os.Exit(code)
}

func useServers(t *testing.T) {
	t.Helper()
	infraOnce.Do(func() {
		if s := servers.FromEnv(); s != nil && s.MongoURI != "" && len(s.KafkaBrokers) > 0 {
			mongoURI, brokers = s.MongoURI, s.KafkaBrokers
			return
		}
		embedInfa, infraErr = testinfra.Start(context.Background())
		if infraErr == nil {
			mongoURI, brokers = embedInfa.MongoURI, embedInfa.KafkaBrokers
		}
	})
	if infraErr != nil {
		t.Fatal(infraErr)
	}
}

// testDB is a fresh database of the test's own, through a client that reports each command
// to monitor (when given); it is dropped when the test ends.
func testDB(t *testing.T, monitor *event.CommandMonitor) *mongo.Database {
	t.Helper()
	useServers(t)
	opts := options.Client().ApplyURI(mongoURI)
	if monitor != nil {
		opts.SetMonitor(monitor)
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		t.Fatal(err)
	}
	db := client.Database(fmt.Sprintf("catalog_erase_%d_%d", time.Now().UnixNano()%1e9, dbSeq.Add(1)))
	t.Cleanup(func() {
		_ = db.Drop(context.Background())
		_ = client.Disconnect(context.Background())
	})
	return db
}

// msg is an event of type typ with data, as property-svc and booking-svc publish it.
func msg(t *testing.T, typ, key, data string) kafka.Message {
	t.Helper()
	raw, err := events.Encode("/test", typ, key, time.Now(), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Key: []byte(key), Value: raw}
}

func tombstone(key string) kafka.Message { return kafka.Message{Key: []byte(key)} }

func erasure(t *testing.T, acc string) kafka.Message {
	return msg(t, contract.AccountErased, events.AccountKey(acc), fmt.Sprintf(`{"account_id":%q,"erased_at":"2026-11-23T07:30:00Z"}`, acc))
}

// accountEvents are the events of every aggregate kind of one account at version v: two
// properties, the settings, a booking and a block.
func accountEvents(t *testing.T, acc string, v int) []kafka.Message {
	return []kafka.Message{
		msg(t, contract.PropertyUpdated, acc+":1", fmt.Sprintf(`{"account_id":%q,"property_id":1,"version":%d,"content":{"name":"Villa Erase","city":"Lucca"}}`, acc, v)),
		msg(t, contract.PropertyUpdated, acc+":2", fmt.Sprintf(`{"account_id":%q,"property_id":2,"version":%d,"content":{"name":"Casa Erase"}}`, acc, v)),
		msg(t, contract.SettingsUpdated, acc+":settings", fmt.Sprintf(`{"account_id":%q,"version":%d,"currency":"EUR"}`, acc, v)),
		msg(t, contract.BookingReserved, acc+":booking:7", fmt.Sprintf(`{"account_id":%q,"booking_id":7,"property_id":1,"version":%d,"status":"reserved","nights":["2030-01-01"]}`, acc, v)),
		msg(t, contract.BlockCreated, acc+":block:9", fmt.Sprintf(`{"account_id":%q,"block_id":9,"property_id":2,"version":%d,"start_date":"2030-02-01","end_date":"2030-02-02"}`, acc, v)),
	}
}

// view is the catalog as the service runs it: kept in a Store, fed by the consumer.
type view struct {
	*catalog.Catalog
	consumer *consumer.Consumer
}

// Apply hands a message to the consumer, as events.Consume does.
func (v *view) Apply(ctx context.Context, m kafka.Message) error { return v.consumer.Apply(ctx, m) }

// open starts the catalog on db, loaded from it, as the service does at start.
func open(ctx context.Context, db *mongo.Database) (*view, error) {
	st, err := New(ctx, db)
	if err != nil {
		return nil, err
	}
	c, err := catalog.New(ctx, st)
	if err != nil {
		return nil, err
	}
	return &view{Catalog: c, consumer: consumer.New(c)}, nil
}

func applyAll(t *testing.T, s *view, ms []kafka.Message) {
	t.Helper()
	for _, m := range ms {
		if err := s.Apply(context.Background(), m); err != nil {
			t.Fatalf("apply %s: %v", m.Key, err)
		}
	}
}

// held lists, by collection, the ids of the documents of db that belong to acc: an `_id`
// (or a parked event's key) starting with "<acc>:", or anything holding acc beyond
// erased_accounts' marker.
func held(t *testing.T, db *mongo.Database, acc string) []string {
	t.Helper()
	ctx := context.Background()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		cur, err := db.Collection(n).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.M
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			text := fmt.Sprint(d)
			if n == collErased && d["_id"] == acc {
				continue
			}
			if strings.Contains(text, acc+":") || strings.Contains(text, `"account_id":"`+acc+`"`) || d["_id"] == acc {
				out = append(out, fmt.Sprintf("%s %v", n, d["_id"]))
			}
		}
	}
	return out
}

// memoryHolds reports what the view's memory holds of acc.
func memoryHolds(s *view, acc string) string {
	if h, ok := s.Holds(acc); ok {
		return fmt.Sprintf("%d properties, %d bookings, %d blocks, settings v%d", h.Properties, h.Bookings, h.Blocks, h.SettingsVersion)
	}
	return ""
}

// wholeAccount checks that the view serves all of acc's aggregates at version v.
func wholeAccount(t *testing.T, s *view, acc string, v int64) {
	t.Helper()
	if !isWhole(s, acc, v) {
		t.Fatalf("account %s is not whole at v%d: %s", acc, v, memoryHolds(s, acc))
	}
}

// isWhole tells whether the view holds every snapshot of accountEvents(acc, v), property 1
// and the settings at version v.
func isWhole(s *view, acc string, v int64) bool {
	p, ok := s.Property(acc, 1)
	return ok && p.Snap.Version == v && len(s.Properties(acc)) == 2 && s.Settings(acc).Version == v &&
		len(s.Bookings(acc, 1)) == 1 && len(s.Blocks(acc, 2)) == 1 && len(s.Held(acc, 1)) == 1
}

// keyColl is the collection of the snapshot a message key names.
func keyColl(key string) string {
	switch _, rest, _ := strings.Cut(key, ":"); {
	case rest == "settings":
		return collSettings
	case strings.HasPrefix(rest, "booking:"):
		return collBookings
	case strings.HasPrefix(rest, "block:"):
		return collBlocks
	}
	return collProperties
}

// TestAccountErasure: vros.account.erased forgets the account in memory and in every
// stored document (snapshots, their leases, parked events), keeps only its marker, ignores
// the account's later events of every kind, survives a restart, and leaves other accounts
// alone.
func TestAccountErasure(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, nil)
	s, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const gone, kept = "9101", "9102"
	applyAll(t, s, accountEvents(t, gone, 1))
	applyAll(t, s, accountEvents(t, kept, 1))
	// What else the database may hold of an account: an event the consumer parked, and a
	// snapshot lease left by a writer that stopped.
	if err := events.ParkIn(db.Collection(events.ParkedCollection))(ctx, kafka.Message{Topic: events.TopicProperty, Key: []byte(gone + ":3"),
		Value: []byte(`{"data":{"account_id":"` + gone + `","content":{"name":"Villa Parked"}}}`)}, errors.New("test")); err != nil {
		t.Fatal(err)
	}
	if err := events.ParkIn(db.Collection(events.ParkedCollection))(ctx, kafka.Message{Topic: events.TopicProperty, Partition: 1, Key: []byte(kept + ":3"),
		Value: []byte(`{}`)}, errors.New("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(collProperties+"_locks").InsertOne(ctx, bson.D{{Key: "_id", Value: gone + ":1"}, {Key: "token", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if h := held(t, db, gone); len(h) != 7 {
		t.Fatalf("before the erasure the store holds only %v", h)
	}
	wholeAccount(t, s, gone, 1)

	var forgotten []string
	s.OnErase(func(acc string) { forgotten = append(forgotten, acc) })
	if err := s.Apply(ctx, erasure(t, gone)); err != nil {
		t.Fatal(err)
	}
	keptAt := int64(1)
	check := func(s *view, when string) {
		t.Helper()
		if h := held(t, db, gone); len(h) != 0 {
			t.Fatalf("%s: the store still holds %v", when, h)
		}
		if m := memoryHolds(s, gone); m != "" || len(s.Properties(gone)) != 0 || s.Settings(gone).Version != 0 || !s.Erased(gone) {
			t.Fatalf("%s: memory still holds %s", when, m)
		}
		var marker bson.M
		if err := db.Collection(collErased).FindOne(ctx, bson.D{{Key: "_id", Value: gone}}).Decode(&marker); err != nil || len(marker) != 2 {
			t.Fatalf("%s: marker %v %v", when, marker, err)
		}
		wholeAccount(t, s, kept, keptAt)
		if n, _ := db.Collection(events.ParkedCollection).CountDocuments(ctx, bson.D{{Key: "key", Value: kept + ":3"}}); n != 1 {
			t.Fatalf("%s: the other account's parked event is gone", when)
		}
	}
	check(s, "after the erasure")
	if len(forgotten) != 1 || forgotten[0] != gone {
		t.Fatalf("OnErase calls: %v", forgotten)
	}

	// Redelivered, and the account's events arriving late, newer ones too, in any order.
	if err := s.Apply(ctx, erasure(t, gone)); err != nil {
		t.Fatal(err)
	}
	late := append(accountEvents(t, gone, 2), accountEvents(t, gone, 1)...)
	for i := len(late) - 1; i >= 0; i-- {
		if err := s.Apply(ctx, late[i]); err != nil {
			t.Fatal(err)
		}
	}
	check(s, "after late events")
	applyAll(t, s, accountEvents(t, kept, 2))
	keptAt = 2
	wholeAccount(t, s, kept, 2)

	restarted, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	check(restarted, "after a restart")
	applyAll(t, restarted, accountEvents(t, gone, 3))
	check(restarted, "after a restart and late events")
}

// TestErasureInterruptedAtEachStep: the erasure's writes are cut off one after the other
// (the context ends as the n-th write starts, as when the process is killed there). The
// consumer then applies the erasure again (it commits nothing that failed; after a kill the
// event is read again), on the view as it was or on a view started again from the database:
// either way nothing of the account is left. Once the marker is written a restart alone
// already stops serving the account and removes its snapshots.
func TestErasureInterruptedAtEachStep(t *testing.T) {
	ctx := context.Background()
	var cut atomic.Pointer[context.CancelFunc]
	var writes, at atomic.Int64
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "update" && e.CommandName != "delete" {
			return
		}
		if writes.Add(1) == at.Load() {
			if c := cut.Load(); c != nil {
				(*c)()
			}
		}
	}}
	// erase applies the erasure of acc, cut off as its n-th write starts (never when n is 0),
	// and answers how many writes it started.
	erase := func(s *view, acc string, n int64) (int64, error) {
		ectx, cancel := context.WithCancel(ctx)
		defer cancel()
		cut.Store(&cancel)
		writes.Store(0)
		at.Store(n)
		err := s.Apply(ectx, erasure(t, acc))
		cut.Store(nil)
		at.Store(0)
		return writes.Load(), err
	}
	fresh := func(acc, other string) (*mongo.Database, *view) {
		db := testDB(t, monitor)
		s, err := open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		applyAll(t, s, accountEvents(t, acc, 1))
		applyAll(t, s, accountEvents(t, other, 1))
		return db, s
	}
	const other = "9299"
	db, s := fresh("9200", other)
	total, err := erase(s, "9200", 0)
	if err != nil || total < 10 { // the marker, four snapshot collections and their leases, the parked events
		t.Fatalf("the whole erasure: %d writes, %v", total, err)
	}
	if h := held(t, db, "9200"); len(h) != 0 {
		t.Fatalf("the whole erasure left %v", h)
	}
	for n := int64(1); n <= total; n++ {
		acc := fmt.Sprintf("92%02d", n)
		db, s := fresh(acc, other)
		if _, err := erase(s, acc, n); err == nil && n < total {
			t.Fatalf("cut at write %d of %d, yet the erasure succeeded", n, total)
		}
		if marked := db.Collection(collErased).FindOne(ctx, bson.D{{Key: "_id", Value: acc}}).Err() == nil; marked {
			restarted, err := open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if m := memoryHolds(restarted, acc); m != "" {
				t.Fatalf("cut at write %d: a restart serves the account: %s", n, m)
			}
			for _, c := range snapshotColls {
				if left, _ := db.Collection(c).CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + acc + ":"}}}}); left != 0 {
					t.Fatalf("cut at write %d: a restart left %d documents in %s", n, left, c)
				}
			}
			wholeAccount(t, restarted, other, 1)
		} else if n > 1 {
			t.Fatalf("cut at write %d: no marker", n)
		}
		// The event comes again: to the view that failed, and to one started again.
		for i, v := range []*view{s, nil} {
			if v == nil {
				if v, err = open(ctx, db); err != nil {
					t.Fatal(err)
				}
			}
			if err := v.Apply(ctx, erasure(t, acc)); err != nil {
				t.Fatalf("cut at write %d, retry %d: %v", n, i, err)
			}
			if h := held(t, db, acc); len(h) != 0 {
				t.Fatalf("cut at write %d, retry %d: the store still holds %v", n, i, h)
			}
			if m := memoryHolds(v, acc); m != "" || !v.Erased(acc) {
				t.Fatalf("cut at write %d, retry %d: memory holds %s", n, i, m)
			}
			wholeAccount(t, v, other, 1)
		}
	}
	t.Logf("cut at each of the erasure's %d writes", total)
}

// TestErasureRacesLateEvents: events of every kind of an account are applied from several
// goroutines (as from several partitions) while the account is erased. Whatever the order,
// nothing of it is left in memory or in the store afterwards, and the other account applied
// alongside is whole.
func TestErasureRacesLateEvents(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, nil)
	s, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const gone, kept = "9301", "9302"
	applyAll(t, s, accountEvents(t, gone, 1))
	var wg, started sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			defer once.Do(started.Done)
			for v := 2; v <= 6; v++ {
				for _, m := range append(accountEvents(t, gone, v*4+g), accountEvents(t, kept, v*4+g)...) {
					if err := s.Apply(ctx, m); err != nil {
						t.Error(err)
						return
					}
					once.Do(started.Done)
				}
			}
		}()
	}
	started.Wait() // the erasure comes once every goroutine has applied an event, not after a guessed pause
	if err := s.Apply(ctx, erasure(t, gone)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if h := held(t, db, gone); len(h) != 0 {
		t.Fatalf("the store holds %v", h)
	}
	if m := memoryHolds(s, gone); m != "" {
		t.Fatalf("memory holds %s", m)
	}
	wholeAccount(t, s, kept, 27)
}

// TestTombstones: a tombstone forgets its key's snapshot, stored and in memory, for every
// kind of key; a key naming nothing the view holds changes nothing and is no error; other
// keys and accounts are untouched.
func TestTombstones(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, nil)
	s, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const acc, other = "9401", "9402"
	applyAll(t, s, accountEvents(t, acc, 1))
	applyAll(t, s, accountEvents(t, other, 1))
	stored := func(id string) bool {
		return db.Collection(keyColl(id)).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Err() == nil
	}
	for _, tc := range []struct {
		key    string
		gone   func() bool // the aggregate is no longer served
		remain func() bool // what the account keeps
	}{
		{acc + ":booking:7", func() bool { return len(s.Bookings(acc, 1)) == 0 && len(s.Held(acc, 1)) == 0 },
			func() bool { return len(s.Blocks(acc, 2)) == 1 }},
		{acc + ":block:9", func() bool { return len(s.Blocks(acc, 0)) == 0 && len(s.Held(acc, 2)) == 0 },
			func() bool { _, ok := s.Property(acc, 2); return ok }},
		{acc + ":settings", func() bool { return s.Settings(acc).Version == 0 && s.Settings(acc).Currency == "USD" },
			func() bool { _, ok := s.Property(acc, 1); return ok }},
		{acc + ":2", func() bool { _, ok := s.Property(acc, 2); return !ok },
			func() bool { return len(s.Properties(acc)) == 1 }},
	} {
		if !stored(tc.key) {
			t.Fatalf("%s: not stored before its tombstone", tc.key)
		}
		if err := s.Apply(ctx, tombstone(tc.key)); err != nil {
			t.Fatalf("%s: %v", tc.key, err)
		}
		if stored(tc.key) || !tc.gone() || !tc.remain() {
			t.Fatalf("%s: stored %v, forgotten %v, the rest kept %v", tc.key, stored(tc.key), tc.gone(), tc.remain())
		}
		if err := s.Apply(ctx, tombstone(tc.key)); err != nil { // redelivered
			t.Fatalf("%s again: %v", tc.key, err)
		}
	}
	for _, key := range []string{acc + ":account", acc + ":booking:x", acc + ":", ":1", "nonsense", "", acc + ":-3"} {
		if err := s.Apply(ctx, tombstone(key)); err != nil {
			t.Fatalf("tombstone %q: %v", key, err)
		}
	}
	if _, ok := s.Property(acc, 1); !ok || s.Erased(acc) {
		t.Fatal("a tombstone of an unknown key changed the account")
	}
	wholeAccount(t, s, other, 1)
	restarted, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(restarted.Properties(acc)) != 1 || len(restarted.Bookings(acc, 1)) != 0 || restarted.Settings(acc).Version != 0 {
		t.Fatalf("after a restart: %s", memoryHolds(restarted, acc))
	}
	// A tombstone is not the end of a key: a newer snapshot is served again.
	applyAll(t, s, accountEvents(t, acc, 2))
	wholeAccount(t, s, acc, 2)
}

// TestErasureThroughKafka: the account's snapshots, its erasure, the tombstones property-svc
// and booking-svc publish, and late events reach the view through the broker and the
// consumer as the service runs them; the tombstones (null values) are applied, never parked.
func TestErasureThroughKafka(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := testDB(t, nil)
	s, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	acc, other := fmt.Sprintf("95%06d", time.Now().UnixNano()%1e6), fmt.Sprintf("96%06d", time.Now().UnixNano()%1e6)
	pub := events.NewPublisher(brokers)
	defer func() { _ = pub.Close() }()
	publish := func(ms ...kafka.Message) {
		t.Helper()
		out := make([]events.Message, len(ms))
		for i, m := range ms {
			topic := events.TopicProperty
			if strings.Contains(string(m.Key), ":booking:") || strings.Contains(string(m.Key), ":block:") {
				topic = events.TopicBooking
			}
			out[i] = events.Message{Topic: topic, Key: string(m.Key), Value: m.Value, Tombstone: m.Value == nil}
		}
		if err := pub.Publish(ctx, out...); err != nil {
			t.Fatal(err)
		}
	}
	publish(accountEvents(t, acc, 1)...)
	publish(accountEvents(t, other, 1)...)
	var lateSeen atomic.Int64 // messages of the booking key handled: v1, its tombstone, v5
	done := make(chan error, 1)
	go func() {
		done <- events.Consume(ctx, events.ConsumerOptions{Brokers: brokers, GroupID: "catalog-erase-test-" + acc,
			Topics: []string{events.TopicProperty, events.TopicBooking}, Park: events.ParkIn(db.Collection(events.ParkedCollection))},
			func(ctx context.Context, m kafka.Message) error {
				// The topics may hold other tests' events (make test-real's servers): only
				// this test's accounts are applied.
				if k := string(m.Key); !strings.HasPrefix(k, acc+":") && !strings.HasPrefix(k, other+":") {
					return nil
				}
				err := s.Apply(ctx, m)
				if err == nil && string(m.Key) == acc+":booking:7" {
					lateSeen.Add(1)
				}
				return err
			})
	}()
	eventually.Holds(t, "both accounts applied", 30*time.Second, func() bool {
		_, a := s.Property(acc, 2)
		_, b := s.Property(other, 2)
		return a && b && len(s.Blocks(acc, 0)) == 1 && len(s.Blocks(other, 0)) == 1
	})
	// What the erasing services publish: the erasure and a tombstone per key; then a late
	// booking update of the account (another partition may hold it back) and the other
	// account's changes.
	publish(erasure(t, acc), tombstone(acc+":1"), tombstone(acc+":2"), tombstone(acc+":settings"))
	publish(tombstone(acc+":booking:7"), tombstone(acc+":block:9"), accountEvents(t, acc, 5)[3])
	publish(accountEvents(t, other, 2)...)
	// Every one of the other account's v2 snapshots, not only some: they travel on several
	// partitions, and the settings' one may come last.
	eventually.Holds(t, "the erasure, the late event and the other account's changes applied", 30*time.Second, func() bool {
		return s.Erased(acc) && lateSeen.Load() == 3 && isWhole(s, other, 2) && len(s.Blocks(other, 0)) == 1 && s.Blocks(other, 0)[0].Version == 2
	})
	if h := held(t, db, acc); len(h) != 0 {
		t.Fatalf("the store holds %v", h)
	}
	if m := memoryHolds(s, acc); m != "" {
		t.Fatalf("memory holds %s", m)
	}
	if n, _ := db.Collection(events.ParkedCollection).CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d events parked", n)
	}
	wholeAccount(t, s, other, 2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
