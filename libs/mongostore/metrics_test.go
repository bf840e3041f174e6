package mongostore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"

	"github.com/vros/vros/libs/telemetry/telemetrytest"
)

// TestCommandDurations: every command, traced or not, is timed in
// db_client_operation_duration_seconds with the database conventions' labels; a failure
// adds error_type (its code name); a per-account collection is labelled by its prefix only.
func TestCommandDurations(t *testing.T) {
	metrics := telemetrytest.NewMetrics(t)
	spans := telemetrytest.NewSpans(t)
	mon := commandMonitor(spans.Tracer(), metrics.Meter())
	PerKeyCollections("metrics_test_list.")
	ctx := context.Background() // untraced: a background sweep's commands count too
	run := func(id int64, op, coll string, took time.Duration, failure error) {
		cmd, err := bson.Marshal(bson.D{{Key: op, Value: coll}, {Key: "filter", Value: bson.D{{Key: "email", Value: "guest@example.com"}}}})
		if err != nil {
			t.Fatal(err)
		}
		mon.Started(ctx, &event.CommandStartedEvent{Command: cmd, DatabaseName: "vros_booking", CommandName: op, RequestID: id})
		fin := event.CommandFinishedEvent{RequestID: id, CommandName: op, DatabaseName: "vros_booking", Duration: took}
		if failure != nil {
			mon.Failed(ctx, &event.CommandFailedEvent{CommandFinishedEvent: fin, Failure: failure})
			return
		}
		mon.Succeeded(ctx, &event.CommandSucceededEvent{CommandFinishedEvent: fin})
	}
	run(1, "find", "bookings", 20*time.Millisecond, nil)
	run(2, "find", "bookings", 30*time.Millisecond, nil)
	run(3, "insert", "guests", time.Millisecond, driver.Error{Code: 11000, Name: "DuplicateKey", Message: `dup key: { email: "guest@example.com" }`})
	run(4, "find", "metrics_test_list.acc-123", time.Millisecond, nil)

	const name = "db_client_operation_duration_seconds"
	if n := metrics.Count(t, name, "db_system_name", "mongodb", "db_operation_name", "find", "db_collection_name", "bookings"); n != 2 {
		t.Errorf("find bookings observed %d times, want 2", n)
	}
	for _, s := range metrics.Matching(t, name, "db_operation_name", "find", "db_collection_name", "bookings") {
		if s.Sum < 0.049 || s.Sum > 0.051 {
			t.Errorf("find bookings took %v s in all, want 0.05", s.Sum)
		}
		if _, ok := s.Labels["error_type"]; ok {
			t.Errorf("a successful command has error_type %q", s.Labels["error_type"])
		}
	}
	if n := metrics.Count(t, name, "db_operation_name", "insert", "db_collection_name", "guests", "error_type", "DuplicateKey"); n != 1 {
		t.Errorf("failed insert observed %d times with error_type DuplicateKey, want 1", n)
	}
	if n := metrics.Count(t, name, "db_collection_name", "metrics_test_list.*"); n != 1 {
		t.Errorf("per-account collection observed %d times as metrics_test_list.*, want 1", n)
	}
	want := []string{"db_collection_name", "db_operation_name", "db_system_name", "error_type"}
	if got := metrics.LabelNames(t, name); !slices.Equal(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	for _, s := range metrics.Scrape(t)[name].Series {
		for k, v := range s.Labels {
			if strings.Contains(v, "acc-123") || strings.Contains(v, "guest@") {
				t.Errorf("label %s=%q carries a key or a value of the command", k, v)
			}
		}
	}
	if len(spans.Ended()) != 0 {
		t.Errorf("untraced commands made %d spans", len(spans.Ended()))
	}
}
