package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vros/vros/libs/fields/fieldstest"
)

const templateBase = `{"action":"create","template":{"trigger":"stay.arrival","language":"en",
	"subject":"See you on {{date .Booking.Checkin}}","html":"<p>Dear {{.Guest.FirstName}},</p>\n<p>{{.Property.Name}} awaits.</p>","text":""}}`

func (e *env) templates(t *testing.T, account string) string {
	t.Helper()
	return fmt.Sprint(e.ok(t, account, "message-template", `{"action":"list"}`))
}

// TestTemplateRules: every rule of a template's fields, each refusal naming its path and
// changing nothing; a broken template is refused with its part and line.
func TestTemplateRules(t *testing.T) {
	e := newEnv(t)
	prepare := func(t *testing.T, acc string) {
		e.property(t, acc, 7)
		e.brand(t, acc, 3)
	}
	e.rows(t, "message-template", templateBase, prepare, e.templates, []row{
		{"valid", "", nil},
		{"valid with text and any case language", "", []fieldstest.Edit{set("template.language", "IT"), set("template.text", "Hi {{.Guest.FirstName}}")}},
		{"narrowed to the account's property and brand", "", []fieldstest.Edit{set("template.property_id", 7), set("template.brand_id", "3")}},
		{"no action", "action: is required", []fieldstest.Edit{set("action", nil)}},
		{"unknown action", "action: must be one of create, update, get, list, delete, preview", []fieldstest.Edit{set("action", "copy")}},
		{"no template", "template: is required", []fieldstest.Edit{set("template", nil)}},
		{"template not an object", "template: must be an object", []fieldstest.Edit{set("template", "x")}},
		{"no trigger", "template.trigger: is required", []fieldstest.Edit{set("template.trigger", "")}},
		{"unknown trigger", "template.trigger: must be one of booking.confirmed, booking.modified, booking.cancelled, payment.received, payment.failed, payment.due_soon, deposit.held, deposit.released, stay.arrival, stay.checkout, stay.thanks, owner.booking, owner.cancellation, owner.channel_conflict",
			[]fieldstest.Edit{set("template.trigger", "stay.arrivals")}},
		{"no language", "template.language: is required", []fieldstest.Edit{set("template.language", nil)}},
		{"unknown language", "template.language: must be one of en, it, es, fr, de, pt, nl", []fieldstest.Edit{set("template.language", "ja")}},
		{"negative brand", "template.brand_id: must be between 0 and 9007199254740992", []fieldstest.Edit{set("template.brand_id", -1)}},
		{"fractional property", "template.property_id: must be a whole number", []fieldstest.Edit{set("template.property_id", 1.5)}},
		{"no subject", "template.subject: is required", []fieldstest.Edit{set("template.subject", "  ")}},
		{"no html", "template.html: is required", []fieldstest.Edit{set("template.html", nil)}},
		{"every field at once", "template.trigger: is required\ntemplate.language: is required\ntemplate.subject: is required\ntemplate.html: is required",
			[]fieldstest.Edit{set("template", map[string]any{})}},
		{"html does not parse", "template.html: line 2: unexpected {{end}}",
			[]fieldstest.Edit{set("template.html", "<p>Hello</p>\n<p>{{end}}</p>")}},
		{"html reads a variable that is not there", `template.html: line 2: executing "html" at <.Guest.Nope>: can't evaluate field Nope in type template.Guest`,
			[]fieldstest.Edit{set("template.html", "<p>Hello</p>\n<p>{{.Guest.Nope}}</p>")}},
		{"subject calls printf", `template.subject: line 1: function "printf" is not allowed`,
			[]fieldstest.Edit{set("template.subject", `{{printf "%s" .Guest.FirstName}}`)}},
		{"text with a sub-template", "template.text: defines sub-templates (define, block): not allowed",
			[]fieldstest.Edit{set("template.text", `{{define "x"}}y{{end}}hi`)}},
		{"html too large", "template.html: is longer than 64 KiB", []fieldstest.Edit{set("template.html", strings.Repeat("a", 64<<10+1))}},
	})
}

