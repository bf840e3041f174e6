package gateway

import (
	"maps"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"

	"github.com/vros/vros/libs/tenancy"
)

// The routing table, for the package's external tests: they are table-driven from
// routes.go, so a route added there is covered without touching them.

// ActionRoute is where an interface B action goes.
type ActionRoute struct {
	Service   Upstream
	Canonical string
}

// ResourceRoutes is every interface A resource and the service that owns it.
func ResourceRoutes() map[string]Upstream {
	out := map[string]Upstream{}
	for name, r := range resources {
		out[name] = r.service
	}
	return out
}

// ActionRoutes is every interface B action, its owner and its canonical name.
func ActionRoutes() map[string]ActionRoute {
	out := map[string]ActionRoute{}
	for name, a := range actions {
		out[name] = ActionRoute{Service: a.service, Canonical: a.canonical}
	}
	return out
}

// ReadRoutes is every owner-token GET endpoint and the service that owns it.
func ReadRoutes() map[string]Upstream { return maps.Clone(reads) }

// InFlight is how many of account's requests hold a concurrency slot in this replica.
func (g *Gateway) InFlight(accountID string) int { return g.inFlight.InFlight(accountID) }

// TrackedAccounts is how many accounts the concurrency limit keeps (in flight or waiting).
func (g *Gateway) TrackedAccounts() int { return g.inFlight.Len() }

// Admit runs forward as a forwarded request of accountID (under its concurrency limit).
func (g *Gateway) Admit(c *fiber.Ctx, accountID string, forward func() error) error {
	return g.admit(c, account.Caller{Tenant: tenancy.Tenant{AccountID: accountID}}, forward)
}

// BodyLimit is a route's body limit for an account with plan p.
func BodyLimit(route int, p account.Plan) int { return bodyLimit(route, p) }

// SetEngineClock makes the booking API's buckets and its origins cache read the time from
// now.
func (g *Gateway) SetEngineClock(now func() time.Time) { g.engine.setClock(now) }

// OriginsKept is how many accounts' origins the booking API keeps.
func (g *Gateway) OriginsKept() int { return g.engine.origins.Len() }

// NormalOrigin is an origin as the booking API compares it.
func NormalOrigin(s string) (string, bool) { return normalOrigin(s) }

// ScriptAliases are the names the widget's engine is also served as.
func ScriptAliases() []string { return slices.Clone(engineAliases) }
