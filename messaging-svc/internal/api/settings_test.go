package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vros/vros/libs/fields/fieldstest"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

func (e *env) triggers(t *testing.T, account string) string {
	t.Helper()
	return fmt.Sprint(e.ok(t, account, "message-trigger", `{"action":"get"}`))
}

func TestTriggerGetAndUpdate(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("triggers")
	got := e.ok(t, acc, "message-trigger", `{"action":"get"}`)
	list := got["triggers"].([]any)
	if len(list) != len(trigger.Catalog()) {
		t.Fatalf("%d triggers, want the catalog's %d", len(list), len(trigger.Catalog()))
	}
	byName := func(list []any, name string) map[string]any {
		for _, x := range list {
			if m := x.(map[string]any); m["trigger"] == name {
				return m
			}
		}
		t.Fatalf("no %s in %v", name, list)
		return nil
	}
	if a := byName(list, "stay.arrival"); a["to"] != "guest" || a["enabled"] != true || num(a["days"]) != 3 || a["time"] != "10:00" || a["scheduled"] != true {
		t.Fatalf("stay.arrival by default: %v", a)
	}
	if b := byName(list, "owner.booking"); b["to"] != "owner" || b["days"] != nil || b["time"] != nil || b["scheduled"] != false {
		t.Fatalf("owner.booking: %v", b)
	}

	up := e.ok(t, acc, "message-trigger", `{"action":"update","triggers":[{"trigger":"stay.arrival","enabled":true,"days":5,"time":"08:30"},
		{"trigger":"booking.modified","enabled":"0"},{"trigger":"stay.checkout","days":"0"}]}`)
	list = up["triggers"].([]any)
	if a := byName(list, "stay.arrival"); num(a["days"]) != 5 || a["time"] != "08:30" {
		t.Fatalf("stay.arrival updated: %v", a)
	}
	if m := byName(list, "booking.modified"); m["enabled"] != false {
		t.Fatalf("booking.modified: %v", m)
	}
	if c := byName(list, "stay.checkout"); num(c["days"]) != 0 || c["time"] != "18:00" || c["enabled"] != true {
		t.Fatalf("stay.checkout: %v (members not sent keep their value)", c)
	}
	if e.replan.count(acc) != 1 {
		t.Fatalf("re-planned %d times, want once", e.replan.count(acc))
	}
	if again := e.ok(t, acc, "message-trigger", `{"action":"get"}`); fmt.Sprint(again) != fmt.Sprint(up) {
		t.Fatalf("get after update:\n%v\nwant\n%v", again, up)
	}
	s, err := e.deps.Settings.Get(context.Background(), acc)
	if err != nil || s.Triggers.For("stay.arrival").Days != 5 || s.Triggers.For("booking.modified").Enabled {
		t.Fatalf("stored %+v, %v", s, err)
	}

	// The re-plan failing: saved, 503 asking to send it again.
	e.replan.mu.Lock()
	e.replan.fail = errors.New("mongo down")
	e.replan.mu.Unlock()
	e.refused(t, acc, "message-trigger", `{"action":"update","triggers":[{"trigger":"stay.thanks","enabled":false}]}`, 503, "send the update again")
	if s, _ := e.deps.Settings.Get(context.Background(), acc); s.Triggers.For("stay.thanks").Enabled {
		t.Fatal("the change was not saved")
	}
}

