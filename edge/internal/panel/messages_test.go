package panel_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The Messages pages over plain HTTP against the stand-in for the services (money_test.go):
// each page's reads and each form's body as the /api/message-* resources take them, the
// service's refusals at their fields, escaping, CSRF and another account's ids.

const msgTriggers = `{"code":200,"data":{"triggers":[
{"trigger":"booking.confirmed","to":"guest","enabled":true,"scheduled":false},
{"trigger":"stay.arrival","to":"guest","enabled":true,"days":3,"time":"10:00","scheduled":true},
{"trigger":"owner.booking","to":"owner","enabled":false,"scheduled":false}]}}`

// messagesServices answers the reads every Messages page makes.
func messagesServices() *services {
	svc := &services{answers: map[string]reply{}}
	svc.set("message-trigger get", 200, msgTriggers)
	svc.set("account-settings", 200, `{"code":200,"data":{"timezone":"Europe/Rome","brands":[{"id":2,"name":"Sea <Brand>"}]}}`)
	svc.set("property list", 200, `{"code":200,"data":{"total":1,"properties":[{"property_id":"12","internal_code":"V1","name":"Villa <Rosa>"}]}}`)
	svc.set("listbooking", 200, `{"status":0,"data":{"totalRecords":2,"listBooking":[
{"bookingId":7,"firstName":"Ada","lastName":"<Lovelace>","propertyId":12,"propertyName":"Villa Rosa","checkin":"2027-07-01","checkout":"2027-07-08"},
{"bookingId":8,"firstName":"Alan","lastName":"Turing","propertyId":12,"propertyName":"Villa Rosa","checkin":"2027-08-01","checkout":"2027-08-03","cancellationDate":"2027-07-01 10:00:00"}]}}`)
	return svc
}

// calls counts the calls of name and action made so far.
func (s *services) count(name, action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.name == name && (action == "" || c.body["action"] == action) {
			n++
		}
	}
	return n
}

