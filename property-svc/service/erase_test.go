package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/testinfra"
)

// Account erasure through the whole service on the embedded stack: property-svc's HTTP
// routes, its store on FerretDB and its relay publishing to the kfake broker, read back with
// kafka-go as any consumer reads the topic.

const edgeKey, bookingKey = "erase-test-edge-key-0123", "erase-test-booking-key-0123"

var (
	infra *testinfra.Infra
	base  string // the service's address
	db    *mongo.Database
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	if infra, err = testinfra.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "embedded stack:", err)
		os.Exit(1)
	}
	cfg := Config{Common: config.Common{MongoURI: infra.MongoURI, KafkaBrokers: infra.KafkaBrokers, InternalKeys: config.InternalKeys{Edge: edgeKey, Booking: bookingKey},
		LogLevel: "error"}, Addr: "127.0.0.1:0", EncryptionKey: config.Secret(seal.NewKey()), OutboxLease: 500 * time.Millisecond}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, func(addr string) { ready <- addr }) }()
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		fmt.Fprintln(os.Stderr, "property-svc:", err)
		os.Exit(1)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(infra.MongoURI))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mongo:", err)
		os.Exit(1)
	}
	db = client.Database(Database)
	code := m.Run()
	cancel()
	<-done
	_ = client.Disconnect(context.Background())
	infra.Close()
	os.Exit(code)
}

