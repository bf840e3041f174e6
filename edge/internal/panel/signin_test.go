package panel_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/accountstore"
	"github.com/vros/vros/edge/internal/panel"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/panelstore"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/testkit/testinfra"
)

var (
	users    *panelauth.Service
	accounts *account.Service
)

func TestMain(m *testing.M) {
	testinfra.RunWithDatabase(m, "edge_panel_test", nil, func(db *mongo.Database) error {
		ctx := context.Background()
		store, err := panelstore.New(ctx, db)
		if err != nil {
			return err
		}
		users = panelauth.New(store, panelauth.Options{Cost: 4})
		accs, err := accountstore.New(ctx, db)
		if err != nil {
			return err
		}
		accounts = account.NewService(accs, account.Options{})
		return nil
	})
}

// clock is the sign-in throttle's clock: it moves only when a test says.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// panelURL serves a panel (edge's failed-authentication throttle of burst failures per
// address, the sign-in slow-down on clk) behind a proxy at 127.0.0.1: a request's
// X-Forwarded-For is its client address.
func panelURL(t *testing.T, burst int, clk *clock) string {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "panel-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	proxies, _ := httpapi.ParseProxies([]string{"127.0.0.1"})
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 25 << 20, TrustedProxies: proxies})
	failures := throttle.NewFailures(0.001, burst)
	failures.SetClock(clk.now)
	signIns := throttle.NewSignIns()
	signIns.SetClock(clk.now)
	p, err := panel.New(panel.Config{Users: users, Accounts: accounts, Failures: failures, SignIns: signIns, Log: tel.Logger})
	if err != nil {
		t.Fatal(err)
	}
	p.Register(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() {
		// Shutdown waits for every connection to be idle: the clients' kept-alive ones go first.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = app.Shutdown()
	})
	return "http://" + ln.Addr().String()
}

var seq atomic.Int64

func newEmail(kind string) string {
	return fmt.Sprintf("%s%d-%d@example.com", kind, os.Getpid(), seq.Add(1))
}

// browser is one client: its cookies and the address it comes from.
type browser struct {
	base, from string
	c          *http.Client
}

func newBrowser(base, from string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{base: base, from: from, c: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(t *testing.T, method, path, contentType string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, b.base+path, body)
	req.Header.Set("X-Forwarded-For", b.from)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Origin", b.base)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp, string(page)
}

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func (b *browser) token(t *testing.T, path string) string {
	t.Helper()
	_, page := b.do(t, http.MethodGet, path, "", nil)
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form token on %s: %.300s", path, page)
	}
	return m[1]
}

func (b *browser) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	return b.do(t, http.MethodPost, path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// login posts the sign-in form and returns the status.
func (b *browser) login(t *testing.T, email, password string) int {
	t.Helper()
	tok := b.token(t, "/panel/login")
	resp, _ := b.post(t, "/panel/login", url.Values{"_csrf": {tok}, "email": {email}, "password": {password}})
	return resp.StatusCode
}

// TestSignInNeverLocksOutTheOperator: wrong passwords for an operator from attackers'
// addresses slow those addresses down; the operator signs in at once from another address,
// and an attacker's address is checked again once its delay is served.
func TestSignInNeverLocksOutTheOperator(t *testing.T) {
	clk := &clock{t: time.Now()}
	base := panelURL(t, 100, clk)
	op := newEmail("operator")
	if _, err := users.CreateUser(context.Background(), op, "Ops", "the right password", panelauth.Operator, ""); err != nil {
		t.Fatal(err)
	}
	attackers := []*browser{newBrowser(base, "203.0.113.7"), newBrowser(base, "203.0.113.8"), newBrowser(base, "2001:db8:66::1")}
	for i := range 15 {
		a := attackers[i%len(attackers)]
		if code := a.login(t, op, fmt.Sprintf("guess %d", i)); code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
			t.Fatalf("guess %d: HTTP %d", i, code)
		}
	}
	for _, a := range attackers {
		if code := a.login(t, op, "the right password"); code != http.StatusTooManyRequests {
			t.Fatalf("the right password from a guessing address %s: HTTP %d, want 429", a.from, code)
		}
	}
	for _, from := range []string{"198.51.100.20", "2001:db8:77::5"} {
		if code := newBrowser(base, from).login(t, op, "the right password"); code != http.StatusSeeOther {
			t.Fatalf("the operator from %s after 15 guesses elsewhere: HTTP %d, want 303 (signed in)", from, code)
		}
	}
	// The same IPv6 /64 as a guesser is the guesser.
	if code := newBrowser(base, "2001:db8:66::ffff").login(t, op, "the right password"); code != http.StatusTooManyRequests {
		t.Fatalf("from the guessing /64: HTTP %d, want 429", code)
	}
	clk.add(throttle.SignInEvery)
	if code := attackers[0].login(t, op, "the right password"); code != http.StatusSeeOther {
		t.Fatalf("the right password from a guessing address after %v: HTTP %d, want 303", throttle.SignInEvery, code)
	}
}

