package gateway

import (
	"github.com/gofiber/fiber/v2"
)

// Step: the booking API's preflight. An OPTIONS from an allowed origin, within the limits,
// is answered here, 204: the route's method, the headers a page may send
// (Content-Type, Idempotency-Key), and how long the browser may keep this answer. Nothing is
// forwarded. Any other request goes on.
func (g *Gateway) preflight(c *fiber.Ctx) error {
	st := requestOf(c)
	if !st.preflight {
		return c.Next()
	}
	c.Set(fiber.HeaderAccessControlAllowMethods, st.engine.method+", OPTIONS")
	c.Set(fiber.HeaderAccessControlAllowHeaders, engineAllowHeaders)
	c.Set(fiber.HeaderAccessControlMaxAge, engineMaxAge)
	return c.SendStatus(fiber.StatusNoContent)
}
