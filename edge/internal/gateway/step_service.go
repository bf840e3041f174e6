package gateway

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Step: the service. The client of the service the route names; a service that is not
// deployed answers 503 with a clear message ("resource webhook is not available:
// integration-svc is not deployed").
func (g *Gateway) service(c *fiber.Ctx) error {
	st := requestOf(c)
	u := g.upstreams[st.service]
	if u == nil {
		return notDeployed(st.service, st.what())
	}
	st.upstream = u
	return c.Next()
}

// upstream is the client of the service name, for what (Call's messages).
func (g *Gateway) upstream(name Upstream, what string) (*upstream, error) {
	u := g.upstreams[name]
	if u == nil {
		return nil, notDeployed(name, what)
	}
	return u, nil
}

func notDeployed(name Upstream, what string) error {
	return httpapi.Unavailable(fmt.Sprintf("%s is not available: %s is not deployed", what, name))
}
