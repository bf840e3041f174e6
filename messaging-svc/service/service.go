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
	if _, err := seal.New(cfg.EncryptionKey.Reveal()); err != nil {
		return fmt.Errorf("VROS_ENCRYPTION_KEY: %w", err)
	}
	base, err := daemon.Open(ctx, "messaging-svc", cfg.Common, Database)
	if err != nil {
		return err
	}
	defer base.Close()
	app := httpapi.New(httpapi.Options{Telemetry: base.Tel, BodyLimit: 1 << 20, Ready: base.Ready})
	g, gctx := errgroup.WithContext(ctx)
	base.Tel.Logger.Info("messaging-svc starting", "addr", cfg.Addr)
	g.Go(func() error { return httpapi.Serve(gctx, app, cfg.Addr, ready, cfg.ShutdownDrain, 10*time.Second) })
	return g.Wait()
}
