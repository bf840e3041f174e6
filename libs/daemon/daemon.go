// Package daemon is the body of every service's main: load the configuration from the
// environment, run until SIGINT or SIGTERM, exit non-zero on failure.
package daemon

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/telemetry"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Main runs run with the configuration C read from the environment.
func Main[C any](name string, run func(ctx context.Context, cfg C, ready func(addr string)) error) {
	cfg, err := config.Load[C]()
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		// /healthz, /readyz and /metrics listen apart from the API (httpapi.Serve).
		if c, ok := any(cfg).(interface{ InternalListener() string }); ok {
			ctx = httpapi.WithInternal(ctx, c.InternalListener(), nil)
		}
		err = run(ctx, cfg, nil)
		stop()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Base is what every service stands on: its telemetry and its MongoDB database.
type Base struct {
	Tel *telemetry.Telemetry
	DB  *mongo.Database

	client *mongo.Client
}

// Open sets up the telemetry of service and connects to its database (traced); Close
// releases both.
func Open(ctx context.Context, service string, c config.Common, database string) (*Base, error) {
	tel, err := telemetry.Setup(ctx, service, c.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	client, err := mongostore.Connect(ctx, c.MongoURI, tel.Tracer, tel.Meter)
	if err != nil {
		_ = tel.Shutdown(context.Background())
		return nil, fmt.Errorf("connect to MongoDB: %w", err)
	}
	return &Base{Tel: tel, DB: client.Database(database), client: client}, nil
}

// Close disconnects from MongoDB and flushes the telemetry.
func (b *Base) Close() {
	_ = b.client.Disconnect(context.Background())
	_ = b.Tel.Shutdown(context.Background())
}

// Ready is a service's readiness: its store answers. Kafka is not asked: writes wait in the
// outbox and reads come from the service's own views while the broker is away
// (docs/events.md), so a broker outage must not take the pods out of service.
func (b *Base) Ready(ctx context.Context) error { return b.client.Ping(ctx, nil) }
