package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"

	gomail "github.com/wneessen/go-mail"
)

// Kind is what the sender does after a failure.
type Kind int

const (
	// Permanent: sending again will fail the same way until the configuration changes
	// (authentication refused, TLS not offered or not trusted, an invalid message, a 5xx
	// before any recipient). The message fails; the address is not blamed.
	Permanent Kind = iota
	// Temporary: try again later (a 4xx answer, the network, a timeout).
	Temporary
	// Bounce: the server refused the recipient or the message for it with a 5xx (RCPT TO or
	// DATA): a hard bounce; no further mail goes to the address.
	Bounce
)

func (k Kind) String() string {
	switch k {
	case Temporary:
		return "temporary"
	case Bounce:
		return "bounce"
	}
	return "permanent"
}

// Error is a failed send, with what the log keeps of it.
type Error struct {
	Kind     Kind
	Stage    string // "message", "dial", "auth", "mail", "rcpt", "data"
	Code     int    // the server's reply code, 0 when the server did not answer one
	Enhanced string // the enhanced status code ("5.1.1"), "" when none
	Text     string // the server's answer, or the cause
	Err      error
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("mail %s (%s): %d %s", e.Stage, e.Kind, e.Code, e.Text)
	}
	return fmt.Sprintf("mail %s (%s): %s", e.Stage, e.Kind, e.Text)
}

func (e *Error) Unwrap() error { return e.Err }

// IsTemporary reports whether err is a failure worth trying again later.
func IsTemporary(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == Temporary
}

// IsBounce reports whether err is a hard bounce: the address is to be suppressed.
func IsBounce(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == Bounce
}

// classify turns an error of the SMTP client into an *Error. stage is where it happened when
// the error itself does not say ("dial", which covers the greeting, STARTTLS and AUTH).
func classify(stage string, err error) *Error {
	e := &Error{Stage: stage, Text: err.Error(), Err: err}
	var se *gomail.SendError
	if errors.As(err, &se) {
		e.Stage = sendStage(se.Reason)
		e.Code, e.Enhanced = se.ErrorCode(), se.EnhancedStatusCode()
		e.Text = serverText(se.Error(), e.Code)
		switch {
		case e.Code >= 500 && (e.Stage == "rcpt" || e.Stage == "data"):
			e.Kind = Bounce
		case e.Code >= 400 && e.Code < 500:
			e.Kind = Temporary
		case e.Code == 0 && (se.Reason == gomail.ErrConnCheck || se.Reason == gomail.ErrWriteContent ||
			se.Reason == gomail.ErrSMTPData || se.Reason == gomail.ErrSMTPDataClose || se.Reason == gomail.ErrSMTPReset):
			// No answer: the connection broke during the transaction.
			e.Kind = Temporary
		}
		return e
	}
	if strings.Contains(err.Error(), "SMTP AUTH failed") {
		e.Stage = "auth"
	}
	var tp *textproto.Error
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr):
		e.Kind = Permanent
	case errors.As(err, &tp):
		e.Code, e.Text = tp.Code, tp.Msg
		if f := strings.Fields(tp.Msg); len(f) > 0 && isEnhanced(f[0], tp.Code) {
			e.Enhanced = f[0]
		}
		if tp.Code >= 400 && tp.Code < 500 {
			e.Kind = Temporary
		}
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		e.Kind = Temporary
	}
	return e
}

func sendStage(r gomail.SendErrReason) string {
	switch r {
	case gomail.ErrSMTPMailFrom, gomail.ErrGetSender:
		return "mail"
	case gomail.ErrSMTPRcptTo, gomail.ErrGetRcpts:
		return "rcpt"
	case gomail.ErrSMTPData, gomail.ErrSMTPDataClose, gomail.ErrWriteContent:
		return "data"
	}
	return "send"
}

// serverText cuts the server's answer out of a SendError's text ("sending SMTP RCPT TO
// command: 550 5.1.1 no such user, affected recipient(s): …").
func serverText(s string, code int) string {
	if code == 0 {
		return s
	}
	i := strings.Index(s, strconv.Itoa(code)+" ")
	if i < 0 {
		return s
	}
	s = s[i+4:]
	if j := strings.Index(s, ", affected "); j >= 0 {
		s = s[:j]
	}
	return s
}

func isEnhanced(s string, code int) bool {
	p := strings.Split(s, ".")
	return len(p) == 3 && p[0] == strconv.Itoa(code/100)
}
