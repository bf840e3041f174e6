// Package gateway is edge's public surface: it authenticates the three credential kinds,
// applies the account's rate and body limits, and forwards each request to the service
// that owns it with signed tenant headers.
package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/phpform"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// Config tells the gateway where the services are. An empty URL means the service is not
// deployed: its routes answer 503 with a clear message.
type Config struct {
	ServiceURLs map[Upstream]string
	// RateLimitRPS and RateLimitBurst are each account's token bucket in this replica
	// (RPS ≤ 0: none).
	RateLimitRPS   float64
	RateLimitBurst int
	// Failures throttles failed authentications by client address (nil: none).
	Failures *throttle.Failures
	// Tracer starts the client span of each forwarded request (nil: none).
	Tracer trace.Tracer
}

// Gateway serves the public routes.
type Gateway struct {
	accounts  *account.Service
	upstreams map[Upstream]*upstream
	limits    *throttle.Buckets
	failures  *throttle.Failures
}

// New builds the gateway.
func New(cfg Config, accounts *account.Service, signer *tenancy.Signer, prop propagation.TextMapPropagator) (*Gateway, error) {
	g := &Gateway{accounts: accounts, upstreams: map[Upstream]*upstream{}, failures: cfg.Failures,
		limits: throttle.New(cfg.RateLimitRPS, cfg.RateLimitBurst, throttle.DefaultKeys)}
	for name, raw := range cfg.ServiceURLs {
		if raw == "" {
			continue
		}
		u, err := newUpstream(name, raw, signer, prop, cfg.Tracer)
		if err != nil {
			return nil, err
		}
		g.upstreams[name] = u
	}
	return g, nil
}

// EnvelopeFor is the envelope of a request edge answers before routing it (a 414, a 431):
// interface B's under /vros/, interface A's elsewhere.
func EnvelopeFor(path string) httpapi.Envelope {
	if strings.HasPrefix(path, "/vros/") {
		return httpapi.EnvelopeB
	}
	return httpapi.EnvelopeA
}

// Register mounts the public routes on app.
func (g *Gateway) Register(app *fiber.App) {
	a := app.Group("/api", httpapi.Use(httpapi.EnvelopeA))
	a.Post("/:resource", g.interfaceA)

	b := app.Group("/vros", httpapi.Use(httpapi.EnvelopeB))
	b.Post("/external-booking", g.interfaceB)
	b.Post("/external-booking/", g.interfaceB)
	b.Get("/api/:name/owner_token/:token", g.read)
	b.Get("/api/:name/owner_token/:token/property/:id", g.read)

	app.Get("/media/:key/:file", g.media)
}

func (g *Gateway) upstream(name Upstream, what string) (*upstream, error) {
	u := g.upstreams[name]
	if u == nil {
		return nil, httpapi.Unavailable(fmt.Sprintf("%s is not available: %s is not deployed", what, name))
	}
	return u, nil
}

// interfaceA: POST /api/{resource} with HTTP Basic plus servicekey/servicepass (headers, or
// body fields as a fallback).
func (g *Gateway) interfaceA(c *fiber.Ctx) error {
	name := c.Params("resource")
	r, ok := resources[name]
	if !ok {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("unknown resource %q", name))
	}
	body := withoutBOM(c.Body())
	if len(body) > r.bodyLimit {
		return httpapi.TooLarge(r.bodyLimit)
	}
	acc, err := g.authenticateA(c, body)
	if err != nil {
		return err
	}
	if !g.limits.Allow(acc.AccountID) {
		return httpapi.RateLimited()
	}
	u, err := g.upstream(r.service, "resource "+name)
	if err != nil {
		return err
	}
	return u.forward(c, fiber.MethodPost, "/internal/a/"+name, body, acc)
}

func (g *Gateway) authenticateA(c *fiber.Ctx, body []byte) (tenancy.Tenant, error) {
	if err := g.failures.Check(c); err != nil {
		return tenancy.Tenant{}, err
	}
	user, password, ok := basicAuth(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return tenancy.Tenant{}, httpapi.Unauthorized("HTTP Basic credentials are required")
	}
	key, pass := c.Get("servicekey"), c.Get("servicepass")
	if key == "" && pass == "" {
		var f struct {
			ServiceKey  string `json:"servicekey"`
			ServicePass string `json:"servicepass"`
		}
		_ = json.Unmarshal(body, &f) // a body that is not JSON fails later, with its own message
		key, pass = f.ServiceKey, f.ServicePass
	}
	if key == "" || pass == "" {
		return tenancy.Tenant{}, httpapi.Unauthorized("servicekey and servicepass are required")
	}
	a1, err := g.check(c, account.Basic, user, password)
	if err != nil {
		return tenancy.Tenant{}, err
	}
	a2, err := g.check(c, account.ServiceKey, key, pass)
	if err != nil {
		return tenancy.Tenant{}, err
	}
	if a1 != a2 {
		g.failures.Failed(c)
		return tenancy.Tenant{}, httpapi.Unauthorized("invalid credentials")
	}
	return a1, nil
}

