package outbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/testkit/smtpcatcher"
)

// Four senders (replicas) work through 200 messages of two accounts at once: the server
// receives each once, with its own Message-ID, and the log says so. Meanwhile readers of
// each account never see the other's messages.
func TestEachMessageSentOnceByConcurrentSenders(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	accounts := []string{"acc-a", "acc-b"}
	ids := map[string]string{} // id → account
	for i := range 200 {
		acc := accounts[i%2]
		ids[e.insert(t, acc, int64(i+1), false, t0)] = acc
	}
	var windows []time.Duration
	var mu sync.Mutex
	comp := &composer{transport: tr}
	var senders []*Sender
	for i := range 4 {
		s := e.sender(comp, func(o *Options) { o.Owner = fmt.Sprint("replica-", i) })
		s.recorded = func(_ string, d time.Duration) {
			mu.Lock()
			windows = append(windows, d)
			mu.Unlock()
		}
		senders = append(senders, s)
	}

	ctx := context.Background()
	done := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for r := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			acc, other := accounts[r%2], accounts[1-r%2]
			for {
				select {
				case <-done:
					return
				default:
				}
				for id, owner := range ids {
					if owner != other {
						continue
					}
					if _, ok, err := e.msgs.Get(ctx, acc, id); ok || err != nil {
						t.Errorf("%s read %s of %s: %v %v", acc, id, other, ok, err)
						return
					}
					break
				}
				msgs, total, err := e.msgs.List(ctx, acc, store.MessageFilter{Limit: 100, Page: 1 + r/2})
				if err != nil || total != 100 {
					t.Errorf("%s list: %d %v", acc, total, err)
					return
				}
				for _, m := range msgs {
					if m.Account != acc {
						t.Errorf("%s listed %s", acc, m.ID)
						return
					}
				}
				reads.Add(1)
				time.Sleep(5 * time.Millisecond) // pace the readers: the load is the senders'
			}
		}()
	}

	var handled atomic.Int64
	var wg sync.WaitGroup
	for _, s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := s.Once(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
				handled.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()

	got := c.Messages()
	if len(got) != 200 || handled.Load() != 200 {
		t.Fatalf("the server received %d messages, the senders handled %d; want 200", len(got), handled.Load())
	}
	want := map[string]bool{}
	for id := range ids {
		want["<"+mail.MessageID(id, domain)+">"] = true
	}
	seen := map[string]bool{}
	for _, m := range got {
		if seen[m.MessageID] || !want[m.MessageID] {
			t.Fatalf("Message-ID %s repeated or unknown", m.MessageID)
		}
		seen[m.MessageID] = true
	}
	for id, acc := range ids {
		m := e.get(t, acc, id)
		if m.Status != store.StatusSent || m.Attempts != 1 || m.MessageID != mail.MessageID(id, domain) ||
			!m.SentAt.Equal(t0) || m.Address == "" || m.Language != "en" || m.Subject != "Booking "+id {
			t.Fatalf("%s: %+v", id, m)
		}
	}
	slices.Sort(windows)
	t.Logf("acceptance → record over %d sends: median %v, p99 %v, max %v (%d concurrent reads)", len(windows),
		windows[len(windows)/2], windows[len(windows)*99/100], windows[len(windows)-1], reads.Load())
}

