package service

import (
	"context"
	"time"

	"github.com/vros/vros/integration-svc/internal/hooks"
	"github.com/vros/vros/integration-svc/internal/store"
	"github.com/vros/vros/integration-svc/internal/webhook"
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
type WebhookConfig struct{}

// wireWebhooks starts webhook subscriptions, the event consumer and the deliverer.
func wireWebhooks(w *wiring) error {
	st, err := store.Open(w.ctx, w.base.DB)
	if err != nil {
		return err
	}
	h := hooks.New(st, nil)
	w.policy = st
	w.hooks = h
	w.onErase = append(w.onErase, func(ctx context.Context, account string) error {
		return st.EraseAccount(ctx, account, time.Now().UTC())
	})
	return nil
}
