package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/api"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/channex"
	"github.com/vros/vros/integration-svc/internal/channels/opentravel"
	"github.com/vros/vros/integration-svc/internal/channels/store"
	"github.com/vros/vros/integration-svc/internal/ical/poller"
	"github.com/vros/vros/integration-svc/internal/targets"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/periodic"
	"github.com/vros/vros/libs/seal"
)

// ChannelConfig tunes channel distribution (VROS_CHANNEL_…; docs/channels.md, "Configuration").
type ChannelConfig struct {
	ConsumerGroup  string        `env:"VROS_CHANNEL_CONSUMER_GROUP" envDefault:"integration-svc-channels"`
	Workers        int           `env:"VROS_CHANNEL_WORKERS" envDefault:"4"`
	Lease          time.Duration `env:"VROS_CHANNEL_LEASE" envDefault:"2m"`
	RequestTimeout time.Duration `env:"VROS_CHANNEL_REQUEST_TIMEOUT" envDefault:"30s"`
	ErrorRetry     time.Duration `env:"VROS_CHANNEL_ERROR_RETRY" envDefault:"10m"`
	PullPeriod     time.Duration `env:"VROS_CHANNEL_PULL_PERIOD" envDefault:"60s"`
	Poll           time.Duration `env:"VROS_CHANNEL_POLL" envDefault:"1s"`
	// OpenTravelRequestsPerMinute is pmsXchange's throttle per connection: 40 for a new
	// PMS, raised by SiteMinder for a certified one (docs/channels.md).
	OpenTravelRequestsPerMinute int `env:"VROS_CHANNEL_OTA_REQUESTS_PER_MINUTE" envDefault:"40"`
}

func (c ChannelConfig) validate() error {
	switch {
	case c.ConsumerGroup == "":
		return errors.New("VROS_CHANNEL_CONSUMER_GROUP must not be empty")
	case c.Workers < 1 || c.Workers > 64:
		return errors.New("VROS_CHANNEL_WORKERS must be 1..64")
	case c.RequestTimeout <= 0, c.ErrorRetry <= 0, c.PullPeriod <= 0, c.Poll <= 0:
		return errors.New("VROS_CHANNEL_REQUEST_TIMEOUT, VROS_CHANNEL_ERROR_RETRY, VROS_CHANNEL_PULL_PERIOD and VROS_CHANNEL_POLL must be positive")
	case c.OpenTravelRequestsPerMinute < 1 || c.OpenTravelRequestsPerMinute > 100000:
		return errors.New("VROS_CHANNEL_OTA_REQUESTS_PER_MINUTE must be 1..100000")
	case c.Lease <= c.RequestTimeout:
		return fmt.Errorf("VROS_CHANNEL_LEASE (%s) must be longer than VROS_CHANNEL_REQUEST_TIMEOUT (%s)", c.Lease, c.RequestTimeout)
	}
	return nil
}

// channelParts is what the parts of channel distribution share: wireChannels builds it
// (stores, adapters), wireChannelARI and wireChannelInbound start their loops on it.
type channelParts struct {
	cfg         ChannelConfig
	box         *seal.Box
	stores      *store.Stores
	connections channel.Connections
	log         channel.Log
	conflicts   channel.Conflicts
	// adapters by name; each adapter that takes inbound messages is a channel.Receiver too.
	adapters map[string]channel.Adapter
	// markDirty marks a property of a connection for an ARI sync (full: every date); set by
	// wireChannelARI, called by the channel-mapping resource.
	markDirty func(ctx context.Context, account string, connection, property int64, full bool) error
	// pullNow asks for a pull of a connection's revisions; set by wireChannelInbound.
	pullNow func(account string, connection int64)
}

