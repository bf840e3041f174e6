// Package api is integration-svc's HTTP adapter for webhooks: the interface A resources
// webhook and webhook-delivery edge forwards to /internal/a/{resource}, and the operator's
// private-targets switch (/internal/account/integrations).
package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/targets"
	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// Limits of the resources (docs/webhooks.md).
const (
	MaxDescription = 500
	MaxRedeliver   = 31 * 24 * time.Hour
	DefaultLimit   = 100
	MaxLimit       = 500
)

// API serves the webhook routes.
type API struct {
	h         *hooks.Hooks
	allowHTTP bool
}

// New returns the API over h; allowHTTP accepts http:// targets (development).
func New(h *hooks.Hooks, allowHTTP bool) *API { return &API{h: h, allowHTTP: allowHTTP} }

// Register mounts the routes behind the signature check.
func (a *API) Register(app *fiber.App, auth *tenancy.Verifier) {
	in := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth))
	in.Post("/webhook", a.webhook)
	in.Post("/webhook-delivery", a.delivery)
	acc := app.Group("/internal/account", tenancyfiber.Require(auth))
	acc.Get("/integrations", a.getIntegrations)
	acc.Put("/integrations", a.putIntegrations)
}

func notFound(err error, id int64) error {
	if errors.Is(err, hooks.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("webhook %d does not exist", id))
	}
	return err
}

var webhookActions = []string{"create", "list", "get", "update", "delete", "rotate_secret", "test"}

// webhook: the account's endpoints.
func (a *API) webhook(c *fiber.Ctx) error {
	var v fields.Violations
	body := fields.Parse(c.Body(), "", &v)
	if body == nil {
		return v.Err()
	}
	action, _ := body.String("action", fields.Str{Required: true, OneOf: webhookActions, IgnoreCase: true})
	if v.Len() > 0 {
		return v.Err()
	}
	acc := tenancyfiber.From(c).AccountID
	ctx := c.UserContext()
	o := body.Object("webhook", action != "list")
	var id int64
	if action != "create" && action != "list" && o != nil {
		n, _ := o.Int("webhook_id", fields.Int{Required: true, Min: 1})
		id = int64(n)
	}
	switch action {
	case "create":
		e := webhook.Endpoint{Account: acc}
		if o != nil {
			e.URL, _ = a.url(ctx, o, acc, true)
			e.EventTypes = eventTypes(o, true)
			brand, _ := o.Int("brand_id", fields.Int{})
			e.BrandID = int64(brand)
			e.Description, _ = o.String("description", fields.Str{Max: MaxDescription})
		}
		if err := v.Err(); err != nil {
			return err
		}
		e, err := a.h.Create(ctx, e)
		if errors.Is(err, hooks.ErrTooMany) {
			return httpapi.InvalidField("webhook", "the account may have at most 50 webhook endpoints")
		}
		if err != nil {
			return err
		}
		return httpapi.A(c, endpointJSON(e, true))
	case "list":
		var brand int
		if o != nil {
			brand, _ = o.Int("brand_id", fields.Int{})
		}
		if err := v.Err(); err != nil {
			return err
		}
		eps, err := a.h.List(ctx, acc, int64(brand))
		if err != nil {
			return err
		}
		out := make([]map[string]any, 0, len(eps))
		for _, e := range eps {
			out = append(out, endpointJSON(e, false))
		}
		return httpapi.A(c, fiber.Map{"webhooks": out})
	case "update":
		var ch hooks.Change
		if o != nil {
			if u, ok := a.url(ctx, o, acc, false); ok {
				ch.URL = &u
			}
			ch.EventTypes = eventTypes(o, false)
			if o.Has("brand_id") {
				if b, ok := o.Int("brand_id", fields.Int{}); ok {
					bb := int64(b)
					ch.BrandID = &bb
				}
			}
			if o.Has("description") {
				if d, ok := o.String("description", fields.Str{Max: MaxDescription}); ok {
					ch.Description = &d
				}
			}
			if o.Has("enabled") {
				if en, ok := o.Bool("enabled", false); ok {
					ch.Enabled = &en
				}
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		e, err := a.h.Update(ctx, acc, id, ch)
		if err != nil {
			return notFound(err, id)
		}
		if e, err = a.h.Streak(ctx, e); err != nil {
			return err
		}
		return httpapi.A(c, endpointJSON(e, false))
	}
	if err := v.Err(); err != nil {
		return err
	}
	switch action {
	case "get":
		e, err := a.h.Get(ctx, acc, id)
		if err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, endpointJSON(e, false))
	case "delete":
		if err := a.h.Delete(ctx, acc, id); err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, fiber.Map{"webhook_id": id, "deleted": true})
	case "rotate_secret":
		e, err := a.h.RotateSecret(ctx, acc, id)
		if err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, endpointJSON(e, true))
	default: // test
		msg, err := a.h.Test(ctx, acc, id)
		if err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, fiber.Map{"message_id": msg})
	}
}