func TestTemplateCRUD(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("crud")
	mt := "message-template"

	// A property or brand the account does not have: 404, nothing saved.
	e.refused(t, acc, mt, `{"action":"create","template":{"trigger":"stay.arrival","language":"en","subject":"s","html":"h","property_id":7}}`, 404, "property 7 does not exist")
	e.refused(t, acc, mt, `{"action":"create","template":{"trigger":"stay.arrival","language":"en","subject":"s","html":"h","brand_id":3}}`, 404, "brand 3 does not exist")
	e.property(t, acc, 7)
	e.brand(t, acc, 3)

	created := e.ok(t, acc, mt, templateBase)
	id := num(created["template_id"])
	if id != 1 || created["trigger"] != "stay.arrival" || created["language"] != "en" || created["text"] != "" || created["created_at"] == nil {
		t.Fatalf("created %v", created)
	}
	if got := e.ok(t, acc, mt, fmt.Sprintf(`{"action":"get","template":{"template_id":%d}}`, id)); fmt.Sprint(got) != fmt.Sprint(created) {
		t.Fatalf("get %v, want %v", got, created)
	}
	// The id at the top level does too.
	if got := e.ok(t, acc, mt, fmt.Sprintf(`{"action":"get","template_id":"%d"}`, id)); num(got["template_id"]) != id {
		t.Fatalf("get by the top-level id: %v", got)
	}

	// One per trigger, language, brand and property: 409 naming the one there.
	code, out, _ := e.call(t, acc, mt, templateBase)
	if code != 409 || !strings.Contains(fmt.Sprint(out["error_message"]), "template 1 is the account's template of stay.arrival in en") {
		t.Fatalf("a second template of the key: %d %v", code, out)
	}
	it := e.ok(t, acc, mt, strings.Replace(templateBase, `"language":"en"`, `"language":"it","property_id":7,"brand_id":3`, 1))
	if num(it["template_id"]) != 2 || num(it["property_id"]) != 7 || num(it["brand_id"]) != 3 {
		t.Fatalf("created %v", it)
	}

	// update replaces the template whole; onto another's key: 409.
	up := e.ok(t, acc, mt, `{"action":"update","template":{"template_id":2,"trigger":"stay.thanks","language":"it","subject":"Grazie","html":"<p>Grazie {{.Guest.FirstName}}</p>"}}`)
	if up["trigger"] != "stay.thanks" || num(up["property_id"]) != 0 || up["subject"] != "Grazie" || up["created_at"] != it["created_at"] {
		t.Fatalf("updated %v", up)
	}
	e.refused(t, acc, mt, `{"action":"update","template":{"template_id":2,"trigger":"stay.arrival","language":"en","subject":"s","html":"h"}}`, 409, "template 1 is")
	e.refused(t, acc, mt, `{"action":"update","template":{"template_id":9,"trigger":"stay.arrival","language":"de","subject":"s","html":"h"}}`, 404, "template 9 does not exist")
	code, out, _ = e.call(t, acc, mt, `{"action":"update","template":{"trigger":"stay.arrival","language":"de","subject":"s","html":"h"}}`)
	if code != 400 || violations(out) != "template.template_id: is required" {
		t.Fatalf("update without an id: %d %v", code, out)
	}

	// list: by id, filtered, paged.
	list := e.ok(t, acc, mt, `{"action":"list"}`)
	if num(list["total"]) != 2 || len(list["templates"].([]any)) != 2 || num(list["limit"]) != 50 {
		t.Fatalf("list %v", list)
	}
	if l := e.ok(t, acc, mt, `{"action":"list","trigger":"stay.thanks","language":"IT"}`); num(l["total"]) != 1 {
		t.Fatalf("list filtered %v", l)
	}
	if l := e.ok(t, acc, mt, `{"action":"list","page":2,"limit":1}`); num(l["total"]) != 2 || num(l["templates"].([]any)[0].(map[string]any)["template_id"]) != 2 {
		t.Fatalf("page 2 %v", l)
	}
	code, out, _ = e.call(t, acc, mt, `{"action":"list","limit":101,"trigger":"x"}`)
	if code != 400 || !strings.Contains(violations(out), "limit: must be between 1 and 100") || !strings.Contains(violations(out), "trigger: must be one of") {
		t.Fatalf("list rules: %d %v", code, violations(out))
	}

	// delete, then 404 for every action on the id.
	if d := e.ok(t, acc, mt, `{"action":"delete","template":{"template_id":1}}`); d["deleted"] != true || num(d["template_id"]) != 1 {
		t.Fatalf("delete %v", d)
	}
	e.refused(t, acc, mt, `{"action":"delete","template":{"template_id":1}}`, 404, "template 1 does not exist")
	e.refused(t, acc, mt, `{"action":"get","template_id":1}`, 404, "template 1 does not exist")
}

