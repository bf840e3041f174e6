package mailbox

import (
	"net"
	"net/smtp"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func send(t *testing.T, m *Mailbox, to, subject string) {
	t.Helper()
	body := "From: Villa Aurora <desk@aurora.example>\r\nTo: " + to + "\r\nSubject: " + subject +
		"\r\nMessage-ID: <" + subject + "@aurora.example>\r\n\r\nHello.\r\n"
	if err := smtp.SendMail(net.JoinHostPort(m.Host(), strconv.Itoa(m.Port())), nil, "desk@aurora.example", []string{to}, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// TestWritesEachMessage: every message accepted is a numbered .eml file with a line in
// mail.log, written before Close returns; a mailbox started again on the folder numbers
// after what is there.
func TestWritesEachMessage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	m, err := Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	send(t, m, "anna@guest.example", "confirmed")
	send(t, m, "owner@aurora.example", "new-booking")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	send(t, m, "anna@guest.example", "reminder")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for n, subject := range map[string]string{"0001": "confirmed", "0002": "new-booking", "0003": "reminder"} {
		raw, err := os.ReadFile(filepath.Join(dir, n+".eml"))
		if err != nil || !strings.Contains(string(raw), "Subject: "+subject) || !strings.Contains(string(raw), "Hello.") {
			t.Errorf("%s.eml: %v %q", n, err, raw)
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, LogName))
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if err != nil || len(lines) != 3 || !strings.Contains(lines[0], `0001.eml  to anna@guest.example  from desk@aurora.example  "confirmed"`) ||
		!strings.Contains(lines[2], `0003.eml  to anna@guest.example`) {
		t.Errorf("mail.log: %v\n%s", err, log)
	}
}