// url reads webhook.url under the address rules (the account's switch decides private
// addresses).
func (a *API) url(ctx context.Context, o *fields.Object, account string, required bool) (string, bool) {
	if !required && !o.Has("url") {
		return "", false
	}
	u, ok := o.String("url", fields.Str{Required: true})
	if !ok {
		return "", false
	}
	allow, err := a.h.AllowsPrivate(ctx, account)
	if err != nil {
		o.Add("url", "could not be checked now; try again")
		return "", false
	}
	if msg := targets.Check(ctx, u, targets.Rules{AllowHTTP: a.allowHTTP, AllowPrivate: allow}); msg != "" {
		o.Add("url", msg)
		return "", false
	}
	return u, true
}

// eventTypes reads webhook.event_types: not empty, known types or "*", no duplicates.
func eventTypes(o *fields.Object, required bool) []string {
	if !required && !o.Has("event_types") {
		return nil
	}
	list, ok := o.Strings("event_types", fields.List{Required: true, Min: 1, Max: len(webhook.Types) + 1},
		fields.Str{Required: true, OneOf: append([]string{webhook.AllTypes}, webhook.Types...)})
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	for _, t := range list {
		if seen[t] {
			o.Addf("event_types", "must not list %q twice", t)
			return nil
		}
		seen[t] = true
	}
	return list
}

func ts(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// endpointJSON is the endpoint as the API shows it; the secret only when withSecret.
func endpointJSON(e webhook.Endpoint, withSecret bool) map[string]any {
	m := map[string]any{"webhook_id": e.ID, "url": e.URL, "event_types": e.EventTypes, "description": e.Description,
		"enabled": e.Enabled, "disabled_at": ts(e.DisabledAt), "disabled_reason": e.DisabledReason,
		"failure_streak": e.FailureStreak, "last_success_at": ts(e.LastSuccessAt), "last_failure_at": ts(e.LastFailureAt),
		"created_at": ts(&e.CreatedAt), "updated_at": ts(&e.UpdatedAt)}
	if e.BrandID > 0 {
		m["brand_id"] = e.BrandID
	}
	if withSecret {
		m["secret"] = e.Secret
	}
	return m
}

func timeField(o *fields.Object, name string) *time.Time {
	if !o.Has(name) {
		return nil
	}
	s, ok := o.String(name, fields.Str{})
	if !ok || s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		o.Add(name, "must be an RFC 3339 time (2027-01-10T12:00:00Z)")
		return nil
	}
	t = t.UTC()
	return &t
}

