package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
)

// snapshot is the part of a property event these tests read.
type snapshot struct {
	AccountID    string `json:"account_id"`
	PropertyID   int64  `json:"property_id"`
	InternalCode string `json:"internal_code"`
	Version      int64  `json:"version"`
	Deleted      bool   `json:"deleted"`
	Content      struct {
		Name string `json:"name"`
	} `json:"content"`
	Rates *struct {
		Rate struct {
			Daily string `json:"daily_price"`
		} `json:"rate"`
	} `json:"rates"`
	Methods *json.RawMessage `json:"methods"`
}

// keyReader reads topic from its first offset on the one partition that key's events go to
// (the services publish by key, murmur2): every event of key, in order, without the other
// partitions' traffic (the tests running beside) or a consumer group to join.
func keyReader(t *testing.T, topic, key string) *kafka.Reader {
	t.Helper()
	return kafka.NewReader(kafka.ReaderConfig{Brokers: st.KafkaBrokers, Topic: topic, Partition: partitionOf(t, topic, key),
		MaxWait: 50 * time.Millisecond})
}

// watch reads vros.property.v1 from the start until match accepts an event of key, or the
// deadline passes, and returns that message.
func watch(t *testing.T, key string, match func(typ string, s snapshot) bool) kafka.Message {
	t.Helper()
	r := keyReader(t, events.TopicProperty, key)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), viewsWithin)
	defer cancel()
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("no matching event for %s: %v", key, err)
		}
		if string(m.Key) != key {
			continue
		}
		var s snapshot
		e, err := events.Decode(m.Value, &s)
		if err != nil {
			t.Fatalf("event %s: %v", m.Value, err)
		}
		if e.SpecVersion() != "1.0" || e.Source() != "/vros/property-svc" {
			t.Fatalf("not a vros CloudEvent: %s", m.Value)
		}
		if match(e.Type(), s) {
			return m
		}
	}
}

func TestPropertyEvents(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "EV1")
	key := acc.AccountID + ":" + pid
	watch(t, key, func(typ string, s snapshot) bool {
		return typ == "vros.property.created" && s.Version == 1 && s.InternalCode == "EV1" && s.Content.Name == "Seaside Villa with Garden"
	})

	acc.a(t, "property-rate", validRates("EV1")).status(t, http.StatusOK)
	watch(t, key, func(typ string, s snapshot) bool {
		// The snapshot is the whole property, not just the rates.
		return typ == "vros.property.rates.updated" && s.Version == 2 && s.Rates != nil && s.Rates.Rate.Daily == "180" &&
			s.Content.Name == "Seaside Villa with Garden"
	})

	acc.a(t, "property-method", obj{"internal_code": "EV1", "stripe": obj{"secret_key": "sk_SECRET_NEVER_PUBLISHED", "public_key": "pk"}}).status(t, http.StatusOK)
	watch(t, key, func(typ string, s snapshot) bool {
		if typ != "vros.property.methods.updated" {
			return false
		}
		if s.Methods == nil || strings.Contains(string(*s.Methods), "SECRET") {
			t.Fatalf("methods event carries a secret or nothing: %v", s.Methods)
		}
		return true
	})

	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "EV1"}}).status(t, http.StatusOK)
	watch(t, key, func(typ string, s snapshot) bool { return typ == "vros.property.deleted" && s.Deleted })
}

// TestEventsSurviveKafkaOutage: a change accepted while the broker is down is delivered
// once it is back.
func TestEventsSurviveKafkaOutage(t *testing.T) {
	stopBroker, startBroker, _ := brokerControl(t)
	acc := newAccount(t)
	pid := createProperty(t, acc, "OUT1")
	if err := stopBroker(); err != nil {
		t.Fatal(err)
	}
	p := validProperty("OUT1")
	p["name"] = "Renamed While Kafka Was Down"
	r := acc.a(t, "property", obj{"action": "update", "property": p})
	if err := startBroker(); err != nil {
		t.Fatal(err)
	}
	r.status(t, http.StatusOK)
	watch(t, acc.AccountID+":"+pid, func(typ string, s snapshot) bool {
		return typ == "vros.property.updated" && s.Content.Name == "Renamed While Kafka Was Down" && s.Version == 2
	})
}

// TestTracePropagation: the trace a client starts reaches the service through edge and
// travels on with the change event, in the Kafka message's traceparent header.
func TestTracePropagation(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "TR1")
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	h := acc.AHeaders()
	h["traceparent"] = "00-" + traceID + "-00f067aa0ba902b7-01"
	p := validProperty("TR1")
	p["name"] = "Renamed Under a Client Trace"
	do(t, http.MethodPost, "/api/property", h, jsonText(obj{"action": "update", "property": p})).status(t, http.StatusOK)
	m := watch(t, acc.AccountID+":"+pid, func(typ string, s snapshot) bool { return s.Content.Name == "Renamed Under a Client Trace" })
	for _, hd := range m.Headers {
		if hd.Key == "traceparent" {
			if !strings.Contains(string(hd.Value), traceID) {
				t.Fatalf("event traceparent %s is not in trace %s", hd.Value, traceID)
			}
			return
		}
	}
	t.Fatalf("event has no traceparent header: %v", m.Headers)
}
