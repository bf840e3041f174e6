// Package gateway is edge's public surface: it authenticates the three credential kinds,
// applies the account's rate and body limits, and forwards each request to the service
// that owns it with signed tenant headers.
package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/edge/internal/usage"
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
	// AccountConcurrency is how many requests of one account may be in flight in this
	// replica at once (≤ 0: no limit); one over it waits up to ConcurrencyWait for a slot
	// (0: DefaultConcurrencyWait), then is refused 429.
	AccountConcurrency int
	ConcurrencyWait    time.Duration
	// Failures throttles failed authentications by client address (nil: none).
	Failures *throttle.Failures
	// Tracer starts the client span of each forwarded request (nil: none).
	Tracer trace.Tracer
	// PublicURL is edge's public base URL (VROS_EDGE_PUBLIC_URL, no trailing slash), sent to
	// catalog-svc with every read for its links (empty: the request's own base URL), and to
	// every service with every forwarded request as X-Vros-Public-URL (empty: the address
	// edge listens on, SetListenURL).
	PublicURL string
	// Usage counts the authenticated requests (nil: none are counted).
	Usage *usage.Counter
	// Metrics counts failed authentications and the requests edge refuses itself (nil:
	// none are counted).
	Metrics *edgemetrics.Metrics
}

// Gateway serves the public routes.
type Gateway struct {
	accounts  *account.Service
	upstreams map[Upstream]*upstream
	limits    *throttle.Buckets
	inFlight  *throttle.Concurrency
	failures  *throttle.Failures
	publicURL string
	// listenURL is http://<listen address>, X-Vros-Public-URL when publicURL is empty.
	listenURL atomic.Pointer[string]
	usage     *usage.Counter
	metrics   *edgemetrics.Metrics
}

// New builds the gateway.
func New(cfg Config, accounts *account.Service, signer *tenancy.Signer, prop propagation.TextMapPropagator) (*Gateway, error) {
	g := &Gateway{accounts: accounts, upstreams: map[Upstream]*upstream{}, failures: cfg.Failures, publicURL: strings.TrimRight(cfg.PublicURL, "/"), usage: cfg.Usage,
		metrics:  cfg.Metrics,
		limits:   throttle.New(cfg.RateLimitRPS, cfg.RateLimitBurst, throttle.DefaultKeys),
		inFlight: throttle.NewConcurrency(cfg.AccountConcurrency, cmp.Or(cfg.ConcurrencyWait, DefaultConcurrencyWait))}
	for name, raw := range cfg.ServiceURLs {
		if raw == "" {
			continue
		}
		u, err := newUpstream(name, raw, signer, prop, cfg.Tracer)
		if err != nil {
			return nil, err
		}
		u.public = g.publicHeader
		g.upstreams[name] = u
	}
	return g, nil
}

// HeaderPublicURL carries, to every service, edge's public base URL (no trailing slash): the
// links a service answers with (property-ical's url) start with it.
const HeaderPublicURL = "X-Vros-Public-URL"

// SetListenURL sets the base URL X-Vros-Public-URL carries when edge has no public URL
// configured: http://<the address edge listens on>, known once it listens.
func (g *Gateway) SetListenURL(u string) {
	u = strings.TrimRight(u, "/")
	g.listenURL.Store(&u)
}

// publicHeader is X-Vros-Public-URL's value: the configured public URL, else the listen
// URL, else nothing (the header is then not sent).
func (g *Gateway) publicHeader() string {
	if g.publicURL != "" {
		return g.publicURL
	}
	if u := g.listenURL.Load(); u != nil {
		return *u
	}
	return ""
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
	a := app.Group("/api", httpapi.Use(httpapi.EnvelopeA), g.count)
	a.Post("/:resource", g.interfaceA)

	// Interface B answers every application outcome with HTTP 200, as the original's
	// clients read only a 200's body (docs/interface-b.md).
	b := app.Group("/vros", httpapi.Use(httpapi.EnvelopeB), httpapi.ApplicationOutcomesOK, g.count)
	b.Post("/external-booking", g.interfaceB)
	b.Post("/external-booking/", g.interfaceB)
	for _, p := range []string{"/api/:name/owner_token/:token", "/api/:name/owner_token/:token/property/:id"} {
		b.Get(p, g.read)
		b.Post(p, g.read)
	}

	app.Get("/media/:key/:file", g.media)
	// Get serves HEAD too.
	app.Get("/ical/:file", g.ical)
}

func (g *Gateway) upstream(name Upstream, what string) (*upstream, error) {
	u := g.upstreams[name]
	if u == nil {
		return nil, httpapi.Unavailable(fmt.Sprintf("%s is not available: %s is not deployed", what, name))
	}
	return u, nil
}

