package gateway

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/libs/httpapi"
)

// DefaultConcurrencyWait is how long a request over its account's concurrency limit waits
// for a slot before it is refused.
const DefaultConcurrencyWait = 100 * time.Millisecond

// Step: the account's requests in flight. The rest of the pipeline (the forward) runs
// holding one of the account's slots in this replica (admit).
func (g *Gateway) concurrency(c *fiber.Ctx) error {
	return g.admit(c, requestOf(c).caller, c.Next)
}

// admit runs forward holding one of the account's slots in this replica (its limit of
// requests in flight), refusing the request 429 when none comes free within the queue
// wait. The slot is given back when forward ends, however it ends: an answer, an error
// (the service unreachable or timed out), a panic (deferred, before Fiber's recover
// answers 500). A client that hangs up does not end forward early: its slot is held until
// the service answers or the upstream timeout, as the service's work goes on meanwhile.
//
// The limit is the account's plan's MaxConcurrent, else edge's AccountConcurrency.
func (g *Gateway) admit(c *fiber.Ctx, caller account.Caller, forward func() error) error {
	release, ok := g.inFlight.Acquire(caller.Tenant.AccountID, caller.Plan.MaxConcurrent)
	if !ok {
		g.metrics.Rejected(c.UserContext(), edgemetrics.Concurrency)
		c.Set(fiber.HeaderRetryAfter, "1")
		e := httpapi.RateLimited()
		e.Message = "too many requests of this account in flight at once; retry after a second"
		return e
	}
	defer release()
	return forward()
}
