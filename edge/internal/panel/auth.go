package panel

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
)

// Cookies: the session token, and before sign-in the token the sign-in form carries back
// (login CSRF).
const (
	cookieSession = "vros_panel"
	cookieLogin   = "vros_panel_login"
	sessionKey    = "vros.panel.session"
	callerKey     = "vros.panel.caller"
	csrfField     = "_csrf"
)

func (p *Panel) setCookie(c *fiber.Ctx, name, value string, expires time.Time) {
	c.Cookie(&fiber.Cookie{Name: name, Value: value, Path: "/panel", Expires: expires, HTTPOnly: true, Secure: p.secure,
		SameSite: fiber.CookieSameSiteStrictMode})
}

func (p *Panel) clearCookie(c *fiber.Ctx, name string) {
	p.setCookie(c, name, "", time.Unix(1, 0))
}

// session is the browser's session, if signed in.
func (p *Panel) session(c *fiber.Ctx) (panelauth.Session, error) {
	// Copied: the cookie's bytes are the request's, and the session outlives no request,
	// but the token goes into a store query run by the driver's goroutines.
	return p.cfg.Users.Session(c.UserContext(), strings.Clone(c.Cookies(cookieSession)))
}

// signedIn admits a signed-in browser and sends any other to the sign-in page.
func (p *Panel) signedIn(c *fiber.Ctx) error {
	sess, err := p.session(c)
	if errors.Is(err, panelauth.ErrNoSession) {
		if c.Method() == fiber.MethodGet {
			return c.Redirect("/panel/login?next="+c.Path(), fiber.StatusSeeOther)
		}
		return &httpapi.Error{HTTP: fiber.StatusUnauthorized, Message: "You are signed out. Sign in again."}
	}
	if err != nil {
		return err
	}
	c.Locals(sessionKey, sess)
	return c.Next()
}

// csrf refuses a form post that does not carry the session's token, or that another site
// sent (Sec-Fetch-Site, Origin): the cookie is SameSite=Strict as well.
func (p *Panel) csrf(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodPost {
		return c.Next()
	}
	sess := sessionOf(c)
	if !sameSite(c) || !panelauth.SameToken(c.FormValue(csrfField), sess.CSRF) {
		return &httpapi.Error{HTTP: fiber.StatusForbidden, Message: "This form is out of date or was not sent from the panel (CSRF check failed). Reload the page and try again."}
	}
	return c.Next()
}

// sameSite reports whether a post comes from a panel page: what the browser says of where
// the request comes from, when it says it.
func sameSite(c *fiber.Ctx) bool {
	if s := c.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return false
	}
	if o := c.Get(fiber.HeaderOrigin); o != "" && o != "null" && o != c.BaseURL() {
		return false
	}
	return true
}

func sessionOf(c *fiber.Ctx) panelauth.Session {
	s, _ := c.Locals(sessionKey).(panelauth.Session)
	return s
}

// ownerOnly admits an owner user of an account that may be used: the caller it acts as
// is its account's, read from the account (suspended: refused, as its credentials are).
func (p *Panel) ownerOnly(c *fiber.Ctx) error {
	sess := sessionOf(c)
	if sess.Role != panelauth.Owner {
		if c.Method() == fiber.MethodGet {
			return c.Redirect("/panel/operator/accounts", fiber.StatusSeeOther)
		}
		return &httpapi.Error{HTTP: fiber.StatusForbidden, Message: "Only an owner user of an account can do this."}
	}
	caller, err := p.cfg.Accounts.CallerOf(c.UserContext(), sess.AccountID)
	switch {
	case errors.Is(err, account.ErrSuspended):
		return &httpapi.Error{HTTP: fiber.StatusForbidden, Message: "This account is suspended. Ask your operator to reinstate it."}
	case errors.Is(err, account.ErrUnauthorized):
		return &httpapi.Error{HTTP: fiber.StatusForbidden, Message: "This account no longer exists."}
	case err != nil:
		return err
	}
	c.Locals(callerKey, caller)
	return c.Next()
}

func (p *Panel) operatorOnly(c *fiber.Ctx) error {
	if sessionOf(c).Role != panelauth.Operator {
		return &httpapi.Error{HTTP: fiber.StatusForbidden, Message: "Only an operator can see this page."}
	}
	// The operator's changes are recorded in the audit log as theirs.
	c.SetUserContext(account.WithActor(c.UserContext(), panelActor(c)))
	return c.Next()
}

func callerOf(c *fiber.Ctx) account.Caller {
	k, _ := c.Locals(callerKey).(account.Caller)
	return k
}

