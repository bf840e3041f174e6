// Package admin is the operator's API on edge: create accounts, list and search them, read
// them, rotate their credentials, suspend and reinstate them, set their settings and plans,
// read their usage, export them, erase a guest of theirs or delete them, and read the audit
// log of those changes. It is guarded by a bearer token from the environment.
package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/backend"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// Config of the admin API.
type Config struct {
	// Token is the bearer token of every call; empty, the API refuses every call.
	Token string
	// PublicURL is edge's public base URL, given out as edge_url with new credentials.
	// Empty, the API refuses to issue credentials (see SetPublicURL).
	PublicURL string
	// Failures throttles wrong tokens by client address (nil: none).
	Failures *throttle.Failures
	// Services calls property-svc's and booking-svc's internal account routes (usage,
	// export, guest erasure).
	Services *backend.Client
	// Usage reads edge's own request counts.
	Usage usageReader
	// Users are the management panel's users (POST /panel-users); nil: not served.
	Users *panelauth.Service
	// Metrics counts wrong tokens and the calls refused before any (nil: none).
	Metrics *edgemetrics.Metrics
}

// API serves /admin/v1.
type API struct {
	accounts *account.Service
	token    string
	// fingerprint names the token's holder in the audit log (never the token itself).
	fingerprint string
	failures    *throttle.Failures
	publicURL   atomic.Pointer[string]
	services    *backend.Client
	usageStore  usageReader
	users       *panelauth.Service
	metrics     *edgemetrics.Metrics
}

// New returns the admin API.
func New(accounts *account.Service, cfg Config) *API {
	a := &API{accounts: accounts, token: cfg.Token, failures: cfg.Failures, fingerprint: Fingerprint(cfg.Token),
		services: cfg.Services, usageStore: cfg.Usage, users: cfg.Users, metrics: cfg.Metrics}
	a.SetPublicURL(cfg.PublicURL)
	return a
}

// Fingerprint is what the audit log records of an admin token: the first 8 hex digits of
// its SHA-256, enough to tell tokens apart, useless to recover one.
func Fingerprint(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])[:8]
}

// SetPublicURL sets edge_url. The development stack, which picks its port when it starts,
// sets it to the address edge listens on.
func (a *API) SetPublicURL(u string) { a.publicURL.Store(&u) }

// edgeURL is what credentials report as edge_url: the configured public URL, never the
// request's Host header, which any client chooses.
func (a *API) edgeURL() (string, error) {
	if u := *a.publicURL.Load(); u != "" {
		return u, nil
	}
	return "", httpapi.Unavailable("edge has no public URL configured: set VROS_EDGE_PUBLIC_URL (it is given out " +
		"as edge_url with the credentials); no credentials are issued without it")
}

// Register mounts the routes.
func (a *API) Register(app *fiber.App) {
	g := app.Group("/admin/v1", httpapi.Use(httpapi.EnvelopeA), a.auth)
	g.Post("/accounts", a.create)
	g.Get("/accounts", a.list)
	g.Get("/accounts/:id", a.get)
	g.Post("/accounts/:id/rotate", a.rotate)
	g.Post("/accounts/:id/suspend", a.status(account.Suspended))
	// /revoke is /suspend's former name, kept for the callers that use it.
	g.Post("/accounts/:id/revoke", a.status(account.Suspended))
	g.Post("/accounts/:id/reinstate", a.status(account.Active))
	g.Post("/accounts/:id/settings", a.settings)
	g.Get("/accounts/:id/plan", a.getPlan)
	g.Post("/accounts/:id/plan", a.setPlan)
	g.Get("/accounts/:id/usage", a.usage)
	g.Get("/accounts/:id/export", a.export)
	g.Post("/accounts/:id/guests/erase", a.eraseGuest)
	g.Get("/accounts/:id/integrations", a.getIntegrations)
	g.Put("/accounts/:id/integrations", a.putIntegrations)
	g.Get("/accounts/:id/channels", a.channels)
	g.Delete("/accounts/:id", a.deleteAccount)
	g.Get("/audit", a.audit)
	g.Post("/panel-users", a.panelUser)
}

