// Package stack starts the whole of vros in one process: the embedded MongoDB-wire server
// and Kafka broker (or real ones), then every service (property-svc, booking-svc,
// catalog-svc, integration-svc, messaging-svc), then edge. `make run` and the
// end-to-end tests both use it, so what the tests exercise is what a developer runs.
package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caarlos0/env/v11"

	booking "github.com/vros/vros/booking-svc/service"
	catalog "github.com/vros/vros/catalog-svc/service"
	"github.com/vros/vros/devstack/embedded"
	edge "github.com/vros/vros/edge/service"
	integration "github.com/vros/vros/integration-svc/service"
	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	messaging "github.com/vros/vros/messaging-svc/service"
	property "github.com/vros/vros/property-svc/service"
)

// Options of a stack.
type Options struct {
	// Dir keeps the embedded data; empty means a temporary folder.
	Dir string
	// MongoURI and KafkaBrokers point at real servers; empty means embedded ones.
	MongoURI     string
	KafkaBrokers []string
	// Host is the address services listen on; Ports are edge, property-svc, booking-svc,
	// catalog-svc, integration-svc, messaging-svc. A zero port means any free one.
	Host  string
	Ports [6]int
	// InternalPorts are the services' internal listeners (/healthz, /readyz, /metrics), in
	// the order of Ports; zero means any free port.
	InternalPorts [6]int
	// Keys sign the requests between the processes (docs/internal-auth.md): each service
	// is given only the ones it uses, as in a deployment. NewKeys draws a set.
	Keys config.InternalKeys
	// Secrets shared by the services.
	EncryptionKey, AdminToken string
	LogLevel                  string
	// PhotoFetchAllowPrivate lets photo links point at loopback (tests serve images there).
	PhotoFetchAllowPrivate bool
	// OutboxLease shortens the outbox's lease in tests.
	OutboxLease time.Duration
	// AutopayInterval is how often booking-svc charges due installments (0: its default).
	AutopayInterval time.Duration
	// UsageFlush is how often edge flushes its usage counts (0: its default, 5 s); tests
	// shorten it so that a report converges without waiting.
	UsageFlush time.Duration
	// PasswordCost is bcrypt's work factor for guest passwords and the panel's (tests use the minimum, 4).
	PasswordCost int
	// RateLimitRPS and RateLimitBurst set edge's per-account limit (0: none).
	RateLimitRPS   float64
	RateLimitBurst int
	// AccountConcurrency is edge's limit of requests in flight per account (0: none).
	AccountConcurrency int
	// AuthFailureRPS and AuthFailureBurst throttle failed authentications per client
	// address (0: none; the tests send many wrong credentials from one address).
	AuthFailureRPS   float64
	AuthFailureBurst int
	// Engine is edge's limits of the public booking API (docs/limits.md, "The booking
	// engine"); its zero value turns them all off, as the test stacks run. make run passes
	// their documented defaults.
	Engine EngineLimits
	// Log is the stack's own log (and the embedded servers').
	Log *slog.Logger
	// ServiceLog receives the services' JSON log lines (telemetry.WithLogOutput); nil:
	// standard error. It must be safe for concurrent use: the services write at once.
	ServiceLog io.Writer
	// Booking adjusts booking-svc's configuration before it starts (tests: shorter leases
	// and deadline, a crash hook).
	Booking func(*booking.Config)
	// Integration adjusts integration-svc's configuration before it starts (its defaults are
	// the environment variables' documented ones; the stack sets BookingURL, the consumer
	// group and AllowHTTP, as the receivers of tests and of `make run` listen on http://).
	Integration func(*integration.Config)
	// NoIntegration leaves integration-svc out of the stack; edge then routes its resources to
	// IntegrationURL when set (a test that runs the binary itself), else answers them 503.
	NoIntegration  bool
	IntegrationURL string
	// Messaging adjusts messaging-svc's configuration before it starts (its defaults are the
	// environment variables' documented ones; the stack sets BookingURL, the consumer group
	// and SMTPAllowPrivate, as make run's and the tests' mail servers listen on loopback;
	// tests set the operator's SMTP server, their catcher, and the Clock).
	Messaging func(*messaging.Config)
	// NoMessaging leaves messaging-svc out of the stack; edge then routes its resources to
	// MessagingURL when set (a test that runs the binary itself, and kills it), else answers
	// them 503.
	NoMessaging  bool
	MessagingURL string
	// NoBooking leaves booking-svc out of the stack; edge and integration-svc then reach it at
	// BookingURL (a test that runs the binary itself and kills it, systest/checkoutkill).
	// Booking is not applied, and StopBooking and StartBooking do nothing and refuse.
	NoBooking  bool
	BookingURL string

	// PublicURL is edge's VROS_EDGE_PUBLIC_URL (edge_url of new credentials); empty means
	// http://<edge's listen address>.
	PublicURL string
}

