package gateway

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
)

// The public booking API (docs/booking-engine.md): /widget/api/v1/{owner_token}/…, called
// from guests' browsers on the account's brands' websites. Its pipeline is in pipeline.go;
// this file is its table of routes, its limits and its CORS headers.

// engineRoute is one route of the booking API: the method a browser calls it with, and the
// service path it is forwarded to (always POST, signed with the account's tenant).
type engineRoute struct {
	name    string // "site", "checkouts/guest": the route in messages
	method  string // GET or POST
	service Upstream
	path    string
	// checkout: the path names a checkout ({id}), sent along as checkout_id.
	checkout bool
	// create: POST /checkouts: Idempotency-Key required, and the address's checkouts limit.
	create bool
}

var (
	engineSite      = engineRoute{name: "site", method: fiber.MethodGet, service: CatalogSvc, path: "/internal/engine/site"}
	engineCalendar  = engineRoute{name: "calendar", method: fiber.MethodGet, service: CatalogSvc, path: "/internal/engine/calendar"}
	engineQuote     = engineRoute{name: "quote", method: fiber.MethodPost, service: BookingSvc, path: "/internal/engine/quote"}
	engineCreate    = engineRoute{name: "checkouts", method: fiber.MethodPost, service: BookingSvc, path: "/internal/engine/checkout/create", create: true}
	engineGet       = engineRoute{name: "checkouts/{id}", method: fiber.MethodGet, service: BookingSvc, path: "/internal/engine/checkout/get", checkout: true}
	engineCheckouts = map[string]engineRoute{
		"guest":   {name: "checkouts/{id}/guest", method: fiber.MethodPost, service: BookingSvc, path: "/internal/engine/checkout/guest", checkout: true},
		"confirm": {name: "checkouts/{id}/confirm", method: fiber.MethodPost, service: BookingSvc, path: "/internal/engine/checkout/confirm", checkout: true},
		"cancel":  {name: "checkouts/{id}/cancel", method: fiber.MethodPost, service: BookingSvc, path: "/internal/engine/checkout/cancel", checkout: true},
	}
)

// engineRouteOf is the route of rest, the path after /widget/api/v1/{token}/ (a trailing
// slash ignored), and the checkout id it names; ok is false for no route of the API.
func engineRouteOf(rest string) (r engineRoute, id string, ok bool) {
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "site":
		return engineSite, "", true
	case len(parts) == 1 && parts[0] == "calendar":
		return engineCalendar, "", true
	case len(parts) == 1 && parts[0] == "quote":
		return engineQuote, "", true
	case len(parts) == 1 && parts[0] == "checkouts":
		return engineCreate, "", true
	case len(parts) == 2 && parts[0] == "checkouts" && checkoutID(parts[1]):
		return engineGet, parts[1], true
	case len(parts) == 3 && parts[0] == "checkouts" && checkoutID(parts[1]):
		r, ok := engineCheckouts[parts[2]]
		return r, parts[1], ok
	}
	return engineRoute{}, "", false
}

// checkoutID reports whether s can be a checkout's id: 1 to 64 letters, digits, '-' or
// '_' (booking-svc's ids are among them). Anything else names no checkout: 404 without
// asking booking-svc.
func checkoutID(s string) bool { return nameWith(s, "", 64) }

// bodyLimitEngine bounds a booking API request's body: its largest, a guest's details or a
// sandbox card, is well under 2 KiB.
const bodyLimitEngine = 16 * kib

// maxIdempotencyKey is the longest Idempotency-Key booking-svc keeps (docs/booking.md).
const maxIdempotencyKey = 255

// EngineLimits are the booking API's own limits, per edge replica (docs/limits.md, "The
// booking engine"). A rate ≤ 0 (or checkouts ≤ 0) turns that limit off.
type EngineLimits struct {
	// KeyRPS and KeyBurst: each account's (owner token's) bucket.
	KeyRPS   float64
	KeyBurst int
	// AddressRPS and AddressBurst: each client address's bucket (an IPv6 client's /64).
	AddressRPS   float64
	AddressBurst int
	// AddressCheckouts checkouts (POST /checkouts) per client address per CheckoutPeriod:
	// a bucket of that many, refilled evenly over the period.
	AddressCheckouts int
	CheckoutPeriod   time.Duration
	// OriginTTL is how long the account's brands' origins are trusted once read from
	// catalog-svc (≤ 0: DefaultOriginTTL; never more than MaxOriginTTL).
	OriginTTL time.Duration
}

