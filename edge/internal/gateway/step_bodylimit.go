package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/libs/httpapi"
)

// Step: the caller's body limit. An authenticated caller's body is held to the route's
// limit, or its plan's (bodyLimit); over it, 413 naming the limit, before anything of the
// body is parsed (counted by step_usage.go as body_size).
func (g *Gateway) bodyLimit(c *fiber.Ctx) error {
	st := requestOf(c)
	st.limit = bodyLimit(st.routeLimit, st.caller.Plan)
	if len(st.body) > st.limit {
		return httpapi.TooLarge(st.limit)
	}
	return c.Next()
}

// bodyLimit is a route's body limit for a caller: its plan's BodyLimit when set (smaller or
// larger than the route's), never above MaxBody, which edge reads at most.
func bodyLimit(route int, p account.Plan) int {
	if p.BodyLimit > 0 {
		return min(p.BodyLimit, MaxBody)
	}
	return route
}
