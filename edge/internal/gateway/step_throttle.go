package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
)

// Step: the failed-authentication throttle. A client address whose failed authentications
// are spent (throttle.Failures.Check) is refused 429 with Retry-After before its
// credentials are read or looked up; the refusal is counted (vros_edge_rejections_total,
// auth_throttle). Only the steps after it count failures (step_credentials.go,
// step_authenticate.go).
func (g *Gateway) throttle(c *fiber.Ctx) error {
	if err := g.failures.Check(c); err != nil {
		g.metrics.Rejected(c.UserContext(), edgemetrics.AuthThrottle)
		return err
	}
	return c.Next()
}
