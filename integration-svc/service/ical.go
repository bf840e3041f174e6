package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vros/vros/integration-svc/internal/ical/api"
	"github.com/vros/vros/integration-svc/internal/ical/poller"
	"github.com/vros/vros/integration-svc/internal/ical/store"
)

// ICalConfig tunes the import of iCal feeds (VROS_ICAL_…; docs/ical.md, "Configuration").
type ICalConfig struct {
	// PollPeriod is how often each replica looks for due feeds.
	PollPeriod time.Duration `env:"VROS_ICAL_POLL_PERIOD" envDefault:"2s"`
	// Lease is how long a poll holds its feed; a feed whose poller died is polled again
	// once it ends. It must outlast RequestTimeout plus BookingTimeout.
	Lease time.Duration `env:"VROS_ICAL_LEASE" envDefault:"2m"`
	// RequestTimeout bounds one request to a feed's link.
	RequestTimeout time.Duration `env:"VROS_ICAL_REQUEST_TIMEOUT" envDefault:"20s"`
	// BookingTimeout bounds one call to booking-svc (a feed's sync).
	BookingTimeout time.Duration `env:"VROS_ICAL_BOOKING_TIMEOUT" envDefault:"60s"`
	// MaxBody is the largest feed accepted, in bytes.
	MaxBody int64 `env:"VROS_ICAL_MAX_BODY" envDefault:"5242880"`
	// Workers is how many feeds one replica polls at the same time.
	Workers int `env:"VROS_ICAL_WORKERS" envDefault:"4"`
}

func (c ICalConfig) validate() error {
	switch {
	case c.PollPeriod <= 0, c.RequestTimeout <= 0, c.BookingTimeout <= 0:
		return errors.New("VROS_ICAL_POLL_PERIOD, VROS_ICAL_REQUEST_TIMEOUT and VROS_ICAL_BOOKING_TIMEOUT must be positive")
	case c.Lease <= c.RequestTimeout+c.BookingTimeout:
		return fmt.Errorf("VROS_ICAL_LEASE (%s) must be longer than VROS_ICAL_REQUEST_TIMEOUT plus VROS_ICAL_BOOKING_TIMEOUT (%s)", c.Lease, c.RequestTimeout+c.BookingTimeout)
	case c.Workers < 1 || c.Workers > 64:
		return errors.New("VROS_ICAL_WORKERS must be 1..64")
	case c.MaxBody < 1024:
		return errors.New("VROS_ICAL_MAX_BODY must be at least 1024 bytes")
	}
	return nil
}

// wireICal starts the ical-feed resource and the feed poller.
func wireICal(w *wiring) error {
	if w.hooks == nil || w.policy == nil {
		return errors.New("iCal import: the webhook part did not provide its event emitter and address policy")
	}
	cfg := w.cfg.ICal
	if err := cfg.validate(); err != nil {
		return err
	}
	feeds, err := store.Open(w.ctx, w.base.DB)
	if err != nil {
		return fmt.Errorf("iCal feed store: %w", err)
	}
	booking := poller.NewBookingClient(w.cfg.BookingURL, w.signer, cfg.BookingTimeout)
	p := &poller.Poller{Store: feeds, Booking: booking, Hooks: w.hooks, Policy: w.policy, Log: w.base.Tel.Logger, Meter: w.base.Tel.Meter,
		Cfg: poller.Config{Period: cfg.PollPeriod, Lease: cfg.Lease, Timeout: cfg.RequestTimeout, MaxBody: cfg.MaxBody, Workers: cfg.Workers,
			AllowHTTP: w.cfg.AllowHTTP, BookingTimeout: cfg.BookingTimeout}}
	feedAPI := &api.API{Store: feeds, Poller: p, Booking: booking, Policy: w.policy, AllowHTTP: w.cfg.AllowHTTP}
	feedAPI.Register(w.app, w.auth)
	w.loops = append(w.loops, p.Run)
	w.onErase = append(w.onErase, func(ctx context.Context, account string) error { return feeds.Erase(ctx, account) })
	return nil
}