// EngineLimits are edge's VROS_EDGE_ENGINE_* settings (edge.Config's Engine fields): a rate
// or count of 0 turns that limit off.
type EngineLimits struct {
	RateRPS          float64
	RateBurst        int
	AddressRPS       float64
	AddressBurst     int
	AddressCheckouts int
	CheckoutPeriod   time.Duration
}

// Stack is a running vros.
type Stack struct {
	// BookingURL is booking-svc's (Options.BookingURL with Options.NoBooking).
	EdgeURL, PropertyURL, BookingURL, CatalogURL string
	// IntegrationURL is integration-svc's ("" with Options.NoIntegration).
	IntegrationURL string
	// MessagingURL is messaging-svc's ("" with Options.NoMessaging).
	MessagingURL string
	// The services' internal listeners (/healthz, /readyz, /metrics), http://host:port
	// (BookingInternalURL is "" with Options.NoBooking).
	EdgeInternalURL, PropertyInternalURL, BookingInternalURL, CatalogInternalURL string
	IntegrationInternalURL, MessagingInternalURL                                 string
	Infra                                                                        *embedded.Infra // nil with real servers
	MongoURI                                                                     string
	KafkaBrokers                                                                 []string

	cancel context.CancelFunc
	wg     sync.WaitGroup
	host   string
	log    *slog.Logger
	// What StartCatalog needs.
	common      config.Common
	runCtx      context.Context
	stopCatalog func()
	// What StartBooking needs.
	bookingCfg  booking.Config
	stopBooking func()
	// What StartIntegration needs.
	integrationCfg  integration.Config
	stopIntegration func()
	// What StartMessaging needs.
	messagingCfg  messaging.Config
	stopMessaging func()
	mu            sync.Mutex
	errs          []error
}

