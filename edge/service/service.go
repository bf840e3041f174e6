// Package service wires edge: it is what cmd/edge runs and what the dev launcher and the
// end-to-end tests start in process.
package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/accountstore"
	"github.com/vros/vros/edge/internal/admin"
	"github.com/vros/vros/edge/internal/backend"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/kept"
	"github.com/vros/vros/edge/internal/panel"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/panelstore"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/edge/internal/usagestore"
	"github.com/vros/vros/edge/openapi"
	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// Config is edge's configuration (VROS_EDGE_… plus the common variables). A zero rate,
// failure rate or cache TTL disables that limit or the cache.
type Config struct {
	config.Common
	Addr string `env:"VROS_EDGE_ADDR" envDefault:":8080"`
	// PublicURL is given out as edge_url with new credentials; without it the admin API
	// issues none, unless Development.
	PublicURL   string        `env:"VROS_EDGE_PUBLIC_URL"`
	AdminToken  config.Secret `env:"VROS_EDGE_ADMIN_TOKEN"`
	PropertyURL string        `env:"VROS_EDGE_PROPERTY_URL" envDefault:"http://127.0.0.1:8081"`
	BookingURL  string        `env:"VROS_EDGE_BOOKING_URL"`
	CatalogURL  string        `env:"VROS_EDGE_CATALOG_URL"`
	// IntegrationURL is integration-svc's (webhooks, iCal feed import); empty: not deployed.
	IntegrationURL string `env:"VROS_EDGE_INTEGRATION_URL"`
	// MessagingURL is messaging-svc's (templates, triggers, the message log; docs/messaging.md);
	// empty: not deployed, its resources answer 503.
	MessagingURL   string  `env:"VROS_EDGE_MESSAGING_URL"`
	RateLimitRPS   float64 `env:"VROS_EDGE_RATE_LIMIT_RPS" envDefault:"200"`
	RateLimitBurst int     `env:"VROS_EDGE_RATE_LIMIT_BURST" envDefault:"400"`
	// AccountConcurrency is each account's limit of requests in flight per replica (0: none).
	AccountConcurrency int           `env:"VROS_EDGE_ACCOUNT_CONCURRENCY" envDefault:"32"`
	CacheTTL           time.Duration `env:"VROS_EDGE_CREDENTIAL_CACHE_TTL" envDefault:"30s"`
	AuthFailureRPS     float64       `env:"VROS_EDGE_AUTH_FAILURE_RPS" envDefault:"0.2"`
	AuthFailureBurst   int           `env:"VROS_EDGE_AUTH_FAILURE_BURST" envDefault:"20"`
	// TrustedProxies (IPs or CIDR ranges) may tell the client's address in X-Forwarded-For.
	TrustedProxies []string `env:"VROS_EDGE_TRUSTED_PROXIES" envSeparator:","`
	// AccountPoll is how often this replica asks the account store for the accounts
	// changed through other replicas (account.Service.Watch); zero: never (CacheTTL alone
	// bounds how long they are trusted).
	AccountPoll time.Duration `env:"VROS_EDGE_ACCOUNT_POLL_INTERVAL" envDefault:"1s"`
	// The public booking API's own limits, per replica (docs/limits.md, "The booking
	// engine"): per account (its owner token), per client address, and checkouts per client
	// address per period. A rate or count of 0 turns that limit off.
	EngineRateRPS          float64       `env:"VROS_EDGE_ENGINE_RATE_RPS" envDefault:"50"`
	EngineRateBurst        int           `env:"VROS_EDGE_ENGINE_RATE_BURST" envDefault:"200"`
	EngineAddressRPS       float64       `env:"VROS_EDGE_ENGINE_ADDRESS_RPS" envDefault:"5"`
	EngineAddressBurst     int           `env:"VROS_EDGE_ENGINE_ADDRESS_BURST" envDefault:"60"`
	EngineAddressCheckouts int           `env:"VROS_EDGE_ENGINE_ADDRESS_CHECKOUTS" envDefault:"6"`
	EngineCheckoutPeriod   time.Duration `env:"VROS_EDGE_ENGINE_CHECKOUT_PERIOD" envDefault:"1h"`
	// BodyMemoryMiB is the budget of request body bytes in flight in this replica, in MiB
	// (0: gateway.DefaultBodyMemory; docs/limits.md, "Memory budget").
	BodyMemoryMiB int `env:"VROS_EDGE_BODY_MEMORY_MIB" envDefault:"64"`
	// KeptAnswersMiB bounds the catalog answers this replica keeps and serves again itself
	// (docs/catalog.md, "Answers kept at edge"), in MiB; 0 keeps none.
	KeptAnswersMiB int `env:"VROS_EDGE_KEPT_ANSWERS_MIB" envDefault:"16"` // DefaultKeptAnswersMiB
	// PanelPasswordCost is bcrypt's work factor for the management panel's passwords.
	PanelPasswordCost int `env:"VROS_EDGE_PANEL_PASSWORD_COST" envDefault:"12"`
	// UsageFlush is how often the usage counts are flushed (zero: usage.FlushInterval);
	// tests shorten it. Never read from the environment.
	UsageFlush time.Duration
	// onIntake, when set, is given the body intake once built (tests watch its budget).
	onIntake func(*gateway.Intake)
	// Development lets PublicURL be empty: edge_url is then http://<listen address>. The
	// dev launcher and the test stacks set it; it is never read from the environment.
	Development bool
}

