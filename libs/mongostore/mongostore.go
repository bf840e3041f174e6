// Package mongostore holds the MongoDB plumbing every service shares: connecting with
// tracing, declaring collections and indexes at start-up, mapping driver errors, and
// allocating the integer ids clients see.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Connect opens a client for uri whose commands are traced as client spans of tracer and
// timed in meter's db.client.operation.duration (nil: no metrics).
func Connect(ctx context.Context, uri string, tracer trace.Tracer, meter metric.Meter) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(uri).
		SetMonitor(commandMonitor(tracer, meter)).
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

// commandSpans is commandMonitor without metrics.
func commandSpans(tracer trace.Tracer) *event.CommandMonitor { return commandMonitor(tracer, nil) }

// started is what the monitor keeps of a command between its start and its end.
type started struct {
	span       trace.Span // nil outside a trace
	collection string
}

// commandMonitor starts a span per command of a traced request or event, named and described
// by OpenTelemetry's database conventions ("find bookings"; db.system.name, db.namespace,
// db.operation.name, db.collection.name, server.address, server.port), and times every
// command, traced or not, in the histogram db.client.operation.duration (db.system.name,
// db.operation.name, db.collection.name, error.type on failure: labels of bounded values,
// see CollectionLabel), and counts every command, getMore included, in the Tally of its
// context (TallyOf), if any. It never records the command document (it may hold client data), nor
// a failure's message (a duplicate-key error repeats the key): a failure is known by its
// server code name.
//
// The contrib package otelmongo would do this, but its mongo-driver/v2 flavour is excluded
// from opentelemetry-go-contrib's releases (versions.yaml): there is no version to depend on.
func commandMonitor(tracer trace.Tracer, meter metric.Meter) *event.CommandMonitor {
	var inFlight sync.Map // request id → started
	var m *opMetrics
	if meter != nil {
		m = newOpMetrics(meter)
	}
	end := func(ctx context.Context, e event.CommandFinishedEvent, err error) {
		v, ok := inFlight.LoadAndDelete(e.RequestID)
		if !ok {
			return
		}
		st := v.(started)
		kind := ""
		var code int32
		if err != nil {
			kind = "_OTHER"
			var de driver.Error
			if errors.As(err, &de) {
				code = de.Code
				if de.Name != "" {
					kind = de.Name
				}
			}
		}
		if m != nil {
			m.record(ctx, e.Duration.Seconds(), e.CommandName, st.collection, kind)
		}
		if st.span == nil {
			return
		}
		if err != nil {
			if code != 0 {
				st.span.SetAttributes(semconv.DBResponseStatusCode(strconv.Itoa(int(code))))
			}
			st.span.SetAttributes(semconv.ErrorTypeKey.String(kind))
			st.span.SetStatus(codes.Error, kind)
		}
		st.span.End()
	}
	return &event.CommandMonitor{
		Started: func(ctx context.Context, e *event.CommandStartedEvent) {
			// Every command is a round trip of the request whose context issued it.
			TallyOf(ctx).Add(1)
			// Spans only for the commands of a traced request or event.
			traced := tracer != nil && trace.SpanContextFromContext(ctx).IsValid()
			if !traced && m == nil {
				return
			}
			var st started
			if coll, ok := e.Command.Lookup(e.CommandName).StringValueOK(); ok && coll != "" {
				st.collection = coll
			}
			if traced {
				attrs := []attribute.KeyValue{semconv.DBSystemNameMongoDB, semconv.DBNamespace(e.DatabaseName),
					semconv.DBOperationName(e.CommandName)}
				target := e.DatabaseName
				if st.collection != "" {
					attrs = append(attrs, semconv.DBCollectionName(st.collection))
					target = st.collection
				}
				if host, port, ok := serverOf(e.ConnectionID); ok {
					attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port))
				}
				_, st.span = tracer.Start(ctx, e.CommandName+" "+target, trace.WithSpanKind(trace.SpanKindClient),
					trace.WithAttributes(attrs...))
			}
			inFlight.Store(e.RequestID, st)
		},
		Succeeded: func(ctx context.Context, e *event.CommandSucceededEvent) { end(ctx, e.CommandFinishedEvent, nil) },
		Failed:    func(ctx context.Context, e *event.CommandFailedEvent) { end(ctx, e.CommandFinishedEvent, e.Failure) },
	}
}

// serverOf reads host and port from the driver's connection id, "host:port[-17]".
func serverOf(connectionID string) (string, int, bool) {
	addr, _, _ := strings.Cut(connectionID, "[")
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false
	}
	port, err := strconv.Atoi(p)
	return host, port, err == nil && host != ""
}

// IsDuplicate reports whether err is a unique-key violation.
func IsDuplicate(err error) bool { return mongo.IsDuplicateKeyError(err) }

// OwnedBy matches the ids "<account>:…" of an account's documents (and the keys of its
// messages): the filter value that finds everything of the account, e.g. to erase it.
func OwnedBy(account string) bson.Regex {
	return bson.Regex{Pattern: "^" + regexp.QuoteMeta(account+":")}
}

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
