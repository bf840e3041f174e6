// Package compose turns a message of the log into the mail the outbox sends
// (docs/messaging.md, "Delivery"): it reads the booking from booking-svc (the guest and the
// booking's content are never kept by messaging-svc), the property's and account's views
// and the account's settings, picks the template (template.Choose over the account's, else
// vros's defaults) in the message's language, renders it, and chooses the sender, the
// recipient and the transport (the account's own SMTP server, its password opened with
// libs/seal, else the operator's).
//
// Choices it makes, documented in docs/messaging.md ("Running it"):
//   - an owner notice goes to the account's first notification address alone (one message
//     per natural id, so that a bounce names one address); no address: cancelled;
//   - the sender is the account's address, else the operator's (VROS_MESSAGING_FROM), under
//     the account's sender name, else the booking's brand's name, else the account's name; Reply-To is the account's reply address,
//     else, when the operator's address sends, the account's first notification address;
//   - the reminders (the scheduled triggers: stay.arrival, stay.checkout, stay.thanks,
//     payment.due_soon) carry List-Unsubscribe, a mailto: of that reply address (else the
//     sender's) with the subject "unsubscribe", and List-Unsubscribe-Post; the other
//     triggers are transactional and carry neither;
//   - the rate key is the account;
//   - .Account.Name is the account view's name, else (the events carry none today) the
//     property's name, so that "booking with {{.Brand.Name | default .Account.Name}}" names
//     the place the guest booked.
package compose

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/messaging-svc/internal/bookingsvc"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/outbox"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// ErrNoBooking: the account has no such booking at booking-svc (never made, or erased).
var ErrNoBooking = errors.New("compose: the booking does not exist")

// Bookings reads a booking from booking-svc (*bookingsvc.Client): bookingsvc.ErrNotFound when
// it has none.
type Bookings interface {
	Booking(ctx context.Context, account string, id int64) (bookingsvc.Booking, error)
}

// Views are the property and account views (*store.Views).
type Views interface {
	Property(ctx context.Context, account string, id int64) (store.PropertyView, bool, error)
	Account(ctx context.Context, account string) (store.AccountView, bool, error)
}

// Templates answers the account's templates of a trigger in a language and in English
// (*store.Templates).
type Templates interface {
	ForTrigger(ctx context.Context, account, trigger, lang string) ([]template.Template, error)
}

// Settings answers the account's messaging settings (*store.Settings).
type Settings interface {
	Get(ctx context.Context, account string) (store.AccountSettings, error)
}

// Snapshots answers the last booking snapshot applied (*store.Snapshots; nil: none): what a
// payment.failed message shows of the refused charge.
type Snapshots interface {
	Get(ctx context.Context, account string, booking int64) (*contract.Booking, error)
}

// Options are what a Composer reads and sends with.
type Options struct {
	Bookings  Bookings
	Views     Views
	Templates Templates
	Settings  Settings
	Snapshots Snapshots
	// Box opens the accounts' SMTP passwords.
	Box *seal.Box
	// From is the operator's sender (zero Address: none); SMTP the operator's mail server
	// (nil: none).
	From netmail.Address
	SMTP *mail.SMTPConfig
	// AccountSMTP completes an account's SMTP server (timeouts, TLS roots in tests): nil
	// leaves it as the settings give it.
	AccountSMTP func(*mail.SMTPConfig)
	// Now is the clock (nil: time.Now): the message's sent date.
	Now func() time.Time
}

// Composer implements outbox.Composer and the api's Previewer and Tester.
type Composer struct {
	o        Options
	operator mail.Transport // nil: no operator's mail server
}

// New returns a Composer over o; an operator's SMTP server that does not check is an error.
func New(o Options) (*Composer, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Composer{o: o}
	if o.SMTP != nil {
		t, err := mail.NewSMTP(*o.SMTP)
		if err != nil {
			return nil, err
		}
		c.operator = t
	}
	return c, nil
}

