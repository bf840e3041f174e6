package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/testkit/smtpcatcher"
)

func transport(t *testing.T, c *smtpcatcher.Catcher, mode TLSMode, password string) *SMTP {
	t.Helper()
	s, err := NewSMTP(SMTPConfig{Host: c.Host(), Port: c.Port(), Username: c.Username(), Password: password,
		TLS: mode, Timeout: 10 * time.Second, TLSConfig: &tls.Config{RootCAs: c.RootCAs(), ServerName: c.Host()}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func confirmation() Message {
	return Message{
		From:            netmail.Address{Name: "Villa Ζωή", Address: "noreply@vros.test"},
		ReplyTo:         netmail.Address{Name: "Ufficio \"Prenotazioni\"", Address: "desk@villa.test"},
		To:              netmail.Address{Name: "Ada Lovelace", Address: "ada@guest.test"},
		Subject:         "Conferma prenotazione – Villa Ζωή",
		Text:            "Gentile Ada,\nla sua prenotazione è confermata: dal 3 al 10 agosto. Una riga lunga, perché la codifica quoted-printable deve spezzarla senza perdere nulla.\n",
		HTML:            "<p>Gentile Ada,</p><p>la sua prenotazione &egrave; confermata.</p>",
		MessageID:       MessageID("acc1:booking.confirmed:b1:v1", "vros.test"),
		ListUnsubscribe: "<https://vros.test/u/acc1/ada>, <mailto:unsubscribe@vros.test?subject=acc1>",
		Headers:         map[string]string{"List-Unsubscribe-Post": "List-Unsubscribe=One-Click", "X-Vros-Message": "m1"},
	}
}

func TestDeliversHeadersAndBothParts(t *testing.T) {
	for _, mode := range []TLSMode{TLSNone, TLSStartTLS, TLSImplicit} {
		t.Run(string(mode), func(t *testing.T) {
			var opts []smtpcatcher.Option
			switch mode {
			case TLSStartTLS:
				opts = append(opts, smtpcatcher.StartTLS())
			case TLSImplicit:
				opts = append(opts, smtpcatcher.ImplicitTLS())
			}
			c := smtpcatcher.Start(t, opts...)
			want := confirmation()
			r, err := transport(t, c, mode, c.Password()).Send(context.Background(), want)
			if err != nil {
				t.Fatal(err)
			}
			if r.MessageID != want.MessageID || r.Accepted.IsZero() {
				t.Errorf("receipt %+v", r)
			}
			msgs, err := c.Wait(context.Background(), smtpcatcher.Count(1))
			if err != nil {
				t.Fatal(err)
			}
			m := msgs[0]
			if m.ParseErr != nil {
				t.Fatalf("%v\n%s", m.ParseErr, m.Raw)
			}
			t.Logf("as received:\n%s", m.Raw)
			one := func(a []*netmail.Address) *netmail.Address {
				if len(a) != 1 {
					t.Errorf("%d addresses, want 1", len(a))
					return &netmail.Address{}
				}
				return a[0]
			}
			checks := []struct{ name, got, want string }{
				{"envelope from", m.EnvelopeFrom, "noreply@vros.test"},
				{"envelope to", strings.Join(m.EnvelopeTo, ","), "ada@guest.test"},
				{"auth", m.AuthUser, c.Username()},
				{"From", one(m.From).String(), want.From.String()},
				{"Reply-To", one(m.ReplyTo).String(), want.ReplyTo.String()},
				{"To", one(m.To).String(), want.To.String()},
				{"Subject", m.Subject, "Conferma prenotazione – Villa Ζωή"},
				{"Message-ID", m.MessageID, "<" + want.MessageID + ">"},
				{"List-Unsubscribe", m.ListUnsubscribe, want.ListUnsubscribe},
				{"List-Unsubscribe-Post", m.Header.Get("List-Unsubscribe-Post"), "List-Unsubscribe=One-Click"},
				{"X-Vros-Message", m.Header.Get("X-Vros-Message"), "m1"},
				{"content type", m.ContentType, "multipart/alternative"},
				{"text", strings.ReplaceAll(m.Text, "\r\n", "\n"), want.Text},
				{"html", m.HTML, want.HTML},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
				}
			}
			if ua := m.Header.Get("X-Mailer") + m.Header.Get("User-Agent"); ua != "" {
				t.Errorf("the library names itself: %q", ua)
			}
			if _, err := m.Header.Date(); err != nil {
				t.Errorf("Date: %v", err)
			}
			// Header encoding: the raw header is ASCII, the UTF-8 in encoded words.
			head, _, _ := strings.Cut(string(m.Raw), "\r\n\r\n")
			for _, b := range []byte(head) {
				if b >= 0x80 {
					t.Fatalf("8-bit byte in the header:\n%s", head)
				}
			}
		})
	}
}

func TestOnePartMessages(t *testing.T) {
	c := smtpcatcher.Start(t)
	s := transport(t, c, TLSNone, c.Password())
	text, html := confirmation(), confirmation()
	text.HTML, html.Text = "", ""
	for _, m := range []Message{text, html} {
		if _, err := s.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := c.Wait(context.Background(), smtpcatcher.Count(2))
	if msgs[0].ContentType != "text/plain" || msgs[0].HTML != "" || !strings.Contains(msgs[0].Text, "Gentile Ada") {
		t.Errorf("text only: %s %q %q", msgs[0].ContentType, msgs[0].Text, msgs[0].HTML)
	}
	if msgs[1].ContentType != "text/html" || msgs[1].Text != "" || strings.TrimRight(msgs[1].HTML, "\r\n") != html.HTML {
		t.Errorf("HTML only: %s %q %q", msgs[1].ContentType, msgs[1].Text, msgs[1].HTML)
	}
}

// A repeated send (after a crash between the server's answer and the record) carries the
// same Message-ID.
func TestMessageIDIsDeterministic(t *testing.T) {
	a, b := MessageID("acc1:booking.confirmed:b1:v1", "vros.test"), MessageID("acc1:booking.confirmed:b1:v1", "vros.test")
	if a != b || a == MessageID("acc1:booking.confirmed:b1:v2", "vros.test") || checkMessageID(a) != nil {
		t.Errorf("MessageID: %q %q", a, b)
	}
	c := smtpcatcher.Start(t)
	s := transport(t, c, TLSNone, c.Password())
	for range 2 {
		if _, err := s.Send(context.Background(), confirmation()); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := c.Wait(context.Background(), smtpcatcher.Count(2))
	if msgs[0].MessageID != msgs[1].MessageID {
		t.Errorf("Message-IDs %q and %q", msgs[0].MessageID, msgs[1].MessageID)
	}
}

func TestFailuresAreClassified(t *testing.T) {
	kindOf := func(err error) *Error {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v (%T) is not an *Error", err, err)
		}
		return e
	}
	ctx := context.Background()

	t.Run("wrong password: permanent, not a bounce", func(t *testing.T) {
		c := smtpcatcher.Start(t)
		_, err := transport(t, c, TLSNone, "wrong").Send(ctx, confirmation())
		e := kindOf(err)
		if e.Kind != Permanent || IsTemporary(err) || IsBounce(err) || e.Code != 535 || e.Stage != "auth" {
			t.Errorf("%+v", e)
		}
	})
	t.Run("no credentials where AUTH is required: permanent", func(t *testing.T) {
		c := smtpcatcher.Start(t)
		s, _ := NewSMTP(SMTPConfig{Host: c.Host(), Port: c.Port(), TLS: TLSNone})
		_, err := s.Send(ctx, confirmation())
		e := kindOf(err)
		if e.Kind != Permanent || e.Code != 530 || e.Stage != "mail" {
			t.Errorf("%+v", e)
		}
	})
	t.Run("STARTTLS required, not offered: permanent", func(t *testing.T) {
		c := smtpcatcher.Start(t)
		_, err := transport(t, c, TLSStartTLS, c.Password()).Send(ctx, confirmation())
		if e := kindOf(err); e.Kind != Permanent {
			t.Errorf("%+v", e)
		}
	})
	t.Run("untrusted certificate: permanent", func(t *testing.T) {
		c := smtpcatcher.Start(t, smtpcatcher.StartTLS())
		s, _ := NewSMTP(SMTPConfig{Host: c.Host(), Port: c.Port(), Username: c.Username(), Password: c.Password(), TLS: TLSStartTLS})
		_, err := s.Send(ctx, confirmation())
		if e := kindOf(err); e.Kind != Permanent {
			t.Errorf("%+v", e)
		}
	})
	for _, tc := range []struct {
		name  string
		fail  func(*smtpcatcher.Catcher)
		kind  Kind
		code  int
		stage string
	}{
		{"421 at RCPT: temporary", func(c *smtpcatcher.Catcher) { c.FailRcpt(1, 421, "busy, try later") }, Temporary, 421, "rcpt"},
		{"451 at DATA: temporary", func(c *smtpcatcher.Catcher) { c.FailData(1, 451, "local error") }, Temporary, 451, "data"},
		{"550 at RCPT: bounce", func(c *smtpcatcher.Catcher) { c.FailRcpt(1, 550, "no such user") }, Bounce, 550, "rcpt"},
		{"550 at DATA: bounce", func(c *smtpcatcher.Catcher) { c.FailData(1, 550, "mailbox disabled") }, Bounce, 550, "data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := smtpcatcher.Start(t)
			tc.fail(c)
			s := transport(t, c, TLSNone, c.Password())
			_, err := s.Send(ctx, confirmation())
			e := kindOf(err)
			if e.Kind != tc.kind || e.Code != tc.code || e.Stage != tc.stage || IsTemporary(err) != (tc.kind == Temporary) ||
				IsBounce(err) != (tc.kind == Bounce) || !strings.Contains(e.Text, "5") && tc.code >= 500 {
				t.Errorf("%+v, want %s %d at %s", e, tc.kind, tc.code, tc.stage)
			}
			if e.Enhanced == "" || !strings.Contains(err.Error(), e.Text) {
				t.Errorf("the log would lose the answer: %q, enhanced %q", err, e.Enhanced)
			}
			if len(c.Messages()) != 0 {
				t.Error("a refused message was kept")
			}
			// The failure was for one command: the next send passes.
			if _, err := s.Send(ctx, confirmation()); err != nil {
				t.Errorf("next send: %v", err)
			}
		})
	}
	t.Run("server down: temporary", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close() // nobody listens on the port now
		s, _ := NewSMTP(SMTPConfig{Host: "127.0.0.1", Port: port, TLS: TLSNone, Username: "u", Password: "p"})
		_, err = s.Send(ctx, confirmation())
		if e := kindOf(err); e.Kind != Temporary || e.Stage != "dial" {
			t.Errorf("%+v", e)
		}
	})
	t.Run("server stopped: temporary", func(t *testing.T) {
		c := smtpcatcher.Start(t)
		s := transport(t, c, TLSNone, c.Password())
		c.Close()
		if _, err := s.Send(ctx, confirmation()); !IsTemporary(err) {
			t.Errorf("%v", err)
		}
	})
	t.Run("context cancelled: temporary", func(t *testing.T) {
		c := smtpcatcher.Start(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := transport(t, c, TLSNone, c.Password()).Send(cctx, confirmation()); !IsTemporary(err) {
			t.Errorf("%v", err)
		}
	})
}

func TestInvalidMessagesAreRefusedBeforeSending(t *testing.T) {
	c := smtpcatcher.Start(t)
	s := transport(t, c, TLSNone, c.Password())
	for _, tc := range []struct {
		name   string
		change func(*Message)
	}{
		{"no Message-ID", func(m *Message) { m.MessageID = "" }},
		{"Message-ID with a colon", func(m *Message) { m.MessageID = "acc1:b1@vros.test" }},
		{"Message-ID in brackets", func(m *Message) { m.MessageID = "<a@vros.test>" }},
		{"no recipient", func(m *Message) { m.To = netmail.Address{} }},
		{"invalid recipient", func(m *Message) { m.To.Address = "ada at guest" }},
		{"no part", func(m *Message) { m.Text, m.HTML = "", "" }},
		{"subject with a line break", func(m *Message) { m.Subject = "Hi\r\nBcc: all@x.test" }},
		{"header injection", func(m *Message) { m.Headers = map[string]string{"X-A": "1\nBcc: all@x.test"} }},
		{"reserved header", func(m *Message) { m.Headers = map[string]string{"bcc": "all@x.test"} }},
		{"invalid header name", func(m *Message) { m.Headers = map[string]string{"X A": "1"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := confirmation()
			tc.change(&m)
			_, err := s.Send(context.Background(), m)
			var e *Error
			if !errors.As(err, &e) || e.Kind != Permanent || e.Stage != "message" {
				t.Errorf("%v, want a permanent message error", err)
			}
		})
	}
	if n := len(c.Messages()); n != 0 {
		t.Errorf("%d messages reached the server", n)
	}
}

func TestConfig(t *testing.T) {
	for in, want := range map[string]TLSMode{"none": TLSNone, " STARTTLS": TLSStartTLS, "tls": TLSImplicit, "ssl": ""} {
		if got, err := ParseTLSMode(in); got != want || (err != nil) != (want == "") {
			t.Errorf("ParseTLSMode(%q) = %q, %v", in, got, err)
		}
	}
	for _, cfg := range []SMTPConfig{{Port: 25, TLS: TLSNone}, {Host: "h", TLS: TLSNone}, {Host: "h", Port: 25, TLS: "ssl"}} {
		if _, err := NewSMTP(cfg); err == nil {
			t.Errorf("NewSMTP(%+v) accepted", cfg)
		}
	}
}
