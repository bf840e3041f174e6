// Package service wires messaging-svc: what cmd/messaging-svc runs and what the dev launcher
// and the end-to-end tests start in process.
//
// messaging-svc sends the guests' and owners' messages of every booking (docs/messaging.md):
// it runs apart because its data (templates, schedules, the message log) is its own and
// because the mail servers it talks to may be slow, down or refusing, which must never slow
// a booking.
package service

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/messaging-svc/internal/api"
	"github.com/vros/vros/messaging-svc/internal/bookingsvc"
	"github.com/vros/vros/messaging-svc/internal/compose"
	"github.com/vros/vros/messaging-svc/internal/intake"
	"github.com/vros/vros/messaging-svc/internal/store"
)

// Run serves messaging-svc until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := cfg.check(); err != nil {
		return err
	}
	// edge calls the interface A resources; messaging-svc signs its booking reads with its
	// own key (docs/internal-auth.md).
	if err := cfg.InternalKeys.Require(config.KeyEdge, config.KeyMessaging); err != nil {
		return err
	}
	box, err := seal.New(cfg.EncryptionKey.Reveal())
	if err != nil {
		return fmt.Errorf("VROS_ENCRYPTION_KEY: %w", err)
	}
	base, err := daemon.Open(ctx, "messaging-svc", cfg.Common, Database)
	if err != nil {
		return err
	}
	defer base.Close()
	app := httpapi.New(httpapi.Options{Telemetry: base.Tel, BodyLimit: 1 << 20, Ready: base.Ready})
	w := &wiring{cfg: cfg, base: base, box: box, now: time.Now,
		bookings: bookingsvc.New(cfg.BookingURL, tenancy.NewSigner(tenancy.CallerMessaging, cfg.InternalKeys.Messaging.Reveal()), bookingTimeout)}
	if cfg.Clock != nil {
		w.now = cfg.Clock
	}
	if err := w.openStores(ctx); err != nil {
		return err
	}
	wireIntake(w)
	if err := wireSender(w); err != nil {
		return err
	}
	// The interface A resources, which edge forwards signed with its key.
	auth, err := tenancy.NewVerifier([]tenancy.Grant{{Caller: tenancy.CallerEdge, Key: cfg.InternalKeys.Edge.Reveal()}})
	if err != nil {
		return err
	}
	api.New(api.Deps{Templates: w.templates, Settings: w.settings, Messages: w.messages, Suppressions: w.suppressions,
		Views: w.views, Bookings: w.snapshots, Previewer: w.composer, Replanner: w.intake, Tester: w.composer, Box: box,
		AllowPrivateSMTP: cfg.SMTPAllowPrivate, Now: w.now}).Mount(app, auth)
	g, gctx := errgroup.WithContext(ctx)
	for _, loop := range w.loops {
		g.Go(func() error { return loop(gctx) })
	}
	base.Tel.Logger.Info("messaging-svc starting", "addr", cfg.Addr)
	g.Go(func() error { return httpapi.Serve(gctx, app, cfg.Addr, ready, cfg.ShutdownDrain, 10*time.Second) })
	return g.Wait()
}

// bookingTimeout bounds one read of a booking from booking-svc.
const bookingTimeout = 10 * time.Second

// wiring is what the parts of messaging-svc are started with.
type wiring struct {
	cfg  Config
	base *daemon.Base
	// box opens the accounts' sealed SMTP passwords.
	box *seal.Box
	// now is the service's clock (Config.Clock, else time.Now): planning and sending.
	now func() time.Time
	// bookings reads bookings from booking-svc, signed as messaging-svc.
	bookings *bookingsvc.Client

	messages     *store.Messages
	suppressions *store.Suppressions
	views        *store.Views
	snapshots    *store.Snapshots
	templates    *store.Templates
	settings     *store.Settings
	composer     *compose.Composer
	intake       *intake.Intake

	// loops run once every part is wired (the consumer, the sender).
	loops []func(ctx context.Context) error
}

// openStores opens every collection of vros_messaging, creating its indexes.
func (w *wiring) openStores(ctx context.Context) (err error) {
	db := w.base.DB
	if w.messages, err = store.NewMessages(ctx, db); err != nil {
		return err
	}
	if w.suppressions, err = store.NewSuppressions(ctx, db); err != nil {
		return err
	}
	if w.views, err = store.NewViews(ctx, db); err != nil {
		return err
	}
	if w.snapshots, err = store.NewSnapshots(ctx, db); err != nil {
		return err
	}
	if w.templates, err = store.NewTemplates(ctx, db); err != nil {
		return err
	}
	w.settings, err = store.NewSettings(ctx, db)
	return err
}
