// Package outbox is messaging-svc's sender: it takes the due messages of the `messages`
// collection under a lease, composes, rate-limits and sends each, and records the outcome
// (docs/messaging.md, "Exactly once"). Any number of senders (replicas) run at once: a
// message is claimed by one of them, and a message whose sender stopped is taken again
// once its lease has expired, and sent with the same Message-ID.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/store"
)

// Composer renders a message for sending (service's compose package implements it).
type Composer interface {
	// Compose answers the mail to send (MessageID left empty: the outbox sets it), the
	// transport and the rate key to send it with. Its error is a *Skip when the message must
	// not be sent (booking erased → cancelled; guest without address → failed), else any
	// error is temporary (booking-svc unreachable) and retried on the backoff.
	Compose(ctx context.Context, m store.Message) (Composed, error)
}

// Composed is a message ready to send.
type Composed struct {
	Mail      mail.Message
	Transport mail.Transport
	RateKey   string // the Limiter's key: the account, or the account and its transport
	Language  string // the language the message was rendered in (for the log)
}

// Skip is a Composer's answer for a message that must not be sent: the message ends in
// Status (cancelled, failed or suppressed) with Reason as its answer.
type Skip struct {
	Status store.Status
	Reason string
}

func (s *Skip) Error() string { return fmt.Sprintf("outbox: not sent (%s): %s", s.Status, s.Reason) }

// Options configures a Sender.
type Options struct {
	Messages     *store.Messages
	Suppressions *store.Suppressions
	Composer     Composer
	Limiter      *mail.Limiter // nil: no rate limit
	Backoff      mail.Backoff  // no Base: mail.DefaultBackoff (with Backoff's Jitter)
	Domain       string        // Message-ID domain
	// Owner names this sender in its leases ("" → the host name and a random suffix);
	// Lease is how long a claim holds a message (0 → DefaultLease): longer than composing
	// and sending one takes (mail.SMTP's send timeout is 2 minutes).
	Owner string
	Lease time.Duration
	Now   func() time.Time // the service's clock (nil → time.Now)
	Poll  time.Duration    // Run's interval (0 → DefaultPoll)
	Log   *slog.Logger     // nil → slog.Default()
}

const (
	DefaultLease = 5 * time.Minute
	DefaultPoll  = 5 * time.Second
	// batch is how many due messages one query fetches.
	batch = 50
	// recordTimeout bounds the record of a send, made even when the sender's context has
	// ended (a shutdown): a send the server accepted is recorded rather than repeated.
	recordTimeout = 30 * time.Second
	// maxRateWait bounds how far a rate limit puts a message off.
	maxRateWait = time.Hour
)

// Sender sends the outbox's messages.
type Sender struct {
	o Options
	// recorded, when set (tests), is told how long each send took from the server's
	// acceptance to its record: the window in which a crash makes a repeated send.
	recorded func(id string, window time.Duration)
}

// New returns a sender; see Options for the defaults.
func New(o Options) *Sender {
	if o.Backoff.Base <= 0 {
		jitter := o.Backoff.Jitter
		o.Backoff = mail.DefaultBackoff
		o.Backoff.Jitter = jitter
	}
	if o.Owner == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.Owner = host + "-" + hex.EncodeToString(b[:])
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Sender{o: o}
}

