package service

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/testkit/smtpcatcher"
	"github.com/vros/vros/testkit/testinfra"
)

// messaging-svc as a whole on the embedded stack (FerretDB, kfake), one per test package.

const edgeKey, messagingKey = "messaging-test-edge-key-0123", "messaging-test-messaging-key-0123"

var (
	infra *testinfra.Infra
	// base and internal are the running service's API and internal listener.
	base, internal string
	// catcher is the operator's mail server; bookingSvc answers booking 42 of every account
	// to messaging-svc's key (testdata: booking-svc's booking object).
	catcher    *smtpcatcher.Catcher
	bookingSvc *httptest.Server
	db         *mongo.Database
)

// defaults is the documented defaults, read from an empty environment.
func defaults() Config {
	var cfg Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: map[string]string{}}); err != nil {
		panic(err)
	}
	return cfg
}

// testConfig is the documented defaults with the test's servers and keys.
func testConfig() Config {
	cfg := defaults()
	cfg.Common = config.Common{MongoURI: infra.MongoURI, KafkaBrokers: infra.KafkaBrokers, LogLevel: "error",
		InternalKeys: config.InternalKeys{Edge: edgeKey, Messaging: messagingKey}}
	cfg.Addr, cfg.EncryptionKey = "127.0.0.1:0", config.Secret(seal.NewKey())
	if bookingSvc != nil {
		cfg.BookingURL = bookingSvc.URL
	}
	if catcher != nil {
		cfg.SMTPHost, cfg.SMTPPort, cfg.SMTPTLS = catcher.Host(), catcher.Port(), "none"
	}
	cfg.From, cfg.Poll = "Vros Mail <mail@vros.example>", 50*time.Millisecond
	return cfg
}

func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	if infra, err = testinfra.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "embedded stack:", err)
		os.Exit(1)
	}
	if catcher, err = smtpcatcher.New(smtpcatcher.NoAuth()); err != nil {
		fmt.Fprintln(os.Stderr, "smtp catcher:", err)
		os.Exit(1)
	}
	bookingSvc = fakeBookingSvc()
	client, err := mongo.Connect(options.Client().ApplyURI(infra.MongoURI))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mongo:", err)
		os.Exit(1)
	}
	db = client.Database(Database)
	ready, internalReady := make(chan string, 1), make(chan string, 1)
	done := make(chan error, 1)
	rctx := httpapi.WithInternal(ctx, "127.0.0.1:0", func(a string) { internalReady <- a })
	go func() { done <- Run(rctx, testConfig(), func(addr string) { ready <- addr }) }()
	select {
	case addr := <-ready:
		base, internal = "http://"+addr, "http://"+<-internalReady
	case err := <-done:
		fmt.Fprintln(os.Stderr, "messaging-svc:", err)
		os.Exit(1)
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "messaging-svc stopped:", err)
		code = 1
	}
	_ = client.Disconnect(context.Background())
	bookingSvc.Close()
	catcher.Close()
	infra.Close()
	os.Exit(code)
}

// TestHealth: the running service answers its probes on the internal listener, ready once
// its database answers.
func TestHealth(t *testing.T) {
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(internal + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: HTTP %d", path, resp.StatusCode)
		}
	}
}

// TestConfigRefused: a setting messaging-svc cannot run with stops it before it opens
// anything, naming its variable.
func TestConfigRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no messaging key", func(c *Config) { c.InternalKeys.Messaging = "" }, config.KeyMessaging},
		{"no edge key", func(c *Config) { c.InternalKeys.Edge = "" }, config.KeyEdge},
		{"no encryption key", func(c *Config) { c.EncryptionKey = "" }, "VROS_ENCRYPTION_KEY"},
		{"rate", func(c *Config) { c.Rate = 0 }, "VROS_MESSAGING_RATE"},
		{"lease", func(c *Config) { c.Lease = 0 }, "VROS_MESSAGING_LEASE"},
		{"poll", func(c *Config) { c.Poll = 0 }, "VROS_MESSAGING_POLL"},
		{"from", func(c *Config) { c.From = "not an address" }, "VROS_MESSAGING_FROM"},
		{"tls", func(c *Config) { c.SMTPHost, c.SMTPTLS = "smtp.example.com", "ssl" }, "VROS_MESSAGING_SMTP_TLS"},
		{"port", func(c *Config) { c.SMTPHost, c.SMTPPort = "smtp.example.com", 0 }, "VROS_MESSAGING_SMTP_PORT"},
		{"booking url", func(c *Config) { c.BookingURL = "" }, "VROS_MESSAGING_BOOKING_URL"},
	} {
		cfg := testConfig()
		c.edit(&cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := Run(ctx, cfg, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
}

// TestDefaults: the documented defaults, and the Message-ID domain taken from the
// operator's sender when none is set.
func TestDefaults(t *testing.T) {
	cfg := defaults()
	if cfg.Addr != ":8085" || cfg.SMTPHost != "" || cfg.From != "" || cfg.ConsumerGroup != "messaging-svc" || cfg.BookingURL != "http://127.0.0.1:8082" ||
		cfg.SMTPPort != 587 || cfg.SMTPTLS != "starttls" || cfg.Rate != 60 || cfg.Lease != 2*time.Minute || cfg.Poll != 5*time.Second {
		t.Fatalf("defaults %+v", cfg)
	}
	for _, c := range []struct{ from, domain, want string }{
		{"", "", "localhost"},
		{"Villa Mail <mail@villas.example>", "", "villas.example"},
		{"mail@villas.example", "mx.example", "mx.example"},
	} {
		cfg.From, cfg.Domain = c.from, c.domain
		if got := cfg.domain(); got != c.want {
			t.Errorf("From %q Domain %q: %q, want %q", c.from, c.domain, got, c.want)
		}
	}
}