// interfaceA: POST /api/{resource} with HTTP Basic plus servicekey/servicepass (headers, or
// body fields as a fallback). The credentials are read and checked before the body is
// parsed (docs/limits.md, "Bodies"); a body from a caller not yet authenticated is at most
// scanned for the second pair.
func (g *Gateway) interfaceA(c *fiber.Ctx) error {
	name := c.Params("resource")
	r, ok := resources[name]
	if !ok {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("unknown resource %q", name))
	}
	body := WithoutBOM(c.Body())
	over := len(body) > r.bodyLimit
	caller, err := g.authenticateA(c, body)
	if err != nil {
		return overOrErr(over, r.bodyLimit, err)
	}
	authenticated(c, caller, usage.A)
	if err := g.rateLimit(c, caller); err != nil {
		return err
	}
	limit := bodyLimit(r.bodyLimit, caller.Plan)
	if len(body) > limit {
		return httpapi.TooLarge(limit)
	}
	if body, err = jsonBody(c, body, limit); err != nil {
		return err
	}
	u, err := g.upstream(r.service, "resource "+name)
	if err != nil {
		return err
	}
	acc := caller.Tenant
	return g.admit(c, caller, func() error { return u.forward(c, fiber.MethodPost, "/internal/a/"+name, body, acc) })
}

// bodyLimit is a route's body limit for a caller: its plan's BodyLimit when set (smaller or
// larger than the route's), never above MaxBody, which edge reads at most.
func bodyLimit(route int, p account.Plan) int {
	if p.BodyLimit > 0 {
		return min(p.BodyLimit, MaxBody)
	}
	return route
}

// overOrErr is a failed authentication's answer: a body over the route's own limit is
// refused 413 with that limit, as it would be without credentials (only a plan raises it);
// any other request gets err (a throttled address too: its body is refused unread).
func overOrErr(over bool, route int, err error) error {
	if over {
		return httpapi.TooLarge(route)
	}
	return err
}

// rateLimit takes a token from the caller's account's bucket, at its plan's rate and burst
// (edge's defaults where the plan says 0), refusing 429 when it is empty.
func (g *Gateway) rateLimit(c *fiber.Ctx, caller account.Caller) error {
	if !g.limits.AllowPlan(caller.Tenant.AccountID, caller.Plan.RateRPS, caller.Plan.RateBurst) {
		g.metrics.Rejected(c.UserContext(), edgemetrics.Rate)
		return rateLimited(c)
	}
	return nil
}

// throttled refuses (429) a client address whose failed authentications are spent
// (throttle.Failures.Check), counting the refusal.
func (g *Gateway) throttled(c *fiber.Ctx) error {
	err := g.failures.Check(c)
	if err != nil {
		g.metrics.Rejected(c.UserContext(), edgemetrics.AuthThrottle)
	}
	return err
}

// AuthFailed counts a failed authentication of kind: the gateway's own, and the management
// panel's sign-ins (kind panel). A nil gateway counts nothing.
func (g *Gateway) AuthFailed(ctx context.Context, kind edgemetrics.AuthKind) {
	if g != nil {
		g.metrics.AuthFailed(ctx, kind)
	}
}

// authenticateA checks HTTP Basic and the second pair servicekey/servicepass: from the
// headers (headerPair), else from the body, scanned for it (bodyCredentials) only once the
// address is not throttled and Basic was sent. Every refusal counts as a failed
// authentication of the address, a missing or unreadable credential as a wrong one.
func (g *Gateway) authenticateA(c *fiber.Ctx, body []byte) (account.Caller, error) {
	if err := g.throttled(c); err != nil {
		return account.Caller{}, err
	}
	user, password, ok := basicAuth(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return account.Caller{}, g.refused(c, edgemetrics.Basic, httpapi.Unauthorized("HTTP Basic credentials are required"))
	}
	key, pass, fromHeaders := headerPair(c)
	if !fromHeaders {
		vals, err := g.credentialsIn(c, body, namesA, false, edgemetrics.Service)
		if err != nil {
			return account.Caller{}, err
		}
		key, pass = vals[0], vals[1]
	}
	if key == "" || pass == "" {
		return account.Caller{}, g.refused(c, edgemetrics.Service,
			httpapi.Unauthorized("servicekey and servicepass are required (headers or body fields; or the headers 365villaskey and 365villaspass)"))
	}
	a1, err := g.check(c, account.Basic, user, password)
	if err != nil {
		return account.Caller{}, err
	}
	a2, err := g.checkPair(c, key, pass)
	if err != nil {
		return account.Caller{}, err
	}
	if a1.Tenant.AccountID != a2.Tenant.AccountID {
		g.failures.Failed(c)
		g.metrics.AuthFailed(c.UserContext(), edgemetrics.Service)
		return account.Caller{}, httpapi.Unauthorized("invalid credentials")
	}
	return a1, nil
}