func TestTriggerRules(t *testing.T) {
	e := newEnv(t)
	base := `{"action":"update","triggers":[{"trigger":"stay.arrival","enabled":true,"days":3,"time":"10:00"},{"trigger":"owner.booking","enabled":false}]}`
	e.rows(t, "message-trigger", base, nil, e.triggers, []row{
		{"valid", "", nil},
		{"days 60 and midnight", "", []fieldstest.Edit{set("triggers.0.days", 60), set("triggers.0.time", "00:00")}},
		{"no triggers", "triggers: is required", []fieldstest.Edit{set("triggers", nil)}},
		{"an empty list", "triggers: must have at least 1 item", []fieldstest.Edit{set("triggers", []any{})}},
		{"an item not an object", "triggers[1]: must be an object", []fieldstest.Edit{set("triggers.1", "owner.booking")}},
		{"no trigger", "triggers[0].trigger: is required", []fieldstest.Edit{set("triggers.0.trigger", nil)}},
		{"unknown trigger", "triggers[1].trigger: must be one of booking.confirmed, booking.modified, booking.cancelled, payment.received, payment.failed, payment.due_soon, deposit.held, deposit.released, stay.arrival, stay.checkout, stay.thanks, owner.booking, owner.cancellation, owner.channel_conflict",
			[]fieldstest.Edit{set("triggers.1.trigger", "owner.bookings")}},
		{"given twice", "triggers[1].trigger: stay.arrival is given twice", []fieldstest.Edit{set("triggers.1.trigger", "stay.arrival")}},
		{"days above 60", "triggers[0].days: must be 0 to 60", []fieldstest.Edit{set("triggers.0.days", 61)}},
		{"negative days", "triggers[0].days: must be 0 to 60", []fieldstest.Edit{set("triggers.0.days", "-1")}},
		{"fractional days", "triggers[0].days: must be a whole number", []fieldstest.Edit{set("triggers.0.days", 2.5)}},
		{"time not HH:MM", "triggers[0].time: must be a 24-hour time HH:MM", []fieldstest.Edit{set("triggers.0.time", "25:00")}},
		{"time with a space", "triggers[0].time: must be a 24-hour time HH:MM", []fieldstest.Edit{set("triggers.0.time", " 9:00")}},
		{"days on an event trigger", "triggers[1].days: is only for scheduled triggers", []fieldstest.Edit{set("triggers.1.days", 2)}},
		{"time on an event trigger", "triggers[1].time: is only for scheduled triggers", []fieldstest.Edit{set("triggers.1.time", "09:00")}},
		{"enabled not a boolean", "triggers[1].enabled: must be a boolean", []fieldstest.Edit{set("triggers.1.enabled", "off")}},
		{"every item's rule at once", "triggers[0].days: must be 0 to 60\ntriggers[1].time: is only for scheduled triggers",
			[]fieldstest.Edit{set("triggers.0.days", 99), set("triggers.1.time", "09:00")}},
	})
}