// A sender that stops between the server's acceptance and its record (a crash) leaves its
// lease; once it expires another sender sends the message again, with the same Message-ID,
// and records it. A sender that was only stalled finds its lease lost and records nothing.
func TestSendRepeatedAfterACrashCarriesTheSameMessageID(t *testing.T) {
	for _, stall := range []bool{false, true} {
		name := "crash"
		if stall {
			name = "stall"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			c, tr := catcher(t)
			id := e.insert(t, "acc", 1, false, t0)
			sent := make(chan struct{})
			resume := make(chan struct{})
			crashing := &composer{transport: transportFunc(func(ctx context.Context, m mail.Message) (mail.Receipt, error) {
				r, err := tr.Send(ctx, m)
				close(sent)
				if !stall {
					runtime.Goexit() // the process dies: nothing after the send runs
				}
				<-resume
				return r, err
			})}
			first := e.sender(crashing, func(o *Options) { o.Owner = "first" })
			stopped := make(chan int)
			go func() {
				n := -1
				defer func() { stopped <- n }()
				n, _ = first.Once(context.Background())
			}()
			<-sent
			if !stall {
				<-stopped
			}
			if m := e.get(t, "acc", id); m.Status != store.StatusSending || m.LeaseOwner != "first" {
				t.Fatalf("after the first send: %+v", m)
			}

			second := e.sender(&composer{transport: tr}, func(o *Options) { o.Owner = "second" })
			e.clk.Advance(time.Minute - time.Millisecond)
			if n := once(t, second); n != 0 {
				t.Fatalf("sent again within the lease (%d)", n)
			}
			e.clk.Advance(time.Millisecond)
			if n := once(t, second); n != 1 {
				t.Fatalf("not sent again after the lease: %d", n)
			}
			if stall {
				close(resume)
				if n := <-stopped; n != 1 {
					t.Fatalf("the stalled sender handled %d", n)
				}
			}
			got := c.Messages()
			if len(got) != 2 || got[0].MessageID != got[1].MessageID || got[0].MessageID != "<"+mail.MessageID(id, domain)+">" {
				t.Fatalf("received %d: %v", len(got), messageIDs(got))
			}
			m := e.get(t, "acc", id)
			if m.Status != store.StatusSent || m.LeaseOwner != "second" || m.Attempts != 1 || !m.SentAt.Equal(t0.Add(time.Minute)) {
				t.Fatalf("recorded %+v", m)
			}
			if n := once(t, second); n != 0 {
				t.Fatalf("a sent message handled again: %d", n)
			}
		})
	}
}

func messageIDs(msgs []smtpcatcher.Message) []string {
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.MessageID)
	}
	return ids
}

// A 451 is retried on the backoff schedule (the injected clock decides when); after the
// last attempt the message fails.
func TestTemporaryFailureRetriedOnTheBackoff(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	s := e.sender(&composer{transport: tr})
	id := e.insert(t, "acc", 1, false, t0)
	c.FailRcpt(1, 451, "try again later")
	if n := once(t, s); n != 1 {
		t.Fatalf("handled %d", n)
	}
	m := e.get(t, "acc", id)
	if m.Status != store.StatusPending || m.Attempts != 1 || !m.SendAt.Equal(t0.Add(time.Minute)) ||
		!strings.Contains(m.Answer, "451") || len(c.Messages()) != 0 {
		t.Fatalf("after a 451: %+v", m)
	}
	e.clk.Advance(time.Minute - time.Millisecond)
	if n := once(t, s); n != 0 {
		t.Fatalf("retried early: %d", n)
	}
	e.clk.Advance(time.Millisecond)
	if n := once(t, s); n != 1 || len(c.Messages()) != 1 {
		t.Fatalf("retry: handled %d, received %d", n, len(c.Messages()))
	}
	if m := e.get(t, "acc", id); m.Status != store.StatusSent || m.Attempts != 2 {
		t.Fatalf("after the retry: %+v", m)
	}

	// three attempts (MaxAttempts), 1 then 2 minutes apart, then failed
	id = e.insert(t, "acc", 2, false, e.clk.Now())
	c.FailRcpt(3, 451, "still busy")
	for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 0} {
		if n := once(t, s); n != 1 {
			t.Fatalf("attempt %d: handled %d", i+1, n)
		}
		m := e.get(t, "acc", id)
		if m.Attempts != i+1 {
			t.Fatalf("attempt %d: %+v", i+1, m)
		}
		if wait == 0 {
			if m.Status != store.StatusFailed || !strings.Contains(m.Answer, "451") {
				t.Fatalf("after the last attempt: %+v", m)
			}
			break
		}
		if m.Status != store.StatusPending || !m.SendAt.Equal(e.clk.Now().Add(wait)) {
			t.Fatalf("attempt %d: %+v", i+1, m)
		}
		e.clk.Advance(wait)
	}
	if len(c.Messages()) != 1 {
		t.Fatalf("received %d", len(c.Messages()))
	}
}

