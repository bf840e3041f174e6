// Package mail sends the messages of guest messaging (docs/messaging.md, "Delivery"): the
// Transport interface an SMTP server or a provider's API implements, the classification of
// its failures (temporary: try again later; a bounce: stop mailing the address; otherwise
// permanent: fix the configuration), a per-account rate limiter and the retry schedule.
package mail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	netmail "net/mail"
	"time"
)

// Message is one message to one recipient, its content already rendered.
type Message struct {
	From    netmail.Address // the sender shown; its address is also the envelope sender
	ReplyTo netmail.Address // optional (zero Address: none)
	To      netmail.Address
	Subject string
	Text    string // the text/plain part
	HTML    string // the text/html part; with Text, the message is multipart/alternative
	// MessageID is the Message-ID without its angle brackets ("id@domain"), derived from the
	// message's natural id (MessageID func) so that a repeated send carries the same one.
	MessageID string
	// ListUnsubscribe is the List-Unsubscribe header ("<https://…>, <mailto:…>"), set on
	// messages that are not transactional; "" for none.
	ListUnsubscribe string
	// Headers are further headers (e.g. List-Unsubscribe-Post, X-Vros-Message); they may not
	// name a header the fields above set, nor the MIME structure's.
	Headers map[string]string
}

// Receipt is what a transport knows of an accepted message.
type Receipt struct {
	MessageID string    // as sent, without angle brackets
	Accepted  time.Time // when the server accepted it
}

// Transport sends one message. Its error, when not nil, is an *Error.
type Transport interface {
	Send(ctx context.Context, m Message) (Receipt, error)
}

// MessageID derives a valid, deterministic Message-ID (without angle brackets) from a
// message's natural id (`<account>:<trigger>:<booking>:<occurrence>`, whose characters a
// Message-ID cannot all carry) and the sending domain: the same key always gives the same id.
func MessageID(key, domain string) string {
	sum := sha256.Sum256([]byte(key))
	return "vros." + hex.EncodeToString(sum[:16]) + "@" + domain
}
