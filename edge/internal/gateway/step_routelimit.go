package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Step: the route's body limit, until the caller is authenticated. A request refused
// before it authenticated (throttled, its credentials missing, unreadable or wrong) whose
// body is over the route's own limit is refused 413 with that limit, as it would be without
// credentials: only a plan raises the limit, and a caller not yet authenticated has none
// (docs/limits.md, "Plans"). The refusal's other effects stand (the failure counted, the
// throttle's rejection counted); its body is never parsed. Once the caller is authenticated
// its own limit decides (step_bodylimit.go), and a later refusal is passed on as it is.
func (g *Gateway) routeLimit(c *fiber.Ctx) error {
	st := requestOf(c)
	over := len(st.body) > st.routeLimit
	err := c.Next()
	if err != nil && over && !st.authenticated {
		return httpapi.TooLarge(st.routeLimit)
	}
	return err
}