// A 550 bounces: the message is bounced, the address suppressed, and a later message to it
// is suppressed without a send; another address still receives.
func TestBounceSuppressesTheAddress(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	to := map[int64]string{1: "gone@guest.test", 2: "Gone@Guest.test", 3: "here@guest.test"}
	comp := &composer{transport: tr, to: func(m store.Message) string { return to[m.BookingID] }}
	s := e.sender(comp)
	first := e.insert(t, "acc", 1, false, t0)
	c.FailRcpt(1, 550, "no such user")
	if n := once(t, s); n != 1 {
		t.Fatalf("handled %d", n)
	}
	m := e.get(t, "acc", first)
	if m.Status != store.StatusBounced || m.Attempts != 1 || !strings.Contains(m.Answer, "550") || m.Address != "gone@guest.test" {
		t.Fatalf("after a 550: %+v", m)
	}
	list, err := e.sups.List(context.Background(), "acc")
	if err != nil || len(list) != 1 || list[0].Address != "gone@guest.test" || list[0].MessageID != first ||
		!strings.Contains(list[0].Reason, "550") {
		t.Fatalf("suppressions: %+v %v", list, err)
	}
	if has, _ := e.sups.Has(context.Background(), "other-account", "gone@guest.test"); has {
		t.Fatal("suppressed for another account")
	}
	later := e.insert(t, "acc", 2, false, t0)
	other := e.insert(t, "acc", 3, false, t0)
	if n := once(t, s); n != 2 {
		t.Fatalf("handled %d", n)
	}
	if m := e.get(t, "acc", later); m.Status != store.StatusSuppressed || m.Attempts != 0 || m.Address != "gone@guest.test" {
		t.Fatalf("later message: %+v", m)
	}
	if m := e.get(t, "acc", other); m.Status != store.StatusSent {
		t.Fatalf("other address: %+v", m)
	}
	if got := c.Messages(); len(got) != 1 || got[0].EnvelopeTo[0] != "here@guest.test" {
		t.Fatalf("received %d", len(got))
	}
	// the log finds the address's messages, whatever the case it is asked in
	msgs, total, err := e.msgs.List(context.Background(), "acc", store.MessageFilter{Address: "GONE@guest.test"})
	if err != nil || total != 2 || msgs[0].Address != "gone@guest.test" {
		t.Fatalf("by address: %d %v", total, err)
	}
}