// check authenticates one credential. Callers run g.failures.Check first: a client
// address whose failures are spent is refused before any lookup.
func (g *Gateway) check(c *fiber.Ctx, kind account.Kind, id, secret string) (tenancy.Tenant, error) {
	acc, err := g.accounts.Authenticate(c.UserContext(), kind, id, secret)
	switch {
	case errors.Is(err, account.ErrUnauthorized):
		g.failures.Failed(c)
		return tenancy.Tenant{}, httpapi.Unauthorized("invalid credentials")
	case errors.Is(err, account.ErrRevoked):
		return tenancy.Tenant{}, httpapi.Unauthorized("account is revoked")
	}
	return acc, err
}

func basicAuth(h string) (user, password string, ok bool) {
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return "", "", false
	}
	user, password, ok = strings.Cut(string(raw), ":")
	return user, password, ok && user != "" && password != ""
}

// withoutBOM drops a leading UTF-8 byte-order mark, which some Windows tools write before
// JSON: the documents say it is ignored, and the services then read plain JSON.
func withoutBOM(body []byte) []byte { return bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) }

// bEnvelope is what edge needs of an interface B body.
type bEnvelope struct {
	Key    string `json:"key"`
	Pass   string `json:"pass"`
	Action string `json:"action"`
}

// interfaceB: POST /vros/external-booking, the action in the body, key/pass in the body;
// JSON or PHP-style form encoding. The services receive JSON only.
func (g *Gateway) interfaceB(c *fiber.Ctx) error {
	body := withoutBOM(c.Body())
	if len(body) > bodyLimitB {
		return httpapi.TooLarge(bodyLimitB)
	}
	if len(body) == 0 {
		return httpapi.BadRequest("request body is empty; send a JSON object with key, pass and action")
	}
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationForm) {
		form, err := phpform.Parse(string(body))
		if err != nil {
			return httpapi.BadRequest(err.Error())
		}
		if body, err = json.Marshal(form); err != nil {
			return err
		}
	}
	var env bEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return httpapi.InvalidField(te.Field, "must be a string")
		}
		return httpapi.BadRequest("request body is not a JSON object")
	}
	if env.Key == "" || env.Pass == "" {
		return httpapi.Unauthorized("key and pass are required")
	}
	if err := g.failures.Check(c); err != nil {
		return err
	}
	acc, err := g.check(c, account.Key, env.Key, env.Pass)
	if err != nil {
		return err
	}
	if !g.limits.Allow(acc.AccountID) {
		return httpapi.RateLimited()
	}
	if env.Action == "" {
		return httpapi.InvalidField("action", "is required")
	}
	act, ok := actions[env.Action]
	if !ok {
		return &httpapi.Error{HTTP: fiber.StatusBadRequest, Type: "unknown_action", Status: httpapi.StatusUnknownAction,
			Message: fmt.Sprintf("unknown action %q", env.Action)}
	}
	u, err := g.upstream(act.service, "action "+env.Action)
	if err != nil {
		return err
	}
	return u.forward(c, fiber.MethodPost, "/internal/b/"+act.canonical, body, acc)
}

// read: GET /vros/api/{name}/owner_token/{token}[/property/{id}] (or ?property_id=).
func (g *Gateway) read(c *fiber.Ctx) error {
	name := c.Params("name")
	svc, ok := reads[name]
	if !ok {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("unknown endpoint %q", name))
	}
	if err := g.failures.Check(c); err != nil {
		return err
	}
	acc, err := g.check(c, account.OwnerToken, "", c.Params("token"))
	if err != nil {
		return err
	}
	if !g.limits.Allow(acc.AccountID) {
		return httpapi.RateLimited()
	}
	u, err := g.upstream(svc, "endpoint "+name)
	if err != nil {
		return err
	}
	path := "/internal/read/" + name
	id := c.Params("id")
	if id == "" {
		id = c.Query("property_id")
	}
	if id != "" {
		path += "?property_id=" + url.QueryEscape(id)
	}
	return u.forward(c, fiber.MethodGet, path, nil, acc)
}

// media: GET /media/{key}/{file}, public (websites embed photos); keys are unguessable.
func (g *Gateway) media(c *fiber.Ctx) error {
	u, err := g.upstream(PropertySvc, "media")
	if err != nil {
		return err
	}
	return u.forward(c, fiber.MethodGet, "/media/"+c.Params("key")+"/"+c.Params("file"), nil, tenancy.Tenant{})
}
