package messaging

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// arrival is the natural id and instant of a booking's arrival reminder under the default
// setting (3 days before check-in at 10:00 in the property's zone).
func (acc account) arrival(t *testing.T, p property, booking int64, checkin string) (string, time.Time) {
	t.Helper()
	local := before(t, checkin, 3)
	return acc.natural("stay.arrival", booking, local+"T10:00"), localInstant(t, local, 10, 0, p.timezone)
}

// TestStayMovedReschedulesArrival: a booking's stay moved through interface B update
// cancels its arrival reminder and schedules one at the new stay's instant (the log shows
// both); once the test clock passes the new instant, only the new one is delivered — a
// reminder, so with List-Unsubscribe and List-Unsubscribe-Post — and the old one stays
// cancelled, never sent.
func TestStayMovedReschedulesArrival(t *testing.T) {
	acc := newAccount(t, "Moving Stays", nil)
	acc.a(t, "messaging-settings", obj{"action": "update", "from_name": "Moving Stays", "from_address": "stays@moving.example",
		"reply_to": "host@moving.example"}).ok(t)
	p := acc.newProperty(t, "MOVE", "Europe/Rome")
	g := acc.guest("Alan", "Turing")
	b := acc.book(t, stay(p, g, day(20), day(23)))
	oldID, oldAt := acc.arrival(t, p, b, day(20))
	msgs := acc.waitLog(t, "the arrival reminder scheduled", b, "stay.arrival", hasStatus(oldID, "scheduled"))
	if m, _ := byID(msgs, oldID); !m.sendAt(t).Equal(oldAt) {
		t.Fatalf("the reminder %s is due at %s, want %s (10:00 in %s)", oldID, m.SendAt, oldAt.Format(time.RFC3339), p.timezone)
	}

	acc.b(t, "update", obj{"bookingId": b, "checkin": day(30), "checkout": day(33)}).ok(t)
	newID, newAt := acc.arrival(t, p, b, day(30))
	msgs = acc.waitLog(t, "the old reminder cancelled and a new one scheduled", b, "stay.arrival", func(m []logMessage) bool {
		return hasStatus(oldID, "cancelled")(m) && hasStatus(newID, "scheduled")(m)
	})
	if len(msgs) != 2 {
		t.Errorf("the booking has %d arrival reminders, want the old cancelled and the new: %+v", len(msgs), msgs)
	}
	if m, _ := byID(msgs, newID); !m.sendAt(t).Equal(newAt) {
		t.Errorf("the new reminder is due at %s, want %s", m.SendAt, newAt.Format(time.RFC3339))
	}
	if m, _ := byID(msgs, oldID); !m.sendAt(t).Equal(oldAt) {
		t.Errorf("the old reminder is now %+v", m)
	}

	untilPast(t, newAt)
	m := waitMail(t, "the new arrival reminder", messageID(newID))
	checkEnvelope(t, m, g, "Moving Stays", "stays@moving.example", newID)
	if len(m.ReplyTo) != 1 || m.ReplyTo[0].Address != "host@moving.example" {
		t.Errorf("Reply-To %v, want host@moving.example", m.ReplyTo)
	}
	if m.ListUnsubscribe == "" || m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Errorf("the reminder has List-Unsubscribe %q and List-Unsubscribe-Post %q, want both (RFC 8058)",
			m.ListUnsubscribe, m.Header.Get("List-Unsubscribe-Post"))
	}
	if !strings.HasPrefix(m.ListUnsubscribe, "<") {
		t.Errorf("List-Unsubscribe %q is not a list of <URI>", m.ListUnsubscribe)
	}
	if want := "Your arrival at " + p.name + " on " + longDate(t, day(30), "en"); m.Subject != want {
		t.Errorf("Subject %q, want %q", m.Subject, want)
	}
	contains(t, "the HTML part", m.HTML, "Dear Alan,", longDate(t, day(30), "en"))
	contains(t, "the text part", m.Text, "Dear Alan,", longDate(t, day(30), "en"))
	checkLogged(t, acc, b, "stay.arrival", newID, m, "en")

	if old := withID(catcher.Messages(), messageID(oldID)); len(old) > 0 {
		t.Errorf("the reminder of the old stay was delivered %d times", len(old))
	}
	if n := len(withID(catcher.Messages(), messageID(newID))); n != 1 {
		t.Errorf("the new reminder arrived %d times", n)
	}
	if m, _ := byID(acc.log(t, b, "stay.arrival"), oldID); m.Status != "cancelled" {
		t.Errorf("the old reminder is %s once the clock passed it, want cancelled", m.Status)
	}
}