// TestSignInConcurrentGuessesCounted: many wrong passwords at once from one address are all
// counted, and at most the email's free failures plus the address's one are checked.
func TestSignInConcurrentGuessesCounted(t *testing.T) {
	clk := &clock{t: time.Now()}
	base := panelURL(t, 1000, clk)
	owner := newEmail("owner")
	if _, err := users.CreateUser(context.Background(), owner, "", "the right password", panelauth.Operator, ""); err != nil {
		t.Fatal(err)
	}
	const n = 40
	guessers := make([]*browser, n)
	tokens := make([]string, n)
	for i := range guessers {
		guessers[i] = newBrowser(base, "192.0.2.50")
		tokens[i] = guessers[i].token(t, "/panel/login")
	}
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i, g := range guessers {
		wg.Go(func() {
			resp, _ := g.post(t, "/panel/login", url.Values{"_csrf": {tokens[i]}, "email": {owner}, "password": {fmt.Sprint("guess ", i)}})
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	checked := 0
	for _, c := range codes {
		switch c {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("a concurrent guess: HTTP %d", c)
		}
	}
	if checked < throttle.SignInFreeFailures || checked > throttle.SignInFreeFailures+1 {
		t.Errorf("%d of %d concurrent guesses checked, want %d or %d", checked, n, throttle.SignInFreeFailures, throttle.SignInFreeFailures+1)
	}
	// Every failure counted: the address is slowed, and after one SignInEvery it has one try.
	if code := newBrowser(base, "192.0.2.50").login(t, owner, "the right password"); code != http.StatusTooManyRequests {
		t.Errorf("the guessing address after %d guesses: HTTP %d, want 429", n, code)
	}
	if code := newBrowser(base, "192.0.2.51").login(t, owner, "the right password"); code != http.StatusSeeOther {
		t.Errorf("the owner from another address: HTTP %d, want 303", code)
	}
}

// TestInviteAnswersAlike: an owner's invitation for an email that has a user (an owner of
// another account, an operator) is answered exactly as one for a new email; its link
// cannot then be accepted, and says no more than a used one.
func TestInviteAnswersAlike(t *testing.T) {
	clk := &clock{t: time.Now()}
	base := panelURL(t, 100, clk)
	ctx := context.Background()
	acc, _, err := accounts.Create(ctx, "invites", false)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := accounts.Create(ctx, "elsewhere", false)
	if err != nil {
		t.Fatal(err)
	}
	owner, elsewhere, operator := newEmail("owner"), newEmail("elsewhere"), newEmail("operator")
	for _, u := range []struct {
		email   string
		role    panelauth.Role
		account string
	}{{owner, panelauth.Owner, acc.ID}, {elsewhere, panelauth.Owner, other.ID}, {operator, panelauth.Operator, ""}} {
		if _, err := users.CreateUser(ctx, u.email, "", "a long password", u.role, u.account); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(base, "192.0.2.80")
	if code := b.login(t, owner, "a long password"); code != http.StatusSeeOther {
		t.Fatalf("sign in: HTTP %d", code)
	}
	tok := b.token(t, "/panel/users")
	link := regexp.MustCompile(`/panel/invite/[A-Za-z0-9_-]+`)
	answer := func(email string) (int, string, string) {
		resp, page := b.post(t, "/panel/users/invite", url.Values{"_csrf": {tok}, "email": {email}})
		l := link.FindString(page)
		page = strings.ReplaceAll(link.ReplaceAllString(page, "LINK"), email, "EMAIL")
		return resp.StatusCode, page, l
	}
	newCode, newPage, _ := answer(newEmail("new"))
	if newCode != http.StatusOK || !strings.Contains(newPage, `id="invite-link"`) {
		t.Fatalf("invitation for a new email: HTTP %d %.500s", newCode, newPage)
	}
	for _, email := range []string{elsewhere, operator, strings.ToUpper(elsewhere)} {
		code, page, l := answer(email)
		if code != newCode || page != newPage {
			t.Fatalf("invitation for %s (has a user): HTTP %d, answered differently from a new email's (HTTP %d):\n%s", email, code, newCode, page)
		}
		// Its link: the form as any, then refused as a used link, nothing created.
		joiner := newBrowser(base, "192.0.2.81")
		jt := joiner.token(t, l)
		resp, page := joiner.post(t, l, url.Values{"_csrf": {jt}, "name": {"Mallory"}, "password": {"mallory's password"}, "password2": {"mallory's password"}})
		if resp.StatusCode != http.StatusConflict || !strings.Contains(page, "it was used, it expired or it never existed") || strings.Contains(page, "already exists") {
			t.Fatalf("accepting an invitation for %s: HTTP %d %.300s", email, resp.StatusCode, page)
		}
		if u, err := users.Users(ctx, acc.ID); err != nil || len(u) != 1 {
			t.Fatalf("the account's users after accepting: %v %v", u, err)
		}
	}
}

// TestSecretAnswersNotStored: a page that shows a secret once (an invitation link) tells
// the browser to store it nowhere, and keeps htmx from putting it in its history.
func TestSecretAnswersNotStored(t *testing.T) {
	clk := &clock{t: time.Now()}
	base := panelURL(t, 100, clk)
	op := newEmail("operator")
	if _, err := users.CreateUser(context.Background(), op, "", "a long password", panelauth.Operator, ""); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(base, "192.0.2.90")
	if code := b.login(t, op, "a long password"); code != http.StatusSeeOther {
		t.Fatalf("sign in: HTTP %d", code)
	}
	tok := b.token(t, "/panel/operator/users")
	resp, page := b.post(t, "/panel/operator/users/invite", url.Values{"_csrf": {tok}, "email": {newEmail("new")}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="invite-link"`) {
		t.Fatalf("invite: HTTP %d", resp.StatusCode)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the invitation link's page: Cache-Control %q, want no-store", cc)
	}
	if !regexp.MustCompile(`<div class="notice"[^>]* hx-history="false"[^>]*>\s*<p>Invitation for`).MatchString(page) {
		t.Errorf("the invitation link's page does not keep itself out of htmx's history")
	}
	for _, path := range []string{"/panel/operator/users", "/panel/login"} {
		if resp, _ := b.do(t, http.MethodGet, path, "", nil); resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", path, resp.Header.Get("Cache-Control"))
		}
	}
}

// TestFormBodyLimit: the sign-in form (and the other small forms) refuse a body over
// panel.MaxFormBody with 413 before parsing it: a megabyte of tiny fields costs about the
// megabyte, not the many times more its fields would.
func TestFormBodyLimit(t *testing.T) {
	clk := &clock{t: time.Now()}
	base := panelURL(t, 100, clk)
	b := newBrowser(base, "192.0.2.99")
	tok := b.token(t, "/panel/login")
	var body strings.Builder
	body.WriteString("_csrf=" + tok + "&email=a%40example.com&password=whatever+it+is")
	for body.Len() < 1<<20 {
		body.WriteString("&f=1")
	}
	for _, tt := range []struct {
		name, path, body string
		status           int
	}{
		{"just under", "/panel/login", body.String()[:panel.MaxFormBody-100], http.StatusUnauthorized},
		{"a megabyte of fields", "/panel/login", body.String(), http.StatusRequestEntityTooLarge},
		{"invitation", "/panel/invite/sometoken", body.String(), http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resp, page := b.do(t, http.MethodPost, tt.path, "application/x-www-form-urlencoded", strings.NewReader(tt.body))
			runtime.ReadMemStats(&after)
			if resp.StatusCode != tt.status {
				t.Fatalf("HTTP %d, want %d: %.300s", resp.StatusCode, tt.status, page)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte body: HTTP %d, %d bytes allocated", len(tt.body), resp.StatusCode, alloc)
			if tt.status == http.StatusRequestEntityTooLarge {
				if !strings.Contains(page, "This form is too large") {
					t.Errorf("413 page: %.300s", page)
				}
				// The body itself is read (and copied by the test's client): a few times its
				// size. Parsing its 260 000 fields would take tens of megabytes.
				if alloc > 8*uint64(len(tt.body)) {
					t.Errorf("%d bytes allocated for a refused %d-byte body", alloc, len(tt.body))
				}
			}
		})
	}
}
