package gateway

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/libs/httpapi"
)

// Step: usage, around the rest of each interface's pipeline, right after its route step.
// count counts each authenticated request (step_authenticate.go) by its
// outcome, once the route has answered or failed. It runs inside ApplicationOutcomesOK, so it sees interface B's application errors
// with their 4xx code before they go out on HTTP 200. What edge refuses itself past
// authentication (rate, concurrency and body limits: a 429 or 413 error of edge's own, not
// a service's answer) is Refused.
//
// A body over its limit is counted here too, as a rejection of edge's (every 413 error a
// route returns is edge's own: a service's answers arrive as answers, not errors).
func (g *Gateway) count(c *fiber.Ctx) error {
	err := c.Next()
	if err != nil && g.metrics != nil && errorCode(err) == fiber.StatusRequestEntityTooLarge {
		g.metrics.Rejected(c.UserContext(), edgemetrics.BodySize)
	}
	if g.usage == nil {
		return err
	}
	st := requestOf(c)
	if !st.authenticated {
		return err
	}
	g.usage.Add(st.caller.Tenant.AccountID, st.iface, outcome(c, err))
	return err
}

// outcome classifies an answer: err is the route's error (nil when it answered itself,
// as when a service's answer is passed on).
func outcome(c *fiber.Ctx, err error) usage.Outcome {
	code := c.Response().StatusCode()
	if err != nil {
		code = errorCode(err)
		if code == fiber.StatusTooManyRequests || code == fiber.StatusRequestEntityTooLarge {
			return usage.Refused
		}
	}
	switch {
	case code >= 500:
		return usage.ServerError
	case code >= 400:
		return usage.ClientError
	}
	return usage.OK
}

// errorCode is the HTTP status a route's error is answered with (500 when it is not a
// client error).
func errorCode(err error) int {
	var he *httpapi.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &he):
		return he.HTTP
	case errors.As(err, &fe):
		return fe.Code
	}
	return fiber.StatusInternalServerError
}
