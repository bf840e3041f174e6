package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
)

// message-log: the account's messages, with their status and the provider's answer, and the
// suppression list (message-suppression).

var statuses = []string{string(store.StatusScheduled), string(store.StatusPending), string(store.StatusSending),
	string(store.StatusSent), string(store.StatusFailed), string(store.StatusBounced), string(store.StatusCancelled),
	string(store.StatusSuppressed)}

type messageAnswer struct {
	MessageID     string  `json:"message_id"`
	Trigger       string  `json:"trigger"`
	BookingID     int64   `json:"booking_id"`
	PropertyID    int64   `json:"property_id"`
	To            string  `json:"to"`
	Address       string  `json:"address"`
	Language      string  `json:"language"`
	Subject       string  `json:"subject"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	SendAt        *string `json:"send_at"`
	SentAt        *string `json:"sent_at"`
	Answer        string  `json:"answer"`
	Opens         int     `json:"opens"`
	SMTPMessageID string  `json:"smtp_message_id"`
	CreatedAt     *string `json:"created_at"`
	UpdatedAt     *string `json:"updated_at"`
}

func messageAnswerOf(m store.Message) messageAnswer {
	return messageAnswer{MessageID: m.ID, Trigger: m.Trigger, BookingID: m.BookingID, PropertyID: m.PropertyID, To: string(m.To),
		Address: m.Address, Language: m.Language, Subject: m.Subject, Status: string(m.Status), Attempts: m.Attempts,
		SendAt: stamp(m.SendAt), SentAt: stamp(m.SentAt), Answer: m.Answer, Opens: m.Opens, SMTPMessageID: m.MessageID,
		CreatedAt: stamp(m.Created), UpdatedAt: stamp(m.Updated)}
}

func (a *API) logResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "list", "get")
	ctx, acct := c.UserContext(), account(c)
	if action == "" {
		return v.Err()
	}
	if action == "get" {
		id, _ := o.String("message_id", fields.Str{Required: true, Max: 1000})
		if err := v.Err(); err != nil {
			return err
		}
		m, ok, err := a.d.Messages.Get(ctx, acct, id)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("message " + id + " does not exist")
		}
		return httpapi.A(c, messageAnswerOf(m))
	}
	p := readPage(o, 20)
	var f store.MessageFilter
	booking, _ := o.Int("booking_id", fields.Int{Min: 1, Max: maxID})
	f.BookingID = int64(booking)
	f.Trigger, _ = o.String("trigger", fields.Str{OneOf: template.Triggers()})
	status, _ := o.String("status", fields.Str{OneOf: statuses, IgnoreCase: true})
	f.Status = store.Status(status)
	f.Address, _ = o.String("address", fields.Str{Max: fields.MaxEmail})
	if err := v.Err(); err != nil {
		return err
	}
	f.Page, f.Limit = p.page, p.limit
	msgs, total, err := a.d.Messages.List(ctx, acct, f)
	if err != nil {
		return err
	}
	out := make([]messageAnswer, len(msgs))
	for i, m := range msgs {
		out[i] = messageAnswerOf(m)
	}
	return httpapi.A(c, fiber.Map{"total": total, "page": p.page, "limit": p.limit, "messages": out})
}

type suppressionAnswer struct {
	Address   string  `json:"address"`
	Reason    string  `json:"reason"`
	MessageID string  `json:"message_id"`
	CreatedAt *string `json:"created_at"`
}

func (a *API) suppressionResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "list", "delete")
	ctx, acct := c.UserContext(), account(c)
	if action == "" {
		return v.Err()
	}
	if action == "delete" {
		addr, _ := o.String("address", fields.Str{Required: true, Max: fields.MaxEmail})
		if err := v.Err(); err != nil {
			return err
		}
		ok, err := a.d.Suppressions.Remove(ctx, acct, addr)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("address " + addr + " is not on the suppression list")
		}
		return httpapi.A(c, fiber.Map{"address": strings.ToLower(strings.TrimSpace(addr)), "deleted": true})
	}
	p := readPage(o, 50)
	if err := v.Err(); err != nil {
		return err
	}
	all, err := a.d.Suppressions.List(ctx, acct)
	if err != nil {
		return err
	}
	total, items := pageOf(p, all)
	out := make([]suppressionAnswer, len(items))
	for i, s := range items {
		out[i] = suppressionAnswer{Address: s.Address, Reason: s.Reason, MessageID: s.MessageID, CreatedAt: stamp(s.Created)}
	}
	return httpapi.A(c, fiber.Map{"total": total, "page": p.page, "limit": p.limit, "suppressions": out})
}
