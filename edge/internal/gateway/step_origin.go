package gateway

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/libs/httpapi"
)

// Step: the page's origin, on every request of the booking API, preflight or not
// (docs/booking-engine.md, "Security model"). The Origin header must be, once normalized
// (normalOrigin), an origin of one of the account's brands (catalog-svc's, kept per account
// for a moment: origins.go); that brand is the seller. A request without Origin, or from an
// origin no brand lists, is refused 403 origin_not_allowed with no Access-Control-Allow-*
// header. Once allowed, every answer names the origin (Access-Control-Allow-Origin) and the
// headers the page may read.
func (g *Gateway) origin(c *fiber.Ctx) error {
	st := requestOf(c)
	sent := strings.Clone(c.Get(fiber.HeaderOrigin))
	origin, ok := normalOrigin(sent)
	if !ok {
		g.metrics.Rejected(c.UserContext(), edgemetrics.Origin)
		return originNotAllowed(sent)
	}
	brands, err := g.engine.origins.get(c.UserContext(), st.caller.Tenant, httpapi.RequestID(c))
	if err != nil {
		return err
	}
	brand, ok := brands[origin]
	if !ok {
		g.metrics.Rejected(c.UserContext(), edgemetrics.Origin)
		return originNotAllowed(sent)
	}
	st.origin, st.brandID = sent, brand
	c.Set(fiber.HeaderAccessControlAllowOrigin, sent)
	c.Set(fiber.HeaderAccessControlExposeHeaders, engineExposeHeaders)
	return c.Next()
}
