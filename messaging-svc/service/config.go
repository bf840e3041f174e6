package service

import (
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/vros/vros/libs/config"
	vmail "github.com/vros/vros/messaging-svc/internal/mail"
)

// Config is messaging-svc's configuration (VROS_MESSAGING_… plus the common variables).
type Config struct {
	config.Common
	Addr string `env:"VROS_MESSAGING_ADDR" envDefault:":8085"`
	// BookingURL is booking-svc's internal address: a message's guest and booking are read
	// there when the message is composed (GET /internal/hooks/booking/{id}).
	BookingURL string `env:"VROS_MESSAGING_BOOKING_URL" envDefault:"http://127.0.0.1:8082"`
	// ConsumerGroup is shared by the replicas: each event is planned by one of them (and a
	// second planning inserts nothing: the messages' ids are natural).
	ConsumerGroup string `env:"VROS_MESSAGING_CONSUMER_GROUP" envDefault:"messaging-svc"`

	// The operator's mail server: what an account without an SMTP server of its own sends
	// through. SMTPHost "" is none: such an account's messages fail ("no mail server").
	SMTPHost     string        `env:"VROS_MESSAGING_SMTP_HOST"`
	SMTPPort     int           `env:"VROS_MESSAGING_SMTP_PORT" envDefault:"587"`
	SMTPUsername string        `env:"VROS_MESSAGING_SMTP_USERNAME"`
	SMTPPassword config.Secret `env:"VROS_MESSAGING_SMTP_PASSWORD"`
	SMTPTLS      string        `env:"VROS_MESSAGING_SMTP_TLS" envDefault:"starttls"`
	// SMTPAllowPrivate lets an account name an SMTP server at a loopback, private or
	// link-local address (development and tests; make run's catcher is on loopback).
	// Otherwise such a host is refused, so that messaging-settings' test cannot probe the
	// operator's network.
	SMTPAllowPrivate bool `env:"VROS_MESSAGING_SMTP_ALLOW_PRIVATE"`
	// From is the operator's sender, "Name <address>": the From of an account that set no
	// address of its own. "" is none: such an account's messages fail ("no sender address").
	From string `env:"VROS_MESSAGING_FROM"`
	// Domain is the Message-ID's domain (mail.MessageID); "" takes From's domain, else
	// "localhost".
	Domain string `env:"VROS_MESSAGING_DOMAIN"`
	// Rate is how many messages an account sends a minute at most (per replica), with as
	// many at once.
	Rate int `env:"VROS_MESSAGING_RATE" envDefault:"60"`
	// Lease is how long a sender holds a message it is sending before another may take it
	// over (a crashed replica's); Poll how often a sender looks for due messages.
	Lease time.Duration `env:"VROS_MESSAGING_LEASE" envDefault:"2m"`
	Poll  time.Duration `env:"VROS_MESSAGING_POLL" envDefault:"5s"`
	// EncryptionKey opens the accounts' SMTP passwords (libs/seal).
	EncryptionKey config.Secret `env:"VROS_ENCRYPTION_KEY"`

	// Clock replaces time.Now for planning and sending (tests: a clock moved by hand); nil
	// is time.Now. booking-svc's reads are signed on the real clock.
	Clock func() time.Time `env:"-"`
}

// Database is messaging-svc's MongoDB database.
const Database = "vros_messaging"

// check reports a setting messaging-svc cannot run with, naming its variable.
func (c Config) check() error {
	if c.BookingURL == "" {
		return fmt.Errorf("VROS_MESSAGING_BOOKING_URL is required")
	}
	if c.ConsumerGroup == "" {
		return fmt.Errorf("VROS_MESSAGING_CONSUMER_GROUP is required")
	}
	if c.Rate < 1 {
		return fmt.Errorf("VROS_MESSAGING_RATE must be at least 1 (messages an account sends a minute)")
	}
	if c.Lease < time.Second {
		return fmt.Errorf("VROS_MESSAGING_LEASE must be at least 1s")
	}
	if c.Poll <= 0 {
		return fmt.Errorf("VROS_MESSAGING_POLL must be positive")
	}
	if c.From != "" {
		if _, err := mail.ParseAddress(c.From); err != nil {
			return fmt.Errorf("VROS_MESSAGING_FROM %q: %v", c.From, err)
		}
	}
	if c.SMTPHost != "" {
		if _, err := c.smtp(); err != nil {
			return err
		}
	}
	return nil
}

// smtp is the operator's mail server, as the mail package takes it.
func (c Config) smtp() (vmail.SMTPConfig, error) {
	mode, err := vmail.ParseTLSMode(c.SMTPTLS)
	if err != nil {
		return vmail.SMTPConfig{}, fmt.Errorf("VROS_MESSAGING_SMTP_TLS: %w", err)
	}
	if c.SMTPPort < 1 || c.SMTPPort > 65535 {
		return vmail.SMTPConfig{}, fmt.Errorf("VROS_MESSAGING_SMTP_PORT %d is not a port", c.SMTPPort)
	}
	return vmail.SMTPConfig{Host: c.SMTPHost, Port: c.SMTPPort, Username: c.SMTPUsername, Password: c.SMTPPassword.Reveal(), TLS: mode}, nil
}

// domain is the Message-ID's domain.
func (c Config) domain() string {
	if c.Domain != "" {
		return c.Domain
	}
	if a, err := mail.ParseAddress(c.From); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && d != "" {
			return d
		}
	}
	return "localhost"
}
