// Package smtpcatcher is a real SMTP server for tests (github.com/emersion/go-smtp), listening
// on 127.0.0.1 on a free port, that keeps every message it accepts.
//
// What it does:
//   - AUTH PLAIN with the credentials of Start's options (Credentials; "vros"/"secret" by
//     default); MAIL FROM before a successful AUTH answers 530, a wrong password 535.
//     NoAuth turns authentication off;
//   - STARTTLS (option StartTLS) or TLS from the first byte (ImplicitTLS), with a self-signed
//     certificate for 127.0.0.1 and localhost whose pool RootCAs gives a client; with either,
//     AUTH is offered only on an encrypted connection;
//   - FailRcpt / FailData make the next N RCPT TO commands, or the end of the next N DATA
//     transfers, answer a chosen code (421 for a temporary failure, 550 for a hard bounce);
//   - every accepted message is parsed with net/mail and mime/multipart (Message): envelope,
//     raw bytes, headers decoded (RFC 2047), the text and HTML parts decoded;
//   - Wait blocks until a condition on the messages holds, woken by each change, never by
//     polling on a timer.
package smtpcatcher

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Catcher is a running SMTP server. Its methods are safe for concurrent use.
type Catcher struct {
	server   *smtp.Server
	listener net.Listener
	cfg      config
	roots    *x509.CertPool
	done     chan struct{}

	mu       sync.Mutex
	messages []Message
	failRcpt []*smtp.SMTPError
	failData []*smtp.SMTPError
	changed  chan struct{} // closed and replaced at every change, to wake Wait
}

type config struct {
	username, password string
	auth               bool
	tlsMode            int // 0 none, 1 STARTTLS, 2 implicit TLS
}

// Option configures Start.
type Option func(*config)

// Credentials sets the username and password AUTH PLAIN accepts.
func Credentials(username, password string) Option {
	return func(c *config) { c.username, c.password, c.auth = username, password, true }
}

// NoAuth accepts mail without authentication (and offers no AUTH).
func NoAuth() Option { return func(c *config) { c.auth = false } }

// StartTLS offers STARTTLS with a self-signed certificate (RootCAs trusts it).
func StartTLS() Option { return func(c *config) { c.tlsMode = 1 } }

// ImplicitTLS speaks TLS from the first byte (the "SMTPS" of port 465).
func ImplicitTLS() Option { return func(c *config) { c.tlsMode = 2 } }

// Start starts a catcher on 127.0.0.1:0; it stops when the test ends.
func Start(t testing.TB, opts ...Option) *Catcher {
	t.Helper()
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// New starts a catcher outside a test's lifetime; the caller closes it.
func New(opts ...Option) (*Catcher, error) {
	cfg := config{username: "vros", password: "secret", auth: true}
	for _, o := range opts {
		o(&cfg)
	}
	c := &Catcher{cfg: cfg, changed: make(chan struct{}), done: make(chan struct{})}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{c: c}, nil
	}))
	s.Domain = "catcher.test"
	s.ReadTimeout = time.Minute
	s.WriteTimeout = time.Minute
	s.MaxMessageBytes = 10 << 20
	s.ErrorLog = discardLogger{}
	s.AllowInsecureAuth = cfg.tlsMode == 0
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if cfg.tlsMode != 0 {
		tlsConf, roots, err := selfSigned()
		if err != nil {
			l.Close()
			return nil, err
		}
		c.roots = roots
		if cfg.tlsMode == 1 {
			s.TLSConfig = tlsConf
		} else {
			l = tls.NewListener(l, tlsConf)
		}
	}
	c.server, c.listener = s, l
	go func() {
		defer close(c.done)
		_ = s.Serve(l)
	}()
	return c, nil
}

// Close stops the server and closes its connections; later calls do nothing.
func (c *Catcher) Close() {
	// The listener too: Serve may not have registered it with the server yet.
	_ = c.listener.Close()
	_ = c.server.Close()
	<-c.done
}

