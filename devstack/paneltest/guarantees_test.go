package paneltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// stillThere asserts, through interface A, that the owner's property exists.
func (o owner) stillThere(t *testing.T) {
	t.Helper()
	o.a(t, "property", `{"action":"get","property":{"internal_code":"`+o.Code+`"}}`, nil)
}

// TestPanelRefusesForgedForms: a change without the session's CSRF token, with another
// one, or sent by another site (Origin, Sec-Fetch-Site) is refused 403 and changes nothing;
// the sign-in form needs its own token too. Seen failing with the csrf middleware removed.
func TestPanelRefusesForgedForms(t *testing.T) {
	o := newOwner(t)
	s := signIn(t, o.Email, o.Password)
	del := "/panel/properties/" + o.Code + "/delete"
	for _, c := range []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"no token", url.Values{}, nil},
		{"another token", url.Values{"_csrf": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}, nil},
		{"another session's token", url.Values{"_csrf": {signIn(t, o.Email, o.Password).csrf}}, nil},
		{"another origin", s.form(), []string{"Origin", "https://evil.example"}},
		{"cross-site fetch", s.form(), []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := s.post(t, del, c.form, c.headers...)
			if code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
				t.Fatalf("HTTP %d, want 403 naming the CSRF check: %.300s", code, body)
			}
			o.stillThere(t)
		})
	}
	t.Run("sign-in without its token", func(t *testing.T) {
		c := &session{c: newClient()}
		code, _ := c.post(t, "/panel/login", url.Values{"email": {o.Email}, "password": {o.Password}})
		if code != http.StatusForbidden {
			t.Fatalf("HTTP %d, want 403", code)
		}
	})
	// The same form with the token is accepted: the refusals above were the check's.
	if code, _ := s.post(t, del, s.form()); code != http.StatusSeeOther {
		t.Fatalf("with the token: HTTP %d, want 303", code)
	}
}

// TestPanelKeepsAccountsApart: an owner reaches none of another account's property, booking
// or block by naming it (404, nothing changed), and under load — 8 clients per account at
// once, each reading its own pages — every page shows only its own account's data.
func TestPanelKeepsAccountsApart(t *testing.T) {
	a, b := newOwner(t), newOwner(t)
	sa, sb := signIn(t, a.Email, a.Password), signIn(t, b.Email, b.Password)
	bBooking := b.book(t, day(40), day(43))
	var block struct {
		Data struct {
			BlockID json.Number `json:"block_id"`
		} `json:"data"`
	}
	b.a(t, "property-blockdate", fmt.Sprintf(`{"action":"create","block":{"internal_code":%q,"start_date":%q,"end_date":%q}}`, b.Code, day(50), day(51)), &block)

	for _, path := range []string{"/panel/properties/" + b.Code, "/panel/properties/" + b.Code + "/calendar", "/panel/properties/" + b.Code + "/rates",
		"/panel/bookings/" + strconv.FormatInt(bBooking, 10)} {
		if code, body := sa.get(t, path); code != http.StatusNotFound || strings.Contains(body, b.Name) {
			t.Errorf("%s as the other account: HTTP %d (want 404), shows its data: %v", path, code, strings.Contains(body, b.Name))
		}
	}
	for _, c := range []struct{ path, field string }{
		{"/panel/bookings/" + strconv.FormatInt(bBooking, 10) + "/cancel", ""},
		{"/panel/properties/" + b.Code + "/calendar/unblock", block.Data.BlockID.String()},
		{"/panel/properties/" + b.Code + "/delete", ""},
	} {
		if code, _ := sa.post(t, c.path, sa.form("block_id", c.field)); code != http.StatusNotFound {
			t.Errorf("POST %s as the other account: HTTP %d, want 404", c.path, code)
		}
	}
	b.stillThere(t)
	got := b.bookingState(t, bBooking)
	if got != "reserved" {
		t.Errorf("the other account's booking is %s after the attempts", got)
	}
	if code, body := sb.get(t, "/panel/properties/"+b.Code+"/calendar?month="+day(50)[:7]); code != http.StatusOK || !strings.Contains(body, "unblock-"+block.Data.BlockID.String()) {
		t.Errorf("the other account's block is gone (HTTP %d)", code)
	}

	// Under load.
	aBooking := a.book(t, day(40), day(43))
	pages := func(o owner, booking int64) []string {
		return []string{"/panel/properties", "/panel/properties/" + o.Code, "/panel/bookings/" + strconv.FormatInt(booking, 10),
			"/panel/dashboard", "/panel/properties/" + o.Code + "/calendar"}
	}
	var wg sync.WaitGroup
	for i := range 16 {
		me, other, s, booking := a, b, sa, aBooking
		if i%2 == 1 {
			me, other, s, booking = b, a, sb, bBooking
		}
		wg.Go(func() {
			for round := range 6 {
				for _, p := range pages(me, booking) {
					code, body := s.get(t, p)
					if code != http.StatusOK {
						t.Errorf("%s: HTTP %d", p, code)
						return
					}
					if strings.Contains(body, other.Name) || strings.Contains(body, other.Code+"/") {
						t.Errorf("round %d: %s of account %s shows account %s's data", round, p, me.AccountID, other.AccountID)
					}
					if p != "/panel/dashboard" && !strings.Contains(body, me.Code) && !strings.Contains(body, me.Name) {
						t.Errorf("round %d: %s of account %s does not show its own property", round, p, me.AccountID)
					}
				}
			}
		})
	}
	wg.Wait()
}

