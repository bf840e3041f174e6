package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/throttle"
)

// Step: the booking API's own limits (docs/limits.md, "The booking engine"), in this
// replica, on every request of an allowed origin, preflights too: the client address's
// bucket first (so that one address spends its own budget, not its website's), then, for a
// checkout (POST /checkouts: holding nights is the one costly thing a stranger can do), the
// address's checkouts, then the account's bucket. Over one: 429 rate_limited with
// Retry-After, counted (vros_edge_rejections_total, engine_rate). They are not the
// account's API rate (step_ratelimit.go): guests on its websites and its channel manager
// never spend each other's budget.
func (g *Gateway) engineLimit(c *fiber.Ctx) error {
	st := requestOf(c)
	addr := throttle.ClientKey(c)
	e := g.engine
	switch {
	case !e.perAddress.Allow(addr):
		g.metrics.Rejected(c.UserContext(), edgemetrics.EngineRate)
		return engineLimited(c, e.perAddress.Wait(addr), "booking requests from this address")
	case st.engine.create && !st.preflight && !e.checkouts.Allow(addr):
		g.metrics.Rejected(c.UserContext(), edgemetrics.EngineRate)
		return engineLimited(c, e.checkouts.Wait(addr), "checkouts from this address")
	case !e.perKey.Allow(st.caller.Tenant.AccountID):
		g.metrics.Rejected(c.UserContext(), edgemetrics.EngineRate)
		return engineLimited(c, e.perKey.Wait(st.caller.Tenant.AccountID), "booking requests for this account")
	}
	return c.Next()
}
