// Package panel is the management panel: server-rendered pages under /panel where owners
// run their account and operators run the SaaS. It signs users in (panelauth) and does
// every read and write through the gateway's Call, the path an API request takes past
// authentication, so that the panel holds every rule and guarantee the API holds
// (docs/panel.md). Pages work without JavaScript; htmx (vendored, embedded) only makes
// navigation and forms smoother.
package panel

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
)

//go:embed templates
var templateFS embed.FS

// static holds the stylesheet and htmx (vendored by `make panel-assets`, docs/panel.md).
//
//go:embed static
var static embed.FS

// Caller is the gateway as the panel uses it.
type Caller interface {
	Call(ctx context.Context, caller account.Caller, iface gateway.Interface, name string, body []byte, requestID string) (gateway.Answer, error)
}

// Config is what the panel needs.
type Config struct {
	Users    *panelauth.Service
	Accounts *account.Service
	Gateway  Caller
	// Failures is edge's throttle of failed authentications by client address: failed
	// sign-ins count there too.
	Failures *throttle.Failures
	// SignIns slows down sign-ins per email (nil: throttle.NewSignIns; tests set their own
	// clock on theirs).
	SignIns *throttle.SignIns
	// UsageReport is an account's usage report within a period, as the admin API gives it
	// (the operator's account page; nil: not shown).
	UsageReport func(ctx context.Context, id string, from, to time.Time) (any, error)
	// PublicURL is edge's public base URL; when it is https the cookies are Secure.
	PublicURL string
	Log       *slog.Logger
	// Statements reads booking-svc's public statement link (GET path, unsigned: the token is
	// the capability; nil: every link is not found). docs/money.md, "The owner's link".
	Statements func(ctx context.Context, path, requestID string) (gateway.Answer, error)
}

// Panel serves /panel.
type Panel struct {
	cfg    Config
	pages  map[string]*template.Template
	secure bool
	// signIns slows down password guessing per email.
	signIns *throttle.SignIns
}

// New parses the templates.
func New(cfg Config) (*Panel, error) {
	p := &Panel{cfg: cfg, pages: map[string]*template.Template{}, signIns: cfg.SignIns, secure: strings.HasPrefix(cfg.PublicURL, "https://")}
	if p.signIns == nil {
		p.signIns = throttle.NewSignIns()
	}
	if p.cfg.Log == nil {
		p.cfg.Log = slog.Default()
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("panel template %s: %w", n, err)
		}
		p.pages[base] = t
	}
	return p, nil
}