// bookingState is reserved or cancelled, read through interface B.
func (o owner) bookingState(t *testing.T, id int64) string {
	t.Helper()
	a := b(t, o.Key, o.Pass, "listbooking", map[string]any{"bookingId": id})
	var d struct {
		ListBooking []struct {
			CancellationDate *string `json:"cancellationDate"`
		} `json:"listBooking"`
	}
	if err := json.Unmarshal(a.Data, &d); err != nil || len(d.ListBooking) != 1 {
		t.Fatalf("listbooking %d: %v %s", id, err, a.Data)
	}
	if c := d.ListBooking[0].CancellationDate; c != nil && *c != "" {
		return "cancelled"
	}
	return "reserved"
}

// TestPanelSignInThrottled: after 10 wrong passwords for one email, even the right one is
// refused (429) for a while, from any address; another email signs in meanwhile.
func TestPanelSignInThrottled(t *testing.T) {
	o, other := newOwner(t), newOwner(t)
	c := &session{c: newClient()}
	for i := range 10 {
		if code, _ := c.login(t, o.Email, "wrong password "+strconv.Itoa(i)); code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: HTTP %d, want 401", i, code)
		}
	}
	code, body := c.login(t, o.Email, o.Password)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins") {
		t.Fatalf("right password after 10 failures: HTTP %d, want 429", code)
	}
	signIn(t, other.Email, other.Password)
}

// TestSignOutEverywhere: signing out everywhere ends the user's sessions on every browser;
// another user's session goes on.
func TestSignOutEverywhere(t *testing.T) {
	o, other := newOwner(t), newOwner(t)
	one, two, third := signIn(t, o.Email, o.Password), signIn(t, o.Email, o.Password), signIn(t, other.Email, other.Password)
	if code, _ := one.post(t, "/panel/logout-everywhere", one.form()); code != http.StatusSeeOther {
		t.Fatalf("sign out everywhere: HTTP %d", code)
	}
	for _, s := range []*session{one, two} {
		if code, _ := s.get(t, "/panel/dashboard"); code != http.StatusSeeOther {
			t.Errorf("a signed-out browser: HTTP %d, want 303 to the sign-in page", code)
		}
	}
	if code, _ := third.get(t, "/panel/dashboard"); code != http.StatusOK {
		t.Errorf("another user's session: HTTP %d", code)
	}
}

