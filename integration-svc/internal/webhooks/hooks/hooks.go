// Package hooks is the webhook domain service: it keeps the accounts' endpoints under their
// rules and turns an event into deliveries to the endpoints that subscribe to it.
package hooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// ErrTooMany: the account has the most endpoints it may have.
var ErrTooMany = errors.New("the account has 50 webhook endpoints, the most it may have")

// SecretOverlap is how long a rotated-out secret still signs deliveries.
const SecretOverlap = 24 * time.Hour

// Hooks is the webhook domain service.
type Hooks struct {
	endpoints  EndpointRepository
	deliveries DeliveryRepository
	brands     BrandRepository
	accounts   AccountRepository
	// wake tells the deliverer that deliveries were recorded.
	wake func()
	now  func() time.Time
}

// New returns the service over r; wake (SetWake) is called after deliveries are recorded.
func New(r Repository) *Hooks {
	return &Hooks{endpoints: r, deliveries: r, brands: r, accounts: r,
		wake: func() {}, now: func() time.Time { return time.Now().UTC() }}
}

// SetWake sets what is called after deliveries are recorded (the deliverer's Wake).
func (h *Hooks) SetWake(wake func()) { h.wake = wake }

// NewSecret is a fresh signing secret: "whsec_" and the base64 of 24 random bytes.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Create adds an endpoint (its fields already checked) and returns it with its secret.
func (h *Hooks) Create(ctx context.Context, e webhook.Endpoint) (webhook.Endpoint, error) {
	n, err := h.endpoints.CountEndpoints(ctx, e.Account)
	if err != nil {
		return e, err
	}
	if n >= webhook.MaxEndpointsPerAccount {
		return e, ErrTooMany
	}
	id, err := h.endpoints.NextID(ctx)
	if err != nil {
		return e, err
	}
	now := h.now()
	e.ID, e.Enabled, e.Secret, e.CreatedAt, e.UpdatedAt = id, true, NewSecret(), now, now
	return e, h.endpoints.AddEndpoint(ctx, e)
}

// Change is an update of an endpoint: nil members are left as they are.
type Change struct {
	URL         *string
	EventTypes  []string
	BrandID     *int64
	Description *string
	Enabled     *bool
}

// Update applies c to the endpoint. Enabling a disabled or paused endpoint resets its
// failure streak and makes its waiting deliveries due now; disabling pauses them.
func (h *Hooks) Update(ctx context.Context, account string, id int64, c Change) (webhook.Endpoint, error) {
	now := h.now()
	var released bool
	e, _, err := h.endpoints.ModifyEndpoint(ctx, account, id, now, func(e *webhook.Endpoint) bool {
		if c.URL != nil {
			e.URL = *c.URL
		}
		if c.EventTypes != nil {
			e.EventTypes = c.EventTypes
		}
		if c.BrandID != nil {
			e.BrandID = *c.BrandID
		}
		if c.Description != nil {
			e.Description = *c.Description
		}
		released = false
		if c.Enabled != nil && *c.Enabled != e.Enabled {
			e.Enabled = *c.Enabled
			if e.Enabled {
				e.DisabledAt, e.DisabledReason, e.StreakFrom, released = nil, "", &now, true
			}
		}
		e.UpdatedAt = now
		return true
	})
	if err == nil && released {
		h.wake()
	}
	return e, err
}

// RotateSecret gives the endpoint a new secret; the old one still signs for SecretOverlap.
func (h *Hooks) RotateSecret(ctx context.Context, account string, id int64) (webhook.Endpoint, error) {
	now := h.now()
	until := now.Add(SecretOverlap)
	e, _, err := h.endpoints.ModifyEndpoint(ctx, account, id, now, func(e *webhook.Endpoint) bool {
		e.OldSecret, e.OldSecretUntil, e.Secret, e.UpdatedAt = e.Secret, &until, NewSecret(), now
		return true
	})
	return e, err
}