// Addr is the server's "host:port".
func (c *Catcher) Addr() string { return c.listener.Addr().String() }

// Host is the address the server listens on, "127.0.0.1".
func (c *Catcher) Host() string { return c.listener.Addr().(*net.TCPAddr).IP.String() }

// Port is the port the server listens on.
func (c *Catcher) Port() int { return c.listener.Addr().(*net.TCPAddr).Port }

// Username and Password are the credentials the server accepts.
func (c *Catcher) Username() string { return c.cfg.username }

// Password: see Username.
func (c *Catcher) Password() string { return c.cfg.password }

// RootCAs trusts the server's certificate (nil without TLS).
func (c *Catcher) RootCAs() *x509.CertPool { return c.roots }

// FailRcpt makes the next n RCPT TO commands answer code (4xx or 5xx) with text.
func (c *Catcher) FailRcpt(n, code int, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range n {
		c.failRcpt = append(c.failRcpt, smtpError(code, text))
	}
}

// FailData makes the end of the next n DATA transfers answer code (4xx or 5xx) with text:
// the message is received and refused, as a server refuses content.
func (c *Catcher) FailData(n, code int, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range n {
		c.failData = append(c.failData, smtpError(code, text))
	}
}

func smtpError(code int, text string) *smtp.SMTPError {
	enhanced := smtp.EnhancedCode{code / 100, 0, 0}
	if code == 550 {
		enhanced = smtp.EnhancedCode{5, 1, 1} // the mailbox does not exist
	}
	return &smtp.SMTPError{Code: code, EnhancedCode: enhanced, Message: text}
}

// Messages returns a copy of the messages received so far, in order.
func (c *Catcher) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.messages...)
}

// Wait blocks until cond holds on the messages received so far (it is called once at once,
// then after every message), and returns them; or returns ctx's error with the messages.
func (c *Catcher) Wait(ctx context.Context, cond func([]Message) bool) ([]Message, error) {
	for {
		c.mu.Lock()
		msgs := append([]Message(nil), c.messages...)
		changed := c.changed
		c.mu.Unlock()
		if cond(msgs) {
			return msgs, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return msgs, fmt.Errorf("smtpcatcher: %d messages, condition not met: %w", len(msgs), ctx.Err())
		}
	}
}

// Count is a Wait condition: at least n messages.
func Count(n int) func([]Message) bool {
	return func(m []Message) bool { return len(m) >= n }
}

func (c *Catcher) add(m Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.messages = append(c.messages, m)
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Catcher) nextFailure(queue *[]*smtp.SMTPError) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(*queue) == 0 {
		return nil
	}
	err := (*queue)[0]
	*queue = (*queue)[1:]
	return err
}

// session is one SMTP connection's transaction state.
type session struct {
	c      *Catcher
	authed string
	from   string
	to     []string
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (s *session) AuthMechanisms() []string {
	if !s.c.cfg.auth {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	if !s.c.cfg.auth || mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if (identity != "" && identity != username) || username != s.c.cfg.username || password != s.c.cfg.password {
			return smtp.ErrAuthFailed
		}
		s.authed = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.c.cfg.auth && s.authed == "" {
		return errAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := s.c.nextFailure(&s.c.failRcpt); err != nil {
		return err
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := s.c.nextFailure(&s.c.failData); err != nil {
		return err
	}
	m := parse(raw)
	m.EnvelopeFrom, m.EnvelopeTo, m.AuthUser = s.from, append([]string(nil), s.to...), s.authed
	s.c.add(m)
	return nil
}

func (s *session) Reset() { s.from, s.to = "", nil }

func (s *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and localhost, valid for a day.
func selfSigned() (*tls.Config, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "smtpcatcher"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion:   tls.VersionTLS12,
	}, roots, nil
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...interface{}) {}
func (discardLogger) Println(...interface{})        {}
