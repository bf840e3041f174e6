// Package mongostore holds the MongoDB plumbing every service shares: connecting with
// tracing, declaring collections and indexes at start-up, mapping driver errors, and
// allocating the integer ids clients see.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Connect opens a client for uri whose commands are traced as client spans of tracer.
func Connect(ctx context.Context, uri string, tracer trace.Tracer) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(uri).
		SetMonitor(commandSpans(tracer)).
		SetServerSelectionTimeout(10 * time.Second).
		SetTimeout(30 * time.Second)
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("mongo connect: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := client.Ping(pctx, nil); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, fmt.Errorf("mongo ping: %w", err)
	}
	return client, nil
}

// commandSpans starts a span per command. The span carries the command name and the
// collection, never the command document (it may hold client data).
func commandSpans(tracer trace.Tracer) *event.CommandMonitor {
	var spans sync.Map // request id → trace.Span
	end := func(id int64, err error) {
		if s, ok := spans.LoadAndDelete(id); ok {
			span := s.(trace.Span)
			if err != nil {
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}
	}
	return &event.CommandMonitor{
		Started: func(ctx context.Context, e *event.CommandStartedEvent) {
			if !trace.SpanContextFromContext(ctx).IsValid() {
				return // only commands of a traced request or event
			}
			coll, _ := e.Command.Lookup(e.CommandName).StringValueOK()
			_, span := tracer.Start(ctx, "mongo "+e.CommandName, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("db.system", "mongodb"), attribute.String("db.name", e.DatabaseName),
					attribute.String("db.operation", e.CommandName), attribute.String("db.collection", coll)))
			spans.Store(e.RequestID, span)
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) { end(e.RequestID, nil) },
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			end(e.RequestID, errors.New(e.Failure.Error()))
		},
	}
}

// IsDuplicate reports whether err is a unique-key violation.
func IsDuplicate(err error) bool { return mongo.IsDuplicateKeyError(err) }

// Index is one index to declare on a collection.
type Index struct {
	Collection string
	Keys       bson.D
	Unique     bool
}

// Ensure creates the collections and indexes a service needs, idempotently. Creating the
// collections up front (rather than on first insert) also lets the embedded server index
// their `_id` before the first request.
func Ensure(ctx context.Context, db *mongo.Database, collections []string, indexes []Index) error {
	existing, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("list collections: %w", err)
	}
	have := make(map[string]bool, len(existing))
	for _, n := range existing {
		have[n] = true
	}
	for _, name := range collections {
		if have[name] {
			continue
		}
		if err := db.CreateCollection(ctx, name); err != nil && !isNamespaceExists(err) {
			return fmt.Errorf("create collection %s: %w", name, err)
		}
	}
	for _, ix := range indexes {
		m := mongo.IndexModel{Keys: ix.Keys, Options: options.Index().SetUnique(ix.Unique)}
		if _, err := db.Collection(ix.Collection).Indexes().CreateOne(ctx, m); err != nil {
			return fmt.Errorf("create index on %s: %w", ix.Collection, err)
		}
	}
	return nil
}

func isNamespaceExists(err error) bool {
	var ce mongo.CommandError
	return errors.As(err, &ce) && (ce.Code == 48 || ce.Name == "NamespaceExists")
}