// Register mounts the panel's routes.
func (p *Panel) Register(app *fiber.App) {
	g := app.Group("/panel", p.headers)
	g.Get("/static/:file", p.static)
	g.Get("/", p.home)
	// The forms that anyone may post, and the small ones of the users' pages, are refused
	// beyond MaxFormBody before they are parsed; the others keep edge's limit (the photo
	// upload needs it).
	small := bodyLimit(MaxFormBody)
	g.Get("/login", p.loginPage)
	g.Post("/login", small, p.login)
	g.Get("/invite/:token", p.invitePage)
	g.Post("/invite/:token", small, p.acceptInvite)

	// Each route names its guards: a Group("") with middleware would guard every /panel
	// route registered after it, the operator's pages among the owner's.
	signed := func(h fiber.Handler) []fiber.Handler { return []fiber.Handler{p.signedIn, p.csrf, h} }
	owner := func(h fiber.Handler) []fiber.Handler { return []fiber.Handler{p.signedIn, p.csrf, p.ownerOnly, h} }
	operator := func(h fiber.Handler) []fiber.Handler { return []fiber.Handler{p.signedIn, p.csrf, p.operatorOnly, h} }
	// smallForm puts the limit before the guards' first read of the form (csrf's).
	smallForm := func(hs []fiber.Handler) []fiber.Handler { return append([]fiber.Handler{hs[0], small}, hs[1:]...) }

	g.Post("/logout", smallForm(signed(p.logout))...)
	g.Post("/logout-everywhere", smallForm(signed(p.logoutEverywhere))...)
	g.Get("/dashboard", owner(p.dashboard)...)
	g.Get("/properties", owner(p.properties)...)
	g.Get("/properties/new", owner(p.newProperty)...)
	g.Post("/properties/new", owner(p.createProperty)...)
	g.Get("/properties/:code", owner(p.editProperty)...)
	g.Post("/properties/:code", owner(p.updateProperty)...)
	g.Post("/properties/:code/delete", owner(p.deleteProperty)...)
	g.Get("/properties/:code/rates", owner(p.ratesPage)...)
	g.Post("/properties/:code/rates", owner(p.saveRates)...)
	g.Get("/properties/:code/policy", owner(p.policyPage)...)
	g.Post("/properties/:code/policy", owner(p.savePolicy)...)
	g.Get("/properties/:code/methods", owner(p.methodsPage)...)
	g.Post("/properties/:code/methods", owner(p.saveMethods)...)
	g.Get("/properties/:code/photos", owner(p.photosPage)...)
	g.Post("/properties/:code/photos", owner(p.addPhoto)...)
	g.Post("/properties/:code/photos/order", owner(p.orderPhotos)...)
	g.Post("/properties/:code/photos/:id/delete", owner(p.deletePhoto)...)
	g.Get("/properties/:code/calendar", owner(p.calendar)...)
	g.Post("/properties/:code/calendar/block", owner(p.block)...)
	g.Post("/properties/:code/calendar/unblock", owner(p.unblock)...)
	g.Post("/properties/:code/calendar/prices", owner(p.setPrices)...)
	g.Get("/properties/:code/rateplans", owner(p.ratePlansPage)...)
	g.Post("/properties/:code/rateplans", owner(p.savePlan)...)
	g.Post("/properties/:code/markups", owner(p.saveMarkup)...)
	g.Get("/multicalendar", owner(p.multiCalendar)...)
	g.Post("/multicalendar", owner(p.bulkEdit)...)
	g.Get("/bookings", owner(p.bookings)...)
	g.Get("/bookings/:id", owner(p.booking)...)
	g.Post("/bookings/:id/cancel", owner(p.cancelBooking)...)
	g.Post("/bookings/:id/payments", owner(p.addPayment)...)
	g.Post("/bookings/:id/payments/remove", owner(p.removePayment)...)
	g.Post("/bookings/:id/arrival", owner(p.arrivalForm)...)
	g.Post("/bookings/:id/refund/retry", owner(p.retryRefund)...)
	g.Post("/bookings/:id/deposit/capture", owner(p.captureDeposit)...)
	g.Post("/bookings/:id/deposit/release", owner(p.releaseDeposit)...)
	g.Get("/owners", owner(p.ownersPage)...)
	g.Post("/owners", owner(p.ownerAction)...)
	g.Get("/owners/:id", owner(p.ownerPage)...)
	g.Post("/owners/:id", owner(p.payoutAction)...)
	g.Get("/properties/:code/owner", owner(p.agreementsPage)...)
	g.Post("/properties/:code/owner", owner(p.agreementAction)...)
	g.Get("/properties/:code/expenses", owner(p.expensesPage)...)
	g.Post("/properties/:code/expenses", owner(p.expenseAction)...)
	g.Get("/properties/:code/expenses/:id/receipt", owner(p.expenseReceipt)...)
	g.Get("/statements", owner(p.statementsPage)...)
	g.Post("/statements", owner(p.generateStatement)...)
	g.Get("/statements/:id", owner(p.statementPage)...)
	g.Get("/statements/:id/statement.:format", owner(p.statementFile)...)
	g.Post("/statements/:id/link", owner(p.statementLink)...)
	g.Get("/credentials", owner(p.credentials)...)
	g.Post("/credentials", owner(p.changeCredential)...)
	g.Get("/users", owner(p.users)...)
	g.Post("/users/invite", smallForm(owner(p.invite))...)
	g.Post("/users/remove", smallForm(owner(p.removeUser))...)
	g.Get("/brands", owner(p.brands)...)
	g.Post("/brands", owner(p.saveBrand)...)
	g.Get("/webhooks", owner(p.webhooks)...)
	g.Post("/webhooks", owner(p.webhookAction)...)
	g.Get("/ical", owner(p.icalFeeds)...)
	g.Post("/ical", owner(p.icalAction)...)
	g.Get("/channels", owner(p.channelsPage)...)
	g.Post("/channels", owner(p.channelAction)...)
	g.Get("/channels/log", owner(p.channelLog)...)
	g.Get("/channels/log/:id", owner(p.channelLogEntry)...)
	g.Get("/channels/conflicts", owner(p.channelConflicts)...)
	g.Post("/channels/conflicts", owner(p.resolveConflict)...)
	g.Get("/channels/:id", owner(p.mappingPage)...)
	g.Post("/channels/:id", owner(p.mappingAction)...)
	g.Get("/messages", owner(p.messagesPage)...)
	g.Get("/messages/templates/new", owner(p.newTemplate)...)
	g.Post("/messages/templates/new", owner(p.saveTemplate)...)
	g.Get("/messages/templates/:id", owner(p.editTemplate)...)
	g.Post("/messages/templates/:id", owner(p.saveTemplate)...)
	g.Post("/messages/templates/:id/delete", owner(p.deleteTemplate)...)
	g.Get("/messages/preview", owner(p.previewPage)...)
	g.Get("/messages/triggers", owner(p.triggersPage)...)
	g.Post("/messages/triggers", owner(p.saveTriggers)...)
	g.Get("/messages/log", owner(p.messageLog)...)
	g.Get("/messages/message", owner(p.messageEntry)...)
	g.Get("/messages/settings", owner(p.settingsPage)...)
	g.Post("/messages/settings", owner(p.saveSettings)...)
	g.Post("/messages/settings/test", owner(p.testSettings)...)
	g.Get("/messages/suppressions", owner(p.suppressionsPage)...)
	g.Post("/messages/suppressions", owner(p.removeSuppression)...)
	g.Get("/operator/accounts", operator(p.accounts)...)
	g.Post("/operator/accounts", operator(p.createAccount)...)
	g.Get("/operator/accounts/:id", operator(p.accountPage)...)
	g.Post("/operator/accounts/:id", operator(p.accountAction)...)
	g.Get("/operator/audit", operator(p.audit)...)
	g.Get("/operator/users", operator(p.users)...)
	g.Post("/operator/users/invite", smallForm(operator(p.invite))...)
	g.Post("/operator/users/remove", smallForm(operator(p.removeUser))...)

	// The owner's statement link (docs/money.md, "The owner's link"): public, the token in
	// the path is the capability; the panel's headers, no sign-in.
	pub := app.Group("/statements", p.headers)
	pub.Get("/:token", p.publicStatement)
	pub.Get("/:token/statement.:format", p.publicStatementFile)
}

