package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events"
)

// startWithClient starts embedded servers for t and connects a client to its MongoDB.
func startWithClient(t *testing.T) (*Infra, *mongo.Client) {
	t.Helper()
	in, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	client, err := mongo.Connect(options.Client().ApplyURI(in.MongoURI))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return in, client
}

// TestIDLookupsUseIndex shows the reason for the indexer: after a pass, SQLite answers an
// `_id` lookup of the exact form FerretDB sends with an index search, not a scan.
func TestIDLookupsUseIndex(t *testing.T) {
	ctx := context.Background()
	in, client := startWithClient(t)
	coll := client.Database("idx").Collection("things")
	docs := make([]any, 2000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: fmt.Sprintf("acc:%d", i)}, {Key: "n", Value: i}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := in.IndexIDs(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(in.opt.Dir, "mongo", "idx.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var table string
	if err := db.QueryRow(`SELECT table_name FROM _ferretdb_collections WHERE name = 'things'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	var id, parent, unused int
	var plan string
	q := fmt.Sprintf(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM %q WHERE _ferretdb_sjson->'$._id' = ?`, table)
	if err := db.QueryRow(q, `"acc:7"`).Scan(&id, &parent, &unused, &plan); err != nil {
		t.Fatal(err)
	}
	if want := "SEARCH " + table + " USING INDEX " + table + idIndexSuffix; plan[:len(want)] != want {
		t.Fatalf("plan = %q, want %q…", plan, want)
	}
	var got bson.M
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "acc:1999"}}).Decode(&got); err != nil || got["n"] != int32(1999) {
		t.Fatalf("find by _id = %v, %v", got, err)
	}
}

// TestDroppedDatabaseIsWritableAgain: a database dropped after the indexer saw it can be
// written again at once. An indexer that kept its connection to the dropped file left the
// file's WAL behind, and FerretDB's next file of that name spun on it.
func TestDroppedDatabaseIsWritableAgain(t *testing.T) {
	ctx := context.Background()
	in, client := startWithClient(t)
	db := client.Database("dropped")
	for round := range 3 {
		for i := range 50 {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := db.Collection("things").ReplaceOne(wctx, bson.D{{Key: "_id", Value: i}},
				bson.D{{Key: "n", Value: round}}, options.Replace().SetUpsert(true))
			cancel()
			if err != nil {
				t.Fatalf("round %d, write %d: %v", round, i, err)
			}
		}
		if err := in.IndexIDs(); err != nil {
			t.Fatal(err)
		}
		if err := db.Drop(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKafkaSurvivesRestart shows that the broker keeps its topics and messages across a
// stop and start on the same port, which the outbox tests rely on.
func TestKafkaSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	in, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pub := events.NewPublisher(in.KafkaBrokers)
	if err := pub.Publish(ctx, events.Message{Topic: events.TopicProperty, Key: "a:1", Value: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	pub.Close()
	before := in.KafkaBrokers[0]
	in.StopKafka()
	if err := in.StartKafka(); err != nil {
		t.Fatal(err)
	}
	if in.KafkaBrokers[0] != before {
		t.Fatalf("broker moved from %s to %s", before, in.KafkaBrokers[0])
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: in.KafkaBrokers, GroupID: "t", Topic: events.TopicProperty, StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	m, err := r.ReadMessage(rctx)
	if err != nil || string(m.Value) != "one" {
		t.Fatalf("after restart read %q, %v", m.Value, err)
	}
}
