package messaging

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/testkit/smtpcatcher"
)

// messageIDForm is the form of every Message-ID vros sends (docs/messaging.md, "Delivery").
var messageIDForm = regexp.MustCompile(`^<vros\.[0-9a-f]{32}@` + regexp.QuoteMeta(domain) + `>$`)

// checkEnvelope checks what every message to a guest carries: one recipient, the guest, in
// the envelope and the To header; the sender's address as the envelope sender; the
// Message-ID derived from the natural id; both parts.
func checkEnvelope(t *testing.T, m smtpcatcher.Message, g guest, fromName, fromAddress, natural string) {
	t.Helper()
	if len(m.EnvelopeTo) != 1 || m.EnvelopeTo[0] != g.email {
		t.Errorf("RCPT TO %v, want only %s", m.EnvelopeTo, g.email)
	}
	if len(m.To) != 1 || m.To[0].Address != g.email {
		t.Errorf("To %v, want %s", m.To, g.email)
	}
	if len(m.From) != 1 || m.From[0].Address != fromAddress || m.From[0].Name != fromName {
		t.Errorf("From %v, want %q <%s>", m.From, fromName, fromAddress)
	}
	if m.EnvelopeFrom != fromAddress {
		t.Errorf("MAIL FROM %q, want %s", m.EnvelopeFrom, fromAddress)
	}
	if !messageIDForm.MatchString(m.MessageID) || m.MessageID != messageID(natural) {
		t.Errorf("Message-ID %q, want %s (from %s)", m.MessageID, messageID(natural), natural)
	}
	if m.Header.Get("Date") == "" {
		t.Error("no Date header")
	}
	if m.ContentType != "multipart/alternative" || m.Text == "" || m.HTML == "" {
		t.Errorf("Content-Type %s with text %d and HTML %d bytes, want multipart/alternative with both", m.ContentType, len(m.Text), len(m.HTML))
	}
	for _, h := range []string{"X-Mailer", "User-Agent"} {
		if v := m.Header.Get(h); v != "" {
			t.Errorf("%s: %s, want none", h, v)
		}
	}
}

// checkTransactional checks that m, a transactional message, has no List-Unsubscribe.
func checkTransactional(t *testing.T, m smtpcatcher.Message) {
	t.Helper()
	if m.ListUnsubscribe != "" || m.Header.Get("List-Unsubscribe-Post") != "" {
		t.Errorf("a transactional message carries List-Unsubscribe %q, List-Unsubscribe-Post %q",
			m.ListUnsubscribe, m.Header.Get("List-Unsubscribe-Post"))
	}
}

// contains fails t for each of want that s (the part named part) lacks.
func contains(t *testing.T, part, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", part, w, s)
		}
	}
}

// checkLogged checks the log's record of a message sent as m.
func checkLogged(t *testing.T, acc account, booking int64, trigger, natural string, m smtpcatcher.Message, lang string) {
	t.Helper()
	msgs := acc.waitLog(t, natural+" logged as sent", booking, trigger, hasStatus(natural, "sent"))
	got, _ := byID(msgs, natural)
	if got.Trigger != trigger || got.BookingID != booking || got.To != "guest" || got.Address != m.EnvelopeTo[0] ||
		got.Language != lang || got.Subject != m.Subject || got.Attempts < 1 || got.SentAt == "" ||
		"<"+strings.Trim(got.SMTPMessageID, "<>")+">" != m.MessageID {
		t.Errorf("the log has %+v for the message sent to %s in %s, %q, Message-ID %s", got, m.EnvelopeTo[0], lang, m.Subject, m.MessageID)
	}
}

