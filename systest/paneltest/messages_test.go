package paneltest

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/vros/vros/testkit/eventually"
)

// TestMessagePagesReachTheService: the Messages pages (docs/panel.md, "Messages") against the
// whole vros, messaging-svc among it. A template with an error is refused at its field with
// its line; fixed, it is saved and read back through /api/message-template; previewed unsaved
// with a real booking of the account whose guest's name holds markup, the name arrives escaped
// inside the sandboxed frame; the preview page says which template a trigger uses; a
// trigger's days and time, and the settings (the SMTP password never shown back), are read
// back through the API; the delivery log lists the booking's confirmation; the suppression
// list is shown; another account's template is not found.
func TestMessagePagesReachTheService(t *testing.T) {
	o := newOwner(t)
	s := signIn(t, o.Email, o.Password)
	mustPost := func(path string, want int, kv ...string) string {
		t.Helper()
		code, body := s.post(t, path, s.form(kv...))
		if code != want {
			t.Fatalf("POST %s: HTTP %d, want %d: %.800s", path, code, want, body)
		}
		return body
	}
	mustGet := func(path string) string {
		t.Helper()
		code, body := s.get(t, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d: %.800s", path, code, body)
		}
		return body
	}
	id := o.bookAs(t, "<b>Ada</b>", day(40), day(43))

	page := mustGet("/panel/messages")
	for _, want := range []string{`<tr data-trigger="booking.confirmed">`, `<tr data-trigger="stay.arrival">`, `<td class="msgcell default" data-language="it">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the templates page lacks %s", want)
		}
	}

	// Refused at save: the line of the error under the HTML part.
	tpl := []string{"template[trigger]", "booking.confirmed", "template[language]", "en", "template[brand_id]", "", "template[property_id]", "",
		"template[subject]", "Welcome {{.Guest.FirstName}}", "template[html]", "<p>Dear {{.Guest.FirstName}},</p>\n<p>{{.Guest.Nope}}</p>",
		"template[text]", "", "booking_id", fmt.Sprint(id)}
	page = mustPost("/panel/messages/templates/new", http.StatusBadRequest, append(tpl, "do", "save")...)
	for _, want := range []string{`<p class="error" id="f-template-html-err">line 2: `, `Nope`, `<pre class="line" id="f-template-html-line" aria-label="Line 2">2 | &lt;p&gt;{{.Guest.Nope}}&lt;/p&gt;</pre>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the refused template lacks %s: %.1500s", want, page)
		}
	}
	tpl[11] = "<p>Dear {{.Guest.FirstName}}, your stay at {{.Property.Name}} is booked.</p>"

	// Previewed unsaved with the booking: the guest's name escaped by the template, then
	// escaped again into the frame's srcdoc.
	page = mustPost("/panel/messages/templates/new", http.StatusOK, append(tpl, "do", "preview")...)
	inner := "Dear " + html.EscapeString(html.EscapeString("<b>Ada</b>"))
	for _, want := range []string{`<iframe sandbox="" srcdoc="&lt;p&gt;` + inner, `The template as typed, not saved`,
		fmt.Sprintf("Preview with booking %d", id), `<span id="preview-subject">Welcome &lt;b&gt;Ada&lt;/b&gt;</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the preview lacks %s: %.3000s", want, page)
		}
	}
	if strings.Contains(page, "<b>Ada") {
		t.Error("the guest's name is markup in the page")
	}
	mustPost("/panel/messages/templates/new", http.StatusSeeOther, append(tpl, "do", "save")...)
	var list struct {
		Data struct {
			Templates []struct {
				TemplateID int64  `json:"template_id"`
				Trigger    string `json:"trigger"`
				HTML       string `json:"html"`
			} `json:"templates"`
		} `json:"data"`
	}
	o.a(t, "message-template", `{"action":"list"}`, &list)
	if len(list.Data.Templates) != 1 || list.Data.Templates[0].HTML != tpl[11] {
		t.Fatalf("templates read back: %+v", list.Data.Templates)
	}
	tid := list.Data.Templates[0].TemplateID
	page = mustGet(fmt.Sprintf("/panel/messages/preview?trigger=booking.confirmed&language=en&booking_id=%d", id))
	if want := fmt.Sprintf(`Your template <a href="/panel/messages/templates/%d">`, tid); !strings.Contains(page, want) {
		t.Errorf("the preview page does not say the account's template is used: %.2000s", page)
	}
	page = mustGet(fmt.Sprintf("/panel/messages/preview?trigger=stay.arrival&language=it&booking_id=%d", id))
	if !strings.Contains(page, "vros's default template") || !strings.Contains(page, `<iframe sandbox="" srcdoc="`) {
		t.Errorf("the default's preview: %.2000s", page)
	}

	// A trigger's days and time.
	page = mustGet("/panel/messages/triggers")
	var rows []string
	for i := 0; strings.Contains(page, fmt.Sprintf(`name="triggers[%d][trigger]"`, i)); i++ {
		rows = append(rows, fmt.Sprintf("triggers[%d]", i))
	}
	form := []string{}
	arrival := ""
	for i, r := range rows {
		name := regexpFind(t, `name="`+strings.NewReplacer("[", `\[`, "]", `\]`).Replace(r)+`\[trigger\]" value="([^"]+)"`, page)
		form = append(form, r+"[trigger]", name, r+"[enabled]", "1")
		if strings.Contains(page, `name="`+r+`[scheduled]"`) {
			form = append(form, r+"[scheduled]", "1", r+"[days]", "2", r+"[time]", "09:30")
			if name == "stay.arrival" {
				arrival = rows[i]
			}
		}
	}
	if arrival == "" {
		t.Fatalf("no stay.arrival row with days: %.2000s", page)
	}
	// A refusal at its field first.
	bad := append(append([]string{}, form...), arrival+"[days]", "61")
	page = mustPost("/panel/messages/triggers", http.StatusBadRequest, bad...)
	if !strings.Contains(page, "-days-err") || !strings.Contains(page, `value="61"`) {
		t.Errorf("61 days not refused at the field: %.2000s", page)
	}
	mustPost("/panel/messages/triggers", http.StatusSeeOther, form...)
	var trig struct {
		Data struct {
			Triggers []struct {
				Trigger string `json:"trigger"`
				Enabled bool   `json:"enabled"`
				Days    *int   `json:"days"`
				Time    string `json:"time"`
			} `json:"triggers"`
		} `json:"data"`
	}
	o.a(t, "message-trigger", `{"action":"get"}`, &trig)
	found := false
	for _, tr := range trig.Data.Triggers {
		if tr.Trigger == "stay.arrival" {
			found = tr.Enabled && tr.Days != nil && *tr.Days == 2 && tr.Time == "09:30"
		}
	}
	if !found {
		t.Errorf("triggers read back: %+v", trig.Data.Triggers)
	}

	// Settings: the account's own server with a password, never shown back; then the
	// operator's again.
	settings := []string{"from_name", "Villa <Rosa>", "from_address", "stay@rosa.example", "reply_to", "", "notify", "me@rosa.example\nops@rosa.example",
		"smtp_mode", "own", "smtp[host]", "smtp.rosa.example", "smtp[port]", "587", "smtp[username]", "stay", "smtp[password]", "pw-never-shown", "smtp[tls]", "starttls"}
	mustPost("/panel/messages/settings", http.StatusSeeOther, settings...)
	page = mustGet("/panel/messages/settings")
	if strings.Contains(page, "pw-never-shown") || !strings.Contains(page, "A password is set") || !strings.Contains(page, `value="smtp.rosa.example"`) {
		t.Errorf("the settings page: %.3000s", page)
	}
	var got map[string]any
	o.a(t, "messaging-settings", `{"action":"get"}`, &got)
	js, _ := json.Marshal(got)
	if strings.Contains(string(js), "pw-never-shown") || !strings.Contains(string(js), `"smtp_password_set":true`) ||
		!strings.Contains(string(js), `"notify":["me@rosa.example","ops@rosa.example"]`) || !strings.Contains(string(js), `"from_name":"Villa \u003cRosa\u003e"`) {
		t.Errorf("settings read back: %s", js)
	}
	page = mustPost("/panel/messages/settings", http.StatusBadRequest, append(settings, "notify", "me@rosa.example\nnot-an-address")...)
	if !strings.Contains(page, `id="f-notify-err">address 2: `) {
		t.Errorf("a wrong address not refused at the field: %.2000s", page)
	}
	mustPost("/panel/messages/settings", http.StatusSeeOther, append(settings, "smtp_mode", "default")...)
	o.a(t, "messaging-settings", `{"action":"get"}`, &got)
	if got["data"].(map[string]any)["smtp"] != nil {
		t.Errorf("the operator's server not chosen again: %v", got)
	}

	// A test message: the transport's answer or why it failed, on the page (this stack has no
	// operator's mail server: it fails, saying so).
	page = mustPost("/panel/messages/settings/test", http.StatusOK, "test[address]", "me@rosa.example")
	if !strings.Contains(page, `id="test-outcome"`) || !strings.Contains(page, `name="test[address]" type="email" value="me@rosa.example"`) {
		t.Errorf("the test's outcome: %.3000s", page)
	}
	page = mustPost("/panel/messages/settings/test", http.StatusBadRequest, "test[address]", "not-an-address")
	if !strings.Contains(page, `id="f-test-address-err"`) {
		t.Errorf("a wrong test address not refused at its field: %.3000s", page)
	}

	// The delivery log: the booking's confirmation, planned from its event.
	eventually.Holds(t, "the log lists the booking's confirmation", viewsWithin, func() bool {
		_, page = s.get(t, fmt.Sprintf("/panel/messages/log?booking_id=%d", id))
		return strings.Contains(page, fmt.Sprintf(`data-message="%s:booking.confirmed:%d:once"`, o.AccountID, id))
	})
	mustGet("/panel/messages/suppressions")

	// Another account's template is not found, and stays as it is.
	other := newOwner(t)
	s2 := signIn(t, other.Email, other.Password)
	if code, _ := s2.get(t, fmt.Sprintf("/panel/messages/templates/%d", tid)); code != http.StatusNotFound {
		t.Errorf("another account's template: HTTP %d", code)
	}
	if code, _ := s2.post(t, fmt.Sprintf("/panel/messages/templates/%d/delete", tid), s2.form()); code != http.StatusNotFound {
		t.Errorf("another account's template deleted: HTTP %d", code)
	}
	o.a(t, "message-template", `{"action":"list"}`, &list)
	if len(list.Data.Templates) != 1 {
		t.Errorf("the template after another account's delete: %+v", list.Data.Templates)
	}
}