// call sends method path with body on behalf of account, signed as edge signs.
func call(t *testing.T, account, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, edgeKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, method, path, []byte(body), time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func must(t *testing.T, what string, status int, out string) {
	t.Helper()
	if status != 200 {
		t.Fatalf("%s: %d %s", what, status, out)
	}
}

// photoPNG is a base64 PNG photo of 32×24 pixels.
func photoPNG(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for x := range 32 {
		for y := range 24 {
			img.Set(x, y, color.RGBA{uint8(8 * x), uint8(8 * y), 90, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// fill gives account two properties (one deleted), photos, payment secrets and settings,
// through the service's routes, and returns the property ids.
func fill(t *testing.T, account string) []string {
	t.Helper()
	photo := photoPNG(t)
	var ids []string
	for _, code := range []string{"K1", "K2"} {
		status, out := call(t, account, http.MethodPost, "/internal/a/property", `{"action":"create","property":{"internal_code":"`+code+`",
			"name":"Seaside Villa with Garden","type":"Villa","maxguest":6,"bedrooms":3,"bathrooms":2,"kitchens":1,"floor":"Ground",
			"space":{"value":140,"unit":"meters"},"address":"1 Ocean Drive","city":"Miami Beach","postcode":"33139","country":"US",
			"latitude":25.79,"longitude":-80.13}}`)
		must(t, "create "+code, status, out)
		_, rest, _ := strings.Cut(out, `"property_id":"`)
		id, _, _ := strings.Cut(rest, `"`)
		ids = append(ids, id)
		status, out = call(t, account, http.MethodPost, "/internal/a/property-photo", `{"action":"create","photo":{"internal_code":"`+code+`","image":"`+photo+`"}}`)
		must(t, "photo of "+code, status, out)
		status, out = call(t, account, http.MethodPost, "/internal/a/property-method", `{"internal_code":"`+code+`","stripe":{"public_key":"pk_x","secret_key":"sk_x"}}`)
		must(t, "methods of "+code, status, out)
	}
	status, out := call(t, account, http.MethodPost, "/internal/a/property", `{"action":"delete","property":{"internal_code":"K2"}}`)
	must(t, "delete K2", status, out)
	status, out = call(t, account, http.MethodPost, "/internal/a/account-brand", `{"action":"create","brand":{"name":"Sea `+account+`","domains":["sea.example"]}}`)
	must(t, "brand", status, out)
	return ids
}

// topic is the latest message of every key on vros.property.v1, read from the beginning of
// each partition as a consumer starting afresh reads it.
func topic(t *testing.T) map[string]kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]kafka.Message{}
	for p := range 3 {
		conn, err := kafka.DialLeader(ctx, "tcp", infra.KafkaBrokers[0], events.TopicProperty, p)
		if err != nil {
			t.Fatal(err)
		}
		first, last, err := conn.ReadOffsets()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Seek(first, kafka.SeekAbsolute); err != nil {
			t.Fatal(err)
		}
		for off := first; off < last; {
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			b := conn.ReadBatch(1, 10<<20)
			for {
				m, err := b.ReadMessage()
				if err != nil {
					break
				}
				out[string(m.Key)] = m
				off = m.Offset + 1
			}
			if err := b.Close(); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		}
		_ = conn.Close()
	}
	return out
}

// erasedOnTopic reports what is missing on the topic for account's erasure: a tombstone as
// the last message of each of keys, and the erasure event.
func erasedOnTopic(t *testing.T, account string, keys []string) string {
	t.Helper()
	msgs := topic(t)
	for _, k := range keys {
		m, ok := msgs[k]
		if !ok || !events.IsTombstone(m) {
			return "no tombstone for " + k
		}
	}
	m, ok := msgs[events.AccountKey(account)]
	if !ok {
		return "no erasure event"
	}
	var e contract.AccountErasure
	ev, err := events.Decode(m.Value, &e)
	if err != nil || ev.Type() != contract.AccountErased || e.AccountID != account || e.ErasedAt.IsZero() {
		return fmt.Sprintf("erasure event %s: %v", m.Value, err)
	}
	return ""
}

// holding lists the documents of property-svc's database that hold account (its erasure
// marker aside: it holds nothing else).
func holding(t *testing.T, account string) []string {
	t.Helper()
	names, err := db.ListCollectionNames(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if n == "erased_accounts" {
			continue
		}
		cur, err := db.Collection(n).Find(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(context.Background(), &docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if strings.Contains(d.String(), account) {
				out = append(out, n+": "+d.String())
			}
		}
	}
	return out
}

// TestEraseAccountEndToEnd: POST /internal/account/erase leaves no document of the account
// in property-svc's database, and the compacted topic ends with a tombstone for each of its
// keys (a deleted property's too, and its settings) and its erasure event; repeating the call
// answers the same; another account keeps its data and its events. With Kafka down at the
// time, the erasure still answers at once and the relay publishes once Kafka is back.
func TestEraseAccountEndToEnd(t *testing.T) {
	for _, kafkaDown := range []bool{false, true} {
		t.Run(fmt.Sprintf("kafka down %v", kafkaDown), func(t *testing.T) {
			stamp := time.Now().UnixNano()
			acct, other := fmt.Sprintf("gone-%d", stamp), fmt.Sprintf("kept-%d", stamp)
			ids, otherIDs := fill(t, acct), fill(t, other)
			keys := []string{events.Key(acct, ids[0]), events.Key(acct, ids[1]), events.Key(acct, "settings")}
			eventually.Holds(t, "the account's events on the topic", 10*time.Second, func() bool {
				msgs := topic(t)
				_, ok := msgs[keys[2]]
				return ok && len(msgs[keys[0]].Value) > 0
			})
			if n := len(holding(t, acct)); n < 4 {
				t.Fatalf("the search finds %d documents of the account before its erasure", n)
			}
			if kafkaDown {
				if err := infra.StopKafka(); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				status, out := call(t, acct, http.MethodPost, "/internal/account/erase", "")
				if status != 200 || out != `{"erased":true}` {
					t.Fatalf("erase: %d %s", status, out)
				}
			}
			if left := holding(t, acct); !kafkaDown && len(left) > 0 {
				// With Kafka down the outbox still holds the intents; the data is gone.
				eventually.Holds(t, "the outbox drained", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
			}
			for _, left := range holding(t, acct) {
				if !strings.HasPrefix(left, "outbox: ") {
					t.Errorf("left after the erasure: %s", left)
				}
			}
			if kafkaDown {
				if err := infra.StartKafka(); err != nil {
					t.Fatal(err)
				}
			}
			var missing string
			eventually.Holds(t, "the erasure on the topic", 30*time.Second, func() bool {
				missing = erasedOnTopic(t, acct, keys)
				return missing == ""
			})
			if missing != "" {
				t.Error(missing)
			}
			eventually.Holds(t, "the outbox drained", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
			if left := holding(t, acct); len(left) > 0 {
				t.Errorf("left after the erasure:\n%s", strings.Join(left, "\n"))
			}
			msgs := topic(t)
			if m := msgs[events.Key(other, otherIDs[0])]; events.IsTombstone(m) {
				t.Error("the other account's property was tombstoned")
			}
			status, out := call(t, other, http.MethodGet, "/internal/account/usage?from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z", "")
			if status != 200 || !strings.HasPrefix(out, `{"properties":{"current":1,"created":2,"deleted":1},"photos":{"count":1,`) {
				t.Errorf("the other account's usage: %d %s", status, out)
			}
		})
	}
}
