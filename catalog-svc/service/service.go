// Package service wires catalog-svc: what cmd/catalog-svc runs and what the dev launcher
// and the end-to-end tests start in process.
package service

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vros/vros/catalog-svc/internal/api"
	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/catalog-svc/internal/consumer"
	"github.com/vros/vros/catalog-svc/internal/store"
	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/tenancy"
)

// Config is catalog-svc's configuration (VROS_CATALOG_… plus the common variables).
type Config struct {
	config.Common
	Addr string `env:"VROS_CATALOG_ADDR" envDefault:":8083"`
	// ConsumerGroup is empty by default: each replica then gets its own group,
	// catalog-svc-<hostname>, so that each reads every partition (docs/catalog.md).
	ConsumerGroup string `env:"VROS_CATALOG_CONSUMER_GROUP"`
	// MediaBaseURL prefixes photo links (edge's public URL); empty gives relative links /media/….
	MediaBaseURL string `env:"VROS_CATALOG_MEDIA_BASE_URL"`
}

// Database is catalog-svc's MongoDB database.
const Database = "vros_catalog"

// Run serves catalog-svc until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// edge alone calls catalog-svc (docs/internal-auth.md).
	if err := cfg.InternalKeys.Require(config.KeyEdge); err != nil {
		return err
	}
	auth, err := tenancy.NewVerifier([]tenancy.Grant{{Caller: tenancy.CallerEdge, Key: cfg.InternalKeys.Edge.Reveal()}})
	if err != nil {
		return err
	}
	group, err := events.ReplicaGroup(cfg.ConsumerGroup, "catalog-svc")
	if err != nil {
		return err
	}
	base, err := daemon.Open(ctx, "catalog-svc", cfg.Common, Database)
	if err != nil {
		return err
	}
	defer base.Close()
	tel, db, log := base.Tel, base.DB, base.Tel.Logger
	if err := mongostore.Ensure(ctx, db, []string{events.ParkedCollection}, nil); err != nil {
		return err
	}
	st, err := store.New(ctx, db)
	if err != nil {
		return err
	}
	cat, err := catalog.New(ctx, st)
	if err != nil {
		return err
	}
	cat.OnErase(func(acc string) { log.Info("account erased: the catalog forgot it", "account", acc) })

	app := httpapi.New(httpapi.Options{
		Telemetry: tel,
		BodyLimit: 1 << 20,
		Ready:     base.Ready,
	})
	applied := &events.Applied{}
	reads := api.New(cat, cfg.MediaBaseURL)
	reads.Applied = applied
	reads.Register(app, auth)

	log.Info("catalog-svc starting", "addr", cfg.Addr)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return events.Consume(gctx, events.ConsumerOptions{
			Brokers: cfg.KafkaBrokers, GroupID: group, Topics: []string{events.TopicProperty, events.TopicBooking},
			Park: events.ParkIn(db.Collection(events.ParkedCollection)), Log: log, Tracer: tel.Tracer, Meter: tel.Meter,
			// The catalog applies version-checked snapshots: applying a second's events again
			// after a crash is harmless, and a catch-up of the whole topics does not wait for
			// the broker after every message (docs/catalog.md).
			Propagator: tel.Propagator, CommitEvery: time.Second,
			// Told to edge with every answer it may keep (docs/catalog.md, "Answers kept at edge").
			Applied: applied,
		}, consumer.New(cat).Apply)
	})
	g.Go(func() error { return httpapi.Serve(gctx, app, cfg.Addr, ready, cfg.ShutdownDrain, 10*time.Second) })
	return g.Wait()
}
