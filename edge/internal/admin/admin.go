// Package admin is the operator's API on edge: create accounts, read them, rotate their
// credentials and revoke them. It is guarded by a bearer token from the environment.
package admin

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
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
}

// API serves /admin/v1.
type API struct {
	accounts  *account.Service
	token     string
	failures  *throttle.Failures
	publicURL atomic.Pointer[string]
}

// New returns the admin API.
func New(accounts *account.Service, cfg Config) *API {
	a := &API{accounts: accounts, token: cfg.Token, failures: cfg.Failures}
	a.SetPublicURL(cfg.PublicURL)
	return a
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
	g.Post("/accounts/:id/revoke", a.status(account.Revoked))
	g.Post("/accounts/:id/reinstate", a.status(account.Active))
	g.Post("/accounts/:id/settings", a.settings)
}

func (a *API) auth(c *fiber.Ctx) error {
	if err := a.failures.Check(c); err != nil {
		return err
	}
	h := c.Get(fiber.HeaderAuthorization)
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if a.token == "" || !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(a.token)) != 1 {
		if a.token != "" && ok {
			a.failures.Failed(c)
		}
		return httpapi.Unauthorized("a valid admin bearer token is required")
	}
	if len(c.Body()) > 64<<10 {
		return httpapi.TooLarge(64 << 10)
	}
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

type accountView struct {
	AccountID         string            `json:"account_id"`
	Name              string            `json:"name"`
	Status            string            `json:"status"`
	Sandbox           bool              `json:"sandbox"`
	LegacyCredentials bool              `json:"legacy_credentials"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
	Identifiers       map[string]string `json:"identifiers"`
}

func view(acc account.Account) accountView {
	v := accountView{AccountID: acc.ID, Name: acc.Name, Status: string(acc.Status), Sandbox: acc.Sandbox,
		LegacyCredentials: !acc.LegacyOff, CreatedAt: acc.CreatedAt,
		UpdatedAt: acc.UpdatedAt, Identifiers: map[string]string{}}
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

func (a *API) list(c *fiber.Ctx) error {
	limit := c.QueryInt("limit", 50)
	if limit < 1 || limit > 500 {
		return httpapi.InvalidField("limit", "must be between 1 and 500")
	}
	accs, err := a.accounts.List(c.UserContext(), c.Query("after"), int64(limit))
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

func notFound(err error, id string) error {
	if errors.Is(err, account.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("account %q does not exist", id))
	}
	return err
}
