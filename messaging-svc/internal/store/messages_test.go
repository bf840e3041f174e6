package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/messaging-svc/internal/trigger"
)

var messagesT0 = time.Date(2027, 3, 20, 9, 0, 0, 0, time.UTC)

func newTestMessages(t *testing.T) *Messages {
	t.Helper()
	s, err := NewMessages(context.Background(), testDB)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testAccount is an account name no other test uses.
func testAccount(t *testing.T) string {
	return fmt.Sprintf("acc-%s-%d", t.Name(), time.Now().UnixNano())
}

func planned(account, trig string, booking int64, occ string, scheduled bool, at time.Time) trigger.Message {
	return trigger.Message{ID: trigger.ID(account, trig, booking, occ), Account: account, Trigger: trig,
		BookingID: booking, PropertyID: 7, BrandID: 3, Occurrence: occ, To: trigger.Guest,
		Lang: trigger.LangBooking, Scheduled: scheduled, SendAt: at}
}

func mustGet(t *testing.T, s *Messages, account, id string) Message {
	t.Helper()
	m, ok, err := s.Get(context.Background(), account, id)
	if err != nil || !ok {
		t.Fatalf("get %s: ok %v err %v", id, ok, err)
	}
	return m
}

func TestInsertStatusAndFields(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0
	msgs := []trigger.Message{
		planned(acc, trigger.BookingConfirmed, 1, trigger.Once, false, now),
		planned(acc, trigger.StayArrival, 1, "2027-03-25T10:00", true, now.Add(72*time.Hour)),
		planned(acc, trigger.StayCheckout, 1, "2027-03-19T10:00", true, now.Add(-time.Hour)), // already due
	}
	n, err := s.Insert(ctx, msgs, map[string]string{"channel": "airbnb"}, now)
	if err != nil || n != 3 {
		t.Fatalf("insert: %d %v", n, err)
	}
	want := []Status{StatusPending, StatusScheduled, StatusPending}
	for i, m := range msgs {
		got := mustGet(t, s, acc, m.ID)
		if got.Status != want[i] {
			t.Errorf("%s: status %s, want %s", m.ID, got.Status, want[i])
		}
		if !got.SendAt.Equal(m.SendAt) || !got.Created.Equal(now) || got.Account != acc ||
			got.BookingID != 1 || got.PropertyID != 7 || got.BrandID != 3 || got.To != trigger.Guest ||
			got.Lang != trigger.LangBooking || got.Scheduled != m.Scheduled || got.Detail["channel"] != "airbnb" {
			t.Errorf("%s: stored %+v", m.ID, got)
		}
	}
	// inserting again changes nothing, even with another status-deciding instant
	n, err = s.Insert(ctx, msgs, nil, now.Add(100*time.Hour))
	if err != nil || n != 0 {
		t.Fatalf("insert again: %d %v", n, err)
	}
	if got := mustGet(t, s, acc, msgs[1].ID); got.Status != StatusScheduled || got.Detail["channel"] != "airbnb" {
		t.Errorf("re-insert changed %+v", got)
	}
}

// Many goroutines insert the same messages at once (replicas replaying one event): each is
// inserted once, and the counts add up to the number of messages.
func TestInsertOnceConcurrently(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	var msgs []trigger.Message
	for b := int64(1); b <= 30; b++ {
		msgs = append(msgs, planned(acc, trigger.BookingConfirmed, b, trigger.Once, false, messagesT0))
	}
	const workers = 24
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// each worker goes through the ids in its own order
			mine := append([]trigger.Message(nil), msgs...)
			for i := range mine {
				j := (i + w*7) % len(mine)
				mine[i], mine[j] = mine[j], mine[i]
			}
			n, err := s.Insert(ctx, mine, nil, messagesT0)
			if err != nil {
				errs <- err
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if total.Load() != int64(len(msgs)) {
		t.Fatalf("inserted %d in all, want %d", total.Load(), len(msgs))
	}
	_, count, err := s.List(ctx, acc, MessageFilter{Limit: 100})
	if err != nil || count != int64(len(msgs)) {
		t.Fatalf("stored %d %v, want %d", count, err, len(msgs))
	}
}

func TestListFiltersPagesAndTenants(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc, other := testAccount(t), testAccount(t)+"-other"
	for i := range 25 {
		b := int64(1 + i%2)
		m := planned(acc, trigger.BookingConfirmed, int64(100+i), trigger.Once, false, messagesT0)
		m.BookingID = b
		m.ID = trigger.ID(acc, trigger.BookingConfirmed, b, fmt.Sprint(i))
		if _, err := s.Insert(ctx, []trigger.Message{m}, nil, messagesT0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Insert(ctx, []trigger.Message{
		planned(other, trigger.BookingConfirmed, 1, trigger.Once, false, messagesT0),
		planned(other, trigger.StayArrival, 1, "x", true, messagesT0.Add(time.Hour)),
	}, nil, messagesT0); err != nil {
		t.Fatal(err)
	}
	page1, total, err := s.List(ctx, acc, MessageFilter{Limit: 10})
	if err != nil || total != 25 || len(page1) != 10 {
		t.Fatalf("page 1: %d of %d, %v", len(page1), total, err)
	}
	for i := 1; i < len(page1); i++ {
		if page1[i].Created.After(page1[i-1].Created) {
			t.Fatalf("not newest first: %v after %v", page1[i].Created, page1[i-1].Created)
		}
	}
	page3, _, _ := s.List(ctx, acc, MessageFilter{Limit: 10, Page: 3})
	if len(page3) != 5 || !page3[4].Created.Equal(messagesT0) {
		t.Fatalf("page 3: %d messages", len(page3))
	}
	b1, total, _ := s.List(ctx, acc, MessageFilter{BookingID: 1})
	if total != 13 || len(b1) != 13 {
		t.Fatalf("booking 1: %d of %d", len(b1), total)
	}
	for _, m := range b1 {
		if m.BookingID != 1 || m.Account != acc {
			t.Fatalf("booking filter answered %+v", m)
		}
	}
	if _, total, _ := s.List(ctx, other, MessageFilter{Status: StatusScheduled}); total != 1 {
		t.Fatalf("other account's scheduled: %d", total)
	}
	if _, total, _ := s.List(ctx, other, MessageFilter{Trigger: trigger.StayArrival}); total != 1 {
		t.Fatalf("other account's arrivals: %d", total)
	}
	if _, total, _ := s.List(ctx, acc, MessageFilter{Address: "nobody@example.com"}); total != 0 {
		t.Fatalf("address filter: %d", total)
	}
	// an id of another account is not found
	if _, ok, err := s.Get(ctx, acc, trigger.ID(other, trigger.BookingConfirmed, 1, trigger.Once)); ok || err != nil {
		t.Fatalf("another account's message: ok %v err %v", ok, err)
	}
	// Cancel through the wrong account changes nothing
	otherID := trigger.ID(other, trigger.BookingConfirmed, 1, trigger.Once)
	if err := s.Cancel(ctx, acc, []string{otherID}, messagesT0); err != nil {
		t.Fatal(err)
	}
	if m := mustGet(t, s, other, otherID); m.Status != StatusPending {
		t.Fatalf("cancelled through another account: %s", m.Status)
	}
}

// Cancel acts on waiting messages only; a claimed (sending) or done one stays as it is.
func TestCancelTransitions(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0
	type setup func(id string)
	claim := func(id string) {
		m := mustGet(t, s, acc, id)
		if _, ok, err := s.Claim(ctx, m, "sender-1", now, time.Minute); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", id, ok, err)
		}
	}
	finish := func(st Status) setup {
		return func(id string) {
			claim(id)
			m := mustGet(t, s, acc, id)
			if err := s.Finish(ctx, m, Outcome{Status: st, Attempts: 1}, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name      string
		scheduled bool
		at        time.Time
		setup     setup
		want      Status
	}{
		{"scheduled", true, now.Add(time.Hour), nil, StatusCancelled},
		{"pending", false, now, nil, StatusCancelled},
		{"sending", false, now, claim, StatusSending},
		{"sent", false, now, finish(StatusSent), StatusSent},
		{"failed", false, now, finish(StatusFailed), StatusFailed},
		{"bounced", false, now, finish(StatusBounced), StatusBounced},
		{"suppressed", false, now, finish(StatusSuppressed), StatusSuppressed},
		{"retry-waiting", false, now, finish(StatusPending), StatusCancelled},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := planned(acc, trigger.StayArrival, int64(i+1), "o", c.scheduled, c.at)
			if _, err := s.Insert(ctx, []trigger.Message{m}, nil, now); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(m.ID)
			}
			if err := s.Cancel(ctx, acc, []string{m.ID}, now); err != nil {
				t.Fatal(err)
			}
			if got := mustGet(t, s, acc, m.ID); got.Status != c.want {
				t.Fatalf("after cancel: %s, want %s", got.Status, c.want)
			}
			// cancelling twice is harmless
			if err := s.Cancel(ctx, acc, []string{m.ID, "unknown"}, now); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCancelScheduledKeepsAndSkips(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0
	arrival := planned(acc, trigger.StayArrival, 5, "2027-03-25T10:00", true, now.Add(48*time.Hour))
	checkout := planned(acc, trigger.StayCheckout, 5, "2027-03-28T10:00", true, now.Add(96*time.Hour))
	thanks := planned(acc, trigger.StayThanks, 5, "2027-03-29T10:00", true, now.Add(120*time.Hour))
	confirmed := planned(acc, trigger.BookingConfirmed, 5, trigger.Once, false, now)
	otherBooking := planned(acc, trigger.StayArrival, 6, "2027-03-25T10:00", true, now.Add(48*time.Hour))
	if _, err := s.Insert(ctx, []trigger.Message{arrival, checkout, thanks, confirmed, otherBooking}, nil, now); err != nil {
		t.Fatal(err)
	}
	if err := s.CancelScheduled(ctx, acc, 5, []string{checkout.ID}, now); err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{arrival.ID: StatusCancelled, checkout.ID: StatusScheduled,
		thanks.ID: StatusCancelled, confirmed.ID: StatusPending, otherBooking.ID: StatusScheduled}
	for id, st := range want {
		if got := mustGet(t, s, acc, id); got.Status != st {
			t.Errorf("%s: %s, want %s", id, got.Status, st)
		}
	}
	if err := s.CancelScheduled(ctx, acc, 5, nil, now); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, acc, checkout.ID); got.Status != StatusCancelled {
		t.Errorf("keep nil: checkout %s", got.Status)
	}
}

// A due message is claimed by one of many senders at once; a cancel racing the claims
// either wins (no sender holds it) or finds it sending and leaves it.
func TestClaimOneWinner(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0
	for round := range 10 {
		m := planned(acc, trigger.BookingConfirmed, int64(round+1), trigger.Once, false, now)
		if _, err := s.Insert(ctx, []trigger.Message{m}, nil, now); err != nil {
			t.Fatal(err)
		}
		read := mustGet(t, s, acc, m.ID)
		var wins atomic.Int64
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, ok, err := s.Claim(ctx, read, fmt.Sprint("sender-", w), now, time.Minute); err != nil {
					t.Error(err)
				} else if ok {
					wins.Add(1)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Cancel(ctx, acc, []string{m.ID}, now); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		got := mustGet(t, s, acc, m.ID)
		switch {
		case got.Status == StatusCancelled && wins.Load() == 0:
		case got.Status == StatusSending && wins.Load() == 1:
		default:
			t.Fatalf("round %d: status %s with %d claims won", round, got.Status, wins.Load())
		}
	}
}

func TestDueLeaseAndFinish(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0.Add(1000 * time.Hour) // later than every other test's due messages
	m := planned(acc, trigger.StayArrival, 1, "o", true, now.Add(time.Hour))
	if _, err := s.Insert(ctx, []trigger.Message{m}, nil, now); err != nil {
		t.Fatal(err)
	}
	due := func(at time.Time) *Message {
		t.Helper()
		msgs, err := s.Due(ctx, at, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for i := range msgs {
			if msgs[i].ID == m.ID {
				return &msgs[i]
			}
		}
		return nil
	}
	if due(now) != nil {
		t.Fatal("a scheduled message is due before its time")
	}
	read := mustGet(t, s, acc, m.ID)
	if _, ok, _ := s.Claim(ctx, read, "a", now, time.Minute); ok {
		t.Fatal("claimed before its time")
	}
	at := now.Add(time.Hour)
	d := due(at)
	if d == nil {
		t.Fatal("not due at its time")
	}
	held, ok, err := s.Claim(ctx, *d, "a", at, time.Minute)
	if err != nil || !ok || held.Status != StatusSending || held.LeaseOwner != "a" {
		t.Fatalf("claim: %+v %v %v", held, ok, err)
	}
	if due(at.Add(59*time.Second)) != nil {
		t.Fatal("due while its lease runs")
	}
	// the lease expires: another sender takes it; the first one's record is refused
	d = due(at.Add(time.Minute))
	if d == nil {
		t.Fatal("not due after its lease expired")
	}
	held2, ok, err := s.Claim(ctx, *d, "b", at.Add(time.Minute), time.Minute)
	if err != nil || !ok {
		t.Fatalf("second claim: %v %v", ok, err)
	}
	if err := s.Finish(ctx, held, Outcome{Status: StatusSent, Attempts: 1}, at); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("finish under a lost lease: %v", err)
	}
	// a stale read of the expired lease claims nothing now
	if _, ok, _ := s.Claim(ctx, *d, "c", at.Add(time.Minute), time.Minute); ok {
		t.Fatal("claimed twice from one read")
	}
	sentAt := at.Add(time.Minute + time.Second)
	err = s.Finish(ctx, held2, Outcome{Status: StatusSent, Attempts: 1, Address: "g@example.com", Language: "it",
		Subject: "Ciao", MessageID: "vros.x@test", Answer: "accepted", SentAt: sentAt}, sentAt)
	if err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, acc, m.ID)
	if got.Status != StatusSent || got.Address != "g@example.com" || got.Language != "it" || got.Subject != "Ciao" ||
		got.MessageID != "vros.x@test" || got.Answer != "accepted" || !got.SentAt.Equal(sentAt) || got.Attempts != 1 ||
		!got.LeaseUntil.IsZero() {
		t.Fatalf("sent: %+v", got)
	}
	if due(sentAt.Add(1000*time.Hour)) != nil {
		t.Fatal("a sent message is due again")
	}
	if err := s.Finish(ctx, held2, Outcome{Status: StatusFailed}, sentAt); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("second finish: %v", err)
	}
	if err := s.Finish(ctx, held2, Outcome{Status: StatusSending}, sentAt); err == nil {
		t.Fatal("finished as sending")
	}
}

func TestErase(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc, other := testAccount(t), testAccount(t)+"-other"
	var msgs []trigger.Message
	for _, a := range []string{acc, other} {
		for b := int64(1); b <= 3; b++ {
			msgs = append(msgs, planned(a, trigger.BookingConfirmed, b, trigger.Once, false, messagesT0))
		}
	}
	if _, err := s.Insert(ctx, msgs, nil, messagesT0); err != nil {
		t.Fatal(err)
	}
	if err := s.EraseBooking(ctx, acc, 2); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.List(ctx, acc, MessageFilter{}); total != 2 {
		t.Fatalf("after erasing a booking: %d", total)
	}
	if _, total, _ := s.List(ctx, other, MessageFilter{BookingID: 2}); total != 1 {
		t.Fatalf("another account's booking erased")
	}
	if err := s.Erase(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.List(ctx, acc, MessageFilter{}); total != 0 {
		t.Fatalf("after erasing the account: %d", total)
	}
	if _, total, _ := s.List(ctx, other, MessageFilter{}); total != 3 {
		t.Fatalf("another account's messages: %d", total)
	}
}

// A writer that stopped between its claim document and its write leaves an orphan claim:
// it holds the message off until its hold expires, then the next claim passes over it.
func TestClaimPassesOverAnExpiredOrphan(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0
	m := planned(acc, trigger.BookingConfirmed, 1, trigger.Once, false, now)
	if _, err := s.Insert(ctx, []trigger.Message{m}, nil, now); err != nil {
		t.Fatal(err)
	}
	read := mustGet(t, s, acc, m.ID)
	if n, err := s.claimNext(ctx, read, "crashed", now, now.Add(time.Minute)); n != 1 || err != nil {
		t.Fatalf("orphan claim: %d %v", n, err)
	}
	if _, ok, err := s.Claim(ctx, read, "b", now.Add(30*time.Second), time.Minute); ok || err != nil {
		t.Fatalf("claimed over a live claim: %v %v", ok, err)
	}
	held, ok, err := s.Claim(ctx, read, "b", now.Add(time.Minute), time.Minute)
	if !ok || err != nil || held.Claim != 2 {
		t.Fatalf("claim after the orphan's hold: %+v %v %v", held, ok, err)
	}
	if got := mustGet(t, s, acc, m.ID); got.Status != StatusSending || got.Claim != 2 || got.LeaseOwner != "b" {
		t.Fatalf("stored %+v", got)
	}
	// a cancel through the same stale read claims nothing and withdraws its claim document
	if err := s.Cancel(ctx, acc, []string{m.ID}, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, acc, m.ID); got.Status != StatusSending {
		t.Fatalf("cancelled while sending: %s", got.Status)
	}
}

// TestInsertRevivesACancelledReminder: a stay moved away and back plans its first reminder's
// id again; the cancelled reminder waits again, due at the instant planned now. A message
// sent, or one that is not scheduled, is never revived, and replicas reviving it at once
// revive it once.
func TestInsertRevivesACancelledReminder(t *testing.T) {
	ctx := context.Background()
	s := newTestMessages(t)
	acc := testAccount(t)
	now := messagesT0
	arrival := planned(acc, trigger.StayArrival, 1, "2027-03-25T10:00", true, now.Add(72*time.Hour))
	confirmed := planned(acc, trigger.BookingConfirmed, 1, trigger.Once, false, now)
	if _, err := s.Insert(ctx, []trigger.Message{arrival, confirmed}, nil, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, acc, []string{arrival.ID, confirmed.ID}, now); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	arrival.SendAt = now.Add(73 * time.Hour)
	var wg sync.WaitGroup
	var revived atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.Insert(ctx, []trigger.Message{arrival, confirmed}, nil, later)
			if err != nil {
				t.Error(err)
			}
			revived.Add(int64(n))
		}()
	}
	wg.Wait()
	if revived.Load() != 1 {
		t.Errorf("revived %d times, want once", revived.Load())
	}
	m := mustGet(t, s, acc, arrival.ID)
	if m.Status != StatusScheduled || !m.SendAt.Equal(arrival.SendAt) {
		t.Errorf("arrival after the stay moved back: %s at %s, want scheduled at %s", m.Status, m.SendAt, arrival.SendAt)
	}
	if m := mustGet(t, s, acc, confirmed.ID); m.Status != StatusCancelled {
		t.Errorf("an event trigger's cancelled message became %s", m.Status)
	}
	// a sent reminder stays sent
	due := later.Add(80 * time.Hour)
	got, ok, err := s.Claim(ctx, m, "sender", due, time.Minute)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := s.Finish(ctx, got, Outcome{Status: StatusSent, Attempts: 1, SentAt: due}, due); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Insert(ctx, []trigger.Message{arrival}, nil, due); err != nil || n != 0 {
		t.Errorf("insert of a sent reminder: %d %v", n, err)
	}
	if m := mustGet(t, s, acc, arrival.ID); m.Status != StatusSent {
		t.Errorf("a sent reminder became %s", m.Status)
	}
}