// delivery: the delivery log and redelivery.
func (a *API) delivery(c *fiber.Ctx) error {
	var v fields.Violations
	body := fields.Parse(c.Body(), "", &v)
	if body == nil {
		return v.Err()
	}
	action, _ := body.String("action", fields.Str{Required: true, OneOf: []string{"list", "redeliver"}, IgnoreCase: true})
	o := body.Object("delivery", true)
	if o == nil {
		return v.Err()
	}
	n, _ := o.Int("webhook_id", fields.Int{Required: true, Min: 1})
	id := int64(n)
	from, to := timeField(o, "from"), timeField(o, "to")
	if from != nil && to != nil && !to.After(*from) {
		o.Add("to", "must be after from")
	}
	acc := tenancyfiber.From(c).AccountID
	ctx := c.UserContext()
	if action == "redeliver" {
		msg, _ := o.String("message_id", fields.Str{Max: 64})
		switch {
		case msg == "" && (from == nil || to == nil):
			o.Add("message_id", "is required unless from and to are given")
		case msg == "" && to.Sub(*from) > MaxRedeliver:
			o.Add("to", "must be at most 31 days after from")
		}
		if err := v.Err(); err != nil {
			return err
		}
		e, err := a.h.Endpoint(ctx, acc, id)
		if err != nil {
			return notFound(err, id)
		}
		var f, t time.Time
		if msg == "" {
			f, t = *from, *to
		}
		count, err := a.h.Redeliver(ctx, e, msg, f, t)
		if errors.Is(err, hooks.ErrNotFound) {
			return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("delivery %s of webhook %d does not exist", msg, id))
		}
		if err != nil {
			return err
		}
		return httpapi.A(c, fiber.Map{"redelivered": count})
	}
	status, _ := o.String("status", fields.Str{OneOf: []string{webhook.StatusPending, webhook.StatusDelivered, webhook.StatusFailed}})
	limit, ok := o.Int("limit", fields.Int{Min: 1, Max: MaxLimit})
	if !ok {
		limit = DefaultLimit
	}
	before, _ := o.String("before", fields.Str{Max: 64})
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := a.h.Endpoint(ctx, acc, id); err != nil {
		return notFound(err, id)
	}
	ds, atts, err := a.h.Deliveries(ctx, acc, id, hooks.DeliveryFilter{Status: status, From: from, To: to, Limit: int64(limit), Before: before})
	if errors.Is(err, hooks.ErrNotFound) {
		return httpapi.InvalidField("delivery.before", "must be a message id of this webhook's deliveries")
	}
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(ds))
	for _, d := range ds {
		as := make([]map[string]any, 0, len(atts[d.MessageID]))
		for _, at := range atts[d.MessageID] {
			as = append(as, map[string]any{"attempt": at.Attempt, "at": ts(&at.At), "status_code": at.StatusCode,
				"latency_ms": at.LatencyMS, "error": at.Error, "response_excerpt": at.ResponseExcerpt})
		}
		out = append(out, map[string]any{"message_id": d.MessageID, "event_type": d.EventType, "property_id": d.PropertyID,
			"status": d.Status, "attempts": as, "next_attempt_at": ts(d.NextAttemptAt), "created_at": ts(&d.CreatedAt),
			"delivered_at": ts(d.DeliveredAt)})
	}
	return httpapi.A(c, fiber.Map{"deliveries": out})
}

type integrations struct {
	AllowPrivateTargets bool `json:"allow_private_targets"`
}

func (a *API) getIntegrations(c *fiber.Ctx) error {
	allow, err := a.h.AllowsPrivate(c.UserContext(), tenancyfiber.From(c).AccountID)
	if err != nil {
		return err
	}
	return c.JSON(integrations{AllowPrivateTargets: allow})
}

func (a *API) putIntegrations(c *fiber.Ctx) error {
	var v fields.Violations
	body := fields.Parse(c.Body(), "", &v)
	var allow bool
	if body != nil {
		allow, _ = body.Bool("allow_private_targets", true)
	}
	if err := v.Err(); err != nil {
		return c.Status(http.StatusBadRequest).JSON(fiber.Map{"error": err.Error()})
	}
	if err := a.h.SetAllowsPrivate(c.UserContext(), tenancyfiber.From(c).AccountID, allow); err != nil {
		return err
	}
	return c.JSON(integrations{AllowPrivateTargets: allow})
}