// TestTemplatePreview: a saved template, one not saved and the one a message would use,
// rendered with a real booking of the account; the guest's name escaped in the HTML.
func TestTemplatePreview(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("preview")
	mt := "message-template"
	e.property(t, acc, 7)
	e.brand(t, acc, 3)
	e.booking(t, acc, 42, 7, 3, "<script>alert(1)</script>")
	e.booking(t, acc, 43, 8, 0, "Ann")

	saved := e.ok(t, acc, mt, templateBase)
	p := e.ok(t, acc, mt, `{"action":"preview","booking_id":42,"template_id":1}`)
	if !strings.Contains(p["html"].(string), "Dear &lt;script&gt;alert(1)&lt;/script&gt;,") || strings.Contains(p["html"].(string), "<script>") {
		t.Fatalf("the guest's name is not escaped: %v", p["html"])
	}
	if p["source"] != "account" || num(p["template_id"]) != num(saved["template_id"]) || !strings.HasPrefix(p["subject"].(string), "See you on ") ||
		!strings.Contains(p["text"].(string), "Dear <script>alert(1)</script>,") {
		t.Fatalf("preview %v", p)
	}

	// Not saved: checked as a save is.
	p = e.ok(t, acc, mt, `{"action":"preview","booking_id":"43","template":{"trigger":"booking.confirmed","language":"it","subject":"Ciao {{.Guest.FirstName}}","html":"<b>ok</b>"}}`)
	if p["subject"] != "Ciao Ann" || p["source"] != "account" || p["template_id"] != nil {
		t.Fatalf("preview of a template not saved %v", p)
	}
	code, out, _ := e.call(t, acc, mt, `{"action":"preview","booking_id":43,"template":{"trigger":"booking.confirmed","language":"it","subject":"x","html":"<b>\n{{.Booking.Nope}}</b>"}}`)
	if code != 400 || violations(out) != `template.html: line 2: executing "html" at <.Booking.Nope>: can't evaluate field Nope in type template.Booking` {
		t.Fatalf("a broken template previewed: %d %v", code, violations(out))
	}

	// By trigger: the account's template of the booking's property and brand, else the
	// account's, else vros's default.
	narrowed := e.ok(t, acc, mt, `{"action":"create","template":{"trigger":"stay.arrival","language":"en","property_id":7,"subject":"Villa 7","html":"<p>7</p>"}}`)
	p = e.ok(t, acc, mt, `{"action":"preview","booking_id":42,"trigger":"stay.arrival","language":"en"}`)
	if p["subject"] != "Villa 7" || num(p["template_id"]) != num(narrowed["template_id"]) || p["source"] != "account" {
		t.Fatalf("preview by trigger for property 7: %v", p)
	}
	p = e.ok(t, acc, mt, `{"action":"preview","booking_id":43,"trigger":"stay.arrival","language":"en"}`)
	if num(p["template_id"]) != num(saved["template_id"]) {
		t.Fatalf("preview by trigger for property 8: %v", p)
	}
	p = e.ok(t, acc, mt, `{"action":"preview","booking_id":43,"trigger":"stay.thanks","language":"it"}`)
	if p["source"] != "default" || p["template_id"] != nil || p["subject"] == "" || p["html"] == "" {
		t.Fatalf("preview of vros's default: %v", p)
	}

	// Rules and 404s.
	e.refused(t, acc, mt, `{"action":"preview","booking_id":44,"template_id":1}`, 404, "booking 44 does not exist")
	e.refused(t, acc, mt, `{"action":"preview","booking_id":42,"template_id":99}`, 404, "template 99 does not exist")
	for body, want := range map[string]string{
		`{"action":"preview","template_id":1}`:                                      "booking_id: is required",
		`{"action":"preview","booking_id":42}`:                                      "template_id: give one of template_id, template (a template not saved) or trigger and language",
		`{"action":"preview","booking_id":42,"template_id":1,"trigger":"x"}`:        "template_id: give one of template_id, template (a template not saved) or trigger and language",
		`{"action":"preview","booking_id":42,"trigger":"stay.arrival"}`:             "language: is required",
		`{"action":"preview","booking_id":0,"trigger":"stay.arrival","language":1}`: "booking_id: must be between 1 and 9007199254740992\nlanguage: must be one of en, it, es, fr, de, pt, nl",
	} {
		code, out, _ := e.call(t, acc, mt, body)
		if code != 400 || violations(out) != want {
			t.Errorf("%s: %d %q, want %q", body, code, violations(out), want)
		}
	}
	// Another account's booking and template are not this account's.
	other := newAccount("preview-other")
	e.refused(t, other, mt, `{"action":"preview","booking_id":42,"trigger":"stay.arrival","language":"en"}`, 404, "booking 42 does not exist")
	e.booking(t, other, 42, 7, 3, "Bo")
	e.refused(t, other, mt, `{"action":"preview","booking_id":42,"template_id":1}`, 404, "template 1 does not exist")
}