// Start brings the stack up and returns once edge answers.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	s := &Stack{MongoURI: o.MongoURI, KafkaBrokers: o.KafkaBrokers, host: o.Host, log: o.Log}
	if s.MongoURI == "" || len(s.KafkaBrokers) == 0 {
		in, err := embedded.Start(ctx, embedded.Options{Dir: o.Dir, Log: o.Log})
		if err != nil {
			return nil, err
		}
		s.Infra = in
		if s.MongoURI == "" {
			s.MongoURI = in.MongoURI
		}
		if len(s.KafkaBrokers) == 0 {
			s.KafkaBrokers = in.KafkaBrokers
		}
	}
	common := config.Common{MongoURI: s.MongoURI, KafkaBrokers: s.KafkaBrokers, LogLevel: o.LogLevel}
	// keys is common with only the internal keys service uses (docs/internal-auth.md).
	keys := func(service string) config.Common {
		c := common
		c.InternalKeys = ServiceKeys(o.Keys, service)
		return c
	}

	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if o.ServiceLog != nil {
		runCtx = telemetry.WithLogOutput(runCtx, o.ServiceLog)
	}

	propAddr, err := s.start(ctx, runCtx, "property-svc", net.JoinHostPort(o.Host, strconv.Itoa(o.Ports[1])),
		s.internal(o.InternalPorts[1]), &s.PropertyInternalURL,
		func(ctx context.Context, addr string, ready func(string)) error {
			return property.Run(ctx, property.Config{Common: keys("property-svc"), Addr: addr, EncryptionKey: config.Secret(o.EncryptionKey),
				PhotoFetchAllowPrivate: o.PhotoFetchAllowPrivate, OutboxLease: o.OutboxLease}, ready)
		})
	if err != nil {
		s.Close()
		return nil, err
	}
	s.PropertyURL = "http://" + propAddr

	if o.PasswordCost == 0 {
		o.PasswordCost = 12
	}
	s.runCtx = runCtx
	if o.NoBooking {
		s.BookingURL = o.BookingURL
	} else {
		s.bookingCfg = booking.Config{Common: keys("booking-svc"), EncryptionKey: config.Secret(o.EncryptionKey),
			PasswordCost: o.PasswordCost, OutboxLease: o.OutboxLease, RequestDeadline: 25 * time.Second, JanitorLease: 2 * time.Minute,
			IdempotencyLease: time.Minute, FailedRetention: 7 * 24 * time.Hour, ConsumerGroup: "booking-svc", AutopayInterval: o.AutopayInterval,
			PropertyURL: s.PropertyURL}
		if o.Booking != nil {
			o.Booking(&s.bookingCfg)
		}
		bookAddr, err := s.startBooking(ctx, net.JoinHostPort(o.Host, strconv.Itoa(o.Ports[2])), s.internal(o.InternalPorts[2]))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.BookingURL = "http://" + bookAddr
	}

	s.common, s.runCtx = keys("catalog-svc"), runCtx
	catAddr, err := s.startCatalog(ctx, net.JoinHostPort(o.Host, strconv.Itoa(o.Ports[3])), s.internal(o.InternalPorts[3]), "catalog-svc")
	if err != nil {
		s.Close()
		return nil, err
	}
	s.CatalogURL = "http://" + catAddr

	integrationURL := o.IntegrationURL
	if !o.NoIntegration {
		// The documented defaults of every setting, without reading the environment.
		if err := env.ParseWithOptions(&s.integrationCfg, env.Options{Environment: map[string]string{}}); err != nil {
			s.Close()
			return nil, fmt.Errorf("integration-svc defaults: %w", err)
		}
		s.integrationCfg.Common = keys("integration-svc")
		s.integrationCfg.EncryptionKey = config.Secret(o.EncryptionKey)
		s.integrationCfg.BookingURL = s.BookingURL
		s.integrationCfg.ConsumerGroup = "integration-svc"
		s.integrationCfg.AllowHTTP = true
		if o.Integration != nil {
			o.Integration(&s.integrationCfg)
		}
		intAddr, err := s.startIntegration(ctx, net.JoinHostPort(o.Host, strconv.Itoa(o.Ports[4])), s.internal(o.InternalPorts[4]))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.IntegrationURL = "http://" + intAddr
		integrationURL = s.IntegrationURL
	}

	messagingURL := o.MessagingURL
	if !o.NoMessaging {
		if err := env.ParseWithOptions(&s.messagingCfg, env.Options{Environment: map[string]string{}}); err != nil {
			s.Close()
			return nil, fmt.Errorf("messaging-svc defaults: %w", err)
		}
		s.messagingCfg.Common = keys("messaging-svc")
		s.messagingCfg.EncryptionKey = config.Secret(o.EncryptionKey)
		s.messagingCfg.BookingURL = s.BookingURL
		s.messagingCfg.ConsumerGroup = "messaging-svc"
		// make run's and the tests' mail servers listen on loopback.
		s.messagingCfg.SMTPAllowPrivate = true
		if o.Messaging != nil {
			o.Messaging(&s.messagingCfg)
		}
		msgAddr, err := s.startMessaging(ctx, net.JoinHostPort(o.Host, strconv.Itoa(o.Ports[5])), s.internal(o.InternalPorts[5]))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.MessagingURL = "http://" + msgAddr
		messagingURL = s.MessagingURL
	}

	edgeAddr, err := s.start(ctx, runCtx, "edge", net.JoinHostPort(o.Host, strconv.Itoa(o.Ports[0])),
		s.internal(o.InternalPorts[0]), &s.EdgeInternalURL,
		func(ctx context.Context, addr string, ready func(string)) error {
			return edge.Run(ctx, edge.Config{Common: keys("edge"), Addr: addr, AdminToken: config.Secret(o.AdminToken),
				PropertyURL: s.PropertyURL, BookingURL: s.BookingURL, CatalogURL: s.CatalogURL, IntegrationURL: integrationURL, MessagingURL: messagingURL, RateLimitRPS: o.RateLimitRPS, RateLimitBurst: o.RateLimitBurst,
				AccountConcurrency: o.AccountConcurrency,
				AuthFailureRPS:     o.AuthFailureRPS, AuthFailureBurst: o.AuthFailureBurst,
				CacheTTL: 30 * time.Second, PublicURL: o.PublicURL, Development: true, PanelPasswordCost: o.PasswordCost,
				UsageFlush:    o.UsageFlush,
				EngineRateRPS: o.Engine.RateRPS, EngineRateBurst: o.Engine.RateBurst, EngineAddressRPS: o.Engine.AddressRPS,
				EngineAddressBurst: o.Engine.AddressBurst, EngineAddressCheckouts: o.Engine.AddressCheckouts,
				EngineCheckoutPeriod: o.Engine.CheckoutPeriod, KeptAnswersMiB: edge.DefaultKeptAnswersMiB}, ready)
		})
	if err != nil {
		s.Close()
		return nil, err
	}
	s.EdgeURL = "http://" + edgeAddr
	return s, nil
}

