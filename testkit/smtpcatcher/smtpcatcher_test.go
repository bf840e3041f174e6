package smtpcatcher

import (
	"context"
	"crypto/tls"
	"errors"
	"net/smtp"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

// A multipart/alternative message as mail libraries write it: an encoded subject and display
// name, a quoted-printable text part and a base64 HTML part.
const sample = "From: =?UTF-8?q?Villa_=CE=96=CF=89=CE=AE?= <noreply@vros.test>\r\n" +
	"Reply-To: Desk <desk@villa.test>\r\n" +
	"To: Ada <ada@guest.test>\r\n" +
	"Subject: =?UTF-8?q?Conferma_prenotazione_=E2=80=93_Villa_=CE=96=CF=89=CE=AE?=\r\n" +
	"Message-ID: <acc1.confirmed.b1@vros.test>\r\n" +
	"List-Unsubscribe: <https://vros.test/u/1>\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/alternative; boundary=XYZ\r\n" +
	"\r\n" +
	"--XYZ\r\n" +
	"Content-Type: text/plain; charset=UTF-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"Caff=C3=A8 e una lunga riga che va spezzata perch=C3=A9 supera i settantasei =\r\n" +
	"caratteri.\r\n" +
	"--XYZ\r\n" +
	"Content-Type: text/html; charset=UTF-8\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"PHA+Q2FmZsOoPC9w\r\nPg==\r\n" +
	"--XYZ--\r\n"

func send(c *Catcher, user, pass string, to ...string) error {
	return smtp.SendMail(c.Addr(), smtp.PlainAuth("", user, pass, c.Host()), "bounce@vros.test", to, []byte(sample))
}

func code(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

func TestParsesWhatItReceives(t *testing.T) {
	c := Start(t)
	if err := send(c, "vros", "secret", "ada@guest.test"); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Wait(context.Background(), Count(1))
	if err != nil {
		t.Fatal(err)
	}
	m := msgs[0]
	if m.ParseErr != nil {
		t.Fatal(m.ParseErr)
	}
	checks := []struct{ name, got, want string }{
		{"envelope from", m.EnvelopeFrom, "bounce@vros.test"},
		{"envelope to", strings.Join(m.EnvelopeTo, ","), "ada@guest.test"},
		{"auth user", m.AuthUser, "vros"},
		{"From name", m.From[0].Name, "Villa Ζωή"},
		{"From address", m.From[0].Address, "noreply@vros.test"},
		{"Reply-To", m.ReplyTo[0].Address, "desk@villa.test"},
		{"To", m.To[0].Address, "ada@guest.test"},
		{"Subject", m.Subject, "Conferma prenotazione – Villa Ζωή"},
		{"Message-ID", m.MessageID, "<acc1.confirmed.b1@vros.test>"},
		{"List-Unsubscribe", m.ListUnsubscribe, "<https://vros.test/u/1>"},
		{"content type", m.ContentType, "multipart/alternative"},
		{"text", m.Text, "Caffè e una lunga riga che va spezzata perché supera i settantasei caratteri."},
		{"html", m.HTML, "<p>Caffè</p>"},
		{"raw", string(m.Raw), sample},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestAuthentication(t *testing.T) {
	c := Start(t, Credentials("acc", "pw"))
	if err := send(c, "acc", "wrong", "a@guest.test"); code(err) != 535 {
		t.Errorf("wrong password: %v, want 535", err)
	}
	// Without AUTH: net/smtp's SendMail authenticates whenever the server offers it, so speak
	// the commands by hand.
	cl, err := smtp.Dial(c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Mail("x@vros.test"); code(err) != 530 {
		t.Errorf("MAIL before AUTH: %v, want 530", err)
	}
	if err := send(c, "acc", "pw", "a@guest.test"); err != nil {
		t.Errorf("right password: %v", err)
	}
	if n := len(c.Messages()); n != 1 {
		t.Errorf("%d messages kept, want 1", n)
	}

	open := Start(t, NoAuth())
	cl2, err := smtp.Dial(open.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	if ok, _ := cl2.Extension("AUTH"); ok {
		t.Error("NoAuth offers AUTH")
	}
	if err := cl2.Mail("x@vros.test"); err != nil {
		t.Errorf("NoAuth MAIL: %v", err)
	}
}

func TestFailuresAnswerTheChosenCodeThenPass(t *testing.T) {
	c := Start(t)
	c.FailRcpt(2, 421, "try later")
	c.FailData(1, 550, "no such user")
	for i, want := range []int{421, 421, 550, 0} {
		err := send(c, "vros", "secret", "a@guest.test")
		if code(err) != want || (want == 0 && err != nil) {
			t.Errorf("send %d: %v, want code %d", i, err, want)
		}
	}
	if n := len(c.Messages()); n != 1 {
		t.Errorf("%d messages kept, want only the one accepted", n)
	}
}

func TestStartTLS(t *testing.T) {
	c := Start(t, StartTLS())
	cl, err := smtp.Dial(c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if ok, _ := cl.Extension("AUTH"); ok {
		t.Error("AUTH offered before STARTTLS")
	}
	if err := cl.StartTLS(&tls.Config{RootCAs: c.RootCAs(), ServerName: c.Host()}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Auth(smtp.PlainAuth("", "vros", "secret", c.Host())); err != nil {
		t.Fatal(err)
	}
	if err := cl.Mail("bounce@vros.test"); err != nil {
		t.Fatal(err)
	}
}

func TestImplicitTLS(t *testing.T) {
	c := Start(t, ImplicitTLS())
	conn, err := tls.Dial("tcp", c.Addr(), &tls.Config{RootCAs: c.RootCAs(), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := smtp.NewClient(conn, c.Host())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Auth(smtp.PlainAuth("", "vros", "secret", c.Host())); err != nil {
		t.Fatal(err)
	}
}

func TestWait(t *testing.T) {
	c := Start(t)
	errs := make(chan error, 1)
	go func() {
		// Wait is already blocked, or will find both messages at once: either way it returns.
		for range 2 {
			if err := send(c, "vros", "secret", "a@guest.test"); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	msgs, err := c.Wait(context.Background(), Count(2))
	if err != nil || len(msgs) != 2 {
		t.Fatalf("Wait: %d messages, %v", len(msgs), err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if msgs, err := c.Wait(ctx, Count(3)); !errors.Is(err, context.DeadlineExceeded) || len(msgs) != 2 {
		t.Errorf("Wait for a third: %d messages, %v; want the deadline's error", len(msgs), err)
	}
}