// TestMessageTemplatePages: the templates per trigger and language (the account's with
// their scope, else the default), a template made, refused with the error's line shown at
// its field and under it, edited, previewed unsaved with a booking (the HTML in a sandboxed
// frame, escaped into srcdoc), deleted; the preview page of what a trigger sends.
func TestMessageTemplatePages(t *testing.T) {
	svc := messagesServices()
	svc.set("message-template list", 200, `{"code":200,"data":{"templates":[
{"template_id":3,"trigger":"booking.confirmed","language":"it","brand_id":0,"property_id":12,"subject":"Ciao","html":"<p>Ciao</p>"},
{"template_id":4,"trigger":"booking.confirmed","language":"it","brand_id":2,"property_id":0,"subject":"Ciao","html":"<p>Ciao</p>"}]}}`)
	b, _ := moneyPanel(t, svc, nil)
	resp, page := b.do(t, http.MethodGet, "/panel/messages", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("messages: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the templates page", page, `aria-current="page">Messages`, `aria-current="page">Templates`,
		`<td class="msgcell" data-language="it">`, `<a href="/panel/messages/templates/3">property V1 · Villa &lt;Rosa&gt;</a>`,
		`<a href="/panel/messages/templates/4">brand Sea &lt;Brand&gt;</a>`, `<td class="msgcell default" data-language="en">`,
		`href="/panel/messages/preview?trigger=stay.arrival&amp;language=nl"`, `href="/panel/messages/templates/new?trigger=booking.confirmed&amp;language=en"`,
		`owner.booking<small class="block">switched off</small>`)
	if got := svc.last(t, "message-template", "list"); got != `{"action":"list","limit":100,"page":1}` {
		t.Errorf("templates listed with %s", got)
	}

	_, page = b.do(t, http.MethodGet, "/panel/messages/templates/new?trigger=stay.arrival&language=it", "", nil)
	wants(t, "the new template's form", page, `<option value="stay.arrival" selected>`, `<option value="it" selected>`,
		`<option value="12" >V1 · Villa &lt;Rosa&gt;</option>`, `<option value="2" >Sea &lt;Brand&gt;</option>`,
		`<option value="7" selected>7 · Ada &lt;Lovelace&gt; · Villa Rosa · 2027-07-01 to 2027-07-08</option>`, `2027-08-03 · cancelled`)
	tok := b.token(t, "/panel/messages")
	form := func(kv ...string) url.Values {
		f := url.Values{"_csrf": {tok}, "template[trigger]": {"stay.arrival"}, "template[language]": {"it"}, "template[brand_id]": {""},
			"template[property_id]": {"12"}, "template[subject]": {" Arrivo "}, "template[html]": {"<p>Ciao</p>\r\n<p>{{.Guest.Nope}}</p>"},
			"template[text]": {""}, "booking_id": {"7"}, "do": {"save"}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	svc.set("message-template create", 200, `{"code":200,"data":{"template_id":9,"trigger":"stay.arrival"}}`)
	resp, _ = b.post(t, "/panel/messages/templates/new", form())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/panel/messages/templates/9?ok=created" {
		t.Fatalf("create: HTTP %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got, want := svc.last(t, "message-template", "create"),
		`{"action":"create","template":{"brand_id":0,"html":"\u003cp\u003eCiao\u003c/p\u003e\n\u003cp\u003e{{.Guest.Nope}}\u003c/p\u003e","language":"it","property_id":12,"subject":"Arrivo","text":"","trigger":"stay.arrival"}}`; got != want {
		t.Errorf("create sent %s, want %s", got, want)
	}

	// Refused at save: the service's message at the HTML part, and the line it names under it.
	svc.set("message-template create", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field",
"errors":[{"field":"template.html","message":"line 2: executing \"html\" at <.Guest.Nope>: can't evaluate field Nope in type template.Guest"}]}`)
	resp, page = b.post(t, "/panel/messages/templates/new", form())
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("refused template: HTTP %d", resp.StatusCode)
	}
	wants(t, "the refused template", page,
		`<p class="error" id="f-template-html-err">line 2: executing &#34;html&#34; at &lt;.Guest.Nope&gt;: can&#39;t evaluate field Nope in type template.Guest</p>`,
		`aria-invalid="true" aria-describedby="f-template-html-err">&lt;p&gt;Ciao&lt;/p&gt;`, `<pre class="line" id="f-template-html-line" aria-label="Line 2">2 | &lt;p&gt;{{.Guest.Nope}}&lt;/p&gt;</pre>`,
		`name="template[subject]" type="text" value=" Arrivo "`, `<option value="12" selected>`, `Nothing was saved: request has 1 invalid field.`)
	if strings.Count(page, `<pre class="line"`) != 1 {
		t.Error("a line is shown under a part no violation names")
	}
	svc.set("message-template create", 409, `{"code":409,"error_type":"conflict","error_message":"a template of stay.arrival in it for property 12 exists: 3"}`)
	resp, page = b.post(t, "/panel/messages/templates/new", form())
	if resp.StatusCode != http.StatusConflict || !strings.Contains(page, "a template of stay.arrival in it for property 12 exists: 3") {
		t.Fatalf("duplicate template: HTTP %d", resp.StatusCode)
	}
	// The panel's own check: an id that is none.
	n := svc.count("message-template", "create")
	resp, page = b.post(t, "/panel/messages/templates/new", form("template[brand_id]", "x"))
	if resp.StatusCode != http.StatusBadRequest || svc.count("message-template", "create") != n {
		t.Fatalf("a brand id that is none: HTTP %d, sent", resp.StatusCode)
	}
	wants(t, "the brand refused", page, `id="f-template-brand_id-err">must be the id of one of yours, or empty for any`)

	// Edit: the stored template in the form; saved as an update of its id.
	svc.set("message-template get", 200, `{"code":200,"data":{"template_id":3,"trigger":"booking.confirmed","language":"it","property_id":12,
"subject":"Ciao {{.Guest.FirstName}}","html":"<p>Ciao</p>","text":"Ciao"}}`)
	_, page = b.do(t, http.MethodGet, "/panel/messages/templates/3", "", nil)
	wants(t, "the template's form", page, `<option value="booking.confirmed" selected>`, `value="Ciao {{.Guest.FirstName}}"`, `>&lt;p&gt;Ciao&lt;/p&gt;</textarea>`,
		`action="/panel/messages/templates/3" novalidate id="template-form" hx-boost="false"`, `Delete template 3`)
	if got := svc.last(t, "message-template", "get"); got != `{"action":"get","template":{"template_id":3}}` {
		t.Errorf("template read with %s", got)
	}
	svc.set("message-template update", 200, `{"code":200,"data":{"template_id":3}}`)
	resp, _ = b.post(t, "/panel/messages/templates/3", form("template[trigger]", "booking.confirmed"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/panel/messages/templates/3?ok=saved" {
		t.Fatalf("update: HTTP %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := svc.last(t, "message-template", "update"); !strings.Contains(got, `"template_id":3,"text":"","trigger":"booking.confirmed"`) {
		t.Errorf("update sent %s", got)
	}

	// Preview, unsaved: the form's template with the booking chosen; the HTML only in the
	// sandboxed frame's srcdoc, escaped.
	svc.set("message-template preview", 200, `{"code":200,"data":{"subject":"Arrivo <b>","html":"<p>Cara Ada</p><script>alert(1)</script>","text":"Cara Ada\n<b>","source":"account"}}`)
	resp, page = b.post(t, "/panel/messages/templates/3", form("do", "preview", "booking_id", "8"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("preview: HTTP %d %.300s", resp.StatusCode, page)
	}
	if got := svc.last(t, "message-template", "preview"); !strings.HasPrefix(got, `{"action":"preview","booking_id":8,"template":{"brand_id":0,`) {
		t.Errorf("preview sent %s", got)
	}
	wants(t, "the preview", page, `<iframe sandbox="" srcdoc="&lt;p&gt;Cara Ada&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`,
		`<span id="preview-subject">Arrivo &lt;b&gt;</span>`, `<pre class="body" id="preview-text">Cara Ada
&lt;b&gt;</pre>`, `Preview with booking 8`, `<option value="8" selected>`, `value=" Arrivo "`, `The template as typed, not saved`)
	if strings.Contains(page, "<script>alert") || svc.count("message-template", "update") != 1 {
		t.Error("the preview's HTML is drawn into the page, or the preview saved the template")
	}
	// A preview refused as the save is: at its field.
	svc.set("message-template preview", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field",
"errors":[{"field":"template.subject","message":"line 1: function \"nope\" not defined"}]}`)
	_, page = b.post(t, "/panel/messages/templates/3", form("do", "preview", "template[subject]", "{{nope}}"))
	wants(t, "the refused preview", page, `id="f-template-subject-err">line 1: function &#34;nope&#34; not defined`, `aria-label="Line 1 of the subject">1 | {{nope}}</pre>`)

	svc.set("message-template delete", 200, `{"code":200,"data":{"template_id":3}}`)
	resp, _ = b.post(t, "/panel/messages/templates/3/delete", url.Values{"_csrf": {tok}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/panel/messages?ok=deleted" {
		t.Fatalf("delete: HTTP %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := svc.last(t, "message-template", "delete"); got != `{"action":"delete","template":{"template_id":3}}` {
		t.Errorf("delete sent %s", got)
	}

	// The preview page: what the trigger sends in the language, vros's default here.
	svc.set("message-template preview", 200, `{"code":200,"data":{"subject":"Welcome","html":"<p>Dear Ada</p>","text":"Dear Ada","source":"default"}}`)
	resp, page = b.do(t, http.MethodGet, "/panel/messages/preview?trigger=stay.arrival&language=it&booking_id=7", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("preview page: HTTP %d %.300s", resp.StatusCode, page)
	}
	if got := svc.last(t, "message-template", "preview"); got != `{"action":"preview","booking_id":7,"language":"it","trigger":"stay.arrival"}` {
		t.Errorf("preview page asked %s", got)
	}
	wants(t, "the preview page", page, `vros's default template`, `srcdoc="&lt;p&gt;Dear Ada&lt;/p&gt;"`, `<option value="stay.arrival" selected>`)
	svc.set("message-template preview", 200, `{"code":200,"data":{"subject":"S","html":"<p>x</p>","text":"x","source":"account","template_id":4}}`)
	_, page = b.do(t, http.MethodGet, "/panel/messages/preview?template_id=4&booking_id=7", "", nil)
	wants(t, "a template's preview", page, `Your template <a href="/panel/messages/templates/4">4</a>`)
	// The preview's own styles, and only they, are allowed by the page's policy (the frame
	// takes it): by their hashes.
	svc.set("message-template preview", 200, `{"code":200,"data":{"subject":"S","html":"<p style=\"color:red\">x</p>","text":"x","source":"default"}}`)
	resp, _ = b.do(t, http.MethodGet, "/panel/messages/preview?template_id=4&booking_id=7", "", nil)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'self' 'unsafe-hashes' 'sha256-") ||
		!strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("the preview's policy: %s", csp)
	}
	if got := svc.last(t, "message-template", "preview"); got != `{"action":"preview","booking_id":7,"template_id":4}` {
		t.Errorf("a template's preview asked %s", got)
	}

	// Another account's booking or template: the service's 404 is the not-found page.
	svc.set("message-template preview", 404, `{"code":404,"error_type":"not_found","error_message":"booking 99 does not exist"}`)
	resp, page = b.do(t, http.MethodGet, "/panel/messages/preview?trigger=stay.arrival&language=it&booking_id=99", "", nil)
	if resp.StatusCode != http.StatusNotFound || strings.Contains(page, "booking 99") {
		t.Errorf("another account's booking: HTTP %d", resp.StatusCode)
	}
	svc.set("message-template get", 404, `{"code":404,"error_type":"not_found","error_message":"template 5 does not exist"}`)
	if resp, _ = b.do(t, http.MethodGet, "/panel/messages/templates/5", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another account's template: HTTP %d", resp.StatusCode)
	}
	svc.set("message-template delete", 404, `{"code":404,"error_type":"not_found","error_message":"template 5 does not exist"}`)
	if resp, _ = b.post(t, "/panel/messages/templates/5/delete", url.Values{"_csrf": {tok}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another account's template deleted: HTTP %d", resp.StatusCode)
	}

	// A form without the session's token changes nothing.
	n = svc.count("message-template", "")
	for _, path := range []string{"/panel/messages/templates/new", "/panel/messages/templates/3", "/panel/messages/templates/3/delete"} {
		f := form()
		f.Del("_csrf")
		if resp, _ := b.post(t, path, f); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s without a token: HTTP %d", path, resp.StatusCode)
		}
	}
	if svc.count("message-template", "") != n {
		t.Error("a form without its token reached the service")
	}
}

// TestMessageTriggersPage: each trigger on or off, a scheduled one's days and time; the
// update sends them all; the service's refusals at the row's fields.
func TestMessageTriggersPage(t *testing.T) {
	svc := messagesServices()
	b, _ := moneyPanel(t, svc, nil)
	resp, page := b.do(t, http.MethodGet, "/panel/messages/triggers", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("triggers: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the triggers page", page, `name="triggers[0][enabled]" value="1" checked`, `name="triggers[2][enabled]" value="1" >`,
		`name="triggers[1][days]" type="number" value="3"`, `name="triggers[1][time]" type="time" value="10:00"`,
		`<input type="hidden" name="triggers[1][scheduled]" value="1">`, `aria-current="page">Triggers`)
	tok := b.token(t, "/panel/messages/triggers")
	f := url.Values{"_csrf": {tok}, "triggers[0][trigger]": {"booking.confirmed"}, "triggers[1][trigger]": {"stay.arrival"},
		"triggers[1][scheduled]": {"1"}, "triggers[1][enabled]": {"1"}, "triggers[1][days]": {"5"}, "triggers[1][time]": {"09:30"},
		"triggers[2][trigger]": {"owner.booking"}, "triggers[2][enabled]": {"1"}}
	svc.set("message-trigger update", 200, msgTriggers)
	resp, _ = b.post(t, "/panel/messages/triggers", f)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/panel/messages/triggers?ok=saved" {
		t.Fatalf("update: HTTP %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got, want := svc.last(t, "message-trigger", "update"), `{"action":"update","triggers":[{"enabled":false,"trigger":"booking.confirmed"},`+
		`{"days":5,"enabled":true,"time":"09:30","trigger":"stay.arrival"},{"enabled":true,"trigger":"owner.booking"}]}`; got != want {
		t.Errorf("update sent %s, want %s", got, want)
	}
	// The service's refusals, by the form's path or by the trigger's name.
	f.Set("triggers[1][days]", "61")
	f.Set("triggers[1][time]", "25:00")
	svc.set("message-trigger update", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 2 invalid fields",
"errors":[{"field":"triggers[1].days","message":"stay.arrival.days must be 0 to 60"},{"field":"stay.arrival.time","message":"must be a 24-hour time HH:MM"}]}`)
	resp, page = b.post(t, "/panel/messages/triggers", f)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("refused: HTTP %d", resp.StatusCode)
	}
	wants(t, "the refused triggers", page, `id="f-stay-arrival-triggers-1-days-err">stay.arrival.days must be 0 to 60`,
		`id="f-stay-arrival-triggers-1-time-err">must be a 24-hour time HH:MM`, `value="61"`, `value="25:00"`)
	// The panel's own check: days that are no number are not sent.
	n := svc.count("message-trigger", "update")
	f.Set("triggers[1][days]", "three")
	if resp, page = b.post(t, "/panel/messages/triggers", f); resp.StatusCode != http.StatusBadRequest || svc.count("message-trigger", "update") != n {
		t.Fatalf("days not a number: HTTP %d", resp.StatusCode)
	}
	wants(t, "days not a number", page, `-days-err">must be a whole number of days`)
}

// TestMessageLogPage: the delivery log's filters sent as the list's, each message's status,
// attempts, answer and opens; the pages; a filter refused by the panel is not sent; one
// message whole.
func TestMessageLogPage(t *testing.T) {
	svc := messagesServices()
	svc.set("message-log list", 200, `{"code":200,"data":{"total":51,"page":1,"limit":50,"messages":[
{"message_id":"acc:stay.arrival:7:2027-06-28T10:00","trigger":"stay.arrival","booking_id":7,"property_id":12,"to":"guest","address":"ada@example.com",
 "language":"it","subject":"Arrivo <presto>","status":"failed","attempts":12,"send_at":"2027-06-28T08:00:00Z","answer":"550 5.1.1 <no such user>","opens":0},
{"message_id":"acc:booking.confirmed:7:once","trigger":"booking.confirmed","booking_id":7,"to":"guest","address":"ada@example.com","status":"sent",
 "attempts":1,"send_at":"2027-01-02T10:00:00Z","sent_at":"2027-01-02T10:00:03Z","answer":"250 2.0.0 Ok: queued","opens":2}]}}`)
	b, _ := moneyPanel(t, svc, nil)
	resp, page := b.do(t, http.MethodGet, "/panel/messages/log?booking_id=7&trigger=stay.arrival&status=failed&address=ada%40example.com", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("log: HTTP %d %.300s", resp.StatusCode, page)
	}
	if got, want := svc.last(t, "message-log", "list"), `{"action":"list","address":"ada@example.com","booking_id":7,"limit":50,"page":1,"status":"failed","trigger":"stay.arrival"}`; got != want {
		t.Errorf("log listed with %s, want %s", got, want)
	}
	wants(t, "the log", page, `data-status="failed"`, `<strong>failed</strong></td><td>12</td>`, `550 5.1.1 &lt;no such user&gt;`, `Arrivo &lt;presto&gt;`,
		`<a href="/panel/bookings/7">7</a>`, `2027-06-28 08:00:00`, `<td class="answer">250 2.0.0 Ok: queued</td><td>2</td>`,
		`href="/panel/messages/message?id=acc%3astay.arrival%3a7%3a2027-06-28T10%3a00"`, `<option value="failed" selected>`,
		`<option value="stay.arrival" selected>`, `name="booking_id" type="number" value="7"`, `51 messages.`,
		`href="/panel/messages/log?booking_id=7&amp;trigger=stay.arrival&amp;status=failed&amp;address=ada%40example.com&amp;page=2" id="older"`)
	n := svc.count("message-log", "list")
	resp, page = b.do(t, http.MethodGet, "/panel/messages/log?status=lost&booking_id=x", "", nil)
	if resp.StatusCode != http.StatusBadRequest || svc.count("message-log", "list") != n {
		t.Fatalf("bad filters: HTTP %d", resp.StatusCode)
	}
	wants(t, "bad filters", page, `id="f-status-err">must be one of scheduled, pending`, `id="f-booking_id-err">must be a booking&#39;s id`)

	svc.set("message-log get", 200, `{"code":200,"data":{"message_id":"acc:booking.confirmed:7:once","trigger":"booking.confirmed","booking_id":7,"to":"guest",
"address":"ada@example.com","status":"sent","attempts":1,"answer":"250 2.0.0 Ok","opens":2,"smtp_message_id":"<vros.0123@example.com>","send_at":"2027-01-02T10:00:00Z"}}`)
	resp, page = b.do(t, http.MethodGet, "/panel/messages/message?id=acc%3Abooking.confirmed%3A7%3Aonce", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("message: HTTP %d", resp.StatusCode)
	}
	if got := svc.last(t, "message-log", "get"); got != `{"action":"get","message_id":"acc:booking.confirmed:7:once"}` {
		t.Errorf("message read with %s", got)
	}
	wants(t, "the message", page, `&lt;vros.0123@example.com&gt;`, `<dd><strong>sent</strong></dd>`, `href="/panel/messages/log?booking_id=7"`)
	// The booking's page leads to its messages.
	_, page = b.do(t, http.MethodGet, "/panel/bookings/7", "", nil)
	wants(t, "the booking page", page, `<a href="/panel/messages/log?booking_id=7" id="booking-messages">`)
	svc.set("message-log get", 404, `{"code":404,"error_type":"not_found","error_message":"message x does not exist"}`)
	if resp, _ = b.do(t, http.MethodGet, "/panel/messages/message?id=other:booking.confirmed:1:once", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another account's message: HTTP %d", resp.StatusCode)
	}
}

// TestMessagingSettingsPage: the settings as stored (the SMTP password never drawn: only
// whether one is set); the update with the account's own server keeps the password when
// none is typed, clears it when asked, or uses the operator's server; the service's
// refusal of an address at the addresses' field; a test message's answer shown.
func TestMessagingSettingsPage(t *testing.T) {
	svc := messagesServices()
	svc.set("messaging-settings get", 200, `{"code":200,"data":{"from_name":"Villa <Rosa>","from_address":"stay@rosa.example","reply_to":"",
"notify":["me@rosa.example","ops@rosa.example"],"smtp":{"host":"smtp.rosa.example","port":587,"username":"stay","tls":"starttls"},"smtp_password_set":true}}`)
	b, _ := moneyPanel(t, svc, nil)
	resp, page := b.do(t, http.MethodGet, "/panel/messages/settings", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("settings: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the settings", page, `value="Villa &lt;Rosa&gt;"`, ">me@rosa.example\nops@rosa.example</textarea>", `name="smtp_mode" value="own" checked`,
		`name="smtp[host]" type="text" value="smtp.rosa.example"`, `name="smtp[port]" type="number" value="587"`,
		`<option value="starttls" selected>`, `name="smtp[password]" type="password" value=""`, `A password is set`, `name="clear_password"`)
	if got := svc.last(t, "messaging-settings", "get"); got != `{"action":"get"}` {
		t.Errorf("settings read with %s", got)
	}
	tok := b.token(t, "/panel/messages/settings")
	f := url.Values{"_csrf": {tok}, "from_name": {"Rosa"}, "from_address": {"stay@rosa.example"}, "reply_to": {""},
		"notify": {"me@rosa.example\r\n\r\n ops@rosa.example \r\n"}, "smtp_mode": {"own"}, "smtp[host]": {"smtp.rosa.example"},
		"smtp[port]": {"465"}, "smtp[username]": {"stay"}, "smtp[password]": {""}, "smtp[tls]": {"tls"}}
	svc.set("messaging-settings update", 200, `{"code":200,"data":{}}`)
	for _, tc := range []struct {
		name string
		set  map[string]string
		want string
	}{
		{"the password kept", nil, `{"action":"update","from_address":"stay@rosa.example","from_name":"Rosa","notify":["me@rosa.example","ops@rosa.example"],"reply_to":"","smtp":{"host":"smtp.rosa.example","port":465,"tls":"tls","username":"stay"}}`},
		{"a new password", map[string]string{"smtp[password]": "s3cret"}, `"smtp":{"host":"smtp.rosa.example","password":"s3cret","port":465,"tls":"tls","username":"stay"}`},
		{"the password cleared", map[string]string{"clear_password": "1"}, `"smtp":{"host":"smtp.rosa.example","password":"","port":465,"tls":"tls","username":"stay"}`},
		{"the operator's server", map[string]string{"smtp_mode": "default"}, `"smtp":null`},
	} {
		g := url.Values{}
		for k, v := range f {
			g[k] = v
		}
		for k, v := range tc.set {
			g.Set(k, v)
		}
		resp, _ := b.post(t, "/panel/messages/settings", g)
		if got := svc.last(t, "messaging-settings", "update"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(got, tc.want) {
			t.Errorf("%s: HTTP %d, sent %s, want %s", tc.name, resp.StatusCode, got, tc.want)
		}
	}
	svc.set("messaging-settings update", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field",
"errors":[{"field":"notify[1]","message":"must be an email address"}]}`)
	g := url.Values{}
	for k, v := range f {
		g[k] = v
	}
	g.Set("smtp[password]", "typed-secret")
	resp, page = b.post(t, "/panel/messages/settings", g)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("refused settings: HTTP %d", resp.StatusCode)
	}
	wants(t, "the refused settings", page, `id="f-notify-err">address 2: must be an email address`, `value="Rosa"`)
	if strings.Contains(page, "typed-secret") {
		t.Error("a typed password is drawn back into the page")
	}
	n := svc.count("messaging-settings", "update")
	g.Set("smtp[port]", "x")
	if resp, page = b.post(t, "/panel/messages/settings", g); resp.StatusCode != http.StatusBadRequest || svc.count("messaging-settings", "update") != n {
		t.Fatalf("a port that is none: HTTP %d", resp.StatusCode)
	}
	wants(t, "a port that is none", page, `id="f-smtp-port-err">must be a port number`)

	svc.set("messaging-settings test", 200, `{"code":200,"data":{"ok":true,"answer":"250 2.0.0 Ok: queued as <1>"}}`)
	resp, page = b.post(t, "/panel/messages/settings/test", url.Values{"_csrf": {tok}, "test[address]": {"me@rosa.example"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("test: HTTP %d", resp.StatusCode)
	}
	if got := svc.last(t, "messaging-settings", "test"); got != `{"action":"test","address":"me@rosa.example"}` {
		t.Errorf("test sent %s", got)
	}
	wants(t, "the test's answer", page, `class="notice" role="status" id="test-outcome">The mail server accepted the test message: <code>250 2.0.0 Ok: queued as &lt;1&gt;</code>`,
		`name="test[address]" type="email" value="me@rosa.example"`)
	svc.set("messaging-settings test", 200, `{"code":200,"data":{"ok":false,"error":"535 5.7.8 authentication failed"}}`)
	_, page = b.post(t, "/panel/messages/settings/test", url.Values{"_csrf": {tok}, "test[address]": {"me@rosa.example"}})
	wants(t, "the test's error", page, `class="problem" role="status" id="test-outcome">The test message was not sent: <code>535 5.7.8 authentication failed</code>`)
	svc.set("messaging-settings test", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field","errors":[{"field":"address","message":"must be an email address"}]}`)
	_, page = b.post(t, "/panel/messages/settings/test", url.Values{"_csrf": {tok}, "test[address]": {"nope"}})
	wants(t, "the test refused", page, `id="f-test-address-err">must be an email address`, `value="nope"`)
}

// TestSuppressionsPage: the suppressed addresses, one removed.
func TestSuppressionsPage(t *testing.T) {
	svc := messagesServices()
	svc.set("message-suppression list", 200, `{"code":200,"data":{"suppressions":[{"address":"gone@example.com","reason":"550 5.1.1 <no such user>",
"message_id":"acc:booking.confirmed:7:once","created_at":"2027-01-02T10:00:04Z"}]}}`)
	b, _ := moneyPanel(t, svc, nil)
	resp, page := b.do(t, http.MethodGet, "/panel/messages/suppressions", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("suppressions: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the suppressions", page, `<tr data-address="gone@example.com">`, `550 5.1.1 &lt;no such user&gt;`, `2027-01-02 10:00:04`,
		`<input type="hidden" name="address" value="gone@example.com">`)
	tok := b.token(t, "/panel/messages/suppressions")
	svc.set("message-suppression delete", 200, `{"code":200,"data":{"address":"gone@example.com"}}`)
	resp, _ = b.post(t, "/panel/messages/suppressions", url.Values{"_csrf": {tok}, "address": {"gone@example.com"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/panel/messages/suppressions?ok=unsuppressed" {
		t.Fatalf("remove: HTTP %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := svc.last(t, "message-suppression", "delete"); got != `{"action":"delete","address":"gone@example.com"}` {
		t.Errorf("remove sent %s", got)
	}
	svc.set("message-suppression delete", 404, `{"code":404,"error_type":"not_found","error_message":"not on the list"}`)
	if resp, _ = b.post(t, "/panel/messages/suppressions", url.Values{"_csrf": {tok}, "address": {"x@example.com"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an address not on the list: HTTP %d", resp.StatusCode)
	}
}

// TestTemplatesReadInPages: the templates and the suppressed addresses are read page after
// page of 100 until the total.
func TestTemplatesReadInPages(t *testing.T) {
	svc := messagesServices()
	var items, sups []string
	for i := range 100 {
		items = append(items, fmt.Sprintf(`{"template_id":%d,"trigger":"stay.arrival","language":"en","property_id":12}`, i+1))
		sups = append(sups, fmt.Sprintf(`{"address":"a%d@example.com"}`, i))
	}
	svc.set("message-template list", 200, `{"code":200,"data":{"total":150,"page":1,"limit":100,"templates":[`+strings.Join(items, ",")+`]}}`)
	svc.set("message-suppression list", 200, `{"code":200,"data":{"total":201,"suppressions":[`+strings.Join(sups, ",")+`]}}`)
	b, _ := moneyPanel(t, svc, nil)
	if resp, _ := b.do(t, http.MethodGet, "/panel/messages", "", nil); resp.StatusCode != http.StatusOK || svc.count("message-template", "list") != 2 {
		t.Errorf("templates: HTTP %d, %d pages read", resp.StatusCode, svc.count("message-template", "list"))
	}
	if got := svc.last(t, "message-template", "list"); got != `{"action":"list","limit":100,"page":2}` {
		t.Errorf("the last page asked with %s", got)
	}
	if resp, _ := b.do(t, http.MethodGet, "/panel/messages/suppressions", "", nil); resp.StatusCode != http.StatusOK || svc.count("message-suppression", "list") != 3 {
		t.Errorf("suppressions: HTTP %d, %d pages read", resp.StatusCode, svc.count("message-suppression", "list"))
	}
}