// refused counts a request refused before it authenticated — its credentials missing,
// unreadable or malformed — as one failed authentication of kind, as a wrong credential
// counts (the address's throttle and vros_edge_auth_failures_total), and returns err.
func (g *Gateway) refused(c *fiber.Ctx, kind edgemetrics.AuthKind, err error) error {
	g.failures.Failed(c)
	g.metrics.AuthFailed(c.UserContext(), kind)
	return err
}

// credentialsIn reads the credentials names from body (bodyCredentials), refusing a body
// they cannot be read from, or one too long to be a credential, as a failed authentication
// of kind.
func (g *Gateway) credentialsIn(c *fiber.Ctx, body []byte, names credentialNames, strict bool, kind edgemetrics.AuthKind) ([2]string, error) {
	vals, err := bodyCredentials(c.Get(fiber.HeaderContentType), body, names, strict)
	if errors.Is(err, errCredentialTooLong) {
		err = httpapi.Unauthorized("invalid credentials")
	}
	if err != nil {
		return vals, g.refused(c, kind, err)
	}
	return vals, nil
}

// headerPair is interface A's second credential from the headers servicekey/servicepass,
// else 365villaskey/365villaspass (the original's docs); found is false when neither name
// of either pair was sent (then the body is scanned for it: credentialsIn).
func headerPair(c *fiber.Ctx) (key, pass string, found bool) {
	for _, h := range [][2]string{{"servicekey", "servicepass"}, {"365villaskey", "365villaspass"}} {
		if key, pass = strings.TrimSpace(c.Get(h[0])), strings.TrimSpace(c.Get(h[1])); key != "" || pass != "" {
			return key, pass, true
		}
	}
	return "", "", false
}

// checkPair authenticates interface A's service pair, sent as it is or base64-encoded (the
// original's docs send base64 text): the raw values are tried first, then the decoded ones.
// Either may be the dedicated service pair or, when the account's legacy_credentials setting
// is on, its interface B key/pass (account.Service.AuthenticatePair). A refusal counts as
// one failed authentication, however many forms were tried.
func (g *Gateway) checkPair(c *fiber.Ctx, key, pass string) (account.Caller, error) {
	tries := [][2]string{{key, pass}}
	if k, p := unbase64(key), unbase64(pass); k != key || p != pass {
		tries = append(tries, [2]string{k, p})
	}
	for _, t := range tries {
		acc, err := g.accounts.AuthenticatePairCaller(c.UserContext(), t[0], t[1])
		switch {
		case errors.Is(err, account.ErrUnauthorized):
			continue
		case errors.Is(err, account.ErrSuspended):
			return account.Caller{}, httpapi.Unauthorized("account suspended")
		}
		return acc, err
	}
	g.failures.Failed(c)
	g.metrics.AuthFailed(c.UserContext(), edgemetrics.Service)
	return account.Caller{}, httpapi.Unauthorized("invalid credentials")
}

// unbase64 is s decoded from base64 (padded or not) when that gives printable ASCII text,
// else s.
func unbase64(s string) string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil || len(b) == 0 {
			continue
		}
		printable := true
		for _, ch := range b {
			if ch <= ' ' || ch > '~' {
				printable = false
				break
			}
		}
		if printable {
			return string(b)
		}
	}
	return s
}

// rateLimited refuses a request over its account's rate, telling the client when to retry.
func rateLimited(c *fiber.Ctx) error {
	c.Set(fiber.HeaderRetryAfter, "1")
	return httpapi.RateLimited()
}

// DefaultConcurrencyWait is how long a request over its account's concurrency limit waits
// for a slot before it is refused.
const DefaultConcurrencyWait = 100 * time.Millisecond

// admit runs forward holding one of the account's slots in this replica (its limit of
// requests in flight), refusing the request 429 when none comes free within the queue
// wait. The slot is given back when forward ends, however it ends: an answer, an error
// (the service unreachable or timed out), a panic (deferred, before Fiber's recover
// answers 500). A client that hangs up does not end forward early: its slot is held until
// the service answers or the upstream timeout, as the service's work goes on meanwhile.
//
// The limit is the account's plan's MaxConcurrent, else edge's AccountConcurrency.
func (g *Gateway) admit(c *fiber.Ctx, caller account.Caller, forward func() error) error {
	release, ok := g.inFlight.Acquire(caller.Tenant.AccountID, caller.Plan.MaxConcurrent)
	if !ok {
		g.metrics.Rejected(c.UserContext(), edgemetrics.Concurrency)
		c.Set(fiber.HeaderRetryAfter, "1")
		e := httpapi.RateLimited()
		e.Message = "too many requests of this account in flight at once; retry after a second"
		return e
	}
	defer release()
	return forward()
}