func (p *Panel) loginPage(c *fiber.Ctx) error {
	tok := panelauth.NewToken()
	p.setCookie(c, cookieLogin, tok, time.Now().Add(time.Hour))
	return p.render(c, "login", view{Title: "Sign in", Notice: notice(c), Values: map[string]string{csrfField: tok, "next": safeNext(c.Query("next"))}})
}

// safeNext is where to go after signing in: a panel path only (never another site).
func safeNext(next string) string {
	if strings.HasPrefix(next, "/panel/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return ""
}

// login signs a user in. Failures are throttled per client address (with edge's failed
// authentications), and slowed down per email (throttle.SignIns), before the password is
// checked; neither tells whether the email has a user.
func (p *Panel) login(c *fiber.Ctx) error {
	email, password := strings.TrimSpace(c.FormValue("email")), c.FormValue("password")
	values := map[string]string{"email": email, csrfField: c.FormValue(csrfField), "next": safeNext(c.FormValue("next"))}
	again := func(status int, msg string) error {
		c.Status(status)
		return p.render(c, "login", view{Title: "Sign in", Message: msg, Values: values})
	}
	if !sameSite(c) || !panelauth.SameToken(c.FormValue(csrfField), c.Cookies(cookieLogin)) {
		return again(fiber.StatusForbidden, "This sign-in form is out of date (CSRF check failed). Reload the page and try again.")
	}
	// Copied: the throttle keeps the key beyond this request, and the form value is a view of
	// fasthttp's buffer (ToLower returns its argument when there is nothing to lower).
	key := strings.ToLower(strings.Clone(email))
	if err := p.cfg.Failures.Check(c); err != nil {
		return again(fiber.StatusTooManyRequests, "Too many failed sign-ins from your address. "+retryIn(c))
	}
	attempt, wait := p.signIns.Begin(key, throttle.ClientKey(c))
	if attempt == nil {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
		return again(fiber.StatusTooManyRequests, "Too many failed sign-ins for this email from your address. "+retryIn(c))
	}
	sess, token, err := p.cfg.Users.SignIn(c.UserContext(), email, password)
	attempt.Done(errors.Is(err, panelauth.ErrBadLogin))
	if errors.Is(err, panelauth.ErrBadLogin) {
		p.cfg.Failures.Failed(c)
		signInFailed(c, p.cfg.Gateway)
		return again(fiber.StatusUnauthorized, "Wrong email or password.")
	}
	if err != nil {
		return err
	}
	p.clearCookie(c, cookieLogin)
	p.setCookie(c, cookieSession, token, sess.ExpiresAt)
	if n := values["next"]; n != "" {
		return c.Redirect(n, fiber.StatusSeeOther)
	}
	return c.Redirect("/panel/", fiber.StatusSeeOther)
}

func retryIn(c *fiber.Ctx) string {
	if s := c.GetRespHeader(fiber.HeaderRetryAfter); s != "" {
		return "Try again in " + s + " seconds."
	}
	return "Try again later."
}

func (p *Panel) logout(c *fiber.Ctx) error {
	if err := p.cfg.Users.SignOut(c.UserContext(), sessionOf(c)); err != nil {
		return err
	}
	p.clearCookie(c, cookieSession)
	return redirect(c, "/panel/login", "signedout")
}

func (p *Panel) logoutEverywhere(c *fiber.Ctx) error {
	if _, err := p.cfg.Users.SignOutEverywhere(c.UserContext(), sessionOf(c)); err != nil {
		return err
	}
	p.clearCookie(c, cookieSession)
	return redirect(c, "/panel/login", "everywhere")
}

type inviteData struct {
	Invite panelauth.Invite
}

func (p *Panel) invitePage(c *fiber.Ctx) error {
	inv, err := p.cfg.Users.InviteFor(c.UserContext(), strings.Clone(c.Params("token")))
	if errors.Is(err, panelauth.ErrNoInvite) {
		return &httpapi.Error{HTTP: fiber.StatusNotFound, Message: err.Error()}
	}
	if err != nil {
		return err
	}
	tok := panelauth.NewToken()
	p.setCookie(c, cookieLogin, tok, time.Now().Add(time.Hour))
	return p.render(c, "invite", view{Title: "Join", Data: inviteData{inv}, Values: map[string]string{csrfField: tok}})
}

func (p *Panel) acceptInvite(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	inv, err := p.cfg.Users.InviteFor(c.UserContext(), token)
	if errors.Is(err, panelauth.ErrNoInvite) {
		return &httpapi.Error{HTTP: fiber.StatusNotFound, Message: err.Error()}
	}
	if err != nil {
		return err
	}
	values := map[string]string{"name": c.FormValue("name"), csrfField: c.FormValue(csrfField)}
	if !sameSite(c) || !panelauth.SameToken(c.FormValue(csrfField), c.Cookies(cookieLogin)) {
		c.Status(fiber.StatusForbidden)
		return p.render(c, "invite", view{Title: "Join", Data: inviteData{inv}, Values: values,
			Message: "This form is out of date (CSRF check failed). Reload the page and try again."})
	}
	if c.FormValue("password") != c.FormValue("password2") {
		c.Status(fiber.StatusBadRequest)
		return p.render(c, "invite", view{Title: "Join", Data: inviteData{inv}, Values: values,
			Errors: map[string]string{"password2": "must be the same password"}})
	}
	sess, tok, err := p.cfg.Users.Accept(c.UserContext(), token, c.FormValue("name"), c.FormValue("password"))
	if fe, ok := errors.AsType[*panelauth.FieldError](err); ok {
		c.Status(fiber.StatusBadRequest)
		return p.render(c, "invite", view{Title: "Join", Data: inviteData{inv}, Values: values, Errors: map[string]string{fe.Field: fe.Message}})
	}
	if errors.Is(err, panelauth.ErrNoInvite) {
		return &httpapi.Error{HTTP: fiber.StatusConflict, Message: err.Error()}
	}
	if err != nil {
		return err
	}
	p.clearCookie(c, cookieLogin)
	p.setCookie(c, cookieSession, tok, sess.ExpiresAt)
	return c.Redirect("/panel/", fiber.StatusSeeOther)
}

type usersData struct {
	Users []panelauth.User
	// Link is the invite link just made, shown to the inviter (no mail server is assumed).
	Link  string
	Email string
	Base  string
}

func (p *Panel) usersBase(c *fiber.Ctx) string {
	if sessionOf(c).Role == panelauth.Operator {
		return "/panel/operator/users"
	}
	return "/panel/users"
}

func (p *Panel) users(c *fiber.Ctx) error {
	return p.usersView(c, usersData{}, "", nil)
}

func (p *Panel) usersView(c *fiber.Ctx, d usersData, msg string, errs map[string]string) error {
	sess := sessionOf(c)
	us, err := p.cfg.Users.Users(c.UserContext(), sess.AccountID)
	if err != nil {
		return err
	}
	d.Users, d.Base = us, p.usersBase(c)
	return p.render(c, "users", view{Title: "Users", Session: sess, Nav: "users", Notice: notice(c), Message: msg, Errors: errs,
		Values: map[string]string{csrfField: sess.CSRF}, Data: d})
}

func (p *Panel) invite(c *fiber.Ctx) error {
	sess := sessionOf(c)
	_, token, err := p.cfg.Users.Invite(c.UserContext(), sess, c.FormValue("email"), sess.Role, sess.AccountID)
	if fe, ok := errors.AsType[*panelauth.FieldError](err); ok {
		c.Status(fiber.StatusBadRequest)
		return p.usersView(c, usersData{}, "", map[string]string{fe.Field: fe.Message})
	}
	if err != nil {
		return err
	}
	return p.usersView(c, usersData{Link: p.inviteLink(c, token), Email: c.FormValue("email")}, "", nil)
}

func (p *Panel) removeUser(c *fiber.Ctx) error {
	err := p.cfg.Users.RemoveUser(c.UserContext(), sessionOf(c), c.FormValue("email"))
	if fe, ok := errors.AsType[*panelauth.FieldError](err); ok {
		c.Status(fiber.StatusBadRequest)
		return p.usersView(c, usersData{}, fe.Message, nil)
	}
	if errors.Is(err, panelauth.ErrNotFound) {
		return errNotYours
	}
	if err != nil {
		return err
	}
	return redirect(c, p.usersBase(c), "removed")
}

// panelActor is who the audit log records for a change made in the panel: the user (by
// email, "panel:" first), the client address and the request id.
func panelActor(c *fiber.Ctx) account.Actor {
	// Copies: the context outlives fasthttp's buffers.
	return account.Actor{Fingerprint: "panel:" + sessionOf(c).Email, Address: strings.Clone(httpapi.ClientIP(c)), RequestID: strings.Clone(httpapi.RequestID(c))}
}

// inviteLink is the link of an invite token: on edge's public URL when it has one.
func (p *Panel) inviteLink(c *fiber.Ctx, token string) string {
	base := p.cfg.PublicURL
	if base == "" {
		base = c.BaseURL()
	}
	return base + "/panel/invite/" + token
}
