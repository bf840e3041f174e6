package gateway

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// Interface is one of the public interfaces a call goes through.
type Interface int

// The interfaces of Call: an interface A resource, an interface B JSON action, an
// owner-token read.
const (
	InterfaceA Interface = iota
	InterfaceB
	InterfaceRead
)

func (i Interface) String() string {
	switch i {
	case InterfaceA:
		return "interface A"
	case InterfaceB:
		return "interface B"
	case InterfaceRead:
		return "owner-token read"
	}
	return "interface " + strconv.Itoa(int(i))
}

// Answer is a service's answer to a Call: its HTTP status and its body (a copy, the
// caller's to keep).
type Answer struct {
	Status int
	Body   []byte
	// ContentType is the answer's Content-Type (set by Public).
	ContentType string
}

// Call sends body to the resource, action or read name of iface on behalf of caller, as a
// request of that interface is forwarded once edge has authenticated it: to the same
// service route, signed with the caller's tenant, within the caller's rate and in-flight
// limits (an error of edge's own, a 429, when they are spent). It is how edge's management
// panel reads and writes: one path to the services for the API and the panel, so that every
// rule and guarantee of the services holds for both. body is the JSON the service reads (for
// interface B, without key and pass; for a read, its parameters). requestID goes along as
// X-Request-Id. Calls are not counted in the account's API usage (docs/panel.md).
func (g *Gateway) Call(ctx context.Context, caller account.Caller, iface Interface, name string, body []byte, requestID string) (Answer, error) {
	var svc Upstream
	var path string
	var extra []string
	switch iface {
	case InterfaceA:
		r, ok := resources[name]
		if !ok {
			return Answer{}, fmt.Errorf("gateway: unknown resource %q", name)
		}
		svc, path = r.service, "/internal/a/"+name
	case InterfaceB:
		a, ok := actions[name]
		if !ok {
			return Answer{}, fmt.Errorf("gateway: unknown action %q", name)
		}
		svc, path = a.service, "/internal/b/"+a.canonical
	case InterfaceRead:
		s, ok := reads[name]
		if !ok {
			return Answer{}, fmt.Errorf("gateway: unknown read %q", name)
		}
		svc, path = s, "/internal/read/"+name
		extra = []string{HeaderPublicBase, g.publicHeader()}
	default:
		return Answer{}, fmt.Errorf("gateway: unknown interface %d", iface)
	}
	u, err := g.upstream(svc, name)
	if err != nil {
		return Answer{}, err
	}
	if !g.limits.AllowPlan(caller.Tenant.AccountID, caller.Plan.RateRPS, caller.Plan.RateBurst) {
		return Answer{}, httpapi.RateLimited()
	}
	release, ok := g.inFlight.Acquire(caller.Tenant.AccountID, caller.Plan.MaxConcurrent)
	if !ok {
		return Answer{}, httpapi.RateLimited()
	}
	defer release()

	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	if requestID != "" {
		extra = append(extra, httpapi.HeaderRequestID, requestID)
	}
	if err := u.send(ctx, req, resp, fiber.MethodPost, path, body, caller.Tenant, extra...); err != nil {
		return Answer{}, err
	}
	// Copied: resp returns to fasthttp's pool when Call returns.
	return Answer{Status: resp.StatusCode(), Body: append([]byte(nil), resp.Body()...)}, nil
}

// Public sends GET path to svc unsigned (no tenant, as the public reads /media and /ical
// are forwarded: a token in the path is the capability) and returns its answer. It is how
// edge's public owner statement page reads booking-svc's /internal/statements/{token}
// (docs/money.md, "The owner's link"); no account's limits apply, as none is known.
func (g *Gateway) Public(ctx context.Context, svc Upstream, path, requestID string) (Answer, error) {
	u, err := g.upstream(svc, path)
	if err != nil {
		return Answer{}, err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	var extra []string
	if requestID != "" {
		extra = append(extra, httpapi.HeaderRequestID, requestID)
	}
	if err := u.send(ctx, req, resp, fiber.MethodGet, path, nil, tenancy.Tenant{}, extra...); err != nil {
		return Answer{}, err
	}
	// Copied: resp returns to fasthttp's pool when Public returns.
	return Answer{Status: resp.StatusCode(), Body: append([]byte(nil), resp.Body()...),
		ContentType: string(resp.Header.ContentType())}, nil
}
