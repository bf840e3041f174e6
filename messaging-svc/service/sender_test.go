package service

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/smtpcatcher"
)

// fakeBookingSvc is booking-svc's hooks route as its verifier checks messaging-svc's key:
// booking 42 of any account is testdata's booking object, with the account in the guest's
// address so that each test finds its own mail; any other booking is 404.
func fakeBookingSvc() *httptest.Server {
	raw, err := os.ReadFile("../internal/bookingsvc/testdata/booking.json")
	if err != nil {
		panic(err)
	}
	v := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerMessaging, Key: messagingKey, Routes: []string{"GET /internal/hooks/booking/:id"}})
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, tenant, err := v.Verify(r.Header.Get, r.Method, r.URL.Path, r.URL.RawQuery, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/internal/hooks/booking/42" {
			http.Error(w, `{}`, http.StatusNotFound)
			return
		}
		_, _ = io.WriteString(w, strings.Replace(string(raw), "anna@example.com", tenant.AccountID+"@guest.example", 1))
	}))
}

var accounts atomic.Int64

func newAccount() string { return fmt.Sprintf("svc-%d-%d", time.Now().UnixNano()%1e6, accounts.Add(1)) }

// TestSendsDueMessages: a message due in the log is composed from booking-svc's booking and
// sent by the running service's sender through the operator's server, from the operator's
// address, with the Message-ID derived from its natural id; the log records it sent. A
// message whose booking booking-svc does not have is cancelled.
func TestSendsDueMessages(t *testing.T) {
	ctx := context.Background()
	acct := newAccount()
	msgs, err := store.NewMessages(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	plan := []trigger.Message{
		{ID: trigger.ID(acct, trigger.BookingConfirmed, 42, trigger.Once), Account: acct, Trigger: trigger.BookingConfirmed, BookingID: 42,
			PropertyID: 41, Occurrence: trigger.Once, To: trigger.Guest, Lang: trigger.LangBooking, SendAt: now},
		{ID: trigger.ID(acct, trigger.BookingConfirmed, 43, trigger.Once), Account: acct, Trigger: trigger.BookingConfirmed, BookingID: 43,
			PropertyID: 41, Occurrence: trigger.Once, To: trigger.Guest, Lang: trigger.LangBooking, SendAt: now},
	}
	if _, err := msgs.Insert(ctx, plan, nil, now); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	got, err := catcher.Wait(wctx, func(ms []smtpcatcher.Message) bool {
		for _, m := range ms {
			if len(m.EnvelopeTo) == 1 && m.EnvelopeTo[0] == acct+"@guest.example" {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	var sent smtpcatcher.Message
	for _, m := range got {
		if m.EnvelopeTo[0] == acct+"@guest.example" {
			sent = m
		}
	}
	if sent.EnvelopeFrom != "mail@vros.example" || sent.MessageID != "<"+mail.MessageID(plan[0].ID, "vros.example")+">" ||
		!strings.Contains(sent.Text, "Anna") {
		t.Errorf("sent: from %s, Message-ID %s\n%s", sent.EnvelopeFrom, sent.MessageID, sent.Text)
	}
	eventually.Holds(t, "the log records both outcomes", time.Minute, func() bool {
		a, _, errA := msgs.Get(ctx, acct, plan[0].ID)
		b, _, errB := msgs.Get(ctx, acct, plan[1].ID)
		return errA == nil && errB == nil && a.Status == store.StatusSent && a.Address == acct+"@guest.example" &&
			b.Status == store.StatusCancelled
	})
}
