package smtpcatcher

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// Message is one message the server accepted, as a test reads it.
type Message struct {
	EnvelopeFrom string   // MAIL FROM
	EnvelopeTo   []string // RCPT TO, in order
	AuthUser     string   // the AUTH username, "" without AUTH
	Raw          []byte   // the DATA as received (CRLF line ends)

	Header          mail.Header // as received (values not decoded)
	MessageID       string      // with its angle brackets, as the header carries it
	From            []*mail.Address
	ReplyTo         []*mail.Address
	To              []*mail.Address
	Subject         string // decoded (RFC 2047)
	ListUnsubscribe string
	ContentType     string // the top-level media type, e.g. "multipart/alternative"
	Text            string // the first text/plain part, decoded
	HTML            string // the first text/html part, decoded

	// ParseErr is why the message could not be read as a MIME message, nil when it could;
	// the fields above are those read before the error.
	ParseErr error
}

var words = new(mime.WordDecoder)

func parse(raw []byte) Message {
	m := Message{Raw: raw}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.ParseErr = err
		return m
	}
	h := msg.Header
	m.Header = h
	m.MessageID = h.Get("Message-Id")
	m.ListUnsubscribe = h.Get("List-Unsubscribe")
	if m.Subject, err = words.DecodeHeader(h.Get("Subject")); err != nil {
		m.ParseErr = fmt.Errorf("header Subject: %w", err)
		return m
	}
	for _, f := range []struct {
		name string
		to   *[]*mail.Address
	}{{"From", &m.From}, {"Reply-To", &m.ReplyTo}, {"To", &m.To}} {
		if h.Get(f.name) == "" {
			continue
		}
		if *f.to, err = h.AddressList(f.name); err != nil {
			m.ParseErr = fmt.Errorf("header %s: %w", f.name, err)
			return m
		}
	}
	m.ParseErr = m.walk(h.Get("Content-Type"), h.Get("Content-Transfer-Encoding"), msg.Body)
	return m
}

// walk reads a part (the message's body at first), recursing into multipart parts.
func (m *Message) walk(contentType, encoding string, body io.Reader) error {
	if contentType == "" {
		contentType = "text/plain; charset=us-ascii"
	}
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("header Content-Type %q: %w", contentType, err)
	}
	if m.ContentType == "" {
		m.ContentType = media
	}
	if strings.HasPrefix(media, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			// NextRawPart: the transfer encoding is decoded here, for every part alike.
			p, err := r.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", media, err)
			}
			if err := m.walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
				return err
			}
		}
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, newlineStripper{body})
	}
	content, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", media, encoding, err)
	}
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" {
		return fmt.Errorf("%s: charset %q is not read by the catcher", media, cs)
	}
	switch {
	case media == "text/plain" && m.Text == "":
		m.Text = string(content)
	case media == "text/html" && m.HTML == "":
		m.HTML = string(content)
	}
	return nil
}

// newlineStripper drops CR and LF, which base64 bodies carry every 76 characters.
type newlineStripper struct{ r io.Reader }

func (s newlineStripper) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	out := p[:0]
	for _, b := range p[:n] {
		if b != '\r' && b != '\n' {
			out = append(out, b)
		}
	}
	return len(out), err
}