var _ outbox.Composer = (*Composer)(nil)

func skip(status store.Status, reason string) error {
	return &outbox.Skip{Status: status, Reason: reason}
}

// Compose answers the mail of m, its transport and rate key: a *outbox.Skip when m must not
// be sent (cancelled: the booking is gone, or an owner notice has no address; failed: no
// guest address, no sender, no mail server, a template that does not render); any other
// error is temporary (booking-svc or the store unreachable).
func (c *Composer) Compose(ctx context.Context, m store.Message) (outbox.Composed, error) {
	set, err := c.o.Settings.Get(ctx, m.Account)
	if err != nil {
		return outbox.Composed{}, err
	}
	var to netmail.Address
	if m.To == trigger.Owner {
		if len(set.Notify) == 0 {
			return outbox.Composed{}, skip(store.StatusCancelled, "no notification address")
		}
		a, err := netmail.ParseAddress(set.Notify[0])
		if err != nil {
			return outbox.Composed{}, skip(store.StatusFailed, "the notification address does not parse: "+err.Error())
		}
		to = *a
	}
	var b *bookingsvc.Booking
	if m.BookingID > 0 {
		got, err := c.o.Bookings.Booking(ctx, m.Account, m.BookingID)
		switch {
		case errors.Is(err, bookingsvc.ErrNotFound):
			return outbox.Composed{}, skip(store.StatusCancelled, "the booking no longer exists")
		case err != nil:
			return outbox.Composed{}, err
		}
		b = &got
	}
	if m.To != trigger.Owner {
		if b == nil || strings.TrimSpace(b.Email) == "" {
			return outbox.Composed{}, skip(store.StatusFailed, "the guest has no email address")
		}
		a, err := netmail.ParseAddress(strings.TrimSpace(b.Email))
		if err != nil {
			return outbox.Composed{}, skip(store.StatusFailed, "the guest's email address does not parse: "+err.Error())
		}
		to = netmail.Address{Name: guestName(*b), Address: a.Address}
	}
	ctxData, err := c.context(ctx, m.Account, b, m.PropertyID, m.BrandID)
	if err != nil {
		return outbox.Composed{}, err
	}
	lang := ctxData.language(m.Lang)
	d := ctxData.data(m.Trigger, lang, c.o.Now())
	if err := c.detail(ctx, m, b, &d); err != nil {
		return outbox.Composed{}, err
	}
	t, err := c.template(ctx, m.Account, m.Trigger, lang, ctxData.brand, ctxData.property)
	if err != nil {
		return outbox.Composed{}, err
	}
	d.Message.Language = t.Language
	r, err := template.Render(ctx, t, d)
	if err != nil {
		if ctx.Err() != nil {
			return outbox.Composed{}, err
		}
		return outbox.Composed{}, skip(store.StatusFailed, "the template does not render: "+err.Error())
	}
	from, replyTo, err := c.sender(set, ctxData)
	if err != nil {
		return outbox.Composed{}, err
	}
	tr, err := c.transport(set)
	if err != nil {
		return outbox.Composed{}, err
	}
	msg := mail.Message{From: from, ReplyTo: replyTo, To: to, Subject: r.Subject, Text: r.Text, HTML: r.HTML}
	if def, ok := trigger.Lookup(m.Trigger); ok && def.Scheduled() {
		addr := replyTo.Address
		if addr == "" {
			addr = from.Address
		}
		msg.ListUnsubscribe = "<mailto:" + addr + "?subject=unsubscribe>"
		msg.Headers = map[string]string{"List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
	}
	return outbox.Composed{Mail: msg, Transport: tr, RateKey: m.Account, Language: t.Language}, nil
}

// detail fills what m's trigger is about: the payment received (its occurrence is the
// payment's id), the refused charge of a payment.failed (from the booking's last snapshot:
// trigger.ChargeFailure), the installment a reminder or a failure is about (the first
// unpaid), and what an event trigger's source carried (m.Detail: Channel, Reason).
func (c *Composer) detail(ctx context.Context, m store.Message, b *bookingsvc.Booking, d *template.Data) error {
	switch m.Trigger {
	case trigger.PaymentReceived:
		for _, p := range d.Booking.Payments {
			if strconv.FormatInt(p.ID, 10) == m.Occurrence {
				d.Message.Payment = p
			}
		}
	case trigger.PaymentFailed:
		d.Message.Installment = firstUnpaid(d.Booking.Schedule)
		if c.o.Snapshots != nil && b != nil {
			snap, err := c.o.Snapshots.Get(ctx, m.Account, m.BookingID)
			if err != nil {
				return err
			}
			if snap != nil {
				if f, ok := trigger.ChargeFailure(*snap, m.Occurrence); ok {
					loc := time.UTC
					if l, err := time.LoadLocation(d.Property.Timezone); err == nil && d.Property.Timezone != "" {
						loc = l
					}
					d.Message.Payment = template.Payment{Amount: money(jsonText(f.Amount), pricing.Scale(f.Currency)),
						Date: f.At.In(loc).Format(time.DateOnly), Method: "card"}
					d.Message.Reason = f.Reason
				}
			}
		}
	case trigger.PaymentDueSoon:
		d.Message.Installment = firstUnpaid(d.Booking.Schedule)
	}
	if v, ok := m.Detail["Channel"]; ok {
		d.Message.Channel = v
	}
	if v, ok := m.Detail["Reason"]; ok {
		d.Message.Reason = v
	}
	return nil
}

// jsonText is a string as money's argument.
type jsonText string

func (s jsonText) String() string { return string(s) }

// guestName is the name a guest's address shows.
func guestName(b bookingsvc.Booking) string {
	if n := strings.TrimSpace(b.FirstName + " " + b.LastName); n != "" {
		return n
	}
	return strings.TrimSpace(b.FullName)
}

// sender answers the From and Reply-To of the account's messages.
func (c *Composer) sender(set store.AccountSettings, x *views) (from, replyTo netmail.Address, err error) {
	// The name: the account's, else its brand's or its own name, else the operator's.
	name := set.FromName
	if name == "" {
		name = x.senderName()
	}
	switch {
	case set.FromAddress != "":
		from = netmail.Address{Name: name, Address: set.FromAddress}
	case c.o.From.Address != "":
		from = c.o.From
		if name != "" {
			from.Name = name
		}
	default:
		return from, replyTo, skip(store.StatusFailed, "no sender address: the account sets none and VROS_MESSAGING_FROM is unset")
	}
	switch {
	case set.ReplyTo != "":
		replyTo = netmail.Address{Name: from.Name, Address: set.ReplyTo}
	case set.FromAddress == "" && len(set.Notify) > 0:
		replyTo = netmail.Address{Name: from.Name, Address: set.Notify[0]}
	}
	return from, replyTo, nil
}

// transport is the account's SMTP server, else the operator's.
func (c *Composer) transport(set store.AccountSettings) (mail.Transport, error) {
	if s := set.SMTP; s != nil {
		cfg, err := c.accountSMTP(set.Account, *s)
		if err != nil {
			return nil, err
		}
		t, err := mail.NewSMTP(cfg)
		if err != nil {
			return nil, skip(store.StatusFailed, "the account's SMTP server: "+err.Error())
		}
		return t, nil
	}
	if c.operator == nil {
		return nil, skip(store.StatusFailed, "no mail server: the account has none and VROS_MESSAGING_SMTP_HOST is unset")
	}
	return c.operator, nil
}

// accountSMTP is the account's server with its password opened.
func (c *Composer) accountSMTP(account string, s store.SMTPSettings) (mail.SMTPConfig, error) {
	var password string
	if len(s.Password) > 0 {
		if c.o.Box == nil {
			return mail.SMTPConfig{}, skip(store.StatusFailed, "the account's SMTP password cannot be opened: no encryption key")
		}
		p, err := store.OpenSMTPPassword(c.o.Box, account, s.Password)
		if err != nil {
			return mail.SMTPConfig{}, skip(store.StatusFailed, "the account's SMTP password does not open (VROS_ENCRYPTION_KEY changed?)")
		}
		password = p
	}
	cfg := mail.SMTPConfig{Host: s.Host, Port: s.Port, Username: s.Username, Password: password, TLS: s.TLS}
	if c.o.AccountSMTP != nil {
		c.o.AccountSMTP(&cfg)
	}
	return cfg, nil
}

// template picks the template of the trigger in lang for the booking's brand and property.
func (c *Composer) template(ctx context.Context, account, trig, lang string, brand, property int64) (template.Template, error) {
	ts, err := c.o.Templates.ForTrigger(ctx, account, trig, lang)
	if err != nil {
		return template.Template{}, err
	}
	t, ok := template.Choose(ts, trig, lang, brand, property)
	if !ok {
		return template.Template{}, skip(store.StatusFailed, fmt.Sprintf("%q is not a trigger", trig))
	}
	return t, nil
}

// Data builds the data of a message of trigger trig in lang about the account's booking
// (the api's preview): ErrNoBooking when booking-svc has no such booking.
func (c *Composer) Data(ctx context.Context, account string, booking int64, trig, lang string) (template.Data, error) {
	b, err := c.o.Bookings.Booking(ctx, account, booking)
	if errors.Is(err, bookingsvc.ErrNotFound) {
		return template.Data{}, fmt.Errorf("booking %d: %w", booking, ErrNoBooking)
	}
	if err != nil {
		return template.Data{}, err
	}
	x, err := c.context(ctx, account, &b, 0, 0)
	if err != nil {
		return template.Data{}, err
	}
	d := x.data(trig, lang, c.o.Now())
	// What the trigger is about, as a preview shows it: the last payment received, the
	// first installment unpaid.
	for i := len(d.Booking.Payments) - 1; i >= 0; i-- {
		if d.Booking.Payments[i].Kind == "" {
			d.Message.Payment = d.Booking.Payments[i]
			break
		}
	}
	d.Message.Installment = firstUnpaid(d.Booking.Schedule)
	return d, nil
}

// Test sends a test message to address through the account's transport now, and answers
// the server's acceptance or why it failed (messaging-settings `test`).
func (c *Composer) Test(ctx context.Context, account, address string) (string, error) {
	to, err := netmail.ParseAddress(address)
	if err != nil {
		return "", fmt.Errorf("the address does not parse: %w", err)
	}
	set, err := c.o.Settings.Get(ctx, account)
	if err != nil {
		return "", err
	}
	x, err := c.context(ctx, account, nil, 0, 0)
	if err != nil {
		return "", err
	}
	from, replyTo, err := c.sender(set, x)
	if err != nil {
		return "", reason(err)
	}
	tr, err := c.transport(set)
	if err != nil {
		return "", reason(err)
	}
	now := c.o.Now()
	domain := "localhost"
	if _, d, ok := strings.Cut(from.Address, "@"); ok && d != "" {
		domain = d
	}
	rc, err := tr.Send(ctx, mail.Message{From: from, ReplyTo: replyTo, To: *to,
		Subject:   "vros test message",
		Text:      "This is a test message from vros: the account's mail settings work.\n",
		MessageID: mail.MessageID(account+":test:"+now.UTC().Format(time.RFC3339Nano), domain)})
	if err != nil {
		return "", err
	}
	return "accepted, Message-ID <" + rc.MessageID + ">", nil
}

// reason turns a Skip into a plain error (its reason).
func reason(err error) error {
	var s *outbox.Skip
	if errors.As(err, &s) {
		return errors.New(s.Reason)
	}
	return err
}