// Defaults of the booking API (service.Config's VROS_EDGE_ENGINE_…).
const (
	DefaultOriginTTL = 2 * time.Second
	MaxOriginTTL     = 2 * time.Second
	// originCacheSize bounds the accounts whose origins a replica keeps.
	originCacheSize = throttle.DefaultKeys
)

// engine is the booking API's state in one replica: its buckets and the origins cache.
type engine struct {
	perKey, perAddress, checkouts *throttle.Buckets
	origins                       *originCache
}

func newEngine(l EngineLimits, fetch originFetch) *engine {
	e := &engine{
		perKey:     throttle.New(l.KeyRPS, l.KeyBurst, throttle.DefaultKeys),
		perAddress: throttle.New(l.AddressRPS, l.AddressBurst, throttle.DefaultKeys),
		checkouts:  throttle.New(0, 1, throttle.DefaultKeys),
	}
	if l.AddressCheckouts > 0 && l.CheckoutPeriod > 0 {
		e.checkouts = throttle.New(float64(l.AddressCheckouts)/l.CheckoutPeriod.Seconds(), l.AddressCheckouts, throttle.DefaultKeys)
	}
	ttl := l.OriginTTL
	if ttl <= 0 {
		ttl = DefaultOriginTTL
	}
	e.origins = newOriginCache(min(ttl, MaxOriginTTL), originCacheSize, fetch)
	return e
}

// setClock makes the buckets and the origins cache read the time from now (tests).
func (e *engine) setClock(now func() time.Time) {
	e.perKey.SetClock(now)
	e.perAddress.SetClock(now)
	e.checkouts.SetClock(now)
	e.origins.now = now
}

// The booking API's CORS answers. Only an allowed origin is named (never `*`), and no
// credentials mode: the API reads no cookie.
const (
	// engineAllowHeaders are the request headers a page may send besides the safe ones.
	engineAllowHeaders = "Content-Type, Idempotency-Key"
	// engineExposeHeaders are the answer's headers a page may read.
	engineExposeHeaders = "Retry-After, X-Request-Id, Idempotent-Replayed"
	// engineMaxAge is how long (s) a browser may keep a preflight's answer.
	engineMaxAge = "600"
)

// originNotAllowed refuses a request whose Origin is missing or no brand's; its answer
// carries no Access-Control-Allow-* header, so the page's script cannot read it either.
func originNotAllowed(sent string) *httpapi.Error {
	msg := "Origin: the request carries no Origin header; the booking API answers only the account's websites"
	if sent != "" {
		msg = "Origin: " + strconv.Quote(trimOrigin(sent)) + " is not an origin of any of the account's brands"
	}
	return &httpapi.Error{HTTP: fiber.StatusForbidden, Type: "origin_not_allowed", Status: httpapi.StatusUnauthorized, Message: msg}
}

// trimOrigin is sent for a message: at most 100 bytes of it.
func trimOrigin(sent string) string {
	if len(sent) > 100 {
		return sent[:100] + "…"
	}
	return sent
}

// engineLimited refuses a request over one of the booking API's limits, telling the client
// when to retry.
func engineLimited(c *fiber.Ctx, wait time.Duration, what string) error {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return &httpapi.Error{HTTP: fiber.StatusTooManyRequests, Type: "rate_limited", Status: httpapi.StatusRateLimited,
		Message: "too many " + what + "; retry in " + strconv.Itoa(secs) + " s"}
}

// normalOrigin is an Origin header's origin in the canonical form the brands' origins are
// stored in: contract.ParseOrigin, the one rule for both sides (scheme and host lowercased,
// an IPv6 address canonical, a default port dropped). ok is false for anything else: "null",
// another scheme, a path (even a lone "/", which a browser's Origin never has), a query,
// user info, a port out of range.
func normalOrigin(s string) (string, bool) {
	if s == "" || len(s) > 512 || strings.HasSuffix(s, "/") {
		return "", false
	}
	o, err := contract.ParseOrigin(s)
	return o, err == nil
}
