// Command ferretdb serves the MongoDB wire protocol on PostgreSQL for the dev store image, with
// FerretDB's embeddable package (the one devstack/realinfra runs in `make test`). FerretDB's own
// command insists on version files its release build generates; this one needs nothing but
// its settings, which use the upstream command's variable names:
//
//	FERRETDB_LISTEN_ADDR      default :27017
//	FERRETDB_POSTGRESQL_URL   default postgres://ferretdb@127.0.0.1:5432/ferretdb
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	fdb, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: env("FERRETDB_LISTEN_ADDR", ":27017")},
		Handler:       "postgresql",
		PostgreSQLURL: env("FERRETDB_POSTGRESQL_URL", "postgres://ferretdb@127.0.0.1:5432/ferretdb"),
		Logger:        log,
	})
	if err != nil {
		log.Error("ferretdb", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log.Info("serving", "uri", fdb.MongoDBURI())
	if err := fdb.Run(ctx); err != nil && ctx.Err() == nil {
		log.Error("ferretdb", "err", err)
		os.Exit(1)
	}
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
