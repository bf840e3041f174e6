package mongostore

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestCommandSpans: a command of a traced request becomes a client span named
// "<operation> <collection>" with the database conventions' attributes; a failure is known by
// its code, never by its message; untraced commands make no span.
func TestCommandSpans(t *testing.T) {
	spans := telemetrytest.NewSpans(t)
	mon := commandSpans(spans.Tracer())
	ctx, parent := spans.Tracer().Start(context.Background(), "request")
	defer parent.End()

	cmd, err := bson.Marshal(bson.D{{Key: "find", Value: "bookings"}, {Key: "filter", Value: bson.D{{Key: "email", Value: "guest@example.com"}}}})
	if err != nil {
		t.Fatal(err)
	}
	mon.Started(ctx, &event.CommandStartedEvent{Command: cmd, DatabaseName: "vros_booking", CommandName: "find",
		RequestID: 1, ConnectionID: "mongo-0.mongo.data:27017[-4]"})
	mon.Succeeded(ctx, &event.CommandSucceededEvent{CommandFinishedEvent: event.CommandFinishedEvent{RequestID: 1}})

	s := spans.Named("find bookings")
	if s == nil {
		t.Fatalf("no span 'find bookings'; got %d spans", len(spans.Ended()))
	}
	if s.SpanKind() != trace.SpanKindClient || s.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("span kind %v parent %v, want a client span of the request", s.SpanKind(), s.Parent().SpanID())
	}
	telemetrytest.CheckAttrs(t, s, semconv.DBSystemNameMongoDB, semconv.DBNamespace("vros_booking"),
		semconv.DBOperationName("find"), semconv.DBCollectionName("bookings"),
		semconv.ServerAddress("mongo-0.mongo.data"), semconv.ServerPort(27017))
	for _, kv := range s.Attributes() {
		if strings.Contains(kv.Value.String(), "guest@example.com") {
			t.Errorf("span attribute %s carries the command document", kv.Key)
		}
	}

	// A failure: its code name, not its message (which repeats the key).
	cmd, _ = bson.Marshal(bson.D{{Key: "insert", Value: "guests"}})
	mon.Started(ctx, &event.CommandStartedEvent{Command: cmd, DatabaseName: "vros_booking", CommandName: "insert", RequestID: 2})
	mon.Failed(ctx, &event.CommandFailedEvent{CommandFinishedEvent: event.CommandFinishedEvent{RequestID: 2},
		Failure: driver.Error{Code: 11000, Name: "DuplicateKey", Message: `dup key: { email: "guest@example.com" }`}})
	f := spans.Named("insert guests")
	if f == nil {
		t.Fatal("no span 'insert guests'")
	}
	if f.Status().Code != codes.Error || strings.Contains(f.Status().Description, "guest@") {
		t.Errorf("failed command status %+v, want an error without the message", f.Status())
	}
	telemetrytest.CheckAttrs(t, f, semconv.ErrorTypeKey.String("DuplicateKey"), semconv.DBResponseStatusCode("11000"))

	// A command outside any trace (a background sweep) makes no span.
	n := len(spans.Ended())
	mon.Started(context.Background(), &event.CommandStartedEvent{Command: cmd, DatabaseName: "x", CommandName: "insert", RequestID: 3})
	mon.Succeeded(context.Background(), &event.CommandSucceededEvent{CommandFinishedEvent: event.CommandFinishedEvent{RequestID: 3}})
	if len(spans.Ended()) != n {
		t.Error("an untraced command made a span")
	}
}
