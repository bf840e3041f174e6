// Package tenancyfiber runs a tenancy.Verifier in front of a service's Fiber handlers and
// hands them the signed tenant (docs/internal-auth.md). The scheme itself, with no Fiber, is
// libs/tenancy, which domain packages may import.
package tenancyfiber

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

const localsKey = "vros.tenant"

// Require is the services' middleware: it refuses a request whose signed tenant context
// does not hold for v (401; 503 when the replay cache is full) and stores the tenant for
// From.
func Require(v *tenancy.Verifier) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// Verified already: Fiber runs a group's middleware for every path its prefix
		// starts (the group of /internal/a for /internal/account/...), and the second run
		// would take the request's own nonce for a replay.
		if _, done := c.Locals(localsKey).(tenancy.Tenant); done {
			return c.Next()
		}
		// The raw body as received (c.Body() would decode a Content-Encoding), hashed
		// here and never kept: it is the pooled request buffer.
		_, t, err := v.Verify(func(k string) string { return c.Get(k) }, c.Method(), c.Path(), string(c.Request().URI().QueryString()), c.Request().Body())
		switch {
		case errors.Is(err, tenancy.ErrBusy):
			return httpapi.Unavailable(err.Error())
		case err != nil:
			return httpapi.Unauthorized(err.Error())
		}
		// A copy of its own: services key caches by account (booking-svc's settings view),
		// so the id must never be a view of the pooled header buffer.
		t.AccountID = strings.Clone(t.AccountID)
		c.Locals(localsKey, t)
		return c.Next()
	}
}

// From returns the tenant stored by Require.
func From(c *fiber.Ctx) tenancy.Tenant {
	t, _ := c.Locals(localsKey).(tenancy.Tenant)
	return t
}
