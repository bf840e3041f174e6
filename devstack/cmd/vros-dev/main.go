// Command vros-dev runs the whole of vros on one machine for development: embedded MongoDB
// (FerretDB on SQLite under .data/) and Kafka (kfake, log under .data/), every service, and
// edge on 127.0.0.1:8080. On first start it creates a demo account, writes its credentials
// to .data/demo-account.json and its sample requests to .data/demo-requests.txt, and prints
// them once; later starts only point at those files, so secrets do not pile up in whatever
// captures the output. At every start it also serves a demo website on 127.0.0.1:8090: a
// page embedding the booking engine, whose origin a brand of the demo account allows. With
// VROS_DEV_JAEGER (make observe) it runs that Jaeger beside the stack first, and every
// service sends its spans there. messaging-svc's mail goes to a local catcher (package
// mailbox) that writes each message to .data/mail/NNNN.eml and lists it in .data/mail/mail.log.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/jaeger"
	"github.com/vros/vros/devstack/mailbox"
	"github.com/vros/vros/devstack/stack"
	edge "github.com/vros/vros/edge/service"
	messaging "github.com/vros/vros/messaging-svc/service"
)

type options struct {
	Dir          string `env:"VROS_DEV_DIR" envDefault:".data"`
	Host         string `env:"VROS_DEV_HOST" envDefault:"127.0.0.1"`
	EdgePort     int    `env:"VROS_DEV_EDGE_PORT" envDefault:"8080"`
	PropertyPort int    `env:"VROS_DEV_PROPERTY_PORT" envDefault:"8081"`
	BookingPort  int    `env:"VROS_DEV_BOOKING_PORT" envDefault:"8082"`
	CatalogPort  int    `env:"VROS_DEV_CATALOG_PORT" envDefault:"8083"`
	// IntegrationPort is integration-svc's (webhooks, iCal feed import).
	IntegrationPort int `env:"VROS_DEV_INTEGRATION_PORT" envDefault:"8084"`
	// MessagingPort is messaging-svc's (guest messaging).
	MessagingPort int `env:"VROS_DEV_MESSAGING_PORT" envDefault:"8085"`
	// MailDir is where make run's mail catcher writes what messaging-svc sends (NNNN.eml,
	// mail.log); relative paths are under Dir.
	MailDir string `env:"VROS_DEV_MAIL_DIR" envDefault:"mail"`
	// SitePort is the demo website's (demo.Site): a page of its own origin embedding the
	// booking engine, which the demo account's brand demo.SiteBrand allows.
	SitePort     int      `env:"VROS_DEV_DEMO_SITE_PORT" envDefault:"8090"`
	MongoURI     string   `env:"VROS_MONGO_URI"`
	KafkaBrokers []string `env:"VROS_KAFKA_BROKERS" envSeparator:","`
	LogLevel     string   `env:"VROS_LOG_LEVEL" envDefault:"warn"`
	// Jaeger, when set (make observe), is a jaeger binary (bin/jaeger) that vros-dev starts
	// beside the stack with JaegerConfig, on loopback ports; every service then exports its
	// spans to it, and Ctrl-C stops it after them.
	Jaeger          string `env:"VROS_DEV_JAEGER"`
	JaegerConfig    string `env:"VROS_DEV_JAEGER_CONFIG" envDefault:"tools/jaeger/all-in-one.yaml"`
	JaegerUIPort    int    `env:"VROS_DEV_JAEGER_UI_PORT" envDefault:"16686"`
	JaegerOTLPPort  int    `env:"VROS_DEV_JAEGER_OTLP_PORT" envDefault:"4318"`
	JaegerQueryGRPC int    `env:"VROS_DEV_JAEGER_GRPC_PORT" envDefault:"16685"`
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
	// per-account rate and in-flight limits, the failed-authentication throttle and the
	// booking engine's limits, with their documented defaults.
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

	var jg *jaeger.Jaeger
	if o.Jaeger != "" {
		if jg, err = startJaeger(ctx, o); err != nil {
			return err
		}
		defer func() {
			jg.Stop()
			fmt.Println("vros-dev: Jaeger stopped")
		}()
	}
	// The operator's mail server of messaging-svc: a catcher on loopback writing each message
	// to a file, so that the demo's mail can be read without a provider.
	mailDir := o.MailDir
	if !filepath.IsAbs(mailDir) {
		mailDir = filepath.Join(o.Dir, mailDir)
	}
	mbox, err := mailbox.Start(mailDir)
	if err != nil {
		return fmt.Errorf("mail catcher (VROS_DEV_MAIL_DIR moves it): %w", err)
	}
	defer func() {
		if err := mbox.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "vros-dev: mail catcher:", err)
		}
	}()
	fmt.Println("vros-dev: starting embedded MongoDB and Kafka under", o.Dir, "and the services…")
	s, err := stack.Start(ctx, stack.Options{
		Dir: o.Dir, MongoURI: o.MongoURI, KafkaBrokers: o.KafkaBrokers, Host: o.Host,
		Ports: [6]int{o.EdgePort, o.PropertyPort, o.BookingPort, o.CatalogPort, o.IntegrationPort, o.MessagingPort},
		Keys:  secrets.InternalKeys(), EncryptionKey: secrets.EncryptionKey, AdminToken: secrets.AdminToken,
		LogLevel: o.LogLevel, RateLimitRPS: ec.RateLimitRPS, RateLimitBurst: ec.RateLimitBurst,
		AuthFailureRPS: ec.AuthFailureRPS, AuthFailureBurst: ec.AuthFailureBurst, AccountConcurrency: ec.AccountConcurrency,
		Engine: stack.EngineLimits{RateRPS: ec.EngineRateRPS, RateBurst: ec.EngineRateBurst, AddressRPS: ec.EngineAddressRPS,
			AddressBurst: ec.EngineAddressBurst, AddressCheckouts: ec.EngineAddressCheckouts, CheckoutPeriod: ec.EngineCheckoutPeriod},
		PublicURL: fmt.Sprintf("http://%s", net.JoinHostPort(o.Host, strconv.Itoa(o.EdgePort))),
		Messaging: func(c *messaging.Config) {
			c.SMTPHost, c.SMTPPort, c.SMTPTLS = mbox.Host(), mbox.Port(), "none"
			c.From, c.Poll = "vros demo <noreply@vros.localhost>", time.Second
		},
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	// The demo website listens first, so that the brand allowing its origin names its port.
	siteLn, err := net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.SitePort)))
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("demo website (VROS_DEV_DEMO_SITE_PORT moves it): %w", err)
	}
	siteURL := "http://" + siteLn.Addr().String()
	accPath, reqPath := filepath.Join(o.Dir, "demo-account.json"), filepath.Join(o.Dir, "demo-requests.txt")
	acc, created, err := demo.Ensure(ctx, s.EdgeURL, secrets.AdminToken, siteURL, accPath)
	if err != nil {
		_ = siteLn.Close()
		_ = s.Close()
		return fmt.Errorf("demo account: %w", err)
	}
	site := &http.Server{Handler: demo.Site(acc, siteURL), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = site.Serve(siteLn) }()
	defer site.Close()
	if err := demo.NotifyOwner(ctx, acc); err != nil {
		_ = s.Close()
		return fmt.Errorf("demo account's notification address: %w", err)
	}
	if err := demo.Announce(os.Stdout, acc, created, accPath, reqPath); err != nil {
		_ = s.Close()
		return err
	}
	fmt.Printf("Mail: messaging-svc sends the demo's messages (guests' and the owner's, to %s) through a local catcher,\n"+
		"  SMTP %s:%d; each is written to %s/NNNN.eml (open it in a mail client) and listed in %s\n\n",
		acc.PanelEmail, mbox.Host(), mbox.Port(), mailDir, filepath.Join(mailDir, mailbox.LogName))
	if jg != nil {
		announceJaeger(jg)
	}

	<-ctx.Done()
	fmt.Println("\nvros-dev: shutting down…")
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Println("vros-dev: stopped")
	return nil
}