func (a *API) auth(c *fiber.Ctx) error {
	if err := a.failures.Check(c); err != nil {
		a.metrics.Rejected(c.UserContext(), edgemetrics.AuthThrottle)
		return err
	}
	h := c.Get(fiber.HeaderAuthorization)
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if a.token == "" || !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(a.token)) != 1 {
		if a.token != "" && ok {
			a.failures.Failed(c)
			a.metrics.AuthFailed(c.UserContext(), edgemetrics.Admin)
		}
		return httpapi.Unauthorized("a valid admin bearer token is required")
	}
	if len(c.Body()) > 64<<10 {
		a.metrics.Rejected(c.UserContext(), edgemetrics.BodySize)
		return httpapi.TooLarge(64 << 10)
	}
	// Every change made by this call is recorded as this caller's, from the client address
	// edge sees (trusted proxies honored, as the failure throttle does). Copies: the
	// context outlives fasthttp's buffers.
	c.SetUserContext(account.WithActor(c.UserContext(), account.Actor{
		Fingerprint: a.fingerprint,
		Address:     strings.Clone(httpapi.ClientIP(c)),
		RequestID:   strings.Clone(httpapi.RequestID(c)),
	}))
	return c.Next()
}

// Credentials is the JSON an operator receives once, when an account is created or its
// credentials rotated. Rotated responses carry only the kinds rotated.
type Credentials struct {
	AccountID     string `json:"account_id"`
	Name          string `json:"name"`
	Sandbox       bool   `json:"sandbox"`
	EdgeURL       string `json:"edge_url"`
	BasicUser     string `json:"basic_user,omitempty"`
	BasicPassword string `json:"basic_password,omitempty"`
	ServiceKey    string `json:"servicekey,omitempty"`
	ServicePass   string `json:"servicepass,omitempty"`
	Key           string `json:"key,omitempty"`
	Pass          string `json:"pass,omitempty"`
	OwnerToken    string `json:"owner_token,omitempty"`
}

// accountView is the account as the admin API shows it: what its export holds, and its
// public credential identifiers.
type accountView struct {
	exportAccount
	Identifiers map[string]string `json:"identifiers"`
}

func view(acc account.Account) accountView {
	v := accountView{exportAccount: exportOf(acc), Identifiers: map[string]string{}}
	for k, id := range acc.Identifiers {
		v.Identifiers[string(k)] = id
	}
	return v
}

func credentials(edgeURL string, acc account.Account, secrets []account.Secret) Credentials {
	out := Credentials{AccountID: acc.ID, Name: acc.Name, Sandbox: acc.Sandbox, EdgeURL: edgeURL}
	for _, s := range secrets {
		switch s.Kind {
		case account.Basic:
			out.BasicUser, out.BasicPassword = s.Identifier, s.Secret
		case account.ServiceKey:
			out.ServiceKey, out.ServicePass = s.Identifier, s.Secret
		case account.Key:
			out.Key, out.Pass = s.Identifier, s.Secret
		case account.OwnerToken:
			out.OwnerToken = s.Secret
		}
	}
	return out
}

// create: POST /admin/v1/accounts {"name": "…", "sandbox": true} → 201 with the
// credentials. An account is live unless created as a sandbox.
func (a *API) create(c *fiber.Ctx) error {
	edgeURL, err := a.edgeURL()
	if err != nil {
		return err
	}
	var v fields.Violations
	name, sandbox := "", false
	if len(c.Body()) > 0 {
		obj := fields.Parse(c.Body(), "", &v)
		name, _ = obj.String("name", fields.Str{Max: 100})
		sandbox, _ = obj.Bool("sandbox", false)
		if err := v.Err(); err != nil {
			return err
		}
	}
	acc, secrets, err := a.accounts.Create(c.UserContext(), name, sandbox)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"code": fiber.StatusCreated, "data": credentials(edgeURL, acc, secrets)})
}

// list: GET /admin/v1/accounts?q=&status=&after=&limit= → the accounts in id order; q is an
// exact account id or part of the name (any case), status active or suspended.
func (a *API) list(c *fiber.Ctx) error {
	limit, err := queryLimit(c, 50)
	if err != nil {
		return err
	}
	q := account.ListQuery{Q: strings.Clone(c.Query("q")), After: strings.Clone(c.Query("after")), Limit: limit}
	if len(q.Q) > 100 {
		return httpapi.InvalidField("q", "must be at most 100 characters")
	}
	switch st := account.Status(c.Query("status")); st {
	case "":
	case account.Active, account.Suspended, account.Deleting:
		q.Status = st
	case "revoked":
		q.Status = account.Suspended
	default:
		return httpapi.InvalidField("status", "must be active, suspended or deleting")
	}
	accs, err := a.accounts.List(c.UserContext(), q)
	if err != nil {
		return err
	}
	out := make([]accountView, len(accs))
	for i, acc := range accs {
		out[i] = view(acc)
	}
	return httpapi.A(c, fiber.Map{"accounts": out})
}

