package gateway

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// HeaderPublicBase carries, to catalog-svc, the base URL of the links in a read's answer.
const HeaderPublicBase = "X-Vros-Public-Base"

// Step: an owner-token read's link base, sent to catalog-svc as X-Vros-Public-Base
// (publicBase); a Host header that is no host name is refused 400.
func (g *Gateway) linkBase(c *fiber.Ctx) error {
	base, err := g.publicBase(c)
	if err != nil {
		return err
	}
	requestOf(c).publicBase = base
	return c.Next()
}

// publicBase is the base URL a read's links start with: VROS_EDGE_PUBLIC_URL when
// configured, else the scheme and host the client used (X-Forwarded-Proto and
// X-Forwarded-Host count only from a trusted proxy: Fiber checks it).
func (g *Gateway) publicBase(c *fiber.Ctx) (string, error) {
	if g.publicURL != "" {
		return g.publicURL, nil
	}
	host := c.Hostname()
	if host == "" || strings.ContainsFunc(host, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-:[]_", r))
	}) {
		return "", httpapi.BadRequest("the Host header is not a valid host name")
	}
	return c.Protocol() + "://" + host, nil
}

// engineLinkBase is linkBase for the booking API's reads of catalog-svc (/site's photo
// links); booking-svc's routes make no links.
func (g *Gateway) engineLinkBase(c *fiber.Ctx) error {
	if requestOf(c).service != CatalogSvc {
		return c.Next()
	}
	return g.linkBase(c)
}