// startJaeger runs o.Jaeger on o.Host's Jaeger ports, its output in <dir>/jaeger.log, and
// points every service's span exporter at it (telemetry.Setup reads
// OTEL_EXPORTER_OTLP_ENDPOINT when each service starts).
func startJaeger(ctx context.Context, o options) (*jaeger.Jaeger, error) {
	addr := func(port int) string { return net.JoinHostPort(o.Host, strconv.Itoa(port)) }
	jg, err := jaeger.Start(ctx, jaeger.Options{Bin: o.Jaeger, Config: o.JaegerConfig, LogPath: filepath.Join(o.Dir, "jaeger.log"),
		OTLPAddr: addr(o.JaegerOTLPPort), QueryAddr: addr(o.JaegerUIPort), GRPCAddr: addr(o.JaegerQueryGRPC), OwnGroup: true})
	if err != nil {
		return nil, fmt.Errorf("jaeger (make observe; VROS_DEV_JAEGER_*_PORT move its ports): %w", err)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
		_ = os.Unsetenv(k)
	}
	if err := os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", jg.OTLPEndpoint); err != nil {
		jg.Stop()
		return nil, err
	}
	return jg, nil
}

// announceJaeger tells where the traces are.
func announceJaeger(jg *jaeger.Jaeger) {
	fmt.Printf(`
Traces: every service sends its spans to Jaeger (OTEL_EXPORTER_OTLP_ENDPOINT=%[1]s).
  Jaeger UI:  %[2]s/   (Jaeger's placeholder page unless JAEGER_UI_ASSETS names a built UI:
              the Go module carries none; the query API below answers either way)
  a request:  send it with -H 'traceparent: 00-<32 hex digits>-<16 hex digits>-01', then
              %[2]s/trace/<32 hex digits> in the UI, %[2]s/api/traces/<32 hex digits> as JSON
  latest:     %[2]s/api/traces?service=edge&limit=20&lookback=1h
  span trees: go run ./devstack/cmd/vros-trace -jaeger %[2]s [<trace id>]
`, jg.OTLPEndpoint, jg.QueryURL)
}
