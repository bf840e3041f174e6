// Package service wires edge: it is what cmd/edge runs and what the dev launcher and the
// end-to-end tests start in process.
package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/accountstore"
	"github.com/vros/vros/edge/internal/admin"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// Config is edge's configuration (VROS_EDGE_… plus the common variables).
type Config struct {
	config.Common
	Addr           string        `env:"VROS_EDGE_ADDR" envDefault:":8080"`
	PublicURL      string        `env:"VROS_EDGE_PUBLIC_URL"`
	AdminToken     config.Secret `env:"VROS_EDGE_ADMIN_TOKEN"`
	PropertyURL    string        `env:"VROS_EDGE_PROPERTY_URL" envDefault:"http://127.0.0.1:8081"`
	BookingURL     string        `env:"VROS_EDGE_BOOKING_URL"`
	CatalogURL     string        `env:"VROS_EDGE_CATALOG_URL"`
	RateLimitRPS   float64       `env:"VROS_EDGE_RATE_LIMIT_RPS" envDefault:"200"`
	RateLimitBurst int           `env:"VROS_EDGE_RATE_LIMIT_BURST" envDefault:"400"`
	CacheTTL       time.Duration `env:"VROS_EDGE_CREDENTIAL_CACHE_TTL" envDefault:"30s"`
}

// Run serves edge until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if len(cfg.InternalHMACKey) < 16 {
		return errors.New("VROS_INTERNAL_HMAC_KEY must be at least 16 characters")
	}
	tel, err := telemetry.Setup(ctx, "edge", cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	log := tel.Logger

	client, err := mongostore.Connect(ctx, cfg.MongoURI, tel.Tracer)
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	store, err := accountstore.New(ctx, client.Database("vros_edge"))
	if err != nil {
		return err
	}
	accounts := account.NewService(store)
	accounts.CacheTTL = cfg.CacheTTL

	gw, err := gateway.New(gateway.Config{
		ServiceURLs: map[gateway.Upstream]string{
			gateway.PropertySvc: cfg.PropertyURL, gateway.BookingSvc: cfg.BookingURL, gateway.CatalogSvc: cfg.CatalogURL,
		},
		RateLimitRPS: cfg.RateLimitRPS, RateLimitBurst: cfg.RateLimitBurst,
	}, accounts, tenancy.NewSigner(cfg.InternalHMACKey.Reveal()), tel.Propagator)
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	if cfg.AdminToken == "" {
		log.Warn("VROS_EDGE_ADMIN_TOKEN is not set: the admin API refuses every call")
	}
	app := httpapi.New(httpapi.Options{
		Telemetry: tel,
		BodyLimit: gateway.MaxBody,
		Ready: func(ctx context.Context) error {
			return errors.Join(client.Ping(ctx, nil), gw.Ready(ctx))
		},
	})
	gw.Register(app)
	admin.New(accounts, cfg.AdminToken.Reveal(), cfg.PublicURL).Register(app)

	log.Info("edge starting", "addr", cfg.Addr, "property_url", cfg.PropertyURL, "booking_url", cfg.BookingURL, "catalog_url", cfg.CatalogURL)
	return httpapi.Serve(ctx, app, cfg.Addr, ready, 10*time.Second)
}
