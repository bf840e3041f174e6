package realinfra

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/servers"
)

// TestServers starts a set of servers of its own and checks what the other tests rely on:
// FerretDB stores in PostgreSQL, the vros topics exist, a broker restarted through the
// control endpoint keeps its data and its address, and Close leaves no process, port or
// folder behind. It runs where the real servers are known to be installable, in make
// test-real (VROS_MONGO_URI/VROS_KAFKA_BROKERS set); elsewhere it is skipped, so that the
// embedded run needs neither Java nor PostgreSQL.
func TestServers(t *testing.T) {
	if servers.FromEnv() == nil {
		t.Skip("make test-real runs this (it starts PostgreSQL and Kafka)")
	}
	ctx := context.Background()
	in, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = in.Close()
		}
	}()
	t.Log(in.Describe())

	// MongoDB wire protocol, stored by PostgreSQL.
	client, err := mongo.Connect(options.Client().ApplyURI(in.MongoURI))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database("realinfra_test").Collection("things")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "acc:1"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "acc:1"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	var doc struct{ N int }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "acc:1"}}).Decode(&doc); err != nil || doc.N != 2 {
		t.Fatalf("read back %+v, %v", doc, err)
	}
	// A lookup by _id in the form FerretDB sends it is an index search, not a table scan
	// (idindex.go): seen as a sequential scan without the indexer. The table is made larger
	// than idIndexFrom, under which tables keep their scan.
	pad := strings.Repeat("x", 1000)
	var more []any
	for i := range 2 * idIndexFrom / 1000 {
		more = append(more, bson.D{{Key: "_id", Value: fmt.Sprintf("acc:pad%d", i)}, {Key: "pad", Value: pad}})
	}
	if _, err := coll.InsertMany(ctx, more); err != nil {
		t.Fatal(err)
	}
	if err := in.IndexIDs(ctx); err != nil {
		t.Fatal(err)
	}
	pg, err := pgx.Connect(ctx, in.pg.Plain)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	var table string
	if err := pg.QueryRow(ctx, `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'realinfra_test' AND c.relkind = 'r' AND relname LIKE 'things%'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Exec(ctx, `SET enable_seqscan = off`); err != nil { // a one-row table: the planner would scan it anyway
		t.Fatal(err)
	}
	var plan strings.Builder
	rows, err := pg.Query(ctx, `EXPLAIN SELECT _jsonb FROM realinfra_test.`+pgx.Identifier{table}.Sanitize()+` WHERE _jsonb->$1 @> $2`,
		"_id", `"acc:1"`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if rows.Err() != nil || !strings.Contains(plan.String(), "Index Scan") {
		t.Fatalf("an _id lookup is planned as\n%s(%v)", plan.String(), rows.Err())
	}

	var build bson.M
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build); err != nil {
		t.Fatal(err)
	}
	if build["ferretdbVersion"] == nil {
		t.Fatalf("not FerretDB: %v", build)
	}

	// An event written before a restart through the control endpoint is read after it.
	url, err := in.ServeControl()
	if err != nil {
		t.Fatal(err)
	}
	remote := &servers.Servers{MongoURI: in.MongoURI, KafkaBrokers: in.KafkaBrokers, Control: url}
	pub := events.NewPublisher(in.KafkaBrokers)
	if err := pub.Publish(ctx, events.Message{Topic: events.TopicProperty, Key: "acc:1", Value: []byte(`{"v":1}`)}); err != nil {
		t.Fatal(err)
	}
	_ = pub.Close()
	if err := remote.StopKafka(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", in.KafkaBrokers[0], time.Second); err == nil {
		c.Close()
		t.Fatal("the broker still listens after StopKafka")
	}
	start := time.Now()
	if err := remote.StartKafka(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("broker restarted in %v", time.Since(start).Round(10*time.Millisecond))
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: in.KafkaBrokers, Topic: events.TopicProperty,
		GroupID: "realinfra-test", StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := r.ReadMessage(rctx)
	if err != nil || string(m.Value) != `{"v":1}` {
		t.Fatalf("after the restart: %q, %v", m.Value, err)
	}

	// Close stops everything and removes the temporary folder.
	kafkaProc, pgProc, dir := in.kafka.proc, in.pg.proc, in.Dir
	closed = true
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if !kafkaProc.exited() || !pgProc.exited() {
		t.Fatal("a server process outlived Close")
	}
	for _, addr := range append([]string{in.MongoURI[len("mongodb://") : len(in.MongoURI)-1]}, in.KafkaBrokers...) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Fatalf("%s still listens after Close", addr)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind (%v)", dir, err)
	}
}

// TestFormatStorageWithALeadingDash: the broker's storage is formatted whatever the random
// cluster id, including the one in 64 that starts with '-' (a CI run failed on
// "-TRyen0H2qbVMjKzKGa-Pw", taken by the tool for an option).
func TestFormatStorageWithALeadingDash(t *testing.T) {
	if servers.FromEnv() == nil {
		t.Skip("make test-real runs this (it needs Java and the broker's jars)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	k, err := prepareKafka(ctx, dir, "128m", 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, "data", "meta.properties")
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	const id = "-TRyen0H2qbVMjKzKGa-Pw"
	if err := k.formatStorage(ctx, id); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(meta)
	if err != nil || !strings.Contains(string(b), "cluster.id="+id+"\n") {
		t.Fatalf("meta.properties: %q, %v; want cluster.id=%s", b, err, id)
	}
}