// check authenticates one credential. Callers run g.failures.Check first: a client
// address whose failures are spent is refused before any lookup.
func (g *Gateway) check(c *fiber.Ctx, kind account.Kind, id, secret string) (account.Caller, error) {
	acc, err := g.accounts.AuthenticateCaller(c.UserContext(), kind, id, secret)
	switch {
	case errors.Is(err, account.ErrUnauthorized):
		g.failures.Failed(c)
		g.metrics.AuthFailed(c.UserContext(), edgemetrics.AuthKind(kind))
		return account.Caller{}, httpapi.Unauthorized("invalid credentials")
	case errors.Is(err, account.ErrSuspended):
		return account.Caller{}, httpapi.Unauthorized("account suspended")
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

// WithoutBOM drops a leading UTF-8 byte-order mark, which some Windows tools write before
// JSON: the documents say it is ignored, and the services then read plain JSON.
func WithoutBOM(body []byte) []byte { return bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) }

// bEnvelope is what edge needs of an interface B body.
type bEnvelope struct {
	Key    string `json:"key"`
	Pass   string `json:"pass"`
	Action string `json:"action"`
	// PricingArray and CreatedDate route the original's getpropertyinfo examples (see
	// route).
	PricingArray json.RawMessage `json:"pricingArray"`
	CreatedDate  json.RawMessage `json:"createdDate"`
}

// route is the action a body asks for. The original's examples of setprices_minnights and
// getreservations send action getpropertyinfo: one that carries pricingArray is a price
// push (never answered Success while the prices are dropped), one that carries createdDate
// a reservations read.
func (e bEnvelope) route() string {
	if e.Action == "getpropertyinfo" {
		switch {
		case sent(e.PricingArray):
			return "setprices_minnights"
		case sent(e.CreatedDate):
			return "getreservations"
		}
	}
	return e.Action
}

// sent reports whether a member was sent with a value (not absent, null or "").
func sent(raw json.RawMessage) bool {
	v := string(bytes.TrimSpace(raw))
	return v != "" && v != "null" && v != `""`
}

// interfaceB: POST /vros/external-booking, the action in the body, key/pass in the body;
// JSON or PHP-style form encoding. The services receive JSON only. key and pass are read
// first, by a scan of the body that builds nothing (bodyCredentials), and checked; only an
// authenticated caller's body is parsed, within its limit.
func (g *Gateway) interfaceB(c *fiber.Ctx) error {
	body := WithoutBOM(c.Body())
	over := len(body) > bodyLimitB
	if err := g.throttled(c); err != nil {
		return overOrErr(over, bodyLimitB, err)
	}
	if len(body) == 0 {
		return g.refused(c, edgemetrics.Key, httpapi.BadRequest("request body is empty; send a JSON object with key, pass and action"))
	}
	vals, err := g.credentialsIn(c, body, namesB, true, edgemetrics.Key)
	switch {
	case err != nil:
		return overOrErr(over, bodyLimitB, err)
	case vals[0] == "" || vals[1] == "":
		return overOrErr(over, bodyLimitB, g.refused(c, edgemetrics.Key, httpapi.Unauthorized("key and pass are required")))
	}
	caller, err := g.check(c, account.Key, vals[0], vals[1])
	if err != nil {
		return overOrErr(over, bodyLimitB, err)
	}
	authenticated(c, caller, usage.B)
	if err := g.rateLimit(c, caller); err != nil {
		return err
	}
	limit := bodyLimit(bodyLimitB, caller.Plan)
	if len(body) > limit {
		return httpapi.TooLarge(limit)
	}
	if body, err = jsonBody(c, body, limit); err != nil {
		return err
	}
	var env bEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return httpapi.InvalidField(te.Field, "must be a string")
		}
		return notAnObject()
	}
	if env.Action == "" {
		return httpapi.InvalidField("action", "is required")
	}
	act, ok := actions[env.route()]
	if !ok {
		return &httpapi.Error{HTTP: fiber.StatusBadRequest, Type: "unknown_action", Status: httpapi.StatusUnknownAction,
			Message: fmt.Sprintf("unknown action %q", env.Action)}
	}
	u, err := g.upstream(act.service, "action "+env.Action)
	if err != nil {
		return err
	}
	acc := caller.Tenant
	return g.admit(c, caller, func() error { return u.forward(c, fiber.MethodPost, "/internal/b/"+act.canonical, body, acc) })
}