// DefaultKeptAnswersMiB is VROS_EDGE_KEPT_ANSWERS_MIB's default.
const DefaultKeptAnswersMiB = 16

// Run serves edge until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	tel, err := telemetry.Setup(ctx, "edge", cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	return serve(ctx, cfg, tel, ready)
}

// validate checks cfg and normalizes PublicURL (no trailing slash).
func (cfg *Config) validate() error {
	// edge signs every request it forwards with its own key, and holds no other
	// (docs/internal-auth.md).
	if err := cfg.InternalKeys.Require(config.KeyEdge); err != nil {
		return err
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("VROS_EDGE_PUBLIC_URL must be an absolute http(s) URL such as https://api.example.com, not %q", cfg.PublicURL)
		}
		cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	}
	if _, err := httpapi.ParseProxies(cfg.TrustedProxies); err != nil {
		return fmt.Errorf("VROS_EDGE_TRUSTED_PROXIES: %w", err)
	}
	if _, err := gateway.NewIntake(cfg.bodyMemory(), 0); err != nil {
		return fmt.Errorf("VROS_EDGE_BODY_MEMORY_MIB: %w", err)
	}
	if cfg.KeptAnswersMiB < 0 {
		return fmt.Errorf("VROS_EDGE_KEPT_ANSWERS_MIB must not be negative (0 keeps no answer)")
	}
	if cfg.EngineAddressCheckouts > 0 && cfg.EngineCheckoutPeriod <= 0 {
		return fmt.Errorf("VROS_EDGE_ENGINE_CHECKOUT_PERIOD must be a positive duration (1h) when VROS_EDGE_ENGINE_ADDRESS_CHECKOUTS is set, not %s", cfg.EngineCheckoutPeriod)
	}
	for name, v := range map[string]float64{"VROS_EDGE_ENGINE_RATE_RPS": cfg.EngineRateRPS, "VROS_EDGE_ENGINE_RATE_BURST": float64(cfg.EngineRateBurst),
		"VROS_EDGE_ENGINE_ADDRESS_RPS": cfg.EngineAddressRPS, "VROS_EDGE_ENGINE_ADDRESS_BURST": float64(cfg.EngineAddressBurst),
		"VROS_EDGE_ENGINE_ADDRESS_CHECKOUTS": float64(cfg.EngineAddressCheckouts)} {
		if v < 0 {
			return fmt.Errorf("%s must not be negative (0 turns the limit off)", name)
		}
	}
	return nil
}

// bodyMemory is BodyMemoryMiB in bytes.
func (cfg *Config) bodyMemory() int64 {
	if cfg.BodyMemoryMiB == 0 {
		return gateway.DefaultBodyMemory
	}
	return int64(cfg.BodyMemoryMiB) << 20
}