// TestInviteWorksOnce: an owner's invite link makes a user of the same account; a refused
// password leaves it usable; of two browsers accepting it at once one gets in; then it is
// dead.
func TestInviteWorksOnce(t *testing.T) {
	o := newOwner(t)
	s := signIn(t, o.Email, o.Password)
	_, page := s.post(t, "/panel/users/invite", s.form("email", "colleague"+o.AccountID+"@example.com"))
	link := regexpFind(t, `id="invite-link">([^<]+)<`, page)
	path := strings.TrimPrefix(link, st.EdgeURL)

	accept := func(password string) int {
		c := &session{c: newClient()}
		_, form := c.get(t, path)
		m := csrfInput.FindStringSubmatch(form)
		if m == nil {
			return http.StatusNotFound
		}
		code, _ := c.post(t, path, url.Values{"_csrf": {m[1]}, "name": {"Colleague"}, "password": {password}, "password2": {password}})
		return code
	}
	if code := accept("short"); code != http.StatusBadRequest {
		t.Fatalf("short password: HTTP %d, want 400", code)
	}
	codes := make(chan int, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { codes <- accept("a long enough password") })
	}
	wg.Wait()
	close(codes)
	in := 0
	for c := range codes {
		if c == http.StatusSeeOther {
			in++
		}
	}
	if in != 1 {
		t.Fatalf("%d of 4 concurrent accepts got in, want 1", in)
	}
	if code := accept("a long enough password"); code == http.StatusSeeOther {
		t.Fatal("a used invite let someone in again")
	}
	col := signIn(t, "colleague"+o.AccountID+"@example.com", "a long enough password")
	if _, body := col.get(t, "/panel/properties"); !strings.Contains(body, o.Name) {
		t.Error("the invited user does not see the account's properties")
	}
}

func regexpFind(t *testing.T, expr, s string) string {
	t.Helper()
	m := regexp.MustCompile(expr).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s not found in %.1000s", expr, s)
	}
	return m[1]
}

// TestOperatorSuspends: an operator suspends an account in the panel; its owners are then
// refused on every page (as its API credentials are) until it is reinstated; both changes are
// in the audit log as the operator's.
func TestOperatorSuspends(t *testing.T) {
	o := newOwner(t)
	opEmail := fmt.Sprintf("op-suspend%d@example.com", seq)
	createUser(t, opEmail, "operator password 1", "operator", "")
	op, own := signIn(t, opEmail, "operator password 1"), signIn(t, o.Email, o.Password)
	acc := "/panel/operator/accounts/" + o.AccountID
	if code, _ := own.get(t, acc); code != http.StatusForbidden {
		t.Errorf("an owner on the operator's page: HTTP %d, want 403", code)
	}
	if code, _ := op.post(t, acc, op.form("do", "suspend")); code != http.StatusSeeOther {
		t.Fatalf("suspend: HTTP %d", code)
	}
	for _, p := range []string{"/panel/dashboard", "/panel/properties", "/panel/credentials"} {
		if code, body := own.get(t, p); code != http.StatusForbidden || !strings.Contains(body, "suspended") {
			t.Errorf("%s of a suspended account: HTTP %d, want 403 saying so", p, code)
		}
	}
	if a := b(t, o.Key, o.Pass, "gettax", map[string]any{"propertyId": o.PID}); a.Status == 0 {
		t.Error("the suspended account's API key still works")
	}
	if code, _ := op.post(t, acc, op.form("do", "reinstate")); code != http.StatusSeeOther {
		t.Fatalf("reinstate: HTTP %d", code)
	}
	if code, _ := own.get(t, "/panel/dashboard"); code != http.StatusOK {
		t.Errorf("after reinstatement: HTTP %d", code)
	}
	_, audit := op.get(t, "/panel/operator/audit?account="+o.AccountID)
	if strings.Count(audit, "panel:"+opEmail) < 2 {
		t.Errorf("the audit log does not name the operator for both changes")
	}
}
