package service

import (
	"context"
	"errors"
	"time"

	"github.com/vros/vros/integration-svc/internal/webhooks/api"
	"github.com/vros/vros/integration-svc/internal/webhooks/deliver"
	"github.com/vros/vros/integration-svc/internal/webhooks/derive"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/periodic"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// Emitter takes an event that integration-svc raises itself (an iCal conflict) to the
// account's webhook endpoints.
type Emitter interface {
	Emit(ctx context.Context, e webhook.Event) error
}

// Policy tells whether an operator allowed an account private, loopback and link-local
// targets (webhook endpoints and feeds).
type Policy interface {
	AllowsPrivate(ctx context.Context, account string) (bool, error)
}

// WebhookConfig tunes webhook delivery (VROS_WEBHOOK_…; docs/webhooks.md, "Configuration").
type WebhookConfig struct {
	// Timeout bounds one attempt (connect, send, answer).
	Timeout time.Duration `env:"VROS_WEBHOOK_TIMEOUT" envDefault:"10s"`
	// Poll is how often the store is read for due deliveries (other replicas' and retries);
	// this replica's new deliveries are sent at once.
	Poll time.Duration `env:"VROS_WEBHOOK_POLL" envDefault:"250ms"`
	// RetrySchedule: the wait before each attempt; after the last one the delivery failed.
	RetrySchedule []time.Duration `env:"VROS_WEBHOOK_RETRY_SCHEDULE" envSeparator:"," envDefault:"0s,5s,5m,30m,2h,5h,10h,10h"`
	// An endpoint is disabled once every attempt failed for DisableAfter and at least
	// DisableMinFailures attempts in a row.
	DisableAfter       time.Duration `env:"VROS_WEBHOOK_DISABLE_AFTER" envDefault:"120h"`
	DisableMinFailures int           `env:"VROS_WEBHOOK_DISABLE_MIN_FAILURES" envDefault:"10"`
	// Concurrency and PerEndpoint bound the attempts in flight in one replica.
	Concurrency int `env:"VROS_WEBHOOK_CONCURRENCY" envDefault:"32"`
	PerEndpoint int `env:"VROS_WEBHOOK_PER_ENDPOINT" envDefault:"4"`
	// AttemptRetention is how long the attempt log is kept.
	AttemptRetention time.Duration `env:"VROS_WEBHOOK_ATTEMPT_RETENTION" envDefault:"168h"`
}

// wireWebhooks starts webhook subscriptions, the event consumer and the deliverer.
func wireWebhooks(w *wiring) error {
	wc := w.cfg.Webhooks
	if wc.Timeout <= 0 || wc.Poll <= 0 || len(wc.RetrySchedule) == 0 || wc.AttemptRetention <= 0 {
		return errors.New("VROS_WEBHOOK_TIMEOUT, VROS_WEBHOOK_POLL, VROS_WEBHOOK_ATTEMPT_RETENTION must be positive and VROS_WEBHOOK_RETRY_SCHEDULE not empty")
	}
	if wc.RetrySchedule[0] != 0 {
		// an event is sent as soon as it is recorded; the waits are before the retries.
		return errors.New("VROS_WEBHOOK_RETRY_SCHEDULE must begin with 0s (the first attempt is made at once)")
	}
	st, err := store.Open(w.ctx, w.base.DB)
	if err != nil {
		return err
	}
	h := hooks.New(st)
	w.policy = st
	w.hooks = h
	log := w.base.Tel.Logger
	d := deliver.New(deliver.Config{Timeout: wc.Timeout, Poll: wc.Poll, Schedule: wc.RetrySchedule,
		DisableAfter: wc.DisableAfter, DisableMinFailures: wc.DisableMinFailures, AllowHTTP: w.cfg.AllowHTTP,
		Concurrency: wc.Concurrency, PerEndpoint: wc.PerEndpoint, BookingURL: w.cfg.BookingURL},
		st, st, w.signer, log, w.base.Tel.Meter, h.EmitExcept)
	h.SetWake(d.Wake)
	api.New(h, w.cfg.AllowHTTP).Register(w.app, w.auth)
	w.onErase = append(w.onErase, func(ctx context.Context, account string) error {
		return st.EraseAccount(ctx, account, time.Now().UTC())
	})
	cons := &derive.Consumer{Snaps: st.Snapshots(), Emit: h.EmitAll, Erased: st.Erased,
		Erase: func(ctx context.Context, account string) error {
			for _, f := range w.onErase {
				if err := f(ctx, account); err != nil {
					return err
				}
			}
			return nil
		}}
	tel := w.base.Tel
	w.loops = append(w.loops,
		func(ctx context.Context) error {
			return events.Consume(ctx, events.ConsumerOptions{
				Brokers: w.cfg.KafkaBrokers, GroupID: w.cfg.ConsumerGroup, Topics: []string{events.TopicProperty, events.TopicBooking},
				Park: events.ParkIn(w.base.DB.Collection(events.ParkedCollection)), Log: log, Tracer: tel.Tracer,
				Meter: tel.Meter, Propagator: tel.Propagator,
			}, cons.Handle)
		},
		d.Run,
		func(ctx context.Context) error {
			periodic.Run(ctx, time.Hour, func(ctx context.Context) error {
				_, err := st.PruneAttempts(ctx, time.Now().Add(-wc.AttemptRetention))
				return err
			}, func(err error) { log.Warn("webhook attempt cleanup failed", "error", err) })
			return nil
		})
	return nil
}