// Test sends a webhook.test event to the endpoint only and returns its message id.
func (h *Hooks) Test(ctx context.Context, account string, id int64) (string, error) {
	e, err := h.endpoints.Endpoint(ctx, account, id)
	if err != nil {
		return "", err
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	now := h.now()
	data, _ := json.Marshal(map[string]any{"webhook_id": id, "message": "This is a test event from vros."})
	ev := webhook.Event{ID: webhook.MessageID(account, now.UnixNano(), webhook.WebhookTest, string(b)),
		Account: account, Type: webhook.WebhookTest, At: now, Data: data}
	if err := h.deliveries.AddDeliveries(ctx, ev, []webhook.Endpoint{e}, now); err != nil {
		return "", err
	}
	h.wake()
	return ev.ID, nil
}

// Emit records e for every endpoint of its account that subscribes to it.
func (h *Hooks) Emit(ctx context.Context, e webhook.Event) error {
	return h.emit(ctx, []webhook.Event{e}, 0)
}

// EmitAll is Emit of the events of one account (one message's), reading its endpoints once.
func (h *Hooks) EmitAll(ctx context.Context, evs []webhook.Event) error { return h.emit(ctx, evs, 0) }

// EmitExcept is Emit leaving out endpoint except (the disabled endpoint a notice is about).
func (h *Hooks) EmitExcept(ctx context.Context, e webhook.Event, except int64) error {
	return h.emit(ctx, []webhook.Event{e}, except)
}

func (h *Hooks) emit(ctx context.Context, evs []webhook.Event, except int64) error {
	if len(evs) == 0 {
		return nil
	}
	account := evs[0].Account
	all, err := h.endpoints.ListEndpoints(ctx, account, 0)
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(ep webhook.Endpoint) bool { return ep.ID == except })
	var brands map[int64][]int64 // read when an endpoint of one brand needs them
	recorded := false
	for _, e := range evs {
		if e.Account != account {
			return errors.New("hooks: events of several accounts emitted together")
		}
		var to []webhook.Endpoint
		for _, ep := range all {
			if !ep.Wants(e.Type) {
				continue
			}
			if ep.BrandID > 0 && !webhook.CarriesBooking(e.Type) && brands == nil {
				if brands, err = h.brands.BrandProperties(ctx, account); err != nil {
					return err
				}
			}
			if ep.BrandID > 0 && !ofBrand(ep.BrandID, e, brands) {
				continue
			}
			to = append(to, ep)
		}
		if len(to) == 0 {
			continue
		}
		if err := h.deliveries.AddDeliveries(ctx, e, to, h.now()); err != nil {
			return err
		}
		recorded = true
	}
	if recorded {
		h.wake()
	}
	return nil
}

// ofBrand tells whether e goes to an endpoint of brand: a booking's brand for events that
// carry a booking, the brand's properties (docs/brands.md: none listed = all) otherwise.
func ofBrand(brand int64, e webhook.Event, brands map[int64][]int64) bool {
	if webhook.CarriesBooking(e.Type) {
		return e.BrandID == brand
	}
	props, ok := brands[brand]
	return ok && (len(props) == 0 || slices.Contains(props, e.PropertyID))
}

// Wake tells the deliverer that deliveries are due (a redelivery).
func (h *Hooks) Wake() { h.wake() }

// Endpoint reads one endpoint of the account (ErrNotFound when it has none of that id).
func (h *Hooks) Endpoint(ctx context.Context, account string, id int64) (webhook.Endpoint, error) {
	return h.endpoints.Endpoint(ctx, account, id)
}

// Get is Endpoint with its failure streak filled in.
func (h *Hooks) Get(ctx context.Context, account string, id int64) (webhook.Endpoint, error) {
	e, err := h.endpoints.Endpoint(ctx, account, id)
	if err != nil {
		return e, err
	}
	return h.endpoints.Streak(ctx, e)
}

// List lists the account's endpoints by id (brand > 0: that brand's only), with their
// failure streaks.
func (h *Hooks) List(ctx context.Context, account string, brand int64) ([]webhook.Endpoint, error) {
	eps, err := h.endpoints.ListEndpoints(ctx, account, brand)
	if err != nil {
		return nil, err
	}
	for i := range eps {
		if eps[i], err = h.endpoints.Streak(ctx, eps[i]); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

// Streak fills in e's failure streak.
func (h *Hooks) Streak(ctx context.Context, e webhook.Endpoint) (webhook.Endpoint, error) {
	return h.endpoints.Streak(ctx, e)
}

// Delete deletes the endpoint with its deliveries (ErrNotFound when there is none).
func (h *Hooks) Delete(ctx context.Context, account string, id int64) error {
	return h.endpoints.DeleteEndpoint(ctx, account, id)
}

// Redeliver makes endpoint e's deliveries of message msg (msg empty: those created in
// [from, to)) pending again, due now, held while e is disabled; it returns how many.
// ErrNotFound when msg names no delivery of e.
func (h *Hooks) Redeliver(ctx context.Context, e webhook.Endpoint, msg string, from, to time.Time) (int64, error) {
	n, err := h.deliveries.Redeliver(ctx, e.Account, e.ID, msg, from, to, !e.Enabled, h.now())
	if err != nil {
		return n, err
	}
	h.wake()
	return n, nil
}

// Deliveries lists an endpoint's deliveries, newest first, with their attempts by message
// id; ErrNotFound when f.Before names no delivery of it.
func (h *Hooks) Deliveries(ctx context.Context, account string, id int64, f DeliveryFilter) ([]webhook.Delivery, map[string][]webhook.Attempt, error) {
	return h.deliveries.ListDeliveries(ctx, account, id, f)
}

// AllowsPrivate reports whether an operator allowed the account private targets.
func (h *Hooks) AllowsPrivate(ctx context.Context, account string) (bool, error) {
	return h.accounts.AllowsPrivate(ctx, account)
}

// SetAllowsPrivate sets the account's private-targets switch (the operator's).
func (h *Hooks) SetAllowsPrivate(ctx context.Context, account string, allow bool) error {
	return h.accounts.SetAllowsPrivate(ctx, account, allow)
}