// bookAs makes a booking through interface B for a guest of that first name, once
// booking-svc's view has the property.
func (o owner) bookAs(t *testing.T, first, checkin, checkout string) int64 {
	t.Helper()
	var id int64
	eventually.Holds(t, "booking-svc takes the booking", viewsWithin, func() bool {
		a := b(t, o.Key, o.Pass, "create", map[string]any{"propertyId": o.PID, "firstName": first, "lastName": "Lovelace",
			"email": "ada@example.com", "numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout})
		if a.Status != 0 {
			if a.Status != 16 && !strings.Contains(a.Message, "no rates") {
				t.Fatalf("create %s..%s: %d %s", checkin, checkout, a.Status, a.Message)
			}
			return false
		}
		var d struct {
			BookingID int64 `json:"bookingId"`
		}
		_ = json.Unmarshal(a.Data, &d)
		id = d.BookingID
		return true
	})
	return id
}

// TestMessagePagesInTheBrowser (Chromium): a template written on its page and previewed with
// a real booking before it is saved (the HTML in the sandboxed frame, no script error),
// then saved: the templates page lists it; the delivery log. Screenshots of each page.
func TestMessagePagesInTheBrowser(t *testing.T) {
	o := newOwner(t)
	id := o.bookAs(t, "Ada", day(50), day(52))
	p := signInBrowser(t, o)
	p.open("/panel/messages/templates/new?trigger=booking.confirmed&language=en")
	p.expect("h1", "New message template")
	p.fill("template[subject]", "Welcome {{.Guest.FirstName}}",
		"template[html]", `<p style="color:#0b4f9c">Dear {{.Guest.FirstName}},</p><p>your stay at {{.Property.Name}} from {{date .Booking.Checkin}} is booked.</p>`)
	p.press("Preview, without saving")
	p.expect("#preview-subject", "Welcome Ada")
	p.expect("#preview-h", fmt.Sprintf("Preview with booking %d", id))
	p.expect("#preview-text", "Dear Ada,")
	p.shot("message-template")
	// A full-page capture leaves the sandboxed frame (drawn out of process) blank below the
	// window: the preview is photographed in the window.
	p.do(chromedp.ScrollIntoView("#preview-h"))
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "message-preview.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	p.press("Add template")
	p.expect(".notice", "Created.")
	p.open("/panel/messages")
	p.expect(`tr[data-trigger="booking.confirmed"] td[data-language="en"]`, "every booking")
	p.shot("messages")
	// The confirmation is planned from the booking's event: once the API lists it, the
	// page does.
	eventually.Holds(t, "the booking's confirmation is planned", viewsWithin, func() bool {
		var log struct {
			Data struct{ Total int } `json:"data"`
		}
		o.a(t, "message-log", fmt.Sprintf(`{"action":"list","booking_id":%d,"trigger":"booking.confirmed"}`, id), &log)
		return log.Data.Total == 1
	})
	p.open(fmt.Sprintf("/panel/messages/log?booking_id=%d", id))
	p.expect("h1", "Delivery log")
	p.expect("#messages", "booking.confirmed")
	p.shot("message-log")
	p.open("/panel/messages/settings")
	p.expect("h1", "Messaging settings")
	p.shot("message-settings")
}