// wireChannels builds channel distribution's stores and adapters and the A resources
// (docs/channels.md); the parts that run on them (wireChannelARI, wireChannelInbound) are
// wired after it, on w.channels. The resources read p.markDirty when they call it.
func wireChannels(w *wiring) error {
	cfg := w.cfg.Channels
	if err := cfg.validate(); err != nil {
		return err
	}
	box, err := seal.New(w.cfg.EncryptionKey.Reveal())
	if err != nil {
		return fmt.Errorf("VROS_ENCRYPTION_KEY: %w", err)
	}
	st, err := store.Open(w.ctx, w.base.DB, box)
	if err != nil {
		return fmt.Errorf("channel stores: %w", err)
	}
	// Each conflict's event goes to vros.integration.v1 through the outbox, in the write
	// that records it (docs/channels.md, "Conflicts"): messaging-svc's owner.channel_conflict.
	tel := w.base.Tel
	pub := events.NewPublisherWith(w.cfg.KafkaBrokers, events.PublisherOptions{Meter: tel.Meter, Tracer: tel.Tracer, Propagator: tel.Propagator})
	ob := outbox.New(w.base.DB, pub, st.Conflicts.Snapshot, outbox.Options{Meter: tel.Meter, Log: tel.Logger, Propagator: tel.Propagator})
	st.Conflicts.Attach(ob)
	w.loops = append(w.loops, func(ctx context.Context) error {
		defer func() { _ = pub.Close() }()
		// Until the service stops; then 5 s to publish what is pending (the rest stays in
		// MongoDB for the next start).
		return ob.Serve(func() error { <-ctx.Done(); return nil }, 5*time.Second)
	})
	p := &channelParts{cfg: cfg, box: box, stores: st, connections: st.Connections, log: st.Log, conflicts: st.Conflicts,
		adapters: map[string]channel.Adapter{}}

	// The adapters: each adds its line here. channelClient is every adapter's HTTP client
	// for an account: egress-guarded, private addresses only where an operator allowed them
	// (the webhook targets' switch).
	strict := targets.Client(targets.Rules{AllowHTTP: w.cfg.AllowHTTP}, cfg.RequestTimeout)
	private := targets.Client(targets.Rules{AllowHTTP: w.cfg.AllowHTTP, AllowPrivate: true}, cfg.RequestTimeout)
	channelClient := func(ctx context.Context, account string) (*http.Client, error) {
		if w.policy == nil {
			return strict, nil
		}
		ok, err := w.policy.AllowsPrivate(ctx, account)
		if err != nil {
			return nil, err
		}
		if ok {
			return private, nil
		}
		return strict, nil
	}
	p.adapters[channel.Channex] = channex.New(channex.Options{Timeout: cfg.RequestTimeout,
		Client: func(ctx context.Context, c channel.Connection) (*http.Client, error) {
			return channelClient(ctx, c.Account)
		}})
	ota := opentravel.New(strict)
	ota.Client = func(ctx context.Context, c channel.Connection) (*http.Client, error) {
		return channelClient(ctx, c.Account)
	}
	ota.Limits.RequestsPerMinute = cfg.OpenTravelRequestsPerMinute
	p.adapters[channel.OpenTravel] = ota

	// The parts that run on p: ARI out here; the inbound part after this, on w.channels
	// (Run). The resources read p.markDirty when they call it, wherever it is set.
	if err := wireChannelARI(w, p); err != nil {
		return err
	}

	w.channels = p
	if w.policy == nil {
		return errors.New("channels: the webhook part did not provide the address policy")
	}
	chAPI := &api.API{Connections: st.Connections, Log: st.Log, Conflicts: st.Conflicts,
		Properties: poller.NewBookingClient(w.cfg.BookingURL, w.signer, w.cfg.ICal.BookingTimeout),
		Policy:     w.policy, AllowHTTP: w.cfg.AllowHTTP, TestTimeout: cfg.RequestTimeout,
		// Read when called: the ARI part sets p.markDirty, possibly after this.
		MarkDirty: func(ctx context.Context, account string, connection, property int64, full bool) error {
			if p.markDirty == nil {
				return api.ErrNotSending
			}
			return p.markDirty(ctx, account, connection, property, full)
		},
		Adapter: func(name string) channel.Adapter { return p.adapters[name] }}
	chAPI.Register(w.app, w.auth)
	w.onErase = append(w.onErase, st.Erase)
	log := w.base.Tel.Logger
	w.loops = append(w.loops, func(ctx context.Context) error {
		// The log's 30 days where the database has no TTL index (FerretDB).
		periodic.Run(ctx, time.Hour, func(ctx context.Context) error { return st.Log.Prune(ctx, time.Now()) },
			func(err error) { log.Warn("channel log cleanup failed", "error", err) })
		return nil
	})
	return nil
}
