package idempotency

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "idempotency_test", &db, nil) }

const signKey = "idempotency-test-key-0123"

// server is one action behind the middleware. Its handler counts runs and does what the
// test tells it for each run.
type server struct {
	app  *fiber.App
	keys *Keys
	runs atomic.Int64
	next func(c *fiber.Ctx, run int64) error
}

func newServer(t *testing.T, lease, deadline time.Duration) *server {
	t.Helper()
	keys, err := New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	keys.Lease, keys.Deadline = lease, deadline
	s := &server{keys: keys}
	s.app = fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	s.app.Post("/internal/b/create", httpapi.Use(httpapi.EnvelopeB), tenancyfiber.Require(tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: signKey})), keys.Middleware("create"),
		func(c *fiber.Ctx) error { return s.next(c, s.runs.Add(1)) })
	return s
}

// call sends a create of account with key and body; it gives up waiting after wait (the
// handler may never answer).
func (s *server) call(t *testing.T, account, key, body string, wait time.Duration) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/internal/b/create", strings.NewReader(body))
	tenancy.NewSigner(tenancy.CallerEdge, signKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodPost, "/internal/b/create", []byte(body), time.Now())
	req.Header.Set(Header, key)
	res, err := s.app.Test(req, int(wait/time.Millisecond))
	if err != nil {
		return nil, err.Error()
	}
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// clock is the keys' clock in a test: it stands still until the test moves it on.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

// on makes c the clock of keys, from now.
func (c *clock) on(keys *Keys) {
	c.now = time.Now()
	keys.now = c.read
}

func (c *clock) read() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// unique is name with a suffix of its own, so that a key is new in each run (-count=N runs
// share the database).
func unique(name string) string { return fmt.Sprintf("%s-%d", name, time.Now().UnixNano()) }

// answerWait is how long a call that must be answered is waited for: a hang, not a slow
// machine.
const answerWait = 30 * time.Second

// waitFor waits until ch is closed; a hang fails the test.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(answerWait):
		t.Fatalf("%s: never", what)
	}
}

// TestStoppedAttemptIsTakenOverOnce: the first attempt never answers (its process died).
// Retries within the lease are told it is in progress and when to retry; after the lease
// exactly one of twenty concurrent retries runs again; every later retry replays its answer.
// The lease runs on the keys' clock, which only the test moves: the verdict does not depend
// on how fast the machine is (the deadline to read a key, real time, only guards a hang).
func TestStoppedAttemptIsTakenOverOnce(t *testing.T) {
	const lease = 3 * time.Second
	s := newServer(t, lease, answerWait)
	var clk clock
	clk.on(s.keys)
	key := unique("k1")
	dead, running := make(chan struct{}), make(chan struct{})
	defer close(dead)
	s.next = func(c *fiber.Ctx, run int64) error {
		if run == 1 {
			close(running)
			<-dead // stopped for good
			return nil
		}
		time.Sleep(50 * time.Millisecond) // the takeover runs a while: other retries find it in progress
		return httpapi.B(c, fiber.Map{"bookingId": run})
	}
	go s.call(t, "ta", key, `{"n":1}`, answerWait)
	waitFor(t, running, "the first attempt runs")
	res, body := s.call(t, "ta", key, `{"n":1}`, answerWait)
	if res == nil || res.StatusCode != http.StatusConflict || res.Header.Get("Retry-After") == "" {
		t.Fatalf("retry within the lease: %v %s", res, body)
	}
	clk.add(lease + 50*time.Millisecond)

	var wg sync.WaitGroup
	codes := make([]int, 20)
	bodies := make([]string, 20)
	replayed := make([]bool, 20)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, body := s.call(t, "ta", key, `{"n":1}`, answerWait)
			if res != nil {
				codes[i], bodies[i] = res.StatusCode, body
				replayed[i] = res.Header.Get("Idempotent-Replayed") == "true"
			}
		}()
	}
	wg.Wait()
	// On a loaded machine some retries arrive after the takeover has answered: they get its
	// answer replayed, which is right. What must hold: one of them ran, none ran twice.
	ran, conflicts := 0, 0
	var answer string
	var replays []string
	for i, c := range codes {
		switch {
		case c == http.StatusOK && !replayed[i]:
			ran++
			answer = bodies[i]
		case c == http.StatusOK:
			replays = append(replays, bodies[i])
		case c == http.StatusConflict:
			conflicts++
		default:
			t.Fatalf("retry answered %d %s", c, bodies[i])
		}
	}
	if ran != 1 || s.runs.Load() != 2 {
		t.Fatalf("%d retries ran (%d replays) and the handler ran %d times, want one takeover", ran, len(replays), s.runs.Load())
	}
	for _, r := range replays {
		if r != answer {
			t.Fatalf("a replay answered %s, the takeover %s", r, answer)
		}
	}
	res, body = s.call(t, "ta", key, `{"n":1}`, answerWait)
	if res.StatusCode != http.StatusOK || body != answer || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("after the takeover: %d %s (replayed %q), want %s", res.StatusCode, body, res.Header.Get("Idempotent-Replayed"), answer)
	}
	if res, body := s.call(t, "ta", key, `{"n":2}`, answerWait); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("another body under the key: %d %s", res.StatusCode, body)
	}
	t.Logf("%d concurrent retries past the lease: 1 ran, %d told in progress, %d replayed", len(codes), conflicts, len(replays))
}

