package hookcrash

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAutoDisable drives an endpoint through the failure streak end to end: its receiver
// answers 500, and after disableMinFailures failed attempts (VROS_WEBHOOK_DISABLE_AFTER=0s)
// the endpoint reads enabled:false with disabled_at set through edge, the account's other
// endpoint receives the signed webhook.disabled notice, later events are recorded but not
// attempted while it is disabled, and `update` `"enabled":true` (the receiver healthy again)
// delivers every waiting event, in order.
func TestAutoDisable(t *testing.T) {
	ensureRunning(t)
	acc := newAccount(t)
	pid := bookable(t, acc, "HKD1")
	failing, notices := newReceiver(t), newReceiver(t)
	failing.setAnswer(http.StatusInternalServerError)
	ep := createEndpoint(t, acc, failing, "booking.created")
	watcher := createEndpoint(t, acc, notices, "webhook.disabled")

	create := func(n int) int64 {
		t.Helper()
		var d struct {
			BookingID int64 `json:"bookingId"`
		}
		if err := acc.b("create", guest(pid, n), &d); err != nil || d.BookingID == 0 {
			t.Fatalf("create: %v (%+v)", err, d)
		}
		return d.BookingID
	}
	get := func(id int64) endpoint {
		t.Helper()
		var e endpoint
		acc.a(t, "webhook", obj{"action": "get", "webhook": obj{"webhook_id": id}}, &e)
		return e
	}

	first := create(20)
	holds(t, "the endpoint disabled after its failure streak", 30*time.Second, func() bool {
		e := get(ep.WebhookID)
		return !e.Enabled && e.DisabledAt != nil
	})
	e := get(ep.WebhookID)
	if e.FailureStreak != disableMinFailures || e.DisabledReas == "" {
		t.Errorf("disabled endpoint %+v, want failure_streak %d and a reason", e, disableMinFailures)
	}
	if requests, _ := failing.count(); requests != disableMinFailures {
		t.Errorf("the failing receiver got %d requests before the endpoint was disabled, want %d", requests, disableMinFailures)
	}
	log := deliveries(t, acc, ep.WebhookID, "")
	if len(log) != 1 || len(log[0].Attempts) != disableMinFailures || log[0].Status != "pending" {
		t.Fatalf("log after the streak: %+v, want one pending delivery with %d attempts", log, disableMinFailures)
	}
	for _, a := range log[0].Attempts {
		if a.StatusCode != http.StatusInternalServerError || a.Error == "" {
			t.Errorf("attempt %+v, want a 500 with its error", a)
		}
	}

	// The notice reaches the other endpoint, signed (the receiver verifies every signature).
	holds(t, "the webhook.disabled notice", 30*time.Second, func() bool {
		_, n := notices.count()
		return n > 0
	})
	notice := notices.all(t)[0]
	if notice.Type != "webhook.disabled" || notice.Data["webhook_id"] != float64(ep.WebhookID) ||
		notice.Data["failure_streak"] != float64(disableMinFailures) || !strings.HasPrefix(fmt.Sprint(notice.Data["url"]), failing.srv.URL) ||
		notice.Data["disabled_at"] == nil || notice.Data["reason"] == "" {
		t.Errorf("notice %+v", notice)
	}
	if w := get(watcher.WebhookID); !w.Enabled || w.DisabledAt != nil {
		t.Errorf("the watching endpoint %+v should stay enabled", w)
	}

	// While disabled: new events are recorded, never attempted.
	later := []int64{create(21), create(22)}
	holds(t, "the later events recorded", 30*time.Second, func() bool {
		return len(deliveries(t, acc, ep.WebhookID, "")) == 3
	})
	time.Sleep(1500 * time.Millisecond) // longer than the retry schedule's next steps
	if requests, _ := failing.count(); requests != disableMinFailures {
		t.Errorf("%d requests reached the disabled endpoint, want still %d", requests, disableMinFailures)
	}
	tried := 0 // the first booking's delivery keeps its failed attempts; the others have none
	for _, d := range deliveries(t, acc, ep.WebhookID, "") {
		if len(d.Attempts) == disableMinFailures {
			tried++
		} else if len(d.Attempts) != 0 {
			tried = -100
		}
		if d.Status != "pending" {
			t.Errorf("while disabled, delivery %s is %s, want pending", d.MessageID, d.Status)
		}
	}
	if tried != 1 {
		t.Errorf("while disabled, the log's attempts moved: %+v", deliveries(t, acc, ep.WebhookID, ""))
	}

	// Re-enabled with the receiver healthy: everything waiting arrives, in order.
	failing.setAnswer(http.StatusNoContent)
	var re endpoint
	acc.a(t, "webhook", obj{"action": "update", "webhook": obj{"webhook_id": ep.WebhookID, "enabled": true}}, &re)
	if !re.Enabled || re.DisabledAt != nil || re.FailureStreak != 0 {
		t.Errorf("re-enabled endpoint %+v", re)
	}
	want := append([]int64{first}, later...)
	holds(t, "the waiting events after re-enabling", 30*time.Second, func() bool {
		_, n := failing.count()
		return n >= len(want)
	})
	var got []int64
	for _, m := range failing.all(t) {
		if m.Type != "booking.created" {
			t.Errorf("unexpected %s", m.Type)
		}
		got = append(got, bookingOf(m))
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("after re-enabling the receiver got bookings %v, want %v in that order", got, want)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(deliveries(t, acc, ep.WebhookID, "delivered")) != len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("not every delivery delivered within 30 s: %+v", deliveries(t, acc, ep.WebhookID, ""))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e := get(ep.WebhookID); !e.Enabled || e.FailureStreak != 0 || e.DisabledAt != nil {
		t.Errorf("after delivering: %+v", e)
	}
}