func (a *API) get(c *fiber.Ctx) error {
	acc, err := a.accounts.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return notFound(err, c.Params("id"))
	}
	return httpapi.A(c, view(acc))
}

// rotate: POST /admin/v1/accounts/{id}/rotate {"credentials": ["basic", …]} (all when absent).
func (a *API) rotate(c *fiber.Ctx) error {
	edgeURL, err := a.edgeURL()
	if err != nil {
		return err
	}
	var req struct {
		Credentials []string `json:"credentials"`
	}
	if len(c.Body()) > 0 {
		if err := json.Unmarshal(c.Body(), &req); err != nil {
			return httpapi.InvalidField("credentials", "must be a list of basic, service, key, owner_token")
		}
	}
	var kinds []account.Kind
	for i, k := range req.Credentials {
		kind := account.Kind(k)
		if !slices.Contains(account.Kinds, kind) {
			return httpapi.InvalidField(fmt.Sprintf("credentials[%d]", i), "must be one of basic, service, key, owner_token")
		}
		kinds = append(kinds, kind)
	}
	acc, secrets, err := a.accounts.Rotate(c.UserContext(), c.Params("id"), kinds)
	if err != nil {
		return notFound(err, c.Params("id"))
	}
	return httpapi.A(c, credentials(edgeURL, acc, secrets))
}

func (a *API) status(st account.Status) fiber.Handler {
	return func(c *fiber.Ctx) error {
		acc, err := a.accounts.SetStatus(c.UserContext(), c.Params("id"), st)
		if err != nil {
			return notFound(err, c.Params("id"))
		}
		return httpapi.A(c, view(acc))
	}
}