// MaxFormBody bounds the body of the sign-in, invitation, users and sign-out forms: a few
// short fields, far below it.
const MaxFormBody = 16 << 10

// bodyLimit refuses (413) a form whose body is over limit bytes before anything parses it:
// fasthttp has read the body by then (within edge's limit), but parsing it into fields
// (c.FormValue) would take many times its size for a body of many small fields. The raw
// body is measured: fasthttp parses form fields from it, never from a decoded one.
func bodyLimit(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if n := c.Request().Header.ContentLength(); n > limit || len(c.Request().Body()) > limit {
			return &httpapi.Error{HTTP: fiber.StatusRequestEntityTooLarge,
				Message: fmt.Sprintf("This form is too large: its body may be at most %d KiB. Nothing was changed; reload the page and send the form again.", limit>>10)}
		}
		return c.Next()
	}
}

// pageCSP: this origin's scripts and styles only, nothing inline, forms post here only, no
// framing.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// headers sets what every panel answer carries.
func (p *Panel) headers(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", pageCSP)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("X-Frame-Options", "DENY")
	if !strings.HasPrefix(c.Path(), "/panel/static/") {
		c.Set(fiber.HeaderCacheControl, "no-store")
	}
	err := c.Next()
	if err != nil {
		return p.failed(c, err)
	}
	return nil
}

