// Command vros-dev runs the whole of vros on one machine for development: embedded MongoDB
// (FerretDB on SQLite under .data/) and Kafka (kfake, log under .data/), every service, and
// edge on 127.0.0.1:8080. On first start it creates a demo account, writes its credentials
// to .data/demo-account.json and its sample requests to .data/demo-requests.txt, and prints
// them once; later starts only point at those files, so secrets do not pile up in whatever
// captures the output.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/caarlos0/env/v11"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	edge "github.com/vros/vros/edge/service"
)

type options struct {
	Dir          string `env:"VROS_DEV_DIR" envDefault:".data"`
	Host         string `env:"VROS_DEV_HOST" envDefault:"127.0.0.1"`
	EdgePort     int    `env:"VROS_DEV_EDGE_PORT" envDefault:"8080"`
	PropertyPort int    `env:"VROS_DEV_PROPERTY_PORT" envDefault:"8081"`
	BookingPort  int    `env:"VROS_DEV_BOOKING_PORT" envDefault:"8082"`
	CatalogPort  int    `env:"VROS_DEV_CATALOG_PORT" envDefault:"8083"`
	// IntegrationPort is integration-svc's (webhooks, iCal feed import).
	IntegrationPort int      `env:"VROS_DEV_INTEGRATION_PORT" envDefault:"8084"`
	MongoURI        string   `env:"VROS_MONGO_URI"`
	KafkaBrokers    []string `env:"VROS_KAFKA_BROKERS" envSeparator:","`
	LogLevel        string   `env:"VROS_LOG_LEVEL" envDefault:"warn"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vros-dev:", err)
		os.Exit(1)
	}
}

func run() error {
	o, err := env.ParseAs[options]()
	if err != nil {
		return err
	}
	// edge's own configuration, for the settings a developer should meet as deployed: the
	// per-account rate and in-flight limits and the failed-authentication throttle, with their documented
	// defaults.
	ec, err := env.ParseAs[edge.Config]()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return err
	}
	secrets, err := demo.LoadSecrets(filepath.Join(o.Dir, "dev-secrets.json"))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Println("vros-dev: starting embedded MongoDB and Kafka under", o.Dir, "and the services…")
	s, err := stack.Start(ctx, stack.Options{
		Dir: o.Dir, MongoURI: o.MongoURI, KafkaBrokers: o.KafkaBrokers, Host: o.Host,
		Ports:   [5]int{o.EdgePort, o.PropertyPort, o.BookingPort, o.CatalogPort, o.IntegrationPort},
		HMACKey: secrets.HMACKey, EncryptionKey: secrets.EncryptionKey, AdminToken: secrets.AdminToken,
		LogLevel: o.LogLevel, RateLimitRPS: ec.RateLimitRPS, RateLimitBurst: ec.RateLimitBurst,
		AuthFailureRPS: ec.AuthFailureRPS, AuthFailureBurst: ec.AuthFailureBurst, AccountConcurrency: ec.AccountConcurrency,
		PublicURL: fmt.Sprintf("http://%s", net.JoinHostPort(o.Host, strconv.Itoa(o.EdgePort))),
		Log:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	accPath, reqPath := filepath.Join(o.Dir, "demo-account.json"), filepath.Join(o.Dir, "demo-requests.txt")
	acc, created, err := demo.Ensure(ctx, s.EdgeURL, secrets.AdminToken, accPath)
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("demo account: %w", err)
	}
	if err := demo.Announce(os.Stdout, acc, created, accPath, reqPath); err != nil {
		_ = s.Close()
		return err
	}

	<-ctx.Done()
	fmt.Println("\nvros-dev: shutting down…")
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Println("vros-dev: stopped")
	return nil
}
