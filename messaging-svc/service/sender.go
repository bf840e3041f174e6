package service

import (
	"fmt"
	netmail "net/mail"
	"time"

	"github.com/vros/vros/messaging-svc/internal/compose"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/outbox"
)

// wireSender builds the composer (booking-svc's booking, the views, the account's settings
// and templates, the operator's sender and mail server) and the outbox's sender loop.
func wireSender(w *wiring) error {
	cfg := w.cfg
	o := compose.Options{Bookings: w.bookings, Views: w.views, Templates: w.templates, Settings: w.settings,
		Snapshots: w.snapshots, Box: w.box, Now: w.now}
	if cfg.From != "" {
		a, err := netmail.ParseAddress(cfg.From)
		if err != nil {
			return fmt.Errorf("VROS_MESSAGING_FROM: %w", err)
		}
		o.From = *a
	}
	if cfg.SMTPHost != "" {
		smtp, err := cfg.smtp()
		if err != nil {
			return err
		}
		o.SMTP = &smtp
	}
	c, err := compose.New(o)
	if err != nil {
		return err
	}
	w.composer = c
	sender := outbox.New(outbox.Options{Messages: w.messages, Suppressions: w.suppressions, Composer: c,
		Limiter: mail.NewLimiter(time.Minute/time.Duration(cfg.Rate), cfg.Rate, w.now), Domain: cfg.domain(),
		Lease: cfg.Lease, Poll: cfg.Poll, Now: w.now, Log: w.base.Tel.Logger})
	w.loops = append(w.loops, sender.Run)
	return nil
}
