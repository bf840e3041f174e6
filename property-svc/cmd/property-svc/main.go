// Command property-svc serves property configuration (interface A).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/property-svc/service"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "property-svc:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.Load[service.Config]()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return service.Run(ctx, cfg, nil)
}