// TestCancelledBookingSendsNoReminder: a booking cancelled through interface B sends its
// guest the cancellation, and its scheduled messages are cancelled: once the test clock has
// passed their instants (shown by the reminder of a later booking of the account arriving),
// the cancelled booking's guest has received the confirmation and the cancellation and
// nothing else.
func TestCancelledBookingSendsNoReminder(t *testing.T) {
	acc := newAccount(t, "Cancel Stays", nil)
	p := acc.newProperty(t, "CANC", "America/New_York")
	g := acc.guest("Edsger", "Dijkstra")
	b := acc.book(t, stay(p, g, day(20), day(22)))
	arrivalID, _ := acc.arrival(t, p, b, day(20))
	acc.waitLog(t, "the arrival reminder scheduled", b, "stay.arrival", hasStatus(arrivalID, "scheduled"))
	// A later stay of another guest: its reminder is due after every scheduled message of
	// the first (the last, the thank-you, 1 day after its check-out at 10:00).
	later := acc.guest("Barbara", "Liskov")
	lb := acc.book(t, stay(p, later, day(28), day(30)))
	laterID, laterAt := acc.arrival(t, p, lb, day(28))
	acc.waitLog(t, "the later reminder scheduled", lb, "stay.arrival", hasStatus(laterID, "scheduled"))

	acc.b(t, "cancel", obj{"bookingId": b}).ok(t)
	cancelID := acc.natural("booking.cancelled", b, "once")
	m := waitMail(t, "the cancellation", messageID(cancelID))
	checkEnvelope(t, m, g, p.name, operatorAddress, cancelID)
	checkTransactional(t, m)
	if want := "Your booking at " + p.name + " has been cancelled"; m.Subject != want {
		t.Errorf("Subject %q, want %q", m.Subject, want)
	}
	contains(t, "the HTML part", m.HTML, "Dear Edsger,", fmt.Sprint(b))
	checkLogged(t, acc, b, "booking.cancelled", cancelID, m, "en")
	msgs := acc.waitLog(t, "the arrival reminder cancelled", b, "stay.arrival", hasStatus(arrivalID, "cancelled"))
	if len(msgs) != 1 {
		t.Errorf("the booking has %d arrival reminders: %+v", len(msgs), msgs)
	}

	untilPast(t, laterAt)
	waitMail(t, "the later booking's reminder", messageID(laterID))
	confirmedID := acc.natural("booking.confirmed", b, "once")
	// The confirmation may still wait behind the backlog of the real lane's topics (its
	// sender runs in order of arrival); it must come, and then nothing else.
	waitMail(t, "the cancelled booking's confirmation", messageID(confirmedID))
	got := map[string]int{}
	for _, m := range mailTo(catcher.Messages(), g.email) {
		got[m.MessageID]++
	}
	want := map[string]int{messageID(confirmedID): 1, messageID(cancelID): 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the cancelled booking's guest received %v, want only the confirmation %s and the cancellation %s",
			got, messageID(confirmedID), messageID(cancelID))
	}
	for _, m := range acc.log(t, b, "") {
		if m.To == "guest" && m.Trigger != "booking.confirmed" && m.Trigger != "booking.cancelled" && m.Status != "cancelled" {
			t.Errorf("the cancelled booking's %s is %s, want cancelled", m.MessageID, m.Status)
		}
	}
}

// TestReminderInPropertyZone: a property's time zone decides a reminder's day and instant,
// whatever the server's: 3 days before a check-in at 10:00 is the evening before in UTC at
// Pacific/Kiritimati (UTC+14) and the same evening in UTC at America/Adak (UTC-10/-9). The
// test clock moved past the first instant delivers that reminder and leaves the other
// scheduled.
func TestReminderInPropertyZone(t *testing.T) {
	acc := newAccount(t, "Far Stays", nil)
	east := acc.newProperty(t, "KIRI", "Pacific/Kiritimati")
	west := acc.newProperty(t, "ADAK", "America/Adak")
	checkin := day(25)
	local := before(t, checkin, 3)

	ge, gw := acc.guest("Kiri", "East"), acc.guest("Ada", "West")
	be, bw := acc.book(t, stay(east, ge, checkin, day(27))), acc.book(t, stay(west, gw, checkin, day(27)))
	eastID, eastAt := acc.arrival(t, east, be, checkin)
	westID, westAt := acc.arrival(t, west, bw, checkin)
	if eastAt.Format(time.DateOnly) != before(t, local, 1) || eastAt.Hour() != 20 {
		t.Fatalf("10:00 on %s in Kiritimati is %s UTC, want 20:00 the day before", local, eastAt)
	}
	for _, c := range []struct {
		p       property
		booking int64
		id      string
		at      time.Time
	}{{east, be, eastID, eastAt}, {west, bw, westID, westAt}} {
		msgs := acc.waitLog(t, "the reminder scheduled in "+c.p.timezone, c.booking, "stay.arrival", hasStatus(c.id, "scheduled"))
		m, _ := byID(msgs, c.id)
		if !m.sendAt(t).Equal(c.at) {
			t.Errorf("the reminder at %s is due at %s, want %s (10:00 on %s there)", c.p.timezone, m.SendAt, c.at.Format(time.RFC3339), local)
		}
	}

	untilPast(t, eastAt)
	m := waitMail(t, "the reminder in Kiritimati", messageID(eastID))
	checkEnvelope(t, m, ge, east.name, operatorAddress, eastID)
	contains(t, "the HTML part", m.HTML, longDate(t, checkin, "en"))
	// The clock is still about a day before the reminder at Adak.
	if m, _ := byID(acc.log(t, bw, "stay.arrival"), westID); m.Status != "scheduled" {
		t.Errorf("the reminder at Adak, due %s, is %s at %s, want scheduled", m.SendAt, m.Status, clock.Now().UTC().Format(time.RFC3339))
	}
	if len(withID(catcher.Messages(), messageID(westID))) > 0 {
		t.Errorf("the reminder at Adak was sent before its day there")
	}
	untilPast(t, westAt)
	waitMail(t, "the reminder at Adak", messageID(westID))
}
