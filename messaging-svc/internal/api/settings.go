package api

import (
	"errors"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/store"
)

// messaging-settings: the account's sender, owner notices' addresses and SMTP server (its
// password write-only), and a test message through it.

// MaxNotify bounds the owner notices' addresses.
const MaxNotify = 10

var (
	// oneLine: a header's value (a sender's name) holds no line break.
	oneLine = regexp.MustCompile(`^[^\r\n]*$`)
	// hostName: a DNS name or an IP address, no scheme, port or path.
	hostName = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$|^\[?[0-9A-Fa-f:.]+\]?$`)
	tlsModes = []string{string(mail.TLSNone), string(mail.TLSStartTLS), string(mail.TLSImplicit)}
)

type smtpAnswer struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Username string `json:"username"`
	TLS      string `json:"tls"`
}

type settingsAnswer struct {
	FromName        string      `json:"from_name"`
	FromAddress     string      `json:"from_address"`
	ReplyTo         string      `json:"reply_to"`
	Notify          []string    `json:"notify"`
	SMTP            *smtpAnswer `json:"smtp"` // null: the operator's transport
	SMTPPasswordSet bool        `json:"smtp_password_set"`
	Version         int64       `json:"version"`
}

func settingsAnswerOf(s store.AccountSettings) settingsAnswer {
	out := settingsAnswer{FromName: s.FromName, FromAddress: s.FromAddress, ReplyTo: s.ReplyTo, Notify: append([]string{}, s.Notify...),
		Version: s.Version}
	if s.SMTP != nil {
		out.SMTP = &smtpAnswer{Host: s.SMTP.Host, Port: s.SMTP.Port, Username: s.SMTP.Username, TLS: string(s.SMTP.TLS)}
		out.SMTPPasswordSet = len(s.SMTP.Password) > 0
	}
	return out
}

func (a *API) settingsResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "get", "update", "test")
	ctx, acct := c.UserContext(), account(c)
	if action == "" {
		return v.Err()
	}
	switch action {
	case "test":
		addr, _ := o.Email("address", true)
		if err := v.Err(); err != nil {
			return err
		}
		if a.d.Tester == nil {
			return httpapi.Unavailable("a test message is not available: no transport")
		}
		answer, err := a.d.Tester.Test(ctx, acct, addr)
		if err != nil {
			return httpapi.A(c, fiber.Map{"address": addr, "ok": false, "answer": "", "error": err.Error()})
		}
		return httpapi.A(c, fiber.Map{"address": addr, "ok": true, "answer": answer, "error": ""})
	case "update":
	default:
		if err := v.Err(); err != nil {
			return err
		}
		s, err := a.d.Settings.Get(ctx, acct)
		if err != nil {
			return err
		}
		return httpapi.A(c, settingsAnswerOf(s))
	}
	cur, err := a.d.Settings.Get(ctx, acct)
	if err != nil {
		return err
	}
	d, password, sealPassword := a.decodeDelivery(o, cur)
	if err := v.Err(); err != nil {
		return err
	}
	if sealPassword {
		if a.d.Box == nil {
			return errors.New("messaging-settings: no encryption key to seal the SMTP password with")
		}
		d.SMTP.Password = store.SealSMTPPassword(a.d.Box, acct, password)
	}
	var saved store.AccountSettings
	err = a.write(ctx, acct, func() error {
		var err error
		saved, err = a.d.Settings.SetDelivery(ctx, acct, d, a.d.Now())
		return err
	})
	if err != nil {
		return err
	}
	return httpapi.A(c, settingsAnswerOf(saved))
}

// decodeDelivery reads an update: a member absent (or null) keeps its value, "" ([] for
// notify; {} or null for smtp) clears it. It answers the delivery to save and, when a password was
// sent, the password to seal into it.
func (a *API) decodeDelivery(o *fields.Object, cur store.AccountSettings) (d store.Delivery, password string, seal bool) {
	d = store.Delivery{FromName: cur.FromName, FromAddress: cur.FromAddress, ReplyTo: cur.ReplyTo, Notify: cur.Notify,
		SMTP: cur.SMTP, KeepPassword: true}
	sent := o.Has // null is "not sent" (docs/interface-a.md), but for smtp

	if sent("from_name") {
		d.FromName, _ = o.String("from_name", fields.Str{Max: 100, Pattern: oneLine, PatternMsg: "must be one line"})
	}
	if sent("from_address") {
		d.FromAddress, _ = o.Email("from_address", false)
	}
	if sent("reply_to") {
		d.ReplyTo, _ = o.Email("reply_to", false)
	}
	if sent("notify") {
		d.Notify = nil
		list, _ := o.Strings("notify", fields.List{Max: MaxNotify}, fields.Str{Max: fields.MaxEmail})
		for i, addr := range list {
			switch {
			case !fields.ValidEmail(addr):
				o.Add(fields.Index("notify", i), "must be a valid email address")
			case slices.ContainsFunc(d.Notify, func(x string) bool { return strings.EqualFold(x, addr) }):
				o.Add(fields.Index("notify", i), addr+" is listed twice")
			default:
				d.Notify = append(d.Notify, addr)
			}
		}
	}
	if o.Kind("smtp") == fields.KindAbsent {
		return d, "", false
	}
	if o.Empty("smtp") { // null, {} or []: the operator's transport
		d.SMTP = nil
		return d, "", false
	}
	s := o.Object("smtp", false)
	if s == nil {
		return d, "", false
	}
	var out store.SMTPSettings
	out.Host, _ = s.String("host", fields.Str{Required: true, Max: 253, Pattern: hostName,
		PatternMsg: "must be a host name or an IP address (no scheme, port or path)"})
	if out.Host != "" && !a.d.AllowPrivateSMTP && privateHost(out.Host) {
		s.Add("host", "must be a public server: not localhost, a loopback, private or link-local address")
	}
	out.Port, _ = s.Int("port", fields.Int{Required: true, Min: 1, Max: 65535})
	out.Username, _ = s.String("username", fields.Str{Max: 256, Pattern: oneLine, PatternMsg: "must be one line"})
	tls := string(mail.TLSStartTLS)
	if s.Has("tls") {
		tls, _ = s.String("tls", fields.Str{Required: true, OneOf: tlsModes, IgnoreCase: true})
	}
	out.TLS = mail.TLSMode(tls)
	d.SMTP = &out
	switch s.Kind("password") {
	case fields.KindAbsent, fields.KindNull:
		// kept (KeepPassword)
	default:
		password, _ = s.String("password", fields.Str{Max: 1024})
		d.KeepPassword = false
		seal = password != ""
	}
	return d, password, seal
}

// privateHost tells whether host names this machine or a private network: localhost, or an
// IP address that is loopback, private, link-local or unspecified.
func privateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(h, "[]"))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() ||
		ip.IsMulticast() || ip.IsInterfaceLocalMulticast()
}
