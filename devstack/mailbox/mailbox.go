// Package mailbox is `make run`'s mail catcher: a real SMTP server on loopback
// (testkit/smtpcatcher, no authentication, no TLS) that messaging-svc uses as the operator's
// mail server, and that writes every message it accepts to a folder, one .eml file each
// (open it in any mail client), with a line per message in mail.log there. So the demo's
// confirmations, reminders and owner notices can be read without a mail provider.
package mailbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vros/vros/testkit/smtpcatcher"
)

// Mailbox is a running catcher writing into Dir.
type Mailbox struct {
	// Dir holds the messages (NNNN.eml) and mail.log.
	Dir     string
	catcher *smtpcatcher.Catcher
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

// LogName is the file of Dir listing the messages, one line each.
const LogName = "mail.log"

// Start listens on 127.0.0.1 (a free port) and writes what it accepts into dir, numbering
// after the .eml files already there.
func Start(dir string) (*Mailbox, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	first, err := nextNumber(dir)
	if err != nil {
		return nil, err
	}
	c, err := smtpcatcher.New(smtpcatcher.NoAuth())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Mailbox{Dir: dir, catcher: c, cancel: cancel, done: make(chan struct{})}
	go m.write(ctx, first)
	return m, nil
}

// Host and Port are the SMTP server's address.
func (m *Mailbox) Host() string { return m.catcher.Host() }
func (m *Mailbox) Port() int    { return m.catcher.Port() }

// Close stops the server, once what it accepted is written, and answers the first write
// error.
func (m *Mailbox) Close() error {
	m.catcher.Close()
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// write writes each message as it arrives: woken by the catcher, never polling.
func (m *Mailbox) write(ctx context.Context, number int) {
	defer close(m.done)
	seen := 0
	for {
		got, err := m.catcher.Wait(ctx, smtpcatcher.Count(seen+1))
		for _, msg := range got[seen:] {
			if werr := m.save(number, msg); werr != nil {
				m.mu.Lock()
				if m.err == nil {
					m.err = werr
				}
				m.mu.Unlock()
			}
			number++
		}
		seen = len(got)
		if err != nil {
			return
		}
	}
}

// save writes msg as NNNN.eml and its line in mail.log.
func (m *Mailbox) save(number int, msg smtpcatcher.Message) error {
	name := fmt.Sprintf("%04d.eml", number)
	if err := os.WriteFile(filepath.Join(m.Dir, name), msg.Raw, 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(m.Dir, LogName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s  %s  to %s  from %s  %q\n", time.Now().UTC().Format(time.RFC3339), name,
		strings.Join(msg.EnvelopeTo, ", "), msg.EnvelopeFrom, msg.Subject)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// nextNumber is one past the highest NNNN.eml in dir (1 when none).
func nextNumber(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	next := 1
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%04d.eml", &n); err == nil && n >= next {
			next = n + 1
		}
	}
	return next, nil
}
