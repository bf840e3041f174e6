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
