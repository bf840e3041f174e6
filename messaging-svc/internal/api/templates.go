package api

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
)

// message-template: the account's templates (create, update, get, list, delete) and the
// preview of a template with a real booking.

type templateAnswer struct {
	TemplateID int64   `json:"template_id"`
	Trigger    string  `json:"trigger"`
	Language   string  `json:"language"`
	BrandID    int64   `json:"brand_id"`
	PropertyID int64   `json:"property_id"`
	Subject    string  `json:"subject"`
	HTML       string  `json:"html"`
	Text       string  `json:"text"`
	CreatedAt  *string `json:"created_at"`
	UpdatedAt  *string `json:"updated_at"`
}

func templateAnswerOf(t store.Template) templateAnswer {
	return templateAnswer{TemplateID: t.ID, Trigger: t.Trigger, Language: t.Language, BrandID: t.BrandID, PropertyID: t.PropertyID,
		Subject: t.Subject, HTML: t.HTML, Text: t.Text, CreatedAt: stamp(t.Created), UpdatedAt: stamp(t.Updated)}
}

// decodeTemplate reads a template's fields from o (the object "template"); the parts' size
// and their language are Validate's.
func decodeTemplate(o *fields.Object) template.Template {
	var t template.Template
	t.Trigger, _ = o.String("trigger", fields.Str{Required: true, OneOf: template.Triggers()})
	t.Language, _ = o.String("language", fields.Str{Required: true, OneOf: template.Languages(), IgnoreCase: true})
	brand, _ := o.Int("brand_id", fields.Int{Max: maxID})
	property, _ := o.Int("property_id", fields.Int{Max: maxID})
	t.BrandID, t.PropertyID = int64(brand), int64(property)
	t.Subject, _ = o.String("subject", fields.Str{Required: true})
	t.HTML, _ = o.String("html", fields.Str{Required: true})
	t.Text, _ = o.String("text", fields.Str{})
	return t
}

// validate runs template.Validate, a refusal as the violation of its part
// (template.html: line 2: …).
func validate(v *fields.Violations, t template.Template) {
	err := template.Validate(t)
	var fe *template.FieldError
	switch {
	case err == nil:
	case errors.As(err, &fe) && fe.Line > 0:
		v.Addf(fe.Field, "line %d: %s", fe.Line, fe.Message)
	case errors.As(err, &fe):
		v.Add(fe.Field, fe.Message)
	default:
		v.Add("template", err.Error())
	}
}

// templateID reads template_id from the object "template", else from the body.
func templateID(o, t *fields.Object, required bool) int64 {
	src := o
	if t != nil && t.Has("template_id") || !o.Has("template_id") && t != nil {
		src = t
	}
	id, _ := src.Int("template_id", fields.Int{Required: required, Min: 1, Max: maxID})
	return int64(id)
}

// scoped checks that the brand and property a template is narrowed to are the account's
// (404 otherwise).
func (a *API) scoped(c *fiber.Ctx, t template.Template) error {
	ctx, acct := c.UserContext(), account(c)
	if t.PropertyID != 0 {
		_, ok, err := a.d.Views.Property(ctx, acct, t.PropertyID)
		if err != nil {
			return err
		}
		if !ok {
			return notFound(fmt.Sprintf("property %d does not exist", t.PropertyID))
		}
	}
	if t.BrandID != 0 {
		av, _, err := a.d.Views.Account(ctx, acct)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(av.Brands, func(b store.BrandView) bool { return b.ID == t.BrandID }) {
			return notFound(fmt.Sprintf("brand %d does not exist", t.BrandID))
		}
	}
	return nil
}

func templatesError(err error, id int64) error {
	var ce *store.TemplateConflictError
	switch {
	case errors.Is(err, store.ErrTemplateNotFound):
		return notFound(fmt.Sprintf("template %d does not exist", id))
	case errors.As(err, &ce):
		return httpapi.Conflict(httpapi.StatusConflict, ce.Error())
	}
	return err
}