// TestConfirmationDelivered: a booking made through interface B sends its guest the
// confirmation, through the operator's SMTP server, as the account's sender (set through
// /api/messaging-settings) with its Reply-To; transactional, so without List-Unsubscribe;
// its Message-ID derived from the natural id; subject, HTML and text parts with the
// booking's data; and the log says so.
func TestConfirmationDelivered(t *testing.T) {
	acc := newAccount(t, "Aurora Stays", nil)
	acc.a(t, "messaging-settings", obj{"action": "update", "from_name": "Aurora Stays", "from_address": "bookings@aurora.example",
		"reply_to": "host@aurora.example"}).ok(t)
	p := acc.newProperty(t, "CONF", "Europe/Rome")
	g := acc.guest("Ada", "Lovelace")
	checkin, checkout := day(40), day(43)
	b := acc.book(t, stay(p, g, checkin, checkout))

	natural := acc.natural("booking.confirmed", b, "once")
	m := waitMail(t, "the confirmation", messageID(natural))
	checkEnvelope(t, m, g, "Aurora Stays", "bookings@aurora.example", natural)
	checkTransactional(t, m)
	if len(m.ReplyTo) != 1 || m.ReplyTo[0].Address != "host@aurora.example" {
		t.Errorf("Reply-To %v, want host@aurora.example", m.ReplyTo)
	}
	if want := "Your booking at " + p.name + " is confirmed – " + longDate(t, checkin, "en"); m.Subject != want {
		t.Errorf("Subject %q, want %q", m.Subject, want)
	}
	id := strconv.FormatInt(b, 10)
	contains(t, "the HTML part", m.HTML, "Dear Ada,", "<strong>"+p.name+"</strong>", id,
		longDate(t, checkin, "en"), longDate(t, checkout, "en"), "1 Ocean Drive", "Portofino")
	contains(t, "the text part", m.Text, "Dear Ada,", p.name, id, longDate(t, checkin, "en"), longDate(t, checkout, "en"))
	if strings.Contains(m.Text, "<p>") || strings.Contains(m.Text, "<td>") {
		t.Errorf("the text part has HTML tags:\n%s", m.Text)
	}
	checkLogged(t, acc, b, "booking.confirmed", natural, m, "en")
	if n := len(withID(catcher.Messages(), m.MessageID)); n != 1 {
		t.Errorf("the confirmation arrived %d times", n)
	}
}

// TestConfirmationInItalian: an account whose language is Italian (its first; the booking
// carries none of its own) sends the confirmation in Italian, from the operator's address.
func TestConfirmationInItalian(t *testing.T) {
	acc := newAccount(t, "Case al Mare", obj{"currency": "EUR", "timezone": "Europe/Rome", "languages": []string{"it", "en"}})
	acc.waitLanguages(t, "it", "en")
	p := acc.newProperty(t, "ITA", "Europe/Rome")
	g := acc.guest("Giulia", "Rossi")
	checkin, checkout := day(50), day(52)
	b := acc.book(t, stay(p, g, checkin, checkout))

	natural := acc.natural("booking.confirmed", b, "once")
	m := waitMail(t, "the Italian confirmation", messageID(natural))
	// The operator's address, named after the account: no event carries the account's name,
	// the property's stands in (docs/messaging.md, "Running it").
	checkEnvelope(t, m, g, p.name, operatorAddress, natural)
	checkTransactional(t, m)
	if want := "La sua prenotazione presso " + p.name + " è confermata – " + longDate(t, checkin, "it"); m.Subject != want {
		t.Errorf("Subject %q, want %q", m.Subject, want)
	}
	id := strconv.FormatInt(b, 10)
	contains(t, "the HTML part", m.HTML, "Gentile Giulia,", "Numero di prenotazione", id, longDate(t, checkin, "it"),
		longDate(t, checkout, "it"), "Totale: 200,00", "€")
	contains(t, "the text part", m.Text, "Gentile Giulia,", id, longDate(t, checkin, "it"))
	if strings.Contains(m.HTML, "Dear ") || strings.Contains(m.HTML, "Booking number") {
		t.Errorf("the Italian confirmation has English in it:\n%s", m.HTML)
	}
	checkLogged(t, acc, b, "booking.confirmed", natural, m, "it")
}

