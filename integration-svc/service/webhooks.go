package service

import (
	"context"

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

// WebhookConfig tunes webhook delivery (VROS_WEBHOOK_…).
type WebhookConfig struct{}

// wireWebhooks starts webhook subscriptions, the event consumer and the deliverer.
func wireWebhooks(w *wiring) error { return nil }