func (a *API) templateResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "create", "update", "get", "list", "delete", "preview")
	ctx, acct := c.UserContext(), account(c)
	switch action {
	case "":
		return v.Err()
	case "list":
		return a.listTemplates(c, o, &v)
	case "preview":
		return a.preview(c, o, &v)
	}
	var t *fields.Object
	if action == "create" || action == "update" {
		t = o.Object("template", true)
	} else {
		t = o.Object("template", false)
	}
	var id int64
	if action != "create" {
		id = templateID(o, t, true)
	}
	var w template.Template
	if action == "create" || action == "update" {
		w = decodeTemplate(t)
		if v.Len() == 0 {
			validate(&v, w)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	var got store.Template
	var err error
	switch action {
	case "create", "update":
		if err := a.scoped(c, w); err != nil {
			return err
		}
		err = a.write(ctx, acct, func() error {
			var err error
			if action == "create" {
				got, err = a.d.Templates.Create(ctx, acct, w, a.d.Now())
			} else {
				got, err = a.d.Templates.Update(ctx, acct, id, w, a.d.Now())
			}
			return err
		})
	case "get":
		got, err = a.d.Templates.Get(ctx, acct, id)
	case "delete":
		if err := a.d.Templates.Delete(ctx, acct, id); err != nil {
			return templatesError(err, id)
		}
		return httpapi.A(c, fiber.Map{"template_id": id, "deleted": true})
	default:
		return fmt.Errorf("message-template: action %q has no handler", action)
	}
	if err != nil {
		return templatesError(err, id)
	}
	return httpapi.A(c, templateAnswerOf(got))
}

func (a *API) listTemplates(c *fiber.Ctx, o *fields.Object, v *fields.Violations) error {
	p := readPage(o, 50)
	var f store.TemplateFilter
	f.Trigger, _ = o.String("trigger", fields.Str{OneOf: template.Triggers()})
	f.Language, _ = o.String("language", fields.Str{OneOf: template.Languages(), IgnoreCase: true})
	brand, _ := o.Int("brand_id", fields.Int{Min: 1, Max: maxID})
	property, _ := o.Int("property_id", fields.Int{Min: 1, Max: maxID})
	f.BrandID, f.PropertyID = int64(brand), int64(property)
	if err := v.Err(); err != nil {
		return err
	}
	all, err := a.d.Templates.List(c.UserContext(), account(c), f)
	if err != nil {
		return err
	}
	total, items := pageOf(p, all)
	out := make([]templateAnswer, len(items))
	for i, t := range items {
		out[i] = templateAnswerOf(t)
	}
	return httpapi.A(c, fiber.Map{"total": total, "page": p.page, "limit": p.limit, "templates": out})
}

type previewAnswer struct {
	Subject    string `json:"subject"`
	HTML       string `json:"html"`
	Text       string `json:"text"`
	Source     string `json:"source"` // account or default
	TemplateID *int64 `json:"template_id"`
}

// preview renders a template with a real booking of the account: a saved one (template_id),
// one not saved (template, checked as a save would), or the one a message of the trigger in
// the language would use (trigger and language, as template.Choose picks for the booking).
func (a *API) preview(c *fiber.Ctx, o *fields.Object, v *fields.Violations) error {
	ctx, acct := c.UserContext(), account(c)
	booking, _ := o.Int("booking_id", fields.Int{Required: true, Min: 1, Max: maxID})
	sent := 0
	for _, m := range []string{"template_id", "template", "trigger"} {
		if o.Has(m) {
			sent++
		}
	}
	if sent != 1 {
		o.Add("template_id", "give one of template_id, template (a template not saved) or trigger and language")
	}
	var tpl template.Template
	var trig, lang string
	id := int64(0)
	switch {
	case o.Has("template_id"):
		id = templateID(o, nil, true)
	case o.Has("template"):
		tpl = decodeTemplate(o.Object("template", true))
		if v.Len() == 0 {
			validate(v, tpl)
		}
	case o.Has("trigger"):
		trig, _ = o.String("trigger", fields.Str{Required: true, OneOf: template.Triggers()})
		lang, _ = o.String("language", fields.Str{Required: true, OneOf: template.Languages(), IgnoreCase: true})
	}
	if err := v.Err(); err != nil {
		return err
	}
	if a.d.Previewer == nil {
		return httpapi.Unavailable("preview is not available: no booking reader")
	}
	out := previewAnswer{Source: "account"}
	switch {
	case id != 0:
		got, err := a.d.Templates.Get(ctx, acct, id)
		if err != nil {
			return templatesError(err, id)
		}
		tpl, out.TemplateID = got.Template, &got.ID
	case trig != "":
		var brand, property int64
		if a.d.Bookings != nil {
			b, err := a.d.Bookings.Get(ctx, acct, int64(booking))
			if err != nil {
				return err
			}
			if b != nil {
				brand, property = b.BrandID, b.PropertyID
			}
		}
		list, err := a.d.Templates.List(ctx, acct, store.TemplateFilter{Trigger: trig})
		if err != nil {
			return err
		}
		candidates := make([]template.Template, len(list))
		for i, x := range list {
			candidates[i] = x.Template
		}
		chosen, ok := template.Choose(candidates, trig, lang, brand, property)
		if !ok {
			return fmt.Errorf("message-template: no template for %s", trig)
		}
		tpl, out.Source = chosen, "default"
		if i := slices.Index(candidates, chosen); i >= 0 {
			out.Source, out.TemplateID = "account", &list[i].ID
		}
	}
	data, err := a.d.Previewer.Data(ctx, acct, int64(booking), tpl.Trigger, tpl.Language)
	switch {
	case errors.Is(err, ErrNoBooking):
		return notFound("booking " + strconv.Itoa(booking) + " does not exist")
	case err != nil:
		return err
	}
	r, err := template.Preview(ctx, tpl, data)
	var fe *template.FieldError
	switch {
	case errors.As(err, &fe) && fe.Line > 0:
		return httpapi.InvalidField(fe.Field, fmt.Sprintf("line %d: %s", fe.Line, fe.Message))
	case errors.As(err, &fe):
		return httpapi.InvalidField(fe.Field, fe.Message)
	case err != nil:
		return err
	}
	out.Subject, out.HTML, out.Text = r.Subject, r.HTML, r.Text
	return httpapi.A(c, out)
}
