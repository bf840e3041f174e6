package service

import (
	"strings"
	"testing"
	"time"
)

// TestConfigCheck: timings under which a repair could touch a change still running, or a
// checkout whose request stopped could hold its nights past its window, are refused.
func TestConfigCheck(t *testing.T) {
	ok := Config{RequestDeadline: 25 * time.Second, JanitorLease: 2 * time.Minute, IdempotencyLease: time.Minute,
		FailedRetention: time.Hour, CheckoutWindow: 15 * time.Minute, MoneyInterval: 30 * time.Second, DepositReleaseDays: 7,
		DepositReauthorizeAfter: 144 * time.Hour}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string // "" accepted
	}{
		{"the defaults", func(*Config) {}, ""},
		{"a window of the lease", func(c *Config) { c.CheckoutWindow = c.JanitorLease }, ""},
		{"a window shorter than the lease", func(c *Config) { c.CheckoutWindow = c.JanitorLease - time.Second }, "VROS_BOOKING_CHECKOUT_WINDOW"},
		{"a lease shorter than twice the deadline", func(c *Config) { c.JanitorLease = 49 * time.Second }, "VROS_BOOKING_JANITOR_LEASE"},
		{"an idempotency lease shorter than twice the deadline", func(c *Config) { c.IdempotencyLease = 49 * time.Second }, "VROS_BOOKING_IDEMPOTENCY_LEASE"},
		{"a refund retry schedule", func(c *Config) { c.RefundRetrySchedule = "1m,5m,30m,2h,12h" }, ""},
		{"a refund retry schedule that is not one", func(c *Config) { c.RefundRetrySchedule = "1m,soon" }, "VROS_BOOKING_REFUND_RETRY_SCHEDULE"},
		{"a negative money interval", func(c *Config) { c.MoneyInterval = -time.Second }, "VROS_BOOKING_MONEY_INTERVAL"},
		{"a release on check-out", func(c *Config) { c.DepositReleaseDays = 0 }, ""},
		{"a release before check-out", func(c *Config) { c.DepositReleaseDays = -1 }, "VROS_BOOKING_DEPOSIT_RELEASE_DAYS"},
		{"a renewal after the hold lapsed", func(c *Config) { c.DepositReauthorizeAfter = 169 * time.Hour }, "VROS_BOOKING_DEPOSIT_REAUTHORIZE_AFTER"},
		{"no renewal age", func(c *Config) { c.DepositReauthorizeAfter = 0 }, "VROS_BOOKING_DEPOSIT_REAUTHORIZE_AFTER"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			err := cfg.check()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
				t.Fatalf("check: %v, want %q", err, c.want)
			}
		})
	}
}