// TestGuestNameEscaped: a guest named <script>alert(1)</script> arrives escaped in the HTML
// part (html/template escapes by context), in vros's default template and in one of the
// account's.
func TestGuestNameEscaped(t *testing.T) {
	acc := newAccount(t, "Escape Stays", nil)
	p := acc.newProperty(t, "ESC", "UTC")
	g := acc.guest("<script>alert(1)</script>", "Tables")
	b := acc.book(t, stay(p, g, day(60), day(62)))
	m := waitMail(t, "the confirmation", messageID(acc.natural("booking.confirmed", b, "once")))
	contains(t, "the HTML part", m.HTML, "Dear &lt;script&gt;alert(1)&lt;/script&gt;,")
	if strings.Contains(strings.ToLower(m.HTML), "<script") {
		t.Errorf("the HTML part has a script element:\n%s", m.HTML)
	}

	// The account's own template: the name in text and in an attribute.
	acc.a(t, "message-template", obj{"action": "create", "template": obj{"trigger": "booking.modified", "language": "en",
		"subject": "Booking {{.Booking.ID}} changed for {{.Guest.FirstName}}",
		"html":    `<p title="{{.Guest.FirstName}}">Hello {{.Guest.FullName}}, your stay now ends on {{date .Booking.Checkout}}.</p>`}}).ok(t)
	acc.b(t, "update", obj{"bookingId": b, "checkout": day(63)}).ok(t)
	msgs := acc.waitLog(t, "the modification planned", b, "booking.modified", func(m []logMessage) bool { return len(m) == 1 })
	m = waitMail(t, "the modification", messageID(msgs[0].MessageID))
	if m.Subject != "Booking "+strconv.FormatInt(b, 10)+" changed for <script>alert(1)</script>" {
		t.Errorf("Subject %q", m.Subject) // the subject is text: nothing to escape
	}
	contains(t, "the HTML part", m.HTML, `title="&lt;script&gt;alert(1)&lt;/script&gt;"`,
		"Hello &lt;script&gt;alert(1)&lt;/script&gt; Tables,", longDate(t, day(63), "en"))
	if strings.Contains(strings.ToLower(m.HTML), "<script") {
		t.Errorf("the HTML part has a script element:\n%s", m.HTML)
	}
}

// TestBrokenTemplateRefused: a template that does not run (a field the data lacks) or does
// not parse (a function vros has not) is refused at save through /api/message-template
// with 400, the field template.html, the line and Go's error; nothing is saved, and a good
// one is saved and then chosen for the account's next confirmation.
func TestBrokenTemplateRefused(t *testing.T) {
	acc := newAccount(t, "Template Stays", nil)
	for _, c := range []struct {
		html, line, err string
	}{
		{"<p>Dear {{.Guest.FirstName}},</p>\n<p>{{.Guest.Nope}}</p>", "line 2: ", "can't evaluate field Nope"},
		{"<p>Dear guest,</p>\n\n<p>{{.Guest.FirstName | shout}}</p>", "line 3: ", `function "shout" not defined`},
	} {
		r := acc.a(t, "message-template", obj{"action": "create", "template": obj{"trigger": "booking.confirmed",
			"language": "en", "subject": "Confirmed", "html": c.html}})
		var env struct {
			ErrorType string `json:"error_type"`
			Errors    []struct {
				Field, Message string
			} `json:"errors"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil || r.Code != http.StatusBadRequest || env.ErrorType != "validation_error" {
			t.Fatalf("a broken template answered HTTP %d %s, want 400 validation_error", r.Code, r.Body)
		}
		found := false
		for _, e := range env.Errors {
			found = found || (e.Field == "template.html" && strings.HasPrefix(e.Message, c.line) && strings.Contains(e.Message, c.err))
		}
		if !found {
			t.Errorf("the refusal %s does not name template.html with %q…%q", r.Body, c.line, c.err)
		}
	}
	var list struct {
		Total     int64             `json:"total"`
		Templates []json.RawMessage `json:"templates"`
	}
	acc.a(t, "message-template", obj{"action": "list"}).ok(t).data(t, &list)
	if list.Total != 0 || len(list.Templates) != 0 {
		t.Fatalf("templates saved after refusals: %+v", list)
	}

	acc.a(t, "message-template", obj{"action": "create", "template": obj{"trigger": "booking.confirmed", "language": "en",
		"subject": "Welcome, {{.Guest.FirstName}}: booking {{.Booking.ID}}",
		"html":    "<p>See you on {{date .Booking.Checkin}} at {{.Property.Name}}.</p>"}}).ok(t)
	p := acc.newProperty(t, "TPL", "UTC")
	g := acc.guest("Grace", "Hopper")
	b := acc.book(t, stay(p, g, day(70), day(71)))
	m := waitMail(t, "the confirmation from the account's template", messageID(acc.natural("booking.confirmed", b, "once")))
	if want := "Welcome, Grace: booking " + strconv.FormatInt(b, 10); m.Subject != want {
		t.Errorf("Subject %q, want %q", m.Subject, want)
	}
	contains(t, "the HTML part", m.HTML, "See you on "+longDate(t, day(70), "en")+" at "+p.name+".")
	contains(t, "the text part (derived from the HTML)", m.Text, "See you on "+longDate(t, day(70), "en")+" at "+p.name+".")
}