// serve is Run after telemetry: tests give it their own logger.
func serve(ctx context.Context, cfg Config, tel *telemetry.Telemetry, ready func(addr string)) error {
	log := tel.Logger
	proxies, err := httpapi.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return fmt.Errorf("VROS_EDGE_TRUSTED_PROXIES: %w", err)
	}

	client, err := mongostore.Connect(ctx, cfg.MongoURI, tel.Tracer, tel.Meter)
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	store, err := accountstore.New(ctx, client.Database("vros_edge"))
	if err != nil {
		return err
	}
	usages, err := usagestore.New(ctx, client.Database("vros_edge"))
	if err != nil {
		return err
	}
	signer := tenancy.NewSigner(tenancy.CallerEdge, cfg.InternalKeys.Edge.Reveal())
	services := backend.New(map[string]string{backend.PropertySvc: cfg.PropertyURL, backend.BookingSvc: cfg.BookingURL,
		backend.IntegrationSvc: cfg.IntegrationURL}, signer)
	accounts := account.NewService(store, account.Options{CacheTTL: cfg.CacheTTL, Eraser: services})
	loops, stopLoops := context.WithCancel(ctx)
	defer stopLoops()
	if cfg.AccountPoll > 0 && cfg.CacheTTL > 0 {
		go accounts.Watch(loops, cfg.AccountPoll, func(err error) { log.Warn("account changes not read", "err", err) })
	}
	// Deletions interrupted (here or on another replica) are driven on by every replica.
	go accounts.FinishDeletions(loops, account.DeletionRetry/2, func(err error) { log.Warn("account deletions not finished", "err", err) })
	counter := usage.NewCounter(usages, replicaID())
	go counter.Run(loops, cmp.Or(cfg.UsageFlush, usage.FlushInterval), func(err error) { log.Warn("usage counts not flushed; kept for the next flush", "err", err) })
	defer func() {
		// After the last request: the counts taken since the last flush.
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := counter.Flush(fctx); err != nil {
			log.Error("usage counts lost at shutdown: not flushed", "err", err)
		}
	}()
	failures := throttle.NewFailures(cfg.AuthFailureRPS, cfg.AuthFailureBurst)
	refusals := edgemetrics.New(tel.Meter)
	panelUsers, err := panelstore.New(ctx, client.Database("vros_edge"))
	if err != nil {
		return err
	}
	users := panelauth.New(panelUsers, panelauth.Options{Cost: cfg.PanelPasswordCost})

	var answers *kept.Store
	if cfg.KeptAnswersMiB > 0 && cfg.CatalogURL != "" {
		// The catalog's topics, heard from now on: an answer is kept only while every change
		// of its account is heard (the keys alone are read).
		feed := kept.NewFeed(cfg.KafkaBrokers, []string{events.TopicProperty, events.TopicBooking})
		answers = kept.NewStore(cfg.KeptAnswersMiB<<20, feed)
		feed.Heard = answers.Heard
		go feed.Run(loops, func(err error) { log.Warn("catalog topics not heard: no kept answer is served", "err", err) })
		if tel.Meter != nil {
			served, err := tel.Meter.Int64ObservableCounter("vros.edge.kept_answers",
				metric.WithDescription("Catalog answers edge served again itself (docs/catalog.md, \"Answers kept at edge\")."))
			if err != nil {
				return err
			}
			if _, err := tel.Meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
				o.ObserveInt64(served, answers.Served())
				return nil
			}, served); err != nil {
				return err
			}
		}
	}
	gw, err := gateway.New(gateway.Config{
		Kept: answers,
		ServiceURLs: map[gateway.Upstream]string{
			gateway.PropertySvc: cfg.PropertyURL, gateway.BookingSvc: cfg.BookingURL, gateway.CatalogSvc: cfg.CatalogURL,
			gateway.IntegrationSvc: cfg.IntegrationURL, gateway.MessagingSvc: cfg.MessagingURL,
		},
		RateLimitRPS: cfg.RateLimitRPS, RateLimitBurst: cfg.RateLimitBurst, AccountConcurrency: cfg.AccountConcurrency,
		Failures: failures, Tracer: tel.Tracer, PublicURL: cfg.PublicURL, Usage: counter, Metrics: refusals,
		Engine: gateway.EngineLimits{KeyRPS: cfg.EngineRateRPS, KeyBurst: cfg.EngineRateBurst,
			AddressRPS: cfg.EngineAddressRPS, AddressBurst: cfg.EngineAddressBurst,
			AddressCheckouts: cfg.EngineAddressCheckouts, CheckoutPeriod: cfg.EngineCheckoutPeriod},
	}, accounts, signer, tel.Propagator)
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	if cfg.AdminToken == "" {
		log.Warn("VROS_EDGE_ADMIN_TOKEN is not set: the admin API refuses every call")
	}
	if cfg.PublicURL == "" && !cfg.Development {
		log.Warn("VROS_EDGE_PUBLIC_URL is not set: the admin API refuses to create accounts and rotate credentials")
	}
	intake, err := gateway.NewIntake(cfg.bodyMemory(), 0)
	if err != nil {
		return fmt.Errorf("VROS_EDGE_BODY_MEMORY_MIB: %w", err)
	}
	intake.Metrics = refusals
	if cfg.onIntake != nil {
		cfg.onIntake(intake)
	}
	app := httpapi.New(httpapi.Options{
		Telemetry: tel,
		BodyLimit: gateway.MaxBody,
		// fasthttp reads at most 8 KiB of a body before intake, which reads the rest within
		// the body budget and decodes it (docs/limits.md, "Memory budget").
		StreamRequestBody: true,
		// Ready when edge itself can serve: its account store answers. A service that is down
		// fails its own routes with 503; it does not take every other route down with it.
		Ready:          func(ctx context.Context) error { return client.Ping(ctx, nil) },
		TrustedProxies: proxies,
		EnvelopeFor:    gateway.EnvelopeFor,
	})
	// Before every route (the public ones, the admin API, the panel): no handler reads a
	// body intake has not read.
	app.Use(intake.Handler)
	// The OpenAPI documents and the reference page: public, no credentials (docs/openapi.md).
	if err := openapi.Register(app); err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	gw.Register(app)
	adm := admin.New(accounts, admin.Config{Token: cfg.AdminToken.Reveal(), PublicURL: cfg.PublicURL, Failures: failures,
		Services: services, Usage: usages, Users: users, Metrics: refusals})
	adm.Register(app)
	// The management panel (docs/panel.md): its pages call the services through gw.Call.
	pnl, err := panel.New(panel.Config{Users: users, Accounts: accounts, Gateway: gw, Failures: failures, PublicURL: cfg.PublicURL, Log: log,
		UsageReport: func(ctx context.Context, id string, from, to time.Time) (any, error) {
			return adm.Usage(ctx, id, from, to)
		},
		Statements: func(ctx context.Context, path, requestID string) (gateway.Answer, error) {
			return gw.Public(ctx, gateway.BookingSvc, path, requestID)
		}})
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	pnl.Register(app)

	log.Info("edge starting", "addr", cfg.Addr, "public_url", cfg.PublicURL, "property_url", cfg.PropertyURL,
		"booking_url", cfg.BookingURL, "catalog_url", cfg.CatalogURL, "integration_url", cfg.IntegrationURL, "messaging_url", cfg.MessagingURL, "trusted_proxies", len(proxies))
	return httpapi.Serve(ctx, app, cfg.Addr, func(addr string) {
		// Before the first request is served: Serve calls this before accepting.
		if cfg.PublicURL == "" && cfg.Development {
			adm.SetPublicURL("http://" + reachable(addr))
		}
		// X-Vros-Public-URL without a configured public URL: the address edge listens on.
		gw.SetListenURL("http://" + reachable(addr))
		if ready != nil {
			ready(addr)
		}
	}, cfg.ShutdownDrain, 10*time.Second)
}

// replicaID names this process among edge's replicas in the usage records (each replica
// writes its own).
func replicaID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// reachable turns a listen address into one a client on this machine can use: an
// unspecified host (":8080", "[::]:8080") becomes the loopback address.
func reachable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