// failed answers a handler's error as a page: the panel never answers JSON.
func (p *Panel) failed(c *fiber.Ctx, err error) error {
	status, msg := fiber.StatusInternalServerError, "Something went wrong on our side; try again."
	var he *httpapi.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &he):
		status, msg = he.HTTP, he.Message
	case errors.As(err, &fe):
		status, msg = fe.Code, fe.Message
	case errors.Is(err, errNotYours):
		status, msg = fiber.StatusNotFound, "Not found."
	default:
		p.cfg.Log.Error("panel page failed", "path", c.Route().Path, "err", err, "request_id", httpapi.RequestID(c))
	}
	if status >= 500 && he != nil && he.HTTP < 500 {
		msg = "Something went wrong on our side; try again."
	}
	sess, _ := c.Locals(sessionKey).(panelauth.Session)
	c.Status(status)
	v := view{Title: "Error", Session: sess, Message: msg, Status: status}
	if !strings.HasPrefix(c.Path(), "/panel/") {
		// A public page's (an owner's statement link): its reader has no panel to go back to.
		v.Nav = "public"
	}
	return p.render(c, "error", v)
}

// errNotYours is a page of something the account does not have (or another account's).
var errNotYours = errors.New("not found")

// view is what a page template reads.
type view struct {
	Title   string
	Session panelauth.Session
	// Nav marks the current section.
	Nav string
	// Notice is a success message; Message an error message above the form.
	Notice  string
	Message string
	Status  int
	// Values are a form's values by field name (bracket notation); Errors its violations.
	Values map[string]string
	Errors map[string]string
	Data   any
}

func (p *Panel) render(c *fiber.Ctx, page string, v view) error {
	t, ok := p.pages[page]
	if !ok {
		return fmt.Errorf("panel: no page %q", page)
	}
	if v.Values == nil {
		v.Values = map[string]string{}
	}
	c.Type("html", "utf-8")
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout.html", v); err != nil {
		return fmt.Errorf("panel: render %s: %w", page, err)
	}
	return c.SendString(b.String())
}

// notices are the messages a redirect after a change asks for (?ok=…).
var notices = map[string]string{
	"saved": "Saved.", "created": "Created.", "deleted": "Deleted.", "blocked": "The days are blocked.",
	"unblocked": "The days are free again.", "prices": "Prices saved.", "cancelled": "The booking is cancelled.",
	"payment": "Payment recorded.", "arrival": "Arrival form saved.", "removed": "Removed.", "signedout": "Signed out.",
	"everywhere": "Signed out on every browser.", "suspended": "Account suspended.", "reinstated": "Account reinstated.",
	"plan": "Plan saved.", "uploaded": "Photo added.", "enabled": "Enabled.", "disabled": "Disabled.",
	"resolved": "The conflict is marked resolved.", "sync": "A full sync of the property is under way.",
	"syncall": "A full sync of every enabled mapping is under way.",
	"retried": "The refund is being tried again.", "released": "The deposit hold is released.",
	"captured": "The deposit is captured.", "payout": "Payout recorded.",
	"unsuppressed": "The address is off the list: mail to it is sent again.",
}

func notice(c *fiber.Ctx) string { return notices[c.Query("ok")] }

// redirect answers a successful form post: the page to show next, with its notice (303, so
// that reloading it does not post again).
func redirect(c *fiber.Ctx, to, ok string) error {
	if ok != "" {
		sep := "?"
		if strings.Contains(to, "?") {
			sep = "&"
		}
		to += sep + "ok=" + url.QueryEscape(ok)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

func (p *Panel) static(c *fiber.Ctx) error {
	name := c.Params("file")
	b, err := static.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		return fiber.ErrNotFound
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		c.Type("js", "utf-8")
	case strings.HasSuffix(name, ".css"):
		c.Type("css", "utf-8")
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(b)
}

func (p *Panel) home(c *fiber.Ctx) error {
	sess, err := p.session(c)
	if err != nil {
		return c.Redirect("/panel/login", fiber.StatusSeeOther)
	}
	if sess.Role == panelauth.Operator {
		return c.Redirect("/panel/operator/accounts", fiber.StatusSeeOther)
	}
	return c.Redirect("/panel/dashboard", fiber.StatusSeeOther)
}

// seg is s escaped as one path segment.
func seg(s string) string { return url.PathEscape(s) }