func (e *env) settings(t *testing.T, account string) string {
	t.Helper()
	s, err := e.deps.Settings.Get(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%+v %+v", s, s.SMTP)
}

func TestSettingsRules(t *testing.T) {
	e := newEnv(t)
	base := `{"action":"update","from_name":"Villa Aurora","from_address":"stay@aurora.example","reply_to":"desk@aurora.example",
		"notify":["owner@aurora.example"],"smtp":{"host":"smtp.aurora.example","port":587,"username":"stay","password":"s3cret","tls":"starttls"}}`
	e.rows(t, "messaging-settings", base, nil, e.settings, []row{
		{"valid", "", nil},
		{"implicit TLS in any case", "", []fieldstest.Edit{set("smtp.tls", "TLS"), set("smtp.port", "465")}},
		{"tls absent: starttls", "", []fieldstest.Edit{set("smtp.tls", nil)}},
		{"the operator's transport", "", []fieldstest.Edit{set("smtp", map[string]any{})}},
		{"ten addresses", "", []fieldstest.Edit{set("notify", []any{"a0@x.example", "a1@x.example", "a2@x.example", "a3@x.example",
			"a4@x.example", "a5@x.example", "a6@x.example", "a7@x.example", "a8@x.example", "a9@x.example"})}},
		{"unknown action", "action: must be one of get, update, test", []fieldstest.Edit{set("action", "put")}},
		{"from_name with a line break", "from_name: must be one line", []fieldstest.Edit{set("from_name", "Villa\r\nBcc: x@y.example")}},
		{"from_name too long", "from_name: must be at most 100 characters", []fieldstest.Edit{set("from_name", fieldstest.Chars(101))}},
		{"from_address not an address", "from_address: must be a valid email address", []fieldstest.Edit{set("from_address", "Villa <stay@aurora.example>")}},
		{"reply_to not an address", "reply_to: must be a valid email address", []fieldstest.Edit{set("reply_to", "desk@aurora")}},
		{"notify not a list", "notify: must be an array", []fieldstest.Edit{set("notify", "owner@aurora.example")}},
		{"notify eleven", "notify: must have at most 10 items", []fieldstest.Edit{set("notify", fieldstest.Many(11, `"a@x.example"`))}},
		{"notify not an address", "notify[1]: must be a valid email address", []fieldstest.Edit{set("notify", []any{"a@x.example", "b@x"})}},
		{"notify twice", "notify[1]: A@x.example is listed twice", []fieldstest.Edit{set("notify", []any{"a@x.example", "A@x.example"})}},
		{"smtp not an object", "smtp: must be an object", []fieldstest.Edit{set("smtp", 5)}},
		{"no host", "smtp.host: is required", []fieldstest.Edit{set("smtp.host", "")}},
		{"host with a scheme", "smtp.host: must be a host name or an IP address (no scheme, port or path)", []fieldstest.Edit{set("smtp.host", "smtp://x.example")}},
		{"host with a port", "smtp.host: must be a host name or an IP address (no scheme, port or path)", []fieldstest.Edit{set("smtp.host", "x.example:25")}},
		{"loopback host", "smtp.host: must be a public server: not localhost, a loopback, private or link-local address", []fieldstest.Edit{set("smtp.host", "127.0.0.1")}},
		{"private host", "smtp.host: must be a public server: not localhost, a loopback, private or link-local address", []fieldstest.Edit{set("smtp.host", "10.1.2.3")}},
		{"link-local host", "smtp.host: must be a public server: not localhost, a loopback, private or link-local address", []fieldstest.Edit{set("smtp.host", "169.254.169.254")}},
		{"localhost", "smtp.host: must be a public server: not localhost, a loopback, private or link-local address", []fieldstest.Edit{set("smtp.host", "LocalHost")}},
		{"v6 loopback", "smtp.host: must be a public server: not localhost, a loopback, private or link-local address", []fieldstest.Edit{set("smtp.host", "::1")}},
		{"no port", "smtp.port: is required", []fieldstest.Edit{set("smtp.port", nil)}},
		{"port 0", "smtp.port: must be between 1 and 65535", []fieldstest.Edit{set("smtp.port", 0)}},
		{"port 65536", "smtp.port: must be between 1 and 65535", []fieldstest.Edit{set("smtp.port", 65536)}},
		{"username with a line break", "smtp.username: must be one line", []fieldstest.Edit{set("smtp.username", "a\nb")}},
		{"password too long", "smtp.password: must be at most 1024 characters", []fieldstest.Edit{set("smtp.password", fieldstest.Chars(1025))}},
		{"unknown tls", "smtp.tls: must be one of none, starttls, tls", []fieldstest.Edit{set("smtp.tls", "ssl")}},
		{"every field at once", "from_address: must be a valid email address\nsmtp.port: must be between 1 and 65535\nsmtp.tls: must be one of none, starttls, tls",
			[]fieldstest.Edit{set("from_address", "x"), set("smtp.port", -1), set("smtp.tls", "ssl")}},
	})
}

// TestSettingsPassword: the SMTP password is sealed for the account, never answered, kept when
// not sent and cleared with "".
func TestSettingsPassword(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("password")
	ms := "messaging-settings"
	def := e.ok(t, acc, ms, `{"action":"get"}`)
	if def["smtp"] != nil || def["smtp_password_set"] != false || num(def["version"]) != 0 || len(def["notify"].([]any)) != 0 {
		t.Fatalf("defaults %v", def)
	}
	code, _, raw := e.call(t, acc, ms, `{"action":"update","from_name":"Villa Aurora","notify":["o@aurora.example"],
		"smtp":{"host":"smtp.aurora.example","port":587,"username":"stay","password":"s3cret-Pa55"}}`)
	if code != 200 || strings.Contains(raw, "s3cret-Pa55") || strings.Contains(raw, "password\"") {
		t.Fatalf("update answered %d %s", code, raw)
	}
	got := e.ok(t, acc, ms, `{"action":"get"}`)
	smtp := got["smtp"].(map[string]any)
	if got["smtp_password_set"] != true || smtp["host"] != "smtp.aurora.example" || smtp["tls"] != "starttls" || got["from_name"] != "Villa Aurora" {
		t.Fatalf("get %v", got)
	}
	if _, _, raw := e.call(t, acc, ms, `{"action":"get"}`); strings.Contains(raw, "s3cret") {
		t.Fatalf("get answers the password: %s", raw)
	}
	stored, _ := e.deps.Settings.Get(context.Background(), acc)
	if strings.Contains(string(stored.SMTP.Password), "s3cret") {
		t.Fatal("stored in clear")
	}
	if p, err := store.OpenSMTPPassword(e.deps.Box, acc, stored.SMTP.Password); err != nil || p != "s3cret-Pa55" {
		t.Fatalf("sealed password opens to %q, %v", p, err)
	}

	// Members not sent keep their value; the password not sent is kept with a new server.
	got = e.ok(t, acc, ms, `{"action":"update","reply_to":"desk@aurora.example","smtp":{"host":"mail.aurora.example","port":465,"tls":"tls"}}`)
	if got["from_name"] != "Villa Aurora" || got["reply_to"] != "desk@aurora.example" || got["smtp_password_set"] != true ||
		got["smtp"].(map[string]any)["host"] != "mail.aurora.example" || len(got["notify"].([]any)) != 1 {
		t.Fatalf("partial update %v", got)
	}
	stored, _ = e.deps.Settings.Get(context.Background(), acc)
	if p, _ := store.OpenSMTPPassword(e.deps.Box, acc, stored.SMTP.Password); p != "s3cret-Pa55" {
		t.Fatalf("the password kept opens to %q", p)
	}
	// null keeps, "" clears; [] clears notify; "" clears a string.
	got = e.ok(t, acc, ms, `{"action":"update","from_name":null,"notify":[],"reply_to":"","smtp":{"host":"mail.aurora.example","port":465,"password":null}}`)
	if got["from_name"] != "Villa Aurora" || got["reply_to"] != "" || len(got["notify"].([]any)) != 0 || got["smtp_password_set"] != true {
		t.Fatalf("null and empty %v", got)
	}
	got = e.ok(t, acc, ms, `{"action":"update","smtp":{"host":"mail.aurora.example","port":465,"password":""}}`)
	if got["smtp_password_set"] != false || got["smtp"] == nil {
		t.Fatalf("password cleared %v", got)
	}
	got = e.ok(t, acc, ms, `{"action":"update","smtp":null}`)
	if got["smtp"] != nil || got["smtp_password_set"] != false {
		t.Fatalf("the operator's transport %v", got)
	}
}

func TestSettingsTest(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("test")
	got := e.ok(t, acc, "messaging-settings", `{"action":"test","address":"me@aurora.example"}`)
	if got["ok"] != true || got["answer"] != "250 2.0.0 Ok: queued as "+acc || got["error"] != "" {
		t.Fatalf("test %v", got)
	}
	got = e.ok(t, acc, "messaging-settings", `{"action":"test","address":"me@bounce.example"}`)
	if got["ok"] != false || got["error"] != "smtp: RCPT TO: 550 5.1.1 no such user" {
		t.Fatalf("test refused %v", got)
	}
	for body, want := range map[string]string{
		`{"action":"test"}`:                 "address: is required",
		`{"action":"test","address":"me"}`:  "address: must be a valid email address",
		`{"action":"test","address":["x"]}`: "address: must be a string",
	} {
		code, out, _ := e.call(t, acc, "messaging-settings", body)
		if code != 400 || violations(out) != want {
			t.Errorf("%s: %d %q, want %q", body, code, violations(out), want)
		}
	}
	// Without a transport: 503.
	e.deps.Tester = nil
	e2 := *e
	e2.app = newEnvWith(t, e.deps)
	e2.refused(t, acc, "messaging-settings", `{"action":"test","address":"me@aurora.example"}`, 503, "not available")
}