// Run sends the due messages every Poll until ctx ends; it answers nil then.
func (s *Sender) Run(ctx context.Context) error {
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	for {
		if _, err := s.Once(ctx); err != nil && ctx.Err() == nil {
			s.o.Log.Error("outbox: send pass", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Once sends the messages due now, until none is left that this sender can claim, and
// answers how many it handled (sent, or recorded otherwise: retried, put off, failed...).
// Each message is handled at most once per pass.
func (s *Sender) Once(ctx context.Context) (int, error) {
	handled := 0
	seen := map[string]bool{}
	for {
		due, err := s.o.Messages.Due(ctx, s.o.Now(), batch)
		if err != nil {
			return handled, err
		}
		// senders reading the same batch try its messages in different orders
		mrand.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		claimed := false
		for _, m := range due {
			if err := ctx.Err(); err != nil {
				return handled, err
			}
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			held, ok, err := s.o.Messages.Claim(ctx, m, s.o.Owner, s.o.Now(), s.o.Lease)
			if err != nil {
				return handled, err
			}
			if !ok {
				continue
			}
			claimed = true
			if err := s.send(ctx, held); err != nil {
				return handled, err
			}
			handled++
		}
		if !claimed || len(due) < batch {
			return handled, nil
		}
	}
}

// send composes, checks, sends and records m, which this sender holds. Its error is the
// store's: the message stays held until its lease expires, and is sent then.
func (s *Sender) send(ctx context.Context, m store.Message) error {
	c, err := s.o.Composer.Compose(ctx, m)
	var skip *Skip
	switch {
	case errors.As(err, &skip):
		st := skip.Status
		if !st.Final() || st == store.StatusSent {
			st = store.StatusFailed
		}
		return s.record(ctx, m, store.Outcome{Status: st, Attempts: m.Attempts, Answer: skip.Reason}, time.Time{})
	case err != nil && ctx.Err() != nil:
		return s.release(ctx, m, "compose: "+err.Error())
	case err != nil:
		return s.retry(ctx, m, store.Outcome{Answer: "compose: " + err.Error()})
	}
	out := store.Outcome{Attempts: m.Attempts, Address: strings.ToLower(c.Mail.To.Address),
		Language: c.Language, Subject: c.Mail.Subject}
	suppressed, err := s.o.Suppressions.Has(ctx, m.Account, c.Mail.To.Address)
	if err != nil {
		return err
	}
	if suppressed {
		out.Status, out.Answer = store.StatusSuppressed, "the address is on the suppression list"
		return s.record(ctx, m, out, time.Time{})
	}
	if s.o.Limiter != nil {
		if wait := s.o.Limiter.Reserve(c.RateKey); wait > 0 {
			// put it off rather than wait with the lease held
			out.Status, out.SendAt = store.StatusPending, s.o.Now().Add(min(wait, maxRateWait))
			out.Address, out.Language, out.Subject = "", "", ""
			return s.record(ctx, m, out, time.Time{})
		}
	}
	if !s.o.Now().Before(m.LeaseUntil) {
		// composing took the whole lease: another sender may hold the message now
		s.o.Log.Warn("outbox: lease expired before the send", "message", m.ID)
		return nil
	}
	c.Mail.MessageID = mail.MessageID(m.ID, s.o.Domain)
	out.MessageID = c.Mail.MessageID
	_, err = c.Transport.Send(ctx, c.Mail)
	accepted := time.Now()
	now := s.o.Now()
	switch {
	case err == nil:
		out.Status, out.Attempts, out.Answer, out.SentAt = store.StatusSent, m.Attempts+1, "accepted", now
		return s.record(ctx, m, out, accepted)
	case ctx.Err() != nil:
		return s.release(ctx, m, err.Error())
	case mail.IsTemporary(err):
		out.Answer = err.Error()
		return s.retry(ctx, m, out)
	case mail.IsBounce(err):
		out.Status, out.Attempts, out.Answer = store.StatusBounced, m.Attempts+1, err.Error()
		// the suppression first: a crash before the record sends again, into the list
		rc, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		err = s.o.Suppressions.Add(rc, store.Suppression{Account: m.Account, Address: c.Mail.To.Address,
			Reason: bounceReason(err), MessageID: m.ID, Created: now})
		cancel()
		if err != nil {
			return err
		}
		return s.record(ctx, m, out, time.Time{})
	default:
		out.Status, out.Attempts, out.Answer = store.StatusFailed, m.Attempts+1, err.Error()
		return s.record(ctx, m, out, time.Time{})
	}
}

// retry records a failed attempt of m: pending again on the backoff schedule, or failed
// when no attempt is left.
func (s *Sender) retry(ctx context.Context, m store.Message, out store.Outcome) error {
	return s.record(ctx, m, retryOutcome(m, out, s.o.Backoff, s.o.Now()), time.Time{})
}

// retryOutcome is out after a temporary failure of m's attempt at now.
func retryOutcome(m store.Message, out store.Outcome, b mail.Backoff, now time.Time) store.Outcome {
	out.Attempts = m.Attempts + 1
	at, ok := b.Next(now, out.Attempts)
	if !ok {
		out.Status = store.StatusFailed
		out.Answer = fmt.Sprintf("%d attempts: %s", out.Attempts, out.Answer)
		return out
	}
	out.Status, out.SendAt = store.StatusPending, at
	return out
}

// release gives m back, due now, without counting an attempt: this sender is stopping.
func (s *Sender) release(ctx context.Context, m store.Message, answer string) error {
	return s.record(ctx, m, store.Outcome{Status: store.StatusPending, SendAt: s.o.Now(),
		Attempts: m.Attempts, Answer: "interrupted: " + answer}, time.Time{})
}

// record writes out under m's lease. accepted, when not zero, is when the server accepted
// the message (the crash window's start).
func (s *Sender) record(ctx context.Context, m store.Message, out store.Outcome, accepted time.Time) error {
	rc, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := s.o.Messages.Finish(rc, m, out, s.o.Now())
	if !accepted.IsZero() && s.recorded != nil && err == nil {
		s.recorded(m.ID, time.Since(accepted))
	}
	if errors.Is(err, store.ErrLeaseLost) {
		// its lease expired and another sender took it: that one records it
		s.o.Log.Warn("outbox: lease lost before the record", "message", m.ID, "status", out.Status)
		return nil
	}
	return err
}

// bounceReason is what the suppression list keeps of a bounce: the server's answer.
func bounceReason(err error) string {
	var e *mail.Error
	if errors.As(err, &e) && e.Code != 0 {
		return strings.TrimSpace(fmt.Sprintf("%d %s %s", e.Code, e.Enhanced, e.Text))
	}
	return err.Error()
}
