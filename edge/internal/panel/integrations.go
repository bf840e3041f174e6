package panel

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
)

// resourcePage is an account-level page over one interface A resource: a list read through
// the resource, and forms posting its actions (the form's `action` field) back to the page.
type resourcePage struct {
	page, title, nav, resource string
	load                       func(p *Panel, c *fiber.Ctx) (any, error)
}

var (
	brandsPage = resourcePage{page: "brands", title: "Brands", nav: "brands", resource: "account-brand", load: func(p *Panel, c *fiber.Ctx) (any, error) {
		var settings map[string]any
		err := p.must(c, gateway.InterfaceA, "account-settings", map[string]any{}, &settings)
		return settings, err
	}}
	webhooksPage = resourcePage{page: "webhooks", title: "Webhooks", nav: "webhooks", resource: "webhook", load: func(p *Panel, c *fiber.Ctx) (any, error) {
		var d struct {
			Webhooks   []map[string]any `json:"webhooks"`
			Deliveries []map[string]any `json:"-"`
			Shown      string           `json:"-"`
		}
		if err := p.must(c, gateway.InterfaceA, "webhook", map[string]any{"action": "list"}, &d); err != nil {
			return nil, err
		}
		// The delivery log of the endpoint asked for (?log=<webhook_id>).
		if id := c.Query("log"); id != "" {
			var log struct {
				Deliveries []map[string]any `json:"deliveries"`
			}
			if err := p.must(c, gateway.InterfaceA, "webhook-delivery", map[string]any{"action": "list",
				"delivery": map[string]any{"webhook_id": id, "limit": 50}}, &log); err != nil {
				return nil, err
			}
			d.Deliveries, d.Shown = log.Deliveries, id
		}
		return d, nil
	}}
	icalPage = resourcePage{page: "ical", title: "iCal feeds", nav: "ical", resource: "ical-feed", load: func(p *Panel, c *fiber.Ctx) (any, error) {
		var d struct {
			Feeds []map[string]any `json:"feeds"`
		}
		err := p.must(c, gateway.InterfaceA, "ical-feed", map[string]any{"action": "list"}, &d)
		return d, err
	}}
)

// resourceData is a resource page's data: what load read, and the secret an action just
// made (a webhook's signing secret), shown this once.
type resourceData struct {
	List   any
	Secret string
}

func (p *Panel) showResource(c *fiber.Ctx, r resourcePage, secret, msg string, values, errs map[string]string) error {
	list, err := r.load(p, c)
	if err != nil {
		return err
	}
	sess := sessionOf(c)
	return p.render(c, r.page, view{Title: r.title, Session: sess, Nav: r.nav, Notice: notice(c), Message: msg, Values: values, Errors: errs,
		Data: resourceData{List: list, Secret: secret}})
}

// postResource sends a form to the page's resource (or to the resource the form names among
// the page's own: webhook-delivery beside webhook), then shows the page again.
func (p *Panel) postResource(c *fiber.Ctx, r resourcePage) error {
	values, obj, err := form(c, "resource", "log")
	if err != nil {
		return err
	}
	resource := r.resource
	if values["resource"] == "webhook-delivery" && r.resource == "webhook" {
		resource = "webhook-delivery"
	}
	o, err := p.call(c, gateway.InterfaceA, resource, obj)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			return p.showResource(c, r, "", o.Message, values, o.Violations)
		})
	}
	var made struct {
		Secret string `json:"secret"`
	}
	_ = json.Unmarshal(o.Data, &made)
	if made.Secret != "" {
		return p.showResource(c, r, made.Secret, "", nil, nil)
	}
	to := "/panel/" + r.page
	if id := values["log"]; id != "" && !strings.ContainsAny(id, "&?#/") {
		to += "?log=" + id
	}
	return redirect(c, to, "saved")
}

func (p *Panel) brands(c *fiber.Ctx) error    { return p.showResource(c, brandsPage, "", "", nil, nil) }
func (p *Panel) saveBrand(c *fiber.Ctx) error { return p.postResource(c, brandsPage) }
func (p *Panel) webhooks(c *fiber.Ctx) error {
	return p.showResource(c, webhooksPage, "", "", nil, nil)
}
func (p *Panel) webhookAction(c *fiber.Ctx) error { return p.postResource(c, webhooksPage) }
func (p *Panel) icalFeeds(c *fiber.Ctx) error     { return p.showResource(c, icalPage, "", "", nil, nil) }
func (p *Panel) icalAction(c *fiber.Ctx) error    { return p.postResource(c, icalPage) }