// TestResolverAnswersTheCommittedOutcome: a takeover asks the resolver first; the outcome it
// finds is the answer, kept and replayed, and the request does not run again. The attempt's
// reservation (a booking id) reaches the resolver.
func TestResolverAnswersTheCommittedOutcome(t *testing.T) {
	const lease = 300 * time.Millisecond
	s := newServer(t, lease, answerWait)
	var clk clock
	clk.on(s.keys)
	key := unique("k2")
	dead, reserved := make(chan struct{}), make(chan struct{})
	defer close(dead)
	var once sync.Once
	s.next = func(c *fiber.Ctx, run int64) error {
		if err := From(c).Reserve(c.UserContext(), 4200+run); err != nil {
			return err
		}
		once.Do(func() { close(reserved) })
		<-dead
		return nil
	}
	var refs []int64
	s.keys.Resolve("create", func(c *fiber.Ctx, a *Attempt) (bool, error) {
		refs = a.Refs
		return true, httpapi.B(c, fiber.Map{"bookingId": a.Refs[0]})
	})
	go s.call(t, "tb", key, `{}`, answerWait)
	waitFor(t, reserved, "the first attempt reserves")
	clk.add(lease + 100*time.Millisecond)
	res, body := s.call(t, "tb", key, `{}`, answerWait)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"bookingId":4201`) || len(refs) != 1 || refs[0] != 4201 {
		t.Fatalf("takeover: %d %s, refs %v", res.StatusCode, body, refs)
	}
	again, body2 := s.call(t, "tb", key, `{}`, answerWait)
	if again.StatusCode != http.StatusOK || body2 != body || s.runs.Load() != 1 {
		t.Fatalf("replay: %d %s after %d runs", again.StatusCode, body2, s.runs.Load())
	}
}

// TestAnswersNotKept: a 5xx and a "busy" answer (Transient) promise nothing: the next retry
// runs at once, without waiting for the lease.
func TestAnswersNotKept(t *testing.T) {
	s := newServer(t, time.Hour, answerWait)
	key := unique("k3")
	s.next = func(c *fiber.Ctx, run int64) error {
		switch run {
		case 1:
			return fmt.Errorf("store unavailable")
		case 2:
			return Transient(httpapi.Conflict(httpapi.StatusConflict, "another change of this booking is in progress"))
		}
		return httpapi.B(c, fiber.Map{"run": run})
	}
	for run, code := range []int{http.StatusInternalServerError, http.StatusConflict, http.StatusOK, http.StatusOK} {
		res, body := s.call(t, "tc", key, `{}`, answerWait)
		if res.StatusCode != code {
			t.Fatalf("call %d: %d %s, want %d", run+1, res.StatusCode, body, code)
		}
	}
	if s.runs.Load() != 3 {
		t.Fatalf("handler ran %d times, want 3 (the last call replays)", s.runs.Load())
	}
}

// TestKeyNotReadInTimeIsBusy: a request that cannot even read its key within its deadline
// (an overloaded store) answers 503 with Retry-After, not a 500: nothing ran, a retry is safe.
func TestKeyNotReadInTimeIsBusy(t *testing.T) {
	s := newServer(t, time.Minute, time.Nanosecond)
	s.next = func(c *fiber.Ctx, run int64) error { return httpapi.B(c, fiber.Map{"bookingId": run}) }
	res, body := s.call(t, "tb", unique("k-busy"), `{"n":1}`, answerWait)
	if res == nil || res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || s.runs.Load() != 0 {
		t.Fatalf("%v %s (handler ran %d times), want 503 with Retry-After and no run", res, body, s.runs.Load())
	}
}
