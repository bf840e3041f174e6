package panel

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/gateway"
)

// Edge's gateway counts them.
var _ authCounter = (*gateway.Gateway)(nil)

// authCounter is what counts failed authentications (edge's gateway.Gateway).
type authCounter interface {
	AuthFailed(ctx context.Context, kind edgemetrics.AuthKind)
}

// signInFailed counts a sign-in refused for its email or password as a failed
// authentication of kind panel, when the panel's gateway counts them.
func signInFailed(c *fiber.Ctx, g Caller) {
	if m, ok := g.(authCounter); ok {
		m.AuthFailed(c.UserContext(), edgemetrics.Panel)
	}
}
