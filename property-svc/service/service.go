// Package service wires property-svc: what cmd/property-svc runs and what the dev launcher
// and the end-to-end tests start in process.
package service

import (
	"context"
	"fmt"
	"time"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/property-svc/internal/api"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/property-svc/internal/store"
)

// Config is property-svc's configuration (VROS_PROPERTY_… plus the common variables).
type Config struct {
	config.Common
	Addr          string        `env:"VROS_PROPERTY_ADDR" envDefault:":8081"`
	EncryptionKey config.Secret `env:"VROS_ENCRYPTION_KEY"`
	// PhotoFetchAllowPrivate lets photo links point at private and loopback addresses. Only
	// for tests and local development: it disables the SSRF guard.
	PhotoFetchAllowPrivate bool `env:"VROS_PROPERTY_PHOTO_FETCH_ALLOW_PRIVATE" envDefault:"false"`
	// PhotoMemoryMiB is the memory (MiB) the photos being decoded and rendered at once may
	// take in this replica, and so the most one photo may take (docs/photos.md, "Memory"); 0
	// (a Config built in code) means photo.DefaultMemory.
	PhotoMemoryMiB int64 `env:"VROS_PROPERTY_PHOTO_MEMORY_MIB" envDefault:"256"`
	// OutboxLease is how long a write owns its pending event before the sweep takes over.
	OutboxLease time.Duration `env:"VROS_PROPERTY_OUTBOX_LEASE" envDefault:"10s"`
	// Clock says what today is, for tests (property.Properties.SetClock: restrictions older
	// than 31 days are pruned); never set from the environment, time.Now when nil.
	Clock func() time.Time
}

// Database is property-svc's MongoDB database.
const Database = "vros_property"

// Run serves property-svc until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// edge calls every route; booking-svc only reads payment methods (docs/internal-auth.md).
	if err := cfg.InternalKeys.Require(config.KeyEdge, config.KeyBooking); err != nil {
		return err
	}
	auth, err := tenancy.NewVerifier([]tenancy.Grant{
		{Caller: tenancy.CallerEdge, Key: cfg.InternalKeys.Edge.Reveal()},
		{Caller: tenancy.CallerBooking, Key: cfg.InternalKeys.Booking.Reveal(), Routes: api.BookingRoutes},
	})
	if err != nil {
		return err
	}
	box, err := seal.New(cfg.EncryptionKey.Reveal())
	if err != nil {
		return fmt.Errorf("VROS_ENCRYPTION_KEY: %w", err)
	}
	base, err := daemon.Open(ctx, "property-svc", cfg.Common, Database)
	if err != nil {
		return err
	}
	defer base.Close()
	tel, db := base.Tel, base.DB
	st, err := store.New(ctx, db, box)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", Database, err)
	}
	// The produce of each event is a span of the write that caused it (docs/tracing.md).
	pub := events.NewPublisherWith(cfg.KafkaBrokers, events.PublisherOptions{Meter: tel.Meter, Tracer: tel.Tracer, Propagator: tel.Propagator})
	defer func() { _ = pub.Close() }()
	ob := outbox.New(db, pub, st.Snapshot, outbox.Options{
		Lease: cfg.OutboxLease, Meter: tel.Meter, Log: tel.Logger, Propagator: tel.Propagator,
	})
	st.Attach(ob)

	app := httpapi.New(httpapi.Options{
		Telemetry: tel,
		BodyLimit: 26 << 20,
		Ready:     base.Ready,
	})
	if cfg.PhotoMemoryMiB != 0 && cfg.PhotoMemoryMiB < 32 { // 0: photo.DefaultMemory
		return fmt.Errorf("VROS_PROPERTY_PHOTO_MEMORY_MIB must be at least 32, not %d", cfg.PhotoMemoryMiB)
	}
	props := property.NewProperties(st, photo.NewFetcher(photo.Config{
		AllowPrivate: cfg.PhotoFetchAllowPrivate, Limits: photo.Limits{Memory: cfg.PhotoMemoryMiB << 20},
	}))
	if cfg.Clock != nil {
		props.SetClock(cfg.Clock)
	}
	api.New(props, tel.Logger).Register(app, auth)

	tel.Logger.Info("property-svc starting", "addr", cfg.Addr)
	return ob.Serve(func() error { return httpapi.Serve(ctx, app, cfg.Addr, ready, cfg.ShutdownDrain, 10*time.Second) }, 5*time.Second)
}