// settings: POST /admin/v1/accounts/{id}/settings {"legacy_credentials": false} → the
// account. legacy_credentials (on by default) lets interface A take the account's
// interface B key/pass as its service pair (docs/accounts.md); the change takes effect
// through this replica at once, through the others within their credential cache TTL.
func (a *API) settings(c *fiber.Ctx) error {
	var v fields.Violations
	obj := fields.Parse(c.Body(), "", &v)
	legacy, _ := obj.Bool("legacy_credentials", true)
	for _, k := range obj.Keys() {
		if k != "legacy_credentials" {
			v.Add(k, "is not an account setting (settings: legacy_credentials)")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	acc, err := a.accounts.SetLegacy(c.UserContext(), c.Params("id"), legacy)
	if err != nil {
		return notFound(err, c.Params("id"))
	}
	return httpapi.A(c, view(acc))
}

// queryLimit reads the limit query parameter: a whole number 1–500, def when absent.
func queryLimit(c *fiber.Ctx, def int) (int64, error) {
	raw := c.Query("limit")
	if raw == "" {
		return int64(def), nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > 500 {
		return 0, httpapi.InvalidField("limit", "must be a whole number between 1 and 500")
	}
	return int64(n), nil
}

// planView is a plan as the admin API shows and takes it.
type planView struct {
	RateRPS       float64 `json:"rate_rps"`
	RateBurst     int     `json:"rate_burst"`
	MaxConcurrent int     `json:"max_concurrent"`
	BodyLimit     int     `json:"body_limit"`
	MaxProperties int     `json:"max_properties"`
}

// Bounds of a plan's fields (docs/accounts.md, "Plans").
const (
	maxRateRPS       = 100000
	maxRateBurst     = 1000000
	maxConcurrent    = 10000
	minBodyLimit     = 1 << 10
	maxBodyLimit     = 25 << 20
	maxMaxProperties = 1000000
)

func (a *API) getPlan(c *fiber.Ctx) error {
	acc, err := a.accounts.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return notFound(err, c.Params("id"))
	}
	return httpapi.A(c, planView(acc.Plan))
}

// setPlan: POST /admin/v1/accounts/{id}/plan {"rate_rps": 50, …} → the plan. Every field is
// optional and keeps its value when absent (each field sent is written on its own, so
// concurrent changes of different fields all hold); 0 is edge's default (no limit for
// max_properties). A bad value is refused naming the field, and nothing changes.
func (a *API) setPlan(c *fiber.Ctx) error {
	id := c.Params("id")
	p, only, err := parsePlan(c.Body())
	if err != nil {
		return err
	}
	acc, err := a.accounts.UpdatePlan(c.UserContext(), id, p, only)
	if err != nil {
		return notFound(err, id)
	}
	return httpapi.A(c, planView(acc.Plan))
}

// planFieldNames are the plan's fields as the admin API names them (account.PlanFields).
var planFieldNames = func() []string {
	var out []string
	for _, f := range account.PlanFields(account.Plan{}) {
		out = append(out, f.Field)
	}
	return out
}()

// parsePlan reads a plan change: the values sent, and the names of the fields sent (never
// nil: an empty change changes nothing).
func parsePlan(body []byte) (p account.Plan, only []string, err error) {
	only = []string{}
	var v fields.Violations
	obj := fields.Parse(body, "", &v)
	if obj != nil && obj.Has("rate_rps") {
		if d, ok := obj.Decimal("rate_rps", fields.Dec{Max: decimal.NewFromInt(maxRateRPS)}); ok {
			p.RateRPS = d.InexactFloat64()
			only = append(only, "rate_rps")
		}
	}
	ints := []struct {
		name string
		r    fields.Int
		dst  *int
	}{
		{"rate_burst", fields.Int{Max: maxRateBurst}, &p.RateBurst},
		{"max_concurrent", fields.Int{Max: maxConcurrent}, &p.MaxConcurrent},
		{"body_limit", fields.Int{Max: maxBodyLimit}, &p.BodyLimit},
		{"max_properties", fields.Int{Max: maxMaxProperties}, &p.MaxProperties},
	}
	for _, f := range ints {
		if obj == nil || !obj.Has(f.name) {
			continue
		}
		n, ok := obj.Int(f.name, f.r)
		if !ok {
			continue
		}
		if f.name == "body_limit" && n != 0 && n < minBodyLimit {
			v.Add("body_limit", fmt.Sprintf("must be 0 (edge's default) or between %d and %d bytes", minBodyLimit, maxBodyLimit))
			continue
		}
		*f.dst = n
		only = append(only, f.name)
	}
	if obj != nil {
		for _, k := range obj.Keys() {
			if !slices.Contains(planFieldNames, k) {
				v.Add(k, "is not a plan field ("+strings.Join(planFieldNames, ", ")+")")
			}
		}
	}
	if err := v.Err(); err != nil {
		return account.Plan{}, nil, err
	}
	return p, only, nil
}

// auditView is one audit record as the admin API shows it.
type auditView struct {
	ID          string         `json:"id"`
	At          time.Time      `json:"at"`
	AccountID   string         `json:"account_id"`
	Action      string         `json:"action"`
	Changes     []changeView   `json:"changes,omitempty"`
	Credentials []account.Kind `json:"credentials,omitempty"`
	Actor       string         `json:"actor"`
	Address     string         `json:"address"`
	RequestID   string         `json:"request_id"`
}

type changeView struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

// audit: GET /admin/v1/audit?account=&after=&limit= → records newest first, and next (the
// cursor of the following page, empty on the last).
func (a *API) audit(c *fiber.Ctx) error {
	limit, err := queryLimit(c, 100)
	if err != nil {
		return err
	}
	q := account.AuditQuery{AccountID: strings.Clone(c.Query("account")), After: strings.Clone(c.Query("after")), Limit: limit}
	recs, err := a.accounts.Audit(c.UserContext(), q)
	if err != nil {
		return err
	}
	out := auditViews(recs)
	next := ""
	if int64(len(recs)) == limit {
		next = recs[len(recs)-1].ID
	}
	return httpapi.A(c, fiber.Map{"records": out, "next": next})
}

func notFound(err error, id string) error {
	switch {
	case errors.Is(err, account.ErrNotFound):
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("account %q does not exist", id))
	case errors.Is(err, account.ErrDeleting):
		return httpapi.Conflict(httpapi.StatusConflict, fmt.Sprintf("account %q is being deleted: nothing else changes it; DELETE it again to finish", id))
	}
	return err
}