// startCatalog runs catalog-svc under its own context, so that StopCatalog can stop it
// alone.
func (s *Stack) startCatalog(ctx context.Context, addr, internal, group string) (string, error) {
	cctx, cancel := context.WithCancel(s.runCtx)
	done := make(chan struct{})
	a, err := s.start(ctx, cctx, "catalog-svc", addr, internal, &s.CatalogInternalURL, func(ctx context.Context, addr string, ready func(string)) error {
		defer close(done)
		return catalog.Run(ctx, catalog.Config{Common: s.common, Addr: addr, ConsumerGroup: group}, ready)
	})
	s.stopCatalog = func() { cancel(); <-done }
	return a, err
}

// startBooking runs booking-svc under its own context, so that StopBooking can stop it alone.
func (s *Stack) startBooking(ctx context.Context, addr, internal string) (string, error) {
	bctx, cancel := context.WithCancel(s.runCtx)
	done := make(chan struct{})
	a, err := s.start(ctx, bctx, "booking-svc", addr, internal, &s.BookingInternalURL, func(ctx context.Context, addr string, ready func(string)) error {
		defer close(done)
		cfg := s.bookingCfg
		cfg.Addr = addr
		return booking.Run(ctx, cfg, ready)
	})
	s.stopBooking = func() { cancel(); <-done }
	return a, err
}

// startIntegration runs integration-svc under its own context, so that StopIntegration can
// stop it alone.
func (s *Stack) startIntegration(ctx context.Context, addr, internal string) (string, error) {
	ictx, cancel := context.WithCancel(s.runCtx)
	done := make(chan struct{})
	a, err := s.start(ctx, ictx, "integration-svc", addr, internal, &s.IntegrationInternalURL, func(ctx context.Context, addr string, ready func(string)) error {
		defer close(done)
		cfg := s.integrationCfg
		cfg.Addr = addr
		return integration.Run(ctx, cfg, ready)
	})
	s.stopIntegration = func() { cancel(); <-done }
	return a, err
}

// startMessaging runs messaging-svc under its own context, so that StopMessaging can stop it
// alone.
func (s *Stack) startMessaging(ctx context.Context, addr, internal string) (string, error) {
	mctx, cancel := context.WithCancel(s.runCtx)
	done := make(chan struct{})
	a, err := s.start(ctx, mctx, "messaging-svc", addr, internal, &s.MessagingInternalURL, func(ctx context.Context, addr string, ready func(string)) error {
		defer close(done)
		cfg := s.messagingCfg
		cfg.Addr = addr
		return messaging.Run(ctx, cfg, ready)
	})
	s.stopMessaging = func() { cancel(); <-done }
	return a, err
}

// StopMessaging stops messaging-svc alone (its HTTP server, consumer and sender). It does
// nothing in a stack without messaging-svc.
func (s *Stack) StopMessaging() {
	if s.stopMessaging != nil {
		s.stopMessaging()
	}
}

// StartMessaging starts messaging-svc again on its address, against the same store: what it
// had not planned or sent when it stopped is taken up again.
func (s *Stack) StartMessaging(ctx context.Context) error {
	if s.MessagingURL == "" {
		return errors.New("this stack runs without messaging-svc (Options.NoMessaging)")
	}
	_, err := s.startMessaging(ctx, strings.TrimPrefix(s.MessagingURL, "http://"), strings.TrimPrefix(s.MessagingInternalURL, "http://"))
	return err
}

// StopIntegration stops integration-svc alone (its HTTP server, consumer, deliverer and
// feed poller). It does nothing in a stack without integration-svc.
func (s *Stack) StopIntegration() {
	if s.stopIntegration != nil {
		s.stopIntegration()
	}
}

// StartIntegration starts integration-svc again on its address, against the same stores:
// what it had not delivered or polled when it stopped is taken up again.
func (s *Stack) StartIntegration(ctx context.Context) error {
	if s.IntegrationURL == "" {
		return errors.New("this stack runs without integration-svc (Options.NoIntegration)")
	}
	_, err := s.startIntegration(ctx, strings.TrimPrefix(s.IntegrationURL, "http://"), strings.TrimPrefix(s.IntegrationInternalURL, "http://"))
	return err
}

