// Package service wires integration-svc: what cmd/integration-svc runs and what the dev
// launcher and the end-to-end tests start in process.
//
// integration-svc is the only vros service that connects to addresses its clients name
// (webhook targets, iCal feeds): it runs apart so that its egress, its load and its failures
// stay apart from the services that take bookings (docs/webhooks.md, "Where it runs").
package service

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/errgroup"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// Config is integration-svc's configuration (VROS_INTEGRATION_… plus the common variables).
type Config struct {
	config.Common
	Addr string `env:"VROS_INTEGRATION_ADDR" envDefault:":8084"`
	// BookingURL is booking-svc's internal address: the booking a webhook carries is read
	// there, and imported iCal feeds are written to its ledger there.
	BookingURL string `env:"VROS_INTEGRATION_BOOKING_URL" envDefault:"http://127.0.0.1:8082"`
	// ConsumerGroup is shared by the replicas: each event is turned into webhook deliveries
	// by one of them.
	ConsumerGroup string `env:"VROS_INTEGRATION_CONSUMER_GROUP" envDefault:"integration-svc"`
	// AllowHTTP accepts http:// webhook targets and feed links (development); production
	// accepts https:// only.
	AllowHTTP bool `env:"VROS_INTEGRATION_ALLOW_HTTP"`
	// EncryptionKey seals the channel connections' credentials at rest (libs/seal).
	EncryptionKey config.Secret `env:"VROS_ENCRYPTION_KEY"`

	Webhooks WebhookConfig
	ICal     ICalConfig
	Channels ChannelConfig
}

// Database is integration-svc's MongoDB database.
const Database = "vros_integration"

// wiring is what the parts of integration-svc are started with.
type wiring struct {
	ctx  context.Context
	cfg  Config
	base *daemon.Base
	app  *fiber.App
	g    *errgroup.Group
	// signer signs integration-svc's calls to booking-svc with its own key; auth checks
	// the calls it receives, from edge alone (docs/internal-auth.md).
	signer *tenancy.Signer
	auth   *tenancy.Verifier
	// hooks and policy are set by wireWebhooks; wireICal reports feed conflicts through
	// hooks and asks policy whether an account may name private addresses.
	hooks  Emitter
	policy Policy
	// onErase are called, in order, when the account-erased event arrives (wireWebhooks's
	// consumer reads it); each deletes what its part holds of the account.
	onErase []func(ctx context.Context, account string) error
	// channels is channel distribution's shared parts (wireChannels).
	channels *channelParts
	// loops are started once every part is wired, so that none reads the wiring while
	// another part is still adding to it.
	loops []func(ctx context.Context) error
}

// Run serves integration-svc until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := cfg.InternalKeys.Require(config.KeyEdge, config.KeyIntegration); err != nil {
		return err
	}
	auth, err := tenancy.NewVerifier([]tenancy.Grant{{Caller: tenancy.CallerEdge, Key: cfg.InternalKeys.Edge.Reveal()}})
	if err != nil {
		return err
	}
	base, err := daemon.Open(ctx, "integration-svc", cfg.Common, Database)
	if err != nil {
		return err
	}
	defer base.Close()
	app := httpapi.New(httpapi.Options{
		Telemetry: base.Tel,
		BodyLimit: 1 << 20,
		Ready:     base.Ready,
	})
	g, gctx := errgroup.WithContext(ctx)
	w := &wiring{ctx: gctx, cfg: cfg, base: base, app: app, g: g,
		signer: tenancy.NewSigner(tenancy.CallerIntegration, cfg.InternalKeys.Integration.Reveal()), auth: auth}
	if err := wireWebhooks(w); err != nil {
		return err
	}
	if err := wireICal(w); err != nil {
		return err
	}
	if err := wireChannels(w); err != nil {
		return err
	}
	if err := wireChannelInbound(w, w.channels); err != nil {
		return err
	}
	for _, loop := range w.loops {
		g.Go(func() error { return loop(gctx) })
	}
	base.Tel.Logger.Info("integration-svc starting", "addr", cfg.Addr)
	g.Go(func() error { return httpapi.Serve(gctx, app, cfg.Addr, ready, cfg.ShutdownDrain, 10*time.Second) })
	return g.Wait()
}
