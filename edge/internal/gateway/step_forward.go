package gateway

import (
	"github.com/gofiber/fiber/v2"
)

// Step: forward, the last. The request goes to its service's path (upstream.go) with the
// body the steps made, signed with the caller's tenant (none on the public routes: media,
// iCal), and the service's answer is copied back to the client.
func (g *Gateway) forward(c *fiber.Ctx) error {
	st := requestOf(c)
	if st.contentType != "" {
		return st.upstream.forward(c, st.method, st.path, st.body, st.caller.Tenant, fiber.HeaderContentType, st.contentType)
	}
	if st.publicBase != "" {
		return st.upstream.forward(c, st.method, st.path, st.body, st.caller.Tenant, HeaderPublicBase, st.publicBase)
	}
	return st.upstream.forward(c, st.method, st.path, st.body, st.caller.Tenant)
}