// StopBooking stops booking-svc alone (its HTTP server, relay, janitor and consumer). It
// does nothing in a stack without booking-svc.
func (s *Stack) StopBooking() {
	if s.stopBooking != nil {
		s.stopBooking()
	}
}

// StartBooking starts booking-svc again on its address, against the same stores: the
// crash tests restart it after stopping requests mid-way.
func (s *Stack) StartBooking(ctx context.Context) error {
	if s.stopBooking == nil {
		return errors.New("this stack runs without booking-svc (Options.NoBooking)")
	}
	_, err := s.startBooking(ctx, strings.TrimPrefix(s.BookingURL, "http://"), strings.TrimPrefix(s.BookingInternalURL, "http://"))
	return err
}

// StopCatalog stops catalog-svc alone.
func (s *Stack) StopCatalog() { s.stopCatalog() }

// StartCatalog starts catalog-svc again on its address with consumer group group. A new group
// reads the topics from the start: with the catalog database dropped in between, that shows
// a view rebuilt from the topics alone.
func (s *Stack) StartCatalog(ctx context.Context, group string) error {
	_, err := s.startCatalog(ctx, strings.TrimPrefix(s.CatalogURL, "http://"), strings.TrimPrefix(s.CatalogInternalURL, "http://"), group)
	return err
}

type runFunc func(ctx context.Context, addr string, ready func(string)) error

// internal is the address of a service's internal listener on the stack's host.
func (s *Stack) internal(port int) string { return net.JoinHostPort(s.host, strconv.Itoa(port)) }

// start runs one service and waits until it listens (or fails). Its internal listener
// (/healthz, /readyz, /metrics) binds internal, and its URL is stored in internalURL before
// start returns: httpapi.Serve binds it before the public address.
func (s *Stack) start(ctx, runCtx context.Context, name, addr, internal string, internalURL *string, run runFunc) (string, error) {
	ready := make(chan string, 1)
	failed := make(chan error, 1)
	first := *internalURL == "" // a restart binds the same address: the field stays as tests read it
	runCtx = httpapi.WithInternal(runCtx, internal, func(a string) {
		if first {
			*internalURL = "http://" + a
		}
		s.log.Debug("internal listener", "service", name, "addr", a)
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := run(runCtx, addr, func(a string) { ready <- a })
		if err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("%s: %w", name, err))
			s.mu.Unlock()
		}
		failed <- err
	}()
	select {
	case a := <-ready:
		return a, nil
	case err := <-failed:
		if err == nil {
			err = errors.New("stopped before listening")
		}
		return "", fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(60 * time.Second):
		return "", fmt.Errorf("%s did not start within a minute", name)
	}
}

// Close stops the services (draining HTTP and the outbox), then the embedded servers.
func (s *Stack) Close() error {
	s.cancel()
	s.wg.Wait()
	if s.Infra != nil {
		s.Infra.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// NewKeys draws a fresh internal key for each caller (256 random bits each, hex).
func NewKeys() config.InternalKeys {
	key := func() config.Secret {
		var b [32]byte
		rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
		return config.Secret(hex.EncodeToString(b[:]))
	}
	return config.InternalKeys{Edge: key(), Booking: key(), Integration: key(), Messaging: key()}
}

// ServiceKeys is keys with only those service (edge, property-svc, ...) uses: the key it
// signs with and those of the callers it accepts (docs/internal-auth.md).
func ServiceKeys(keys config.InternalKeys, service string) config.InternalKeys {
	switch service {
	case "edge", "catalog-svc":
		return config.InternalKeys{Edge: keys.Edge}
	case "property-svc":
		return config.InternalKeys{Edge: keys.Edge, Booking: keys.Booking}
	case "booking-svc":
		return keys
	case "integration-svc":
		return config.InternalKeys{Edge: keys.Edge, Integration: keys.Integration}
	case "messaging-svc":
		return config.InternalKeys{Edge: keys.Edge, Messaging: keys.Messaging}
	}
	return config.InternalKeys{}
}

// KeyEnv is ServiceKeys as environment entries, for a service started as a process.
func KeyEnv(keys config.InternalKeys, service string) []string {
	k := ServiceKeys(keys, service)
	var env []string
	for _, e := range []struct {
		name string
		v    config.Secret
	}{{config.KeyEdge, k.Edge}, {config.KeyBooking, k.Booking}, {config.KeyIntegration, k.Integration},
		{config.KeyMessaging, k.Messaging}} {
		if e.v != "" {
			env = append(env, e.name+"="+e.v.Reveal())
		}
	}
	return env
}
