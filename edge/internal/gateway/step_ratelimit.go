package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/libs/httpapi"
)

// Step: the account's rate. A token is taken from the caller's account's bucket in this
// replica, at its plan's rate and burst (edge's defaults where the plan says 0); an empty
// bucket is 429 with Retry-After, counted (vros_edge_rejections_total, rate).
func (g *Gateway) rateLimit(c *fiber.Ctx) error {
	caller := requestOf(c).caller
	if !g.limits.AllowPlan(caller.Tenant.AccountID, caller.Plan.RateRPS, caller.Plan.RateBurst) {
		g.metrics.Rejected(c.UserContext(), edgemetrics.Rate)
		return rateLimited(c)
	}
	return c.Next()
}

// rateLimited refuses a request over its account's rate, telling the client when to retry.
func rateLimited(c *fiber.Ctx) error {
	c.Set(fiber.HeaderRetryAfter, "1")
	return httpapi.RateLimited()
}
