package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	netmail "net/mail"
	"net/textproto"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// TLSMode is how an SMTP connection is encrypted.
type TLSMode string

const (
	TLSNone     TLSMode = "none"     // plain text throughout (a relay on a trusted network)
	TLSStartTLS TLSMode = "starttls" // STARTTLS required before AUTH (port 587)
	TLSImplicit TLSMode = "tls"      // TLS from the first byte (port 465)
)

// ParseTLSMode reads a TLS mode as configuration spells it.
func ParseTLSMode(s string) (TLSMode, error) {
	switch m := TLSMode(strings.ToLower(strings.TrimSpace(s))); m {
	case TLSNone, TLSStartTLS, TLSImplicit:
		return m, nil
	}
	return "", fmt.Errorf("mail: TLS mode %q is not one of none, starttls, tls", s)
}

// SMTPConfig is one SMTP server and its credentials (an account's or the operator's).
type SMTPConfig struct {
	Host     string
	Port     int
	Username string // "" sends without AUTH
	Password string
	TLS      TLSMode
	// Timeout bounds the connection and each command on it (30s when zero); SendTimeout the
	// whole send, from dial to the answer to DATA (2 minutes when zero).
	Timeout     time.Duration
	SendTimeout time.Duration
	// TLSConfig, when set, replaces the default (which verifies the server's certificate for
	// Host); tests set RootCAs to trust their server.
	TLSConfig *tls.Config
	HELO      string // the name given in EHLO; the machine's name when ""
}

// SMTP is a Transport over SMTP (github.com/wneessen/go-mail): a connection per message.
type SMTP struct {
	cfg SMTPConfig
	now func() time.Time
}

// NewSMTP checks cfg and returns its transport.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if cfg.Host == "" || cfg.Port <= 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("mail: SMTP host %q port %d", cfg.Host, cfg.Port)
	}
	if _, err := ParseTLSMode(string(cfg.TLS)); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = 2 * time.Minute
	}
	return &SMTP{cfg: cfg, now: time.Now}, nil
}

// Send sends m. A failure is an *Error: see IsTemporary and IsBounce.
func (s *SMTP) Send(ctx context.Context, m Message) (Receipt, error) {
	msg, err := s.build(m)
	if err != nil {
		return Receipt{}, &Error{Kind: Permanent, Stage: "message", Text: err.Error(), Err: err}
	}
	client, err := gomail.NewClient(s.cfg.Host, s.options()...)
	if err != nil {
		return Receipt{}, &Error{Kind: Permanent, Stage: "dial", Text: err.Error(), Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
	defer cancel()
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Receipt{}, &Error{Kind: Temporary, Stage: "send", Text: ctxErr.Error(), Err: err}
		}
		return Receipt{}, classify("dial", err)
	}
	return Receipt{MessageID: m.MessageID, Accepted: s.now()}, nil
}

func (s *SMTP) options() []gomail.Option {
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.cfg.Timeout)}
	tlsConf := s.cfg.TLSConfig
	if tlsConf == nil {
		tlsConf = &tls.Config{ServerName: s.cfg.Host, MinVersion: tls.VersionTLS12}
	}
	auth := gomail.SMTPAuthPlain
	switch s.cfg.TLS {
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
		// The operator chose a clear-text relay; go-mail's PLAIN refuses it otherwise.
		auth = gomail.SMTPAuthPlainNoEnc
	case TLSStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory), gomail.WithTLSConfig(tlsConf))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL(), gomail.WithTLSConfig(tlsConf))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(auth),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	if s.cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(s.cfg.HELO))
	}
	return opts
}

// reserved are the headers the transport writes itself.
var reserved = map[string]bool{
	"From": true, "Sender": true, "Reply-To": true, "To": true, "Cc": true, "Bcc": true,
	"Subject": true, "Message-Id": true, "Date": true, "List-Unsubscribe": true,
	"Mime-Version": true, "Content-Type": true, "Content-Transfer-Encoding": true, "Return-Path": true,
}

func (s *SMTP) build(m Message) (*gomail.Msg, error) {
	if m.From.Address == "" || m.To.Address == "" {
		return nil, fmt.Errorf("a message needs From and To")
	}
	if err := checkMessageID(m.MessageID); err != nil {
		return nil, err
	}
	if m.Text == "" && m.HTML == "" {
		return nil, fmt.Errorf("a message needs a text or an HTML part")
	}
	for name, v := range map[string]string{"Subject": m.Subject, "List-Unsubscribe": m.ListUnsubscribe,
		"From name": m.From.Name, "To name": m.To.Name, "Reply-To name": m.ReplyTo.Name} {
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%s carries a line break", name)
		}
	}
	msg := gomail.NewMsg(gomail.WithCharset(gomail.CharsetUTF8), gomail.WithEncoding(gomail.EncodingQP),
		gomail.WithNoDefaultUserAgent())
	for _, a := range []struct {
		h    gomail.AddrHeader
		addr netmail.Address
	}{{gomail.HeaderFrom, m.From}, {gomail.HeaderTo, m.To}, {gomail.HeaderReplyTo, m.ReplyTo}} {
		if a.addr.Address == "" {
			continue
		}
		// Parsed, so that an invalid address is refused here rather than by the server.
		if _, err := netmail.ParseAddress("<" + a.addr.Address + ">"); err != nil {
			return nil, fmt.Errorf("%s address %q: %w", a.h, a.addr.Address, err)
		}
		addr := a.addr
		msg.SetAddrHeaderFromMailAddress(a.h, &addr)
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDateWithValue(s.now())
	if m.ListUnsubscribe != "" {
		msg.SetGenHeader("List-Unsubscribe", m.ListUnsubscribe)
	}
	for name, v := range m.Headers {
		if !validHeaderName(name) || reserved[canonical(name)] || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("header %q is not one a message may set", name)
		}
		msg.SetGenHeader(gomail.Header(canonical(name)), v)
	}
	switch {
	case m.Text != "" && m.HTML != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	case m.Text != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	default:
		msg.SetBodyString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}

func canonical(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }

// validHeaderName: printable ASCII but the colon (RFC 5322 ftext).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if c < 33 || c > 126 || c == ':' {
			return false
		}
	}
	return true
}

// checkMessageID accepts "id-left@id-right", both dot-atoms (RFC 5322 3.6.4), brackets off.
func checkMessageID(id string) error {
	left, right, ok := strings.Cut(id, "@")
	if !ok || !dotAtom(left) || !dotAtom(right) {
		return fmt.Errorf("the Message-ID %q is not id@domain (see MessageID)", id)
	}
	return nil
}

func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, c := range []byte(s) {
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && c != '.' && !strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", rune(c)) {
			return false
		}
	}
	return true
}
