package api

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// messages inserts the account's messages: booking 42's confirmation, two payments and its
// arrival reminder (scheduled), and booking 43's confirmation.
func (e *env) messages(t *testing.T, account string, now time.Time) {
	t.Helper()
	m := func(trig string, booking int64, occ string, scheduled bool, at time.Time) trigger.Message {
		return trigger.Message{ID: trigger.ID(account, trig, booking, occ), Account: account, Trigger: trig, BookingID: booking,
			PropertyID: 7, Occurrence: occ, To: trigger.Guest, Lang: trigger.LangBooking, Scheduled: scheduled, SendAt: at}
	}
	for i, msg := range []trigger.Message{
		m(trigger.BookingConfirmed, 42, "once", false, now),
		m(trigger.PaymentReceived, 42, "901", false, now),
		m(trigger.PaymentReceived, 42, "902", false, now),
		m(trigger.StayArrival, 42, "2027-06-07T10:00", true, now.Add(72*time.Hour)),
		m(trigger.BookingConfirmed, 43, "once", false, now),
	} {
		// One at a time, a millisecond apart: the log is newest first.
		if _, err := e.deps.Messages.Insert(context.Background(), []trigger.Message{msg}, nil, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMessageLog(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("log")
	now := time.Date(2027, 6, 1, 9, 0, 0, 0, time.UTC)
	e.messages(t, acc, now)
	ml := "message-log"

	all := e.ok(t, acc, ml, `{"action":"list"}`)
	msgs := all["messages"].([]any)
	if num(all["total"]) != 5 || len(msgs) != 5 || num(all["page"]) != 1 || num(all["limit"]) != 20 {
		t.Fatalf("list %v", all)
	}
	first := msgs[0].(map[string]any)
	if first["message_id"] != acc+":booking.confirmed:43:once" || first["status"] != "pending" || first["to"] != "guest" ||
		num(first["booking_id"]) != 43 || num(first["property_id"]) != 7 || first["sent_at"] != nil || first["send_at"] != "2027-06-01T09:00:00Z" {
		t.Fatalf("newest first: %v", first)
	}
	for _, k := range []string{"message_id", "trigger", "booking_id", "property_id", "to", "address", "language", "subject", "status",
		"attempts", "send_at", "sent_at", "answer", "opens", "smtp_message_id", "created_at", "updated_at"} {
		if _, ok := first[k]; !ok {
			t.Errorf("a message answers no %s: %v", k, first)
		}
	}
	for body, want := range map[string]int64{
		`{"action":"list","booking_id":42}`:                                4,
		`{"action":"list","booking_id":"42","trigger":"payment.received"}`: 2,
		`{"action":"list","status":"Scheduled"}`:                           1,
		`{"action":"list","address":"nobody@x.example"}`:                   0,
	} {
		if got := e.ok(t, acc, ml, body); num(got["total"]) != want {
			t.Errorf("%s: total %v, want %d", body, got["total"], want)
		}
	}
	page := e.ok(t, acc, ml, `{"action":"list","page":3,"limit":2}`)
	if num(page["total"]) != 5 || len(page["messages"].([]any)) != 1 || page["messages"].([]any)[0].(map[string]any)["trigger"] != "booking.confirmed" {
		t.Fatalf("page 3 of 2: %v", page)
	}
	id := acc + ":stay.arrival:42:2027-06-07T10:00"
	got := e.ok(t, acc, ml, `{"action":"get","message_id":"`+id+`"}`)
	if got["message_id"] != id || got["status"] != "scheduled" || got["send_at"] != "2027-06-04T09:00:00Z" {
		t.Fatalf("get %v", got)
	}
	e.refused(t, acc, ml, `{"action":"get","message_id":"`+acc+`:stay.arrival:42:x"}`, 404, "does not exist")
	// Another account's message is not found, and its log is its own.
	other := newAccount("log-other")
	e.refused(t, other, ml, `{"action":"get","message_id":"`+id+`"}`, 404, "does not exist")
	if l := e.ok(t, other, ml, `{"action":"list"}`); num(l["total"]) != 0 {
		t.Fatalf("another account's log %v", l)
	}
	for body, want := range map[string]string{
		`{"action":"get"}`:                           "message_id: is required",
		`{"action":"list","status":"done"}`:          "status: must be one of scheduled, pending, sending, sent, failed, bounced, cancelled, suppressed",
		`{"action":"list","booking_id":-1,"page":0}`: "page: must be between 1 and 2147483648\nbooking_id: must be between 1 and 9007199254740992",
		`{"action":"list","trigger":"booking"}`:      "trigger: must be one of booking.confirmed, booking.modified, booking.cancelled, payment.received, payment.failed, payment.due_soon, deposit.held, deposit.released, stay.arrival, stay.checkout, stay.thanks, owner.booking, owner.cancellation, owner.channel_conflict",
		`{"action":"delete"}`:                        "action: must be one of list, get",
	} {
		code, out, _ := e.call(t, acc, ml, body)
		if code != 400 || violations(out) != want {
			t.Errorf("%s: %d %q, want %q", body, code, violations(out), want)
		}
	}
}

func TestSuppressions(t *testing.T) {
	e := newEnv(t)
	acc, other := newAccount("sup"), newAccount("sup-other")
	ctx := context.Background()
	for i, addr := range []string{"Gone@Example.com", "full@example.com"} {
		if err := e.deps.Suppressions.Add(ctx, store.Suppression{Account: acc, Address: addr, Reason: "550 5.1.1 no such user",
			MessageID: fmt.Sprintf("%s:booking.confirmed:%d:once", acc, i), Created: time.Now().Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	ms := "message-suppression"
	list := e.ok(t, acc, ms, `{"action":"list"}`)
	items := list["suppressions"].([]any)
	if num(list["total"]) != 2 || len(items) != 2 || items[0].(map[string]any)["address"] != "full@example.com" ||
		items[1].(map[string]any)["reason"] != "550 5.1.1 no such user" || items[1].(map[string]any)["created_at"] == nil {
		t.Fatalf("list %v", list)
	}
	if l := e.ok(t, other, ms, `{"action":"list"}`); num(l["total"]) != 0 {
		t.Fatalf("another account's list %v", l)
	}
	e.refused(t, other, ms, `{"action":"delete","address":"gone@example.com"}`, 404, "is not on the suppression list")
	if d := e.ok(t, acc, ms, `{"action":"delete","address":"GONE@example.com"}`); d["address"] != "gone@example.com" || d["deleted"] != true {
		t.Fatalf("delete %v", d)
	}
	e.refused(t, acc, ms, `{"action":"delete","address":"gone@example.com"}`, 404, "address gone@example.com is not on the suppression list")
	if l := e.ok(t, acc, ms, `{"action":"list"}`); num(l["total"]) != 1 {
		t.Fatalf("after delete %v", l)
	}
	code, out, _ := e.call(t, acc, ms, `{"action":"delete"}`)
	if code != 400 || violations(out) != "address: is required" {
		t.Fatalf("delete without an address: %d %v", code, out)
	}
}

// TestIsolation: clients of many accounts at once, each creating the same template, saving its
// own SMTP password and reading back: every answer is its account's, ids start at 1 for each,
// and nothing of one account is found through another.
func TestIsolation(t *testing.T) {
	e := newEnv(t)
	const n = 12
	accs := make([]string, n)
	for i := range accs {
		accs[i] = newAccount(fmt.Sprintf("iso%02d", i))
		e.booking(t, accs[i], 42, 7, 0, "Guest of "+accs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, n*8)
	for i, acc := range accs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			check := func(resource, body string, ok func(map[string]any) bool) map[string]any {
				code, out, raw := e.call(t, acc, resource, body)
				d, _ := out["data"].(map[string]any)
				if code != 200 || !ok(d) {
					errs <- fmt.Sprintf("%s %s %s: %d %s", acc, resource, body, code, raw)
				}
				return d
			}
			check("message-template", strings.Replace(templateBase, "See you", "See you "+acc+",", 1),
				func(d map[string]any) bool { return num(d["template_id"]) == 1 })
			check("messaging-settings", fmt.Sprintf(`{"action":"update","from_name":%q,"smtp":{"host":"smtp.example.com","port":587,"password":"pw-%d"}}`, acc, i),
				func(d map[string]any) bool { return d["from_name"] == acc && d["smtp_password_set"] == true })
			check("message-trigger", fmt.Sprintf(`{"action":"update","triggers":[{"trigger":"stay.arrival","days":%d}]}`, i),
				func(d map[string]any) bool { return strings.Contains(fmt.Sprint(d), fmt.Sprintf("days:%d ", i)) })
			check("message-template", `{"action":"get","template_id":1}`,
				func(d map[string]any) bool { return strings.Contains(d["subject"].(string), acc) })
			check("message-template", `{"action":"preview","booking_id":42,"template_id":1}`,
				func(d map[string]any) bool {
					return strings.Contains(d["subject"].(string), acc) && strings.Contains(d["html"].(string), "Guest of "+acc)
				})
			check("message-template", `{"action":"list"}`, func(d map[string]any) bool { return num(d["total"]) == 1 })
			check("messaging-settings", `{"action":"get"}`, func(d map[string]any) bool { return d["from_name"] == acc })
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	for i, acc := range accs {
		s, err := e.deps.Settings.Get(context.Background(), acc)
		if err != nil || s.SMTP == nil {
			t.Fatalf("%s: %+v, %v", acc, s, err)
		}
		if p, err := store.OpenSMTPPassword(e.deps.Box, acc, s.SMTP.Password); err != nil || p != fmt.Sprintf("pw-%d", i) {
			t.Errorf("%s: password %q, %v", acc, p, err)
		}
		if s.Triggers.For(trigger.StayArrival).Days != i || e.replan.count(acc) != 1 {
			t.Errorf("%s: days %d, re-planned %d times", acc, s.Triggers.For(trigger.StayArrival).Days, e.replan.count(acc))
		}
	}
}

// TestErasedAccount: once the account is erased (vros.property.v1's account.erased, which the
// intake applies), its writes are refused 403 and write nothing.
func TestErasedAccount(t *testing.T) {
	e := newEnv(t)
	acc := newAccount("erased")
	ctx := context.Background()
	e.ok(t, acc, "message-template", templateBase)
	if err := e.deps.Views.(*store.Views).EraseAccount(ctx, acc, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The intake's part: the account's templates and settings erased.
	if err := e.deps.Templates.Erase(ctx, acc); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{
		{"message-template", templateBase},
		{"message-trigger", `{"action":"update","triggers":[{"trigger":"stay.thanks","enabled":false}]}`},
		{"messaging-settings", `{"action":"update","from_name":"Late","smtp":{"host":"smtp.example.com","port":587,"password":"pw"}}`},
	} {
		code, out, raw := e.call(t, acc, c[0], c[1])
		if code != 403 || out["error_type"] != "forbidden" || out["error_message"] != "the account has been erased" {
			t.Errorf("%s after the erasure: %d %s", c[0], code, raw)
		}
	}
	if l := e.ok(t, acc, "message-template", `{"action":"list"}`); num(l["total"]) != 0 {
		t.Fatalf("templates after the erasure: %v", l)
	}
	if s, err := e.deps.Settings.Get(ctx, acc); err != nil || s.Version != 0 || s.SMTP != nil {
		t.Fatalf("settings after the erasure: %+v, %v", s, err)
	}
	if e.replan.count(acc) != 0 {
		t.Fatal("an erased account was re-planned")
	}
}