// read: GET or POST /vros/api/{name}/owner_token/{token}[/property/{id}], forwarded as
// POST /internal/read/{name} with readParams' JSON object and X-Vros-Public-Base.
func (g *Gateway) read(c *fiber.Ctx) error {
	name := c.Params("name")
	svc, ok := reads[name]
	if !ok {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("unknown endpoint %q", name))
	}
	body := WithoutBOM(c.Body())
	over := len(body) > bodyLimitRead
	if err := g.throttled(c); err != nil {
		return overOrErr(over, bodyLimitRead, err)
	}
	caller, err := g.check(c, account.OwnerToken, "", c.Params("token"))
	if err != nil {
		return overOrErr(over, bodyLimitRead, err)
	}
	authenticated(c, caller, usage.Read)
	if err := g.rateLimit(c, caller); err != nil {
		return err
	}
	limit := bodyLimit(bodyLimitRead, caller.Plan)
	if len(body) > limit {
		return httpapi.TooLarge(limit)
	}
	u, err := g.upstream(svc, "endpoint "+name)
	if err != nil {
		return err
	}
	params, err := readParams(c, body, limit)
	if err != nil {
		return err
	}
	base, err := g.publicBase(c)
	if err != nil {
		return err
	}
	acc := caller.Tenant
	return g.admit(c, caller, func() error {
		return u.forward(c, fiber.MethodPost, "/internal/read/"+name, params, acc, HeaderPublicBase, base)
	})
}

// HeaderPublicBase carries, to catalog-svc, the base URL of the links in a read's answer.
const HeaderPublicBase = "X-Vros-Public-Base"

// media: GET /media/{key}/{file}, public (websites embed photos); keys are unguessable.
// Only a key and a file name property-svc could have made are forwarded (mediaName): the
// parameters are the path as sent, and the outgoing request would decode an escaped `/` or
// `.` in them and resolve `..`, reaching property-svc's internal paths. Anything else is 404
// with Cache-Control: no-store, as for the iCal feed.
func (g *Gateway) media(c *fiber.Ctx) error {
	if !mediaName(c.Params("key"), "") || !mediaName(c.Params("file"), ".jpg") {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such image")
	}
	u, err := g.upstream(PropertySvc, "media")
	if err != nil {
		return err
	}
	return u.forward(c, fiber.MethodGet, "/media/"+c.Params("key")+"/"+c.Params("file"), nil, tenancy.Tenant{})
}

// ical: GET|HEAD /ical/{token}.ics, the iCal export of a property, public (channels read it
// without credentials: the token is the capability) → catalog-svc GET /internal/ical/{file}
// with an empty tenant, as /media is. If-None-Match goes along; ETag, Cache-Control,
// Content-Type and a 304 come back unchanged. Nothing is counted in usage (no account is
// known). An unknown token is not a failed authentication of the caller's address: tokens
// are 256 random bits, so the throttle would not slow guessing, while channels poll from a
// few shared addresses and keep polling links that died (rotated, revoked, deleted), so
// counting them would refuse those addresses every other owner's feeds, and anyone could
// lock a channel out by subscribing it to made-up links (docs/limits.md).
func (g *Gateway) ical(c *fiber.Ctx) error {
	file := c.Params("file")
	if !icalFile(file) {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such calendar")
	}
	u, err := g.upstream(CatalogSvc, "the iCal export")
	if err != nil {
		return err
	}
	return u.forward(c, fiber.MethodGet, "/internal/ical/"+file, nil, tenancy.Tenant{})
}

// mediaName reports whether s is a media key (ext "") or a rendition's file name (ext
// ".jpg"): 1 to 64 letters, digits, '_' or '-', then ext. property-svc's keys are 24
// characters a–z and 0–9, its renditions' names letters, digits and '_' (h_179.jpg).
func mediaName(s, ext string) bool { return nameWith(s, ext, 64) }

// icalFile reports whether file is "<token>.ics" with a token of base64url characters
// (property-svc's tokens are 43 of them; catalog-svc checks the length).
func icalFile(file string) bool { return nameWith(file, ".ics", 128) }

// nameWith reports whether s is 1 to most letters, digits, '-' or '_' followed by ext: the
// names of the public routes (media, iCal) that edge forwards unsigned, so that no '/',
// '.' or escape ever reaches a service's path.
func nameWith(s, ext string, most int) bool {
	name, ok := strings.CutSuffix(s, ext)
	if !ok || name == "" || len(name) > most {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