// A refused AUTH (535) fails the message at once: the configuration, not the address, is
// wrong.
func TestPermanentFailureFails(t *testing.T) {
	e := newEnv(t)
	c := smtpcatcher.Start(t)
	tr, err := mail.NewSMTP(mail.SMTPConfig{Host: c.Host(), Port: c.Port(), TLS: mail.TLSNone,
		Username: c.Username(), Password: "wrong", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := e.sender(&composer{transport: tr})
	id := e.insert(t, "acc", 1, false, t0)
	if n := once(t, s); n != 1 {
		t.Fatalf("handled %d", n)
	}
	m := e.get(t, "acc", id)
	if m.Status != store.StatusFailed || m.Attempts != 1 || !strings.Contains(m.Answer, "535") {
		t.Fatalf("after a 535: %+v", m)
	}
	if list, _ := e.sups.List(context.Background(), "acc"); len(list) != 0 {
		t.Fatalf("suppressed on a 535: %+v", list)
	}
	e.clk.Advance(24 * time.Hour)
	if n := once(t, s); n != 0 || len(c.Messages()) != 0 {
		t.Fatalf("a failed message handled again: %d", n)
	}
}

// With no token left the message is put off by the wait and its lease released; the sender
// does not wait.
func TestRateLimitPutsMessagesOff(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	lim := mail.NewLimiter(time.Minute, 1, e.clk.Now) // one a minute per account
	s := e.sender(&composer{transport: tr}, func(o *Options) { o.Limiter = lim })
	for b := int64(1); b <= 3; b++ {
		e.insert(t, "acc", b, false, t0)
	}
	other := e.insert(t, "other", 1, false, t0) // another account has its own bucket
	if n := once(t, s); n != 4 {
		t.Fatalf("handled %d", n)
	}
	if len(c.Messages()) != 2 {
		t.Fatalf("received %d, want 2 (one per account)", len(c.Messages()))
	}
	if m := e.get(t, "other", other); m.Status != store.StatusSent {
		t.Fatalf("other account: %+v", m)
	}
	statuses := func() (sent, pending int) {
		msgs, _, _ := e.msgs.List(context.Background(), "acc", store.MessageFilter{})
		for _, m := range msgs {
			switch m.Status {
			case store.StatusSent:
				sent++
			case store.StatusPending:
				pending++
				if !m.SendAt.Equal(e.clk.Now().Add(time.Minute)) || m.Attempts != 0 || !m.LeaseUntil.IsZero() {
					t.Fatalf("put off: %+v", m)
				}
			}
		}
		return sent, pending
	}
	if sent, pending := statuses(); sent != 1 || pending != 2 {
		t.Fatalf("sent %d pending %d", sent, pending)
	}
	e.clk.Advance(time.Minute)
	if n := once(t, s); n != 2 {
		t.Fatalf("handled %d", n)
	}
	if sent, pending := statuses(); sent != 2 || pending != 1 {
		t.Fatalf("sent %d pending %d", sent, pending)
	}
	e.clk.Advance(time.Minute)
	once(t, s)
	if sent, _ := statuses(); sent != 3 || len(c.Messages()) != 4 {
		t.Fatalf("sent %d, received %d", sent, len(c.Messages()))
	}
}

// A scheduled message is not sent before its time on the service's clock, and is at it.
func TestScheduledMessageWaitsForItsTime(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	s := e.sender(&composer{transport: tr})
	at := t0.Add(72 * time.Hour)
	id := e.insert(t, "acc", 1, true, at)
	if m := e.get(t, "acc", id); m.Status != store.StatusScheduled {
		t.Fatalf("inserted %+v", m)
	}
	e.clk.Advance(72*time.Hour - time.Millisecond)
	if n := once(t, s); n != 0 || len(c.Messages()) != 0 {
		t.Fatalf("sent before its time: %d", n)
	}
	e.clk.Advance(time.Millisecond)
	if n := once(t, s); n != 1 || len(c.Messages()) != 1 {
		t.Fatalf("not sent at its time: %d", n)
	}
	if m := e.get(t, "acc", id); m.Status != store.StatusSent || !m.SentAt.Equal(at) {
		t.Fatalf("sent %+v", m)
	}
}

// Cancel and CancelScheduled leave a message being sent, and one sent, as they are.
func TestCancelNeverCancelsSendingOrSent(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	ctx := context.Background()
	sending := make(chan struct{})
	resume := make(chan struct{})
	held := &composer{transport: transportFunc(func(ctx context.Context, m mail.Message) (mail.Receipt, error) {
		close(sending)
		<-resume
		return tr.Send(ctx, m)
	})}
	s := e.sender(held)
	id := e.insert(t, "acc", 1, true, t0) // a scheduled trigger, due now
	done := make(chan int)
	go func() {
		n, err := s.Once(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	<-sending
	if err := e.msgs.Cancel(ctx, "acc", []string{id}, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.msgs.CancelScheduled(ctx, "acc", 1, nil, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if m := e.get(t, "acc", id); m.Status != store.StatusSending {
		t.Fatalf("cancelled while sending: %s", m.Status)
	}
	close(resume)
	if n := <-done; n != 1 {
		t.Fatalf("handled %d", n)
	}
	if err := e.msgs.Cancel(ctx, "acc", []string{id}, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.msgs.CancelScheduled(ctx, "acc", 1, nil, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if m := e.get(t, "acc", id); m.Status != store.StatusSent || len(c.Messages()) != 1 {
		t.Fatalf("after cancels: %s, received %d", m.Status, len(c.Messages()))
	}
	// one cancelled before its time is never sent
	later := e.insert(t, "acc", 2, true, t0.Add(time.Hour))
	if err := e.msgs.CancelScheduled(ctx, "acc", 2, nil, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Hour)
	s = e.sender(&composer{transport: tr})
	if n := once(t, s); n != 0 || len(c.Messages()) != 1 {
		t.Fatalf("a cancelled message sent: %d", n)
	}
	if m := e.get(t, "acc", later); m.Status != store.StatusCancelled {
		t.Fatalf("%+v", m)
	}
}

// Every way a send ends, and the status it leaves the message in.
func TestStatusTransitions(t *testing.T) {
	temporary := &mail.Error{Kind: mail.Temporary, Stage: "rcpt", Code: 451, Text: "busy"}
	bounce := &mail.Error{Kind: mail.Bounce, Stage: "rcpt", Code: 550, Enhanced: "5.1.1", Text: "no such user"}
	permanent := &mail.Error{Kind: mail.Permanent, Stage: "auth", Code: 535, Text: "bad credentials"}
	cases := []struct {
		name       string
		attempts   int   // attempts made before this one
		compose    error // the Composer's answer
		send       error // the transport's
		suppressed bool  // the address is on the list already
		status     store.Status
		wantTries  int
		sendAt     time.Duration // pending: due again after
		answer     string
		sends      int
		suppress   bool // the address is on the list after
	}{
		{name: "accepted", send: nil, status: store.StatusSent, wantTries: 1, answer: "accepted", sends: 1},
		{name: "temporary", send: temporary, status: store.StatusPending, wantTries: 1, sendAt: time.Minute, answer: "451", sends: 1},
		{name: "temporary again", attempts: 1, send: temporary, status: store.StatusPending, wantTries: 2, sendAt: 2 * time.Minute, answer: "451", sends: 1},
		{name: "temporary, no attempt left", attempts: 2, send: temporary, status: store.StatusFailed, wantTries: 3, answer: "3 attempts", sends: 1},
		{name: "bounce", send: bounce, status: store.StatusBounced, wantTries: 1, answer: "550", sends: 1, suppress: true},
		{name: "permanent", send: permanent, status: store.StatusFailed, wantTries: 1, answer: "535", sends: 1},
		{name: "suppressed", suppressed: true, status: store.StatusSuppressed, answer: "suppression list", suppress: true},
		{name: "booking erased", compose: &Skip{Status: store.StatusCancelled, Reason: "booking erased"}, status: store.StatusCancelled, answer: "booking erased"},
		{name: "no address", compose: &Skip{Status: store.StatusFailed, Reason: "the guest has no address"}, status: store.StatusFailed, answer: "no address"},
		{name: "skip without a final status", compose: &Skip{Status: store.StatusPending, Reason: "?"}, status: store.StatusFailed, answer: "?"},
		{name: "skip as sent", compose: &Skip{Status: store.StatusSent, Reason: "?"}, status: store.StatusFailed, answer: "?"},
		{name: "compose unavailable", compose: errors.New("booking-svc: 503"), status: store.StatusPending, wantTries: 1, sendAt: time.Minute, answer: "503"},
	}
	ctx := context.Background()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t) // a database of its own: a case's retry is not due in the next one
			acc := fmt.Sprint("acc-", i)
			var sends atomic.Int64
			comp := &composer{
				transport: transportFunc(func(context.Context, mail.Message) (mail.Receipt, error) {
					sends.Add(1)
					return mail.Receipt{}, c.send
				}),
				answer: func(store.Message) error { return c.compose },
			}
			s := e.sender(comp)
			id := e.insert(t, acc, 1, false, e.clk.Now())
			if c.attempts > 0 {
				// bring the message to its attempts through temporary failures
				failing := e.sender(&composer{answer: func(store.Message) error { return errors.New("down") }})
				for range c.attempts {
					e.clk.Advance(time.Hour)
					if n := once(t, failing); n != 1 {
						t.Fatalf("setup: handled %d", n)
					}
				}
				e.clk.Advance(time.Hour)
			}
			if c.suppressed {
				if err := e.sups.Add(ctx, store.Suppression{Account: acc, Address: "guest-1@guest.test", Created: t0}); err != nil {
					t.Fatal(err)
				}
			}
			before := e.clk.Now()
			if n := once(t, s); n != 1 {
				t.Fatalf("handled %d", n)
			}
			m := e.get(t, acc, id)
			if m.Status != c.status || m.Attempts != c.wantTries || !strings.Contains(m.Answer, c.answer) ||
				int(sends.Load()) != c.sends || !m.LeaseUntil.IsZero() {
				t.Fatalf("%+v after %d sends", m, sends.Load())
			}
			if c.status == store.StatusPending && !m.SendAt.Equal(before.Add(c.sendAt)) {
				t.Fatalf("due again at %v, want %v", m.SendAt, before.Add(c.sendAt))
			}
			if c.sends > 0 && m.MessageID != mail.MessageID(id, domain) {
				t.Fatalf("message id %q", m.MessageID)
			}
			if has, _ := e.sups.Has(ctx, acc, "guest-1@guest.test"); has != c.suppress {
				t.Fatalf("suppressed: %v", has)
			}
		})
	}
}

// Run sends until its context ends, then answers nil.
func TestRunUntilCancelled(t *testing.T) {
	e := newEnv(t)
	c, tr := catcher(t)
	s := e.sender(&composer{transport: tr}, func(o *Options) { o.Poll = 10 * time.Millisecond })
	e.insert(t, "acc", 1, false, t0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if _, err := c.Wait(wctx, smtpcatcher.Count(1)); err != nil {
		t.Fatal(err)
	}
	e.insert(t, "acc", 2, false, t0)
	if _, err := c.Wait(wctx, smtpcatcher.Count(2)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
